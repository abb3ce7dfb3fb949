"""The events stage for one video: tracks (+ objects) -> events table."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa

from events.arrays import TrackArrays, tracks_to_arrays
from events.cross import detect_cross_events
from events.gaze import detect_gaze_events
from events.gestures import detect_gesture_events
from events.records import Event, events_to_table
from events.config import EventConfig
from pipeline.schema import EVENTS_SCHEMA, empty_table


def detect_events(
    tracks: pa.Table,
    config: EventConfig,
    objects: pa.Table | None = None,
    fps: float | None = None,
    clip_duration: float | None = None,
) -> pa.Table:
    """Gaze, gesture and cross-modal events of ONE video's tracks (pipeline.schema.TRACKS_SCHEMA columns).

    ``objects`` (pipeline.schema.OBJECTS_SCHEMA) enables showing/giving and object targets of reaching;
    ``fps`` is the sampling rate (inferred from ``t`` when None); ``clip_duration`` is the video's length in
    seconds (the probe's, as in the manifest): every event lies inside [0, clip_duration] (None: the clip
    is taken to end one sampling step after its last frame). Returns a table with exactly
    pipeline.schema.EVENTS_SCHEMA, sorted by (start_time, event_type, persons_involved), event_id 0..n-1
    in that order; the same input always gives the same table. Raises ValueError naming the video and the
    reason for malformed tracks."""
    if not isinstance(tracks, pa.Table):
        raise TypeError(f"detect_events expects a pyarrow.Table of tracks, got {type(tracks).__name__}")
    if not isinstance(config, EventConfig):
        raise TypeError(f"detect_events expects events.config.EventConfig, got {type(config).__name__}")
    if tracks.num_rows == 0:
        return empty_table(EVENTS_SCHEMA)
    with _cyclic_gc_paused():
        arrays = tracks_to_arrays(tracks, objects, fps, clip_duration)
        events, _ = detect_gaze_events(arrays, config)
        events += detect_gesture_events(arrays, config)
        events = drop_cut_short(arrays, events, config)
        events += detect_cross_events(arrays, events, config)
        return events_to_table(arrays, events)


def drop_cut_short(arrays: TrackArrays, events: list[Event], config: EventConfig) -> list[Event]:
    """Events that run into the clip's end lose the part of their last frame's step after it: one that is
    then shorter than its type's minimum duration was not seen long enough and is dropped (a frame count
    met the minimum, the clip's time did not)."""
    minimum = {
        "gaze_at": config.min_gaze_at_seconds, "mutual_gaze": config.min_mutual_gaze_seconds,
        "joint_attention": config.min_joint_attention_seconds, "gaze_aversion": config.aversion_min_hold_seconds,
        "pointing": config.min_gesture_seconds, "reaching": config.min_gesture_seconds,
        "showing": config.min_gesture_seconds, "giving": config.min_gesture_seconds,
    }
    last = arrays.n_frames - 1
    return [e for e in events
            if e.end != last or e.end_time - e.start_time >= minimum.get(e.event_type, 0.0) - 1e-6]


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (restored afterwards). An hour of events allocates some
    10^5 small acyclic objects (events, their details); each allocation burst triggers full collections
    that walk the whole interpreter heap (numba, pyarrow, ...) and free nothing, about 15% of the stage.
    Reference counting still frees everything the stage drops."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
