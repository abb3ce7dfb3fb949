"""Gaze targets and pointing of an existing run against the shared by-eye truth, per clip.

    python -m benchmarks.score_gaze_pointing OUT [--media DIR] [-v]

Scores with the accuracy harness (pipeline/truth_scores.py: head-centre matching, typed gaze targets) and
prints what the gaze and pointing work is judged on: gaze accuracy on definite rows, how many of the
rows where the run *names* a target name the right one (precision before recall), and per sampled
frame, "someone points" against the annotated pointing intervals (precision / recall), with the
pointing events' recall of those intervals. ``-v`` lists every definite row the run gets wrong.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.truth_scores import named_gaze, score_output
from pipeline.truth import GroundTruth
from tests.shared_media import find_media_dir


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f} ({a}/{b})" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--media", type=Path, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    truth = GroundTruth.load((args.media or find_media_dir()) / "truth")
    scores = score_output(str(args.out), truth)
    print("| clip | gaze acc | named targets right | pointing frames tp/fp/fn | P | R | intervals found |")
    print("|---|---|---|---|---|---|---|")
    sums = [0] * 7
    for s in scores:
        right, named = named_gaze(s.gaze)
        tp, fp, fn = s.pointing_frames
        found, intervals = s.events.recall.get("pointing", (0, 0))
        values = (s.gaze.correct, s.gaze.rows, right, named, tp, fp, fn)
        sums = [a + b for a, b in zip(sums, values)]
        print(f"| {s.video_id} | {_ratio(s.gaze.correct, s.gaze.rows)} | {_ratio(right, named)} | {tp}/{fp}/{fn} | "
              f"{_ratio(tp, tp + fp)} | {_ratio(tp, tp + fn)} | {found}/{intervals} |")
        if args.verbose:
            for t, label, want, got in s.gaze.details:
                if want != got:
                    print(f"|   {t:.2f} s {label}: truth {want}, run {got} |")
    c, rows, right, named, tp, fp, fn = sums
    print(f"| **all** | {_ratio(c, rows)} | {_ratio(right, named)} | {tp}/{fp}/{fn} | {_ratio(tp, tp + fp)} | "
          f"{_ratio(tp, tp + fn)} | |")


if __name__ == "__main__":
    main()
