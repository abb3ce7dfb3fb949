"""Regenerate the pictures README.md and docs/viewing.md show, from today's defaults, so they cannot go
stale silently: `socialtrace run` on a shared clip at default settings, then the render's frame at 1.5 s
and the clip's timeline.

    python docs/make_images.py                          # atd_kitchen from ../shared/media into docs/
    python docs/make_images.py --clip PATH --dest DIR   # another clip or folder (the tests use a short one)

It prints what the captions should say (backend, people, events, QA items); the images are written
atomically as docs/<clip>_render.jpg and docs/<clip>_timeline.png (``image_names``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CLIP = "atd_kitchen.mp4"
FRAME_SECONDS = 2.5  # the rendered sample shown: both people look at Person 1's hands then (shared attention)


def image_names(video_id: str) -> tuple[str, str]:
    """(render frame, timeline) file names for a clip: what the docs reference."""
    return f"{video_id}_render.jpg", f"{video_id}_timeline.png"


def _media_dir() -> Path:
    sys.path.insert(0, str(REPO))
    from tests.shared_media import find_media_dir

    return find_media_dir()


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    write(tmp)
    os.replace(tmp, path)


def make_images(clip: Path, dest: Path) -> dict:
    """Run, render and draw ``clip`` into ``dest``; returns the caption facts and the files written."""
    import av
    import cv2

    from pipeline.render import render_video
    from pipeline.timeline import write_timeline

    video_id = clip.stem
    render_name, timeline_name = image_names(video_id)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "out"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(clip), "-o", str(out),
                               "--executor", "local"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{clip}: socialtrace run failed:\n{done.stderr[-2000:]}")
        status = json.loads((out / "status" / f"{video_id}.json").read_text())
        rendered = render_video(str(out), video_id, Path(work) / "render.mp4")
        with av.open(str(rendered.path)) as container:
            frames = [f.to_ndarray(format="bgr24") for f in container.decode(video=0)]
        frame = frames[min(len(frames) - 1, round(FRAME_SECONDS * rendered.fps))]
        def write_jpeg(path: Path) -> None:
            if not cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 88]):
                raise SystemExit(f"{path}: could not write the image")

        _atomic(dest / render_name, write_jpeg)
        _atomic(dest / timeline_name, lambda p: write_timeline(str(out), video_id, p))
    detector = next((line for line in done.stderr.splitlines() if line.startswith("detector: ")), "")
    return {"clip": clip.name, "detector": detector.removeprefix("detector: "), "backend": status["backend"],
            "people": status["n_persons"], "events": status["n_events"], "qa": status["n_qa"],
            "frame_seconds": FRAME_SECONDS, "files": [str(dest / render_name), str(dest / timeline_name)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clip", type=Path, default=None, help=f"video to draw (default: {DEFAULT_CLIP} of the shared media)")
    parser.add_argument("--dest", type=Path, default=REPO / "docs", help="folder for the images (default: docs/)")
    args = parser.parse_args()
    clip = args.clip or _media_dir() / DEFAULT_CLIP
    if not clip.is_file():
        raise SystemExit(f"{clip}: no such video file")
    print(json.dumps(make_images(clip, args.dest), indent=1))


if __name__ == "__main__":
    main()
