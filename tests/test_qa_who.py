"""Items that name the one person looking at something (T1 "who") only when everyone else present is seen
looking clearly away from it (qa_gen/looks.py).

yakhyo_classroom_group: "Who is looking at the camera between 1.0 and 2.0 seconds?" named one girl while
another, smiling into the lens, was read 11-29 degrees low ("elsewhere") and so had no event: the item was
wrong. The absence of an event is not evidence that someone looks away.
"""
from __future__ import annotations

import numpy as np
import pytest

from events.geometry import camera_sight_lines
from pipeline.schema import OBJECTS_SCHEMA, TRACKS_SCHEMA, table_from_rows
from qa_gen.config import QAConfig
from qa_gen.events_view import Target
from qa_gen.generate import generate_clip_qa
from qa_gen.looks import LookGeometry
from tests.test_qa_synthetic import ASPECT, STEP, Scene, events_table, gaze_direction, tracks_table

CAMERA = ("camera",)


def _toward_lens(origin, turned_deg: float = 0.0) -> list[float]:
    """The unit gaze from ``origin`` into the lens, turned ``turned_deg`` to the side (about the camera's y axis)."""
    d = -camera_sight_lines(np.array([origin]), ASPECT)[0]
    d /= np.linalg.norm(d)
    a = np.radians(turned_deg)
    return [float(d[0] * np.cos(a) + d[2] * np.sin(a)), float(d[1]), float(-d[0] * np.sin(a) + d[2] * np.cos(a))]


def _rows(origins: dict[int, tuple], directions: dict[int, list], times=(0.0, 0.5, 1.0)) -> list[dict]:
    rows = []
    for f, t in enumerate(times):
        for p, origin in origins.items():
            x, y = origin
            rows.append({"video_id": "v", "frame_idx": f, "native_frame_idx": f, "t": t, "shot_id": 0, "person_id": p,
                         "det_conf": 0.9, "bbox": [x - 0.05, y - 0.05, x + 0.05, y + 0.6],
                         "head_bbox": [x - 0.04, y - 0.05, x + 0.04, y + 0.05],
                         "hand_bboxes": [[x + 0.05, y + 0.3, x + 0.09, y + 0.34]],
                         "gaze_origin": list(origin), "gaze_dir": directions.get(p), "gaze_conf": 0.8,
                         "gaze_target_type": "unknown", "pointing": False, "point_conf": 0.0})
    return rows


def test_a_look_counts_as_away_only_beyond_the_margin() -> None:
    origins = {0: (0.3, 0.4), 1: (0.7, 0.4)}
    margin = QAConfig().who_margin_deg
    for turned, may in ((0.0, True), (20.0, True), (margin + 5, False), (-(margin + 5), False)):
        looks = LookGeometry(table_from_rows(_rows(origins, {0: _toward_lens(origins[0], turned)}), TRACKS_SCHEMA), ASPECT)
        assert looks.may_look_at(0, Target("camera"), 0.0, 1.0, margin, STEP / 2) is may, turned
    # toward person 1's head (straight right in the image), or straight up, away from them
    right, up = [0.9, 0.0, 0.436], [0.0, -0.9, 0.436]
    looks = LookGeometry(table_from_rows(_rows(origins, {0: right}), TRACKS_SCHEMA), ASPECT)
    assert looks.may_look_at(0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    assert looks.may_look_at(0, Target("hands", 1), 0.0, 1.0, margin, STEP / 2)  # his hands lie that way too
    looks = LookGeometry(table_from_rows(_rows(origins, {0: up}), TRACKS_SCHEMA), ASPECT)
    assert not looks.may_look_at(0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    assert not looks.may_look_at(0, Target("camera"), 0.0, 1.0, margin, STEP / 2)
    # no direction in one frame, an object the tracks cannot place, nobody in the window: never ruled out
    rows = _rows(origins, {0: up})
    rows[0]["gaze_dir"] = None  # person 0 at 0 s
    looks = LookGeometry(table_from_rows(rows, TRACKS_SCHEMA), ASPECT)
    assert looks.may_look_at(0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    assert not looks.may_look_at(0, Target("person", 1), 0.5, 1.0, margin, STEP / 2)
    assert LookGeometry(table_from_rows(_rows(origins, {0: up}), TRACKS_SCHEMA), ASPECT).may_look_at(
        0, Target("object", label="cup"), 0.0, 1.0, margin, STEP / 2)
    assert looks.may_look_at(0, Target("camera"), 5.0, 6.0, margin, STEP / 2)
    with pytest.raises(ValueError, match="aspect"):
        LookGeometry(table_from_rows(rows, TRACKS_SCHEMA), 0.0)


def _who_items(others_turned_deg: float, aspect) -> list[dict]:
    """Five people for 3 s; person 0 looks into the lens throughout, the others elsewhere (no event), their
    gaze turned ``others_turned_deg`` from the lens."""
    n, frames = 5, 6
    scene = Scene("v", n, frames, [[True] * frames for _ in range(n)], [[CAMERA] * frames] + [[None] * frames] * (n - 1))
    origins = {p: (0.1 + 0.2 * p, 0.4) for p in range(n)}
    directions = {p: _toward_lens(origins[p], 0.0 if p == 0 else others_turned_deg) for p in range(n)}
    rows = tracks_table(scene).to_pylist()
    for r in rows:
        r["gaze_origin"], r["gaze_dir"] = list(origins[r["person_id"]]), directions[r["person_id"]]
    tracks = table_from_rows(rows, TRACKS_SCHEMA)
    qa, _ = generate_clip_qa(events_table(scene), tracks, QAConfig(), seed=0, clip_duration=scene.duration, aspect=aspect)
    return [r for r in qa.to_pylist() if r["template"] == "T1.who"]


def test_who_looks_at_the_camera_only_when_everyone_else_is_seen_looking_away() -> None:
    items = _who_items(60.0, ASPECT)
    assert len(items) == 1 and items[0]["answer_text"] == "Person 0" and "camera" in items[0]["question"]
    assert _who_items(15.0, ASPECT) == []  # someone else's look is within the margin of the lens
    assert _who_items(60.0, None) == []  # without the frame's aspect the looks cannot be read


GROUP = Scene("v", 4, 6, [[True] * 6 for _ in range(4)], [[("person", 2)] * 6] * 2 + [[None] * 6] * 2)


def _group_answer(bystander: str) -> str | None:
    """Persons 0 and 1 look at person 2 together for 3 s (the four stand round a circle); person 3 stands by
    and looks ``bystander``: "away" (out of the circle), "at 2" (toward person 2's head, though no event says
    so) or "unread" (no direction). The T6 open answer, None when there is no T6 item."""
    rows = tracks_table(GROUP).to_pylist()
    for r in rows:
        if r["person_id"] == 3 and bystander != "away":
            r["gaze_dir"] = gaze_direction(GROUP, 3, ("person", 2)) if bystander == "at 2" else None
    tracks = table_from_rows(rows, TRACKS_SCHEMA)
    qa, _ = generate_clip_qa(events_table(GROUP), tracks, QAConfig(), seed=0, clip_duration=GROUP.duration, aspect=ASPECT)
    items = [r["answer_text"] for r in qa.to_pylist() if r["template"] == "T6.group"]
    assert len(items) <= 1
    return items[0] if items else None


def test_only_people_seen_looking_away_take_no_part_in_shared_attention() -> None:
    """yakhyo_classroom_group: "Person 0 and Person 3 look at Person 1 together ... Person 2, Person 4, Person 5
    and Person 6 take no part in it" named a boy whose head had left the frame, with no gaze read at all."""
    away = _group_answer("away")
    assert "Person 0 and Person 1 look at Person 2 together" in away and "Person 3 takes no part" in away
    # unread, or looking toward person 2: nothing can be said of him, and the one sentence left is too short an
    # answer (2-4 sentences), so there is no item rather than a false one
    assert _group_answer("unread") is None and _group_answer("at 2") is None


def test_eye_contact_during_a_gesture_names_only_people_seen_apart() -> None:
    """C2 ("While Person 0 points at Person 1, who makes eye contact with Person 0?"): its options say who does
    and who does not. Person 0's own gaze is not read at 3.0 s; a person whose gaze is not read either is left
    out of the options: "Person 1, not Person 3" would claim an eye contact that nobody saw did not happen."""
    n, frames = 5, 10
    looks = [[("person", 1)] * frames, [("person", 0)] * frames] + [[None] * frames] * 3
    scene = Scene("v", n, frames, [[True] * frames for _ in range(n)], looks,
                  gestures=[(0, "pointing", ("person", 1), 2, 7)])

    def c2_options(unread: bool) -> list[str]:
        rows = tracks_table(scene).to_pylist()
        for r in rows:
            if (unread and r["person_id"] == 3) or (r["person_id"] == 0 and r["t"] == 3.0):
                r["gaze_dir"] = None
        qa, _ = generate_clip_qa(events_table(scene), table_from_rows(rows, TRACKS_SCHEMA), QAConfig(formats=("mcq",)),
                                 seed=0, clip_duration=scene.duration, aspect=ASPECT)
        return [o for r in qa.to_pylist() if r["template"] == "C2.who" for o in r["options"]]

    assert any("Person 3" in o for o in c2_options(unread=False))  # seen looking away: a fair "not"
    assert c2_options(unread=True) and not any("Person 3" in o for o in c2_options(unread=True))


def test_who_turns_to_a_pointed_object_names_only_people_seen_looking_away_from_it() -> None:
    """C3 ("After Person 0 points at the cup at 1.0 seconds, who looks at the cup within 3.0 seconds?"): its
    answer says who does not, so it names only the responders and people seen looking away from the cup, which
    the objects table places (a person whose gaze is not read, or a cup that cannot be placed, is left out)."""
    n, frames, cup = 5, 12, ("object", "cup")
    looks = [[cup] * frames, [None] * 3 + [cup] * 9, [None] * 3 + [cup] * 9, [None] * frames, [None] * frames]
    scene = Scene("v", n, frames, [[True] * frames for _ in range(n)], looks, gestures=[(0, "pointing", cup, 2, 7)])
    # the people stand round a circle and look out of it when not at the cup, which sits in its middle
    objects = table_from_rows([{"video_id": "v", "frame_idx": f, "t": f * STEP, "object_id": 0, "label": "cup",
                                "bbox": [0.48, 0.48, 0.52, 0.52], "conf": 0.9} for f in range(frames)], OBJECTS_SCHEMA)

    def c3_text(unread: bool, placed: bool = True) -> str:
        rows = tracks_table(scene).to_pylist()
        for r in rows:
            if unread and r["person_id"] == 4:
                r["gaze_dir"] = None
        qa, _ = generate_clip_qa(events_table(scene), table_from_rows(rows, TRACKS_SCHEMA),
                                 QAConfig(formats=("mcq", "open_ended")), seed=0, clip_duration=scene.duration,
                                 aspect=ASPECT, objects=objects if placed else None)
        items = [r for r in qa.to_pylist() if r["category"] == "C3"]
        assert items
        return " ".join(r["answer_text"] + " ".join(r["options"]) + " ".join(s["text"] for s in r["reasoning_trace"])
                        for r in items)

    assert "Person 3" in c3_text(unread=False) and "Person 4" in c3_text(unread=False)
    assert "Person 3" in c3_text(unread=True) and "Person 4" not in c3_text(unread=True)
    assert "Person 3" not in c3_text(unread=False, placed=False)


def test_a_look_is_near_a_target_throughout_only_when_measured_near_it_at_every_sample() -> None:
    origins = {0: (0.3, 0.4), 1: (0.7, 0.4)}
    margin = QAConfig().who_margin_deg
    looks = LookGeometry(table_from_rows(_rows(origins, {0: _toward_lens(origins[0], 5.0)}), TRACKS_SCHEMA), ASPECT)
    assert looks.near_throughout(0, Target("camera"), 0.0, 1.0, margin, STEP / 2)
    looks = LookGeometry(table_from_rows(_rows(origins, {0: _toward_lens(origins[0], margin + 5)}), TRACKS_SCHEMA), ASPECT)
    assert not looks.near_throughout(0, Target("camera"), 0.0, 1.0, margin, STEP / 2)
    right, up = [0.9, 0.0, 0.436], [0.0, -0.9, 0.436]
    looks = LookGeometry(table_from_rows(_rows(origins, {0: right}), TRACKS_SCHEMA), ASPECT)
    assert looks.near_throughout(0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    # one sample turned away, one without a direction, a target the rows cannot place: not near throughout
    rows = _rows(origins, {0: right})
    rows[2]["gaze_dir"] = up
    assert not LookGeometry(table_from_rows(rows, TRACKS_SCHEMA), ASPECT).near_throughout(
        0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    rows[2]["gaze_dir"] = None
    assert not LookGeometry(table_from_rows(rows, TRACKS_SCHEMA), ASPECT).near_throughout(
        0, Target("person", 1), 0.0, 1.0, margin, STEP / 2)
    assert not looks.near_throughout(0, Target("object", label="cup"), 0.0, 1.0, margin, STEP / 2)
    assert not looks.near_throughout(0, Target("person", 1), 5.0, 6.0, margin, STEP / 2)


def test_a_look_between_the_lens_and_a_face_offers_neither_as_a_false_option() -> None:
    """zidane.jpg's man behind looks between the lens and the other man's face: his reads say "the camera" on some
    samples and "Person 0" on others, and an item on each offered the other as the wrong option. A T1 option the
    look is measured near throughout is no false option."""
    n, frames = 2, 6
    scene = Scene("v", n, frames, [[True] * frames for _ in range(n)], [[CAMERA] * frames] + [[None] * frames] * (n - 1))
    origins = {0: (0.77, 0.22), 1: (0.48, 0.38)}  # zidane.jpg's two heads
    between = list(np.array([-0.447, 0.157, -0.880]) / np.linalg.norm([-0.447, 0.157, -0.880]))  # his read
    rows = tracks_table(scene).to_pylist()
    for r in rows:
        p = r["person_id"]
        r["gaze_origin"] = list(origins[p])
        r["head_bbox"] = [origins[p][0] - 0.05, origins[p][1] - 0.08, origins[p][0] + 0.05, origins[p][1] + 0.08]
        # person 0 looks 12 degrees off the lens, in the image 12 degrees off person 1's face; person 1 looks down
        r["gaze_dir"] = between if p == 0 else [0.0, 1.0, 0.0]

    def offered(with_looks: bool) -> list[list[str]]:
        tracks = table_from_rows(rows, TRACKS_SCHEMA)
        qa, _ = generate_clip_qa(events_table(scene), tracks, QAConfig(), seed=0, clip_duration=scene.duration,
                                 aspect=ASPECT if with_looks else None)
        return [r["options"] for r in qa.to_pylist() if r["template"] == "T1.target" and "Person 0" in r["question"]]

    looks = LookGeometry(table_from_rows(rows, TRACKS_SCHEMA), ASPECT)
    assert looks.near_throughout(0, Target("person", 1), 0.0, 3.0, QAConfig().who_margin_deg, STEP / 2)
    assert looks.near_throughout(0, Target("camera"), 0.0, 3.0, QAConfig().who_margin_deg, STEP / 2)
    for options in offered(True):
        assert not any(o.endswith(") Person 1") for o in options), options
    assert any(o.endswith(") Person 1") for options in offered(False) for o in options)  # without the looks: offered
