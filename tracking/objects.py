"""Object identities: one tracker per camera shot and class (a cup never becomes a bottle), ids numbered
by first appearance over the clip. Objects are not stitched across gaps or cuts: a lost object comes back
with a new id, which at worst splits a target, never merges two."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from detectors.objects import FrameObjects
from detectors.observation import FrameObservations
from tracking.config import TrackingConfig
from tracking.tracker import track_shot


def assign_object_ids(
    frames: list[FrameObjects], shot_ids: np.ndarray, config: TrackingConfig, fps: float, min_conf: float,
    camera_moves: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Per frame an (K,) int32 array of object ids (0-based, by first appearance, ties left to right),
    -1 for detections no track claimed. Every detection the object model kept (``min_conf``, its
    threshold) may start a track: object scores are not on the person detector's scale. ``camera_moves``
    (N, 2): the camera's move at each frame (pipeline/camera_motion.py), taken out of the boxes before they
    are compared, as for people (a pan carries a lamp across the picture)."""
    config = replace(config, track_high_thresh=min_conf, new_track_thresh=min_conf,
                     track_low_thresh=min(config.track_low_thresh, min_conf))
    shot_ids = np.asarray(shot_ids)
    if len(frames) != len(shot_ids):
        raise ValueError(f"assign_object_ids: {len(frames)} frames but {len(shot_ids)} shot ids")
    track_of = [np.full(len(f), -1, np.int64) for f in frames]
    keys: dict[tuple[int, str, int], int] = {}  # (shot, label, tracker id) -> provisional key
    for shot in np.unique(shot_ids):
        positions = np.flatnonzero(shot_ids == shot)
        labels = sorted({str(label) for p in positions for label in frames[p].label})
        for label in labels:
            rows = [np.flatnonzero(frames[p].label == label) for p in positions]
            views = [FrameObservations(frames[p].xyxy[r], frames[p].confidence[r]) for p, r in zip(positions, rows)]
            if camera_moves is not None:
                views = [view.translated(-camera_moves[p][0], -camera_moves[p][1]) for p, view in zip(positions, views)]
            for p, r, ids in zip(positions, rows, track_shot(views, config, fps)):
                for row, track in zip(r, ids):
                    if track >= 0:
                        track_of[p][row] = keys.setdefault((int(shot), label, int(track)), len(keys))
    # number by first appearance (frame, then left edge)
    first: dict[int, tuple[int, float]] = {}
    for position, (frame, tracks) in enumerate(zip(frames, track_of)):
        for row in np.argsort(frame.xyxy[:, 0], kind="stable"):
            if tracks[row] >= 0:
                first.setdefault(int(tracks[row]), (position, float(frame.xyxy[row, 0])))
    number = {key: k for k, key in enumerate(sorted(first, key=first.get))}
    return [np.array([number.get(int(t), -1) for t in tracks], np.int32) for tracks in track_of]


def carry_objects(frames: list[FrameObjects], times: np.ndarray, shot_ids: np.ndarray, seconds: float) -> list[FrameObjects]:
    """Each frame's objects plus those of the nearest frame with objects in the same shot within
    ``seconds`` (either way) when it has none itself: for things that stay put over a short time, seen
    only on some frames (the referent finder looks only while someone points). A cut ends it."""
    times = np.asarray(times, np.float64)
    shot_ids = np.asarray(shot_ids)
    seen = np.array([len(f) > 0 for f in frames], bool)
    out = list(frames)
    if seconds <= 0 or not seen.any():
        return out
    for k in np.flatnonzero(~seen):
        sources = np.flatnonzero(seen & (shot_ids == shot_ids[k]) & (np.abs(times - times[k]) <= seconds + 1e-9))
        if len(sources):
            out[k] = frames[sources[np.argmin(np.abs(times[sources] - times[k]))]]
    return out
