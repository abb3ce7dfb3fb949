"""benchmarks/bench_reverse_shots.py traces each output row back through its shot's close-up crop to the
annotated person there: checked on the real truth of atd_kitchen with rows placed where a close-up shows its
people."""
from __future__ import annotations

import numpy as np

from benchmarks.bench_reverse_shots import close_up_box, score, trace_rows
from pipeline.truth import GroundTruth


def _row(person_id: int, t: float, shot: int, head_centre, size: float = 0.04) -> dict:
    x, y = head_centre
    return {"person_id": person_id, "t": t, "shot_id": shot, "head_bbox": [x - size, y - size, x + size, y + size]}


def _in_crop(point, box) -> tuple[float, float]:
    """A point of the whole frame as the close-up ``box`` shows it."""
    x1, y1, x2, y2 = box
    return (point[0] - x1) / (x2 - x1), (point[1] - y1) / (y2 - y1)


def test_rows_of_a_close_up_are_traced_back_to_the_annotated_people(media_dir):
    clip = GroundTruth.load(media_dir / "truth").clip("atd_kitchen")
    a_head, b_head = clip.row("A", 0.5).head, clip.row("B", 0.5).head
    close_on_a = close_up_box(np.array(a_head))
    assert close_on_a[0] <= a_head[0] <= close_on_a[2] and close_on_a[1] <= a_head[1] <= close_on_a[3]
    shots = [(0.0, 0.0, 1.0, 1.0), close_on_a, (0.0, 0.0, 1.0, 1.0)]
    rows = [
        _row(0, 0.5, 0, a_head), _row(1, 0.5, 0, b_head),          # wide: both
        _row(0, 0.5, 1, _in_crop(a_head, close_on_a)),             # A's close-up, A where the crop shows him
        _row(7, 0.5, 1, (0.97, 0.9)),                              # an arm at the close-up's edge: nobody annotated there
        {"person_id": 8, "t": 0.5, "shot_id": 1, "head_bbox": None},  # a box without a head is not scored
        _row(0, 0.5, 2, a_head), _row(2, 0.5, 2, b_head),          # wide again: B under a new id
    ]
    traced = trace_rows(rows, shots, clip)
    assert sorted(traced) == [(0, "A", 0), (0, "A", 1), (0, "A", 2), (1, "B", 0), (2, "B", 2)]
    s = score(traced)
    assert s["across"] == ["A", "B"] and s["kept"] == ["A"]
    assert s["ids"] == {"A": [0], "B": [1, 2]} and s["merged"] == {}
    # one id over both people is a wrong join, reported as such
    assert score(traced + [(0, "B", 1)])["merged"] == {0: ["A", "B"]}
