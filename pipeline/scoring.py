"""Score an output folder against the by-eye truth: per clip the person matching, (a) gaze-target
accuracy, (b) event precision and interval recall, (c) QA agreement and the consistency violations; and
the same summed over clips. benchmarks/bench_accuracy.py prints it; tests assert floors on it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional

from pipeline.accuracy import (EventScore, GazeScore, Judge, PersonMatch, load_clip_run, match_persons,
                               score_events, score_gaze)
from pipeline.consistency import check_clip
from pipeline.qa_truth import QAScore, score_qa
from pipeline.storage import OutputStore
from pipeline.summary import open_output
from pipeline.truth import ClipTruth, GroundTruth


@dataclass
class ClipScore:
    video_id: str
    match: PersonMatch
    gaze: GazeScore
    events: EventScore
    qa: QAScore
    consistency: list[str]
    duration: float
    wall_s: Optional[float]


def score_clip(truth: ClipTruth, run) -> ClipScore:
    match = match_persons(truth, run)
    return ClipScore(run.video_id, match, score_gaze(truth, match), score_events(truth, run, match),
                     score_qa(Judge(truth, match), run), check_clip(run), run.duration, run.wall_s)


def score_output(out: str | OutputStore, truth: GroundTruth, video_ids: Optional[Iterable[str]] = None) -> list[ClipScore]:
    """Score every annotated clip of an output folder (or the given ones)."""
    store = open_output(out)
    ids = list(video_ids) if video_ids is not None else truth.video_ids()
    return [score_clip(truth.clip(v), load_clip_run(store, v)) for v in ids]


@dataclass
class Totals:
    gaze: GazeScore
    events: EventScore
    qa: QAScore
    violations: int
    tracked_rows: int
    annotated_rows: int
    merges: int

    @property
    def tracking_coverage(self) -> float:
        return self.tracked_rows / self.annotated_rows if self.annotated_rows else math.nan


def totals(scores: Iterable[ClipScore]) -> Totals:
    gaze, events, qa = GazeScore(), EventScore(), QAScore()
    violations = tracked = rows = merges = 0
    for s in scores:
        gaze.add(s.gaze)
        events.add(s.events)
        qa.add(s.qa)
        violations += len(s.consistency)
        tracked += sum(v["identity_ok"] for v in s.match.per_label.values())
        rows += sum(v["rows"] for v in s.match.per_label.values())
        merges += len(s.match.merges)
    return Totals(gaze, events, qa, violations, tracked, rows, merges)
