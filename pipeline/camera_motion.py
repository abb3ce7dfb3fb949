"""Camera motion: how far the picture's content has moved (a pan or tilt) at each decoded frame.

At 2 fps a pan moves everyone's box a large part of the frame between two samples, so box overlap and
motion, which tracking and stitching go by, follow the frame instead of the people: a whip pan across a
row of children handed each child's id to the neighbour who took their place in the frame, and a slow one
split people who were only carried across it by the camera. Tracking therefore works on positions with
the camera's move taken out (``tracking.stitching.assign_person_ids``).

The move is read from every decoded frame as the shot detector reads them (no second decode), as small
grey images: each step (at least ``MIN_STEP_SECONDS`` of video) is the median, over a grid of tiles, of
each tile's phase-correlation shift. People fill most of the picture in the footage this is for, so no
background is masked out: a tile on someone walking moves with them, the median follows the majority of
tiles (the background, or people standing still, both moving only with the camera). Steps slower than
``MIN_SPEED`` count as none, so a camera that stands still reads no move at all however long the clip
(opencv_vtest, 80 s of walkers in front of a fixed camera: 0.12 frame widths of drift without the floor,
none with it). Steps are summed, except those over a cut (a shift between two shots means nothing); readers
take differences within a shot only.

A tile measures shifts up to half its width, so a step reads pans up to about 1.5 frame widths a second
(faster ones blur the picture anyway). Measured on pans cut from the shared clips (a window of 75 % of the
frame sliding by a known amount): the summed move is within 0.005-0.04 frame widths of the window's over the
whole pan.
"""
from __future__ import annotations

import av
import cv2
import numpy as np

from pipeline.video import small_grey, small_grey_image

WORK_WIDTH = 256  # the grey images the move is read on, pixels wide
TILES = (4, 3)  # tiles across and down; each votes for the shift of its part of the picture
MIN_STEP_SECONDS = 0.07  # each step spans at least this much video (two frames at 25 fps)
# a step counts only when the content moves at least this fast (frame widths per second): slower drifts are
# left to tracking's own motion allowances (a walker covers up to 0.25 frame widths a second there), and
# people who fill the picture and walk move the tiles' median too (yakhyo_classroom_group's children
# walking at a camera that backs away: 0.08 frame heights a second)
MIN_SPEED = 0.1


class CameraPath:
    """Streaming camera-move estimate over every decoded frame: ``push_frame`` / ``push_image`` each frame
    in time order, then ``offsets`` at the sampled times."""

    def __init__(self, window: tuple[float, float, float, float] | None = None) -> None:
        # the picture inside black bars or a fill (pipeline/picture.coded_window): the moves are then in its
        # units, and bars and fills, which never move with the scene, do not vote
        self.window = window
        self._times: list[float] = []  # the times of the frames each step ends on (and the first frame)
        self._steps: list[np.ndarray] = []  # the content's move over each step (normalised x, y; 0 for the first)
        self._reference: np.ndarray | None = None  # the grey image the current step starts from
        self._reference_t = 0.0
        self._window: np.ndarray | None = None

    def push_frame(self, t: float, frame: av.VideoFrame) -> None:
        """Feed the next decoded frame (any pixel format) at time ``t`` (seconds, increasing)."""
        self._push(t, small_grey(frame, WORK_WIDTH, self.window))

    def push_image(self, t: float, image: np.ndarray) -> None:
        """Feed the next frame as an RGB (or grey) uint8 image at time ``t``."""
        self._push(t, small_grey_image(image, WORK_WIDTH))

    def _push(self, t: float, grey: np.ndarray) -> None:
        if self._times and t <= self._times[-1]:
            raise ValueError(f"CameraPath expects increasing times, got {t} after {self._times[-1]}")
        if self._reference is None:
            self._start(t, grey, np.zeros(2))
            return
        if t - self._reference_t < MIN_STEP_SECONDS - 1e-9:
            return
        step = np.zeros(2)
        if grey.shape == self._reference.shape:  # a change of size is a cut: no move across it
            shift = tile_median_shift(self._reference, grey, self._tile_window(grey.shape))
            height, width = grey.shape
            if float(np.hypot(shift[0], shift[1] * height / width)) >= MIN_SPEED * (t - self._reference_t):
                step = shift
        self._start(t, grey, step)

    def _start(self, t: float, grey: np.ndarray, step: np.ndarray) -> None:
        self._times.append(float(t))
        self._steps.append(step)
        self._reference, self._reference_t = grey, float(t)

    def _tile_window(self, shape: tuple[int, int]) -> np.ndarray:
        size = (shape[1] // TILES[0], shape[0] // TILES[1])
        if self._window is None or self._window.shape[::-1] != size:
            self._window = cv2.createHanningWindow(size, cv2.CV_32F)
        return self._window

    def offsets(self, times, cut_times=()) -> np.ndarray:
        """(len(times), 2) float64: how far the content has moved (normalised frame units, x right, y down)
        by each time since the first frame, linear between the frames steps end on. A step over one of
        ``cut_times`` (the first frames of new shots) counts as none: two shots' pictures have no move between
        them, and a cut halfway through a step would leak into the next shot's first samples. Only differences
        within one shot mean anything."""
        times = np.asarray(times, np.float64)
        if not self._times:
            return np.zeros((len(times), 2))
        ends = np.asarray(self._times)
        steps = np.asarray(self._steps)
        starts = np.concatenate([[ends[0]], ends[:-1]])
        for cut in np.asarray(cut_times, np.float64).reshape(-1):
            steps[(starts < cut) & (cut <= ends + 1e-9)] = 0.0
        moves = np.cumsum(steps, axis=0)
        return np.stack([np.interp(times, ends, moves[:, axis]) for axis in (0, 1)], axis=1)


def tile_median_shift(earlier: np.ndarray, later: np.ndarray, window: np.ndarray) -> np.ndarray:
    """The content's move from ``earlier`` to ``later`` (two grey float32 images of one size), normalised
    by their width and height: the median of the tiles' phase-correlation shifts."""
    height, width = earlier.shape
    tile_h, tile_w = window.shape
    shifts = []
    for row in range(TILES[1]):
        for col in range(TILES[0]):
            part = (slice(row * tile_h, (row + 1) * tile_h), slice(col * tile_w, (col + 1) * tile_w))
            (dx, dy), _ = cv2.phaseCorrelate(earlier[part], later[part], window)
            shifts.append((dx, dy))
    shift = np.median(np.asarray(shifts, np.float64), axis=0)
    return shift / np.array([width, height], np.float64)


def shot_relative(offsets: np.ndarray, shot_ids: np.ndarray) -> np.ndarray:
    """``offsets`` made relative to each shot's first sampled frame (a move across a cut means nothing)."""
    offsets = np.array(offsets, np.float64, copy=True)
    for shot in np.unique(shot_ids):
        members = np.flatnonzero(shot_ids == shot)
        offsets[members] -= offsets[members[0]]
    return offsets
