"""A rerun never ingests socialtrace's own output (issue 26 item 1): README's layout puts the output,
exports and renders inside the input folder; the folder scan must skip all of them and say so."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from detectors import find_local_weights
from pipeline.cli import app
from pipeline.inputs import InputError, expand_inputs

CLIPS = ("tvhid_handshake_0001.avi", "deepoint_pointing_up.mov")


def touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_scan_skips_outputs_exports_and_the_out_folder(tmp_path, caplog):
    vids = tmp_path / "vids"
    real = [touch(vids / "a.mp4"), touch(vids / "sub" / "b.avi")]
    # a run's output folder (run.json), one with only a manifest, a grasp-bench export, a llava export
    # under its default name and one under a name of the user's, and the -o folder before its first run
    touch(vids / "out" / "run.json", "{}")
    touch(vids / "out" / "render.mp4")
    touch(vids / "old" / "manifest.parquet")
    touch(vids / "old" / "deep" / "r.mp4")
    touch(vids / "bench" / "json" / "v__0123456789abcdef.json", "{}")
    touch(vids / "bench" / "video" / "v_unit000.mp4")
    touch(vids / "llava" / "llava_video.json", "[]")
    touch(vids / "llava" / "video" / "v_unit000.mp4")
    touch(vids / "mine" / "train.json", json.dumps([{"video": "video/v_unit000.mp4", "conversations": []}]))
    touch(vids / "mine" / "video" / "v_unit000.mp4")
    touch(vids / "fresh_out" / "x.mp4")
    # a user's own dataset that looks a little like an export is still input
    real.append(touch(vids / "dataset" / "labels.json", json.dumps({"a": 1})).parent / "video" / "c.mp4")
    touch(real[-1])
    with caplog.at_level(logging.INFO, logger="socialtrace"):
        found = expand_inputs([str(vids)], exclude=[str(vids / "fresh_out")])
    assert found == sorted(str(p) for p in real)
    said = caplog.text
    assert "skipped 2 video files inside a socialtrace output folder" in said
    assert "skipped 1 video file inside a grasp-bench export" in said
    assert "skipped 2 video files inside a llava-video export" in said
    assert "skipped 1 video file inside the output folder of this run (-o)" in said


def test_glob_skips_outputs_but_a_named_file_is_taken(tmp_path):
    vids = tmp_path / "vids"
    touch(vids / "a.mp4")
    touch(vids / "out" / "run.json", "{}")
    render = touch(vids / "out" / "x.mp4")
    assert expand_inputs([str(vids / "**" / "*.mp4")]) == [str(vids / "a.mp4")]
    assert expand_inputs([str(render)]) == [str(render)]  # named on its own: the user asked for it
    with pytest.raises(InputError, match="outside socialtrace's own output"):
        expand_inputs([str(vids / "out" / "*.mp4")])


def test_naming_an_output_folder_itself_takes_its_videos(tmp_path):
    out = tmp_path / "out"
    touch(out / "run.json", "{}")
    render = touch(out / "x.mp4")
    assert expand_inputs([str(out)]) == [str(render)]


@pytest.mark.slow
def test_readme_layout_rerun_processes_only_the_real_inputs(tmp_path, media_dir):
    """`run vids -o vids/out`, export to vids/out/bench, render to vids/out/x.mp4, run again: nothing new."""
    vids = tmp_path / "vids"
    vids.mkdir()
    for name in CLIPS:
        os.symlink(media_dir / name, vids / name)
    out = vids / "out"
    runner = CliRunner()
    run = ["run", str(vids), "-o", str(out), "--executor", "local", "--fps", "2"]
    first = runner.invoke(app, run)
    assert first.exit_code == 0, first.output
    ids = sorted(Path(n).stem for n in CLIPS)
    assert sorted(p.stem for p in (out / "status").glob("*.json")) == ids
    exported = runner.invoke(app, ["export", str(out), "--format", "grasp-bench", "-o", str(out / "bench")])
    assert exported.exit_code == 0, exported.output
    exported = runner.invoke(app, ["export", str(out), "--format", "llava-video", "-o", str(vids / "llava")])
    assert exported.exit_code == 0, exported.output
    rendered = runner.invoke(app, ["render", str(out), "--video", ids[0], "-o", str(out / "x.mp4")])
    assert rendered.exit_code == 0, rendered.output
    assert list((out / "bench" / "video").glob("*.mp4")) and (out / "x.mp4").is_file()
    again = runner.invoke(app, run)
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "2 input videos: 0 to process, 2 already done" in said or "2 input video(s): 0 to process" in said, said
    assert "inside the output folder of this run (-o)" in said and "inside a llava-video export" in said, said
    assert sorted(p.stem for p in (out / "status").glob("*.json")) == ids
    assert json.loads((out / "run.json").read_text())["inputs"] == ids
    # the same weights file named another way is the same setting: still nothing to redo (issue 26 item 3)
    weights = find_local_weights("yolo11n-pose.pt")
    if weights is not None:
        spelled = runner.invoke(app, [*run, "--detector", "yolo", "--weights", str(weights.resolve())])
        assert spelled.exit_code == 0, spelled.output
        assert "0 to process, 2 already done" in " ".join(spelled.output.split())
