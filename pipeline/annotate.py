"""Draw each person's box and "Person N" label on a frame, so a question that names "Person 3" can be
answered by looking at the video. Used by the grasp-bench export and by `socialtrace render`.

Drawing goes through supervision's annotators; colours are keyed by person_id so a person keeps one
colour for the whole video. Frames are BGR (the OpenCV / supervision convention): drawn that way, the
colour on screen is ``person_color(person_id)`` (RGB).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import supervision as sv

PERSON_PALETTE = sv.ColorPalette.DEFAULT


def person_color(person_id: int) -> tuple[int, int, int]:
    """The RGB colour person ``person_id`` is drawn in (the same on every frame)."""
    color = PERSON_PALETTE.by_idx(int(person_id))
    return (color.r, color.g, color.b)


def person_label(person_id: int) -> str:
    """The on-screen name of a person, identical to how questions name them."""
    return f"Person {int(person_id)}"


def people(count: int) -> str:
    """"1 person", "2 people" (messages and titles)."""
    return f"{count} person" if count == 1 else f"{count} people"


class PersonAnnotator:
    """Draws boxes and labels for the tracks rows of one frame. Build once, call per frame: the
    annotators scale line width and text to the frame size given at construction."""

    def __init__(self, width: int, height: int) -> None:
        if width <= 0 or height <= 0:
            raise ValueError(f"frame size must be positive, got {width}x{height}")
        self.width = int(width)
        self.height = int(height)
        # thickness and text scale follow the frame size so labels stay legible on 1080p and 360p alike
        scale = max(self.width, self.height) / 1280.0
        thickness = max(2, int(round(3 * scale)))
        self._boxes = sv.BoxAnnotator(
            color=PERSON_PALETTE, thickness=thickness, color_lookup=sv.ColorLookup.TRACK
        )
        self._labels = sv.LabelAnnotator(
            color=PERSON_PALETTE,
            color_lookup=sv.ColorLookup.TRACK,
            text_color=sv.Color.WHITE,
            text_scale=max(0.4, 0.7 * scale),
            text_thickness=max(1, int(round(2 * scale))),
            text_padding=max(4, int(round(8 * scale))),
            text_position=sv.Position.TOP_LEFT,
        )

    def detections(self, rows: Sequence[Mapping]) -> sv.Detections:
        """Tracks rows (dicts with ``person_id`` and normalised xyxy ``bbox``) -> pixel Detections."""
        if not rows:
            return sv.Detections.empty()
        boxes = np.asarray([row["bbox"] for row in rows], dtype=np.float32).reshape(-1, 4)
        boxes = boxes * np.array([self.width, self.height, self.width, self.height], dtype=np.float32)
        boxes = np.clip(boxes, 0, [self.width - 1, self.height - 1, self.width - 1, self.height - 1])
        ids = np.asarray([int(row["person_id"]) for row in rows], dtype=int)
        return sv.Detections(xyxy=boxes, tracker_id=ids, class_id=np.zeros(len(ids), dtype=int))

    def draw(self, frame: np.ndarray, rows: Sequence[Mapping]) -> np.ndarray:
        """Return a copy of ``frame`` (H x W x 3, uint8, BGR) with the boxes and labels of ``rows`` drawn."""
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"expected an H x W x 3 frame, got shape {frame.shape}")
        if frame.shape[0] != self.height or frame.shape[1] != self.width:
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the annotator was built for "
                f"{self.width}x{self.height}"
            )
        scene = np.ascontiguousarray(frame).copy()
        detections = self.detections(rows)
        if len(detections) == 0:
            return scene
        labels = [person_label(pid) for pid in detections.tracker_id]
        scene = self._boxes.annotate(scene, detections)
        return self._labels.annotate(scene, detections, labels=labels)


def rows_by_frame(tracks: pa.Table) -> dict[int, list[dict]]:
    """Group a video's tracks rows by ``frame_idx`` (the sampled-frame index), keeping the columns
    the annotator needs plus ``t``."""
    grouped: dict[int, list[dict]] = {}
    columns = [c for c in ("frame_idx", "t", "person_id", "bbox") if c in tracks.column_names]
    for row in tracks.select(columns).to_pylist():
        grouped.setdefault(int(row["frame_idx"]), []).append(row)
    return grouped


def frame_times(grouped: Mapping[int, Iterable[Mapping]]) -> dict[int, float]:
    """frame_idx -> t for grouped rows (every row of a frame carries the same t)."""
    return {idx: float(next(iter(rows))["t"]) for idx, rows in grouped.items() if rows}
