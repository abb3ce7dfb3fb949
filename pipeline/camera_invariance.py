"""How far a run's output holds under a camera edit of its video (DESIGN.md §10: a mirrored or half-resolution
copy of a clip must give the same people, the same gaze targets and the same events; so must a digital zoom,
for the people it keeps in view).

Two runs of one clip, the original and an edit of it sampled at the same instants, are compared frame by
frame: the people of each sampled frame are matched by head centre (x -> 1 - x for a mirror; for a zoom, the
edit's frame mapped back onto the part of the original it shows, ``window``), then each
(frame, person) row agrees when its gaze_target_type is the same and, for a person or hands target, the
target is the matched person. A person seen in one run and not the other disagrees. A disagreement is one of
three kinds, counted apart so that a change can be judged by which it trades: a contradiction (both runs name a
definite target, person / hands / object / camera / elsewhere, and they differ: one of them is wrong), an
abstention (one run says unknown where the other names a target: no claim is made, none is contradicted) and a
person seen on one side only. Each original event is found again when the edit has one of the same type, with
the matched persons and target, overlapping in time. A zoom is scored on what it keeps in view (``in_view``):
rows of people whose head lies outside the part it shows (or at its edge), rows that look at a person, hands or
thing outside it, and events whose people or target are outside it while they last count on neither side.
``benchmarks/bench_invariance.py`` prints these per clip; tests/test_camera_invariance.py holds the floors.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pyarrow as pa
from scipy.optimize import linear_sum_assignment

from pipeline.accuracy import MATCH_MAX_DISTANCE, head_centre
from qa_gen.events_view import Event, read_events

PERSON_TARGETS = ("person", "hands")  # target types whose gaze_target_id is a person_id
FULL_FRAME = (0.0, 0.0, 1.0, 1.0)  # the part of the original an edit shows (normalised xyxy): all of it


@dataclass(frozen=True)
class RowComparison:
    """One (sampled frame, person) of either run and how the other run saw it."""

    frame_idx: int
    t: float
    original_id: Optional[int]  # None: only the edit has this person here
    edited_id: Optional[int]  # None: only the original has this person here
    original: Optional[dict]  # gaze columns of the row (gaze_target_type, gaze_target_id, gaze_source, ...)
    edited: Optional[dict]
    agrees: bool
    direction_change_deg: Optional[float] = None  # angle between the two gaze_dirs (the edit's mirrored back)

    @property
    def kind(self) -> str:
        """agrees | contradiction (two different definite targets) | abstention (one side unknown) |
        unmatched (the person is seen on one side only)."""
        if self.agrees:
            return "agrees"
        if self.original is None or self.edited is None:
            return "unmatched"
        unknown = [(row.get("gaze_target_type") or "unknown") == "unknown" for row in (self.original, self.edited)]
        return "abstention" if any(unknown) else "contradiction"

    @property
    def why(self) -> str:
        if self.original is None:
            return "only in the edit"
        if self.edited is None:
            return "missing in the edit"
        if self.agrees:
            return "agrees"
        return f"{_target_text(self.original)} -> {_target_text(self.edited)}"


@dataclass
class InvarianceScore:
    """Agreement of one clip's edited run with its original run."""

    video_id: str
    edit: str
    rows: list[RowComparison]
    events_original: int
    events_found: list[Event]  # original events the edit has too
    events_missed: list[Event]  # original events the edit does not have
    events_extra: list[Event]  # edited events the original does not have
    id_map: dict[int, int] = field(default_factory=dict)  # original person_id -> edited person_id (majority)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_agree(self) -> int:
        return sum(r.agrees for r in self.rows)

    @property
    def n_matched(self) -> int:
        return sum(r.original is not None and r.edited is not None for r in self.rows)

    def n_kind(self, kind: str) -> int:
        return sum(r.kind == kind for r in self.rows)

    @property
    def n_contradictions(self) -> int:
        return self.n_kind("contradiction")

    @property
    def n_abstentions(self) -> int:
        return self.n_kind("abstention")

    @property
    def agreement(self) -> float:
        """Share of (frame, person) rows of either run that the other run reproduces."""
        return self.n_agree / self.n_rows if self.rows else math.nan

    @property
    def events_found_share(self) -> float:
        return len(self.events_found) / self.events_original if self.events_original else math.nan

    def disagreements(self) -> list[RowComparison]:
        return [r for r in self.rows if not r.agrees]


_GAZE_COLUMNS = ("gaze_target_type", "gaze_target_id", "gaze_source", "gaze_conf", "gaze_dir", "gaze_point",
                 "head_bbox", "bbox")


def _target_text(row: dict) -> str:
    kind = row.get("gaze_target_type") or "unknown"
    target = row.get("gaze_target_id")
    return f"{kind}:{target}" if kind in PERSON_TARGETS and target is not None else kind


def _head_x_y(row: dict, mirrored: bool, window: tuple[float, float, float, float] = FULL_FRAME
              ) -> Optional[tuple[float, float]]:
    """The row's head centre in the original frame: an edited row's mirrored back, or mapped from the zoomed
    frame onto the ``window`` of the original it shows."""
    centre = head_centre(row)
    if centre is None:
        return None
    x0, y0, x1, y1 = window
    x, y = x0 + centre[0] * (x1 - x0), y0 + centre[1] * (y1 - y0)
    return (1.0 - x, y) if mirrored else (x, y)


# a zoom's view ends at the window's edge, where a person is half in, half out: the rows of people whose head
# centre lies within this much of that edge (frame units of the original) are counted on neither side
VIEW_EDGE_MARGIN = 0.05


def in_window(point: Optional[tuple[float, float]], window: tuple[float, float, float, float]) -> bool:
    """Whether a point of the original frame lies inside the part an edit shows, clear of its edge by
    ``VIEW_EDGE_MARGIN``; always for the full frame, and for no point (nothing to place)."""
    if window == FULL_FRAME or point is None:
        return True
    x0, y0, x1, y1 = window
    m = VIEW_EDGE_MARGIN
    return x0 + m <= point[0] <= x1 - m and y0 + m <= point[1] <= y1 - m


def in_view(row: dict, window: tuple[float, float, float, float],
            object_boxes: Optional[dict[tuple[int, int], list]] = None) -> bool:
    """Whether an original row's head lies in the part of the frame an edit shows (``in_window``), and so does
    what it looks at: its gaze point for a person or hands target, the object's box centre for an object
    (``object_boxes``, (frame_idx, object_id) -> normalised xyxy; a look credited to a pointed-at thing keeps the
    measured gaze point)."""
    if window == FULL_FRAME:
        return True
    if not in_window(head_centre(row), window):
        return False
    kind = row.get("gaze_target_type") or "unknown"
    point = row.get("gaze_point")
    if kind == "object" and object_boxes is not None:
        target = row.get("gaze_target_id")
        box = None if target is None else object_boxes.get((int(row.get("frame_idx", -1)), int(target)))
        point = None if box is None else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    if kind not in (*PERSON_TARGETS, "object") or point is None or len(point) < 2 or None in point[:2]:
        return True
    return in_window(point, window)


def match_people(original: pa.Table, edited: pa.Table, mirrored: bool,
                 max_distance: float = MATCH_MAX_DISTANCE,
                 window: tuple[float, float, float, float] = FULL_FRAME) -> dict[int, dict[int, int]]:
    """Per sampled frame_idx: original person_id -> edited person_id, matched by head centre (the edited
    one mirrored back when ``mirrored``, mapped onto ``window`` of the original for a zoom), one to one, no
    farther apart than ``max_distance`` (frame units)."""
    by_frame: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    for side, table, flip in ((0, original, False), (1, edited, mirrored)):
        columns = [c for c in ("frame_idx", "person_id", "head_bbox", "bbox") if c in table.column_names]
        for row in table.select(columns).to_pylist():
            centre = _head_x_y(row, flip, window if side == 1 else FULL_FRAME)
            if centre is not None:
                by_frame[int(row["frame_idx"])][side].append((int(row["person_id"]), centre))
    matches: dict[int, dict[int, int]] = {}
    for frame_idx, (ours, theirs) in by_frame.items():
        matches[frame_idx] = {}
        if not ours or not theirs:
            continue
        cost = np.array([[math.dist(a, b) for _, b in theirs] for _, a in ours])
        # a pair too far apart to match costs the same however far: otherwise the assignment trades a close
        # pair for two farther ones to shorten a pair that is never matched anyway (a person in one run only)
        capped = np.where(cost <= max_distance, cost, 2.0 * max_distance * (1 + min(cost.shape)))
        for i, j in zip(*linear_sum_assignment(capped)):
            if cost[i, j] <= max_distance:
                matches[frame_idx][ours[i][0]] = theirs[j][0]
    return matches


def majority_map(matches: dict[int, dict[int, int]]) -> dict[int, int]:
    """original person_id -> the edited person_id it was matched to most often."""
    votes: dict[int, Counter] = defaultdict(Counter)
    for frame in matches.values():
        for ours, theirs in frame.items():
            votes[ours][theirs] += 1
    return {ours: c.most_common(1)[0][0] for ours, c in votes.items()}


def _direction_change(a: Optional[list], b: Optional[list], mirrored: bool) -> Optional[float]:
    if a is None or b is None or len(a) < 3 or len(b) < 3:
        return None
    u, v = np.asarray(a, float), np.asarray(b, float)
    if mirrored:
        v = v * np.array([-1.0, 1.0, 1.0])
    norm = np.linalg.norm(u) * np.linalg.norm(v)
    if not np.isfinite(norm) or norm == 0:
        return None
    return float(np.degrees(np.arccos(np.clip(u @ v / norm, -1.0, 1.0))))


def compare_rows(original: pa.Table, edited: pa.Table, mirrored: bool,
                 matches: dict[int, dict[int, int]], id_map: dict[int, int],
                 window: tuple[float, float, float, float] = FULL_FRAME,
                 object_boxes: Optional[dict[tuple[int, int], list]] = None) -> list[RowComparison]:
    """Every (frame, person) row of either run, paired with its match and judged (see the module doc); for a
    zoom (``window``), rows out of its view (``in_view``, with the original's ``object_boxes``) and their matches
    are left out."""
    columns = ["frame_idx", "t", "person_id", *(c for c in _GAZE_COLUMNS if c in original.column_names)]
    rows_of = [{(int(r["frame_idx"]), int(r["person_id"])): r for r in table.select(columns).to_pylist()}
               for table in (original, edited)]
    out = []
    seen_edited = set()
    for (frame_idx, pid), row in sorted(rows_of[0].items()):
        frame_map = matches.get(frame_idx, {})
        theirs = frame_map.get(pid)
        other = rows_of[1].get((frame_idx, theirs)) if theirs is not None else None
        if not in_view(row, window, object_boxes=object_boxes):
            seen_edited.add((frame_idx, theirs))
            continue
        if other is None:
            out.append(RowComparison(frame_idx, float(row["t"]), pid, None, row, None, False))
            continue
        seen_edited.add((frame_idx, theirs))
        kind, their_kind = row.get("gaze_target_type") or "unknown", other.get("gaze_target_type") or "unknown"
        agrees = kind == their_kind
        if agrees and kind in PERSON_TARGETS:
            target = row.get("gaze_target_id")
            expected = None if target is None else frame_map.get(int(target), id_map.get(int(target)))
            agrees = expected is not None and other.get("gaze_target_id") == expected
        out.append(RowComparison(frame_idx, float(row["t"]), pid, theirs, row, other, agrees,
                                 _direction_change(row.get("gaze_dir"), other.get("gaze_dir"), mirrored)))
    for (frame_idx, pid), row in sorted(rows_of[1].items()):
        if (frame_idx, pid) not in seen_edited and in_window(_head_x_y(row, mirrored, window), window):
            out.append(RowComparison(frame_idx, float(row["t"]), None, pid, None, row, False))
    return sorted(out, key=lambda r: (r.frame_idx, r.original_id if r.original_id is not None else 1 << 30))


def _event_key(event: Event, id_map: Optional[dict[int, int]]) -> Optional[tuple]:
    """What must be equal for two events to be the same one: type, persons, target (ids mapped through
    ``id_map`` when given; None when one of them has no counterpart)."""
    def mapped(pid: Optional[int]) -> Optional[int]:
        if pid is None or pid < 0 or id_map is None:
            return pid
        return id_map.get(int(pid), -1)

    persons = tuple(sorted(mapped(p) for p in event.persons))
    target = None
    if event.target is not None:
        target = (event.target.kind, mapped(event.target.person_id) if event.target.kind in PERSON_TARGETS else -1,
                  event.target.label)
    if -1 in persons or (target is not None and target[1] == -1 and event.target.kind in PERSON_TARGETS):
        return None
    return (event.event_type, persons, mapped(event.initiator), target)


def _found(event: Event, key: Optional[tuple], candidates: dict[tuple, list[Event]], tolerance: float) -> bool:
    return key is not None and any(e.start < event.end + tolerance and event.start < e.end + tolerance
                                   for e in candidates.get(key, ()))


def compare_events(original: list[Event], edited: list[Event], id_map: dict[int, int],
                   tolerance: float) -> tuple[list[Event], list[Event], list[Event]]:
    """(found, missed, extra): original events the edit has (same type, mapped persons, initiator and
    target, times overlapping within ``tolerance`` s), those it has not, and edited events with no original."""
    edited_by_key: dict[tuple, list[Event]] = defaultdict(list)
    for e in edited:
        edited_by_key[_event_key(e, None)].append(e)
    found, missed = [], []
    for e in original:
        (found if _found(e, _event_key(e, id_map), edited_by_key, tolerance) else missed).append(e)
    back = {theirs: ours for ours, theirs in id_map.items()}
    original_by_key: dict[tuple, list[Event]] = defaultdict(list)
    for e in original:
        original_by_key[_event_key(e, None)].append(e)
    extra = [e for e in edited if not _found(e, _event_key(e, back), original_by_key, tolerance)]
    return found, missed, extra


def _out_of_view_times(tracks: pa.Table, window: tuple[float, float, float, float],
                       objects: Optional[pa.Table] = None) -> dict[tuple[str, int], list[float]]:
    """("person", person_id) / ("object", object_id) -> the sampled times at which that person's head, or that
    object's box centre, lies outside ``window`` (clear of its edge, ``in_window``)."""
    columns = [c for c in ("t", "person_id", "head_bbox", "bbox") if c in tracks.column_names]
    out: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row in tracks.select(columns).to_pylist():
        if not in_window(head_centre(row), window):
            out[("person", int(row["person_id"]))].append(float(row["t"]))
    if objects is not None:
        for row in objects.select(["t", "object_id", "bbox"]).to_pylist():
            box = row["bbox"]
            if not in_window(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), window):
                out[("object", int(row["object_id"]))].append(float(row["t"]))
    return out


def _event_in_view(event: Event, outside: dict[tuple[str, int], list[float]]) -> bool:
    """Whether every person of ``event`` and what it is aimed at (a person, their hands, an object: the
    details' target_id) stay in view while it lasts."""
    things = {("person", int(p)) for p in event.persons}
    if event.target is not None and event.target.kind in PERSON_TARGETS and event.target.person_id >= 0:
        things.add(("person", event.target.person_id))
    target = event.details.get("target") if isinstance(event.details.get("target"), list) else None
    if event.details.get("target_type") == "object" and event.details.get("target_id") is not None:
        things.add(("object", int(event.details["target_id"])))
    elif target and target[0] == "object" and target[1] is not None:
        things.add(("object", int(target[1])))
    return not any(event.start <= t <= event.end for thing in things for t in outside.get(thing, ()))


def compare_runs(video_id: str, edit: str, original_tracks: pa.Table, original_events: pa.Table,
                 edited_tracks: pa.Table, edited_events: pa.Table, mirrored: bool, step_s: float,
                 window: tuple[float, float, float, float] = FULL_FRAME,
                 original_objects: Optional[pa.Table] = None) -> InvarianceScore:
    """Agreement of an edited clip's run with the original's (tables of one video each). ``step_s``: the
    sampling step, the slack allowed between event times. ``window``: the part of the original frame the edit
    shows (a zoom), stretched over the whole edited frame; ``original_objects``: the original's objects table,
    so that a look at a thing outside the window is left out too."""
    matches = match_people(original_tracks, edited_tracks, mirrored, window=window)
    id_map = majority_map(matches)
    object_boxes = None
    if original_objects is not None and original_objects.num_rows:
        object_boxes = {(int(r["frame_idx"]), int(r["object_id"])): r["bbox"]
                        for r in original_objects.select(["frame_idx", "object_id", "bbox"]).to_pylist()}
    rows = compare_rows(original_tracks, edited_tracks, mirrored, matches, id_map, window, object_boxes)
    ours, theirs = read_events(original_events), read_events(edited_events)
    if window != FULL_FRAME:
        outside = _out_of_view_times(original_tracks, window, original_objects)
        ours = [e for e in ours if _event_in_view(e, outside)]
    found, missed, extra = compare_events(ours, theirs, id_map, step_s)
    return InvarianceScore(video_id, edit, rows, len(ours), found, missed, extra, id_map)


def compare_outputs(original_store, original_id: str, edited_store, edited_id: str, edit: str,
                    window: tuple[float, float, float, float] = FULL_FRAME) -> InvarianceScore:
    """compare_runs on two clips of output folders (pipeline.storage.OutputStore); ``edit`` "mirror" means the
    edited frames are mirrored left to right, anything else that they are not; ``window``: the part of the
    original a zoom shows."""
    from pipeline.accuracy import load_clip_run

    a, b = load_clip_run(original_store, original_id), load_clip_run(edited_store, edited_id)
    objects = original_store.read_video_table("objects", original_id) if window != FULL_FRAME else None
    return compare_runs(original_id, edit, a.tracks, a.events_table, b.tracks, b.events_table,
                        mirrored=edit == "mirror", step_s=a.step, window=window, original_objects=objects)


def overall(scores: list[InvarianceScore]) -> dict[str, float]:
    """Pooled agreement over clips: rows and events counted together."""
    rows = sum(s.n_rows for s in scores)
    events = sum(s.events_original for s in scores)
    return {
        "rows": rows,
        "agree": sum(s.n_agree for s in scores),
        "agreement": sum(s.n_agree for s in scores) / rows if rows else math.nan,
        # the disagreements by kind (RowComparison.kind): they add up to rows - agree
        "contradictions": sum(s.n_contradictions for s in scores),
        "abstentions": sum(s.n_abstentions for s in scores),
        "unmatched": sum(s.n_kind("unmatched") for s in scores),
        "events": events,
        "events_found": sum(len(s.events_found) for s in scores),
        "events_found_share": sum(len(s.events_found) for s in scores) / events if events else math.nan,
        "events_extra": sum(len(s.events_extra) for s in scores),
    }
