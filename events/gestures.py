"""Gesture events: pointing (from the tracks' pointing columns), reaching (an extended arm with an open
hand aimed at a person or object), showing (an object held out toward a person) and giving (an object
passing from one person's hand to another's). Showing and giving exist only when an object does."""
from __future__ import annotations

import numpy as np

from events import kernels
from events.arrays import POINT_TARGET_TYPES, TrackArrays
from events.records import Event, round_many, span, spans
from events.support import pooled_support, support_confidence
from events.targets import object_label, target_columns
from events.config import EventConfig


def _smoothed_runs(arrays: TrackArrays, mask: np.ndarray, config: EventConfig):
    """Smooth (R, F) ``mask`` and return its runs lasting at least min_gesture_seconds and min_gesture_samples
    sampled frames, plus the smoothed mask."""
    smooth = kernels.smooth_runs(
        mask, arrays.segment, arrays.frames(config.smoothing_gap_seconds), arrays.min_frames(config.smoothing_blip_seconds)
    )
    rows, starts, ends = kernels.extract_runs(smooth, arrays.segment)
    keep = ends - starts + 1 >= arrays.min_frames(config.min_gesture_seconds, config.min_gesture_samples)
    return rows[keep], starts[keep], ends[keep], smooth


def pointing_spans(arrays: TrackArrays, config: EventConfig) -> np.ndarray:
    """(P, F) bool: the frames inside each person's pointing events (the runs ``detect_pointing`` reports)."""
    rows, starts, ends, _ = _smoothed_runs(arrays, arrays.pointing, config)
    inside = np.zeros_like(arrays.pointing, dtype=bool)
    for row, s, e in zip(rows.tolist(), starts.tolist(), ends.tolist()):
        inside[row, s : e + 1] = True
    return inside


def detect_pointing(arrays: TrackArrays, config: EventConfig) -> list[Event]:
    """Pointing intervals per person; the target is the most frequent pointing target inside the interval."""
    rows, starts, ends, _ = _smoothed_runs(arrays, arrays.pointing, config)
    # ties between targets go to the one pointed at first, deterministic for the same tracks
    kinds, ids = kernels.interval_mode(
        arrays.point_type, arrays.point_id, arrays.pointing & (arrays.point_type >= 0), rows, starts, ends
    )
    counts, sums, size = pooled_support(arrays.pointing, arrays.point_conf, rows, rows, starts, ends)
    confidence = support_confidence(counts, sums, size)
    support = round_many(counts / size, 4)
    t0s, t1s = spans(arrays, starts, ends)
    pids = arrays.person_ids[rows].tolist()
    events = []
    for n, (s, e, kind_code, tid) in enumerate(zip(starts.tolist(), ends.tolist(), kinds.tolist(), ids.tolist())):
        kind = POINT_TARGET_TYPES[kind_code] if kind_code >= 0 else "none"
        pid = pids[n]
        tid_or_none = tid if tid >= 0 and kind in ("person", "hands", "object") else None
        events.append(Event(
            source="gesture", event_type="pointing", start=s, end=e, start_time=t0s[n], end_time=t1s[n],
            persons=tuple(sorted({pid} | ({tid} if kind in ("person", "hands") and tid >= 0 else set()))),
            initiator=pid, confidence=confidence[n],
            details={"target_type": kind if kind != "elsewhere" else "none", "target_id": tid_or_none,
                     "hand": None, "support": support[n]},
            **target_columns(arrays, kind, tid_or_none),
        ))
    return events


class ArmState:
    """Per-frame arm facts shared by reaching, showing and giving."""

    def __init__(self, arrays: TrackArrays, config: EventConfig):
        n_people = arrays.n_people
        cos_cone = float(np.cos(np.radians(config.reach_cone_half_angle_deg)))
        # candidates: people's bodies first, then objects
        people_boxes = arrays.body_box
        boxes = np.concatenate([people_boxes, arrays.object_boxes], axis=0)
        owner = np.concatenate([np.arange(n_people), np.full(len(arrays.object_ids), -1)]).astype(np.int64)
        self.extension, self.aim_any = kernels.arm_aim(arrays.shoulder, arrays.elbow, arrays.wrist, boxes, owner, cos_cone)
        if len(arrays.object_ids):
            _, self.aim_person = kernels.arm_aim(arrays.shoulder, arrays.elbow, arrays.wrist, people_boxes, owner[:n_people], cos_cone)
        else:  # without objects the candidates are the people: the same aim
            self.aim_person = self.aim_any
        # a hanging arm is straight too: an arm reaches only when raised away from straight down
        arm = arrays.wrist - arrays.shoulder
        with np.errstate(invalid="ignore"):
            from_down = np.degrees(np.arctan2(np.abs(arm[..., 0]), arm[..., 1]))
        self.raised = np.nan_to_num(from_down, nan=0.0) >= config.reach_min_arm_angle_deg  # (P, F, 2)
        # ...and an arm held up well above the shoulder is a raised hand (a high five, a cheer, a wave)
        self.overhead = np.nan_to_num(from_down, nan=0.0) > config.reach_max_arm_angle_deg
        holding = kernels.hand_holding(arrays.hand_boxes, arrays.object_boxes, config.hold_min_overlap)
        # the objects table may name a holder without hand boxes: either hand may hold it then
        holder = arrays.object_holder[None, :, :] == arrays.person_ids[:, None, None]
        self.holding = np.where(holding > 0, holding, np.where(holder, 3, 0)).astype(np.int8)  # (P, O, F)


def detect_reaching(arrays: TrackArrays, arms: ArmState, config: EventConfig) -> list[Event]:
    """An empty open hand on an extended arm aimed at a person or an object (not pointing, not held up
    overhead)."""
    n_people = arrays.n_people
    # a frame inside one's own pointing event is that point with the finger unread for a sample (at
    # 10 fps the hand shape flickers), not a reach toward what is pointed at
    pointing = arrays.pointing | pointing_spans(arrays, config)
    empty_hand = np.stack([(arms.holding & (1 << h)).sum(axis=1) == 0 for h in range(2)], axis=-1)  # (P, F, 2)
    ok = (
        (np.nan_to_num(arms.extension, nan=0.0) >= config.reach_min_extension)
        & arms.raised & ~arms.overhead
        & (np.nan_to_num(arrays.hand_open, nan=0.0) >= config.reach_min_open)
        & (arms.aim_any >= 0) & empty_hand & ~pointing[..., None] & arrays.present[..., None]
    )
    # the more extended qualifying arm decides the target
    ext = np.where(ok, arms.extension, -1.0)
    arm = np.argmax(ext, axis=-1)
    target = np.where(ok.any(-1), np.take_along_axis(arms.aim_any, arm[..., None], -1)[..., 0], -1)
    n_candidates = n_people + len(arrays.object_ids)
    occupancy = kernels.target_occupancy(target, n_candidates)
    rows, starts, ends, _ = _smoothed_runs(arrays, occupancy.reshape(-1, arrays.n_frames), config)
    events = []
    for row, s, e in zip(rows, starts, ends):
        p, c = divmod(int(row), n_candidates)
        s, e = int(s), int(e)
        pid = int(arrays.person_ids[p])
        if c < n_people:
            kind, tid = "person", int(arrays.person_ids[c])
        else:
            kind, tid = "object", int(arrays.object_ids[c - n_people])
        hands = arm[p, s : e + 1][occupancy[p, c, s : e + 1]]
        hand = ("left", "right")[int(np.bincount(hands, minlength=2).argmax())] if len(hands) else None
        t0, t1 = span(arrays, s, e)
        reach = np.nanmax(arms.extension[p, s : e + 1], axis=-1)
        events.append(Event(
            source="gesture", event_type="reaching", start=s, end=e, start_time=t0, end_time=t1,
            persons=tuple(sorted({pid} | ({tid} if kind == "person" else set()))), initiator=pid,
            confidence=float(occupancy[p, c, s : e + 1].mean() * min(1.0, float(np.nanmean(reach)) if np.isfinite(reach).any() else 0.0)),
            details={"target_type": kind, "target_id": tid, "hand": hand},
            **target_columns(arrays, kind, tid),
        ))
    return events


def detect_giving(arrays: TrackArrays, arms: ArmState, config: EventConfig) -> list[Event]:
    """An object held by A is then held by B (a hand-over, possibly with both holding for a while, or a
    gap of at most give_max_gap_seconds) while A lets go. The interval starts when A's arm goes out toward
    B (or at the hand-over) and ends when A has let go."""
    n_people, n_objects, n_frames = arms.holding.shape
    if n_objects == 0 or n_people < 2:
        return []
    held = kernels.smooth_runs(
        (arms.holding > 0).reshape(-1, n_frames), arrays.segment,
        arrays.frames(config.smoothing_gap_seconds), arrays.min_frames(config.smoothing_blip_seconds),
    )
    rows, starts, ends = kernels.extract_runs(held, arrays.segment)
    max_gap = arrays.frames(config.give_max_gap_seconds)
    events = []
    for o in range(n_objects):
        mine = np.nonzero(rows % n_objects == o)[0]
        for b_run in mine:
            b, s_b, e_b = int(rows[b_run] // n_objects), int(starts[b_run]), int(ends[b_run])
            best = None
            for a_run in mine:
                a, s_a, e_a = int(rows[a_run] // n_objects), int(starts[a_run]), int(ends[a_run])
                if a == b or not (s_a < s_b <= e_a + max_gap + 1 and e_b > e_a):
                    continue
                if arrays.segment[s_b] != arrays.segment[e_a]:
                    continue
                if best is None or e_a > best[2]:
                    best = (a, s_a, e_a)
            if best is None:
                continue
            a, s_a, e_a = best
            start, end = min(s_b, e_a + 1), max(e_a, s_b)
            start = max(start, s_a)
            out_to_b = (arms.aim_person[a] == b).any(-1) & (np.nan_to_num(arms.extension[a], nan=0).max(-1) >= config.show_min_extension)
            while start > s_a and out_to_b[start - 1]:
                start -= 1
            giver, receiver = int(arrays.person_ids[a]), int(arrays.person_ids[b])
            oid = int(arrays.object_ids[o])
            t0, t1 = span(arrays, start, end)
            support = float(held[a * n_objects + o, start : end + 1].mean())
            events.append(Event(
                source="gesture", event_type="giving", start=start, end=end, start_time=t0, end_time=t1,
                persons=tuple(sorted((giver, receiver))), initiator=giver, confidence=support,
                target_type="person", target_person=receiver, target_label=object_label(arrays, oid),
                details={"target_type": "person", "target_id": receiver, "object_id": oid,
                         "object_label": object_label(arrays, oid), "handover_time": float(arrays.times[min(s_b, e_a)]),
                         "hand": None},
            ))
    return events


def detect_showing(arrays: TrackArrays, arms: ArmState, giving: list[Event], config: EventConfig) -> list[Event]:
    """Someone holds an object out (arm extended >= show_min_extension) toward another person, without
    handing it over (hand-overs are giving)."""
    n_people, n_objects, n_frames = arms.holding.shape
    if n_objects == 0 or n_people < 2:
        return []
    extended = np.nan_to_num(arms.extension, nan=0.0) >= config.show_min_extension  # (P, F, 2)
    key = np.full((n_people, n_frames), -1, np.int64)
    for o in range(n_objects):
        for h in range(2):
            ok = ((arms.holding[:, o] & (1 << h)) > 0) & extended[..., h] & (arms.aim_person[..., h] >= 0)
            key = np.where(ok & (key < 0), o * n_people + arms.aim_person[..., h], key)
    occupancy = kernels.target_occupancy(key, n_objects * n_people)
    rows, starts, ends, _ = _smoothed_runs(arrays, occupancy.reshape(-1, n_frames), config)
    given = [(g.initiator, g.target_person, g.details["object_id"], g.start, g.end) for g in giving]
    events = []
    for row, s, e in zip(rows, starts, ends):
        p, rest = divmod(int(row), n_objects * n_people)
        o, q = divmod(rest, n_people)
        s, e = int(s), int(e)
        shower, viewer, oid = int(arrays.person_ids[p]), int(arrays.person_ids[q]), int(arrays.object_ids[o])
        # holding an object out during a hand-over (either side of it) is part of the giving
        if any({g[0], g[1]} == {shower, viewer} and g[2] == oid and g[3] <= e and s <= g[4] for g in given):
            continue
        t0, t1 = span(arrays, s, e)
        events.append(Event(
            source="gesture", event_type="showing", start=s, end=e, start_time=t0, end_time=t1,
            persons=tuple(sorted((shower, viewer))), initiator=shower,
            confidence=float(occupancy[p, rest, s : e + 1].mean()),
            target_type="person", target_person=viewer, target_label=object_label(arrays, oid),
            details={"target_type": "person", "target_id": viewer, "object_id": oid,
                     "object_label": object_label(arrays, oid), "hand": None},
        ))
    return events


def detect_gesture_events(arrays: TrackArrays, config: EventConfig) -> list[Event]:
    """All gesture events of one video."""
    events = detect_pointing(arrays, config)
    arms = ArmState(arrays, config)
    events += detect_reaching(arrays, arms, config)
    giving = detect_giving(arrays, arms, config)
    events += giving + detect_showing(arrays, arms, giving, config)
    return events
