"""The in-memory event record and its conversion to the events table (pipeline.schema.EVENTS_SCHEMA)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from events.arrays import TrackArrays
from pipeline.schema import EVENTS_SCHEMA, empty_table


@dataclass
class Event:
    """One detected event. Frames are indices into the video's TrackArrays frame axis (not frame_idx);
    ``parents`` are positions of parent events in the list the detectors build (remapped to event_id)."""

    source: str
    event_type: str
    start: int
    end: int
    start_time: float
    end_time: float
    persons: tuple[int, ...]
    confidence: float
    initiator: Optional[int] = None
    target_type: Optional[str] = None  # person | object | none
    target_person: Optional[int] = None
    target_label: Optional[str] = None
    leader: Optional[int] = None
    follower: Optional[int] = None
    lag: Optional[float] = None
    details: dict[str, Any] = field(default_factory=dict)
    parents: tuple[int, ...] = ()


def span(arrays: TrackArrays, start: int, end: int) -> tuple[float, float]:
    """Times of a frame interval: from the first frame's time to the end of the last frame's stretch of time
    (one sampling step after it, bounded by the next sample and the clip's end: arrays.frame_end_times)."""
    return float(arrays.times[start]), float(arrays.end_times[end])


def spans(arrays: TrackArrays, starts: np.ndarray, ends: np.ndarray,
          involved: Optional[np.ndarray] = None) -> tuple[list[float], list[float]]:
    """:func:`span` of many frame intervals at once, as lists of Python floats. ``involved`` (N, P) bool,
    optional: the people of each interval. When one of them is gone at the next sampled frame of the
    same segment, the interval ends halfway there: they were last seen at its last frame, so the stretch
    up to the next sample would claim time in which they have left (tvhid_highfive_0018's B walks out)."""
    ends = np.asarray(ends, np.int64)
    end_times = arrays.end_times[ends]
    if involved is not None and len(ends):
        following = np.minimum(ends + 1, arrays.n_frames - 1)
        continues = (ends + 1 < arrays.n_frames) & (arrays.segment[following] == arrays.segment[ends])
        gone = (np.asarray(involved, bool) & ~arrays.present[:, following].T).any(axis=1) & continues
        end_times = np.where(gone, (arrays.times[ends] + end_times) / 2, end_times)
    return arrays.times[starts].tolist(), end_times.tolist()


_DETAILS_JSON = json.JSONEncoder(sort_keys=True)  # same text as json.dumps(..., sort_keys=True), built once


def round_many(values: np.ndarray, digits: int) -> list[float]:
    """``[round(v, digits) for v in values]`` (Python's correctly rounded round), vectorised.

    rint(v x 10^digits) / 10^digits is the same float whenever the scaled value is an exact integer
    candidate (|v x 10^digits| < 2^52) and not within its rounding error of a .5 tie; the few values
    that are not go through round() itself."""
    values = np.asarray(values, np.float64)
    scale = 10.0**digits
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = values * scale
        out = np.rint(scaled) / scale
        tie_distance = np.abs(scaled - np.floor(scaled) - 0.5)
        unsure = ~(np.abs(scaled) < 2.0**52) | ~(tie_distance > np.abs(scaled) * 2.0**-50 + 1e-12)
    if unsure.any():
        out[unsure] = [round(v, digits) for v in values[unsure].tolist()]
    return out.tolist()


def events_to_table(arrays: TrackArrays, events: list[Event]) -> pa.Table:
    """Sort events by (start_time, event_type, persons, ...), number them 0..n-1 and build the table."""
    if not events:
        return empty_table(EVENTS_SCHEMA)
    details = [_DETAILS_JSON.encode(e.details) for e in events]
    # order: start time (to 1 ns), type, persons, end time, initiator, target person, target label, details
    start_keys = round_many([e.start_time for e in events], 9)
    end_keys = round_many([e.end_time for e in events], 9)
    keys = [
        (t0, e.event_type, e.persons, t1, -1 if e.initiator is None else e.initiator,
         -1 if e.target_person is None else e.target_person, e.target_label or "", d)
        for e, d, t0, t1 in zip(events, details, start_keys, end_keys)
    ]
    order = sorted(range(len(events)), key=keys.__getitem__)
    new_id = [0] * len(events)
    for position, i in enumerate(order):
        new_id[i] = position
    ordered = [events[i] for i in order]
    starts = np.array([e.start for e in ordered], np.int64)
    ends = np.array([e.end for e in ordered], np.int64)

    def opt(values: list, kind: pa.DataType) -> pa.Array:
        return pa.array(values, type=kind)

    columns = {
        "video_id": pa.array([arrays.video_id] * len(ordered), pa.string()),
        "event_id": pa.array(np.arange(len(ordered), dtype=np.int64)),
        "source": opt([e.source for e in ordered], pa.string()),
        "event_type": opt([e.event_type for e in ordered], pa.string()),
        "start_time": pa.array(np.array([e.start_time for e in ordered], np.float64)),
        "end_time": pa.array(np.array([e.end_time for e in ordered], np.float64)),
        "start_frame": pa.array(arrays.frame_idx[starts].astype(np.int32)),
        "end_frame": pa.array(arrays.frame_idx[ends].astype(np.int32)),
        "shot_id": pa.array(arrays.shot_id[starts].astype(np.int32)),
        "persons_involved": opt([list(e.persons) for e in ordered], pa.list_(pa.int32())),
        "initiator_id": opt([e.initiator for e in ordered], pa.int32()),
        "target_type": opt([e.target_type for e in ordered], pa.string()),
        "target_person_id": opt([e.target_person for e in ordered], pa.int32()),
        "target_label": opt([e.target_label for e in ordered], pa.string()),
        "leader_id": opt([e.leader for e in ordered], pa.int32()),
        "follower_id": opt([e.follower for e in ordered], pa.int32()),
        "lag_seconds": opt([e.lag for e in ordered], pa.float32()),
        "confidence": pa.array(np.array([e.confidence for e in ordered], np.float32)),
        "parent_event_ids": opt([sorted([new_id[p] for p in e.parents]) for e in ordered], pa.list_(pa.int64())),
        "details": opt([details[i] for i in order], pa.string()),
    }
    return pa.Table.from_pydict(columns, schema=EVENTS_SCHEMA)
