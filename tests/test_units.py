"""QA unit planning (qa_gen/units.py) on synthetic shot lists with known answers, and per-unit QA on
synthetic events: units of whole shots within the bounds, long shots cut at their quietest point, item
times counted from the unit start."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.schema import EVENTS_SCHEMA, QA_SCHEMA, TRACKS_SCHEMA, table_from_rows
from qa_gen import generate_qa
from qa_gen.config import QAConfig
from qa_gen.generate import generate_clip_qa
from qa_gen.units import Activity, Shot, Unit, plan_units, shots_from_frames, shots_from_tracks, unit_of_times

MIN, MAX, STEP = 45.0, 120.0, 0.5


def shots_of(durations) -> list[Shot]:
    edges = np.concatenate([[0.0], np.cumsum(durations)])
    return [Shot(k, float(a), float(b)) for k, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def quiet(events=(), person_times=()) -> Activity:
    return Activity(np.asarray(events, dtype=float).reshape(-1, 2), np.sort(np.asarray(person_times, dtype=float)))


def spans(units: list[Unit]) -> list[tuple[float, float]]:
    return [(round(u.start, 6), round(u.end, 6)) for u in units]


def assert_tiles(units: list[Unit], total: float) -> None:
    assert units[0].start == 0.0 and units[-1].end == pytest.approx(total)
    for a, b in zip(units, units[1:]):
        assert a.end == b.start
    assert [u.unit_id for u in units] == list(range(len(units)))


def test_a_video_shorter_than_the_minimum_is_one_unit():
    assert spans(plan_units(shots_of([10.0]), MIN, MAX, STEP)) == [(0.0, 10.0)]
    units = plan_units(shots_of([3.0, 2.5, 20.0, 4.0]), MIN, MAX, STEP)
    assert spans(units) == [(0.0, 29.5)] and units[0].shot_ids == (0, 1, 2, 3)


def test_a_video_within_the_bounds_is_one_unit_and_at_the_bounds_too():
    assert spans(plan_units(shots_of([30.0, 50.0]), MIN, MAX, STEP)) == [(0.0, 80.0)]
    assert spans(plan_units(shots_of([45.0]), MIN, MAX, STEP)) == [(0.0, 45.0)]
    assert spans(plan_units(shots_of([60.0, 60.0]), MIN, MAX, STEP)) == [(0.0, 120.0)]


def test_whole_shots_fill_the_fewest_units_within_the_bounds():
    units = plan_units(shots_of([45.0, 45.0, 45.0]), MIN, MAX, STEP)
    assert len(units) == 2 and all(MIN <= u.duration <= MAX for u in units)
    assert_tiles(units, 135.0)
    # 121 s of whole shots cannot be one unit; neither part may fall below the minimum
    units = plan_units(shots_of([40.0, 20.0, 1.0, 60.0]), MIN, MAX, STEP)
    assert len(units) == 2 and all(MIN <= u.duration <= MAX for u in units), spans(units)
    # every cut is a shot boundary
    edges = {0.0, 40.0, 60.0, 61.0, 121.0}
    assert all(u.start in edges and u.end in edges for u in units)


def test_many_short_shots():
    durations = [1.0 + (k % 7) * 0.5 for k in range(400)]
    units = plan_units(shots_of(durations), MIN, MAX, STEP)
    assert_tiles(units, sum(durations))
    assert all(MIN <= u.duration <= MAX for u in units)
    covered = [s for u in units for s in u.shot_ids]
    assert covered == list(range(400))  # each shot in exactly one unit, in order


def test_a_short_shot_boxed_in_by_long_ones_stays_alone_rather_than_exceed_the_maximum():
    units = plan_units(shots_of([110.0, 30.0, 110.0]), MIN, MAX, STEP)
    assert spans(units) == [(0.0, 110.0), (110.0, 140.0), (140.0, 250.0)]


def test_one_long_quiet_shot_is_split_into_parts_within_the_bounds():
    units = plan_units(shots_of([300.0]), MIN, MAX, STEP)
    assert_tiles(units, 300.0)
    assert len(units) >= 3 and all(MIN <= u.duration <= MAX for u in units)
    assert all(u.shot_ids == (0,) for u in units)
    assert all((u.start / STEP).is_integer() for u in units)  # cuts on the QA time grid


def test_a_long_shot_is_cut_where_no_event_is_in_progress():
    # one event 60-150 s in a 200 s shot: cutting inside it would lose it, so the cuts go at its ends
    units = plan_units(shots_of([200.0]), MIN, MAX, STEP, quiet(events=[(60.0, 150.0)]))
    assert spans(units) == [(0.0, 60.0), (60.0, 150.0), (150.0, 200.0)]
    # with events everywhere but one gap, the cut is in the gap
    events = [(0.0, 70.0), (73.0, 130.0)]
    units = plan_units(shots_of([130.0]), MIN, MAX, STEP, quiet(events=events))
    assert len(units) == 2 and 70.0 <= units[0].end <= 73.0


def test_ties_in_events_go_to_the_moment_with_the_fewest_people_in_view():
    # nobody in view only around 80 s; events nowhere
    person_times = [t for t in np.arange(0, 130, 0.5) if abs(t - 80.0) > 1.0 for _ in range(3)]
    units = plan_units(shots_of([130.0]), MIN, MAX, STEP, quiet(person_times=person_times))
    assert len(units) == 2 and abs(units[0].end - 80.0) <= 1.0


def test_an_even_cut_when_the_shot_is_uniformly_busy():
    units = plan_units(shots_of([130.0]), MIN, MAX, STEP)
    assert spans(units) == [(0.0, 65.0), (65.0, 130.0)]


def test_long_shot_between_short_ones():
    units = plan_units(shots_of([10.0, 250.0, 10.0]), MIN, MAX, STEP)
    assert_tiles(units, 270.0)
    assert all(u.duration <= MAX for u in units)
    assert sum(u.duration < MIN for u in units) == 0, spans(units)


def test_tight_bounds_that_cannot_give_two_minimum_parts_keep_the_maximum():
    units = plan_units(shots_of([130.0]), 60.0, 100.0, STEP)
    assert len(units) == 2 and all(u.duration <= 100.0 for u in units)


def test_bad_bounds_are_named():
    with pytest.raises(ValueError, match="unit_min_seconds <= unit_max_seconds"):
        plan_units(shots_of([10.0]), 50.0, 40.0, STEP)
    with pytest.raises(ValueError, match="unit_min_seconds"):
        plan_units(shots_of([10.0]), 0.0, 40.0, STEP)
    assert plan_units([], MIN, MAX, STEP) == []
    with pytest.raises(ValueError, match="qa.unit_min_seconds"):
        QAConfig(unit_min_seconds=130.0)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.5, 400.0), min_size=1, max_size=60))
def test_units_always_tile_the_video_within_the_maximum(durations):
    units = plan_units(shots_of(durations), MIN, MAX, STEP)
    assert_tiles(units, float(np.sum(durations)))
    assert all(u.duration <= MAX + 1e-6 for u in units)
    if sum(durations) >= MIN and all(d >= MIN for d in durations):
        assert all(u.duration >= MIN - 1e-6 for u in units)


def test_shots_from_frames_and_tracks():
    times = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    shots = shots_from_frames(times, [0, 0, 1, 1, 1, 3, 3], duration=3.4)
    assert [(s.shot_id, s.start, s.end) for s in shots] == [(0, 0.0, 1.0), (1, 1.0, 2.5), (3, 2.5, 3.4)]
    # tracks only see shots with people: a shot starts at its first tracked frame, the first one at 0
    rows = [_track_row(t, 0, shot) for t, shot in ((0.5, 0), (1.5, 1), (2.0, 1))]
    tracks = table_from_rows(rows, TRACKS_SCHEMA)
    assert [(s.start, s.end) for s in shots_from_tracks(tracks, 3.0)] == [(0.0, 1.5), (1.5, 3.0)]
    assert [(s.start, s.end) for s in shots_from_tracks(None, 3.0)] == [(0.0, 3.0)]
    units = [Unit(0, 0.0, 1.0, (0,)), Unit(1, 1.0, 3.4, (1, 3))]
    assert unit_of_times(units, np.array([0.0, 0.99, 1.0, 3.3, 5.0])).tolist() == [0, 0, 1, 1, -1]


# --- per-unit QA on synthetic events --------------------------------------------------------------

def _track_row(t: float, pid: int, shot: int, frame: int = 0) -> dict:
    x = 0.1 + 0.5 * pid
    return {"video_id": "v", "frame_idx": frame, "native_frame_idx": frame, "t": t, "shot_id": shot,
            "person_id": pid, "det_conf": 0.9, "bbox": [x, 0.2, x + 0.3, 0.9], "head_bbox": [x + 0.1, 0.2, x + 0.2, 0.35],
            "gaze_conf": 0.8, "gaze_target_type": "person", "gaze_target_id": 1 - pid, "pointing": False,
            "point_conf": 0.0}


def _eye_contact(event_id: int, start: float, end: float, shot: int) -> list[dict]:
    """Mutual gaze of persons 0 and 1 plus each one's gaze_at the other, over [start, end]."""
    base = {"video_id": "v", "source": "gaze", "start_time": start, "end_time": end, "start_frame": int(start * 2),
            "end_frame": int(end * 2), "shot_id": shot, "confidence": 0.9, "parent_event_ids": [],
            "target_type": "person", "details": "{}"}
    return [{**base, "event_id": event_id, "event_type": "mutual_gaze", "persons_involved": [0, 1]},
            {**base, "event_id": event_id + 1, "event_type": "gaze_at", "persons_involved": [0], "initiator_id": 0,
             "target_person_id": 1},
            {**base, "event_id": event_id + 2, "event_type": "gaze_at", "persons_involved": [1], "initiator_id": 1,
             "target_person_id": 0}]


def _two_shot_video():
    """Shot 0: 0-70 s, shot 1: 70-140 s (so two units); eye contact 10-14 s and 80-86 s."""
    rows = []
    for k, t in enumerate(np.arange(0.0, 140.0, 0.5)):
        for pid in (0, 1):
            rows.append(_track_row(float(t), pid, 0 if t < 70 else 1, k))
    events = _eye_contact(0, 10.0, 14.0, 0) + _eye_contact(10, 80.0, 86.0, 1)
    return table_from_rows(events, EVENTS_SCHEMA), table_from_rows(rows, TRACKS_SCHEMA)


def test_items_name_their_unit_and_count_times_from_its_start():
    events, tracks = _two_shot_video()
    config = QAConfig(formats=("mcq", "open_ended"))
    qa, drops = generate_qa(events, tracks, config, seed=0, clip_duration=140.0)
    assert qa.schema.equals(QA_SCHEMA)
    rows = qa.to_pylist()
    assert {(r["unit_id"], r["unit_start"], r["unit_end"]) for r in rows} == {(0, 0.0, 70.0), (1, 70.0, 140.0)}
    assert len({r["qa_id"] for r in rows}) == len(rows)
    for row in rows:
        a, b = row["time_range"]
        assert 0.0 <= a <= b <= row["unit_end"] - row["unit_start"]
        cited = set(row["source_event_ids"])
        # unit 1's items cite the 80-86 s events and state them at 10-16 s of the unit
        assert cited <= ({0, 1, 2} if row["unit_id"] == 0 else {10, 11, 12})
        assert a < 16.0 + 1e-9 and b > 10.0 - 1e-9, row
    # the same eye contact, 70 s apart in the video, gives the same question in both units
    by_unit = {u: sorted(r["question"] for r in rows if r["unit_id"] == u) for u in (0, 1)}
    assert by_unit[0] and by_unit[1]
    assert any("10" in q for q in by_unit[1]) and not any(" 80" in q or "86" in q for q in by_unit[1])


def test_a_one_unit_video_gets_exactly_the_items_of_whole_clip_generation():
    events, tracks = _two_shot_video()
    short_events = events.filter(np.asarray(events.column("end_time").to_numpy() < 20))
    short_tracks = tracks.filter(np.asarray(tracks.column("t").to_numpy() < 30))
    config = QAConfig(formats=("mcq", "open_ended"))
    qa, drops = generate_qa(short_events, short_tracks, config, seed=0, clip_duration=30.0)
    whole, whole_drops = generate_clip_qa(short_events, short_tracks, config, seed=0, clip_duration=30.0)
    assert qa.num_rows == whole.num_rows > 0 and drops == whole_drops
    assert qa.drop_columns(["unit_id", "unit_start", "unit_end"]).equals(
        whole.drop_columns(["unit_id", "unit_start", "unit_end"]))
    assert set(qa.column("unit_id").to_pylist()) == {0} and qa.column("unit_end").to_pylist()[0] == 30.0


def test_an_event_cut_by_a_split_long_shot_is_not_asked_about():
    # one 150 s shot, people in view throughout, eye contact everywhere except one short gap: any cut
    # lands in an event; the items that would cite the cut events are dropped and counted
    rows = [_track_row(float(t), pid, 0, k) for k, t in enumerate(np.arange(0.0, 150.0, 0.5)) for pid in (0, 1)]
    events = _eye_contact(0, 5.0, 100.0, 0) + _eye_contact(10, 100.0, 145.0, 0)
    tracks = table_from_rows(rows, TRACKS_SCHEMA)
    qa, drops = generate_qa(table_from_rows(events, EVENTS_SCHEMA), tracks, QAConfig(formats=("mcq",)), seed=0,
                            clip_duration=150.0)
    starts = sorted(set(qa.column("unit_start").to_pylist())) if qa.num_rows else []
    # the cut falls at the end of the first eye contact (100 s), where nothing is in progress
    assert all(s in (0.0, 100.0) for s in starts)
    events = _eye_contact(0, 5.0, 145.0, 0)  # now every admissible cut crosses it
    qa, drops = generate_qa(table_from_rows(events, EVENTS_SCHEMA), tracks, QAConfig(formats=("mcq",)), seed=0,
                            clip_duration=150.0)
    assert qa.num_rows == 0 and drops.get("crosses_unit_boundary", 0) > 0
