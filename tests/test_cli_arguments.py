"""Bad arguments are one line and exit 2, before any model loads; one weights file is one setting
(issue 26 item 3)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from detectors import find_local_weights
from pipeline.cli import app
from pipeline.config import Config
from pipeline.detector_choice import choose_detector
from typer.testing import CliRunner

CLIP = "tvhid_handshake_0001.avi"


def fails_in_one_line(args: list[str], expected: str) -> None:
    """Run the real command in a subprocess (no test-runner capture): exit 2, one line naming the problem."""
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert "Traceback" not in done.stderr


def test_out_naming_an_existing_file(tmp_path, media_dir):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    fails_in_one_line(["run", str(media_dir / CLIP), "-o", str(afile)], f"{afile}: -o names an existing file")


def test_weights_not_on_disk_require_yolo(tmp_path, media_dir):
    fails_in_one_line(["run", str(media_dir / CLIP), "-o", str(tmp_path / "o"), "--weights", "yolo11s-pose.pt"],
                      "yolo11s-pose.pt: YOLO weights file not found")
    fails_in_one_line(["run", str(media_dir / CLIP), "-o", str(tmp_path / "o"), "--weights", "yolo11n-pose.pt",
                       "--detector", "mediapipe"], "--detector mediapipe does not use them")
    assert not (tmp_path / "o").exists()  # nothing written before the arguments were checked


def test_detector_line_comes_after_argument_errors(tmp_path):
    result = CliRunner().invoke(app, ["run", str(tmp_path / "absent.mp4"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "detector:" not in result.output


@pytest.mark.skipif(find_local_weights("yolo11n-pose.pt") is None, reason="yolo11n-pose.pt is not installed")
def test_one_weights_file_one_config_hash(tmp_path):
    packaged = find_local_weights("yolo11n-pose.pt").resolve()
    copy = tmp_path / "copy" / "yolo11n-pose.pt"
    copy.parent.mkdir()
    shutil.copy(packaged, copy)

    def hashed(backend: str, weights: str, given: bool) -> str:
        detector, _, _ = choose_detector(Config().replace(detector={"backend": backend, "weights": weights}).detector,
                                         given)
        return Config().replace(detector={"backend": detector.backend, "weights": detector.weights}).hash()

    default = Config().hash()
    assert hashed("auto", "yolo11n-pose.pt", False) == default  # outputs made at defaults stay current
    assert hashed("yolo", "yolo11n-pose.pt", True) == default
    assert hashed("auto", str(packaged), True) == default
    assert hashed("yolo", str(packaged), True) == default
    other = hashed("yolo", str(copy), True)  # another file (a fine-tune would be one): another setting
    assert other != default
    assert hashed("yolo", str(copy.parent / "." / copy.name), True) == other
    assert hashed("mediapipe", "yolo11n-pose.pt", False) == hashed("mediapipe", "anything.pt", False)


def test_the_help_patch_leaves_a_typer_without_its_hook_alone(monkeypatch):
    """The command line must import under every Typer pyproject allows: one without the rich-help method the
    flags patch wraps (a GPU machine's preinstalled Typer had none) keeps its own help, and `--help` works."""
    import typer.core

    from pipeline import cli

    without_hook = type("TyperOption", (), {})
    monkeypatch.setattr(typer.core, "TyperOption", without_hook)
    cli._flags_show_no_type()  # no AttributeError
    assert not hasattr(without_hook, "display_type_rich")
    monkeypatch.undo()
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0 and "--out" in result.output
