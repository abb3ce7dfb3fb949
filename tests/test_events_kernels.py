"""Every Numba kernel of events/kernels.py against its NumPy twin on random inputs (identical outputs),
plus small hand-made cases with known answers."""
from __future__ import annotations

from collections import Counter

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
def test_label_smoothing_matches_twin(seed):
    rng = np.random.default_rng(seed)
    n_frames = int(rng.integers(0, 80))
    labels = rng.integers(-1, int(rng.integers(1, 4)), (int(rng.integers(1, 6)), n_frames))
    labels[rng.random(labels.shape) < rng.random()] = -1
    segment = _segments(rng, n_frames)
    gap, min_run = int(rng.integers(0, 5)), int(rng.integers(0, 5))
    np.testing.assert_array_equal(K.smooth_labels(labels, segment, gap, min_run), K.smooth_labels_numpy(labels, segment, gap, min_run))


@pytest.mark.parametrize("seed", SEEDS)
def test_label_smoothing_is_run_smoothing_when_labels_never_compete(seed):
    """One label (and none) per row: the same as smoothing that label's mask."""
    rng = np.random.default_rng(seed)
    n_frames = int(rng.integers(1, 80))
    mask = rng.random((int(rng.integers(1, 6)), n_frames)) < rng.random()
    segment = _segments(rng, n_frames)
    gap, min_run = int(rng.integers(0, 5)), int(rng.integers(0, 5))
    labels = np.where(mask, 2, -1).astype(np.int64)
    np.testing.assert_array_equal(K.smooth_labels(labels, segment, gap, min_run) == 2, K.smooth_runs(mask, segment, gap, min_run))


def test_label_smoothing_known_answers():
    """A gap holding another target that survives is not bridged (one target per frame); a flicker to
    another target is dropped and the look bridged over it; nothing bridges a segment change."""
    one_segment = np.zeros(9, np.int64)
    cases = [  # (labels, max_gap, min_run, expected)
        ([0, 0, 1, 1, 0, 0, -1, -1, -1], 2, 1, [0, 0, 1, 1, 0, 0, -1, -1, -1]),
        ([0, 0, 1, -1, 0, 0, 0, -1, -1], 2, 2, [0, 0, 0, 0, 0, 0, 0, -1, -1]),
        ([0, -1, -1, 0, 1, 1, 1, -1, 1], 2, 1, [0, 0, 0, 0, 1, 1, 1, 1, 1]),
        ([0, 0, -1, -1, -1, 0, 0, 1, -1], 2, 2, [0, 0, -1, -1, -1, 0, 0, -1, -1]),
    ]
    for labels, gap, min_run, expected in cases:
        got = K.smooth_labels(np.array([labels], np.int64), one_segment, gap, min_run)
        assert got[0].tolist() == expected, (labels, got[0].tolist())
    cut = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
    got = K.smooth_labels(np.array([[0, 0, -1, 0, 0, -1, -1, -1, -1]], np.int64), cut, 2, 1)
    assert got[0].tolist() == [0, 0, -1, 0, 0, -1, -1, -1, -1]


@pytest.mark.parametrize("seed", SEEDS)
def test_relation_kernels_match_twin(seed):
    rng = np.random.default_rng(seed)
    n_people, n_frames = int(rng.integers(1, 5)), int(rng.integers(1, 60))
    index = rng.integers(-1, 4, (n_people, n_frames))
    np.testing.assert_array_equal(K.target_occupancy(index, 4), K.target_occupancy_numpy(index, 4))
    points = rng.random((n_people, n_frames, 2))
    valid = rng.random((n_people, n_frames)) < 0.8
    times = np.cumsum(rng.random(n_frames) * 0.2)
    segment = _segments(rng, n_frames)
    min_speed = float(rng.random() * 3)
    np.testing.assert_array_equal(K.gaze_moving(points, valid, times, segment, min_speed),
                                  K.gaze_moving_numpy(points, valid, times, segment, min_speed))


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


@pytest.mark.parametrize("seed", SEEDS)
def test_runs_of_sparse_long_and_strided_masks_match_twin(seed):
    """extract_runs skips all-False 8-byte words: long sparse rows, odd lengths and non-contiguous views."""
    rng = np.random.default_rng(seed)
    n_rows, n_frames = int(rng.integers(1, 6)), int(rng.integers(0, 400))
    mask = np.zeros((n_rows, n_frames), bool)
    for _ in range(int(rng.integers(0, 12))):
        if n_frames:
            start = int(rng.integers(0, n_frames))
            mask[int(rng.integers(0, n_rows)), start : start + int(rng.integers(1, 30))] = True
    segment = _segments(rng, n_frames)
    for view, seg in ((mask, segment), (mask[:, 1:], segment[1:]), (mask[::-1, ::3], segment[::3]), (np.asfortranarray(mask), segment)):
        for fast, ref in zip(K.extract_runs(view, seg), K.extract_runs_numpy(view, seg)):
            np.testing.assert_array_equal(fast, ref)


def _intervals(rng: np.random.Generator, n_rows: int, n_frames: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = int(rng.integers(0, 30))
    starts = rng.integers(0, n_frames, n)
    ends = np.minimum(starts + rng.integers(0, 25, n), n_frames - 1)
    return rng.integers(0, n_rows, n), starts, ends


@pytest.mark.parametrize("seed", SEEDS)
def test_interval_support_matches_twin(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_frames = int(rng.integers(1, 5)), int(rng.integers(1, 80))
    seen = rng.random((n_rows, n_frames)) < rng.random()
    weight = rng.integers(0, 4096, (3, n_frames)) / 4096.0  # dyadic: every summation order is exact
    rows, starts, ends = _intervals(rng, n_rows, n_frames)
    weight_rows = rng.integers(0, 3, len(rows))
    fast = K.interval_support(seen, weight, rows, weight_rows, starts, ends)
    ref = K.interval_support_numpy(seen, weight, rows, weight_rows, starts, ends)
    for a, b in zip(fast, ref):
        np.testing.assert_array_equal(a, b)
    for i in range(len(rows)):  # and the plain definition
        hit = seen[rows[i], starts[i] : ends[i] + 1]
        assert fast[0][i] == hit.sum()
        assert fast[1][i] == weight[weight_rows[i], starts[i] : ends[i] + 1][hit].sum()
    # arbitrary float weights: equal up to summation order
    floats = rng.random((3, n_frames))
    np.testing.assert_allclose(
        K.interval_support(seen, floats, rows, weight_rows, starts, ends)[1],
        K.interval_support_numpy(seen, floats, rows, weight_rows, starts, ends)[1], rtol=1e-12,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_interval_mode_matches_twin_and_counter(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_frames = int(rng.integers(1, 5)), int(rng.integers(1, 80))
    kind = rng.integers(0, 3, (n_rows, n_frames))
    ident = rng.integers(-1, 3, (n_rows, n_frames))
    valid = rng.random((n_rows, n_frames)) < rng.random()
    rows, starts, ends = _intervals(rng, n_rows, n_frames)
    fast = K.interval_mode(kind, ident, valid, rows, starts, ends)
    for a, b in zip(fast, K.interval_mode_numpy(kind, ident, valid, rows, starts, ends)):
        np.testing.assert_array_equal(a, b)
    for i in range(len(rows)):  # Counter.most_common keeps first-seen order among equal counts
        frames = np.arange(starts[i], ends[i] + 1)
        frames = frames[valid[rows[i], frames]]
        counts = Counter(zip(kind[rows[i], frames].tolist(), ident[rows[i], frames].tolist()))
        expected = counts.most_common(1)[0][0] if counts else (-1, -1)
        assert (fast[0][i], fast[1][i]) == expected


def _run_start(mask: np.ndarray, segment: np.ndarray, frame: int) -> int:
    """The first version's per-frame Python walk (mutual gaze onset), kept as the reference."""
    f = frame
    while f < len(mask) - 1 and not mask[f] and segment[f + 1] == segment[frame]:
        f += 1
    while f > 0 and mask[f - 1] and segment[f - 1] == segment[f]:
        f -= 1
    return f


@pytest.mark.parametrize("seed", SEEDS)
def test_run_bounds_matches_twin_and_walk(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_frames = int(rng.integers(1, 5)), int(rng.integers(1, 80))
    mask = rng.random((n_rows, n_frames)) < rng.random()
    segment = _segments(rng, n_frames)
    n = int(rng.integers(0, 30))
    rows, frames = rng.integers(0, n_rows, n), rng.integers(0, n_frames, n)
    first, last = K.run_bounds(mask, segment, rows, frames)
    for a, b in zip((first, last), K.run_bounds_numpy(mask, segment, rows, frames)):
        np.testing.assert_array_equal(a, b)
    for i in range(n):
        assert first[i] == _run_start(mask[rows[i]], segment, frames[i])
        h = frames[i]
        while h + 1 < n_frames and mask[rows[i], h + 1] and segment[h + 1] == segment[frames[i]]:
            h += 1
        assert last[i] == h


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


def test_gaze_moving_known_answer():
    # one person at 10 fps: the head-relative gaze jumps 0.3 frame widths between frames 3 and 4 (3 /s),
    # creeps 0.01 per frame elsewhere (0.1 /s); a cut between frames 6 and 7 hides the jump there; frame 9
    # is invalid, so neither step touching it counts
    x = np.array([0.0, 0.01, 0.02, 0.03, 0.33, 0.34, 0.35, 0.95, 0.96, 0.5, 0.97])
    relative = np.stack([x, np.zeros_like(x)], axis=-1)[None]
    valid = np.ones((1, 11), bool)
    valid[0, 9] = False
    times = np.arange(11) / 10.0
    segment = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    expected = np.zeros((1, 11), bool)
    expected[0, 4] = True
    for kernel in (K.gaze_moving, K.gaze_moving_numpy):
        np.testing.assert_array_equal(kernel(relative, valid, times, segment, 1.0), expected)
        # the threshold is a speed: 0.1 /s creeping counts once the threshold drops below it
        assert kernel(relative, valid, times, segment, 0.05)[0, [1, 2, 3, 5, 6, 8]].all()


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
