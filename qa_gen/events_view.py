"""A read-only view of one video's events and tracks for question generation.

Everything qa_gen knows about how the events stage encodes a relation lives here (roles, targets, the
``details`` JSON), so aligning with a change in events/ is a change in this one module.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa

from pipeline.schema import EVENTS_SCHEMA, conform

GAZE_GROUP_TYPES = ("mutual_gaze", "joint_attention", "gaze_following", "attention_capture", "gaze_aversion")


@dataclass(frozen=True, order=True)
class Target:
    """What a gaze or gesture is directed at. ``kind``: person (their face) | hands | object | camera |
    location (a spot two people look at that holds no detected thing)."""

    kind: str
    person_id: int = -1  # for person and hands
    label: str = ""  # for object

    @property
    def key(self) -> tuple:
        return (self.kind, self.person_id, self.label)


@dataclass(frozen=True)
class Event:
    """One events-table row with its roles resolved."""

    event_id: int
    source: str
    event_type: str
    start: float
    end: float
    persons: tuple[int, ...]
    initiator: Optional[int]
    target: Optional[Target]
    leader: Optional[int]
    follower: Optional[int]
    lag: Optional[float]
    parents: tuple[int, ...]
    details: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def key(self) -> str:
        """What the event says (type, times, people, roles, target), not its row number: an event that another
        event's coming or going renumbers keeps its key, and the items built on it their ids and wording."""
        target = self.target.key if self.target is not None else None
        return (f"{self.event_type}@{self.start:.3f}-{self.end:.3f}:{','.join(map(str, self.persons))}"
                f":{self.initiator}:{self.leader}:{self.follower}:{target}")

    def overlaps(self, a: float, b: float) -> bool:
        return self.start < b and a < self.end

    @property
    def onset_recorded(self) -> bool:
        """False when the events stage marks the beginning as unobserved (details ``onset_seen``, set on
        looks: no sample just before showing the looker and the target)."""
        return self.details.get("onset_seen", True) is not False

    @property
    def actor(self) -> Optional[int]:
        """The person who does it: gazer, gesturer, leader, or the one who breaks eye contact."""
        if self.initiator is not None:
            return self.initiator
        if self.leader is not None:
            return self.leader
        return self.persons[0] if len(self.persons) == 1 else None


def _target_of(row: dict, details: dict) -> Optional[Target]:
    """Resolve an event's target. events/targets.py encodes: a face as target_type person; someone's
    hands as person + target_label "hands"; an object as object + its label; the camera and a bare
    location (joint attention on a spot) as none + label "camera" / "location". ``details['target_type']``
    carries the tracks' finer kind and is used when present."""
    kind = details.get("target_type") if isinstance(details.get("target_type"), str) else None
    ttype = row.get("target_type")
    label = row.get("target_label") or ""
    pid = row.get("target_person_id")
    if kind == "camera" or label == "camera":
        return Target("camera")
    if kind == "location" or label == "location":
        return Target("location")
    if ttype == "person" and pid is not None:
        return Target("hands" if (kind == "hands" or label == "hands") else "person", int(pid))
    if ttype == "object":
        return Target("object", -1, label or "object")
    return None


def event_from_row(row: Mapping) -> Event:
    """One events-table row (a dict, as ``Table.to_pylist`` gives; missing columns count as empty) with its
    roles resolved. ``details`` may be the JSON text of the table or an already parsed dict."""
    details = row.get("details") or {}
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except json.JSONDecodeError as exc:
            raise ValueError(f"events of video {row.get('video_id')!r}: event {row.get('event_id')} has invalid "
                             f"details JSON ({exc})") from exc
    details = details if isinstance(details, dict) else {}
    lag = row.get("lag_seconds")
    return Event(
        event_id=int(row.get("event_id") or 0),
        source=row.get("source") or "",
        event_type=row["event_type"],
        start=float(row.get("start_time") or 0.0),
        end=float(row.get("end_time") or 0.0),
        persons=tuple(int(p) for p in row.get("persons_involved") or ()),
        initiator=row.get("initiator_id"),
        target=_target_of(row, details),
        leader=row.get("leader_id"),
        follower=row.get("follower_id"),
        lag=None if lag is None else float(lag),
        parents=tuple(int(p) for p in row.get("parent_event_ids") or ()),
        details=details,
    )


def read_events(events: pa.Table) -> list[Event]:
    """Parse an events table (EVENTS_SCHEMA) into Events sorted by (start, event_id)."""
    out = [event_from_row(row) for row in conform(events, EVENTS_SCHEMA).to_pylist()]
    out.sort(key=lambda e: (e.start, e.event_id))
    return out


def clip_to(events: Sequence[Event], duration: float) -> list[Event]:
    """Events with their times cut to the clip [0, duration]: the events stage may close an interval one
    frame after the last sampled frame, and nothing after the clip's end was observed. Events left with no
    time inside the clip are dropped."""
    out = []
    for e in events:
        start, end = max(0.0, e.start), min(float(duration), e.end)
        if end <= start:
            continue
        out.append(e if (start, end) == (e.start, e.end) else replace(e, start=start, end=end))
    return out


def clip_to_shots(events: Sequence[Event], presence: "Presence") -> list[Event]:
    """Events cut at the last sampled frame of the camera shot they begin in: the events stage closes an
    interval one sample after its last frame, and past a hard cut (somewhere before the next shot's first
    frame) the video shows another view, not the same act going on. Events left with no time are dropped."""
    out = []
    for e in events:
        later = [c for c in presence.cuts if c > e.start + _CUT_EPS]
        end = min(e.end, presence.shot_end_before(later[0])) if later else e.end
        if end <= e.start:
            continue
        out.append(e if end == e.end else replace(e, end=end))
    return out


class Presence:
    """Who is visible when: from the tracks table (one row per sampled frame and person)."""

    def __init__(self, times_by_person: dict[int, np.ndarray], tolerance: float,
                 shots: Sequence[tuple[float, float]] = ()) -> None:
        self._times = {p: np.sort(t) for p, t in times_by_person.items() if len(t)}
        self.tolerance = tolerance
        # the camera shots, (first, last) sampled frame each, in time order. The tolerance never reaches
        # across a cut, so someone first seen just after it is not "present" in a window just before it
        self.shots = tuple(sorted((float(a), float(b)) for a, b in shots))

    @property
    def cuts(self) -> tuple[float, ...]:
        """Where each shot after the first begins (its first sampled frame)."""
        return tuple(a for a, _ in self.shots[1:])

    def shot_end_before(self, cut: float) -> float:
        """The last sampled frame of the shot that ends at ``cut``: the cut itself lies somewhere between
        that frame and the next, so nothing after the frame is known to belong to the shot."""
        return max([b for a, b in self.shots if a < cut - _CUT_EPS] or [cut])

    @classmethod
    def from_tracks(cls, tracks: pa.Table, tolerance: float = 0.5) -> "Presence":
        """Everyone the tracks hold, but a track that never shows a head (no head box on any of its rows): a
        box that nothing in it ever confirms as someone (a potted plant at the edge of a zoomed shot was boxed
        on every frame) is no one a question can name, as an answer, an option or a bystander who "takes no
        part"; nor is a body whose head stays out of view, whose looks nobody can check."""
        if tracks.num_rows == 0:
            return cls({}, tolerance)
        pids = np.asarray(tracks.column("person_id").to_numpy(zero_copy_only=False), dtype=int)
        times = np.asarray(tracks.column("t").to_numpy(zero_copy_only=False), dtype=float)
        people = np.unique(pids)
        if "head_bbox" in tracks.column_names:
            heads = tracks.column("head_bbox").to_pylist()
            with_head = {int(p) for p, h in zip(pids, heads)
                         if h is not None and len(h) == 4 and all(v is not None and np.isfinite(v) for v in h)}
            people = [p for p in people if int(p) in with_head]
        return cls({int(p): times[pids == p] for p in people}, tolerance, shot_bounds(tracks))

    @classmethod
    def from_events(cls, events: Sequence[Event], duration: float, step: float) -> "Presence":
        """Fallback when no tracks are given: everyone an event names is taken as present throughout."""
        grid = np.arange(0.0, duration + 1e-9, step)
        people = sorted({p for e in events for p in _people_of(e)})
        return cls({p: grid for p in people}, step)

    @property
    def persons(self) -> list[int]:
        return sorted(self._times)

    @property
    def last_time(self) -> float:
        return max((float(t[-1]) for t in self._times.values()), default=0.0)

    def present(self, person: int, a: float, b: float) -> bool:
        """Is ``person`` seen at least once within [a, b] (widened by the sampling tolerance)?"""
        t = self._times.get(int(person))
        if t is None:
            return False
        lo, hi = a - self.tolerance, b + self.tolerance
        before = [c for c in self.cuts if c <= a + _CUT_EPS]
        if before:
            lo = max(lo, before[-1])  # not before the shot that holds a
        after = [c for c in self.cuts if c > max(a, b - 2 * _CUT_EPS)]
        if after:
            hi = min(hi, after[0] - _CUT_EPS)  # not into the shot after the one that holds b
        i = np.searchsorted(t, lo, side="left")
        return bool(i < len(t) and t[i] <= hi)

    def samples_from(self, person: int, t: float) -> int:
        """How many of ``person``'s sampled frames lie at or after ``t`` within the shot that holds ``t``."""
        times = self._times.get(int(person))
        if times is None:
            return 0
        later = [c for c in self.cuts if c > t + _CUT_EPS]
        end = later[0] - _CUT_EPS if later else np.inf
        return int(np.count_nonzero((times >= t - _CUT_EPS) & (times < end)))

    def ever_together(self, p: int, q: int) -> bool:
        """Whether ``p`` and ``q`` are seen on one sampled frame at least once. Two ids never seen together may be
        one person the tracker lost and found again under a new id; True for anyone not in the tracks."""
        a, b = self._times.get(int(p)), self._times.get(int(q))
        if a is None or b is None:
            return True
        i = np.clip(np.searchsorted(b, a), 0, len(b) - 1)
        j = np.clip(i - 1, 0, len(b) - 1)
        return bool(np.any(np.minimum(np.abs(b[i] - a), np.abs(b[j] - a)) <= _CUT_EPS))

    def present_in(self, a: float, b: float, exclude: Iterable[int] = ()) -> list[int]:
        skip = set(exclude)
        return [p for p in self.persons if p not in skip and self.present(p, a, b)]


_CUT_EPS = 1e-6


def shot_bounds(tracks: Optional[pa.Table]) -> list[tuple[float, float]]:
    """Each camera shot's first and last sampled frame with someone tracked (column ``shot_id`` of the
    tracks table), in time order; empty when there is no shot column."""
    if tracks is None or tracks.num_rows == 0 or "shot_id" not in tracks.column_names:
        return []
    times = np.asarray(tracks.column("t").to_numpy(zero_copy_only=False), dtype=float)
    shots = tracks.column("shot_id").to_pylist()
    bounds: dict = {}
    for t, shot in zip(times, shots):
        if shot is not None:
            lo, hi = bounds.get(shot, (float(t), float(t)))
            bounds[shot] = (min(lo, float(t)), max(hi, float(t)))
    return sorted(bounds.values())


def _people_of(event: Event) -> set[int]:
    people = set(event.persons)
    for pid in (event.initiator, event.leader, event.follower):
        if pid is not None:
            people.add(int(pid))
    if event.target is not None and event.target.person_id >= 0:
        people.add(event.target.person_id)
    return people


def people_of(event: Event) -> set[int]:
    """Every person an event names in any role."""
    return _people_of(event)
