"""Resume after a crash: SIGKILL the driver of a Ray run midway, rerun, and get the tables of an
uninterrupted run; a second rerun does nothing and says so (issue #5 acceptance)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import runner
from pipeline.config import Config
from pipeline.inputs import assign_video_ids, expand_inputs
from pipeline.storage import TEMP_MARK, OutputStore
from tests.table_checks import assert_tables_equal, sorted_table

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
# short clips (about 2 s of perception each) so a kill lands between the first and the last clip
CORPUS = {
    "highfive_a.avi": "tvhid_highfive_0018.avi",
    "handshake_a.avi": "tvhid_handshake_0001.avi",
    "highfive_b.avi": "tvhid_highfive_0005.avi",
    "handshake_b.avi": "tvhid_handshake_0001.avi",
}
def manifest_without_timing(out: Path) -> pa.Table:
    return pq.read_table(out / "manifest.parquet").drop_columns(["wall_s"]).sort_by("video_id")


def run_command(corpus: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", "run", str(corpus), "-o", str(out), "--executor", "ray",
            "--workers", "2", "--fps", "2"]


ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "COLUMNS": "250"}


def kill_driver_after_first_clip(command: list[str], out: Path, n_clips: int) -> int:
    """Start the run, SIGKILL its driver as soon as one clip is finished; returns the finished count.

    The local Ray instance dies with its driver (Ray's fate sharing), except for a node agent or two,
    which are reaped here by pid: they are processes this test started.
    """
    proc = subprocess.Popen(command, env=ENV, cwd=str(REPO), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    status_dir = out / "status"
    descendants: dict[int, psutil.Process] = {}
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            for child in psutil.Process(proc.pid).children(recursive=True):
                descendants.setdefault(child.pid, child)
            done = [p for p in status_dir.glob("*.json")] if status_dir.is_dir() else []
            if done:
                break
            if proc.poll() is not None:
                pytest.fail(f"run ended before it could be killed:\n{proc.stderr.read()[-3000:]}")
            time.sleep(0.05)
        else:
            pytest.fail("no clip finished within 300 s")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        time.sleep(2)
        for process in descendants.values():
            try:
                process.kill()
            except psutil.Error:
                pass
    finished = len(list(status_dir.glob("*.json")))
    assert 1 <= finished < n_clips, "the kill must land midway for this test to mean anything"
    return finished


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, media_dir) -> Path:
    directory = tmp_path_factory.mktemp("resume") / "corpus"
    directory.mkdir()
    for name, source in CORPUS.items():
        shutil.copy(media_dir / source, directory / name)
    return directory


@pytest.fixture(scope="module")
def uninterrupted(corpus, tmp_path_factory) -> OutputStore:
    """The reference: the same corpus and config in one go (in-process local executor)."""
    out = tmp_path_factory.mktemp("reference")
    store = OutputStore(str(out))
    config = Config().replace(sampling={"fps": 2.0})
    videos = assign_video_ids(expand_inputs([str(corpus)]))
    statuses = list(runner.iter_local(videos, config, store))
    assert [s["status"] for s in statuses] == ["ok"] * len(CORPUS), [s.get("error") for s in statuses]
    runner.build_manifest(store, [v.video_id for v in videos])
    return store


def test_killed_run_resumes_to_the_uninterrupted_tables(corpus, uninterrupted, tmp_path):
    out = tmp_path / "out"
    command = run_command(corpus, out)
    finished_before = kill_driver_after_first_clip(command, out, len(CORPUS))
    ok_before = {s["video_id"] for s in OutputStore(str(out)).iter_statuses() if s["status"] == "ok"}
    # what a writer killed mid-write leaves behind (its final name never appears: writes are renames)
    orphan = out / "status" / f"highfive_b.json{TEMP_MARK}deadbeef"
    orphan.write_text('{"status": "o')

    rerun = subprocess.run(command, env=ENV, cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"{len(CORPUS) - len(ok_before)} to process, {len(ok_before)} already done" in rerun.stderr
    assert "removed" in rerun.stderr and "temporary file" in rerun.stderr
    record = json.loads((out / "run.json").read_text())
    assert (record["processed"], record["skipped"]) == (len(CORPUS) - len(ok_before), len(ok_before))
    assert finished_before >= len(ok_before) >= 1

    store = OutputStore(str(out))
    for name in ("tracks", "events", "qa"):  # no duplicates, no gaps
        assert_tables_equal(sorted_table(store, name), sorted_table(uninterrupted, name), name)
    assert sorted_table(store, "tracks").num_rows > 0
    assert manifest_without_timing(out).equals(manifest_without_timing(Path(uninterrupted.root)))
    assert not [p for p in out.rglob("*") if TEMP_MARK in p.name]

    # a second rerun has nothing to do, says so, and touches no table
    parts = {p: p.stat().st_mtime_ns for p in out.rglob("part-0.parquet")}
    again = subprocess.run(command, env=ENV, cwd=str(REPO), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing to do" in again.stderr
    assert f"0 ok, 0 failed, {len(CORPUS)} skipped" in again.stderr
    assert json.loads((out / "run.json").read_text())["processed"] == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("part-0.parquet")} == parts
