"""Synthetic scenario builder: people placed in a frame, gaze and gestures aimed at chosen targets over
chosen intervals, sampled at any fps into a tracks table (pipeline.schema.TRACKS_SCHEMA) plus an objects
table, together with the ground-truth events the scenario implies (computed in continuous time, not by
the detectors). Also ``random_tracks`` for the benchmark (10 people x 36,000 frames).

Usage::

    sc = Scenario(duration=8.0)
    a, b = sc.add_person(0.3), sc.add_person(0.7)
    sc.look(a, ("person", b), 1.0, 5.0)
    sc.look(b, ("person", a), 1.5, 5.0)
    tracks = sc.tracks(fps=10)
    truth = sc.expected_events()          # list[TruthEvent]

Targets: ("person", id) = the face, ("hands", id), ("object", id), "camera", ("point", (x, y)).
Gaze switches sweep from the old point to the new one over ``transition`` seconds (a real eye movement).
Geometry: each person stands at x with the head at y = 0.3, arms bent with hands at the belly at rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from pipeline.config import EventConfig
from pipeline.schema import OBJECTS_SCHEMA, TRACKS_SCHEMA

HEAD_Y, HEAD_HALF = 0.30, 0.04
SHOULDER_Y, SHOULDER_DX = 0.42, 0.06
ARM_LENGTH = 0.22
HAND_HALF = 0.02
OBJECT_HALF = 0.025
HEAD_MARGIN = 0.02  # the simulated ground truth counts a gaze point this close to a box as on it


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


@dataclass
class _Person:
    x: float
    looks: list = field(default_factory=list)  # (start, end, target)
    gestures: list = field(default_factory=list)  # (kind, start, end, target, hand, object)
    holds: list = field(default_factory=list)  # (start, end, object, hand)
    absent: list = field(default_factory=list)  # (start, end)


@dataclass
class _Segment:
    start: float
    end: float
    target: Any  # declared target, or ("default",)


class Scenario:
    """A scene of people, objects, gaze and gestures; see the module docstring."""

    def __init__(self, duration: float, video_id: str = "synthetic", seed: int = 0, noise: float = 0.003,
                 drop_gaze: float = 0.0, drop_rows: float = 0.0, transition: float = 0.2, gaze_conf: float = 0.85):
        self.duration = float(duration)
        self.video_id = video_id
        self.seed = seed
        self.noise = noise
        self.drop_gaze = drop_gaze
        self.drop_rows = drop_rows
        self.transition = transition
        self.gaze_conf = gaze_conf
        self.people: list[_Person] = []
        self.object_labels: list[str] = []
        self.cuts: list[float] = []

    # --- building ------------------------------------------------------------------------------

    def add_person(self, x: float) -> int:
        """A person standing at horizontal position ``x``; returns their person_id."""
        self.people.append(_Person(x=float(x)))
        return len(self.people) - 1

    def add_object(self, label: str = "cup") -> int:
        self.object_labels.append(label)
        return len(self.object_labels) - 1

    def look(self, person: int, target, start: float, end: float) -> None:
        self.people[person].looks.append((float(start), float(end), _norm_target(target)))

    def point(self, person: int, target, start: float, end: float, hand: int = 1) -> None:
        self.people[person].gestures.append(("pointing", float(start), float(end), _norm_target(target), hand, None))

    def reach(self, person: int, target, start: float, end: float, hand: int = 1) -> None:
        self.people[person].gestures.append(("reaching", float(start), float(end), _norm_target(target), hand, None))

    def hold(self, person: int, obj: int, start: float, end: float, hand: int = 1) -> None:
        self.people[person].holds.append((float(start), float(end), obj, hand))

    def show(self, person: int, obj: int, viewer: int, start: float, end: float, hand: int = 1) -> None:
        """Hold ``obj`` out toward ``viewer`` (the object must be held then: see ``hold``)."""
        self.people[person].gestures.append(("showing", float(start), float(end), ("person", viewer), hand, obj))

    def give(self, giver: int, receiver: int, obj: int, start: float, end: float) -> None:
        """Hand ``obj`` over: the giver's arm goes out toward the receiver at ``start``, the receiver takes
        hold at the midpoint, the giver lets go at ``end``; the receiver keeps it ``hold_after`` seconds."""
        mid = 0.5 * (start + end)
        self.people[giver].gestures.append(("giving", float(start), float(end), ("person", receiver), 1, obj))
        self.people[receiver].gestures.append(("taking", mid, float(end), ("person", giver), 0, obj))
        self.people[receiver].holds.append((mid, self.duration, obj, 0))

    def absent(self, person: int, start: float, end: float) -> None:
        self.people[person].absent.append((float(start), float(end)))

    def cut(self, time: float) -> None:
        """A scene cut at ``time`` (the shot id increases)."""
        self.cuts.append(float(time))
        self.cuts.sort()

    # --- geometry ------------------------------------------------------------------------------

    def head_centre(self, p: int) -> np.ndarray:
        return np.array([self.people[p].x, HEAD_Y])

    def head_box(self, p: int) -> np.ndarray:
        x = self.people[p].x
        return np.array([x - HEAD_HALF, HEAD_Y - 1.25 * HEAD_HALF, x + HEAD_HALF, HEAD_Y + 1.25 * HEAD_HALF])

    def body_box(self, p: int) -> np.ndarray:
        x = self.people[p].x
        return np.array([x - 0.1, HEAD_Y - 0.06, x + 0.1, 0.95])

    def _shoulder(self, p: int, hand: int) -> np.ndarray:
        return np.array([self.people[p].x + (SHOULDER_DX if hand else -SHOULDER_DX), SHOULDER_Y])

    def _active(self, p: int, t: float, kinds: tuple[str, ...]):
        for g in self.people[p].gestures:
            if g[0] in kinds and g[1] <= t < g[2]:
                return g
        return None

    def _holding(self, p: int, t: float):
        for start, end, obj, hand in self.people[p].holds:
            if start <= t < end:
                return obj, hand
        return None

    def _target_point(self, target, t: float, p: int) -> np.ndarray:
        kind = target[0]
        if kind == "person":
            return self.head_centre(target[1])
        if kind == "hands":
            boxes = self.hand_boxes(target[1], t)
            holding = self._holding(target[1], t)
            b = boxes[holding[1]] if holding else 0.5 * (boxes[0] + boxes[1])
            return 0.5 * (b[:2] + b[2:])
        if kind == "object":
            b = self.object_box(target[1], t)
            return 0.5 * (b[:2] + b[2:]) if b is not None else self.head_centre(p) + [0, 0.68]
        if kind == "camera":
            return self.head_centre(p)
        if kind == "point":
            return np.asarray(target[1], float)
        return self.head_centre(p) + np.array([0.0, 0.68])  # default: the floor in front of them

    def arm(self, p: int, t: float, hand: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(shoulder, elbow, wrist) of one arm at time t."""
        shoulder = self._shoulder(p, hand)
        gesture = self._active(p, t, ("pointing", "reaching", "showing", "giving", "taking"))
        if gesture is not None and gesture[4] == hand:
            kind, g_start, g_end, target = gesture[0], gesture[1], gesture[2], gesture[3]
            if kind in ("giving", "taking"):
                giver = p if kind == "giving" else target[1]
                receiver = target[1] if kind == "giving" else p
                goal = self.handover_point(giver, receiver)
            elif target[0] == "object":
                b = self.object_box(target[1], t)
                goal = 0.5 * (b[:2] + b[2:])
            elif target[0] == "person":
                goal = 0.5 * (self.body_box(target[1])[:2] + self.body_box(target[1])[2:])
            else:
                goal = self._target_point(target, t, p)
            direction = goal - shoulder
            dist = float(np.hypot(*direction))
            reach = min(ARM_LENGTH, dist) if kind in ("giving", "taking", "reaching") else ARM_LENGTH
            wrist = shoulder + direction / max(dist, 1e-9) * reach
            return shoulder, 0.5 * (shoulder + wrist), wrist
        side = 1 if hand else -1
        x = self.people[p].x
        return shoulder, np.array([x + side * 0.09, 0.55]), np.array([x + side * 0.02, 0.50])

    def handover_point(self, giver: int, receiver: int) -> np.ndarray:
        """Where the hands meet in a hand-over: along the giver's arm toward the receiver's body centre."""
        shoulder = self._shoulder(giver, 1)
        centre = 0.5 * (self.body_box(receiver)[:2] + self.body_box(receiver)[2:])
        direction = centre - shoulder
        dist = float(np.hypot(*direction))
        return shoulder + direction / dist * min(ARM_LENGTH, 0.5 * dist)

    def hand_boxes(self, p: int, t: float) -> np.ndarray:
        boxes = []
        for hand in range(2):
            w = self.arm(p, t, hand)[2]
            boxes.append(np.array([w[0] - HAND_HALF, w[1] - HAND_HALF, w[0] + HAND_HALF, w[1] + HAND_HALF]))
        return np.array(boxes)

    def object_box(self, obj: int, t: float) -> Optional[np.ndarray]:
        """The object sits in the hand of whoever holds it (the giver's until they let go)."""
        for p in range(len(self.people)):
            for start, end, o, hand in self.people[p].holds:
                if o == obj and start <= t < end and not self._taking(p, t, obj):
                    w = self.arm(p, t, hand)[2]
                    return np.array([w[0] - OBJECT_HALF, w[1] - OBJECT_HALF, w[0] + OBJECT_HALF, w[1] + OBJECT_HALF])
        return None

    def _taking(self, p: int, t: float, obj: int) -> bool:
        g = self._active(p, t, ("taking",))
        return g is not None and g[5] == obj

    # --- gaze timelines ------------------------------------------------------------------------

    def timeline(self, p: int) -> list[_Segment]:
        """The person's gaze over the whole scenario: declared looks, default gaze in between."""
        segments, t = [], 0.0
        for start, end, target in sorted(self.people[p].looks, key=lambda look: look[0]):
            if start > t:
                segments.append(_Segment(t, start, ("default",)))
            segments.append(_Segment(max(start, t), end, target))
            t = max(t, end)
        if t < self.duration:
            segments.append(_Segment(t, self.duration, ("default",)))
        return segments

    def gaze_at(self, p: int, t: float) -> tuple[np.ndarray, Any]:
        """(gaze point, declared target) of person p at time t, with the sweep between targets."""
        segments = self.timeline(p)
        for k, seg in enumerate(segments):
            if seg.start <= t < seg.end or (k == len(segments) - 1 and t >= seg.start):
                point = self._target_point(seg.target, t, p)
                if k > 0 and t < seg.start + self.transition and seg.start not in self.cuts:
                    old = self._target_point(segments[k - 1].target, seg.start, p)
                    a = (t - seg.start) / self.transition
                    return (1 - a) * old + a * point, None
                return point, seg.target
        return self._target_point(("default",), t, p), ("default",)

    def _hit(self, p: int, point: np.ndarray, t: float, present: list[bool]) -> tuple[str, Optional[int]]:
        """What a gaze point lands on: a face (not one's own), hands, an object, else elsewhere."""
        def inside(box, margin):
            return box[0] - margin <= point[0] <= box[2] + margin and box[1] - margin <= point[1] <= box[3] + margin
        for q in range(len(self.people)):
            if q != p and present[q] and inside(self.head_box(q), HEAD_MARGIN):
                return "person", q
        for q in range(len(self.people)):
            if present[q] and any(inside(b, HEAD_MARGIN) for b in self.hand_boxes(q, t)):
                return "hands", q
        for o in range(len(self.object_labels)):
            b = self.object_box(o, t)
            if b is not None and inside(b, 0.0):
                return "object", o
        return "elsewhere", None

    def is_present(self, p: int, t: float) -> bool:
        return not any(a <= t < b for a, b in self.people[p].absent)

    def shot_at(self, t: float) -> int:
        return int(np.searchsorted(self.cuts, t, side="right"))

    def _shot_start(self, t: float) -> float:
        return max([0.0] + [c for c in self.cuts if c <= t])

    # --- tables --------------------------------------------------------------------------------

    def frame_times(self, fps: float) -> np.ndarray:
        return np.arange(int(math.ceil(self.duration * fps - 1e-9))) / fps

    def tracks(self, fps: float = 10.0) -> pa.Table:
        """The tracks table sampled at ``fps`` (same seed -> same noise for the same fps)."""
        rng = np.random.default_rng([self.seed, int(round(fps * 1000))])
        rows = []
        for f, t in enumerate(self.frame_times(fps)):
            present = [self.is_present(p, t) for p in range(len(self.people))]
            for p in range(len(self.people)):
                if not present[p] or rng.random() < self.drop_rows:
                    continue
                rows.append(self._row(p, f, t, present, rng))
        return pa.Table.from_pylist(rows, schema=TRACKS_SCHEMA) if rows else TRACKS_SCHEMA.empty_table()

    def _row(self, p: int, f: int, t: float, present: list[bool], rng: np.random.Generator) -> dict:
        point, declared = self.gaze_at(p, t)
        point = point + rng.normal(0.0, self.noise, 2)
        head = self.head_box(p)
        origin = self.head_centre(p)
        if declared is not None and declared[0] == "camera":
            kind, tid, direction = "camera", None, np.array([0.0, 0.0, -1.0])
        else:
            kind, tid = self._hit(p, point, t, present)
            if declared is not None and declared[0] in ("person", "hands", "object") and (kind, tid) != (declared[0], declared[1]):
                # the declared target wins when the point is on it (held objects sit in hands)
                if declared[0] == "object" and self.object_box(declared[1], t) is not None:
                    kind, tid = "object", declared[1]
            d = np.append(point - origin, 0.5)
            direction = d / np.linalg.norm(d)
        conf = float(np.clip(self.gaze_conf + rng.normal(0, 0.03), 0.05, 1.0))
        gaze_point = [float(v) for v in point]
        if rng.random() < self.drop_gaze:
            kind, tid, gaze_point, direction, conf = "unknown", None, None, None, 0.0
        hands = self.hand_boxes(p, t)
        keypoints = np.zeros((17, 3))
        keypoints[:, 2] = 0.9
        keypoints[0, :2] = origin
        for hand, (s_i, e_i, w_i) in enumerate(((5, 7, 9), (6, 8, 10))):
            shoulder, elbow, wrist = self.arm(p, t, hand)
            keypoints[s_i, :2], keypoints[e_i, :2], keypoints[w_i, :2] = shoulder, elbow, wrist
        for i, k in enumerate((1, 2, 3, 4)):
            keypoints[k, :2] = origin + [(-1) ** i * 0.015 * (1 + i // 2), -0.01]
        keypoints[11, :2] = [self.people[p].x - 0.05, 0.65]
        keypoints[12, :2] = [self.people[p].x + 0.05, 0.65]
        keypoints[13:, :2] = [[self.people[p].x - 0.05, 0.8], [self.people[p].x + 0.05, 0.8],
                              [self.people[p].x - 0.05, 0.93], [self.people[p].x + 0.05, 0.93]]
        pointing = self._active(p, t, ("pointing",))
        reaching = self._active(p, t, ("reaching", "giving", "taking", "showing"))
        hand_open = [0.2, 0.2]
        if reaching is not None and reaching[0] in ("reaching", "taking"):
            hand_open[reaching[4]] = 0.9
        row = {
            "video_id": self.video_id, "frame_idx": f, "native_frame_idx": f, "t": float(t),
            "shot_id": self.shot_at(t), "person_id": p, "det_conf": 0.9,
            "bbox": [float(v) for v in self.body_box(p)], "head_bbox": [float(v) for v in head],
            "keypoints": [float(v) for v in keypoints.ravel()], "gaze_origin": [float(v) for v in origin],
            "gaze_dir": None if direction is None else [float(v) for v in direction],
            "gaze_source": "face_mesh", "gaze_conf": conf, "gaze_point": gaze_point,
            "gaze_target_type": kind, "gaze_target_id": tid,
            "pointing": pointing is not None, "point_conf": 0.0, "point_dir": None,
            "point_target_type": None, "point_target_id": None,
            "hand_bboxes": [[float(v) for v in b] for b in hands], "hand_open": hand_open,
        }
        if pointing is not None:
            shoulder, _, wrist = self.arm(p, t, pointing[4])
            d = wrist - shoulder
            target = pointing[3]
            row.update({
                "point_conf": float(np.clip(0.9 + rng.normal(0, 0.03), 0, 1)),
                "point_dir": [float(v) for v in d / np.linalg.norm(d)],
                "point_target_type": target[0] if target[0] in ("person", "hands", "object") else "elsewhere",
                "point_target_id": target[1] if target[0] in ("person", "hands", "object") else None,
            })
        return row

    def objects(self, fps: float = 10.0) -> Optional[pa.Table]:
        """The objects table (None when the scenario has no objects)."""
        if not self.object_labels:
            return None
        rows = []
        for f, t in enumerate(self.frame_times(fps)):
            for o, label in enumerate(self.object_labels):
                b = self.object_box(o, t)
                if b is None:
                    continue
                holder = next((p for p in range(len(self.people)) if (h := self._holding(p, t)) and h[0] == o
                               and not self._taking(p, t, o)), None)
                rows.append({"video_id": self.video_id, "frame_idx": f, "t": float(t), "object_id": o,
                             "label": label, "bbox": [float(v) for v in b], "conf": 0.9, "holder_id": holder})
        return pa.Table.from_pylist(rows, schema=OBJECTS_SCHEMA) if rows else OBJECTS_SCHEMA.empty_table()

    # --- ground truth --------------------------------------------------------------------------

    def _pieces(self, p: int, effective: bool = True) -> list[_Segment]:
        """The gaze timeline cut at scene cuts and absences (absent stretches removed). ``effective``
        moves each switch between two looks to the middle of the sweep, where the gaze crosses over."""
        bounds = sorted(set([0.0, self.duration] + self.cuts + [v for a in self.people[p].absent for v in a]))
        out = []
        for seg in self.timeline(p):
            for a, b in zip(bounds[:-1], bounds[1:]):
                s, e = max(seg.start, a), min(seg.end, b)
                if e > s and self.is_present(p, 0.5 * (s + e)):
                    out.append(_Segment(s, e, seg.target))
        # a look at someone who is out of view lands on nothing
        split = []
        for seg in out:
            gone = self.people[seg.target[1]].absent if seg.target[0] in ("person", "hands") else []
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
                    prev.end = seg.start = seg.start + 0.5 * self.transition
        return out

    def expected_events(self, config: EventConfig | None = None) -> list[TruthEvent]:
        """The events this scenario implies, by the definitions in events/__init__.py, in continuous time."""
        cfg = config or EventConfig()
        truth: list[TruthEvent] = []
        named = {p: [s for s in self._pieces(p) if s.target[0] in ("person", "hands", "object", "camera")]
                 for p in range(len(self.people))}
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

        n = len(self.people)
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
                    if end - e >= cfg.aversion_min_hold_seconds and e not in self.cuts:
                        aversions.append((e, end, averter, holder))
                barriers = self.cuts + [v for q in (a, b) for span_ in self.people[q].absent for v in span_]
                reported = []
                for s, e, x, y in _merge(contacts, cfg.mutual_gaze_merge_gap_seconds, barriers + elsewhere + [v[0] for v in aversions]):
                    if e - s >= cfg.min_mutual_gaze_seconds:
                        truth.append(TruthEvent("mutual_gaze", s, e, (a, b)))
                        reported.append(e)
                for e, end, averter, holder in aversions:
                    if any(abs(e - r) < 1e-9 for r in reported):  # only a reported contact can be broken
                        truth.append(TruthEvent("gaze_aversion", e, end, (a, b), initiator=averter, target_person=holder))
        truth += self._joint_attention(named, cfg)
        truth += self._following_and_capture(named, cfg)
        truth += self._shifts(cfg)
        truth += self._gestures(cfg)
        truth += _cross_truth(truth, cfg)
        return truth

    def _joint_attention(self, named, cfg) -> list[TruthEvent]:
        out = []
        targets = {s.target for segs in named.values() for s in segs if s.target[0] != "camera"}  # scene things only
        for target in sorted(targets, key=str):
            marks = sorted({v for segs in named.values() for s in segs if s.target == target for v in (s.start, s.end)})
            spans = []
            for a, b in zip(marks[:-1], marks[1:]):
                lookers = tuple(p for p, segs in named.items() if any(s.target == target and s.start <= a and b <= s.end for s in segs))
                if len(lookers) >= 2:
                    if spans and abs(spans[-1][1] - a) < 1e-9 and not any(abs(a - c) < 1e-9 for c in self.cuts):
                        spans[-1][1] = b
                    else:
                        spans.append([a, b, lookers])
            for a, b, lookers in spans:
                if b - a >= cfg.min_joint_attention_seconds:
                    out.append(TruthEvent("joint_attention", a, b, lookers, target=_key(target)))
        return out

    def _following_and_capture(self, named, cfg) -> list[TruthEvent]:
        onsets = []  # (target, time, person, end)
        for p, segs in named.items():
            pieces = self._pieces(p)
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
                            and not looked(p_f, max(t_l - cfg.following_unseen_before_seconds, self._shot_start(t_l)), t_f) \
                            and self.shot_at(t_l) == self.shot_at(t_f):
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

    def _shifts(self, cfg) -> list[TruthEvent]:
        out = []
        min_amplitude = cfg.shift_min_speed * cfg.shift_min_seconds
        for p in range(len(self.people)):
            pieces = self._pieces(p, effective=False)
            for prev, seg in zip(pieces[:-1], pieces[1:]):
                if abs(prev.end - seg.start) > 1e-9 or seg.start in self.cuts or prev.target == seg.target \
                        or "nobody" in (prev.target[0], seg.target[0]) \
                        or seg.end - seg.start < cfg.shift_min_seconds:  # the movement must finish in view
                    continue
                old = self._target_point(prev.target, seg.start, p) - self.head_centre(p)
                new = self._target_point(seg.target, seg.start + self.transition, p) - self.head_centre(p)
                amplitude = float(np.hypot(*(new - old)))
                if amplitude >= min_amplitude and amplitude / self.transition > cfg.shift_min_speed:
                    centre = seg.start + 0.5 * self.transition
                    half = 0.5 * max(self.transition, cfg.shift_min_seconds)
                    out.append(TruthEvent("sudden_gaze_shift", centre - half, centre + half, (p,), initiator=p))
        return out

    def _gestures(self, cfg) -> list[TruthEvent]:
        out = []
        for p, person in enumerate(self.people):
            for kind, start, end, target, hand, obj in person.gestures:
                if kind == "taking" or end - start < cfg.min_gesture_seconds:
                    continue
                people = {p} | ({target[1]} if target[0] in ("person", "hands") else set())
                out.append(TruthEvent(kind, start, end, tuple(sorted(people)), initiator=p, target=_key(target),
                                      target_person=target[1] if target[0] in ("person", "hands") else None))
        return out


def _norm_target(target) -> tuple:
    if target == "camera":
        return ("camera",)
    if isinstance(target, tuple) and target[0] in ("person", "hands", "object", "point") and len(target) == 2:
        return (target[0], target[1] if target[0] != "point" else tuple(target[1]))
    raise ValueError(f"unknown target {target!r}: use ('person', id), ('hands', id), ('object', id), 'camera', ('point', (x, y))")


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


# --- benchmark data --------------------------------------------------------------------------------


def random_tracks(n_people: int = 10, n_frames: int = 36_000, fps: float = 10.0, seed: int = 0,
                  n_shots: int = 20) -> pa.Table:
    """Large random tracks with realistic structure: each person holds a gaze target (a face, hands, the
    camera or nothing) for 1-6 s, points now and then, with noise, dropped gaze and absences."""
    rng = np.random.default_rng(seed)
    P, F = n_people, n_frames
    t = np.arange(F) / fps
    shot = np.searchsorted(np.sort(rng.choice(np.arange(1, F), n_shots - 1, replace=False)), np.arange(F), side="right")
    xs = np.linspace(0.08, 0.92, P)
    # gaze targets change every 1-6 s
    kind = np.empty((P, F), object)
    tid = np.full((P, F), -1, np.int64)
    pointing = np.zeros((P, F), bool)
    for p in range(P):
        f = 0
        while f < F:
            n = int(rng.uniform(1, 6) * fps)
            r = rng.random()
            if r < 0.45:
                q = int(rng.integers(P - 1)); q += q >= p
                kind[p, f:f + n], tid[p, f:f + n] = "person", q
            elif r < 0.7:
                kind[p, f:f + n], tid[p, f:f + n] = "hands", int(rng.integers(P))
            elif r < 0.75:
                kind[p, f:f + n] = "camera"
            else:
                kind[p, f:f + n] = "elsewhere"
            if rng.random() < 0.1:
                pointing[p, f:f + max(1, n // 2)] = True
            f += n
    kind = np.where(rng.random((P, F)) < 0.03, "unknown", kind)
    present = rng.random((P, F)) >= 0.02
    head = np.stack([xs - 0.03, np.full(P, 0.27), xs + 0.03, np.full(P, 0.33)], -1)  # (P, 4)
    target_x = np.where(tid >= 0, xs[np.clip(tid, 0, P - 1)], xs[:, None] + 0.3)
    target_y = np.where(kind == "hands", 0.5, np.where(kind == "person", 0.3, 0.9))
    gaze_point = np.stack([target_x, target_y], -1) + rng.normal(0, 0.005, (P, F, 2))
    pp, ff = np.nonzero(present)
    n = len(pp)
    k = kind[pp, ff]
    known = k != "unknown"
    body = np.stack([xs - 0.08, np.full(P, 0.25), xs + 0.08, np.full(P, 0.95)], -1)[pp]
    keypoints = np.zeros((n, 17, 3), np.float32)
    keypoints[..., 2] = 0.9
    keypoints[:, :, 0] = xs[pp][:, None]
    keypoints[:, :, 1] = np.linspace(0.3, 0.95, 17)[None, :]
    hands = np.stack([np.stack([xs - 0.04, np.full(P, 0.48), xs, np.full(P, 0.52)], -1),
                      np.stack([xs, np.full(P, 0.48), xs + 0.04, np.full(P, 0.52)], -1)], 1)[pp]  # (n, 2, 4)

    def fixed(values: np.ndarray, width: int) -> pa.Array:
        return pa.FixedSizeListArray.from_arrays(pa.array(values.astype(np.float32).ravel()), width)

    def lists(values: np.ndarray, width: int, mask: Optional[np.ndarray] = None) -> pa.Array:
        offsets = np.arange(0, len(values) * width + 1, width, dtype=np.int32)
        arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.astype(np.float32).ravel()))
        if mask is not None:
            arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.astype(np.float32).ravel()),
                                           mask=pa.array(~mask))
        return arr

    gp = gaze_point[pp, ff]
    hand_lists = pa.ListArray.from_arrays(pa.array(np.arange(0, 2 * n + 1, 2, dtype=np.int32)), fixed(hands.reshape(-1, 4), 4))
    point_rows = pointing[pp, ff]
    columns = {
        "video_id": pa.array(["random"] * n), "frame_idx": pa.array(ff.astype(np.int32)),
        "native_frame_idx": pa.array(ff.astype(np.int32)), "t": pa.array(t[ff]), "shot_id": pa.array(shot[ff].astype(np.int32)),
        "person_id": pa.array(pp.astype(np.int32)), "det_conf": pa.array(np.full(n, 0.9, np.float32)),
        "bbox": fixed(body, 4), "head_bbox": lists(head[pp], 4), "keypoints": lists(keypoints.reshape(n, -1), 51),
        "gaze_origin": lists(0.5 * (head[pp, :2] + head[pp, 2:]), 2), "gaze_dir": lists(np.tile([0.0, 0.0, 1.0], (n, 1)), 3, known),
        "gaze_source": pa.array(["face_mesh"] * n), "gaze_conf": pa.array(np.where(known, 0.8, 0.0).astype(np.float32)),
        "gaze_point": lists(gp, 2, known), "gaze_target_type": pa.array(k.astype(str)),
        "gaze_target_id": pa.array(np.where(np.isin(k, ["person", "hands"]), tid[pp, ff], 0).astype(np.int32),
                                   mask=~np.isin(k, ["person", "hands"])),
        "pointing": pa.array(point_rows), "point_dir": lists(np.tile([1.0, 0.0], (n, 1)), 2, point_rows),
        "point_conf": pa.array(np.where(point_rows, 0.8, 0.0).astype(np.float32)),
        "point_target_type": pa.array(np.where(point_rows, "person", None).tolist(), pa.string()),
        "point_target_id": pa.array(((pp + 1) % P).astype(np.int32), mask=~point_rows),
        "hand_bboxes": hand_lists, "hand_open": lists(np.full((n, 2), 0.2), 2),
    }
    for fld in TRACKS_SCHEMA:  # columns added to the schema later stay empty (all nullable)
        columns.setdefault(fld.name, pa.nulls(n, fld.type))
    return pa.Table.from_pydict(columns, schema=TRACKS_SCHEMA)


# --- comparing detections with the truth ----------------------------------------------------------


def temporal_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def _roles_agree(truth: TruthEvent, row: dict) -> bool:
    if tuple(row["persons_involved"]) != tuple(truth.persons):
        return False
    for mine, theirs in ((truth.initiator, "initiator_id"), (truth.leader, "leader_id"),
                         (truth.follower, "follower_id"), (truth.target_person, "target_person_id")):
        if mine is not None and row[theirs] != mine:
            return False
    return True


def match_events(truth: list[TruthEvent], events: pa.Table, event_types, min_iou: float = 0.7):
    """Pair truth events with detected rows of the same type, persons and roles at temporal IoU >= min_iou.
    Returns (missed truth events, unexpected detected rows) restricted to ``event_types``."""
    rows = [r for r in events.to_pylist() if r["event_type"] in event_types]
    used = set()
    missed = []
    for ev in (e for e in truth if e.event_type in event_types):
        best, best_iou = None, min_iou
        for i, r in enumerate(rows):
            if i in used or r["event_type"] != ev.event_type or not _roles_agree(ev, r):
                continue
            iou = temporal_iou((ev.start, ev.end), (r["start_time"], r["end_time"]))
            if iou >= best_iou:
                best, best_iou = i, iou
        if best is None:
            missed.append(ev)
        else:
            used.add(best)
    unexpected = [r for i, r in enumerate(rows) if i not in used]
    return missed, unexpected
