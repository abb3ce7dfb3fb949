"""QA over a video of several camera shots (a hard cut, as in a film or the shared clips joined one after
another): nothing is read across the cut. Synthetic known answers: two people in shot 0 (0-5 s), two others
in shot 1 (from 5 s, the first sampled frame after the cut), events as the events stage writes them."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.schema import EVENTS_SCHEMA, table_from_rows
from qa_gen import generate_qa
from qa_gen.config import QAConfig
from qa_gen.events_view import Presence, clip_to_shots, read_events, shot_bounds

CUT = 5.0
DURATION = 10.0


def _tracks(one_shot: bool = False) -> pa.Table:
    rows = []
    for t in np.arange(0.0, DURATION, 0.5):
        people, shot = ((0, 1), 0) if t < CUT else ((2, 3), 1)
        rows += [{"video_id": "film", "t": float(t), "shot_id": 0 if one_shot else shot, "person_id": p}
                 for p in people]
    return pa.Table.from_pylist(rows)


def _events() -> pa.Table:
    common = {"video_id": "film", "initiator_id": None, "target_type": "person", "target_person_id": None,
              "target_label": None, "leader_id": None, "follower_id": None, "lag_seconds": None,
              "confidence": 0.9, "start_frame": 0, "end_frame": 0, "parent_event_ids": [], "details": "{}",
              "source": "gaze"}
    rows = [  # shot 0: eye contact seen from its start (1.0 s) to its end (3.0 s)
        {**common, "event_id": 0, "event_type": "gaze_at", "start_time": 1.0, "end_time": 3.0,
         "persons_involved": [0], "initiator_id": 0, "target_person_id": 1},
        {**common, "event_id": 1, "event_type": "gaze_at", "start_time": 1.0, "end_time": 3.0,
         "persons_involved": [1], "initiator_id": 1, "target_person_id": 0},
        {**common, "event_id": 2, "event_type": "mutual_gaze", "start_time": 1.0, "end_time": 3.0,
         "persons_involved": [0, 1]},
        # shot 1: eye contact from the cut's first frame: it may have begun before the camera showed it
        {**common, "event_id": 3, "event_type": "gaze_at", "start_time": CUT, "end_time": 8.0,
         "persons_involved": [2], "initiator_id": 2, "target_person_id": 3},
        {**common, "event_id": 4, "event_type": "gaze_at", "start_time": CUT, "end_time": 8.0,
         "persons_involved": [3], "initiator_id": 3, "target_person_id": 2},
        {**common, "event_id": 5, "event_type": "mutual_gaze", "start_time": CUT, "end_time": 8.0,
         "persons_involved": [2, 3]},
        # a look of shot 0 closed one sample after the shot's last frame (4.5 s)
        {**common, "event_id": 6, "event_type": "gaze_at", "start_time": 3.5, "end_time": 5.5,
         "persons_involved": [0], "initiator_id": 0, "target_person_id": 1},
    ]
    return table_from_rows(rows, EVENTS_SCHEMA)


def test_shot_cuts_and_presence_stop_at_the_cut():
    tracks = _tracks()
    assert shot_bounds(tracks) == [(0.0, 4.5), (CUT, 9.5)]
    assert shot_bounds(_tracks(one_shot=True)) == [(0.0, 9.5)]
    presence = Presence.from_tracks(tracks, tolerance=0.5)
    assert presence.cuts == (CUT,)
    # Person 2 is first seen at the cut: not present just before it, though within the sampling tolerance
    assert not presence.present(2, 4.0, 4.5)
    assert not presence.present(2, 4.0, CUT)  # a window that ends at the cut belongs to the shot before it
    assert presence.present(2, CUT, 6.0) and presence.present(0, 4.0, CUT)
    assert not presence.present(0, CUT, 6.0)  # Person 0 is last seen at 4.5 s, before the cut
    assert Presence.from_tracks(_tracks(one_shot=True), tolerance=0.5).present(2, 4.0, 4.5)  # no cut: as before
    # the cut lies somewhere between shot 0's last frame (4.5 s) and shot 1's first (5.0 s): a look of
    # shot 0 closed at 5.5 s is cut at 4.5 s
    clipped = {e.event_id: e for e in clip_to_shots(read_events(_events()), presence)}
    assert clipped[6].end == 4.5 and clipped[5].end == 8.0 and clipped[2].end == 3.0


def test_eye_contact_length_asked_only_when_seen_whole_within_its_shot():
    """'How long do Person 0 and Person 1 keep eye contact, starting at 1.0 seconds?' -> 2.0 seconds; the eye
    contact of Person 2 and Person 3 starts at the cut, so its length is not known and it is not asked
    (without the cut in the tracks it would be: the check is the shot's start, not only the clip's)."""
    def durations(tracks):
        qa, _ = generate_qa(_events(), tracks, QAConfig(formats=("mcq",)), seed=0, clip_duration=DURATION)
        return {tuple(sorted(it["persons"])): it["answer_text"] for it in qa.to_pylist()
                if it["template"] == "T3.duration"}

    assert durations(_tracks()) == {(0, 1): "2.0 seconds"}
    assert (2, 3) in durations(_tracks(one_shot=True))


def test_no_item_names_people_of_another_shot():
    qa, _ = generate_qa(_events(), _tracks(), QAConfig(), seed=0, clip_duration=DURATION)
    assert qa.num_rows
    for it in qa.to_pylist():
        a, b = it["time_range"]
        people = set(it["persons"])
        if b <= CUT:
            assert people <= {0, 1}, it
        elif a >= CUT:
            assert people <= {2, 3}, it


def _gestures(pointing_start: float) -> pa.Table:
    """One person reaches toward an object from 2.0 to 2.5 s, then points at it from ``pointing_start``
    (deepoint_pointing_up in the joined film: the arm going up read as reaching, then pointing)."""
    common = {"video_id": "gest", "persons_involved": [0], "initiator_id": 0, "target_type": "object",
              "target_person_id": None, "target_label": "object", "leader_id": None, "follower_id": None,
              "lag_seconds": None, "confidence": 0.9, "start_frame": 0, "end_frame": 0, "parent_event_ids": [],
              "source": "gesture", "details": '{"target_type": "object", "target_id": 0}'}
    rows = [{**common, "event_id": 0, "event_type": "reaching", "start_time": 2.0, "end_time": 2.5},
            {**common, "event_id": 1, "event_type": "pointing", "start_time": pointing_start,
             "end_time": pointing_start + 1.0}]
    return table_from_rows(rows, EVENTS_SCHEMA)


def test_which_gesture_offers_the_four_kinds_none_of_the_false_ones_beside_the_window():
    """'What kind of gesture does Person 0 make between 2.0 and 2.5 seconds?': not asked when he points from
    2.5 s (the pointing is seen at the window's last instant, so 'Pointing' would be right too); asked, with
    'Reaching' the key, when the pointing begins a second later. Every G2 item offers the same four kinds."""
    def g2(pointing_start):
        qa, _ = generate_qa(_gestures(pointing_start), None, QAConfig(formats=("mcq",)), seed=0,
                            clip_duration=6.0)
        return [it for it in qa.to_pylist() if it["category"] == "G2"]

    assert not [it for it in g2(2.5) if "2.0 and 2.5" in it["question"]]
    items = g2(3.5)
    asked = [it for it in items if "2.0 and 2.5" in it["question"]]
    assert [it["answer_text"] for it in asked] == ["Reaching"]
    assert {tuple(sorted(o[3:] for o in it["options"])) for it in items} == {("Giving", "Pointing", "Reaching", "Showing")}


def test_a_track_that_never_shows_a_head_is_no_one_to_name():
    """A box nothing ever confirms as someone (no head box on any of its rows: a potted plant at the edge of a
    zoomed shot, boxed on every frame) is not present: no question offers it as an answer or an option, nor says
    it "takes no part". A person whose head shows on one row is present on every row of theirs."""
    rows = []
    for t in np.arange(0.0, 4.0, 0.5):
        rows.append({"t": float(t), "person_id": 0, "head_bbox": [0.1, 0.1, 0.2, 0.2]})
        rows.append({"t": float(t), "person_id": 1, "head_bbox": [0.5, 0.1, 0.6, 0.2] if t == 1.0 else None})
        rows.append({"t": float(t), "person_id": 2, "head_bbox": None})  # the plant
    presence = Presence.from_tracks(pa.Table.from_pylist(rows), tolerance=0.5)
    assert presence.persons == [0, 1]
    assert presence.present(1, 3.0, 3.5) and not presence.present(2, 0.0, 4.0)
    assert presence.present_in(0.0, 4.0) == [0, 1]


def test_no_option_names_again_someone_the_item_names_under_another_id():
    """Issue 23's high five: a man is Person 1, then Person 4 for a second (the tracker lost and found him), then
    Person 1 again. An item whose answer is Person 1 must not offer Person 4 (never seen together with him:
    perhaps the same man) as a wrong option; people seen beside him still are."""
    rows = []
    for t in np.arange(0.0, 4.0, 0.5):
        man = 4 if 1.5 <= t < 2.5 else 1
        for p, head in ((0, [0.1, 0.1, 0.2, 0.2]), (man, [0.5, 0.1, 0.6, 0.2]), (2, [0.7, 0.1, 0.8, 0.2]),
                        (3, [0.3, 0.5, 0.4, 0.6])):
            rows.append({"video_id": "v", "t": float(t), "shot_id": 0, "person_id": p, "head_bbox": head})
    tracks = pa.Table.from_pylist(rows)
    presence = Presence.from_tracks(tracks)
    assert not presence.ever_together(1, 4) and presence.ever_together(1, 2) and presence.ever_together(0, 4)
    common = {"video_id": "v", "target_type": "person", "target_label": None, "leader_id": None,
              "follower_id": None, "lag_seconds": None, "confidence": 0.9, "start_frame": 0, "end_frame": 0,
              "parent_event_ids": [], "details": "{}", "source": "gaze"}
    events = table_from_rows([
        {**common, "event_id": 0, "event_type": "gaze_at", "start_time": 0.0, "end_time": 1.5,
         "persons_involved": [0], "initiator_id": 0, "target_person_id": 1},
        {**common, "event_id": 1, "event_type": "gaze_at", "start_time": 2.5, "end_time": 3.5,
         "persons_involved": [2], "initiator_id": 2, "target_person_id": 3}], EVENTS_SCHEMA)
    table, _ = generate_qa(events, tracks, QAConfig(), seed=0, clip_duration=4.0)
    items = [r for r in table.to_pylist() if r["template"] == "T1.target"]
    about_the_man = [r for r in items if r["answer_text"] == "Person 1"]
    assert about_the_man, items
    for r in about_the_man:
        assert not any("Person 4" in o for o in r["options"]), r["options"]
        assert any("Person 2" in o or "Person 3" in o for o in r["options"]), r["options"]


def _a_man_under_three_ids() -> pa.Table:
    """Tracks of a 6 s clip of three 2 s shots: a man under a new id in each (0, 1, 2: never seen together) and a
    woman, Person 3, beside him in every shot."""
    rows = []
    for t in np.arange(0.0, 6.0, 0.5):
        shot = int(t // 2)
        rows.append({"video_id": "cuts", "t": float(t), "shot_id": shot, "person_id": shot,
                     "head_bbox": [0.4, 0.1, 0.5, 0.2]})
        rows.append({"video_id": "cuts", "t": float(t), "shot_id": shot, "person_id": 3,
                     "head_bbox": [0.7, 0.1, 0.8, 0.2]})
    return pa.Table.from_pylist(rows)


def test_no_count_of_gestures_for_someone_who_may_be_the_gesturer_under_another_id():
    """bench_reverse_shots' deepoint_pointing_up cut close-up / wide / close-up: one man pointing through all
    three shots got an id per shot (0, 1, 2: never seen together). His pointing was found in the wide shot
    only, and the counts asked "how many times does Person 0 point? 0" of the same man. A count of a kind is
    asked only of a person whom no gesturer of that kind may be under another id, and "who gestures most"
    only where nobody reaches the top count with the ids that may be them added; a woman seen beside each of
    his ids keeps her count."""
    from qa_gen.generate import build_context, candidates_of

    tracks = _a_man_under_three_ids()
    common = {"video_id": "cuts", "target_type": "person", "target_person_id": None, "target_label": None,
              "leader_id": None, "follower_id": None, "lag_seconds": None, "confidence": 0.9, "start_frame": 0,
              "end_frame": 0, "parent_event_ids": [], "source": "gesture", "details": "{}"}

    def pointing(event_id, actor, target, start):
        return {**common, "event_id": event_id, "event_type": "pointing", "start_time": start, "end_time": start + 1.0,
                "persons_involved": [actor, target], "initiator_id": actor, "target_person_id": target}

    events = table_from_rows([pointing(0, 1, 3, 2.5), pointing(1, 3, 0, 0.5), pointing(2, 3, 2, 4.5)], EVENTS_SCHEMA)
    ctx = build_context(events, tracks, QAConfig(), seed=0, clip_duration=6.0)
    counts = [c for c in candidates_of(ctx) if c.category == "G4"]
    asked = {(c.template, tuple(c.persons), c.correct) for c in counts}
    assert ("G4.count", (1,), "1") in asked and ("G4.count", (3,), "2") in asked
    assert not any(c.persons in ([0], [2]) for c in counts), asked  # the man's other ids: no "0"
    # the woman points twice, the man once under all his ids together: she gestures most
    assert ("G4.most", (1, 3), "Person 3") in asked
    # ...but not when he also points under his other ids (three in all, against her two)
    events = table_from_rows([pointing(0, 1, 3, 2.5), pointing(1, 3, 0, 0.5), pointing(2, 3, 2, 4.5),
                              pointing(3, 0, 3, 0.0), pointing(4, 2, 3, 4.0)], EVENTS_SCHEMA)
    counts = [c for c in candidates_of(build_context(events, tracks, QAConfig(), seed=0, clip_duration=6.0))
              if c.category == "G4"]
    assert not any(c.template == "G4.most" for c in counts), [(c.template, c.correct) for c in counts]
    assert not any(c.template == "G4.count" and c.persons in ([0], [1], [2]) for c in counts)


def test_no_order_or_role_over_the_clip_for_one_id_of_a_split_person():
    """The man of the close-up / wide / close-up edit again, under ids 0, 1 and 2: as Person 0 he points at the
    woman (0.5 s); as Person 2 she points at him (4.0 s) and he reaches toward her (5.0 s), while they hold eye
    contact. "In what order do the gestures involving Person 2 happen?" would leave out his pointing as Person 0,
    a role over the whole clip ("in all, Person 2 makes one gesture") would be his and not the man's, and a "first
    gesture" option made of a gesture that never happens between these ids may happen under the other one. The
    woman, seen beside each of his ids, keeps her order."""
    from qa_gen.generate import build_context, candidates_of

    tracks = _a_man_under_three_ids()
    common = {"video_id": "cuts", "target_type": "person", "target_label": None, "leader_id": None,
              "follower_id": None, "lag_seconds": None, "confidence": 0.9, "start_frame": 0, "end_frame": 0,
              "parent_event_ids": [], "details": "{}"}

    def gesture(event_id, kind, actor, target, start):
        return {**common, "event_id": event_id, "event_type": kind, "source": "gesture", "start_time": start,
                "end_time": start + 0.5, "persons_involved": [actor, target], "initiator_id": actor,
                "target_person_id": target}

    events = table_from_rows([
        gesture(0, "pointing", 0, 3, 0.5), gesture(1, "pointing", 3, 2, 4.0), gesture(2, "reaching", 2, 3, 5.0),
        {**common, "event_id": 3, "event_type": "mutual_gaze", "source": "gaze", "start_time": 4.0, "end_time": 5.5,
         "persons_involved": [2, 3], "initiator_id": None, "target_person_id": None}], EVENTS_SCHEMA)
    candidates = candidates_of(build_context(events, tracks, QAConfig(), seed=0, clip_duration=6.0))
    chains = {c.key: c.correct for c in candidates if c.template == "G5.chain"}
    assert "person=3" in chains and not any(key in ("person=0", "person=1", "person=2") for key in chains), chains
    roles = [c.key for c in candidates if c.category == "C4"]
    assert not any(key in ("person=0", "person=1", "person=2") for key in roles), roles
    happened = {"Person 0 points at Person 3", "Person 3 points at Person 2", "Person 2 reaches toward Person 3"}
    for c in candidates:
        if c.template == "G3.first":
            # every option is a gesture that happens: none "never happens" between these ids, since under the
            # man's other ids it may (it was "Person 3 hands something to Person 2")
            assert set(c.distractors) <= happened, c.distractors
