"""The camera-move estimate (pipeline/camera_motion.py) on synthetic frames with known moves, and on bad input."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from detectors.observation import FrameObservations
from pipeline.camera_motion import MIN_SPEED, CameraPath, shot_relative

FPS = 25.0
WIDTH, HEIGHT = 480, 270


def _texture(seed: int = 0, width: int = 2 * WIDTH, height: int = HEIGHT) -> np.ndarray:
    """A wide, blotchy grey scene (smoothed noise: detail at every scale, like a room)."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 255, size=(height // 8, width // 8)).astype(np.float32)
    scene = cv2.resize(noise, (width, height), interpolation=cv2.INTER_CUBIC)
    scene += rng.normal(0, 12, size=scene.shape).astype(np.float32)
    return np.clip(scene, 0, 255).astype(np.uint8)


def _path(frames: list[np.ndarray]) -> np.ndarray:
    """The content's summed move at every frame."""
    path = CameraPath()
    times = np.arange(len(frames)) / FPS
    for t, frame in zip(times, frames):
        path.push_image(float(t), frame)
    return path.offsets(times)


def _panned(scene: np.ndarray, lefts_px: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(scene[:, int(round(x)): int(round(x)) + WIDTH]) for x in lefts_px]


def test_a_pan_is_read_as_the_content_moving_the_other_way() -> None:
    """The camera pans right over 0.4 of the picture's width in 1.6 s, holds, and pans back half way: the
    content's move follows within 0.02 of the width all along (phase correlation's sub-pixel peaks lean toward
    whole pixels: 2-3 pixels a step here)."""
    steps = np.concatenate([np.linspace(0, 0.4, 40), np.full(10, 0.4), np.linspace(0.4, 0.2, 25)])
    frames = _panned(_texture(), steps * WIDTH)
    moves = _path(frames)
    np.testing.assert_allclose(moves[:, 0], -steps, atol=0.02)
    np.testing.assert_allclose(moves[:, 1], 0.0, atol=0.005)


def test_a_mirrored_pan_reads_the_mirrored_move() -> None:
    steps = np.linspace(0, 0.3, 30)
    frames = _panned(_texture(1), steps * WIDTH)
    plain, mirrored = _path(frames), _path([f[:, ::-1].copy() for f in frames])
    np.testing.assert_allclose(mirrored[:, 0], -plain[:, 0], atol=0.005)


def test_a_still_camera_with_someone_walking_across_reads_no_move() -> None:
    """A fixed camera; a bright figure a fifth of the frame wide walks across it: no move at all, however long."""
    scene = _texture(2)[:, :WIDTH]
    frames = []
    for k in range(100):
        frame = scene.copy()
        x = int(10 + 3.5 * k)
        frame[60:250, x: x + WIDTH // 5] = 230
        frames.append(frame)
    assert not _path(frames).any()


def test_a_drift_slower_than_the_floor_is_no_move() -> None:
    """The camera creeps at half of MIN_SPEED: left to tracking's own motion allowances."""
    steps = np.arange(50) / FPS * MIN_SPEED / 2
    assert not _path(_panned(_texture(3), steps * WIDTH)).any()


def test_a_change_of_frame_size_is_no_move_and_moves_are_made_relative_to_each_shot() -> None:
    scene = _texture(4)
    # the stream changes to another shape (a 4:3 picture): a cut, whatever the two pictures hold
    frames = _panned(scene, np.linspace(0, 60, 10)) + [cv2.resize(f, (320, 240)) for f in _panned(scene, np.full(5, 60.0))]
    moves = _path(frames)
    assert moves[8, 0] < -0.1
    np.testing.assert_allclose(moves[9:], np.tile(moves[8], (6, 1)))  # no move across the change of shape
    shots = np.array([0] * 10 + [1] * 5)
    relative = shot_relative(moves, shots)
    assert not relative[0].any() and not relative[10:].any()
    np.testing.assert_allclose(relative[:10], moves[:10] - moves[0])


def test_bad_input_is_refused() -> None:
    path = CameraPath()
    path.push_image(1.0, _texture()[:, :WIDTH])
    with pytest.raises(ValueError, match="increasing"):
        path.push_image(0.5, _texture()[:, :WIDTH])
    assert CameraPath().offsets([0.0, 1.0]).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_translated_observations_move_every_position_and_nothing_else() -> None:
    keypoints = np.zeros((1, 17, 3), np.float32)
    keypoints[0, :, :2] = 0.5
    keypoints[0, :, 2] = 0.9
    frame = FrameObservations(xyxy=[[0.1, 0.2, 0.3, 0.9]], confidence=[0.8], keypoints=keypoints,
                              head_xyxy=[[0.15, 0.2, 0.25, 0.3]], gaze_origin=[[0.2, 0.25]], gaze_dir=[[0.0, 0.0, 1.0]])
    moved = frame.translated(0.05, -0.1)
    np.testing.assert_allclose(moved.xyxy, [[0.15, 0.1, 0.35, 0.8]], atol=1e-6)
    np.testing.assert_allclose(moved.head_xyxy, [[0.2, 0.1, 0.3, 0.2]], atol=1e-6)
    np.testing.assert_allclose(moved.keypoints[0, :, :2], [[0.55, 0.4]] * 17, atol=1e-6)
    np.testing.assert_allclose(moved.keypoints[0, :, 2], 0.9)
    np.testing.assert_allclose(moved.gaze_origin, [[0.25, 0.15]], atol=1e-6)
    np.testing.assert_allclose(moved.gaze_dir, frame.gaze_dir)
    assert np.isnan(moved.hand_xyxy).all() and np.isnan(moved.point_origin).all()
    np.testing.assert_allclose(frame.xyxy, [[0.1, 0.2, 0.3, 0.9]])  # the original is untouched


def test_a_cut_in_the_middle_of_a_step_moves_nothing() -> None:
    """A cut to another framing of the same scene (40 pixels along): the step over the cut counts as none, so
    the second shot's samples share the first's move (none). Not told of the cut, the jump reads as a pan."""
    scene = _texture(5)
    frames = [scene[:, :WIDTH]] * 6 + [scene[:, 40:40 + WIDTH]] * 6
    path = CameraPath()
    times = np.arange(len(frames)) / FPS
    for t, frame in zip(times, frames):
        path.push_image(float(t), frame)
    assert not path.offsets(times, cut_times=[float(times[6])]).any()
    assert path.offsets(times)[-1, 0] == pytest.approx(-40 / WIDTH, abs=0.01)
