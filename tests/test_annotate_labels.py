"""Every "Person N" label is whole and inside the frame (issue 26 item 4): renders and exported training
clips share pipeline/annotate.py, and a model must be able to read the label of a person whose box
touches the top or the right edge."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.annotate import PersonAnnotator, person_color

W, H = 640, 360


def text_pixels(frame: np.ndarray) -> tuple[int, int, int, int]:
    """Bounding box (x1, y1, x2, y2, end exclusive) of the white label text on a black frame."""
    ys, xs = np.nonzero(frame.min(axis=2) > 230)
    assert len(ys), "no label text drawn"
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def drawn(bbox: list[float], person_id: int = 1) -> np.ndarray:
    return PersonAnnotator(W, H).draw(np.zeros((H, W, 3), np.uint8), [{"person_id": person_id, "bbox": bbox}])


@pytest.fixture(scope="module")
def reference() -> tuple[int, int]:
    """Width and height of the whole label text, from a box in the middle of the frame (label above it)."""
    x1, y1, x2, y2 = text_pixels(drawn([0.4, 0.5, 0.6, 0.9]))
    assert y2 <= 0.5 * H  # above the box's top edge, as it is drawn when there is room
    return x2 - x1, y2 - y1


def test_label_of_a_box_at_the_top_edge_is_whole_and_below_it(reference):
    frame = drawn([0.2, 0.0, 0.4, 0.8])
    x1, y1, x2, y2 = text_pixels(frame)
    assert (x2 - x1, y2 - y1) == reference  # not cut: the whole text is there
    assert y1 > 0 and y2 < H
    # the label's fill (the person's colour) is above the text inside the frame, i.e. below y = 0
    bgr = person_color(1)[::-1]
    fill_row = frame[1:y1, x1:x2]
    assert (np.abs(fill_row.astype(int) - bgr).sum(axis=2) < 10).mean() > 0.9


def test_label_of_a_box_at_the_right_edge_is_whole_and_inside(reference):
    frame = drawn([0.97, 0.5, 1.0, 0.9])
    x1, y1, x2, y2 = text_pixels(frame)
    assert (x2 - x1, y2 - y1) == reference
    assert x2 < W


def test_label_of_a_box_in_the_top_right_corner(reference):
    x1, y1, x2, y2 = text_pixels(drawn([0.98, 0.0, 1.0, 0.1], person_id=12))
    assert x2 - x1 >= reference[0] and y2 - y1 == reference[1]  # "Person 12" is wider than "Person 1"
    assert 0 < x1 and x2 < W and 0 < y1 and y2 < H


def test_label_box_always_inside_the_frame():
    annotator = PersonAnnotator(W, H)
    for box in ([0, 0, 5, 5], [W - 2, H - 2, W - 1, H - 1], [300, 100, 400, 200], [W - 1, 0, W - 1, 0]):
        x1, y1, x2, y2 = annotator.label_box("Person 7", box)
        assert 0 <= x1 < x2 <= W and 0 <= y1 < y2 <= H, box
