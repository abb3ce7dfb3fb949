"""Ctrl-C and SIGTERM end a run as "interrupted" in run.json, with one line saying what finished, what did
not and how to go on (issue 26 item 5). A real `socialtrace run` in a subprocess on two short clips,
signalled once the first clip's status file is written."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CLIPS = ("deepoint_pointing_up.mov", "tvhid_handshake_0001.avi")  # sorted: run in this order


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_leaves_an_interrupted_record_and_the_resume_line(tmp_path, media_dir, signum, code):
    vids = tmp_path / "vids"
    vids.mkdir()
    for name in CLIPS:
        os.symlink(media_dir / name, vids / name)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", str(vids), "-o", str(out),
                             "--executor", "local", "--fps", "2"], env=env, cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = out / "status" / "deepoint_pointing_up.json"
    deadline = time.monotonic() + 300
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr[-2000:]
    record = json.loads((out / "run.json").read_text())
    assert record["state"] == "interrupted" and record["interrupted_by"] == signal.Signals(signum).name
    lines = [line for line in (stdout + stderr).splitlines() if line.startswith("interrupted")]
    assert lines == [f"interrupted ({signal.Signals(signum).name}): 1 video finished (deepoint_pointing_up), "
                     f"1 video did not (tvhid_handshake_0001) -> {out}; rerun the same command to resume"], stderr
    assert "Traceback" not in stderr
    assert not (out / "status" / "tvhid_handshake_0001.json").exists()


def test_every_form_of_a_stop_request_maps_to_its_signal():
    from pipeline.interrupts import Interrupted, as_interrupt

    assert as_interrupt(KeyboardInterrupt()).exit_code == 130
    assert as_interrupt(Interrupted(signal.SIGTERM)).exit_code == 143
    # ray.init replaces the SIGTERM handler with one that calls sys.exit(15) in the driver
    stopped = as_interrupt(SystemExit(signal.SIGTERM))
    assert stopped.name == "SIGTERM" and stopped.exit_code == 143
    assert as_interrupt(SystemExit(1)) is None and as_interrupt(ValueError("x")) is None


def test_a_stop_request_wrapped_on_its_way_out_is_still_one():
    """A SIGTERM that lands while a lazy import builds a class (CI: pydeprecate's dataclass) raises from inside
    ``__set_name__``, and Python hands it on wrapped in a RuntimeError: still the stop request, not a crash."""
    from pipeline.interrupts import Interrupted, as_interrupt

    class Field:
        def __set_name__(self, owner, name):
            raise Interrupted(signal.SIGTERM)

    try:
        type("Plan", (), {"reason": Field()})
    except BaseException as exc:  # noqa: BLE001 - what Python raised is the point
        wrapped = exc
    stopped = as_interrupt(wrapped)
    assert stopped is not None and stopped.name == "SIGTERM" and stopped.exit_code == 143
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise OSError("closing a file failed while stopping")
    except OSError as exc:
        assert as_interrupt(exc).exit_code == 130
    assert as_interrupt(RuntimeError("x")) is None
