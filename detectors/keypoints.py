"""Body keypoint helpers shared by the backends: MediaPipe's 33 pose landmarks -> COCO-17, and boxes
(person, head, hands) derived from keypoints. Points are pixels unless stated otherwise."""
from __future__ import annotations

import numpy as np

from detectors.observation import (
    LEFT_EAR,
    LEFT_ELBOW,
    LEFT_EYE,
    LEFT_SHOULDER,
    LEFT_WRIST,
    NOSE,
    RIGHT_EAR,
    RIGHT_ELBOW,
    RIGHT_EYE,
    RIGHT_SHOULDER,
    RIGHT_WRIST,
)

# MediaPipe pose landmark id for each COCO-17 keypoint (nose, eyes, ears, shoulders, elbows, wrists,
# hips, knees, ankles; left/right are the subject's own in both conventions).
MEDIAPIPE_TO_COCO = np.array([0, 2, 5, 7, 8, 11, 12, 13, 14, 15, 16, 23, 24, 25, 26, 27, 28])
# MediaPipe pose points of each hand (wrist, pinky, index, thumb): left hand, right hand.
MEDIAPIPE_HAND_POINTS = np.array([[15, 17, 19, 21], [16, 18, 20, 22]])
HEAD_KEYPOINTS = [NOSE, LEFT_EYE, RIGHT_EYE, LEFT_EAR, RIGHT_EAR]
ARMS = ((LEFT_SHOULDER, LEFT_ELBOW, LEFT_WRIST), (RIGHT_SHOULDER, RIGHT_ELBOW, RIGHT_WRIST))


def coco_from_mediapipe(landmarks: np.ndarray) -> np.ndarray:
    """(17, 3) COCO keypoints (x, y, score = visibility) from (33, >=4) MediaPipe pose landmarks
    (x, y, z, visibility)."""
    landmarks = np.asarray(landmarks, dtype=np.float64)
    if landmarks.shape[0] != 33 or landmarks.shape[1] < 4:
        raise ValueError(f"MediaPipe pose landmarks must have shape (33, 4), got {landmarks.shape}")
    picked = landmarks[MEDIAPIPE_TO_COCO]
    return np.stack([picked[:, 0], picked[:, 1], picked[:, 3]], axis=1)


def visible(keypoints: np.ndarray, min_score: float) -> np.ndarray:
    """(17,) bool: keypoint has finite coordinates and score >= ``min_score``."""
    return np.isfinite(keypoints[:, :2]).all(axis=1) & (np.nan_to_num(keypoints[:, 2]) >= min_score)


def person_box(keypoints: np.ndarray, min_score: float, margin: float = 0.12) -> np.ndarray | None:
    """Box around the visible keypoints grown by ``margin`` of its size (and by a head's height at the
    top, since the highest keypoints are the eyes). None with fewer than 3 visible keypoints."""
    seen = visible(keypoints, min_score)
    if seen.sum() < 3:
        return None
    points = keypoints[seen, :2]
    x1, y1 = points.min(axis=0)
    x2, y2 = points.max(axis=0)
    grow_x, grow_y = margin * max(x2 - x1, 1.0), margin * max(y2 - y1, 1.0)
    head = head_box(keypoints, min_score)
    box = np.array([x1 - grow_x, y1 - grow_y, x2 + grow_x, y2 + grow_y])
    if head is not None:
        box[:2] = np.minimum(box[:2], head[:2])
        box[2:] = np.maximum(box[2:], head[2:])
    return box


def head_box(keypoints: np.ndarray, min_score: float) -> np.ndarray | None:
    """Head box from the nose, eyes and ears, sized by the ear span or, failing that, the shoulder
    width (a head is about 0.45 shoulder widths wide). None when no head keypoint is seen."""
    seen = visible(keypoints, min_score)
    head_ids = [k for k in HEAD_KEYPOINTS if seen[k]]
    if not head_ids:
        return None
    points = keypoints[head_ids, :2]
    centre = points.mean(axis=0)
    span = float(np.ptp(points[:, 0])) if len(points) > 1 else 0.0
    if seen[LEFT_EAR] and seen[RIGHT_EAR]:
        span = max(span, abs(keypoints[LEFT_EAR, 0] - keypoints[RIGHT_EAR, 0]) * 1.15)
    if seen[LEFT_SHOULDER] and seen[RIGHT_SHOULDER]:
        shoulder_width = float(np.linalg.norm(keypoints[LEFT_SHOULDER, :2] - keypoints[RIGHT_SHOULDER, :2]))
        span = max(span, 0.45 * shoulder_width)
    if span <= 0:
        return None
    half_w, half_h = 0.55 * span, 0.7 * span
    # eyes/ears sit a little above the head's centre
    return np.array([centre[0] - half_w, centre[1] - half_h * 1.1, centre[0] + half_w, centre[1] + half_h * 0.9])


def hand_boxes_from_arm(keypoints: np.ndarray, min_score: float) -> np.ndarray:
    """(2, 4) hand boxes (subject's left, right) extrapolated from elbow -> wrist: the hand continues
    the forearm and is about half a forearm long. NaN rows where the wrist or elbow is not seen."""
    seen = visible(keypoints, min_score)
    boxes = np.full((2, 4), np.nan)
    for side, (_, elbow, wrist) in enumerate(ARMS):
        if not (seen[elbow] and seen[wrist]):
            continue
        forearm = keypoints[wrist, :2] - keypoints[elbow, :2]
        length = float(np.linalg.norm(forearm))
        if length <= 0:
            continue
        centre = keypoints[wrist, :2] + 0.3 * forearm
        half = 0.35 * length
        boxes[side] = [centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half]
    return boxes


def hand_boxes_from_points(points: np.ndarray, scores: np.ndarray, min_score: float) -> np.ndarray:
    """(2, 4) hand boxes from MediaPipe pose hand points ((2, 4, 2) wrist, pinky, index, thumb per
    hand, and their (2, 4) visibilities). The box is square, centred on the points, at least as big
    as twice their spread (fingers reach past the knuckle points)."""
    boxes = np.full((2, 4), np.nan)
    for side in range(2):
        if np.nanmean(scores[side]) < min_score:
            continue
        pts = points[side]
        centre = pts.mean(axis=0)
        half = max(float(np.ptp(pts[:, 0])), float(np.ptp(pts[:, 1])), 1.0) * 1.0
        boxes[side] = [centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half]
    return boxes


def box_iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two xyxy boxes."""
    inter_w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    inter_h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = inter_w * inter_h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def box_intersection_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(M, K) intersection areas of xyxy boxes ``a`` (M, 4) and ``b`` (K, 4)."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    width = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    height = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    return np.clip(width, 0, None) * np.clip(height, 0, None)


def box_iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(M, K) IoU between xyxy boxes ``a`` (M, 4) and ``b`` (K, 4)."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    inter = box_intersection_matrix(a, b)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
