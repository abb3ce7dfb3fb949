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

    def sort_key(self, details_json: str) -> tuple:
        return (
            round(self.start_time, 9), self.event_type, self.persons, round(self.end_time, 9),
            -1 if self.initiator is None else self.initiator,
            -1 if self.target_person is None else self.target_person,
            self.target_label or "", details_json,
        )


def span(arrays: TrackArrays, start: int, end: int) -> tuple[float, float]:
    """Times of a frame interval: from the first frame's time to one sampling step after the last frame
    (each sampled frame stands for the time until the next sample)."""
    return float(arrays.times[start]), float(arrays.times[end] + 1.0 / arrays.fps)


def events_to_table(arrays: TrackArrays, events: list[Event]) -> pa.Table:
    """Sort events by (start_time, event_type, persons, ...), number them 0..n-1 and build the table."""
    if not events:
        return empty_table(EVENTS_SCHEMA)
    details = [json.dumps(e.details, sort_keys=True) for e in events]
    order = sorted(range(len(events)), key=lambda i: events[i].sort_key(details[i]))
    new_id = np.empty(len(events), np.int64)
    new_id[order] = np.arange(len(events))
    ordered = [events[i] for i in order]

    def opt(values: list, kind: pa.DataType) -> pa.Array:
        return pa.array(values, type=kind)

    columns = {
        "video_id": pa.array([arrays.video_id] * len(ordered), pa.string()),
        "event_id": pa.array(np.arange(len(ordered), dtype=np.int64)),
        "source": opt([e.source for e in ordered], pa.string()),
        "event_type": opt([e.event_type for e in ordered], pa.string()),
        "start_time": pa.array(np.array([e.start_time for e in ordered], np.float64)),
        "end_time": pa.array(np.array([e.end_time for e in ordered], np.float64)),
        "start_frame": pa.array(arrays.frame_idx[[e.start for e in ordered]].astype(np.int32)),
        "end_frame": pa.array(arrays.frame_idx[[e.end for e in ordered]].astype(np.int32)),
        "shot_id": pa.array(arrays.shot_id[[e.start for e in ordered]].astype(np.int32)),
        "persons_involved": opt([list(e.persons) for e in ordered], pa.list_(pa.int32())),
        "initiator_id": opt([e.initiator for e in ordered], pa.int32()),
        "target_type": opt([e.target_type for e in ordered], pa.string()),
        "target_person_id": opt([e.target_person for e in ordered], pa.int32()),
        "target_label": opt([e.target_label for e in ordered], pa.string()),
        "leader_id": opt([e.leader for e in ordered], pa.int32()),
        "follower_id": opt([e.follower for e in ordered], pa.int32()),
        "lag_seconds": opt([e.lag for e in ordered], pa.float32()),
        "confidence": pa.array(np.array([e.confidence for e in ordered], np.float32)),
        "parent_event_ids": opt([sorted(int(new_id[p]) for p in e.parents) for e in ordered], pa.list_(pa.int64())),
        "details": opt([details[i] for i in order], pa.string()),
    }
    return pa.Table.from_pydict(columns, schema=EVENTS_SCHEMA)
