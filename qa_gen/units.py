"""QA units: GRASP-style clips of whole camera shots, planned per video.

GRASP cut its long sources into 45-120 s clips at scene boundaries and counts every question's times from
its clip's start. A unit here is the same thing: a run of whole shots lasting between ``unit_min_seconds``
and ``unit_max_seconds``; QA is generated per unit and its times count from the unit start, while the
events table keeps video time.

- Shots tile the video: a shot runs from its first sampled frame to the next shot's first sampled frame
  (the last one to the end of the video).
- A shot longer than the maximum is split at its quietest point: the instant, on the QA time grid, with the
  fewest events in progress, then the fewest people in view, then nearest the middle of where a cut may go
  (both parts at least the minimum long when the bounds allow it). Parts longer than the maximum are split
  again. Events are never cut by a shot change, so only such a split can cut one; an item that cites a
  cut event is dropped (the clip shows only part of it), while the cut event still counts, clipped to
  each unit, when distractors are checked to be false.
- Shots (and parts) are then grouped into the fewest units that keep every unit within the bounds. Units
  never exceed the maximum; a unit is shorter than the minimum only when the shots leave no choice (a
  video shorter than the minimum is one unit; a short shot boxed in by long ones stays on its own).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_EPS = 1e-6


@dataclass(frozen=True)
class Shot:
    shot_id: int
    start: float
    end: float


@dataclass(frozen=True)
class Unit:
    unit_id: int  # 0-based, in time order within the video
    start: float  # video time
    end: float
    shot_ids: tuple[int, ...]  # the shots it covers (a split long shot appears in several units)

    @property
    def duration(self) -> float:
        return self.end - self.start

    def to_dict(self) -> dict:
        return {"unit_id": self.unit_id, "start": self.start, "end": self.end, "shot_ids": list(self.shot_ids)}


@dataclass(frozen=True)
class Activity:
    """What happens when, for choosing the quietest cut: event intervals and the times people are seen
    (one entry per tracks row)."""

    event_spans: np.ndarray  # (n, 2) start, end in video time
    person_times: np.ndarray  # (m,)

    @classmethod
    def of(cls, events: Optional[pa.Table], tracks: Optional[pa.Table]) -> "Activity":
        spans = np.zeros((0, 2))
        if events is not None and events.num_rows:
            spans = np.column_stack([_floats(events, "start_time"), _floats(events, "end_time")])
        times = _floats(tracks, "t") if tracks is not None and tracks.num_rows else np.zeros(0)
        return cls(spans, np.sort(times))

    def level(self, t: float, half_step: float) -> tuple[int, int]:
        """(events in progress across ``t``, tracks rows within half a step of ``t``)."""
        spans = self.event_spans
        events = int(np.count_nonzero((spans[:, 0] < t - _EPS) & (spans[:, 1] > t + _EPS))) if len(spans) else 0
        lo = np.searchsorted(self.person_times, t - half_step, side="left")
        hi = np.searchsorted(self.person_times, t + half_step, side="right")
        return events, int(hi - lo)


def _floats(table: pa.Table, column: str) -> np.ndarray:
    return np.asarray(table.column(column).to_numpy(zero_copy_only=False), dtype=float)


def shots_from_frames(times: Sequence[float], shot_ids: Sequence[int], duration: float) -> list[Shot]:
    """Shot spans from sampled frames (time and shot_id of each, in time order; frames need not cover every
    shot's every instant: a shot ends where the next listed one begins). The first shot starts at 0 and
    the last ends at ``duration`` (or just after its last frame, if later)."""
    times = np.asarray(times, dtype=float)
    shot_ids = np.asarray(shot_ids, dtype=np.int64)
    if len(times) == 0:
        return [Shot(0, 0.0, float(duration))] if duration > 0 else []
    order = np.argsort(times, kind="stable")
    times, shot_ids = times[order], shot_ids[order]
    firsts = np.flatnonzero(np.concatenate([[True], shot_ids[1:] != shot_ids[:-1]]))
    starts = times[firsts].copy()
    starts[0] = 0.0
    end = max(float(duration), float(times[-1]) + 1e-3)  # units are half-open: keep the last frame inside
    ends = np.append(starts[1:], end)
    return [Shot(int(shot_ids[i]), float(a), float(b)) for i, a, b in zip(firsts, starts, ends) if b > a + _EPS]


def shots_from_tracks(tracks: Optional[pa.Table], duration: float) -> list[Shot]:
    """Approximate shots when only the tracks table is at hand: a shot starts at its first tracked frame."""
    if tracks is None or tracks.num_rows == 0:
        return shots_from_frames([], [], duration)
    ordered = tracks.select(["t", "shot_id"]).sort_by([("t", "ascending")])
    return shots_from_frames(_floats(ordered, "t"), ordered.column("shot_id").to_pylist(), duration)


def plan_units(shots: Sequence[Shot], min_seconds: float, max_seconds: float, step: float,
               activity: Optional[Activity] = None) -> list[Unit]:
    """The video's units, in time order, tiling the span of ``shots`` (see the module docstring)."""
    if not 0 < min_seconds <= max_seconds:
        raise ValueError(f"qa unit bounds must satisfy 0 < unit_min_seconds <= unit_max_seconds, "
                         f"got {min_seconds} and {max_seconds}")
    if step <= 0:
        raise ValueError(f"step must be positive, got {step}")
    activity = activity or Activity(np.zeros((0, 2)), np.zeros(0))
    pieces: list[Shot] = []
    for shot in sorted(shots, key=lambda s: s.start):
        pieces.extend(_split_long(shot, min_seconds, max_seconds, step, activity))
    if not pieces:
        return []
    groups = _group(np.array([p.end - p.start for p in pieces]), min_seconds, max_seconds)
    units = []
    for unit_id, (i, j) in enumerate(groups):
        shot_ids = tuple(dict.fromkeys(p.shot_id for p in pieces[i:j]))
        units.append(Unit(unit_id, pieces[i].start, pieces[j - 1].end, shot_ids))
    return units


def _split_long(shot: Shot, min_s: float, max_s: float, step: float, activity: Activity) -> list[Shot]:
    a, b = shot.start, shot.end
    if b - a <= max_s + _EPS:
        return [shot]
    lo, hi = a + min_s, b - min_s
    if lo > hi:  # the bounds are too tight for two parts of the minimum: keep both within the maximum
        lo, hi = b - max_s, a + max_s
    grid = a + step * np.arange(np.ceil((lo - a) / step - _EPS), np.floor((hi - a) / step + _EPS) + 1)
    middle = (lo + hi) / 2
    candidates = [float(t) for t in grid] or [middle]
    cut = min(candidates, key=lambda t: (*activity.level(t, step / 2), abs(t - middle), t))
    return (_split_long(Shot(shot.shot_id, a, cut), min_s, max_s, step, activity)
            + _split_long(Shot(shot.shot_id, cut, b), min_s, max_s, step, activity))


def _group(durations: np.ndarray, min_s: float, max_s: float) -> list[tuple[int, int]]:
    """Consecutive runs [i, j) of pieces: fewest runs shorter than ``min_s``, then fewest seconds short,
    then fewest runs; no run longer than ``max_s`` unless it is a single piece."""
    n = len(durations)
    edges = np.concatenate([[0.0], np.cumsum(durations)])
    best: list[Optional[tuple]] = [None] * (n + 1)
    best[0] = (0, 0.0, 0)
    back = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j - 1, -1, -1):
            length = edges[j] - edges[i]
            if length > max_s + _EPS and i < j - 1:
                break
            short = max(0.0, min_s - length) if length < min_s - _EPS else 0.0
            prev = best[i]
            cost = (prev[0] + (short > 0), round(prev[1] + short, 6), prev[2] + 1)
            if best[j] is None or cost < best[j]:
                best[j], back[j] = cost, i
    runs = []
    j = n
    while j > 0:
        runs.append((back[j], j))
        j = back[j]
    return runs[::-1]


def unit_of_times(units: Sequence[Unit], times: np.ndarray) -> np.ndarray:
    """Index into ``units`` of each video time (units are half-open, the last one closed); -1 outside."""
    times = np.asarray(times, dtype=float)
    if not units:
        return np.full(len(times), -1, np.int64)
    starts = np.array([u.start for u in units])
    index = np.searchsorted(starts, times + _EPS, side="right") - 1
    index[(index < 0) | (times > units[-1].end + _EPS)] = -1
    return index


def unit_view(events: pa.Table, tracks: Optional[pa.Table], unit: Unit, tolerance: float,
              last: bool) -> tuple[pa.Table, Optional[pa.Table], set[int]]:
    """One unit's events and tracks with times counted from the unit start, and the ids of events that
    cross a boundary with a neighbouring unit. Those are kept, clipped to the unit, so the truth checks
    that keep distractors false still see them; the caller drops any item that cites one (it would ask
    about something the clip shows only in part). The video's own start and end are not unit boundaries:
    nothing is clipped there. Tracks rows belong to the unit whose half-open span holds their time (the
    ``last`` unit also keeps rows at or after its end)."""
    start, end = unit.start, unit.end
    first = unit.unit_id == 0
    overlap = pc.greater(events.column("end_time"), start + _EPS) if not first else None
    if not last:
        before_end = pc.less(events.column("start_time"), end - _EPS)
        overlap = before_end if overlap is None else pc.and_(overlap, before_end)
    inside = events if overlap is None else events.filter(overlap)
    crossing_ids: set[int] = set()
    for is_edge, column, beyond in ((first, "start_time", lambda c: pc.less(c, start - tolerance)),
                                    (last, "end_time", lambda c: pc.greater(c, end + tolerance))):
        if not is_edge:
            crossing_ids |= set(inside.filter(beyond(inside.column(column))).column("event_id").to_pylist())
    for name in ("start_time", "end_time"):
        shifted = pc.subtract(inside.column(name), start)
        if not first:
            shifted = pc.max_element_wise(shifted, 0.0)
        if not last:
            shifted = pc.min_element_wise(shifted, end - start)
        inside = inside.set_column(inside.schema.get_field_index(name), name, shifted)
    return inside, unit_rows(tracks, unit, last), crossing_ids


def unit_rows(table: Optional[pa.Table], unit: Unit, last: bool) -> Optional[pa.Table]:
    """The rows of a per-frame table (tracks, objects: a ``t`` column) inside ``unit``'s half-open span (the
    ``last`` unit also keeps rows at or after its end), with ``t`` counted from the unit start."""
    if table is None:
        return None
    t = table.column("t")
    keep = pc.greater_equal(t, unit.start - _EPS)
    if not last:
        keep = pc.and_(keep, pc.less(t, unit.end - _EPS))
    inside = table.filter(keep)
    return inside.set_column(inside.schema.get_field_index("t"), "t", pc.subtract(inside.column("t"), unit.start))
