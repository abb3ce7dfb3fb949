"""Draw each person's box and "Person N" label on a frame, so a question that names "Person 3" can be
answered by looking at the video. Used by the grasp-bench export and by `socialtrace render`.

Drawing goes through supervision's annotators; colours are keyed by person_id so a person keeps one
colour for the whole video. Frames are BGR (the OpenCV / supervision convention): drawn that way, the
colour on screen is ``person_color(person_id)`` (RGB).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import cv2
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
        self.text_scale = max(0.4, 0.7 * scale)
        self.text_thickness = max(1, int(round(2 * scale)))
        self.text_padding = max(4, int(round(8 * scale)))

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
        scene = self._boxes.annotate(scene, detections)
        for box, person_id in zip(detections.xyxy, detections.tracker_id):
            self._draw_label(scene, person_label(person_id), box, PERSON_PALETTE.by_idx(int(person_id)).as_bgr())
        return scene

    def label_box(self, text: str, box: Sequence[float]) -> tuple[int, int, int, int]:
        """Where the label of ``box`` (pixel xyxy) is drawn, as pixel (x1, y1, x2, y2), end exclusive:
        above the box's top-left corner, or just inside the box below its top edge when there is no room
        above (a box at y = 0), and shifted left when it would pass the right edge. Always inside the frame,
        so a model can read every "Person N" of an exported clip."""
        (text_w, text_h), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, self.text_scale,
                                                     self.text_thickness)
        width = min(text_w + 2 * self.text_padding, self.width)
        height = min(text_h + baseline + 2 * self.text_padding, self.height)
        x1 = int(min(max(0, int(box[0])), self.width - width))
        y1 = int(box[1]) - height
        if y1 < 0:
            y1 = int(box[1])
        y1 = int(min(max(0, y1), self.height - height))
        return x1, y1, x1 + width, y1 + height

    def _draw_label(self, scene: np.ndarray, text: str, box: Sequence[float], bgr: tuple[int, int, int]) -> None:
        x1, y1, x2, y2 = self.label_box(text, box)
        cv2.rectangle(scene, (x1, y1), (x2 - 1, y2 - 1), bgr, thickness=cv2.FILLED)
        _, baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, self.text_scale, self.text_thickness)
        cv2.putText(scene, text, (x1 + self.text_padding, y2 - self.text_padding - baseline),
                    cv2.FONT_HERSHEY_SIMPLEX, self.text_scale, (255, 255, 255), self.text_thickness, cv2.LINE_AA)


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
