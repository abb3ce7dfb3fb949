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


@njit(cache=True)
def _bridge_labels(out: np.ndarray, segment: np.ndarray, max_gap: int) -> None:
    """In place: a gap of at most ``max_gap`` unlabelled (-1) frames between two frames of the same label
    and segment takes that label. A gap holding another label is never bridged."""
    n_rows, n_frames = out.shape
    for r in range(n_rows):
        last = -1  # the last labelled frame so far
        for f in range(n_frames):
            k = out[r, f]
            if k < 0:
                continue
            if last >= 0 and f - last > 1 and f - last - 1 <= max_gap and out[r, last] == k and segment[last] == segment[f]:
                for g in range(last + 1, f):
                    out[r, g] = k
            last = f


@njit(cache=True)
def _drop_short_labels(out: np.ndarray, segment: np.ndarray, min_run: int) -> None:
    """In place: runs of one label within one segment shorter than ``min_run`` frames become -1."""
    n_rows, n_frames = out.shape
    for r in range(n_rows):
        f = 0
        while f < n_frames:
            k = out[r, f]
            if k >= 0:
                start = f
                while f + 1 < n_frames and out[r, f + 1] == k and segment[f + 1] == segment[start]:
                    f += 1
                if f - start + 1 < min_run:
                    for g in range(start, f + 1):
                        out[r, g] = -1
            f += 1


@njit(cache=True)
def smooth_labels(labels: np.ndarray, segment: np.ndarray, max_gap: int, min_run: int) -> np.ndarray:
    """One label per row and frame (-1 = none), smoothed without ever giving a frame two labels: bridge
    gaps of at most ``max_gap`` unlabelled frames between equal labels, drop runs shorter than ``min_run``
    frames (a flicker to another target), then bridge again (over the dropped flickers). ``labels`` (R, F)
    int64; returns a new (R, F) int64. Where labels never compete this equals :func:`smooth_runs` of each
    label's mask; where they do, a gap holding another label's run that survives is not bridged."""
    out = labels.copy()
    _bridge_labels(out, segment, max_gap)
    _drop_short_labels(out, segment, min_run)
    _bridge_labels(out, segment, max_gap)
    return out


def _bridge_labels_numpy(out: np.ndarray, segment: np.ndarray, max_gap: int) -> np.ndarray:
    n_rows, n_frames = out.shape
    frames = np.broadcast_to(np.arange(n_frames), out.shape)
    labelled = out >= 0
    prev = np.maximum.accumulate(np.where(labelled, frames, -1), axis=1)
    nxt = np.minimum.accumulate(np.where(labelled, frames, n_frames)[:, ::-1], axis=1)[:, ::-1]
    rows = np.broadcast_to(np.arange(n_rows)[:, None], out.shape)
    fill = ~labelled & (prev >= 0) & (nxt < n_frames)
    p, n = np.where(fill, prev, 0), np.where(fill, nxt, 0)
    fill &= (n - p - 1 <= max_gap) & (out[rows, p] == out[rows, n]) & (segment[p] == segment[n])
    return np.where(fill, out[rows, p], out)


def _drop_short_labels_numpy(out: np.ndarray, segment: np.ndarray, min_run: int) -> np.ndarray:
    labelled = out >= 0
    continues = np.zeros_like(labelled)
    continues[:, 1:] = labelled[:, 1:] & (out[:, 1:] == out[:, :-1]) & (segment[1:] == segment[:-1])[None, :]
    starts = labelled & ~continues
    run_id = np.cumsum(starts.ravel()).reshape(out.shape) - 1
    lengths = np.bincount(run_id[labelled], minlength=max(int(starts.sum()), 1))
    short = np.zeros_like(labelled)
    short[labelled] = lengths[run_id[labelled]] < min_run
    return np.where(short, -1, out)


def smooth_labels_numpy(labels: np.ndarray, segment: np.ndarray, max_gap: int, min_run: int) -> np.ndarray:
    """NumPy twin of :func:`smooth_labels`."""
    if labels.shape[1] == 0:
        return labels.copy()
    out = _bridge_labels_numpy(labels, segment, max_gap)
    out = _drop_short_labels_numpy(out, segment, min_run)
    return _bridge_labels_numpy(out, segment, max_gap).astype(np.int64)


# --------------------------------------------------------------------------------------------------
# 2. interval extraction


@njit(cache=True)
def _next_true(flat: np.ndarray, words: np.ndarray, g: int, end: int) -> int:
    """First True position of ``flat[g:end]`` (``end`` when none). Gaze relations are sparse, so whole
    8-byte words of False (``words`` is ``flat`` viewed as uint64) are skipped at once."""
    in_words = words.shape[0] * 8
    while g < end:
        if (g & 7) == 0 and g + 8 <= end and g + 8 <= in_words and words[g >> 3] == 0:
            g += 8
        elif flat[g]:
            return g
        else:
            g += 1
    return end


@njit(cache=True)
def extract_runs(mask: np.ndarray, segment: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal True runs of each row of (R, F) ``mask`` that stay inside one segment.
    Returns (row, first_frame, last_frame) int64 arrays ordered by row then frame."""
    n_rows, n_frames = mask.shape
    flat = np.ascontiguousarray(mask).ravel().view(np.uint8)
    words = flat[: flat.shape[0] // 8 * 8].view(np.uint64)
    cont = np.zeros(n_frames, np.bool_)  # frame f may continue a run from frame f - 1 (same segment)
    for f in range(1, n_frames):
        cont[f] = segment[f] == segment[f - 1]
    count = 0
    rows = np.empty(0, np.int64)
    firsts = np.empty(0, np.int64)
    lasts = np.empty(0, np.int64)
    for sweep in range(2):  # the first sweep counts the runs, the second records them
        if sweep == 1:
            rows = np.empty(count, np.int64)
            firsts = np.empty(count, np.int64)
            lasts = np.empty(count, np.int64)
        k = 0
        for r in range(n_rows):
            base = r * n_frames
            end = base + n_frames
            g = _next_true(flat, words, base, end)
            while g < end:
                start = g
                g += 1
                while g < end and flat[g] and cont[g - base]:
                    g += 1
                if sweep == 1:
                    rows[k] = r
                    firsts[k] = start - base
                    lasts[k] = g - 1 - base
                k += 1
                g = _next_true(flat, words, g, end)
        count = k
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
# 5. fast gaze movement relative to the head (camera motion cancels)


@njit(cache=True)
def gaze_moving(relative: np.ndarray, valid: np.ndarray, times: np.ndarray, segment: np.ndarray,
                min_speed: float) -> np.ndarray:
    """Whether the head-relative gaze vector moves faster than ``min_speed`` (frame widths per second)
    between frame f-1 and f. ``relative`` (P, F, 2) float64 = gaze point minus head centre; False where
    either frame is invalid or the frames lie in different segments. Returns (P, F) bool.

    Speed and threshold are compared squared (|d|^2 > (min_speed * dt)^2): no square root, no division,
    and a one-byte output instead of an eight-byte speed array - this pass is memory-bound."""
    n_people, n_frames = valid.shape
    out = np.empty((n_people, n_frames), np.bool_)
    reach = np.full(n_frames, np.inf)  # (min_speed * dt)^2; inf where f-1 -> f is no usable step
    for f in range(1, n_frames):
        dt = times[f] - times[f - 1]
        if segment[f] == segment[f - 1] and dt > 0:
            reach[f] = (min_speed * dt) * (min_speed * dt)
    for p in range(n_people):
        out[p, 0] = False
        for f in range(1, n_frames):  # branch-free, so the loop vectorises
            dx = relative[p, f, 0] - relative[p, f - 1, 0]
            dy = relative[p, f, 1] - relative[p, f - 1, 1]
            out[p, f] = valid[p, f] & valid[p, f - 1] & (dx * dx + dy * dy > reach[f])
    return out


def gaze_moving_numpy(relative: np.ndarray, valid: np.ndarray, times: np.ndarray, segment: np.ndarray,
                      min_speed: float) -> np.ndarray:
    """NumPy twin of :func:`gaze_moving`."""
    out = np.zeros(valid.shape, bool)
    if valid.shape[1] < 2:
        return out
    dt = times[1:] - times[:-1]
    step_ok = (segment[1:] == segment[:-1]) & (dt > 0)
    reach = np.where(step_ok, (min_speed * dt) * (min_speed * dt), np.inf)
    delta = relative[:, 1:] - relative[:, :-1]
    moved = delta[..., 0] * delta[..., 0] + delta[..., 1] * delta[..., 1]
    out[:, 1:] = valid[:, 1:] & valid[:, :-1] & (moved > reach[None, :])
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


# --------------------------------------------------------------------------------------------------
# 9. support of many intervals at once: how many frames saw the cue, and the summed confidence there


@njit(cache=True)
def interval_support(
    seen: np.ndarray,
    weight: np.ndarray,
    seen_row: np.ndarray,
    weight_row: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each interval i (frames ``starts[i]..ends[i]`` inclusive): the number of frames where
    ``seen[seen_row[i]]`` is True and the sum of ``weight[weight_row[i]]`` over those frames.
    ``seen`` (R, F) bool, ``weight`` (W, F) float64. Returns counts (N,) int64 and sums (N,) float64.
    Sums run in frame order; they equal any other order whenever the sum is exact (float32 confidences
    of at most ~2^16 frames, as in the tracks table)."""
    n = starts.shape[0]
    counts = np.zeros(n, np.int64)
    sums = np.zeros(n, np.float64)
    for i in range(n):
        r = seen_row[i]
        w = weight_row[i]
        count = 0
        total = 0.0
        for f in range(starts[i], ends[i] + 1):
            if seen[r, f]:
                count += 1
                total += weight[w, f]
        counts[i] = count
        sums[i] = total
    return counts, sums


def interval_support_numpy(
    seen: np.ndarray,
    weight: np.ndarray,
    seen_row: np.ndarray,
    weight_row: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`interval_support`: every frame of every interval laid out flat, then one
    segmented sum (``np.add.reduceat``) per interval."""
    n = starts.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    lengths = ends - starts + 1
    offsets = np.cumsum(lengths) - lengths  # where each interval begins in the flat layout
    interval = np.repeat(np.arange(n), lengths)
    frame = np.arange(lengths.sum()) - np.repeat(offsets - starts, lengths)
    hits = seen[seen_row[interval], frame]
    counts = np.add.reduceat(hits.astype(np.int64), offsets)
    sums = np.add.reduceat(np.where(hits, weight[weight_row[interval], frame], 0.0), offsets)
    return counts, sums


# --------------------------------------------------------------------------------------------------
# 10. the most frequent (kind, id) label of many intervals (e.g. what a pointing gesture aims at)


@njit(cache=True)
def interval_mode(
    kind: np.ndarray,
    ident: np.ndarray,
    valid: np.ndarray,
    rows: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each interval i (frames ``starts[i]..ends[i]`` of row ``rows[i]``): the (kind, ident) pair seen
    most often on the frames where ``valid`` is True; ties go to the pair seen first. ``kind``/``ident``
    (R, F) int64, ``valid`` (R, F) bool. Returns kind (N,) and ident (N,) int64, -1 / -1 where no frame
    of the interval is valid."""
    n = starts.shape[0]
    out_kind = np.full(n, -1, np.int64)
    out_ident = np.full(n, -1, np.int64)
    longest = 0
    for i in range(n):
        longest = max(longest, ends[i] - starts[i] + 1)
    seen_kind = np.empty(longest, np.int64)  # distinct pairs of the current interval, in first-seen order
    seen_ident = np.empty(longest, np.int64)
    count = np.empty(longest, np.int64)
    for i in range(n):
        r = rows[i]
        m = 0
        for f in range(starts[i], ends[i] + 1):
            if not valid[r, f]:
                continue
            k = kind[r, f]
            d = ident[r, f]
            j = 0
            while j < m and not (seen_kind[j] == k and seen_ident[j] == d):
                j += 1
            if j == m:
                seen_kind[m] = k
                seen_ident[m] = d
                count[m] = 0
                m += 1
            count[j] += 1
        best = -1
        for j in range(m):
            if best < 0 or count[j] > count[best]:
                best = j
        if best >= 0:
            out_kind[i] = seen_kind[best]
            out_ident[i] = seen_ident[best]
    return out_kind, out_ident


def interval_mode_numpy(
    kind: np.ndarray,
    ident: np.ndarray,
    valid: np.ndarray,
    rows: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`interval_mode`: every frame of every interval laid out flat, pairs counted by
    sorting, then per interval the largest count with the earliest first sighting."""
    n = starts.shape[0]
    out_kind = np.full(n, -1, np.int64)
    out_ident = np.full(n, -1, np.int64)
    lengths = np.maximum(ends - starts + 1, 0)
    if lengths.sum() == 0:
        return out_kind, out_ident
    interval = np.repeat(np.arange(n), lengths)
    frame = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths - starts, lengths)
    row = rows[interval]
    ok = valid[row, frame]
    interval, row, frame = interval[ok], row[ok], frame[ok]
    k, d = kind[row, frame], ident[row, frame]
    position = np.arange(len(interval))  # frames are laid out in order: position = order of sighting
    order = np.lexsort((position, d, k, interval))
    interval, k, d, position = interval[order], k[order], d[order], position[order]
    new_group = np.ones(len(interval), bool)
    new_group[1:] = (interval[1:] != interval[:-1]) | (k[1:] != k[:-1]) | (d[1:] != d[:-1])
    group_start = np.flatnonzero(new_group)
    count = np.diff(np.append(group_start, len(interval)))
    g_interval, g_kind, g_ident, g_first = interval[group_start], k[group_start], d[group_start], position[group_start]
    best = np.lexsort((g_first, -count, g_interval))
    winner = best[np.concatenate([[True], g_interval[best][1:] != g_interval[best][:-1]])]
    out_kind[g_interval[winner]] = g_kind[winner]
    out_ident[g_interval[winner]] = g_ident[winner]
    return out_kind, out_ident


# --------------------------------------------------------------------------------------------------
# 11. where a run of a row starts and how long it continues, for many (row, frame) queries


@njit(cache=True)
def run_bounds(mask: np.ndarray, segment: np.ndarray, rows: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each query (row ``rows[i]``, frame ``frames[i]``) of (R, F) ``mask``, within the frame's segment:
    ``first``: the first frame of the True run containing the frame or, when the frame is False, of the
    next run (searching up to the segment's last frame, from where a run just before is taken back);
    ``last``: the last frame h >= frame such that frames frame+1..h are all True (the run continuing
    from the frame). Returns first (N,) and last (N,) int64."""
    n = rows.shape[0]
    n_frames = mask.shape[1]
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    for i in range(n):
        r = rows[i]
        frame = frames[i]
        f = frame
        while f < n_frames - 1 and not mask[r, f] and segment[f + 1] == segment[frame]:
            f += 1
        while f > 0 and mask[r, f - 1] and segment[f - 1] == segment[f]:
            f -= 1
        first[i] = f
        h = frame
        while h + 1 < n_frames and mask[r, h + 1] and segment[h + 1] == segment[frame]:
            h += 1
        last[i] = h
    return first, last


def run_bounds_numpy(mask: np.ndarray, segment: np.ndarray, rows: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of :func:`run_bounds`: a table of the True runs of the queried rows (split at segment
    changes, flattened row-major) looked up with ``np.searchsorted``."""
    n_frames = mask.shape[1]
    n = rows.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    used, which = np.unique(rows, return_inverse=True)
    which = which.reshape(-1)
    m = mask[used]
    same = segment[1:] == segment[:-1]
    continues = np.zeros_like(m)
    continues[:, 1:] = m[:, 1:] & m[:, :-1] & same[None, :]
    u, f = np.nonzero(m & ~continues)
    run_first = u * n_frames + f  # flat position of every run's first frame, sorted
    ends_next = np.zeros_like(m)
    ends_next[:, :-1] = continues[:, 1:]
    u, f = np.nonzero(m & ~ends_next)
    run_last = u * n_frames + f
    base = which * n_frames

    def run_of(position: np.ndarray) -> np.ndarray:  # the run containing a True flat position
        return np.searchsorted(run_first, position, side="right") - 1

    index = np.arange(n_frames)
    is_segment_end = np.append(~same, True)
    segment_last = np.minimum.accumulate(np.where(is_segment_end, index, n_frames)[::-1])[::-1]
    # first: the first True frame at or after the query frame, capped at the segment's last frame ...
    following = np.searchsorted(run_first, base + frames, side="left")
    has_next = following < len(run_first)
    next_true = np.full(n, n_frames)
    next_true[has_next] = run_first[following[has_next]] - base[has_next]
    next_true = np.where(m[which, frames], frames, np.minimum(next_true, n_frames))
    f1 = np.minimum(next_true, segment_last[frames])
    # ... then back to the start of the run it is in, or of the run just before it in its segment
    on = m[which, f1]
    before = np.maximum(f1 - 1, 0)
    back = ~on & (f1 > 0) & m[which, before] & (segment[before] == segment[f1])
    first = f1.copy()
    first[on] = run_first[run_of(base[on] + f1[on])] - base[on]
    first[back] = run_first[run_of(base[back] + before[back])] - base[back]
    # last: the end of the run the next frame is in, when it continues the query frame's segment
    after = np.minimum(frames + 1, n_frames - 1)
    goes_on = (frames + 1 < n_frames) & m[which, after] & (segment[after] == segment[frames])
    last = frames.copy()
    last[goes_on] = run_last[run_of(base[goes_on] + after[goes_on])] - base[goes_on]
    return first.astype(np.int64), last.astype(np.int64)
