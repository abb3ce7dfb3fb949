"""The pictures the docs show come from docs/make_images.py (issue 26 item 7): every image README.md and
docs/viewing.md reference is one the script writes, and the script runs (on a short clip, into a temporary
folder) and writes real images."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import cv2
import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = {"README.md": REPO / "README.md", "docs/viewing.md": REPO / "docs" / "viewing.md"}


def load_script():
    spec = importlib.util.spec_from_file_location("make_images", REPO / "docs" / "make_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def referenced_images() -> set[Path]:
    found = set()
    for path in DOCS.values():
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", path.read_text()):
            found.add((path.parent / target).resolve())
    return found


def test_docs_show_exactly_the_images_the_script_makes():
    script = load_script()
    made = {(REPO / "docs" / name).resolve() for name in script.image_names(Path(script.DEFAULT_CLIP).stem)}
    assert referenced_images() == made
    assert all(path.is_file() for path in made)


@pytest.mark.slow
def test_the_script_makes_both_images_from_a_run(tmp_path, media_dir):
    script = load_script()
    made = script.make_images(media_dir / "tvhid_handshake_0001.avi", tmp_path)
    render, timeline = (tmp_path / name for name in script.image_names("tvhid_handshake_0001"))
    assert made["files"] == [str(render), str(timeline)]
    assert made["backend"] in ("yolo", "mediapipe") and made["people"] >= 1
    for path in (render, timeline):
        image = cv2.imread(str(path))
        assert image is not None and image.shape[0] > 100 and image.shape[1] > 100, path
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([render.name, timeline.name])  # no temporaries left
