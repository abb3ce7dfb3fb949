"""Accuracy of a socialtrace run against the by-eye ground truth of the shared clips (issue 10).

    python -m benchmarks.bench_accuracy [--fps F] [--config FILE] [--out DIR] [--json FILE] [--media DIR]
                                        [--half-resolution | --crf N]

Runs ``socialtrace run`` (local executor, default settings unless --fps / --config) on every clip the
truth annotates, then prints, for the development set, the validation set (DESIGN.md §10) and all clips,
per clip and overall: tracking coverage of the annotated people, (a) typed
gaze-target accuracy on rows with a definite annotation, (b) precision of each event type and recall of
annotated intervals, (c) QA items whose key agrees with the truth, the consistency violations
(pipeline/consistency.py), and wall time / realtime factor. ``--out DIR`` scores an existing output
folder instead of running when DIR already holds one (else runs into it). ``--half-resolution`` runs and
scores half-resolution copies of the clips instead (tests/camera_edits.py, lossless; the truth's coordinates
are fractions of the frame, so it holds for them unchanged): how the accuracy holds on footage with half the
pixels, the way lower-resolution film and TV footage has them. ``--crf N`` runs and scores copies encoded
again by x264 at that constant rate factor (23: x264's default; 28-35: the bitrates of small web uploads): how
the accuracy holds on footage compressed once more, as a user's downloaded corpus is. Speed figures taken on a
shared machine are only indicative.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from pipeline.accuracy import RECALL_KINDS, RIGHT, UNCHECKABLE, WRONG
from pipeline.truth_scores import ClipScore, score_output, totals
from pipeline.truth import TRUTH_SETS, GroundTruth, truth_set_of
from tests.shared_media import find_media_dir

EVENT_ORDER = ("gaze_at", "mutual_gaze", "joint_attention", "gaze_following", "gaze_aversion", "attention_capture",
               "sudden_gaze_shift", "pointing", "reaching", "showing", "giving")
CATEGORY_ORDER = tuple(f"{f}{i}" for f in "TGC" for i in range(1, 7))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_pipeline(clips: list[Path], out: Path, fps: float | None, config: str | None) -> float:
    exe = shutil.which("socialtrace") or str(Path(sys.executable).with_name("socialtrace"))
    cmd = [exe, "run", *map(str, clips), "-o", str(out), "--executor", "local"]
    if fps is not None:
        cmd += ["--fps", str(fps)]
    if config is not None:
        cmd += ["--config", config]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"socialtrace run failed with exit code {done.returncode}")
    return wall


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f} ({num}/{den})" if den else "-"


def _counts(c: Counter) -> tuple[int, int, int]:
    return c[RIGHT], c[WRONG], c[UNCHECKABLE]


def report(scores: list[ClipScore], wall: float | None, ran: bool = True) -> dict:
    t = totals(scores)
    print("\n## Per clip\n")
    print("| clip | video s | people tracked (identity ok) | gaze acc | gaze coverage | events right/wrong/unch "
          "| QA agree/wrong/unch | violations | clip wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    clips_json = []
    for s in scores:
        ev = Counter()
        for c in s.events.verdicts.values():
            ev.update(c)
        qa = s.qa.totals()
        tracked = sum(v["identity_ok"] for v in s.match.per_label.values())
        rows = sum(v["rows"] for v in s.match.per_label.values())
        people = ", ".join(f"{k} {v['identity_ok']}/{v['rows']}" for k, v in s.match.per_label.items())
        print(f"| {s.video_id} | {s.duration:.2f} | {people} | {_ratio(s.gaze.correct, s.gaze.rows)} | "
              f"{_ratio(s.gaze.covered, s.gaze.rows)} | {'/'.join(map(str, _counts(ev)))} | "
              f"{'/'.join(map(str, _counts(qa)))} | {len(s.consistency)} | {s.wall_s or math.nan:.1f} |")
        clips_json.append({
            "video_id": s.video_id, "duration_s": s.duration, "wall_s": s.wall_s,
            "persons": s.match.per_label, "label_of": {str(k): v for k, v in s.match.label_of.items()},
            "identity_merges": {str(k): v for k, v in s.match.merges.items()},
            "identity_splits": s.match.splits,
            "unmatched_predicted_ids": s.match.unmatched_ids,
            "tracked_rows": tracked, "annotated_rows": rows,
            "gaze": {"rows": s.gaze.rows, "correct": s.gaze.correct, "covered": s.gaze.covered,
                     "accuracy": s.gaze.accuracy},
            "events": {k: dict(v) for k, v in s.events.verdicts.items()},
            "recall": {k: list(v) for k, v in s.events.recall.items()},
            "qa": {k: dict(v) for k, v in s.qa.by_category.items()},
            "violations": s.consistency,
            "event_verdicts": [list(d) for d in s.events.details],
            "qa_verdicts": [list(d) for d in s.qa.details],
            "gaze_rows": [list(d) for d in s.gaze.details],
        })
        for pid, labels in s.match.merges.items():
            print(f"|   identity merge: predicted Person {pid} matched {labels} | | | | | | | | |")
        for label, ids in s.match.splits.items():
            print(f"|   identity split: {label} followed as Persons {', '.join(map(str, ids))} | | | | | | | | |")
        if s.match.unmatched_ids:
            print(f"|   predicted Person {', '.join(map(str, s.match.unmatched_ids))} matched no annotated person "
                  "(their events are uncheckable) | | | | | | | | |")

    print("\n## Events (all clips): precision = right / (right + wrong); uncheckable not counted\n")
    print("| event type | right | wrong | uncheckable | precision | annotated intervals found | recall |")
    print("|---|---|---|---|---|---|---|")
    for kind in sorted(set(t.events.verdicts) | set(RECALL_KINDS), key=lambda k: (EVENT_ORDER + (k,)).index(k)):
        r, w, u = _counts(t.events.verdicts.get(kind, Counter()))
        found, total = t.events.recall.get(kind, (0, 0))
        rec = _ratio(found, total) if kind in RECALL_KINDS else ""
        prec = f"{r / (r + w):.2f}" if r + w else "-"
        print(f"| {kind} | {r} | {w} | {u} | {prec} | {f'{found}/{total}' if kind in RECALL_KINDS else ''} | {rec} |")

    print("\n## QA items against the truth (all clips)\n")
    print("| category | agree | disagree | uncheckable | agreement |")
    print("|---|---|---|---|---|")
    for cat in sorted(t.qa.by_category, key=lambda c: (CATEGORY_ORDER + (c,)).index(c)):
        r, w, u = _counts(t.qa.by_category[cat])
        print(f"| {cat} | {r} | {w} | {u} | {_ratio(r, r + w)} |")
    r, w, u = _counts(t.qa.totals())
    print(f"| all | {r} | {w} | {u} | {_ratio(r, r + w)} |")

    print("\n## Gaze confusion (annotated kind -> predicted kind, rows)\n")
    for (truth_kind, pred_kind), n in sorted(t.gaze.confusion.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"- {truth_kind} -> {pred_kind}: {n}")

    print("\n## Consistency violations\n")
    for s in scores:
        for v in s.consistency:
            print(f"- {s.video_id}: {v}")
    if not t.violations:
        print("- none")

    video_s = sum(s.duration for s in scores)
    rtf = video_s / wall if wall else math.nan
    print(f"\nCPU: {cpu_model()}")
    print(f"gaze_accuracy={t.gaze.accuracy:.3f} gaze_coverage={t.gaze.coverage:.3f} "
          f"tracking_coverage={t.tracking_coverage:.3f} identity_merges={t.merges} identity_splits={t.splits}")
    print(f"qa_agreement={t.qa.agreement():.3f} qa_checked={r + w} qa_uncheckable={u} violations={t.violations}")
    if wall:
        print(f"wall_s={wall:.1f} video_s={video_s:.2f} realtime_factor={rtf:.2f}"
              + ("" if ran else " (sum of the clips' recorded wall_s: the output was not produced by this run)"))
    return {
        "cpu": cpu_model(), "wall_s": wall, "video_s": video_s, "realtime_factor": rtf,
        "overall": {
            "gaze_accuracy": t.gaze.accuracy, "gaze_coverage": t.gaze.coverage, "gaze_rows": t.gaze.rows,
            "tracking_coverage": t.tracking_coverage, "identity_merges": t.merges, "identity_splits": t.splits,
            "precision": {k: t.events.precision(k) for k in t.events.verdicts},
            "event_verdicts": {k: dict(v) for k, v in t.events.verdicts.items()},
            "recall": {k: t.events.recall_of(k) for k in RECALL_KINDS},
            "qa_agreement": t.qa.agreement(), "qa": {k: dict(v) for k, v in t.qa.by_category.items()},
            "violations": t.violations,
            "confusion": [[a, b, n] for (a, b), n in t.gaze.confusion.items()],
        },
        "clips": clips_json,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=None, help="sampling rate (default: the product's)")
    parser.add_argument("--config", default=None, help="YAML/JSON config overrides passed to socialtrace run")
    parser.add_argument("--out", type=Path, default=None, help="output folder to score (run into it when empty)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--media", type=Path, default=None, help="shared media folder (default: tests' lookup)")
    edit = parser.add_mutually_exclusive_group()
    edit.add_argument("--half-resolution", action="store_true",
                      help="run and score half-resolution copies of the clips (built in a temporary folder)")
    edit.add_argument("--crf", type=int, default=None, metavar="N",
                      help="run and score copies encoded again by x264 at crf N (built in a temporary folder)")
    args = parser.parse_args()

    media = args.media or find_media_dir()
    truth = GroundTruth.load(media / "truth")
    clips = [media / c.clip for c in truth.clips.values()]
    missing = [str(c) for c in clips if not c.is_file()]
    if missing:
        raise SystemExit(f"annotated clips not found: {missing}")

    wall = None
    with tempfile.TemporaryDirectory(prefix="bench_accuracy_") as tmp:
        out = args.out or Path(tmp) / "out"
        if args.half_resolution and not (out / "run.json").is_file():
            from tests.camera_edits import half_resolution_clip

            # named by the clip's stem, the run's video_id, which is what the truth is looked up by
            clips = [half_resolution_clip(c, Path(tmp) / "half" / f"{c.stem}.mp4") for c in clips]
        if args.crf is not None and not (out / "run.json").is_file():
            from tests.camera_edits import edit_clip

            clips = [edit_clip(c, Path(tmp) / f"crf{args.crf}" / f"{c.stem}.mp4", lambda image: image, crf=args.crf)
                     for c in clips]
        if not (out / "run.json").is_file():
            print(f"running socialtrace on {len(clips)} annotated clips -> {out}", flush=True)
            wall = run_pipeline(clips, out, args.fps, args.config)
        else:
            print(f"scoring the existing output {out}")
        scores = score_output(out, truth)
        ran = wall is not None
        if not ran:  # an earlier run: the clips' own wall times (model loading included in the first)
            wall = sum(s.wall_s or 0.0 for s in scores) or None
        # DESIGN.md §10: the development set and the validation set, reported apart; then all clips
        figures = {}
        for truth_set in TRUTH_SETS:
            print(f"\n# {truth_set} set ({', '.join(truth.video_ids(truth_set))})")
            in_set = [s for s in scores if truth_set_of(s.video_id) == truth_set]
            figures[truth_set] = report(in_set, sum(s.wall_s or 0.0 for s in in_set) or None, ran=False)
        print(f"\n# all {len(scores)} annotated clips")
        figures.update(report(scores, wall, ran))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
