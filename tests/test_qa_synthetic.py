"""Synthetic scenes with known ground truth for the QA tests: per-person gaze timelines and gestures on
the 0.5 s grid, from which every event type is derived by its definition (DESIGN.md §5, §11), so the
events table is self-consistent the way a correct events stage's output is. Also the matching tracks
table (who is present when). No tests live here; test_qa_*.py import it.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pyarrow as pa

from events.geometry import camera_sight_lines
from pipeline.schema import EVENTS_SCHEMA, TRACKS_SCHEMA, table_from_rows

STEP = 0.5
ASPECT = 16 / 9  # the frames' width / height: give it to generate_qa so it can read the looks in tracks_table
OBJECT_LABELS = ("cup", "book", "phone", "laptop", "ball", "bottle")
GESTURES = ("pointing", "reaching", "showing", "giving")

Target = Optional[tuple]  # ("person", id) | ("hands", id) | ("object", label) | ("camera",) | None


@dataclass
class Scene:
    video_id: str
    n_people: int
    n_frames: int
    present: list[list[bool]]
    gaze: list[list[Target]]
    gestures: list[tuple[int, str, Target, int, int]] = field(default_factory=list)  # (actor, type, target, f0, f1)

    @property
    def duration(self) -> float:
        return self.n_frames * STEP


def _target_columns(target: Target) -> dict:
    """The events-table encoding of a target (as events/targets.py writes it)."""
    if target is None:
        return {"target_type": "none", "target_person_id": None, "target_label": None}
    kind = target[0]
    if kind == "person":
        return {"target_type": "person", "target_person_id": target[1], "target_label": None}
    if kind == "hands":
        return {"target_type": "person", "target_person_id": target[1], "target_label": "hands"}
    if kind == "object":
        return {"target_type": "object", "target_person_id": None, "target_label": target[1]}
    return {"target_type": "none", "target_person_id": None, "target_label": "camera"}


def _details_target(target: Target) -> dict:
    if target is None:
        return {"target_type": "elsewhere", "target_id": None}
    if target[0] in ("person", "hands"):
        return {"target_type": target[0], "target_id": target[1]}
    if target[0] == "object":
        return {"target_type": "object", "target_id": OBJECT_LABELS.index(target[1])}
    return {"target_type": "camera", "target_id": None}


def random_scene(seed: int, n_people: Optional[int] = None, seconds: Optional[float] = None) -> Scene:
    rng = random.Random(seed)
    n = n_people or rng.randint(2, 5)
    n_frames = int((seconds or rng.choice([20, 30, 45, 60])) / STEP)
    objects = rng.sample(OBJECT_LABELS, 2)
    present = [[True] * n_frames for _ in range(n)]
    if n >= 3 and rng.random() < 0.5:  # someone leaves early: their absence must be respected
        leave = int(n_frames * rng.uniform(0.4, 0.8))
        for f in range(leave, n_frames):
            present[n - 1][f] = False

    def random_target(p: int) -> Target:
        r = rng.random()
        others = [q for q in range(n) if q != p]
        if r < 0.45:
            return ("person", rng.choice(others))
        if r < 0.58:
            return ("hands", rng.choice(others))
        if r < 0.8:
            return ("object", rng.choice(objects))
        if r < 0.88:
            return ("camera",)
        return None

    gaze: list[list[Target]] = [[None] * n_frames for _ in range(n)]
    for p in range(n):
        f = 0
        while f < n_frames:
            length = rng.randint(2, 10)
            target = random_target(p)
            for k in range(f, min(n_frames, f + length)):
                gaze[p][k] = target
            f += length
    # inject the patterns the events stage detects, so every event type occurs
    for _ in range(rng.randint(1, 3)):  # eye contact, sometimes broken off by one side
        a, b = rng.sample(range(n), 2)
        f0 = rng.randrange(0, max(1, n_frames - 12))
        length = rng.randint(3, 8)
        for k in range(f0, min(n_frames, f0 + length)):
            gaze[a][k], gaze[b][k] = ("person", b), ("person", a)
        if rng.random() < 0.6 and f0 + length + 3 < n_frames:
            for k in range(f0 + length, f0 + length + 3):
                gaze[a][k], gaze[b][k] = ("object", objects[0]), ("person", a)
    for _ in range(rng.randint(1, 2)):  # gaze following
        a, b = rng.sample(range(n), 2)
        target = ("object", rng.choice(objects))
        f0 = rng.randrange(1, max(2, n_frames - 12))
        lag = rng.randint(1, 4)
        for k in range(f0, min(n_frames, f0 + 8)):
            gaze[a][k] = target
        for k in range(f0 + lag, min(n_frames, f0 + lag + 6)):
            gaze[b][k] = target
    if n >= 3 and rng.random() < 0.7:  # attention capture
        f0 = rng.randrange(1, max(2, n_frames - 8))
        target = ("object", rng.choice(objects))
        for p in rng.sample(range(n), 3):
            for k in range(f0, min(n_frames, f0 + 5)):
                gaze[p][k] = target
    for p in range(n):
        for f in range(n_frames):
            t = gaze[p][f]
            if not present[p][f] or (t is not None and t[0] in ("person", "hands") and not present[t[1]][f]):
                gaze[p][f] = None

    gestures = []
    busy = [[False] * n_frames for _ in range(n)]

    def add_gesture(actor: int, kind: str, target: Target, f0: int, length: int) -> bool:
        f1 = min(n_frames - 1, f0 + length - 1)
        if f0 >= n_frames or f1 < f0 or any(busy[actor][f0 : f1 + 1]):
            return False
        if not all(present[actor][f0 : f1 + 1]):
            return False
        if target[0] in ("person", "hands") and not all(present[target[1]][f0 : f1 + 1]):
            return False
        for k in range(f0, f1 + 1):
            busy[actor][k] = True
        gestures.append((actor, kind, target, f0, f1))
        return True

    for p in range(n):
        for _ in range(rng.randint(0, 3)):
            kind = rng.choices(GESTURES, weights=[4, 2, 2, 2])[0]
            others = [q for q in range(n) if q != p]
            if kind in ("giving", "showing") or rng.random() < 0.5:
                target = ("person", rng.choice(others))
            else:
                target = ("object", rng.choice(objects))
            f0 = rng.randrange(0, n_frames)
            if add_gesture(p, kind, target, f0, rng.randint(2, 6)) and target[0] == "person" and rng.random() < 0.4:
                add_gesture(target[1], rng.choice(GESTURES), ("person", p), f0 + rng.randint(1, 6), rng.randint(2, 4))
    return Scene(f"synth_{seed}", n, n_frames, present, gaze, sorted(gestures, key=lambda g: (g[3], g[0])))


def _runs(mask: list[bool]) -> list[tuple[int, int]]:
    out, start = [], None
    for f, on in enumerate(mask + [False]):
        if on and start is None:
            start = f
        elif not on and start is not None:
            out.append((start, f - 1))
            start = None
    return out


def derive_events(scene: Scene) -> list[dict]:
    """Every event type, by definition, from the scene's timelines (rows without ids yet)."""
    n, F, g = scene.n_people, scene.n_frames, scene.gaze
    rows: list[dict] = []

    def add(source, etype, f0, f1, persons, **extra):
        row = {"video_id": scene.video_id, "source": source, "event_type": etype, "start_time": f0 * STEP,
               "end_time": (f1 + 1) * STEP, "start_frame": f0, "end_frame": f1, "shot_id": 0,
               "persons_involved": sorted(persons), "confidence": 0.9, "parent_event_ids": [], "details": "{}"}
        row.update(extra)
        rows.append(row)
        return row

    targets = sorted({t for p in range(n) for t in g[p] if t is not None}, key=str)
    gaze_at = {}
    for p in range(n):
        for t in targets:
            for f0, f1 in _runs([g[p][f] == t for f in range(F)]):
                gaze_at[(p, t, f0)] = add("gaze", "gaze_at", f0, f1, [p], initiator_id=p, **_target_columns(t),
                                          details=json.dumps(_details_target(t)))
    mutual = []
    for a in range(n):
        for b in range(a + 1, n):
            mask = [g[a][f] == ("person", b) and g[b][f] == ("person", a) for f in range(F)]
            for f0, f1 in _runs(mask):
                if f1 - f0 + 1 >= 2:
                    mutual.append(add("gaze", "mutual_gaze", f0, f1, [a, b], target_type="person"))
                    e = f1 + 1
                    if e < F:
                        for averter, holder in ((a, b), (b, a)):
                            if g[holder][e] == ("person", averter) and g[averter][e] != ("person", holder) \
                                    and g[averter][e] is not None:
                                h = e
                                while h + 1 < F and g[holder][h + 1] == ("person", averter):
                                    h += 1
                                add("gaze", "gaze_aversion", e, h, [a, b], initiator_id=averter,
                                    target_type="person", target_person_id=holder)
    for t in targets:
        count = [sum(g[p][f] == t for p in range(n)) for f in range(F)]
        for f0, f1 in _runs([c >= 2 for c in count]):
            persons = [p for p in range(n) if g[p][f0] == t]
            add("gaze", "joint_attention", f0, f1, persons, **_target_columns(t))
    onsets = [(p, t, f) for p in range(n) for f in range(1, F) for t in [g[p][f]]
              if t is not None and g[p][f - 1] != t and g[p][f - 1] is not None]
    for b, t, fb in onsets:
        leaders = [(fa, a) for a, ta, fa in onsets if ta == t and a != b and 1 <= fb - fa <= 4 and g[a][fb] == t]
        if leaders:
            fa, a = max(leaders)
            add("gaze", "gaze_following", fa, fb, [a, b], initiator_id=a, leader_id=a, follower_id=b,
                lag_seconds=(fb - fa) * STEP, **_target_columns(t))
    used = set()
    for p, t, f in onsets:
        group = sorted({q for q, tq, fq in onsets if tq == t and 0 <= fq - f <= 1})
        if len(group) >= 3 and (t, f) not in used and t[0] != "person":
            used.update((t, f + k) for k in range(2))
            end = min(min(next((k for k in range(f + 1, F) if g[q][k] != t), F) for q in group) - 1, F - 1)
            add("gaze", "attention_capture", f, max(end, f + 1), group, **_target_columns(t))
    rng = random.Random(scene.video_id)
    for p, t, f in onsets:
        if rng.random() < 0.2:
            add("gaze", "sudden_gaze_shift", f - 1, f, [p], initiator_id=p, target_type="none")
    gesture_rows = []
    for actor, kind, target, f0, f1 in scene.gestures:
        persons = [actor] + ([target[1]] if target[0] in ("person", "hands") else [])
        gesture_rows.append(add("gesture", kind, f0, f1, persons, initiator_id=actor, **_target_columns(target)))
    # cross-modal events, parents filled in once ids exist
    gaze_rows = [r for r in rows if r["source"] == "gaze"]
    for gr in gesture_rows:
        for er in gaze_rows:
            if er["event_type"] not in ("mutual_gaze", "joint_attention", "gaze_following"):
                continue
            if not set(er["persons_involved"]) & set(gr["persons_involved"]):
                continue
            overlap = er["start_time"] < gr["end_time"] and gr["start_time"] < er["end_time"]
            gap = max(er["start_time"] - gr["end_time"], gr["start_time"] - er["end_time"])
            if overlap or gap <= 3.0:
                f0, f1 = min(er["start_frame"], gr["start_frame"]), max(er["end_frame"], gr["end_frame"])
                add("cross", "co_occur" if overlap else "adjacent", f0, f1,
                    sorted(set(er["persons_involved"]) | set(gr["persons_involved"])), _parents=[id(er), id(gr)])
            if er["event_type"] == "mutual_gaze" and overlap and gr["initiator_id"] in er["persons_involved"]:
                add("cross", "eye_contact_during_gesture", max(er["start_frame"], gr["start_frame"]),
                    min(er["end_frame"], gr["end_frame"]), er["persons_involved"], initiator_id=gr["initiator_id"],
                    _parents=[id(er), id(gr)])
        for key, er in gaze_at.items():
            same_target = (er["target_type"], er["target_person_id"], er["target_label"]) == (
                gr["target_type"], gr["target_person_id"], gr["target_label"])
            if not same_target:
                continue
            if er["initiator_id"] == gr["initiator_id"] and er["start_time"] < gr["end_time"] and gr["start_time"] < er["end_time"]:
                add("cross", "gaze_gesture_alignment", max(er["start_frame"], gr["start_frame"]),
                    min(er["end_frame"], gr["end_frame"]), [gr["initiator_id"]], initiator_id=gr["initiator_id"],
                    _parents=[id(er), id(gr)], **{k: gr[k] for k in ("target_type", "target_person_id", "target_label")})
            elif er["initiator_id"] != gr["initiator_id"] and gr["start_time"] < er["start_time"] <= gr["start_time"] + 3.0:
                add("cross", "gaze_follows_gesture", gr["start_frame"], er["start_frame"],
                    [gr["initiator_id"], er["initiator_id"]], leader_id=gr["initiator_id"], follower_id=er["initiator_id"],
                    lag_seconds=er["start_time"] - gr["start_time"], _parents=[id(er), id(gr)],
                    **{k: gr[k] for k in ("target_type", "target_person_id", "target_label")})
    return rows


def events_table(scene: Scene) -> pa.Table:
    rows = derive_events(scene)
    rows.sort(key=lambda r: (r["start_time"], r["event_type"], r["persons_involved"], r["end_time"]))
    ids = {id(r): i for i, r in enumerate(rows)}
    for i, r in enumerate(rows):
        r["event_id"] = i
        r["parent_event_ids"] = sorted(ids[p] for p in r.pop("_parents", []))
    return table_from_rows(rows, EVENTS_SCHEMA)


def _head(scene: Scene, p: int) -> np.ndarray:
    """Where person ``p``'s head is (normalised image coordinates): the people stand round a circle (in
    pixels), so that from each of them the others lie at least 180 / n degrees apart (an inscribed angle),
    and a look at one is a look away from the rest."""
    angle = 2 * np.pi * p / scene.n_people + 0.3
    return np.array([0.5 + 0.3 * np.cos(angle) / ASPECT, 0.5 + 0.3 * np.sin(angle)])


def gaze_direction(scene: Scene, p: int, target: Target) -> list[float]:
    """A camera-frame gaze that goes where ``target`` is in the frame: toward another's head (or hands, held
    before them), into the lens for the camera; out of the circle, away from every head, when the look is
    elsewhere or at something the tracks do not place (one's own hands, an object). A direction with no depth
    part projects to the same image direction from any origin."""
    if target is not None and target[0] == "camera":
        toward = -camera_sight_lines(_head(scene, p)[None], ASPECT)[0]
        return (toward / np.linalg.norm(toward)).tolist()
    if target is not None and target[0] in ("person", "hands") and target[1] != p:
        step = (_head(scene, target[1]) - _head(scene, p)) * [ASPECT, 1.0]
    else:
        step = (_head(scene, p) - 0.5) * [ASPECT, 1.0]
    step = step / np.linalg.norm(step)
    return [float(step[0]), float(step[1]), 0.0]


def tracks_table(scene: Scene) -> pa.Table:
    """Who is present when, where (``ASPECT`` frames), and which way each one looks."""
    rows = []
    for f in range(scene.n_frames):
        for p in range(scene.n_people):
            if not scene.present[p][f]:
                continue
            t = scene.gaze[p][f]
            x, y = _head(scene, p).tolist()
            rows.append({
                "video_id": scene.video_id, "frame_idx": f, "native_frame_idx": f * 15, "t": f * STEP, "shot_id": 0,
                "person_id": p, "det_conf": 0.9, "bbox": [x - 0.04, y - 0.05, x + 0.04, min(1.0, y + 0.35)],
                "head_bbox": [x - 0.02, y - 0.04, x + 0.02, y + 0.04],
                "gaze_origin": [x, y], "gaze_dir": gaze_direction(scene, p, t),
                "gaze_conf": 0.8, "gaze_target_type": "elsewhere" if t is None else t[0],
                "gaze_target_id": t[1] if t is not None and t[0] in ("person", "hands") else None,
                "pointing": False, "point_conf": 0.0,
            })
    return table_from_rows(rows, TRACKS_SCHEMA)


def scene_tables(seed: int, **kwargs) -> tuple[pa.Table, pa.Table, float]:
    """(events, tracks, duration) of ``random_scene(seed)``."""
    scene = random_scene(seed, **kwargs)
    return events_table(scene), tracks_table(scene), scene.duration
