"""`socialtrace inspect`: its numbers must equal what DuckDB computes from the same tables."""
from __future__ import annotations

import json
import random

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline import runner, schema
from pipeline.cli import app
from pipeline.config import Config
from pipeline.summary import InspectError, describe_event, summarize_run, summarize_video
from pipeline.storage import OutputStore

FPS = 4.0
CATEGORIES = [("T1", "Gaze Target Identification", "easy", "mcq"), ("T4", "Mutual Gaze Recognition", "medium", "mcq"),
              ("T6", "Group Attention Dynamics", "hard", "open_ended"), ("G2", "Gesture Type", "easy", "mcq"),
              ("C2", "Eye Contact During Interaction", "medium", "mcq")]
EVENT_KINDS = [("gaze", "gaze_at"), ("gaze", "mutual_gaze"), ("gaze", "joint_attention"), ("gesture", "pointing"),
               ("cross", "co_occur")]


def _tracks(video_id: str, n_frames: int, presence: dict[int, range]) -> list[dict]:
    rows = []
    for frame in range(n_frames):
        for person_id, frames in presence.items():
            if frame in frames:
                rows.append({"video_id": video_id, "frame_idx": frame, "native_frame_idx": frame * 6, "t": frame / FPS,
                             "shot_id": 0, "person_id": person_id, "det_conf": 0.5 + 0.1 * person_id,
                             "bbox": [0.1, 0.1, 0.4, 0.9], "gaze_conf": 0.5, "point_conf": 0.0,
                             "gaze_target_type": "person" if frame % 2 else "elsewhere", "pointing": frame % 5 == 0})
    return rows


def _events(video_id: str, rng: random.Random, n: int) -> list[dict]:
    rows = []
    for event_id in range(n):
        source, kind = rng.choice(EVENT_KINDS)
        start = round(rng.uniform(0, 8), 2)
        end = round(start + rng.uniform(0.5, 4), 2)
        rows.append({"video_id": video_id, "event_id": event_id, "source": source, "event_type": kind,
                     "start_time": start, "end_time": end, "start_frame": int(start * FPS), "end_frame": int(end * FPS),
                     "persons_involved": [0, 1], "initiator_id": 0, "target_type": "person", "target_person_id": 1,
                     "confidence": 0.7, "parent_event_ids": [], "details": "{}"})
    return rows


def _qa(video_id: str, rng: random.Random, n: int) -> list[dict]:
    rows = []
    for i in range(n):
        code, name, difficulty, fmt = rng.choice(CATEGORIES)
        answer = rng.choice("ABCD") if fmt == "mcq" else "a free-text answer"
        rows.append({"qa_id": f"{video_id}-{i}", "video_id": video_id, "category": code, "category_name": name,
                     "difficulty": difficulty, "format": fmt, "question": f"question {i}?",
                     "options": [f"{x}) option {x}" for x in "ABCD"] if fmt == "mcq" else [], "answer": answer,
                     "answer_text": "option" if fmt == "mcq" else answer, "time_range": [0.0, 2.0],
                     "source_event_ids": [0], "persons": [0], "grounding": [], "reasoning_trace": []})
    return rows


def _write_clip(store: OutputStore, video_id: str, tracks: list, events: list, qa: list, dropped: dict, **status):
    store.write_table("tracks", video_id, schema.table_from_rows(tracks, schema.TRACKS_SCHEMA))
    store.write_table("events", video_id, schema.table_from_rows(events, schema.EVENTS_SCHEMA))
    store.write_table("qa", video_id, schema.table_from_rows(qa, schema.QA_SCHEMA))
    record = {"video_id": video_id, "uri": f"/videos/{video_id}.mp4", "status": "ok", "error": None,
              "duration_s": 10.0, "native_fps": 24.0, "width": 640, "height": 360, "rotation": 0,
              "n_frames": 40, "n_persons": len({r["person_id"] for r in tracks}), "n_events": len(events),
              "n_qa": len(qa), "qa_dropped": dropped, "backend": "synthetic", "config_hash": "h"}
    record.update(status)
    store.write_json(store.status_file(video_id), record)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    """Three ok clips (one with an id that looks like a number, one with nobody in it), one failed."""
    out = str(tmp_path_factory.mktemp("inspect") / "out")
    store = OutputStore(out)
    rng = random.Random(7)
    _write_clip(store, "0001", _tracks("0001", 40, {0: range(0, 40), 1: range(5, 25), 2: range(30, 33)}),
                _events("0001", rng, 23), _qa("0001", rng, 31), {"hedging": 2, "near_duplicate": 5})
    _write_clip(store, "clip_b", _tracks("clip_b", 40, {0: range(10, 20)}), _events("clip_b", rng, 9),
                _qa("clip_b", rng, 12), {"near_duplicate": 1}, n_events=99)  # a stale counter: inspect warns
    _write_clip(store, "empty_room", [], [], [], {})
    store.write_json(store.status_file("broken"), {"video_id": "broken", "uri": "/videos/broken.mp4",
                                                   "status": "failed", "error": "/videos/broken.mp4: empty file (0 bytes)"})
    config = Config().replace(sampling={"fps": FPS})
    runner.write_run_record(store, config, runner.build_manifest(store), {})
    return out


def _duck(out: str, table: str) -> str:
    return f"read_parquet('{out}/{table}/*/*.parquet', hive_partitioning = true, hive_types = {{'video_id': VARCHAR}})"


def test_run_summary_matches_duckdb(corpus):
    summary = summarize_run(corpus)
    assert summary["clips"] == {"total": 4, "ok": 3, "failed": 1, "skipped": 0}
    assert summary["failed"] == [{"video_id": "broken", "uri": "/videos/broken.mp4",
                                  "error": "/videos/broken.mp4: empty file (0 bytes)"}]
    people = dict(duckdb.sql(f"SELECT video_id, count(DISTINCT person_id) FROM {_duck(corpus, 'tracks')} "
                             "GROUP BY video_id").fetchall())
    clips = {c["video_id"]: c for c in summary["clip_list"]}
    assert people == {"0001": 3, "clip_b": 1}  # "0001" stays a string id
    for video_id, clip in clips.items():
        if clip["status"] == "ok":
            assert clip["n_persons"] == people.get(video_id, 0)
    assert clips["broken"]["n_persons"] is None and clips["broken"]["error"].endswith("empty file (0 bytes)")

    by_type = duckdb.sql(f"SELECT source, event_type, count(*) FROM {_duck(corpus, 'events')} "
                         "GROUP BY ALL ORDER BY ALL").fetchall()
    assert [(r["source"], r["event_type"], r["count"]) for r in summary["events_by_type"]] == by_type
    assert summary["events_total"] == 32
    assert summary["events_by_source"] == dict(duckdb.sql(
        f"SELECT source, count(*) FROM {_duck(corpus, 'events')} GROUP BY source").fetchall())

    qa_counts = duckdb.sql(f"SELECT category, difficulty, format, count(*) FROM {_duck(corpus, 'qa')} "
                           "GROUP BY ALL").fetchall()
    for code, difficulty, fmt, count in qa_counts:
        row = next(r for r in summary["qa_by_category"] if r["category"] == code)
        assert row[difficulty] == count and row[fmt] == count and row["total"] == count
    assert [r["category"] for r in summary["qa_by_category"]] == sorted(
        {c for c, *_ in qa_counts}, key=lambda c: ("TGC".index(c[0]), int(c[1:])))
    assert summary["qa_total"] == 43
    letters = dict(duckdb.sql(f"SELECT answer, count(*) FROM {_duck(corpus, 'qa')} WHERE format = 'mcq' "
                              "GROUP BY answer").fetchall())
    assert summary["answer_letters"] == {k: letters.get(k, 0) for k in "ABCD"}
    assert summary["qa_by_format"]["mcq"] == sum(letters.values())
    assert summary["qa_dropped"] == {"hedging": 2, "near_duplicate": 6}
    assert summary["warnings"] == ["clip_b: status file says n_events=99 but the table has 9"]


def test_video_summary_matches_duckdb(corpus):
    summary = summarize_video(corpus, "0001")
    expected = duckdb.sql(f"SELECT person_id, count(*), count(*) / {FPS}, min(t), max(t), avg(det_conf) "
                          f"FROM {_duck(corpus, 'tracks')} WHERE video_id = '0001' GROUP BY person_id "
                          "ORDER BY person_id").fetchall()
    got = [(p["person_id"], p["frames"], p["screen_time_s"], p["first_t"], p["last_t"]) for p in summary["people"]]
    assert got == [row[:5] for row in expected]
    assert [p["mean_det_conf"] for p in summary["people"]] == pytest.approx([row[5] for row in expected])
    assert summary["people"][1]["screen_time_s"] == 5.0  # 20 frames at 4 fps
    assert sum(summary["people"][0]["gaze_targets"].values()) == 40
    starts = [e["start_time"] for e in summary["events"]]
    assert starts == sorted(starts) and len(starts) == 23
    assert len(summary["qa"]) == 31

    empty = summarize_video(corpus, "empty_room")
    assert empty["people"] == [] and empty["events"] == [] and empty["qa"] == []
    failed = summarize_video(corpus, "broken")
    assert failed["status"]["status"] == "failed" and failed["people"] == []


def test_describe_event_names_people():
    base = {"persons_involved": [2, 5], "initiator_id": None, "target_type": None, "target_person_id": None,
            "target_label": None, "leader_id": None, "follower_id": None, "lag_seconds": None}
    assert describe_event({**base, "event_type": "mutual_gaze"}) == "Person 2 and Person 5 make eye contact"
    assert describe_event({**base, "event_type": "gaze_at", "initiator_id": 2, "target_type": "object",
                           "target_label": "cup"}) == "Person 2 looks at the cup"
    assert describe_event({**base, "event_type": "gaze_following", "leader_id": 5, "follower_id": 2,
                           "lag_seconds": 1.25, "target_type": "object", "target_label": "door"}) == \
        "Person 2 follows Person 5's gaze to the door"
    assert describe_event({**base, "event_type": "pointing", "initiator_id": 5, "target_type": "person",
                           "target_person_id": 2}) == "Person 5 points at Person 2"
    # the one phrasing: a caption says what the QA evidence step says (issue 13)
    from qa_gen.events_view import event_from_row
    from qa_gen.wording import event_sentence
    aversion = {**base, "event_type": "gaze_aversion", "initiator_id": 5, "target_type": "person",
                "target_person_id": 2, "start_time": 1.0, "end_time": 2.0}
    assert describe_event(aversion) == "Person 5 breaks eye contact with Person 2"
    assert event_sentence(event_from_row(aversion), 0.5).startswith(describe_event(aversion))


def test_cli_json_equals_summary_and_tables_show_numbers(corpus):
    cli = CliRunner()
    result = cli.invoke(app, ["inspect", corpus, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(json.dumps(summarize_run(corpus)))

    result = cli.invoke(app, ["inspect", corpus], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "3 ok" in result.stdout and "1 failed" in result.stdout
    assert "empty file (0 bytes)" in result.stdout
    assert "hedging=2, near_duplicate=6" in result.stdout
    assert "n_events=99" in result.stdout  # the stale counter is reported

    result = cli.invoke(app, ["inspect", corpus, "--video", "0001", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["people"][1]["frames"] == 20
    result = cli.invoke(app, ["inspect", corpus, "--video", "0001"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "Person 2" in result.stdout and "0.75" in result.stdout  # screen time 3 frames


def test_tables_piped_without_a_width_are_whole(corpus):
    """Piped into a file or `less` (no terminal, no $COLUMNS), the tables are 160 columns wide instead of
    rich's 80, which cut the clips table's headers and video ids into pieces over several lines."""
    result = CliRunner().invoke(app, ["inspect", corpus], env={"COLUMNS": ""})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "video_id" in line)
    assert all(name in header for name in ("status", "seconds", "people", "events", "QA dropped", "error")), header
    assert any("empty_room" in line and "ok" in line for line in result.stdout.splitlines())


def test_bad_input_is_named(corpus, tmp_path):
    with pytest.raises(InspectError, match="no clip 'nope'.*0001, broken, clip_b, empty_room"):
        summarize_video(corpus, "nope")
    with pytest.raises(InspectError, match="not a socialtrace output folder"):
        summarize_run(str(tmp_path))
    result = CliRunner().invoke(app, ["inspect", str(tmp_path)])
    assert result.exit_code == 2 and "no run.json" in result.output


def test_describe_event_own_hands_and_camera():
    base = {"persons_involved": [1], "initiator_id": 1, "target_person_id": None, "leader_id": None,
            "follower_id": None, "lag_seconds": None}
    assert describe_event({**base, "event_type": "gaze_at", "target_type": "person", "target_person_id": 1,
                           "target_label": "hands"}) == "Person 1 looks at their own hands"
    assert describe_event({**base, "event_type": "gaze_at", "target_type": "none",
                           "target_label": "camera"}) == "Person 1 looks at the camera"
