"""Face descriptors (detectors/face_identity.py) on real faces, and the frames they are read from.

A frame whose rows FFmpeg pads to its alignment (312 px wide: 936 bytes of pixels in a 960-byte row) came out
of the decoder as a strided view, and dlib's face chip refused it with a TypeError: a valid video failed as
soon as one face in it was large enough to describe (tvhid_highfive_0005 at half resolution).
"""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

import cv2
import numpy as np
import pytest
import ultralytics

from detectors.face_identity import FaceDescriber
from pipeline.config import Config
from pipeline.perception import detector_for
from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer

# dlib's own rule: two descriptors of one person lie within 0.6, of two people beyond it
SAME_PERSON_MAX = 0.6


@pytest.fixture(scope="module")
def zidane() -> tuple[np.ndarray, np.ndarray]:
    """The RGB picture of two men ultralytics ships, and their two head boxes in pixels (the pose model's)."""
    image = cv2.cvtColor(cv2.imread(str(Path(ultralytics.__file__).parent / "assets" / "zidane.jpg")), cv2.COLOR_BGR2RGB)
    with closing(detector_for(Config())) as detector:
        observation = detector.detect([image])[0]
    height, width = image.shape[:2]
    heads = observation.head_xyxy[np.isfinite(observation.head_xyxy).all(axis=1)] * [width, height, width, height]
    assert len(heads) == 2
    return image, heads


def test_a_strided_view_gives_the_same_chip_and_descriptor(zidane):
    image, heads = zidane
    describer = FaceDescriber()
    padded = np.zeros((image.shape[0], image.shape[1] + 8, 3), np.uint8)  # rows longer than the picture
    padded[:, : image.shape[1]] = image
    view = padded[:, : image.shape[1]]
    assert not view.flags["C_CONTIGUOUS"]
    for head in heads:
        chip, chip_of_view = describer.chip(image, head), describer.chip(view, head)
        assert np.array_equal(chip, chip_of_view)
        a, b = describer.describe([chip, chip_of_view])
        assert np.array_equal(a, b)


def test_two_men_apart_one_man_at_half_size_together(zidane):
    image, heads = zidane
    describer = FaceDescriber()
    full = describer.describe([describer.chip(image, head) for head in heads])
    height, width = image.shape[:2]
    half_image = cv2.resize(image, (width // 2, height // 2), interpolation=cv2.INTER_AREA)
    half = describer.describe([describer.chip(half_image, head / 2) for head in heads])
    assert full.shape == (2, 128)
    assert np.linalg.norm(full[0] - full[1]) > SAME_PERSON_MAX  # measured 0.74
    for a, b in zip(full, half):
        assert np.linalg.norm(a - b) < SAME_PERSON_MAX / 2  # measured 0.25 and 0.14 (faces 163 / 188 px wide)


def test_frames_of_a_row_padded_width_are_contiguous(tmp_path, zidane):
    image, _ = zidane
    small = cv2.cvtColor(cv2.resize(image, (312, 176), interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2BGR)
    path = tmp_path / "narrow.mp4"
    with H264Writer(path, 312, 176, 4.0, crf=16, threads=1) as writer:
        for _ in range(4):
            writer.write(small)
    frames = list(iter_frames(str(path), fps=4.0, max_side=960))
    assert len(frames) == 4
    for frame in frames:
        assert frame.image.shape == (176, 312, 3) and frame.image.flags["C_CONTIGUOUS"]
        assert np.abs(frame.image.astype(int) - cv2.cvtColor(small, cv2.COLOR_BGR2RGB)).mean() < 4.0
