"""Nothing lost, nothing surprising (issue 12): stable video ids, partitions every reader accepts, stages
redone only when their own settings change, exit status, --help, the run record of an interrupted run,
progress within a video, and library noise kept off the console. Real models on a shared clip and on a
video with nobody in it, through the command line as a user types it."""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import psutil
import pyarrow.parquet as pq
import pytest
from rich.console import Console
from typer.testing import CliRunner

from pipeline import cli, runner
from pipeline.annotate import people
from pipeline.cli import app
from pipeline.config import Config
from pipeline.inputs import InputVideo, hashed_id
from pipeline.storage import OutputStore
from tests.table_checks import assert_tables_equal

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "COLUMNS": "250"}
RUN = ["--executor", "local", "--fps", "2"]
NOISE = ("inference_feedback_manager", "GetPrototype", "TensorFlow Lite")


def write_blank_video(path: Path, seconds: float = 2.0, fps: int = 10) -> Path:
    """A grey video with nobody in it: every table of its clip is empty."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        for _ in range(int(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(np.full((120, 160, 3), 128, np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def said(result) -> str:
    """The console output with rich's line wrapping undone."""
    return " ".join(result.output.split())


def mtimes(out: Path, table: str) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in (out / table).glob("*/part-0.parquet")}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, media_dir):
    """colA/clip.avi (two people, with QA) and colA/nobody.mp4 (empty tables) into a fresh folder."""
    root = tmp_path_factory.mktemp("safety")
    col_a = root / "colA"
    col_a.mkdir()
    shutil.copy(media_dir / "tvhid_highfive_0018.avi", col_a / "clip.avi")
    write_blank_video(col_a / "nobody.mp4")
    out = root / "out"
    result = invoke("run", col_a, "-o", out, *RUN)
    assert result.exit_code == 0, result.output
    return root, out


def copy_of(first_run, name: str) -> Path:
    root, out = first_run
    copy = root / name
    shutil.copytree(out, copy)  # copy2: modification times are kept
    return copy


# --- 1: a different file never takes an id; the manifest says what the latest run was given ----------

def test_a_second_file_with_the_same_name_never_replaces_the_first(first_run):
    root, _ = first_run
    out = copy_of(first_run, "out_ids")
    store = OutputStore(str(out))
    first_tracks = store.read_video_table("tracks", "clip")
    first_mtimes = mtimes(out, "tracks")
    col_b = root / "colB"
    col_b.mkdir()
    other = write_blank_video(col_b / "clip.mp4", seconds=1.0)

    second = invoke("run", other, "-o", out, *RUN)
    assert second.exit_code == 0, second.output
    new_id = hashed_id(str(other))
    assert f"video_id {new_id}" in said(second)
    # colA's clip keeps its id, its status and its tables, untouched
    assert store.read_status("clip")["uri"] == str(root / "colA" / "clip.avi")
    assert_tables_equal(store.read_video_table("tracks", "clip"), first_tracks, "tracks")
    assert {k: v for k, v in mtimes(out, "tracks").items() if k != f"video_id={new_id}"} == first_mtimes
    assert store.read_status(new_id)["uri"] == str(other)
    manifest = {r["video_id"]: r for r in pq.read_table(out / "manifest.parquet").to_pylist()}
    assert set(manifest) == {"clip", "nobody", new_id}  # nothing lost
    assert {k for k, r in manifest.items() if r["in_latest_run"]} == {new_id}

    # the first file again, alone: the same id as before, nothing to do
    again = invoke("run", root / "colA" / "clip.avi", "-o", out, *RUN)
    assert again.exit_code == 0, again.output
    assert "nothing to do" in said(again)
    manifest = {r["video_id"]: r for r in pq.read_table(out / "manifest.parquet").to_pylist()}
    assert {k for k, r in manifest.items() if r["in_latest_run"]} == {"clip"}


# --- 2: every partition loads with Hugging Face datasets, and rows know their video ---------------

def test_tables_with_an_empty_clip_load_with_hf_datasets(first_run, tmp_path):
    import datasets

    _, out = first_run
    store = OutputStore(str(out))
    assert store.read_status("nobody")["status"] == "ok"
    for table in ("tracks", "events", "qa"):
        assert store.read_video_table(table, "nobody").num_rows == 0  # the empty clip has a file per table
        loaded = datasets.load_dataset("parquet", data_files=str(out / table / "*" / "*.parquet"), split="train",
                                       cache_dir=str(tmp_path / "hf"))
        whole = store.read_table(table)
        assert whole.num_rows > 0, table  # the other clip has rows: the load is not vacuous
        assert loaded.num_rows == whole.num_rows, table
        assert sorted(loaded["video_id"]) == sorted(whole.column("video_id").to_pylist()) == ["clip"] * whole.num_rows


# --- 4: stages redone only when their own settings change; recomputed tables are kept --------------

def test_a_recomputed_qa_seed_survives_a_rerun_and_perception_is_not_redone(first_run):
    root, _ = first_run
    out = copy_of(first_run, "out_seed")
    store = OutputStore(str(out))
    tracks_before, events_before = mtimes(out, "tracks"), mtimes(out, "events")
    seed0 = store.read_table("qa")

    recomputed = invoke("qa", out, "--seed", "3")
    assert recomputed.exit_code == 0, recomputed.output
    seed3 = store.read_table("qa")
    assert seed3.num_rows > 0 and not seed3.equals(seed0)  # the seed changes phrasings / option order

    rerun = invoke("run", root / "colA", "-o", out, *RUN)  # the original command
    assert rerun.exit_code == 0, rerun.output
    assert "keeping its qa tables from `socialtrace qa`" in said(rerun)
    assert "0 to process" in said(rerun)
    assert store.read_table("qa").equals(seed3)
    assert mtimes(out, "tracks") == tracks_before and mtimes(out, "events") == events_before

    # events recomputed with other thresholds: kept by the next run as well
    override = root / "events.yaml"
    override.write_text("events: {min_mutual_gaze_seconds: 0.5}\n")
    assert invoke("events", out, "--config", override).exit_code == 0
    recomputed_events = store.read_table("events")
    rerun = invoke("run", root / "colA", "-o", out, *RUN)
    assert rerun.exit_code == 0, rerun.output
    assert "keeping its events tables from `socialtrace events`" in said(rerun)
    assert store.read_table("events").equals(recomputed_events) and mtimes(out, "tracks") == tracks_before


def test_a_new_seed_on_run_redoes_qa_only(first_run):
    root, _ = first_run
    out = copy_of(first_run, "out_rederive")
    store = OutputStore(str(out))
    tracks_before, events_before = mtimes(out, "tracks"), mtimes(out, "events")
    result = invoke("run", root / "colA", "-o", out, *RUN, "--seed", "5")
    assert result.exit_code == 0, result.output
    assert "0 to process" in said(result) and "re-deriving" in said(result)
    assert mtimes(out, "tracks") == tracks_before and mtimes(out, "events") == events_before
    wanted = Config().replace(sampling={"fps": 2.0}, seed=5).stage_hashes()
    for video_id in ("clip", "nobody"):
        assert store.read_status(video_id)["stage_hashes"] == wanted
    # the same QA as a fresh run with seed 5 would write
    status = store.read_status("clip")
    expected, _, _ = runner.derive_qa(store.read_video_table("events", "clip"), store.read_video_table("tracks", "clip"),
                                      Config().replace(sampling={"fps": 2.0}, seed=5), status["duration_s"],
                                      runner.shots_of_status(status))
    assert store.read_video_table("qa", "clip").equals(expected)


# --- 5: the exit status tells a script that a clip failed ---------------------------------------------

def test_any_failed_clip_exits_1_unless_failures_are_allowed(first_run):
    root, _ = first_run
    out = copy_of(first_run, "out_exit")
    zero = root / "zero.mp4"
    zero.write_bytes(b"")
    strict = invoke("run", root / "colA", zero, "-o", out, *RUN)
    assert strict.exit_code == 1, strict.output
    assert "0 ok, 1 failed, 2 skipped" in said(strict) and "zero.mp4" in said(strict)
    allowed = invoke("run", root / "colA", zero, "-o", out, *RUN, "--allow-failures")
    assert allowed.exit_code == 0, allowed.output
    # with nothing ok among this run's inputs, the flag does not make it a success
    assert invoke("run", zero, "-o", out, *RUN, "--allow-failures").exit_code == 1


# --- 6: --help shows the defaults ------------------------------------------------------------------------

def test_help_shows_defaults_and_the_exit_status():
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for default in ("[default: 2, from the config]", "[default: bytetrack]", "[default: one per CPU core]",
                    "[default: 0]", "[default: auto]"):
        assert default in text, default
    assert "--allow-failures" in text and "Exit status" in text


# --- 7 and 9: an interrupted run can be inspected; the console carries no library noise ------------------

def test_an_interrupted_run_is_inspectable_and_the_console_is_quiet(first_run, tmp_path):
    root, _ = first_run
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pipeline.cli", "run", str(root / "colA"), "-o", str(out), *RUN]
    proc = subprocess.Popen(command, env=ENV, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    record = out / "run.json"
    deadline = time.monotonic() + 300
    while not (out / "status").is_dir() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if record.exists():
            assert json.loads(record.read_text())["state"] == "running"
    children = psutil.Process(proc.pid).children(recursive=True) if proc.poll() is None else []
    proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    for child in children:
        if child.is_running():
            child.kill()
    stderr = stderr.decode(errors="replace")
    finished = [p.stem for p in (out / "status").glob("*.json")]
    assert finished == ["clip"], (finished, stderr[-2000:])  # killed while the second video ran

    inspected = CliRunner().invoke(app, ["inspect", str(out), "--json"])
    assert inspected.exit_code == 0, inspected.output
    summary = json.loads(inspected.output)
    assert summary["run"] == {"state": "running", "inputs": 2, "inputs_finished": 1}
    assert summary["clips"]["ok"] == 1 and summary["qa_total"] > 0
    shown = CliRunner().invoke(app, ["inspect", str(out)], env={"COLUMNS": "200"})
    assert "has not finished" in shown.output and "1 of its 2 inputs" in shown.output

    # models ran in that process (the first clip finished) and said nothing on the console
    assert stderr.count("detector: ") == 1 and "detector backend: " not in stderr  # said once, by the CLI
    assert not [word for word in NOISE if word in stderr], stderr[-3000:]


MEDIAPIPE_SNIPPET = """
import os, sys
if sys.argv[1] == "quiet":
    from pipeline.quiet import quiet_native_stderr
    quiet_native_stderr()
import mediapipe as mp, numpy as np
with mp.solutions.face_mesh.FaceMesh(refine_landmarks=True) as mesh:  # closed: see detectors.mediapipe_models
    mesh.process(np.zeros((64, 64, 3), np.uint8))
os.write(2, b"a native line that is not noise\\n")
print("a python line", file=sys.stderr)
"""


def test_the_noise_filter_drops_only_library_noise():
    loud = subprocess.run([sys.executable, "-c", MEDIAPIPE_SNIPPET, "loud"], env=ENV, capture_output=True,
                          text=True, timeout=120)
    quiet = subprocess.run([sys.executable, "-c", MEDIAPIPE_SNIPPET, "quiet"], env=ENV, capture_output=True,
                           text=True, timeout=120)
    assert loud.returncode == quiet.returncode == 0, quiet.stderr
    assert "inference_feedback_manager" in loud.stderr  # what -v keeps
    assert not [word for word in NOISE if word in quiet.stderr], quiet.stderr
    assert "a native line that is not noise" in quiet.stderr and "a python line" in quiet.stderr


# --- 8: progress within a video ------------------------------------------------------------------------

class RecordingProgress(runner.VideoProgress):
    def __init__(self):
        self.videos: list[tuple[str, int]] = []
        self.frames: dict[str, int] = {}

    def start_video(self, video, frames):
        self.videos.append((video.video_id, frames))
        self.frames[video.video_id] = 0

    def advance_frames(self, n):
        self.frames[self.videos[-1][0]] += n


def test_progress_counts_frames_within_a_video(first_run, tmp_path, monkeypatch, media_dir):
    root, _ = first_run
    config = Config().replace(sampling={"fps": 2.0}, detector={"batch_size": 2})
    videos = [InputVideo("nobody", str(root / "colA" / "nobody.mp4")),
              InputVideo("handshake", str(media_dir / "tvhid_handshake_0001.avi"))]
    recorded = RecordingProgress()
    statuses = list(runner.iter_local(videos, config, OutputStore(str(tmp_path / "out")), progress=recorded))
    assert [s["status"] for s in statuses] == ["ok", "ok"]
    # told in advance how many frames each video samples, then each batch as it is perceived
    # (the regular samples at 0, 0.5, 1.0 and 1.5 s and each clip's last frame, over half a step later)
    assert recorded.videos == [(s["video_id"], s["n_frames"]) for s in statuses] == [("nobody", 5), ("handshake", 5)]
    assert recorded.frames == {"nobody": 5, "handshake": 5}

    # in a terminal the display shows that count under the videos bar
    screen = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=screen, force_terminal=True, width=120))
    with cli._RunDisplay(1) as display:
        display.start_video(videos[1], 5)
        display.advance_frames(2)
        display.progress.refresh()
        midway = screen.getvalue()
        display.advance_frames(3)
        display.video_done(statuses[1])
    assert "handshake frames" in midway and "2/5" in midway and "0/1" in midway
    assert "5/5" in screen.getvalue() and "1/1" in screen.getvalue()


# --- 11: wording ----------------------------------------------------------------------------------------

def test_counts_of_people_read_right(first_run):
    assert (people(0), people(1), people(2)) == ("0 people", "1 person", "2 people")
