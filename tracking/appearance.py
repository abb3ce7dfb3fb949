"""Appearance descriptors for re-identification: colour histograms of each person's head, torso and legs.

Clothing and hair colour are what stay the same when a person turns away, is occluded or reappears after
a cut, and they cost microseconds per person (no re-id network to load). Each part is a normalised
hue-saturation histogram plus a brightness histogram (for black/white/grey clothing, where hue is
meaningless); the parts are concatenated with fixed weights, so two people in the same dark jacket still
differ by their trousers or hair. Two descriptors are compared with the Bhattacharyya (Hellinger)
distance in [0, 1]. An all-zero descriptor means "not seen" (crop too small or off-frame).
"""
from __future__ import annotations

import cv2
import numpy as np

from detectors.observation import LEFT_HIP, LEFT_SHOULDER, RIGHT_HIP, RIGHT_SHOULDER

HUE_BINS, SATURATION_BINS, VALUE_BINS = 12, 4, 8
PART_SIZE = HUE_BINS * SATURATION_BINS + VALUE_BINS
# head (hair, skin) / torso / legs: the torso says most; hair and trousers separate same-jacket people
PART_WEIGHTS = (0.2, 0.4, 0.4)
DESCRIPTOR_SIZE = PART_SIZE * len(PART_WEIGHTS)
_MIN_CROP_PIXELS = 6  # a torso narrower or shorter than this (in pixels) gives no descriptor
_FULL_PART_PIXELS = 4 * _MIN_CROP_PIXELS  # ...and a part counts in full from this size (_part_share)
_CROP_WORK_SIDE = 48  # crops are shrunk to at most this many pixels a side before the histogram
_KEYPOINT_MIN_SCORE = 0.3
TORSO_HEIGHT_SHARE = 0.3  # shoulders to hips over standing height (anthropometric tables: 0.82 - 0.52)
TORSO_MIN_WIDTH_SHARE = 0.3  # half the box band's width (0.6 of the box): a body seen side-on
# Below this saturation or brightness a pixel's hue is noise: it only counts in the brightness part.
_CHROMATIC_MIN_SATURATION, _CHROMATIC_MIN_VALUE = 40, 30


def torso_boxes(xyxy: np.ndarray, keypoints: np.ndarray | None = None) -> np.ndarray:
    """(N, 4) normalised torso boxes: between shoulders and hips when the pose shows them, else the
    band of the person box below the head (20-60 % of its height, central 60 % of its width)."""
    xyxy = np.asarray(xyxy, np.float32).reshape(-1, 4)
    width = xyxy[:, 2] - xyxy[:, 0]
    height = xyxy[:, 3] - xyxy[:, 1]
    torso = np.stack(
        [
            xyxy[:, 0] + 0.2 * width,
            xyxy[:, 1] + 0.2 * height,
            xyxy[:, 2] - 0.2 * width,
            xyxy[:, 1] + 0.6 * height,
        ],
        axis=1,
    )
    if keypoints is None or len(keypoints) == 0:
        return torso
    shoulders = keypoints[:, [LEFT_SHOULDER, RIGHT_SHOULDER]]
    hips = keypoints[:, [LEFT_HIP, RIGHT_HIP]]
    shoulders_seen = np.all(shoulders[..., 2] >= _KEYPOINT_MIN_SCORE, axis=1) & np.all(np.isfinite(shoulders[..., :2]), axis=(1, 2))
    hips_seen = np.all(hips[..., 2] >= _KEYPOINT_MIN_SCORE, axis=1) & np.all(np.isfinite(hips[..., :2]), axis=(1, 2))
    for i in np.flatnonzero(shoulders_seen):
        x_left, x_right = np.sort(shoulders[i, :, 0])
        shoulder_y = float(shoulders[i, :, 1].mean())
        span = max(x_right - x_left, 1e-3)
        # without the hips, a torso is 1.2 shoulder widths long and never shorter than the share of a body
        # between shoulders and hips (TORSO_HEIGHT_SHARE of the box): a side view's shoulders overlap, and 1.2
        # of their few pixels made a chest patch whose colours differed from the whole torso's when the hips
        # came into view (deepoint_pointing_up's seated man: 0.57 between two samples 0.5 s apart)
        bottom = (float(hips[i, :, 1].mean()) if hips_seen[i]
                  else min(shoulder_y + max(1.2 * span, TORSO_HEIGHT_SHARE * float(height[i])), float(xyxy[i, 3])))
        if shoulder_y >= float(xyxy[i, 3]):
            # shoulders at or past the box's bottom edge (a head close-up: the pose model puts them on the
            # frame's edge): the torso is out of view. The box band would read the head and the background
            # as the torso (a bald man seen from behind in two close-ups 0.72 apart, 0.45-0.58 from his
            # green scrubs in the wide shot): no torso, so no colours, rather than wrong ones
            torso[i] = [xyxy[i, 0], xyxy[i, 3], xyxy[i, 0], xyxy[i, 3]]
            continue
        if bottom <= shoulder_y:  # bent over or lying: fall back to the box band
            continue
        inset = 0.1 * span  # stay inside the shirt, off the arms
        left, right = x_left + inset, x_right - inset
        # a side view's shoulders overlap: the body seen side-on is still about half the band the box gives
        # a torso (TORSO_MIN_WIDTH_SHARE of the box), not the few pixels between the shoulder points, which
        # left a walker seen side-on without colours and crossings to box overlap alone
        half = max(right - left, TORSO_MIN_WIDTH_SHARE * float(width[i])) / 2
        centre = (left + right) / 2
        left, right = max(centre - half, float(xyxy[i, 0])), min(centre + half, float(xyxy[i, 2]))
        torso[i] = [left, shoulder_y + 0.1 * (bottom - shoulder_y), right, bottom]
    return torso


def part_boxes(xyxy: np.ndarray, keypoints: np.ndarray | None = None) -> np.ndarray:
    """(N, 3, 4) normalised head, torso and legs boxes: the torso of ``torso_boxes``; above it up to the
    top of the person box the head, below it down to the bottom the legs (central half of the box width)."""
    xyxy = np.asarray(xyxy, np.float32).reshape(-1, 4)
    torso = torso_boxes(xyxy, keypoints)
    quarter = (xyxy[:, 2] - xyxy[:, 0]) / 4
    left, right = xyxy[:, 0] + quarter, xyxy[:, 2] - quarter
    head = np.stack([left, xyxy[:, 1], right, torso[:, 1]], axis=1)
    legs = np.stack([left, torso[:, 3], right, xyxy[:, 3]], axis=1)
    return np.stack([head, torso, legs], axis=1)


def appearance_descriptors(image: np.ndarray, xyxy: np.ndarray, keypoints: np.ndarray | None = None) -> np.ndarray:
    """(N, DESCRIPTOR_SIZE) float32 descriptors (each sums to 1, or all zero when not seen) of the
    people with normalised boxes ``xyxy`` in an RGB uint8 ``image``: the weighted histograms of their
    head, torso and legs; a part too small or off-frame leaves its share to the others."""
    parts = part_boxes(xyxy, keypoints)
    out = np.zeros((len(parts), DESCRIPTOR_SIZE), np.float32)
    if len(parts) == 0:
        return out
    height, width = image.shape[:2]
    scale = np.array([width, height, width, height], np.float32)
    pixel_boxes = np.nan_to_num(parts * scale)
    for i in range(len(parts)):
        if _part_histogram(image, pixel_boxes[i, 1]) is None:
            continue  # no torso, no descriptor: head and legs alone are too easily someone else's
        for k, weight in enumerate(PART_WEIGHTS):
            histogram = _part_histogram(image, pixel_boxes[i, k])
            if histogram is not None:
                out[i, k * PART_SIZE : (k + 1) * PART_SIZE] = weight * _part_share(pixel_boxes[i, k]) * histogram
        total = float(out[i].sum())
        # parts all at the smallest size count for nothing: not seen (0 / 0 made a NaN descriptor)
        out[i] = out[i] / total if total > 0 else 0.0
    return out


def _part_share(box: np.ndarray) -> float:
    """How fully a part counts, from its smaller side in pixels: nothing at _MIN_CROP_PIXELS, all from
    _FULL_PART_PIXELS. A strip of a few pixels between the hips and the box's bottom edge is not the legs:
    counted in full from 6 px on, it swung one seated man's descriptor by 0.4 between samples as his hips
    were placed a pixel higher or lower."""
    side = min(box[2] - box[0], box[3] - box[1])
    return float(np.clip((side - _MIN_CROP_PIXELS) / (_FULL_PART_PIXELS - _MIN_CROP_PIXELS), 0.0, 1.0))


def _part_histogram(image: np.ndarray, box: np.ndarray) -> np.ndarray | None:
    height, width = image.shape[:2]
    x1, y1, x2, y2 = box
    x1, x2 = int(np.clip(round(x1), 0, width)), int(np.clip(round(x2), 0, width))
    y1, y2 = int(np.clip(round(y1), 0, height)), int(np.clip(round(y2), 0, height))
    if x2 - x1 < _MIN_CROP_PIXELS or y2 - y1 < _MIN_CROP_PIXELS:
        return None
    return _histogram(image[y1:y2, x1:x2])


def _histogram(crop: np.ndarray) -> np.ndarray:
    height, width = crop.shape[:2]
    shrink = _CROP_WORK_SIDE / max(height, width)
    if shrink < 1:
        crop = cv2.resize(crop, (max(1, round(width * shrink)), max(1, round(height * shrink))), interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2HSV).reshape(-1, 3)
    hue, saturation, value = hsv[:, 0].astype(np.int32), hsv[:, 1].astype(np.int32), hsv[:, 2].astype(np.int32)
    chromatic = (saturation >= _CHROMATIC_MIN_SATURATION) & (value >= _CHROMATIC_MIN_VALUE)
    hue_bin = np.minimum(hue * HUE_BINS // 180, HUE_BINS - 1)  # OpenCV hue is 0..179
    saturation_bin = np.minimum(saturation * SATURATION_BINS // 256, SATURATION_BINS - 1)
    colour = np.bincount(
        (hue_bin * SATURATION_BINS + saturation_bin)[chromatic], minlength=HUE_BINS * SATURATION_BINS
    )
    value_bin = np.minimum(value * VALUE_BINS // 256, VALUE_BINS - 1)
    brightness = np.bincount(value_bin[~chromatic], minlength=VALUE_BINS)
    histogram = np.concatenate([colour, brightness]).astype(np.float32)
    return histogram / max(float(histogram.sum()), 1.0)


def appearance_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bhattacharyya (Hellinger) distance between descriptor rows of ``a`` (M, D) and ``b`` (K, D):
    (M, K) in [0, 1], 0 = same colours. NaN where either descriptor is all zero (not seen).

    Descriptors of this module's layout are compared over the parts both show, as much as both show them: the
    coefficient is divided by that of the parts' shares (head, torso, legs). The legs leave a close-up, a hip
    keypoint comes and goes, and what one side does not show says nothing either way (the same pixels read
    with and without the legs region were 0.48 apart). Where both show the parts alike (every part in full on
    both sides) this is the plain distance of the whole descriptors; other layouts are compared whole."""
    a = np.atleast_2d(np.asarray(a, np.float64))
    b = np.atleast_2d(np.asarray(b, np.float64))
    a_mass, b_mass = a.sum(axis=1), b.sum(axis=1)
    overlap = _coefficient(a, b)
    if a.shape[1] == DESCRIPTOR_SIZE and b.shape[1] == DESCRIPTOR_SIZE:
        shares = _coefficient(_part_masses(a), _part_masses(b))
        overlap = np.divide(overlap, shares, out=np.zeros_like(overlap), where=shares > 0)
    distance = np.sqrt(np.clip(1.0 - overlap, 0.0, 1.0))
    distance[(a_mass <= 0)[:, None] | (b_mass <= 0)[None, :]] = np.nan
    return distance


def _part_masses(descriptors: np.ndarray) -> np.ndarray:
    """(N, parts) how much of each descriptor each part (head, torso, legs) holds."""
    return descriptors.reshape(len(descriptors), len(PART_WEIGHTS), PART_SIZE).sum(axis=2)


def _coefficient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(M, K) Bhattacharyya coefficients of the rows of ``a`` and ``b``, each normalised to sum 1 (zero rows: 0)."""
    a_mass, b_mass = a.sum(axis=1), b.sum(axis=1)
    a_unit = a / np.where(a_mass > 0, a_mass, 1.0)[:, None]
    b_unit = b / np.where(b_mass > 0, b_mass, 1.0)[:, None]
    return np.sqrt(a_unit) @ np.sqrt(b_unit).T
