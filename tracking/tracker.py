"""Frame-to-frame association with Ultralytics' BYTETracker / BOT-SORT, one tracker per camera shot.

The trackers only see boxes and scores (``FrameObservations`` exposes ``conf``, ``cls`` and ``xywh``
and boolean indexing, which is all they read). Their ids are short-lived tracklet ids; identity over
the whole video is decided afterwards by ``tracking.stitching``.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from detectors.observation import FrameObservations
from tracking.config import TrackingConfig

TRACKERS = ("bytetrack", "botsort")
# The Kalman filters behave the same in any unit; a virtual 1000-pixel canvas keeps their numbers in
# the range Ultralytics tunes for.
_CANVAS = 1000.0


class _ScaledBoxes:
    """The detections view Ultralytics' trackers read: conf, cls, xywh (and xyxy) + boolean indexing."""

    def __init__(self, xyxy: np.ndarray, conf: np.ndarray, grow: float = 1.0):
        xyxy = np.asarray(xyxy, np.float32)
        if grow != 1.0 and len(xyxy):
            centre, half = (xyxy[:, :2] + xyxy[:, 2:]) / 2, (xyxy[:, 2:] - xyxy[:, :2]) / 2 * grow
            xyxy = np.concatenate([centre - half, centre + half], axis=1)
        self.xyxy = xyxy * _CANVAS
        self.conf = np.asarray(conf, np.float32)
        self.cls = np.zeros(len(self.conf), np.float32)

    @property
    def xywh(self) -> np.ndarray:
        centre = (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2
        return np.concatenate([centre, self.xyxy[:, 2:] - self.xyxy[:, :2]], axis=1)

    def __len__(self) -> int:
        return len(self.conf)

    def __getitem__(self, index: np.ndarray) -> "_ScaledBoxes":
        return _ScaledBoxes(self.xyxy[index] / _CANVAS, self.conf[index])


def make_tracker(config: TrackingConfig, fps: float):
    """A fresh Ultralytics tracker whose lost-track buffer is ``track_buffer_seconds`` at ``fps``."""
    from ultralytics.trackers.bot_sort import BOTSORT
    from ultralytics.trackers.byte_tracker import BYTETracker

    if config.tracker not in TRACKERS:
        raise ValueError(f"unknown tracker {config.tracker!r}; choose one of {TRACKERS}")
    args = SimpleNamespace(
        tracker_type=config.tracker,
        track_high_thresh=config.track_high_thresh,
        track_low_thresh=config.track_low_thresh,
        new_track_thresh=config.new_track_thresh,
        track_buffer=max(1, int(round(config.track_buffer_seconds * fps))),
        match_thresh=config.match_thresh,
        fuse_score=True,
        # BOT-SORT extras. Frames are released right after detection, so there is no image for
        # camera-motion compensation; re-identification is done by stitching instead.
        gmc_method="none",
        proximity_thresh=0.5,
        appearance_thresh=0.8,
        with_reid=False,
        model="auto",
    )
    return BOTSORT(args) if config.tracker == "botsort" else BYTETracker(args)


def track_shot(observations: list[FrameObservations], config: TrackingConfig, fps: float) -> list[np.ndarray]:
    """Run one new tracker over the consecutive frames of a shot. Returns, per frame, an (N,) int32
    array of tracklet ids (>= 1) for that frame's rows, -1 where a row was left unassigned (a weak
    detection that matched no track)."""
    tracker = make_tracker(config, fps)
    # at a low sampling rate a walker moves most of a box width between frames: the tracker matches
    # boxes grown by how far people move in one sampling period, so they still overlap
    grow = 1.0 + config.track_box_growth_per_second / max(fps, 1e-6)
    result = []
    for frame in observations:
        ids = np.full(len(frame), -1, np.int32)
        tracker.update(_ScaledBoxes(frame.xyxy, frame.confidence, grow))
        # Every track touched this frame, including ones born here: Ultralytics reports a new track
        # only from its second frame on, which would drop the first sighting of every person.
        for track in tracker.tracked_stracks:
            if track.frame_id == tracker.frame_id and 0 <= int(track.idx) < len(frame):
                ids[int(track.idx)] = track.track_id
        result.append(ids)
    return result
