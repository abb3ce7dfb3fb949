"""`socialtrace run` end to end with the local executor: real models on a shared clip, bad inputs beside it,
the output layout of DESIGN.md §4, resume and --overwrite."""
from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline import schema
from pipeline.cli import app
from pipeline.storage import TEMP_MARK, OutputStore

pytestmark = pytest.mark.slow


def _corpus(tmp_path, media_dir):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(media_dir / "tvhid_handshake_0001.avi", corpus / "handshake.avi")
    data = (media_dir / "atd_kitchen.mp4").read_bytes()
    (corpus / "truncated.mp4").write_bytes(data[: len(data) // 5])
    (corpus / "zero.mp4").write_bytes(b"")
    (corpus / "notes.mp4").write_text("this is a text file, not a video\n")
    return corpus


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory, media_dir):
    tmp_path = tmp_path_factory.mktemp("cli")
    corpus = _corpus(tmp_path, media_dir)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(corpus), "-o", str(out), "--executor", "local", "--fps", "2",
                                      "--allow-failures"])
    return corpus, out, result


def test_good_clip_ok_bad_clips_failed_with_reasons(corpus_run):
    corpus, out, result = corpus_run
    assert result.exit_code == 0, result.output
    manifest = pq.read_table(out / "manifest.parquet")
    assert manifest.schema == schema.MANIFEST_SCHEMA
    rows = {r["video_id"]: r for r in manifest.to_pylist()}
    assert set(rows) == {"handshake", "truncated", "zero", "notes"}
    assert rows["handshake"]["status"] == "ok"
    # 1.96 s from its first frame to its last at 2 fps: 0, 0.5, 1.0, 1.5 s and the last frame (1.92 s), which
    # lies over half a step after 1.5 s
    assert rows["handshake"]["n_frames"] == 5
    assert rows["handshake"]["n_persons"] >= 1
    assert rows["handshake"]["width"] == 624 and rows["handshake"]["height"] == 352
    for bad in ("truncated", "zero", "notes"):
        assert rows[bad]["status"] == "failed"
        assert str(corpus / f"{bad}.mp4") in rows[bad]["error"]
        # nothing partial: no table partition for a failed clip
        for table in ("tracks", "events", "qa"):
            assert not (out / table / f"video_id={bad}").exists()
    assert "zero bytes" in rows["zero"]["error"] or "empty" in rows["zero"]["error"]
    assert not [p for p in out.rglob("*") if TEMP_MARK in p.name]


def test_tables_follow_the_schemas(corpus_run):
    _, out, _ = corpus_run
    store = OutputStore(str(out))
    tracks = store.read_table("tracks")
    assert tracks.num_rows > 0
    assert set(tracks.column("video_id").to_pylist()) == {"handshake"}
    schema.check_values(tracks, "gaze_target_type", schema.GAZE_TARGET_TYPES)
    ids = sorted(set(tracks.column("person_id").to_pylist()))
    assert ids == list(range(len(ids)))  # 0-based, no holes
    times = tracks.column("t").to_pylist()
    assert min(times) >= 0 and max(times) <= 2.1
    events = store.read_table("events")
    schema.check_values(events, "event_type", sum(schema.EVENT_TYPES_BY_SOURCE.values(), ()))
    schema.check_values(events, "source", schema.EVENT_SOURCES)
    schema.check_values(events, "target_type", schema.EVENT_TARGET_TYPES)
    manifest = pq.read_table(out / "manifest.parquet")
    schema.check_values(manifest, "status", schema.STATUS_VALUES)
    status = json.loads((out / "status" / "handshake.json").read_text())
    assert status["status"] == "ok" and status["n_events"] == events.num_rows
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["sampling"]["fps"] == 2
    assert run["totals"] == {**run["totals"], "clips": 4, "ok": 1, "failed": 3}
    assert run["versions"]["mediapipe"] == "0.10.14"


def test_rerun_skips_finished_clips_and_overwrite_redoes_them(corpus_run):
    corpus, out, _ = corpus_run
    before = (out / "tracks" / "video_id=handshake" / "part-0.parquet").stat().st_mtime_ns
    runner = CliRunner()
    again = runner.invoke(app, ["run", str(corpus / "handshake.avi"), "-o", str(out), "--executor", "local", "--fps", "2"])
    assert again.exit_code == 0, again.output
    assert "nothing to do" in again.output
    assert (out / "tracks" / "video_id=handshake" / "part-0.parquet").stat().st_mtime_ns == before
    redo = runner.invoke(app, ["run", str(corpus / "handshake.avi"), "-o", str(out), "--executor", "local",
                               "--fps", "2", "--overwrite"])
    assert redo.exit_code == 0, redo.output
    after = OutputStore(str(out)).read_video_table("tracks", "handshake")
    assert after.num_rows == OutputStore(str(out)).read_table("tracks").num_rows  # no duplicated rows
    assert (out / "tracks" / "video_id=handshake" / "part-0.parquet").stat().st_mtime_ns != before


def test_every_input_failing_exits_1_and_bad_arguments_exit_2(tmp_path):
    (tmp_path / "zero.mp4").write_bytes(b"")
    runner = CliRunner()
    failed = runner.invoke(app, ["run", str(tmp_path / "zero.mp4"), "-o", str(tmp_path / "out"), "--executor", "local"])
    assert failed.exit_code == 1
    missing = runner.invoke(app, ["run", str(tmp_path / "nope.mp4"), "-o", str(tmp_path / "out2")])
    assert missing.exit_code == 2
    assert "nope.mp4: no such file or directory" in missing.output
    assert not (tmp_path / "out2").exists()
