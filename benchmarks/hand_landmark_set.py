"""Build a labelled set of real MediaPipe hand landmarks from the shared clips (pointing vs not).

    python -m benchmarks.hand_landmark_set -o /tmp/hands.npz [--fps 15]

Every sampled frame of each annotated clip goes through the product's own person search (MediaPipe
backend); every hand box it finds (from the pose's wrist/hand points, raised arm or not) is resolved
by the hand landmark model on a crop, as the refiner does. Each hand is stored with its clip, time,
image landmarks (21, 3) pixels, the person's arm keypoints and labels:

- ``label`` 1 when the frame lies inside an annotated pointing interval of that clip and the hand is
  the raised one (the index tip nearest the top of the frame among that person's hands), else 0;
- ``ambiguous`` for hands within ``--margin`` seconds of an interval's edge (onset / retraction: the
  finger is out but the arm is not yet raised) and for the lower hand inside an interval.

Clips where nobody points (high fives, a handshake, talking with open hands) give negatives only.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from detectors.config import DetectorConfig, GazeConfig, PointingConfig
from detectors.mediapipe_backend import MediaPipeDetector
from detectors.observation import LEFT_HIP, RIGHT_HIP
from detectors.keypoints import ARMS
from pipeline.video import iter_frames
from tests.shared_media import find_media_dir

CLIPS = (
    "deepoint_lamp1.mp4", "deepoint_pointing_folding.mp4", "deepoint_pointing_long.mov", "deepoint_pointing_up.mov",
    "atd_kitchen.mp4", "tvhid_highfive_0018.avi", "tvhid_highfive_0005.avi", "tvhid_handshake_0001.avi",
)


def _intervals(media: Path) -> dict[str, list[tuple[float, float]]]:
    spans: dict[str, list[tuple[float, float]]] = {}
    with open(media / "truth" / "intervals.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["kind"] == "pointing":
                spans.setdefault(row["clip"], []).append((float(row["start"]), float(row["end"])))
    return spans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--fps", type=float, default=15.0)
    parser.add_argument("--margin", type=float, default=0.25)
    args = parser.parse_args()
    media = find_media_dir()
    spans = _intervals(media)
    detector = MediaPipeDetector(DetectorConfig(), GazeConfig(), PointingConfig(), fps=args.fps, threads=1)
    refiner = detector.refiners[0]
    records: dict[str, list] = {k: [] for k in ("clip", "t", "person", "side", "landmarks", "hand_score", "arm", "label", "ambiguous", "size")}
    for clip in CLIPS:
        n_hands = 0
        for frame in iter_frames(str(media / clip), args.fps, 960):
            image = frame.image
            height, width = image.shape[:2]
            people = detector.find_people(image, search=True)
            for p, person in enumerate(people):
                found = []
                for side, (shoulder, elbow, wrist) in enumerate(ARMS):
                    box = person.hand_boxes[side]
                    if not np.isfinite(box).all():
                        continue
                    hand = refiner._hand_landmarks(image, box)
                    if hand is None:
                        continue
                    landmarks, score = hand
                    hip = LEFT_HIP if side == 0 else RIGHT_HIP
                    arm = person.keypoints[[shoulder, elbow, wrist, hip]].copy()
                    found.append((side, landmarks, score, arm))
                if not found:
                    continue
                inside = any(s <= frame.t <= e for s, e in spans.get(clip, []))
                near_edge = any(abs(frame.t - s) < args.margin or abs(frame.t - e) < args.margin for s, e in spans.get(clip, []))
                top = min(range(len(found)), key=lambda k: found[k][1][8, 1])
                for k, (side, landmarks, score, arm) in enumerate(found):
                    records["clip"].append(clip)
                    records["t"].append(frame.t)
                    records["person"].append(p)
                    records["side"].append(side)
                    records["landmarks"].append(landmarks)
                    records["hand_score"].append(score)
                    records["arm"].append(arm)
                    records["label"].append(int(inside and k == top))
                    records["ambiguous"].append(bool(near_edge or (inside and k != top)))
                    records["size"].append((width, height))
                    n_hands += 1
        print(f"{clip}: {n_hands} hands")
    np.savez(args.output, **{k: np.array(v) for k, v in records.items()})


if __name__ == "__main__":
    main()
