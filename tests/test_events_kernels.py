"""Every Numba kernel of events/kernels.py against its NumPy twin on random inputs (identical outputs),
plus small hand-made cases with known answers."""
from __future__ import annotations

import numpy as np
import pytest

from events import kernels as K

SEEDS = range(25)


def _segments(rng: np.random.Generator, n_frames: int) -> np.ndarray:
    return np.cumsum(rng.random(n_frames) < 0.05).astype(np.int64)


def _boxes(rng: np.random.Generator, n: int, n_frames: int, missing: float = 0.2) -> np.ndarray:
    corner = rng.random((n, n_frames, 2))
    boxes = np.concatenate([corner, corner + rng.random((n, n_frames, 2)) * 0.3], axis=-1)
    boxes[rng.random((n, n_frames)) < missing] = np.nan
    return boxes


@pytest.mark.parametrize("seed", SEEDS)
def test_smoothing_and_runs_match_twin(seed):
    rng = np.random.default_rng(seed)
    n_frames = int(rng.integers(0, 80))
    mask = rng.random((int(rng.integers(1, 6)), n_frames)) < rng.random()
    segment = _segments(rng, n_frames)
    gap, min_run = int(rng.integers(0, 5)), int(rng.integers(0, 5))
    np.testing.assert_array_equal(K.smooth_runs(mask, segment, gap, min_run), K.smooth_runs_numpy(mask, segment, gap, min_run))
    for fast, ref in zip(K.extract_runs(mask, segment), K.extract_runs_numpy(mask, segment)):
        np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("seed", SEEDS)
def test_relation_kernels_match_twin(seed):
    rng = np.random.default_rng(seed)
    n_people, n_frames = int(rng.integers(1, 5)), int(rng.integers(1, 60))
    index = rng.integers(-1, 4, (n_people, n_frames))
    np.testing.assert_array_equal(K.target_occupancy(index, 4), K.target_occupancy_numpy(index, 4))
    points = rng.random((n_people, n_frames, 2))
    valid = rng.random((n_people, n_frames)) < 0.8
    np.testing.assert_array_equal(K.pairwise_convergence(points, valid, 0.3), K.pairwise_convergence_numpy(points, valid, 0.3))
    times = np.cumsum(rng.random(n_frames) * 0.2)
    segment = _segments(rng, n_frames)
    np.testing.assert_array_equal(K.gaze_speed(points, valid, times, segment), K.gaze_speed_numpy(points, valid, times, segment))


@pytest.mark.parametrize("seed", SEEDS)
def test_arm_and_holding_kernels_match_twin(seed):
    rng = np.random.default_rng(seed)
    n_people, n_frames, n_boxes = int(rng.integers(1, 5)), int(rng.integers(1, 40)), int(rng.integers(0, 5))
    joints = [np.where(rng.random((n_people, n_frames, 2, 1)) < 0.1, np.nan, rng.random((n_people, n_frames, 2, 2))) for _ in range(3)]
    boxes = _boxes(rng, n_boxes, n_frames)
    owner = rng.integers(-1, n_people, n_boxes)
    fast = K.arm_aim(*joints, boxes, owner, 0.8)
    ref = K.arm_aim_numpy(*joints, boxes, owner, 0.8)
    for a, b in zip(fast, ref):
        np.testing.assert_array_equal(a, b)
    hands = _boxes(rng, n_people * n_frames * 2, 1, missing=0.1).reshape(n_people, n_frames, 2, 4)
    np.testing.assert_array_equal(K.hand_holding(hands, boxes, 0.2), K.hand_holding_numpy(hands, boxes, 0.2))


@pytest.mark.parametrize("seed", SEEDS)
def test_lag_search_matches_twin(seed):
    rng = np.random.default_rng(seed)
    n_people, n_frames, n_targets = int(rng.integers(1, 5)), int(rng.integers(1, 60)), 4
    n = int(rng.integers(0, 40))
    target = np.sort(rng.integers(0, n_targets, n))
    frame = np.zeros(n, np.int64)
    for k in range(n_targets):
        idx = np.nonzero(target == k)[0]
        frame[idx] = np.sort(rng.integers(0, n_frames, len(idx)))
    person = rng.integers(0, n_people, n)
    looking = rng.random((n_people, n_targets, n_frames)) < 0.5
    times = np.cumsum(rng.random(n_frames) * 0.2)
    segment = _segments(rng, n_frames)
    np.testing.assert_array_equal(
        K.match_following(target, frame, person, looking, times, segment, 0.2, 1.5),
        K.match_following_numpy(target, frame, person, looking, times, segment, 0.2, 1.5),
    )


def test_smoothing_known_answer():
    mask = np.array([[1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1]], bool)
    segment = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1])
    # gaps of 1 bridged (0..2 and 8..10), the gap of 3 not; the cut at frame 8 splits 6..10 in two runs
    expected = np.array([[1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1]], bool)
    np.testing.assert_array_equal(K.smooth_runs(mask, segment, 1, 2), expected)
    rows, first, last = K.extract_runs(expected, segment)
    assert list(zip(rows, first, last)) == [(0, 0, 2), (0, 6, 7), (0, 8, 10)]
    # runs shorter than 3 frames dropped: only the 3-frame runs survive
    np.testing.assert_array_equal(K.smooth_runs(mask, segment, 1, 3)[0], [1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1])


def test_lag_search_known_answer():
    # person 0 looks at target 0 from frame 2; person 1 follows at frame 12 (lag 1 s at 10 fps)
    looking = np.zeros((3, 1, 30), bool)
    looking[0, 0, 2:] = True
    looking[1, 0, 12:] = True
    looking[2, 0, 3:] = True  # person 2 turned too soon after person 0 (lag 0.1 s): no follower
    times = np.arange(30) / 10.0
    leader = K.match_following(np.zeros(3, np.int64), np.array([2, 3, 12]), np.array([0, 2, 1]), looking, times,
                               np.zeros(30, np.int64), 0.5, 2.0)
    # person 1's nearest valid leader is person 2 (lag 0.9 s), who still looks at the target
    assert list(leader) == [-1, -1, 1]


def test_arm_aim_known_answer():
    shoulder = np.array([[[[0.3, 0.4], [0.3, 0.4]]]])
    elbow = np.array([[[[0.4, 0.4], [0.3, 0.5]]]])
    wrist = np.array([[[[0.5, 0.4], [0.3, 0.6]]]])  # arm 0 straight to the right, arm 1 hanging down
    boxes = np.array([[[0.7, 0.3, 0.8, 0.5]], [[0.1, 0.3, 0.2, 0.5]]])  # right of the person, left of them
    extension, target = K.arm_aim(shoulder, elbow, wrist, boxes, np.array([-1, -1]), np.cos(np.radians(30)))
    np.testing.assert_allclose(extension[0, 0], [1.0, 1.0])
    assert list(target[0, 0]) == [0, -1]
