"""Cross-modal events: pairs of a gaze event and a gesture event (co_occur, adjacent), gaze that follows a
gesture to its target, eye contact during a gesture, and the gesturer looking at what they gesture at."""
from __future__ import annotations

import math

import numpy as np

from events.arrays import TrackArrays
from events.records import Event
from events.targets import entity
from events.config import EventConfig

# gaze_at is one person's look, not an interaction: it takes part in the target-based cross events below
# but pairing it with every gesture would swamp co_occur/adjacent with trivial pairs
PAIRED_GAZE_TYPES = ("mutual_gaze", "joint_attention", "gaze_following", "attention_capture",
                     "sudden_gaze_shift", "gaze_aversion")


def _gesture_entity(event: Event):
    return entity(event.details.get("target_type", "none"), event.details.get("target_id"))


def _gaze_entity(event: Event):
    return entity(event.details.get("target_type", "none"), event.details.get("target_id"))


def _cross(kind: str, a: Event, b: Event, ia: int, ib: int, start: int, end: int, t0: float, t1: float, **fields) -> Event:
    details = {"gaze_event_type": a.event_type, "gesture_event_type": b.event_type}
    details.update(fields.pop("details", {}))
    return Event(
        source="cross", event_type=kind, start=start, end=end, start_time=t0, end_time=t1,
        confidence=math.sqrt(max(a.confidence, 0.0) * max(b.confidence, 0.0)), parents=(ia, ib),
        details=details, **fields,
    )


def _near_sharing_pairs(
    events: list[Event], gestures: list[int], paired: list[int], paired_start: np.ndarray, paired_end: np.ndarray,
    within: float,
) -> list[list[int]]:
    """For each gesture, the positions in ``paired`` of the gaze events at most ``within`` seconds from it
    (or overlapping it) that share a person with it, in increasing order. Person sets are compared as a
    membership matrix (events x people), so only the pairs that become events reach Python."""
    ids = sorted({p for i in gestures + paired for p in events[i].persons})
    column = {pid: c for c, pid in enumerate(ids)}

    def members(index: list[int]) -> np.ndarray:
        out = np.zeros((len(index), len(ids)), bool)
        rows = [r for r, i in enumerate(index) for _ in events[i].persons]
        cols = [column[p] for i in index for p in events[i].persons]
        out[rows, cols] = True
        return out

    gesture_members, paired_members = members(gestures), members(paired)
    g_start = np.array([events[i].start_time for i in gestures])
    g_end = np.array([events[i].end_time for i in gestures])
    found = []
    for n in range(len(gestures)):
        near = np.nonzero((paired_start <= g_end[n] + within) & (paired_end >= g_start[n] - within))[0]
        shares = (paired_members[near] & gesture_members[n]).any(axis=1)
        found.append(near[shares].tolist())
    return found


def detect_cross_events(arrays: TrackArrays, events: list[Event], config: EventConfig) -> list[Event]:
    """Cross-modal events over the gaze and gesture ``events`` of one video (parents are list positions)."""
    gestures = [i for i, e in enumerate(events) if e.source == "gesture"]
    if not gestures:
        return []
    paired = [i for i, e in enumerate(events) if e.event_type in PAIRED_GAZE_TYPES]
    looks = [i for i, e in enumerate(events) if e.event_type == "gaze_at"]
    contacts = [i for i, e in enumerate(events) if e.event_type == "mutual_gaze"]

    def times(index: list[int]) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([events[i].start_time for i in index]), np.array([events[i].end_time for i in index]))

    paired_start, paired_end = times(paired)
    look_start, look_end = times(looks)
    contact_start, contact_end = times(contacts)
    look_entity = [_gaze_entity(events[i]) for i in looks]
    codes = {key: n for n, key in enumerate(sorted({e for e in look_entity if e is not None}))}
    look_code = np.array([codes.get(e, -1) if e is not None else -1 for e in look_entity], np.int64)
    look_person = np.array([events[i].initiator for i in looks], np.int64)
    near_pairs = _near_sharing_pairs(events, gestures, paired, paired_start, paired_end, config.cross_adjacent_seconds)
    out: list[Event] = []
    for ig, near in zip(gestures, near_pairs):
        g = events[ig]
        g_people = set(g.persons)
        # co_occur / adjacent: any paired gaze event sharing a person, overlapping or at most 3 s apart
        for n in near:
            iz = paired[n]
            z = events[iz]
            shared = sorted(g_people & set(z.persons))
            overlap = min(z.end_time, g.end_time) - max(z.start_time, g.start_time)
            kind = "co_occur" if overlap > 0 else "adjacent"
            first = "simultaneous" if abs(z.start_time - g.start_time) < 1e-9 else ("gaze" if z.start_time < g.start_time else "gesture")
            out.append(_cross(
                kind, z, g, iz, ig, min(z.start, g.start), max(z.end, g.end),
                min(z.start_time, g.start_time), max(z.end_time, g.end_time),
                persons=tuple(sorted(g_people | set(z.persons))), initiator=g.initiator,
                details={"shared_persons": shared, "first": first,
                         "gap_seconds": round(max(0.0, -overlap), 4), "overlap_seconds": round(max(0.0, overlap), 4)},
            ))
        target = _gesture_entity(g)
        if target is not None and len(looks):
            same_target = look_code == codes.get(target, -2)
            # the gesturer looks at what they gesture at
            own = np.nonzero(same_target & (look_person == g.initiator) & (look_start < g.end_time) & (look_end > g.start_time))[0]
            for n in own:
                il = looks[n]
                z = events[il]
                s, e = max(z.start, g.start), min(z.end, g.end)
                out.append(_cross(
                    "gaze_gesture_alignment", z, g, il, ig, s, max(s, e), max(z.start_time, g.start_time),
                    min(z.end_time, g.end_time), persons=tuple(sorted(g_people)), initiator=g.initiator,
                    target_type=g.target_type, target_person=g.target_person, target_label=g.target_label,
                    details={"target": list(target)},
                ))
            # someone else turns to the gesture's target within the window after it starts
            window = config.gaze_follows_gesture_window_seconds
            responders = np.nonzero(same_target & (look_person != g.initiator)
                                    & (look_start > g.start_time) & (look_start <= g.start_time + window))[0]
            answered = set()
            for n in responders[np.argsort(look_start[responders], kind="stable")]:
                il = looks[n]
                z = events[il]
                if z.initiator in answered or (target[0] == "person" and z.initiator == target[1]):
                    continue  # one response per person; the pointed-at person looking at their own hands is no response
                already = np.any(same_target & (look_person == z.initiator) & (look_start <= g.start_time) & (look_end > g.start_time))
                if already:
                    continue
                answered.add(z.initiator)
                out.append(_cross(
                    "gaze_follows_gesture", z, g, il, ig, g.start, max(g.start, z.start), g.start_time, z.start_time,
                    persons=tuple(sorted(g_people | {z.initiator})), initiator=g.initiator,
                    leader=g.initiator, follower=z.initiator, lag=float(z.start_time - g.start_time),
                    target_type=g.target_type, target_person=g.target_person, target_label=g.target_label,
                    details={"target": list(target)},
                ))
        # eye contact between the gesturer and someone while the gesture lasts
        during = np.nonzero((contact_start < g.end_time) & (contact_end > g.start_time))[0]
        for n in during:
            ic = contacts[n]
            z = events[ic]
            if g.initiator not in z.persons:
                continue
            partner = [p for p in z.persons if p != g.initiator][0]
            s, e = max(z.start, g.start), min(z.end, g.end)
            out.append(_cross(
                "eye_contact_during_gesture", z, g, ic, ig, s, max(s, e), max(z.start_time, g.start_time),
                min(z.end_time, g.end_time), persons=tuple(sorted((g.initiator, partner))), initiator=g.initiator,
                target_type="person", target_person=partner, details={"partner_id": partner},
            ))
    # a pair a cut separates is only an event when its people are on screen on both sides of the cut
    # (pipeline/consistency.py check_cuts): otherwise "who" on one side is nobody on the other
    return [e for e in out if seen_across_cuts(arrays, e.persons, e.start, e.end)]


def seen_across_cuts(arrays: TrackArrays, persons, start: int, end: int) -> bool:
    """Whether each of ``persons`` is seen both before and after every shot change between frame positions
    ``start`` and ``end`` (inclusive); True when none lies between them."""
    changes = np.flatnonzero(arrays.segment[start + 1: end + 1] != arrays.segment[start: end]) + start + 1
    if not len(changes):
        return True
    rows = np.searchsorted(arrays.person_ids, np.asarray(persons, np.int64))
    if (rows >= len(arrays.person_ids)).any() or (arrays.person_ids[np.minimum(rows, len(arrays.person_ids) - 1)] != persons).any():
        return False
    seen = arrays.present[rows, start: end + 1]
    for change in changes - start:
        if not (seen[:, :change].any(axis=1).all() and seen[:, change:].any(axis=1).all()):
            return False
    return True
