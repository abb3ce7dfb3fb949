"""The ground truth a scenario implies: the events the detectors should find, by the definitions in
events/__init__.py, computed in continuous time from the scene's declared looks and gestures (not by
the detectors)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from events.config import EventConfig
from tests.scenarios.scene import Scenario, _Segment


@dataclass
class TruthEvent:
    """One ground-truth event: what the detectors should find."""

    event_type: str
    start: float
    end: float
    persons: tuple[int, ...]
    initiator: Optional[int] = None
    target: Optional[tuple] = None  # ("person", id) | ("hands", id) | ("object", id) | ("camera",) | ("location",)
    leader: Optional[int] = None
    follower: Optional[int] = None
    target_person: Optional[int] = None


def _pieces(sc: Scenario, p: int, effective: bool = True) -> list[_Segment]:
    """The gaze timeline cut at scene cuts and absences (absent stretches removed). ``effective``
    moves each switch between two looks to the middle of the sweep, where the gaze crosses over."""
    bounds = sorted(set([0.0, sc.duration] + sc.cuts + [v for a in sc.people[p].absent for v in a]))
    out = []
    for seg in sc.timeline(p):
        for a, b in zip(bounds[:-1], bounds[1:]):
            s, e = max(seg.start, a), min(seg.end, b)
            if e > s and sc.is_present(p, 0.5 * (s + e)):
                out.append(_Segment(s, e, seg.target))
    # a look at someone who is out of view lands on nothing
    split = []
    for seg in out:
        gone = sc.people[seg.target[1]].absent if seg.target[0] in ("person", "hands") else []
        pieces = [(seg.start, seg.end)]
        for a, b in gone:
            pieces = [q for s0, e0 in pieces for q in ((s0, min(e0, a)), (max(s0, b), e0)) if q[1] > q[0]]
        marks = sorted({seg.start, seg.end} | {v for a, b in gone for v in (a, b) if seg.start < v < seg.end})
        for a, b in zip(marks[:-1], marks[1:]):
            inside = any(s0 <= a and b <= e0 for s0, e0 in pieces)
            split.append(_Segment(a, b, seg.target if inside else ("nobody",)))
    out = split
    if effective:
        for prev, seg in zip(out[:-1], out[1:]):
            if abs(prev.end - seg.start) < 1e-9 and seg.start not in bounds:
                prev.end = seg.start = seg.start + 0.5 * sc.transition
    return out


def expected_events(sc: Scenario, config: EventConfig | None = None) -> list[TruthEvent]:
    """The events this scenario implies, by the definitions in events/__init__.py, in continuous time."""
    cfg = config or EventConfig()
    truth: list[TruthEvent] = []
    named = {p: [s for s in _pieces(sc, p) if s.target[0] in ("person", "hands", "object", "camera")]
             for p in range(len(sc.people))}
    # gaze_at
    for p, segs in named.items():
        for s in segs:
            if s.end - s.start >= cfg.min_gaze_at_seconds:
                truth.append(TruthEvent("gaze_at", s.start, s.end, (p,), initiator=p, target=_key(s.target)))
    # mutual gaze and aversion
    def contacts_of(a: int, b: int) -> list:
        ab = [s for s in named[a] if s.target == ("person", b)]
        ba = [s for s in named[b] if s.target == ("person", a)]
        return [(max(x.start, y.start), min(x.end, y.end), x, y) for x in ab for y in ba
                if min(x.end, y.end) > max(x.start, y.start)]

    n = len(sc.people)
    for a in range(n):
        for b in range(a + 1, n):
            ab = [s for s in named[a] if s.target == ("person", b)]
            ba = [s for s in named[b] if s.target == ("person", a)]
            contacts = contacts_of(a, b)
            # eye contact of either with a third person: never merged over (one contact at a time)
            elsewhere = [c[0] for p in (a, b) for q in range(n) if q not in (a, b) for c in contacts_of(min(p, q), max(p, q))]
            # an aversion: one breaks the contact while the other keeps looking, until the holder stops
            # or the averter looks back; it ends the contact (the merge never bridges it)
            aversions = []
            for s, e, x, y in contacts:
                if e - s < cfg.aversion_min_contact_seconds or abs(x.end - y.end) < 1e-9:
                    continue
                averter, holder, hold, again = (a, b, y, ab) if x.end < y.end else (b, a, x, ba)
                end = min([hold.end] + [z.start for z in again if z.start >= e])
                if end - e >= cfg.aversion_min_hold_seconds and e not in sc.cuts:
                    aversions.append((e, end, averter, holder))
            barriers = sc.cuts + [v for q in (a, b) for span_ in sc.people[q].absent for v in span_]
            reported = []
            for s, e, x, y in _merge(contacts, cfg.mutual_gaze_merge_gap_seconds, barriers + elsewhere + [v[0] for v in aversions]):
                if e - s >= cfg.min_mutual_gaze_seconds:
                    truth.append(TruthEvent("mutual_gaze", s, e, (a, b)))
                    reported.append(e)
            for e, end, averter, holder in aversions:
                if any(abs(e - r) < 1e-9 for r in reported):  # only a reported contact can be broken
                    truth.append(TruthEvent("gaze_aversion", e, end, (a, b), initiator=averter, target_person=holder))
    truth += _joint_attention(sc, named, cfg)
    truth += _following_and_capture(sc, named, cfg)
    truth += _shifts(sc, cfg)
    truth += _gestures(sc, cfg)
    truth += _cross_truth(truth, cfg)
    return truth


def _joint_attention(sc: Scenario, named, cfg) -> list[TruthEvent]:
    out = []
    targets = {s.target for segs in named.values() for s in segs if s.target[0] != "camera"}  # scene things only
    for target in sorted(targets, key=str):
        marks = sorted({v for segs in named.values() for s in segs if s.target == target for v in (s.start, s.end)})
        spans = []
        for a, b in zip(marks[:-1], marks[1:]):
            lookers = tuple(p for p, segs in named.items() if any(s.target == target and s.start <= a and b <= s.end for s in segs))
            if len(lookers) >= 2:
                if spans and abs(spans[-1][1] - a) < 1e-9 and not any(abs(a - c) < 1e-9 for c in sc.cuts):
                    spans[-1][1] = b
                else:
                    spans.append([a, b, lookers])
        for a, b, lookers in spans:
            if b - a >= cfg.min_joint_attention_seconds:
                out.append(TruthEvent("joint_attention", a, b, lookers, target=_key(target)))
    return out


def _following_and_capture(sc: Scenario, named, cfg) -> list[TruthEvent]:
    onsets = []  # (target, time, person, end)
    for p, segs in named.items():
        pieces = _pieces(sc, p)
        for s in segs:
            known_before = any(abs(q.end - s.start) < 1e-9 for q in pieces)
            if known_before and s.end - s.start >= cfg.min_gaze_at_seconds:
                onsets.append((s.target, s.start, p, s.end))
    out = []
    for target in {o[0] for o in onsets if o[0][0] != "camera"}:  # following and capture: scene things only
        mine = sorted([o for o in onsets if o[0] == target], key=lambda o: (o[1], o[2]))
        looking = lambda p, t: any(s.target == target and s.start <= t < s.end for s in named[p])  # noqa: E731
        def looked(p, t0, t1):
            return any(s.target == target and s.start < t1 - 1e-9 and s.end > t0 + 1e-9 for s in named[p])

        for i, (_, t_f, p_f, _) in enumerate(mine):
            if target[0] in ("person", "hands") and target[1] == p_f:
                continue  # onto one's own face or hands is no following
            for _, t_l, p_l, end_l in reversed(mine[:i]):
                lag = t_f - t_l
                if lag > cfg.following_max_lag_seconds + 1e-9:
                    break
                if p_l != p_f and lag >= cfg.following_min_lag_seconds - 1e-9 and looking(p_l, t_f) \
                        and not looked(p_f, max(t_l - cfg.following_unseen_before_seconds, sc._shot_start(t_l)), t_f) \
                        and sc.shot_at(t_l) == sc.shot_at(t_f):
                    out.append(TruthEvent("gaze_following", t_l, t_f, tuple(sorted((p_l, p_f))), initiator=p_l,
                                          target=_key(target), leader=p_l, follower=p_f))
                    break
        i = 0
        while i < len(mine):
            group = [o for o in mine[i:] if o[1] - mine[i][1] <= cfg.capture_window_seconds + 1e-9]
            people = {o[2] for o in group}
            if len(people) >= cfg.capture_min_people:
                end = max(min(o[3] for o in group), max(o[1] for o in group))
                out.append(TruthEvent("attention_capture", mine[i][1], end, tuple(sorted(people)), target=_key(target)))
                i += len(group)
            else:
                i += 1
    return out


def _shifts(sc: Scenario, cfg) -> list[TruthEvent]:
    out = []
    min_amplitude = cfg.shift_min_speed * cfg.shift_min_seconds
    for p in range(len(sc.people)):
        pieces = _pieces(sc, p, effective=False)
        for prev, seg in zip(pieces[:-1], pieces[1:]):
            if abs(prev.end - seg.start) > 1e-9 or seg.start in sc.cuts or prev.target == seg.target \
                    or "nobody" in (prev.target[0], seg.target[0]) \
                    or seg.end - seg.start < cfg.shift_min_seconds:  # the movement must finish in view
                continue
            old = sc._target_point(prev.target, seg.start, p) - sc.head_centre(p)
            new = sc._target_point(seg.target, seg.start + sc.transition, p) - sc.head_centre(p)
            amplitude = float(np.hypot(*(new - old)))
            if amplitude >= min_amplitude and amplitude / sc.transition > cfg.shift_min_speed:
                centre = seg.start + 0.5 * sc.transition
                half = 0.5 * max(sc.transition, cfg.shift_min_seconds)
                out.append(TruthEvent("sudden_gaze_shift", centre - half, centre + half, (p,), initiator=p))
    return out


def _gestures(sc: Scenario, cfg) -> list[TruthEvent]:
    out = []
    for p, person in enumerate(sc.people):
        for kind, start, end, target, hand, obj in person.gestures:
            if kind == "taking" or end - start < cfg.min_gesture_seconds:
                continue
            people = {p} | ({target[1]} if target[0] in ("person", "hands") else set())
            out.append(TruthEvent(kind, start, end, tuple(sorted(people)), initiator=p, target=_key(target),
                                  target_person=target[1] if target[0] in ("person", "hands") else None))
    return out


def _key(target: tuple) -> tuple:
    return ("camera",) if target[0] == "camera" else (target[0], target[1])


def _merge(intervals, gap: float, barriers=()):
    """Merge intervals closer than ``gap`` unless a barrier time (a cut, an absence) lies between them."""
    out = []
    for s, e, x, y in sorted(intervals, key=lambda v: v[0]):
        if out and s - out[-1][1] <= gap + 1e-9 and not any(out[-1][1] - 1e-9 <= b <= s + 1e-9 for b in barriers):
            out[-1] = (out[-1][0], max(out[-1][1], e), x, y)
        else:
            out.append((s, e, x, y))
    return out


def _entity(target) -> Optional[tuple]:
    if target is None:
        return None
    if target[0] in ("person", "hands"):
        return ("person", target[1])
    if target[0] == "object":
        return ("object", target[1])
    return ("camera", -1) if target[0] == "camera" else None


def _cross_truth(truth: list[TruthEvent], cfg) -> list[TruthEvent]:
    gestures = [e for e in truth if e.event_type in ("pointing", "reaching", "showing", "giving")]
    social = [e for e in truth if e.event_type in ("mutual_gaze", "joint_attention", "gaze_following",
                                                   "attention_capture", "sudden_gaze_shift", "gaze_aversion")]
    looks = [e for e in truth if e.event_type == "gaze_at"]
    out = []
    for g in gestures:
        for z in social:
            if not set(g.persons) & set(z.persons):
                continue
            overlap = min(z.end, g.end) - max(z.start, g.start)
            if overlap > 0 or -overlap <= cfg.cross_adjacent_seconds:
                out.append(TruthEvent("co_occur" if overlap > 0 else "adjacent", min(z.start, g.start), max(z.end, g.end),
                                      tuple(sorted(set(g.persons) | set(z.persons))), initiator=g.initiator))
            if z.event_type == "mutual_gaze" and g.initiator in z.persons and overlap > 0:
                partner = [q for q in z.persons if q != g.initiator][0]
                out.append(TruthEvent("eye_contact_during_gesture", max(z.start, g.start), min(z.end, g.end),
                                      tuple(sorted((g.initiator, partner))), initiator=g.initiator, target_person=partner))
        target = _entity(g.target)
        if target is None:
            continue
        answered = set()
        for z in sorted(looks, key=lambda e: e.start):
            if _entity(z.target) != target:
                continue
            if z.initiator == g.initiator and z.start < g.end and z.end > g.start:
                out.append(TruthEvent("gaze_gesture_alignment", max(z.start, g.start), min(z.end, g.end), g.persons,
                                      initiator=g.initiator))
            elif (z.initiator != g.initiator and g.start < z.start <= g.start + cfg.gaze_follows_gesture_window_seconds
                  and z.initiator not in answered and not (target[0] == "person" and z.initiator == target[1])
                  and not any(_entity(w.target) == target and w.initiator == z.initiator and w.start <= g.start < w.end for w in looks)):
                answered.add(z.initiator)
                out.append(TruthEvent("gaze_follows_gesture", g.start, z.start, tuple(sorted(set(g.persons) | {z.initiator})),
                                      initiator=g.initiator, leader=g.initiator, follower=z.initiator))
    return out
