"""What the command line says (issue 26 item 7, issue 24 item 3): plain unwrapped log lines when stderr is
not a terminal, one `detector:` line, -v's per-stage debug lines, plurals, `export` in a sentence, help
without `<bool>`, files that cannot be video rejected before any model loads, and subcommands that do not
perceive never importing the models' libraries. Real runs in subprocesses, stderr a pipe (as in CI or
`ray job logs`)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.plurals import plural

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
CLIP = "tvhid_handshake_0001.avi"
MODEL_LIBRARIES = ("torch", "ultralytics", "mediapipe")


def socialtrace(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *map(str, args)], env=ENV, cwd=str(REPO),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def verbose_run(tmp_path_factory, media_dir):
    root = tmp_path_factory.mktemp("output")
    vids = root / "vids"
    vids.mkdir()
    os.symlink(media_dir / CLIP, vids / CLIP)
    out = root / "out"
    done = socialtrace("run", vids, "-o", out, "--executor", "local", "-v")
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done.stderr


def test_log_lines_are_plain_and_whole_off_a_terminal(verbose_run):
    _, stderr = verbose_run
    assert "│" not in stderr and "╭" not in stderr  # no rich boxes
    logged = [line for line in stderr.splitlines() if re.match(r"\d\d:\d\d:\d\d (DEBUG|INFO|WARNING|ERROR) ", line)]
    assert any(len(line) > 100 for line in logged), logged  # not wrapped at 80 columns
    assert any(" INFO 1 input video: 1 to process" in line for line in logged), logged


def test_one_detector_line_and_per_stage_debug_lines(verbose_run):
    _, stderr = verbose_run
    assert len([line for line in stderr.splitlines() if line.startswith("detector: ")]) == 1
    for expected in ("DEBUG inputs: 1 video file found", "DEBUG plan ready", "DEBUG perception worker ready in",
                     "DEBUG tvhid_handshake_0001: perception done in", "DEBUG tvhid_handshake_0001: events and QA in",
                     "DEBUG tvhid_handshake_0001: stage seconds decode", "DEBUG run done"):
        assert expected in stderr, expected


def test_counts_are_in_the_plural_only_when_not_one(verbose_run):
    _, stderr = verbose_run
    assert not re.search(r"(?<![\d.])1 (events|QA items|frames|videos|clips)\b", stderr), stderr
    assert [plural(n, "QA item") for n in (0, 1, 2)] == ["0 QA items", "1 QA item", "2 QA items"]
    assert plural(1, "person") == "1 person" and plural(3, "person") == "3 people"


def test_export_says_a_sentence(verbose_run, tmp_path):
    out, _ = verbose_run
    done = socialtrace("export", out, "--format", "grasp-bench", "-o", tmp_path / "bench")
    assert done.returncode == 0, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    # the counts are the run's own: its QA items and the videos that have any (a clip may have none)
    import pyarrow.parquet as pq

    per_video = [pq.read_table(f).num_rows for f in sorted((out / "qa").glob("video_id=*/*.parquet"))]
    items, videos = sum(per_video), sum(n > 0 for n in per_video)
    assert re.fullmatch(rf"exported {plural(items, 'QA item')} of {plural(videos, 'video')} as grasp-bench: "
                        rf"\d+ labelled clips? \(\d+ frames?\) -> {re.escape(str(tmp_path / 'bench'))}", last), last


@pytest.mark.parametrize("command", [["inspect"], ["inspect", "--json"], ["events"], ["qa"]])
def test_subcommands_that_do_not_perceive_import_no_model_library(verbose_run, command):
    out, _ = verbose_run
    script = ("import sys; from typer.testing import CliRunner; from pipeline.cli import app; "
              f"r = CliRunner().invoke(app, {[command[0], str(out), *command[1:]]!r}); "
              f"print(r.exit_code, [m for m in {MODEL_LIBRARIES!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], env=ENV, cwd=str(REPO), capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_files_that_cannot_be_video_fail_before_models_load(tmp_path):
    vids = tmp_path / "vids"
    vids.mkdir()
    (vids / "empty.mp4").write_bytes(b"")
    (vids / "notes.mp4").write_text("these are notes, not a video\n" * 50)
    out = tmp_path / "out"
    done = socialtrace("run", vids, "-o", out, "--executor", "local", "-v")
    assert done.returncode == 1, done.stderr
    assert "perception worker ready" not in done.stderr  # no model was loaded
    statuses = {p.stem: json.loads(p.read_text()) for p in (out / "status").glob("*.json")}
    assert statuses["empty"]["status"] == "failed" and "empty file (0 bytes)" in statuses["empty"]["error"]
    assert statuses["notes"]["status"] == "failed" and str(vids / "notes.mp4") in statuses["notes"]["error"]
    assert "0 ok, 2 failed, 0 skipped" in done.stderr
    # the plan says what became of them, never that everything was already done
    assert "0 to process, 0 already done, 2 unreadable" in done.stderr and "nothing to do" not in done.stderr


def test_help_shows_no_bool_after_flags():
    for command in ([], ["run"], ["export"], ["render"], ["inspect"], ["score"]):
        shown = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0
        assert "<bool>" not in shown.output, command
    assert "<float>" in CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output  # values keep theirs
