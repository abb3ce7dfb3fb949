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
    pointing_frames: tuple[int, int, int] = (0, 0, 0)  # tp, fp, fn of "someone points" per sampled frame


def score_clip(truth: ClipTruth, run) -> ClipScore:
    match = match_persons(truth, run)
    return ClipScore(run.video_id, match, score_gaze(truth, match), score_events(truth, run, match),
                     score_qa(Judge(truth, match), run), check_clip(run), run.duration, run.wall_s,
                     pointing_frames(truth, run))


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
    splits: int = 0  # annotated people followed under two or more ids

    @property
    def tracking_coverage(self) -> float:
        return self.tracked_rows / self.annotated_rows if self.annotated_rows else math.nan


def totals(scores: Iterable[ClipScore]) -> Totals:
    gaze, events, qa = GazeScore(), EventScore(), QAScore()
    violations = tracked = rows = merges = splits = 0
    for s in scores:
        gaze.add(s.gaze)
        events.add(s.events)
        qa.add(s.qa)
        violations += len(s.consistency)
        tracked += sum(v["identity_ok"] for v in s.match.per_label.values())
        rows += sum(v["rows"] for v in s.match.per_label.values())
        merges += len(s.match.merges)
        splits += len(s.match.splits)
    return Totals(gaze, events, qa, violations, tracked, rows, merges, splits)


NOT_NAMED = ("unknown", "elsewhere", "untracked")  # predictions that name no target


def named_gaze(score: GazeScore) -> tuple[int, int]:
    """(right, named): of the definite rows where the run names a target (person, hands, object,
    camera), how many name the annotated one. Precision before recall: this is the gaze figure a wrong
    target lowers and an abstention does not."""
    named = [(truth, predicted) for _, _, truth, predicted in score.details if predicted not in NOT_NAMED]
    return sum(truth == predicted for truth, predicted in named), len(named)


def pointing_frames(truth: ClipTruth, run) -> tuple[int, int, int]:
    """Per sampled frame, "someone points" against the clip's annotated pointing intervals:
    (true positives, false positives, false negatives)."""
    spans = [truth.interval_run_times(iv) for iv in truth.intervals_of("pointing")]
    frames: dict[float, bool] = {}
    for row in run.tracks.select(["t", "pointing"]).to_pylist():
        frames[row["t"]] = frames.get(row["t"], False) or bool(row["pointing"])
    tp = fp = fn = 0
    for t, pointing in frames.items():
        annotated = any(a <= t <= b for a, b in spans)
        tp += pointing and annotated
        fp += pointing and not annotated
        fn += annotated and not pointing
    return tp, fp, fn
