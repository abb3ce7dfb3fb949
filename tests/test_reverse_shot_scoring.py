"""benchmarks/bench_reverse_shots.py traces each output row back through its shot's close-up crop to the
annotated person there: checked on the real truth of atd_kitchen with rows placed where a close-up shows its
people."""
from __future__ import annotations

import numpy as np

from benchmarks.bench_reverse_shots import close_up_box, score, trace_rows
from pipeline.truth import GroundTruth


def _row(person_id: int, t: float, head_centre, size: float = 0.04) -> dict:
    x, y = head_centre
    # shot_id as the run numbered it (a false cut would shift it): the tracing goes by the row's time
    return {"person_id": person_id, "t": t, "shot_id": 7, "head_bbox": [x - size, y - size, x + size, y + size]}


def _in_crop(point, box) -> tuple[float, float]:
    """A point of the whole frame as the close-up ``box`` shows it."""
    x1, y1, x2, y2 = box
    return (point[0] - x1) / (x2 - x1), (point[1] - y1) / (y2 - y1)


def test_rows_of_a_close_up_are_traced_back_to_the_annotated_people(media_dir):
    clip = GroundTruth.load(media_dir / "truth").clip("atd_kitchen")
    head = {(label, t): clip.row(label, t).head for label in "AB" for t in (0.0, 1.0, 2.0)}
    close_on_a = close_up_box(np.mean([head["A", t] for t in (0.0, 1.0, 2.0)], axis=0))
    assert close_on_a[0] <= head["A", 1.0][0] <= close_on_a[2] and close_on_a[1] <= head["A", 1.0][1] <= close_on_a[3]
    shots, starts = [(0.0, 0.0, 1.0, 1.0), close_on_a, (0.0, 0.0, 1.0, 1.0)], [0.0, 0.75, 1.75]
    rows = [
        _row(0, 0.0, head["A", 0.0]), _row(1, 0.0, head["B", 0.0]),    # wide: both
        _row(0, 1.0, _in_crop(head["A", 1.0], close_on_a)),            # A's close-up, A where the crop shows him
        _row(7, 1.0, (0.97, 0.9)),                                     # an arm at the close-up's edge: nobody there
        {"person_id": 8, "t": 1.0, "shot_id": 7, "head_bbox": None},   # a box without a head is not scored
        _row(0, 2.0, head["A", 2.0]), _row(2, 2.0, head["B", 2.0]),    # wide again: B under a new id
    ]
    traced = trace_rows(rows, shots, starts, clip)
    assert sorted(traced) == [(0, "A", 0), (0, "A", 1), (0, "A", 2), (1, "B", 0), (2, "B", 2)]
    # read as the whole frame, the close-up's A lies nowhere near an annotated head: the crop matters
    assert (0, "A", 1) not in trace_rows(rows, [shots[0]] * 3, starts, clip)
    s = score(traced)
    assert s["across"] == ["A", "B"] and s["kept"] == ["A"]
    assert s["ids"] == {"A": [0], "B": [1, 2]} and s["merged"] == {}
    # a close-up's head box off the annotated head (on the face side of a head seen from behind): traced by the
    # box around A's head alone; a box around both heads traces nobody
    x1, y1 = _in_crop((head["A", 1.0][0] - 0.1, head["A", 1.0][1] - 0.1), close_on_a)
    x2, y2 = _in_crop((head["A", 1.0][0] + 0.1, head["A", 1.0][1] + 0.3), close_on_a)
    off_head = dict(_row(5, 1.0, (0.99, 0.01)), bbox=[x1, y1, x2, y2])
    assert trace_rows([off_head], shots, starts, clip) == [(5, "A", 1)]
    both = dict(_row(6, 0.0, (0.5, 0.99)), bbox=[0.0, 0.0, 1.0, 1.0])
    assert trace_rows([both], shots, starts, clip) == []
    # one id over both people is a wrong join, reported as such
    assert score(traced + [(0, "B", 1)])["merged"] == {0: ["A", "B"]}
