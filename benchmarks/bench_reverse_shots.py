"""Identity through shot / reverse-shot editing (issue 23): each annotated shared clip cut into three shots.

    python -m benchmarks.bench_reverse_shots [--clips NAME ...] [--media DIR] [--work DIR]

Each clip (640x360, 10 fps, tests/video_edits.py) is cut into three consecutive pieces of equal length, shown as

- WXW: wide / close-up on X / wide;
- XWX: close-up on X / wide / close-up on X;
- XYX: close-up on X / close-up on Y / close-up on X (clips with two or more annotated people),

where X and Y are the clip's two most annotated people and a close-up is the crop of half the frame's width
and height around the person's mean annotated head (tests/video_edits.py ``cropped``), scaled to the full
frame and cut in hard: the digital form of a film's reverse shots. Time runs on (the pieces are consecutive
parts of the clip, not replays), so people move and turn between shots as they do in an edited scene.

Every output row is traced to an annotated person: its head centre, mapped back through its shot's crop, nearest
to a truth head of the same instant (truth every 0.25 s, rows at the 2 fps samples; within ``REACH`` of the
frame), or else its box, mapped back likewise, around exactly one annotated head. Per edit it prints, for each
annotated person found in two or more shots, the ids they got; "kept" is one id over every shot they were found
in, "ids over two people" counts ids traced to two annotated people (a wrong join: worse than a lost id). Rows
traced to nobody (an arm at the frame edge) are not scored.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter, defaultdict
from contextlib import closing
from pathlib import Path

import numpy as np

from benchmarks.bench_cutaways import CLIPS, EDIT_FPS, EDIT_SIZE

CLOSE_UP = 0.5  # a close-up shows this share of the frame's width and height
REACH = 0.08  # a row's head within this distance (normalised, original frame) of a truth head is that person
TIME_TOLERANCE = 0.13  # a 2 fps sample and a truth instant of the same moment (first-frame offsets included)


def close_up_box(head: np.ndarray) -> tuple[float, float, float, float]:
    """The crop (normalised x1, y1, x2, y2) of a close-up on a head: the head a third of the way down."""
    x0 = float(np.clip(head[0] - CLOSE_UP / 2, 0.0, 1.0 - CLOSE_UP))
    y0 = float(np.clip(head[1] - CLOSE_UP / 3, 0.0, 1.0 - CLOSE_UP))
    return x0, y0, x0 + CLOSE_UP, y0 + CLOSE_UP


def shot_pieces(frames: list[np.ndarray], order: str, boxes: dict[str, tuple]
                ) -> tuple[list[tuple], list[list[np.ndarray]]]:
    """The clip's frames cut in thirds as three shots (``order``: W = the whole frame, a label = its close-up):
    each shot's crop box and its frames at EDIT_SIZE."""
    from tests.video_edits import cropped

    thirds = np.array_split(np.arange(len(frames)), 3)
    shots = [(0.0, 0.0, 1.0, 1.0) if kind == "W" else boxes[kind] for kind in order]
    return shots, [cropped([frames[k] for k in part], box, EDIT_SIZE) for part, box in zip(thirds, shots)]


def build_edit(frames: list[np.ndarray], order: str, boxes: dict[str, tuple], path: Path
               ) -> tuple[list[tuple], list[float]]:
    """Write the clip's frames as three shots (``shot_pieces``); returns each shot's crop box and start time."""
    from tests.video_edits import write_edit

    shots, pieces = shot_pieces(frames, order, boxes)
    return shots, write_edit(path, pieces, EDIT_FPS)


def trace_rows(rows: list[dict], shots: list[tuple], starts: list[float], clip_truth) -> list[tuple[int, str, int]]:
    """(person id, annotated label, shot index) of every row traced to an annotated person; a row's shot is
    the piece its time falls in (``starts``), whatever cuts the run itself found. A row is traced by its head
    (the annotated head nearest it within ``REACH``) or, where that finds nobody, by its box: the one annotated
    head of the instant inside it (a close-up's head box can sit on the face side of a head seen from behind,
    a third of the close-up away from the annotated head; a box around two annotated heads says nothing)."""
    labels = sorted({r.person for r in clip_truth.rows})
    traced = []
    for row in rows:
        shot = int(np.searchsorted(np.asarray(starts) - 1e-6, float(row["t"]), side="right")) - 1
        heads = {}
        for label in labels:
            truth_row = clip_truth.row(label, float(row["t"]), tolerance=TIME_TOLERANCE)
            if truth_row is not None:
                heads[label] = np.array(truth_row.head)
        best = None
        if row.get("head_bbox") is not None:
            centre = _in_frame(np.array(row["head_bbox"], float).reshape(2, 2).mean(axis=0), shots[shot])
            best_distance = REACH
            for label, head in heads.items():
                distance = float(np.hypot(*(centre - head)))
                if distance <= best_distance:
                    best, best_distance = label, distance
        if best is None and row.get("bbox") is not None:
            corners = np.array(row["bbox"], float).reshape(2, 2)
            (x1, y1), (x2, y2) = _in_frame(corners[0], shots[shot]), _in_frame(corners[1], shots[shot])
            inside = [label for label, (x, y) in heads.items() if x1 <= x <= x2 and y1 <= y <= y2]
            best = inside[0] if len(inside) == 1 else None
        if best is not None:
            traced.append((int(row["person_id"]), best, shot))
    return traced


def _in_frame(point: np.ndarray, crop: tuple) -> np.ndarray:
    """A normalised point of a shot's picture in the original frame (``crop``: the shot's x1, y1, x2, y2)."""
    bx1, by1, bx2, by2 = crop
    return np.array([bx1 + point[0] * (bx2 - bx1), by1 + point[1] * (by2 - by1)])


def score(traced: list[tuple[int, str, int]]) -> dict:
    ids_of: dict[str, set] = defaultdict(set)
    shots_of: dict[str, set] = defaultdict(set)
    people_of: dict[int, set] = defaultdict(set)
    for person_id, label, shot in traced:
        ids_of[label].add(person_id)
        shots_of[label].add(shot)
        people_of[person_id].add(label)
    across = sorted(label for label in ids_of if len(shots_of[label]) >= 2)
    return {
        "across": across,
        "kept": [label for label in across if len(ids_of[label]) == 1],
        "ids": {label: sorted(ids_of[label]) for label in sorted(ids_of)},
        "shots": {label: sorted(shots_of[label]) for label in sorted(shots_of)},
        "merged": {pid: sorted(labels) for pid, labels in people_of.items() if len(labels) > 1},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--clips", nargs="*", default=list(CLIPS), help="shared clip file names (default: all)")
    parser.add_argument("--media", type=Path, default=None, help="shared media folder (default: found as the tests do)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the edited videos (default: a temporary one)")
    args = parser.parse_args(argv)

    from pipeline.clip import ClipSpec
    from pipeline.config import Config
    from pipeline.perception import PerceptionWorker
    from pipeline.truth import GroundTruth
    from tests.shared_media import find_media_dir
    from tests.video_edits import clip_frames

    media = args.media or find_media_dir()
    truth = GroundTruth.load(media / "truth")
    totals = Counter()
    with tempfile.TemporaryDirectory() as scratch, closing(PerceptionWorker(Config())) as worker:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for clip in args.clips:
            video_id = Path(clip).stem
            clip_truth = truth.clip(video_id)
            counts = Counter(r.person for r in clip_truth.rows)
            main_people = [label for label, _ in counts.most_common(2)]
            boxes = {label: close_up_box(np.mean([r.head for r in clip_truth.rows if r.person == label], axis=0))
                     for label in main_people}
            x = main_people[0]
            orders = [f"W{x}W", f"{x}W{x}"] + ([f"{x}{main_people[1]}{x}"] if len(main_people) > 1 else [])
            frames = clip_frames(media / clip, EDIT_FPS, EDIT_SIZE)
            for order in orders:
                path = work / f"{video_id}_{order}.mp4"
                shots, starts = build_edit(frames, order, boxes, path)
                result = worker(ClipSpec(f"{video_id}_{order}", str(path)))
                s = score(trace_rows(result.tracks.to_pylist(), shots, starts, clip_truth))
                totals.update(across=len(s["across"]), kept=len(s["kept"]), merged=len(s["merged"]))
                print(f"{video_id:32s} {order:4s} kept {len(s['kept'])}/{len(s['across'])} "
                      f"ids {s['ids']} shots {s['shots']} over two people {s['merged'] or '-'}", flush=True)
    print(f"all: kept {totals['kept']}/{totals['across']} of the annotated people found in two or more shots; "
          f"ids over two people {totals['merged']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
