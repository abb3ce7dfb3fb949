"""The scene builder: people placed in a frame, gaze and gestures aimed at chosen targets over chosen
intervals, sampled at any fps into a tracks table (pipeline.schema.TRACKS_SCHEMA) plus an objects table.

Usage::

    sc = Scenario(duration=8.0)
    a, b = sc.add_person(0.3), sc.add_person(0.7)
    sc.look(a, ("person", b), 1.0, 5.0)
    sc.look(b, ("person", a), 1.5, 5.0)
    tracks = sc.tracks(fps=10)
    truth = sc.expected_events()          # list[TruthEvent]: tests/scenarios/truth.py

Targets: ("person", id) = the face, ("hands", id), ("object", id), "camera", ("point", (x, y)).
Gaze switches sweep from the old point to the new one over ``transition`` seconds (a real eye movement).
Geometry: each person stands at x with the head at y = 0.3, arms bent with hands at the belly at rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pyarrow as pa

from pipeline.schema import OBJECTS_SCHEMA, TRACKS_SCHEMA

if TYPE_CHECKING:
    from events.config import EventConfig
    from tests.scenarios.truth import TruthEvent

HEAD_Y, HEAD_HALF = 0.30, 0.04
SHOULDER_Y, SHOULDER_DX = 0.42, 0.06
ARM_LENGTH = 0.22
HAND_HALF = 0.02
OBJECT_HALF = 0.025
HEAD_MARGIN = 0.02  # the simulated ground truth counts a gaze point this close to a box as on it


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
            "shot_id": self.shot_at(t), "shot_start_t": self._shot_start(t), "person_id": p, "det_conf": 0.9,
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

    # --- ground truth (tests/scenarios/truth.py) -----------------------------------------------

    def expected_events(self, config: EventConfig | None = None) -> list[TruthEvent]:
        """The events this scenario implies, by the definitions in events/__init__.py, in continuous time."""
        from tests.scenarios.truth import expected_events  # truth builds on this module: imported on use

        return expected_events(self, config)


def _norm_target(target) -> tuple:
    if target == "camera":
        return ("camera",)
    if isinstance(target, tuple) and target[0] in ("person", "hands", "object", "point") and len(target) == 2:
        return (target[0], target[1] if target[0] != "point" else tuple(target[1]))
    raise ValueError(f"unknown target {target!r}: use ('person', id), ('hands', id), ('object', id), 'camera', ('point', (x, y))")

