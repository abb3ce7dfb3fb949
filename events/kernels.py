"""Numba kernels of the events stage, each paired with a NumPy reference twin (``*_numpy``).

Every kernel is a plain function over NumPy arrays (booleans, integers, float64) and returns NumPy arrays,
so no Numba type leaks out. The twins compute exactly the same result with vectorised NumPy; tests compare
the two on random inputs and the benchmark times them against each other.

Conventions shared by all kernels:
- the time axis is the last axis (frames, ``F``); ``segment[F]`` is a contiguous-block label (a camera shot)
  and nothing ever bridges, merges or pairs across a segment change;
- durations are already converted to frame counts by the caller (seconds x fps), so kernels know no fps.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# --------------------------------------------------------------------------------------------------
# 1. smoothing: bridge short gaps (blinks, missed detections), then drop short blips


@njit(cache=True)
def smooth_runs(mask: np.ndarray, segment: np.ndarray, max_gap: int, min_run: int) -> np.ndarray:
    """Close False gaps of at most ``max_gap`` frames between True frames of the same segment, then
    remove True runs shorter than ``min_run`` frames. ``mask`` is (R, F) bool; returns a new (R, F) bool."""
    n_rows, n_frames = mask.shape
    out = mask.copy()
    for r in range(n_rows):
        last_on = -1
        for f in range(n_frames):
            if mask[r, f]:
                gap = f - last_on - 1
                if last_on >= 0 and 0 < gap <= max_gap and segment[last_on] == segment[f]:
                    for g in range(last_on + 1, f):
                        out[r, g] = True
                last_on = f
        f = 0
        while f < n_frames:
            if out[r, f]:
                start = f
                while f + 1 < n_frames and out[r, f + 1] and segment[f + 1] == segment[start]:
                    f += 1
                if f - start + 1 < min_run:
                    for g in range(start, f + 1):
                        out[r, g] = False
            f += 1
    return out


def smooth_runs_numpy(mask: np.ndarray, segment: np.ndarray, max_gap: int, min_run: int) -> np.ndarray:
    """NumPy twin of :func:`smooth_runs`."""
    n_rows, n_frames = mask.shape
    if n_frames == 0:
        return mask.copy()
    frames = np.arange(n_frames)
    prev_on = np.maximum.accumulate(np.where(mask, frames, -1), axis=1)
    next_on = np.minimum.accumulate(np.where(mask, frames, n_frames)[:, ::-1], axis=1)[:, ::-1]
    # for a False frame f: last True before it and first True after it
    prev_before = np.concatenate([np.full((n_rows, 1), -1), prev_on[:, :-1]], axis=1)
    next_after = np.concatenate([next_on[:, 1:], np.full((n_rows, 1), n_frames)], axis=1)
    has_both = (prev_before >= 0) & (next_after < n_frames)
    gap = next_after - prev_before - 1
    same_segment = np.zeros_like(has_both)
    same_segment[has_both] = (
        segment[prev_before[has_both]] == segment[next_after[has_both]]
    )
    out = mask | (~mask & has_both & (gap <= max_gap) & same_segment)
    # run labelling: a run starts where a True frame does not continue a run of the same segment
    continues = np.zeros_like(out)
    continues[:, 1:] = out[:, :-1] & out[:, 1:] & (segment[1:] == segment[:-1])[None, :]
    starts = out & ~continues
    run_id = np.cumsum(starts.ravel()).reshape(out.shape) - 1
    lengths = np.bincount(run_id[out], minlength=max(int(starts.sum()), 1))
    too_short = np.zeros_like(out)
    too_short[out] = lengths[run_id[out]] < min_run
    return out & ~too_short


# --------------------------------------------------------------------------------------------------
# 2. interval extraction


@njit(cache=True)
def extract_runs(mask: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal True runs of each row of (R, F) ``mask`` that stay inside one segment.
    Returns (row, first_frame, last_frame) int64 arrays ordered by row then frame."""
    n_rows, n_frames = mask.shape
    count = 0
    for r in range(n_rows):
        for f in range(n_frames):
            if mask[r, f] and (f == 0 or not mask[r, f - 1] or segment[f - 1] != segment[f]):
                count += 1
    rows = np.empty(count, np.int64)
    firsts = np.empty(count, np.int64)
    lasts = np.empty(count, np.int64)
    k = 0
    for r in range(n_rows):
        f = 0
        while f < n_frames:
            if mask[r, f]:
                start = f
                while f + 1 < n_frames and mask[r, f + 1] and segment[f + 1] == segment[start]:
                    f += 1
                rows[k] = r
                firsts[k] = start
                lasts[k] = f
                k += 1
            f += 1
    return rows, firsts, lasts


def extract_runs_numpy(mask: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy twin of :func:`extract_runs`."""
    n_rows, n_frames = mask.shape
    if n_frames == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty.copy(), empty.copy()
    same = np.concatenate([[False], segment[1:] == segment[:-1]])
    prev = np.concatenate([np.zeros((n_rows, 1), bool), mask[:, :-1]], axis=1) & same[None, :]
    nxt_same = np.concatenate([segment[1:] == segment[:-1], [False]])
    nxt = np.concatenate([mask[:, 1:], np.zeros((n_rows, 1), bool)], axis=1) & nxt_same[None, :]
    start_r, start_f = np.nonzero(mask & ~prev)
    _, end_f = np.nonzero(mask & ~nxt)
    return start_r.astype(np.int64), start_f.astype(np.int64), end_f.astype(np.int64)


# --------------------------------------------------------------------------------------------------
# 3. dense people x targets x frames occupancy from per-frame target indices


@njit(cache=True)
def target_occupancy(target_index: np.ndarray, n_targets: int) -> np.ndarray:
    """(P, F) int target index per person and frame (-1 = none) -> (P, n_targets, F) bool one-hot."""
    n_people, n_frames = target_index.shape
    out = np.zeros((n_people, n_targets, n_frames), np.bool_)
    for p in range(n_people):
        for f in range(n_frames):
            k = target_index[p, f]
            if 0 <= k < n_targets:
                out[p, k, f] = True
    return out


def target_occupancy_numpy(target_index: np.ndarray, n_targets: int) -> np.ndarray:
    """NumPy twin of :func:`target_occupancy`."""
    return target_index[:, None, :] == np.arange(n_targets)[None, :, None]


# --------------------------------------------------------------------------------------------------
# 4. joint attention without a target box: pairs of gaze points that converge


@njit(cache=True)
def pairwise_convergence(points: np.ndarray, valid: np.ndarray, max_distance: float) -> np.ndarray:
    """For every pair i < j (row order (0,1), (0,2), ..., (1,2), ...) and frame: both gaze points valid and
    closer than ``max_distance``. ``points`` (P, F, 2) float64, ``valid`` (P, F) bool -> (P(P-1)/2, F) bool."""
    n_people, n_frames = valid.shape
    out = np.zeros((n_people * (n_people - 1) // 2, n_frames), np.bool_)
    limit = max_distance * max_distance
    k = 0
    for i in range(n_people):
        for j in range(i + 1, n_people):
            for f in range(n_frames):
                if valid[i, f] and valid[j, f]:
                    dx = points[i, f, 0] - points[j, f, 0]
                    dy = points[i, f, 1] - points[j, f, 1]
                    out[k, f] = dx * dx + dy * dy <= limit
            k += 1
    return out


def pairwise_convergence_numpy(points: np.ndarray, valid: np.ndarray, max_distance: float) -> np.ndarray:
    """NumPy twin of :func:`pairwise_convergence`."""
    first, second = np.triu_indices(valid.shape[0], k=1)
    delta = points[first] - points[second]
    close = delta[..., 0] * delta[..., 0] + delta[..., 1] * delta[..., 1] <= max_distance * max_distance
    return close & valid[first] & valid[second]


# --------------------------------------------------------------------------------------------------
# 5. gaze speed relative to the head (camera motion cancels)


@njit(cache=True)
def gaze_speed(relative: np.ndarray, valid: np.ndarray, times: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Speed (frame widths per second) of the head-relative gaze vector between frame f-1 and f.
    ``relative`` (P, F, 2) float64 = gaze point minus head centre; NaN where either frame is invalid or
    the frames lie in different segments. Returns (P, F) float64."""
    n_people, n_frames = valid.shape
    out = np.full((n_people, n_frames), np.nan)
    for p in range(n_people):
        for f in range(1, n_frames):
            if valid[p, f] and valid[p, f - 1] and segment[f] == segment[f - 1]:
                dt = times[f] - times[f - 1]
                if dt > 0:
                    dx = relative[p, f, 0] - relative[p, f - 1, 0]
                    dy = relative[p, f, 1] - relative[p, f - 1, 1]
                    out[p, f] = np.sqrt(dx * dx + dy * dy) / dt
    return out


def gaze_speed_numpy(relative: np.ndarray, valid: np.ndarray, times: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """NumPy twin of :func:`gaze_speed`."""
    out = np.full(valid.shape, np.nan)
    if valid.shape[1] < 2:
        return out
    dt = times[1:] - times[:-1]
    ok = valid[:, 1:] & valid[:, :-1] & (segment[1:] == segment[:-1])[None, :] & (dt > 0)[None, :]
    delta = relative[:, 1:] - relative[:, :-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        speed = np.sqrt(delta[..., 0] * delta[..., 0] + delta[..., 1] * delta[..., 1]) / dt[None, :]
    out[:, 1:] = np.where(ok, speed, np.nan)
    return out


# --------------------------------------------------------------------------------------------------
# 6. arms: extension and the target an arm is aimed at (people x candidates x frames)


@njit(cache=True)
def arm_aim(
    shoulder: np.ndarray,
    elbow: np.ndarray,
    wrist: np.ndarray,
    boxes: np.ndarray,
    box_owner: np.ndarray,
    min_cosine: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Arm extension and aimed-at candidate for every person, frame and arm.

    ``shoulder``/``elbow``/``wrist`` are (P, F, 2, 2) float64 (arm index 0 = left, 1 = right; NaN unknown);
    ``boxes`` (C, F, 4) float64 candidate boxes xyxy (NaN = absent that frame); ``box_owner`` (C,) int
    person index owning a candidate (never a target of its own arm) or -1. Extension = |wrist - shoulder| /
    (|elbow - shoulder| + |wrist - elbow|), 1 = straight arm. The target is the candidate with the largest
    cosine between shoulder->wrist and wrist->box centre (1 when the wrist is inside the box), when that
    cosine is >= ``min_cosine``; ties go to the lower index. Returns extension (P, F, 2) float64 and
    target (P, F, 2) int64 (-1 = none)."""
    n_people, n_frames = shoulder.shape[0], shoulder.shape[1]
    n_boxes = boxes.shape[0]
    extension = np.full((n_people, n_frames, 2), np.nan)
    target = np.full((n_people, n_frames, 2), -1, np.int64)
    for p in range(n_people):
        for f in range(n_frames):
            for a in range(2):
                sx = shoulder[p, f, a, 0]
                sy = shoulder[p, f, a, 1]
                ex = elbow[p, f, a, 0]
                ey = elbow[p, f, a, 1]
                wx = wrist[p, f, a, 0]
                wy = wrist[p, f, a, 1]
                if np.isnan(sx) or np.isnan(sy) or np.isnan(ex) or np.isnan(ey) or np.isnan(wx) or np.isnan(wy):
                    continue
                arm_x = wx - sx
                arm_y = wy - sy
                reach = np.sqrt(arm_x * arm_x + arm_y * arm_y)
                upper = np.sqrt((ex - sx) * (ex - sx) + (ey - sy) * (ey - sy))
                fore = np.sqrt((wx - ex) * (wx - ex) + (wy - ey) * (wy - ey))
                if upper + fore <= 0.0 or reach <= 0.0:
                    continue
                extension[p, f, a] = reach / (upper + fore)
                best = -1
                best_cos = min_cosine
                for c in range(n_boxes):
                    if box_owner[c] == p:
                        continue
                    x1 = boxes[c, f, 0]
                    y1 = boxes[c, f, 1]
                    x2 = boxes[c, f, 2]
                    y2 = boxes[c, f, 3]
                    if np.isnan(x1) or np.isnan(y1) or np.isnan(x2) or np.isnan(y2):
                        continue
                    if x1 <= wx <= x2 and y1 <= wy <= y2:
                        cosine = 1.0
                    else:
                        to_x = (x1 + x2) * 0.5 - wx
                        to_y = (y1 + y2) * 0.5 - wy
                        dist = np.sqrt(to_x * to_x + to_y * to_y)
                        if dist <= 0.0:
                            cosine = 1.0
                        else:
                            cosine = (arm_x * to_x + arm_y * to_y) / (reach * dist)
                    if cosine > best_cos or (best < 0 and cosine >= best_cos):
                        best = c
                        best_cos = cosine
                target[p, f, a] = best
    return extension, target


def arm_aim_numpy(
    shoulder: np.ndarray,
    elbow: np.ndarray,
    wrist: np.ndarray,
    boxes: np.ndarray,
    box_owner: np.ndarray,
    min_cosine: float,
) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`arm_aim`."""
    n_people, n_frames = shoulder.shape[0], shoulder.shape[1]
    n_boxes = boxes.shape[0]
    known = ~(np.isnan(shoulder).any(-1) | np.isnan(elbow).any(-1) | np.isnan(wrist).any(-1))
    arm = wrist - shoulder
    with np.errstate(invalid="ignore"):
        reach = np.sqrt(arm[..., 0] * arm[..., 0] + arm[..., 1] * arm[..., 1])
        upper_d = elbow - shoulder
        fore_d = wrist - elbow
        upper = np.sqrt(upper_d[..., 0] * upper_d[..., 0] + upper_d[..., 1] * upper_d[..., 1])
        fore = np.sqrt(fore_d[..., 0] * fore_d[..., 0] + fore_d[..., 1] * fore_d[..., 1])
    ok = known & (upper + fore > 0.0) & (reach > 0.0)
    extension = np.full((n_people, n_frames, 2), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        extension[ok] = reach[ok] / (upper[ok] + fore[ok])
    target = np.full((n_people, n_frames, 2), -1, np.int64)
    if n_boxes == 0:
        return extension, target
    # cosines (P, F, 2, C)
    b = boxes.transpose(1, 0, 2)[None, :, None, :, :]  # (1, F, 1, C, 4)
    wx = wrist[..., 0][..., None]
    wy = wrist[..., 1][..., None]
    box_known = ~np.isnan(b).any(-1)
    inside = (b[..., 0] <= wx) & (wx <= b[..., 2]) & (b[..., 1] <= wy) & (wy <= b[..., 3])
    to_x = (b[..., 0] + b[..., 2]) * 0.5 - wx
    to_y = (b[..., 1] + b[..., 3]) * 0.5 - wy
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.sqrt(to_x * to_x + to_y * to_y)
        cosine = (arm[..., 0][..., None] * to_x + arm[..., 1][..., None] * to_y) / (reach[..., None] * dist)
    cosine = np.where(inside | (dist <= 0.0), 1.0, cosine)
    own = box_owner[None, None, None, :] == np.arange(n_people)[:, None, None, None]
    eligible = box_known & ~own & ok[..., None] & (cosine >= min_cosine)
    scored = np.where(eligible, cosine, -np.inf)
    best = np.argmax(scored, axis=-1)
    has = np.take_along_axis(eligible, best[..., None], axis=-1)[..., 0]
    target[has] = best[has]
    return extension, target


# --------------------------------------------------------------------------------------------------
# 7. who holds which object (people x objects x frames)


@njit(cache=True)
def hand_holding(hand_boxes: np.ndarray, object_boxes: np.ndarray, min_overlap: float) -> np.ndarray:
    """Bit mask of the hands holding each object: bit 1 = hand 0 (left), bit 2 = hand 1 (right).
    A hand holds an object when their intersection covers >= ``min_overlap`` of the smaller box.
    ``hand_boxes`` (P, F, 2, 4), ``object_boxes`` (O, F, 4) float64 xyxy, NaN = absent -> (P, O, F) int8."""
    n_people, n_frames = hand_boxes.shape[0], hand_boxes.shape[1]
    n_objects = object_boxes.shape[0]
    out = np.zeros((n_people, n_objects, n_frames), np.int8)
    for p in range(n_people):
        for o in range(n_objects):
            for f in range(n_frames):
                ox1 = object_boxes[o, f, 0]
                oy1 = object_boxes[o, f, 1]
                ox2 = object_boxes[o, f, 2]
                oy2 = object_boxes[o, f, 3]
                if np.isnan(ox1) or np.isnan(oy1) or np.isnan(ox2) or np.isnan(oy2):
                    continue
                object_area = (ox2 - ox1) * (oy2 - oy1)
                bits = 0
                for h in range(2):
                    hx1 = hand_boxes[p, f, h, 0]
                    hy1 = hand_boxes[p, f, h, 1]
                    hx2 = hand_boxes[p, f, h, 2]
                    hy2 = hand_boxes[p, f, h, 3]
                    if np.isnan(hx1) or np.isnan(hy1) or np.isnan(hx2) or np.isnan(hy2):
                        continue
                    iw = min(ox2, hx2) - max(ox1, hx1)
                    ih = min(oy2, hy2) - max(oy1, hy1)
                    if iw <= 0.0 or ih <= 0.0:
                        continue
                    smaller = min(object_area, (hx2 - hx1) * (hy2 - hy1))
                    if smaller > 0.0 and iw * ih >= min_overlap * smaller:
                        bits |= 1 << h
                out[p, o, f] = bits
    return out


def hand_holding_numpy(hand_boxes: np.ndarray, object_boxes: np.ndarray, min_overlap: float) -> np.ndarray:
    """NumPy twin of :func:`hand_holding`."""
    h = hand_boxes.transpose(0, 2, 1, 3)[:, None, :, :, :]  # (P, 1, 2, F, 4)
    o = object_boxes[None, :, None, :, :]  # (1, O, 1, F, 4)
    iw = np.minimum(o[..., 2], h[..., 2]) - np.maximum(o[..., 0], h[..., 0])
    ih = np.minimum(o[..., 3], h[..., 3]) - np.maximum(o[..., 1], h[..., 1])
    object_area = (o[..., 2] - o[..., 0]) * (o[..., 3] - o[..., 1])
    hand_area = (h[..., 2] - h[..., 0]) * (h[..., 3] - h[..., 1])
    smaller = np.minimum(object_area, hand_area)
    known = ~np.isnan(o).any(-1) & ~np.isnan(h).any(-1)
    with np.errstate(invalid="ignore"):
        hit = known & (iw > 0.0) & (ih > 0.0) & (smaller > 0.0) & (iw * ih >= min_overlap * smaller)
    bits = hit[:, :, 0].astype(np.int8) | (hit[:, :, 1].astype(np.int8) << 1)
    return bits.astype(np.int8)


# --------------------------------------------------------------------------------------------------
# 8. lag search: who followed whose gaze onto a target


@njit(cache=True)
def match_following(
    onset_target: np.ndarray,
    onset_frame: np.ndarray,
    onset_person: np.ndarray,
    looking: np.ndarray,
    times: np.ndarray,
    segment: np.ndarray,
    min_lag: float,
    max_lag: float,
) -> np.ndarray:
    """For each gaze onset (a person starting to look at a target; arrays sorted by target then frame)
    find the leader: the nearest earlier onset on the same target, by another person, in the same segment,
    ``min_lag <= lag <= max_lag`` seconds before, whose person still looks at the target at the follower's
    onset, while the follower was not looking at it at the leader's onset. ``looking`` is the smoothed
    (P, T, F) occupancy. Returns the leader's onset index per onset (-1 = not a follower)."""
    n = onset_target.shape[0]
    leader = np.full(n, -1, np.int64)
    for i in range(n):
        k = onset_target[i]
        fi = onset_frame[i]
        pi = onset_person[i]
        j = i - 1
        while j >= 0 and onset_target[j] == k:
            fj = onset_frame[j]
            lag = times[fi] - times[fj]
            if lag > max_lag:
                break
            pj = onset_person[j]
            if (
                pj != pi
                and lag >= min_lag
                and segment[fj] == segment[fi]
                and looking[pj, k, fi]
                and not looking[pi, k, fj]
            ):
                leader[i] = j
                break
            j -= 1
    return leader


def match_following_numpy(
    onset_target: np.ndarray,
    onset_frame: np.ndarray,
    onset_person: np.ndarray,
    looking: np.ndarray,
    times: np.ndarray,
    segment: np.ndarray,
    min_lag: float,
    max_lag: float,
) -> np.ndarray:
    """NumPy twin of :func:`match_following`: the backward scan done one offset at a time for all onsets."""
    n = onset_target.shape[0]
    leader = np.full(n, -1, np.int64)
    if n == 0:
        return leader
    index = np.arange(n)
    onset_time = times[onset_frame]
    # the scan stops at the first earlier onset of another target or beyond max_lag: the first offset
    # at which either happens bounds the window of every onset
    alive = np.ones(n, bool)
    offset = 1
    while alive.any():
        j = index - offset
        in_range = alive & (j >= 0)
        jj = np.where(in_range, j, 0)
        same_target = in_range & (onset_target[jj] == onset_target)
        lag = onset_time - onset_time[jj]
        alive = same_target & (lag <= max_lag)
        ok = (
            alive
            & (onset_person[jj] != onset_person)
            & (lag >= min_lag)
            & (segment[onset_frame[jj]] == segment[onset_frame])
            & looking[onset_person[jj], onset_target, onset_frame]
            & ~looking[onset_person, onset_target, onset_frame[jj]]
        )
        leader[ok] = jj[ok]
        alive &= ~ok
        offset += 1
    return leader
