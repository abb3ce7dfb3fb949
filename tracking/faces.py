"""Faces kept for re-identification: aligned chips of large enough faces gathered while frames are
decoded, described (dlib ResNet, detectors/face_identity.py) only when stitching asks about a tracklet,
a few chips per tracklet, pooled into one mean descriptor, and cached.

Measured on the shared clips (faces the face mesh read, 960 px frames): a face shrunk to a 20 px tall
head lands 0.40-0.53 (median) from its own full-size descriptor, at 30 px 0.29-0.39, at 40-45 px
0.21-0.26, at 60 px 0.12-0.18: below ``face_min_head_pixels`` (40) the descriptor is mostly noise
against dlib's 0.6 decision distance. Pooled over 3 chips, one person's two halves of a clip are
0.15-0.41 apart (0.69 for a woman looking down at a table the whole clip), two people 0.41-0.65 apart
(0.41: children in yakhyo_classroom_group): a face alone does not decide, face and clothes together do;
where no clothes are seen (every sighting overlapped), a face decides only when it is also closer than any
other face seen beside the other side (tracking/stitching.py).
"""
from __future__ import annotations

import time
from typing import Optional

import cv2
import numpy as np

from detectors.observation import FrameObservations

_JPEG_QUALITY = 92  # chips are held as JPEG (~5 KB instead of 67 KB) until a tracklet needs them


class FaceBank:
    """Chips by (frame position, row) of the observations handed to tracking."""

    def __init__(self, describer, min_head_pixels: float, chips_per_tracklet: int):
        self.describer = describer
        self.min_head_pixels = float(min_head_pixels)
        self.chips_per_tracklet = int(chips_per_tracklet)
        self._chips: dict[tuple[int, int], tuple[float, bytes]] = {}  # -> (head height px, jpeg)
        self._pooled: dict[tuple, Optional[np.ndarray]] = {}
        self.n_described = 0
        self.describe_seconds = 0.0

    def add_frame(self, position: int, image: np.ndarray, frame: FrameObservations) -> None:
        """Keep a chip of every face of ``frame`` (observations of sampled frame ``position``) that the
        face mesh read (a face turned away gives no identity) and whose head is tall enough."""
        if not len(frame):
            return
        height, width = image.shape[:2]
        for row in range(len(frame)):
            head = frame.head_xyxy[row]
            if not frame.face_seen[row] or not np.all(np.isfinite(head)):
                continue
            head_px = head.astype(np.float64) * [width, height, width, height]
            tall = head_px[3] - head_px[1]
            if tall < self.min_head_pixels:
                continue
            chip = self.describer.chip(image, head_px)
            ok, jpeg = cv2.imencode(".jpg", chip, [cv2.IMWRITE_JPEG_QUALITY, _JPEG_QUALITY])
            if ok:
                self._chips[(int(position), int(row))] = (float(tall), jpeg.tobytes())

    def __len__(self) -> int:
        return len(self._chips)

    def pooled(self, rows: list[tuple[int, int]]) -> Optional[np.ndarray]:
        """Mean descriptor of the largest ``chips_per_tracklet`` faces among ``rows`` (None: no face)."""
        key = tuple(rows)
        if key in self._pooled:
            return self._pooled[key]
        found = [(self._chips[r][0], r) for r in rows if r in self._chips]
        result = None
        if found:
            best = sorted(found, key=lambda f: (-f[0], f[1]))[: self.chips_per_tracklet]
            chips = [cv2.imdecode(np.frombuffer(self._chips[r][1], np.uint8), cv2.IMREAD_UNCHANGED) for _, r in best]
            started = time.perf_counter()
            result = self.describer.describe(chips).mean(axis=0)
            self.describe_seconds += time.perf_counter() - started
            self.n_described += len(chips)
        self._pooled[key] = result
        return result

    def person(self, tracklets) -> Optional[np.ndarray]:
        """The mean of the pooled faces of a person's tracklets (each with ``rows``); None: no face."""
        found = [f for f in (self.pooled(t.rows) for t in tracklets) if f is not None]
        return np.mean(found, axis=0) if found else None


def face_distance(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> float:
    """Euclidean distance of two pooled descriptors; NaN when either has no face."""
    if a is None or b is None:
        return float("nan")
    return float(np.linalg.norm(a - b))
