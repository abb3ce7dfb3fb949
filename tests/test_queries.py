"""The queries docs/querying.md shows researchers, run exactly as written (OUT replaced by a folder): on
a corpus with known answers, and on a real `socialtrace run` output where they must agree with inspect."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline import runner, schema
from pipeline.cli import app
from pipeline.config import Config
from pipeline.summary import summarize_run, summarize_video
from pipeline.storage import OutputStore

DOC = Path(__file__).resolve().parents[1] / "docs" / "querying.md"
FPS = 2.0


def doc_blocks(language: str) -> list[str]:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, f"{DOC} has no {language} blocks"
    return blocks


def run_sql(out: Path) -> list[list[tuple]]:
    """Every SQL block of the doc, in order, against ``out``."""
    return [duckdb.sql(block.replace("'OUT/", f"'{out}/")).fetchall() for block in doc_blocks("sql")]


def run_python(out: Path) -> dict:
    """Every Python block of the doc, in one namespace, against ``out``."""
    namespace: dict = {}
    for block in doc_blocks("python"):
        exec(compile(block.replace('"OUT/', f'"{out}/'), str(DOC), "exec"), namespace)  # noqa: S102 - our own doc
    return namespace


def _event(video_id: str, event_id: int, kind: str, start: float, end: float) -> dict:
    return {"video_id": video_id, "event_id": event_id, "source": "gaze", "event_type": kind, "start_time": start,
            "end_time": end, "start_frame": int(start * FPS), "end_frame": int(end * FPS), "persons_involved": [0, 1],
            "confidence": 0.9, "parent_event_ids": [], "details": "{}"}


def _qa(video_id: str, i: int, category: str, difficulty: str, answer: str) -> dict:
    return {"qa_id": f"{video_id}-{i}", "video_id": video_id, "category": category, "category_name": f"name {category}",
            "difficulty": difficulty, "format": "mcq", "question": "?", "options": ["A) w", "B) x", "C) y", "D) z"],
            "answer": answer, "answer_text": "x", "time_range": [0.0, 1.0], "source_event_ids": [], "persons": [0],
            "grounding": [], "reasoning_trace": []}


def _track(video_id: str, frame: int, person_id: int) -> dict:
    return {"video_id": video_id, "frame_idx": frame, "native_frame_idx": frame, "t": frame / FPS, "shot_id": 0,
            "person_id": person_id, "det_conf": 0.9, "bbox": [0.1, 0.1, 0.3, 0.9], "gaze_conf": 0.0,
            "gaze_target_type": "unknown", "pointing": False, "point_conf": 0.0}


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> Path:
    """Two clips (one id looks like a number) with eye contact of 1.0, 2.5 and 3.0 s, six QA items, known
    presence; plus a failed clip."""
    out = tmp_path_factory.mktemp("queries") / "out"
    store = OutputStore(str(out))
    clips = {
        "0001": ([_event("0001", 0, "mutual_gaze", 0.0, 1.0), _event("0001", 1, "mutual_gaze", 2.0, 4.5),
                  _event("0001", 2, "gaze_at", 0.0, 6.0)],
                 [_qa("0001", 0, "T4", "medium", "A"), _qa("0001", 1, "T4", "medium", "C"),
                  _qa("0001", 2, "T1", "easy", "A")],
                 [_track("0001", f, 0) for f in range(10)] + [_track("0001", f, 1) for f in range(3, 7)]),
        "lab": ([_event("lab", 0, "mutual_gaze", 1.0, 4.0)],
                [_qa("lab", 0, "T1", "easy", "B"), _qa("lab", 1, "T4", "medium", "D"), _qa("lab", 2, "T4", "hard", "D")],
                [_track("lab", f, 0) for f in range(5)]),
    }
    for video_id, (events, qa, tracks) in clips.items():
        store.write_table("events", video_id, schema.table_from_rows(events, schema.EVENTS_SCHEMA))
        store.write_table("qa", video_id, schema.table_from_rows(qa, schema.QA_SCHEMA))
        store.write_table("tracks", video_id, schema.table_from_rows(tracks, schema.TRACKS_SCHEMA))
        store.write_json(store.status_file(video_id), {"video_id": video_id, "uri": f"/v/{video_id}.mp4",
                                                       "status": "ok", "duration_s": 6.0, "n_frames": 12})
    store.write_json(store.status_file("bad"), {"video_id": "bad", "uri": "/v/bad.mp4", "status": "failed",
                                                "error": "/v/bad.mp4: no video stream (streams: audio)"})
    runner.write_run_record(store, Config().replace(sampling={"fps": FPS}), runner.build_manifest(store), {})
    return out


def test_doc_queries_give_the_known_answers(known):
    long_contact, qa_counts, screen_time, clips = run_sql(known)
    assert [(r[0], r[1], r[4]) for r in long_contact] == [("lab", 0, 3.0), ("0001", 1, 2.5)]
    assert qa_counts == [("T1", "name T1", "easy", 2, 1, 1, 0, 0), ("T4", "name T4", "hard", 1, 0, 0, 0, 1),
                         ("T4", "name T4", "medium", 3, 1, 0, 1, 1)]
    assert screen_time == [("0001", 0, 10, 5.0, 0.0, 4.5), ("0001", 1, 4, 2.0, 1.5, 3.0), ("lab", 0, 5, 2.5, 0.0, 2.0)]
    assert [(r[0], r[1], r[3]) for r in clips] == [("0001", "ok", 2), ("bad", "failed", 0), ("lab", "ok", 1)]
    assert clips[1][4].endswith("no video stream (streams: audio)")


def test_doc_python_matches_sql(known):
    namespace = run_python(known)
    long_contact = namespace["long_eye_contact"]
    assert sorted(zip(long_contact.column("video_id").to_pylist(), long_contact.column("event_id").to_pylist())) == \
        [("0001", 1), ("lab", 0)]
    per_category = {(r["category"], r["difficulty"]): r["count_all"] for r in namespace["qa_per_category"].to_pylist()}
    assert per_category == {("T1", "easy"): 2, ("T4", "medium"): 3, ("T4", "hard"): 1}
    assert namespace["qa"].num_rows == 6 and "reasoning_trace" in namespace["qa"].column_names
    frame = namespace["qa_frame"]
    assert len(frame) == 6 and namespace["qa_frame_per_video"].sum() == 6
    assert set(frame["video_id"]) == set(namespace["qa"]["video_id"])  # the Hugging Face load, the last block


@pytest.mark.slow
def test_doc_queries_agree_with_inspect_on_a_real_run(tmp_path_factory, media_dir):
    out = tmp_path_factory.mktemp("real") / "out"
    result = CliRunner().invoke(app, ["run", str(media_dir / "atd_kitchen.mp4"), str(media_dir / "tvhid_highfive_0018.avi"),
                                      "-o", str(out), "--fps", "2", "--executor", "local"])
    assert result.exit_code == 0, result.output
    summary = summarize_run(str(out))
    assert summary["clips"]["ok"] == 2 and not summary["warnings"]
    long_contact, qa_counts, screen_time, clips = run_sql(out)

    events = OutputStore(str(out)).read_table("events")
    durations = pa.compute.subtract(events.column("end_time"), events.column("start_time")).to_pylist()
    expected = sum(1 for kind, d in zip(events.column("event_type").to_pylist(), durations)
                   if kind == "mutual_gaze" and d > 2.0)
    assert len(long_contact) == expected
    by_category = {}
    for category, _, _, items, *_ in qa_counts:
        by_category[category] = by_category.get(category, 0) + items
    assert by_category == {row["category"]: row["total"] for row in summary["qa_by_category"]}
    assert {r[0]: r[3] for r in clips} == {c["video_id"]: c["n_persons"] for c in summary["clip_list"]}
    for video_id in ("atd_kitchen", "tvhid_highfive_0018"):
        people = summarize_video(str(out), video_id)["people"]
        assert [(r[1], r[2], r[3]) for r in screen_time if r[0] == video_id] == \
            [(p["person_id"], p["frames"], p["screen_time_s"]) for p in people]
    namespace = run_python(out)
    assert namespace["long_eye_contact"].num_rows == expected
    assert namespace["qa"].num_rows == summary["qa_total"] == len(namespace["qa_frame"])
