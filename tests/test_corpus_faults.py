"""A corpus run on Ray survives bad files, killed workers and hung clips (issue #5 acceptance)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import av
import numpy as np
import psutil
import pyarrow.parquet as pq
import pytest

from pipeline import schema
from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.storage import TEMP_MARK, OutputStore

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
GOOD = {"highfive": "tvhid_highfive_0018.avi", "handshake": "tvhid_handshake_0001.avi"}
BAD_REASONS = {  # video_id -> words its error must contain
    "truncated": ("truncated",),
    "zero": ("empty file",),
    "notes": ("not a readable video",),
    "soundtrack": ("no video stream", "audio"),
}


def write_audio_only_mp4(path: Path, seconds: float = 1.0, rate: int = 16000) -> None:
    """An .mp4 holding one AAC stream and no video (a podcast renamed into a video corpus)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=rate)
        stream.layout = "mono"
        n = int(seconds * rate)
        tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(n) / rate)).astype(np.float32)[None]
        for start in range(0, n, 1024):
            frame = av.AudioFrame.from_ndarray(tone[:, start:start + 1024], format="fltp", layout="mono")
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)


def build_corpus(directory: Path, media_dir: Path) -> Path:
    directory.mkdir()
    for video_id, name in GOOD.items():
        shutil.copy(media_dir / name, directory / f"{video_id}{Path(name).suffix}")
    data = (media_dir / "atd_kitchen.mp4").read_bytes()
    (directory / "truncated.mp4").write_bytes(data[: len(data) // 3])
    (directory / "zero.mp4").write_bytes(b"")
    (directory / "notes.mp4").write_text("meeting notes, not a video\n")
    write_audio_only_mp4(directory / "soundtrack.mp4")
    return directory


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory, media_dir):
    """The acceptance command, as a user types it: a local Ray instance is started on demand."""
    root = tmp_path_factory.mktemp("faults")
    corpus = build_corpus(root / "corpus", media_dir)
    out = root / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "COLUMNS": "250"}
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "run", str(corpus), "-o", str(out), "--executor", "ray",
         "--workers", "2", "--fps", "2", "--allow-failures"],
        capture_output=True, text=True, env=env, timeout=400, cwd=str(REPO),
    )
    return corpus, out, proc


def test_bad_files_fail_with_reasons_and_the_run_succeeds(corpus_run):
    corpus, out, proc = corpus_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = pq.read_table(out / "manifest.parquet")
    assert manifest.schema == schema.MANIFEST_SCHEMA
    rows = {r["video_id"]: r for r in manifest.to_pylist()}
    assert set(rows) == set(GOOD) | set(BAD_REASONS)  # one row per input
    for video_id in GOOD:
        assert rows[video_id]["status"] == "ok", rows[video_id]["error"]
        assert rows[video_id]["n_frames"] >= 4 and rows[video_id]["n_persons"] >= 1
        for table in ("tracks", "events", "qa"):
            assert (out / table / f"video_id={video_id}" / "part-0.parquet").is_file()
    for video_id, words in BAD_REASONS.items():
        row = rows[video_id]
        assert row["status"] == "failed"
        assert str(corpus / f"{video_id}.mp4") in row["error"]  # the error names the file ...
        assert all(w in row["error"] for w in words), row["error"]  # ... and the reason
        for table in ("tracks", "events", "qa"):  # nothing partial is left for a failed clip
            assert not (out / table / f"video_id={video_id}").exists()
        # the user sees each failure on the console too
        assert f"{video_id} failed" in proc.stderr
    assert not [p for p in out.rglob("*") if TEMP_MARK in p.name]
    assert "2 ok, 4 failed, 0 skipped" in proc.stderr
    record = json.loads((out / "run.json").read_text())
    assert record["executor"] == "ray" and record["totals"]["ok"] == 2 and record["totals"]["failed"] == 4


# --- dying and hanging workers (in-process driver on a small Ray instance) -------------------------

class ActorKiller:
    """SIGKILLs perception actors of this test's own Ray instance while they are inside a clip, the way
    the kernel's OOM killer would; at most ``limit`` kills."""

    def __init__(self, limit: int):
        self.limit = limit
        self.killed: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _busy_actors(self) -> list[psutil.Process]:
        found = []
        for process in psutil.Process().children(recursive=True):  # only processes this test started
            try:
                if "PerceptionActor.perceive" in " ".join(process.cmdline()):
                    found.append(process)
            except psutil.Error:
                pass
        return found

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.killed) < self.limit:
            for process in self._busy_actors():
                time.sleep(0.3)  # let it get into the clip
                try:
                    process.send_signal(signal.SIGKILL)
                    self.killed.append(process.pid)
                except psutil.Error:
                    pass
                break
            time.sleep(0.05)

    def __enter__(self) -> "ActorKiller":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _run_one(media_dir: Path, out: Path, config: Config, name: str) -> tuple[dict, float]:
    from pipeline.ray_runner import iter_ray

    video = InputVideo(video_id=Path(name).stem, uri=str(media_dir / name))
    started = time.monotonic()
    statuses = list(iter_ray([video], config, str(out)))
    assert len(statuses) == 1
    return statuses[0], time.monotonic() - started


def test_a_killed_worker_is_replaced_and_the_clip_retried(ray_instance, media_dir, tmp_path):
    config = Config().replace(sampling={"fps": 4.0}, run={"workers": 1, "max_retries": 2})
    with ActorKiller(limit=1) as killer:
        status, _ = _run_one(media_dir, tmp_path / "out", config, "tvhid_highfive_0018.avi")
    assert len(killer.killed) == 1
    assert status["status"] == "ok", status["error"]
    assert status["n_frames"] == 11  # 2.7 s at 4 fps
    tracks = OutputStore(str(tmp_path / "out")).read_video_table("tracks", "tvhid_highfive_0018")
    assert tracks is not None and tracks.num_rows > 0 and status["n_persons"] >= 2


def test_a_clip_that_kills_every_worker_fails_after_bounded_retries(ray_instance, media_dir, tmp_path):
    config = Config().replace(sampling={"fps": 4.0}, run={"workers": 1, "max_retries": 1})
    with ActorKiller(limit=5) as killer:
        status, _ = _run_one(media_dir, tmp_path / "out", config, "tvhid_highfive_0018.avi")
    assert len(killer.killed) == 2  # first attempt + one retry, then no more
    assert status["status"] == "failed"
    assert status["error"].startswith(str(media_dir / "tvhid_highfive_0018.avi"))
    assert "perception worker died on each of 2 attempts" in status["error"]
    store = OutputStore(str(tmp_path / "out"))
    assert store.read_status("tvhid_highfive_0018")["status"] == "failed"
    assert store.read_video_table("tracks", "tvhid_highfive_0018") is None


def test_a_clip_past_its_timeout_is_failed_and_nothing_waits_forever(ray_instance, media_dir, tmp_path):
    # 34 frames at 10 fps take far longer than 1 s of perception on this machine
    config = Config().replace(sampling={"fps": 10.0}, run={"workers": 1, "clip_timeout_seconds": 1.0,
                                                          "clip_timeout_per_video_second": 0.0})
    status, elapsed = _run_one(media_dir, tmp_path / "out", config, "atd_kitchen.mp4")
    assert status["status"] == "failed"
    assert "timed out after 1 s (run.clip_timeout_seconds 1 s" in status["error"]
    assert str(media_dir / "atd_kitchen.mp4") in status["error"]
    assert elapsed < 120  # actor start-up + 1 s, not the clip's full perception
    assert OutputStore(str(tmp_path / "out")).read_video_table("tracks", "atd_kitchen") is None


def test_workers_that_cannot_start_stop_the_run_with_the_reason(ray_instance, media_dir, tmp_path):
    from pipeline.ray_runner import PerceptionStartupError

    config = Config().replace(detector={"backend": "yolo", "weights": str(tmp_path / "missing.pt")},
                              run={"workers": 1, "max_retries": 0})
    with pytest.raises(PerceptionStartupError, match="missing.pt: YOLO weights file not found"):
        _run_one(media_dir, tmp_path / "out", config, "tvhid_handshake_0001.avi")


def test_a_long_video_gets_time_in_proportion_to_its_length(ray_instance, media_dir, tmp_path):
    # the same clip and base timeout as above, plus 30 s per second of video (3.4 s): it now finishes
    config = Config().replace(sampling={"fps": 10.0}, run={"workers": 1, "clip_timeout_seconds": 1.0,
                                                          "clip_timeout_per_video_second": 30.0})
    status, _ = _run_one(media_dir, tmp_path / "out", config, "atd_kitchen.mp4")
    assert status["status"] == "ok", status["error"]
    assert status["n_frames"] == 34 and status["timings"]["total"] > 1.0


# --- the same faults inside one segment of a long video ------------------------------------------

# tvhid_highfive_0018 (2.7 s) at 4 fps as two segments of at most 1.5 s (0.5 s overlap)
SEGMENTED = {"fps": 4.0, "max_clip_seconds": 1.5, "segment_overlap_seconds": 0.5}


def test_a_worker_killed_inside_a_segment_is_retried_and_the_video_completes(ray_instance, media_dir, tmp_path):
    config = Config().replace(sampling=SEGMENTED, run={"workers": 2, "max_retries": 2})
    with ActorKiller(limit=1) as killer:
        status, _ = _run_one(media_dir, tmp_path / "out", config, "tvhid_highfive_0018.avi")
    assert len(killer.killed) == 1
    assert status["status"] == "ok", status["error"]
    assert status["n_segments"] == 2 and status["n_frames"] == 11  # the same frames as a whole run
    tracks = OutputStore(str(tmp_path / "out")).read_video_table("tracks", "tvhid_highfive_0018")
    assert tracks.column("frame_idx").to_pylist() == sorted(tracks.column("frame_idx").to_pylist())
    assert set(tracks.column("person_id").to_pylist()) >= {0, 1}


def test_a_segment_past_its_timeout_fails_its_video_naming_the_segment(ray_instance, media_dir, tmp_path):
    config = Config().replace(sampling=SEGMENTED, run={"workers": 2, "clip_timeout_seconds": 0.5,
                                                       "clip_timeout_per_video_second": 0.0})
    status, elapsed = _run_one(media_dir, tmp_path / "out", config, "tvhid_highfive_0018.avi")
    assert status["status"] == "failed"
    assert re.search(r"segment [12] of 2 \[[\d.]+, [\w.]+\) s: .*timed out after 0.5 s", status["error"]), status["error"]
    assert status["error"].startswith(str(media_dir / "tvhid_highfive_0018.avi"))
    assert elapsed < 120
    store = OutputStore(str(tmp_path / "out"))
    assert store.read_video_table("tracks", "tvhid_highfive_0018") is None
    assert store.read_status("tvhid_highfive_0018")["status"] == "failed"
