"""Hand shape -> pointing / open palm, and arm geometry -> "is this a pointing gesture" (DESIGN.md §8).

Everything here is pure NumPy over arrays of landmarks so it is exact, vectorised and testable on
synthetic hands. Shape scores use only ratios of distances between landmarks, so they do not change
with the scale, offset, rotation or mirroring of the hand. Given depth (MediaPipe's z, in the same
units as x), the distances are taken in 3D: a finger pointing toward the camera looks short in the
image but keeps its length in 3D, so foreshortening does not hide it.
"""
from __future__ import annotations

import numpy as np

# MediaPipe hand landmark ids
WRIST = 0
THUMB_TIP = 4
INDEX_MCP, INDEX_PIP, INDEX_DIP, INDEX_TIP = 5, 6, 7, 8
MIDDLE_MCP, RING_MCP, PINKY_MCP = 9, 13, 17
N_HAND_LANDMARKS = 21
# (mcp, pip, dip, tip) of the four long fingers: index, middle, ring, pinky
FINGERS = np.array([[5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16], [17, 18, 19, 20]])

_EPS = 1e-9


def _smoothstep(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    t = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _check_landmarks(landmarks: np.ndarray, use_depth: bool = False) -> np.ndarray:
    """(N, 21, 2) image-plane points, or (N, 21, 3) with depth when asked for and given; NaN depth
    counts as flat (0)."""
    array = np.asarray(landmarks, dtype=np.float64)
    if array.ndim != 3 or array.shape[1] != N_HAND_LANDMARKS or array.shape[2] not in (2, 3):
        raise ValueError(f"hand landmarks must have shape (N, 21, 2|3), got {array.shape}")
    if use_depth and array.shape[2] == 3:
        out = array.copy()
        out[:, :, 2] = np.nan_to_num(out[:, :, 2])
        return out
    return array[:, :, :2]


def finger_extension(landmarks: np.ndarray, use_depth: bool = True) -> np.ndarray:
    """(N, 4) extension of index, middle, ring, pinky in [0, 1]: 1 = straight and reaching away from
    the wrist, 0 = folded into the palm. 3D when the landmarks carry depth and ``use_depth``."""
    xy = _check_landmarks(landmarks, use_depth)
    joints = xy[:, FINGERS]  # (N, 4 fingers, 4 joints, 2 or 3)
    wrist = xy[:, WRIST][:, None, :]
    bones = np.linalg.norm(np.diff(joints, axis=2), axis=-1).sum(axis=-1)  # mcp->pip->dip->tip length
    chord = np.linalg.norm(joints[:, :, 3] - joints[:, :, 0], axis=-1)  # mcp->tip straight line
    straightness = chord / (bones + _EPS)
    tip_reach = np.linalg.norm(joints[:, :, 3] - wrist, axis=-1)
    pip_reach = np.linalg.norm(joints[:, :, 1] - wrist, axis=-1)
    reach = tip_reach / (pip_reach + _EPS)  # > 1: the tip lies beyond the middle joint
    extension = _smoothstep(straightness, 0.6, 0.9) * _smoothstep(reach, 1.05, 1.35)
    extension[bones < _EPS] = 0.0
    return np.nan_to_num(extension, nan=0.0)


def pointing_score(landmarks: np.ndarray, use_depth: bool = True, middle_weight: float = 1.0) -> np.ndarray:
    """Pointing-hand score of N hands (DESIGN.md §8).

    ``landmarks``: (N, 21, 2|3) MediaPipe hand landmarks in any image-plane coordinates (any scale or
    offset, y down; z, when given, in the units of x as MediaPipe reports it, is used unless
    ``use_depth`` is False). Returns N scores in [0, 1]; >= 0.5 means an extended index finger with
    the middle, ring and little fingers not extended (the thumb may do anything). Hands with NaN
    landmarks score 0. Raises ValueError on any other shape.

    ``middle_weight`` < 1 discounts the middle finger: seen from the side or behind, it lies along
    the index and the landmark model often reads it as extended too (callers that already know the
    arm is held out toward something use this; at 0.45 an index + middle hand scores 0.55).
    """
    extension = finger_extension(landmarks, use_depth)
    others = np.maximum.reduce([extension[:, 2], extension[:, 3], middle_weight * extension[:, 1]])
    return np.clip(extension[:, 0] * (1.0 - others), 0.0, 1.0).astype(np.float32)


def open_palm_score(landmarks: np.ndarray, use_depth: bool = True) -> np.ndarray:
    """Open-hand score of N hands in [0, 1]: all four long fingers extended (high five, wave,
    showing an empty hand). Same input contract as ``pointing_score``."""
    extension = finger_extension(landmarks, use_depth)
    return np.clip(np.prod(extension, axis=1) ** 0.25, 0.0, 1.0).astype(np.float32)


def index_ray(landmarks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pointing rays of N hands: (origin (N, 2) = index fingertip, unit direction (N, 2) = index
    MCP -> tip). NaN where the finger has no length."""
    xy = _check_landmarks(landmarks)
    vector = xy[:, INDEX_TIP] - xy[:, INDEX_MCP]
    length = np.linalg.norm(vector, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        direction = np.where(length > _EPS, vector / length, np.nan)
    return xy[:, INDEX_TIP].copy(), direction


# a pointing index goes on roughly where the forearm goes: the wrist bends back or forward at most about 70-80
# degrees, so an "index" further than this from the elbow -> wrist direction is a hand folded on the body (arms
# crossed) read as pointing. Pointing rows of the DeePoint clips: 0.5-32 degrees; crossed arms (bus.jpg): 141-163
MAX_INDEX_FROM_FOREARM_DEG = 90.0


def index_follows_forearm(direction: np.ndarray, forearm: np.ndarray) -> bool:
    """Whether an index ray (2,) points within MAX_INDEX_FROM_FOREARM_DEG of the forearm (elbow -> wrist, (2,),
    the same image units): a hand can point only where its wrist can bend to. True when either is unknown."""
    direction, forearm = np.asarray(direction, np.float64), np.asarray(forearm, np.float64)
    lengths = float(np.linalg.norm(direction) * np.linalg.norm(forearm))
    if not np.isfinite(lengths) or lengths <= _EPS:
        return True
    return float(direction @ forearm) >= np.cos(np.radians(MAX_INDEX_FROM_FOREARM_DEG)) * lengths


def arm_extension(shoulder: np.ndarray, elbow: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """(N,) straightness of N arms: shoulder-wrist distance / (upper arm + forearm), 1 = straight.
    Inputs are (N, 2) points in any common image coordinates; NaN where a joint is missing."""
    shoulder, elbow, wrist = (np.asarray(a, dtype=np.float64).reshape(-1, 2) for a in (shoulder, elbow, wrist))
    chain = np.linalg.norm(elbow - shoulder, axis=-1) + np.linalg.norm(wrist - elbow, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chain > _EPS, np.linalg.norm(wrist - shoulder, axis=-1) / chain, np.nan)


def arm_elevation_deg(shoulder: np.ndarray, wrist: np.ndarray, hip: np.ndarray | None = None) -> np.ndarray:
    """(N,) angle in degrees between the arm (shoulder -> wrist) and the torso's downward axis
    (shoulder -> hip, or straight down in the image when the hip is unknown): 0 = hanging along the
    body, 90 = held out sideways/forward, 180 = straight up."""
    shoulder, wrist = (np.asarray(a, dtype=np.float64).reshape(-1, 2) for a in (shoulder, wrist))
    down = np.zeros_like(shoulder)
    down[:, 1] = 1.0
    if hip is not None:
        hip = np.asarray(hip, dtype=np.float64).reshape(-1, 2)
        torso = hip - shoulder
        usable = np.isfinite(torso).all(axis=1) & (np.linalg.norm(torso, axis=1) > _EPS)
        down[usable] = torso[usable]
    arm = wrist - shoulder
    cosine = (arm * down).sum(axis=1) / (np.linalg.norm(arm, axis=1) * np.linalg.norm(down, axis=1) + _EPS)
    return np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))


def arm_raised(
    shoulder: np.ndarray,
    elbow: np.ndarray,
    wrist: np.ndarray,
    hip: np.ndarray | None,
    min_extension: float,
    min_elevation_deg: float,
    min_forearm_ratio: float = 0.0,
) -> np.ndarray:
    """(N,) bool: the arm is straight enough (``min_extension``) and held away from the body
    (``min_elevation_deg`` from the torso axis). Missing joints give False, and so does a forearm
    shorter than ``min_forearm_ratio`` x the upper arm: an elbow keypoint collapsed onto the wrist makes
    any arm look straight (shoulder-wrist distance = the chain), so its shape is unknown."""
    extension = arm_extension(shoulder, elbow, wrist)
    elevation = arm_elevation_deg(shoulder, wrist, hip)
    shoulder, elbow, wrist = (np.asarray(a, dtype=np.float64).reshape(-1, 2) for a in (shoulder, elbow, wrist))
    forearm = np.linalg.norm(wrist - elbow, axis=-1)
    upper_arm = np.linalg.norm(elbow - shoulder, axis=-1)
    with np.errstate(invalid="ignore"):
        plausible = forearm >= min_forearm_ratio * upper_arm
        return (extension >= min_extension) & (elevation >= min_elevation_deg) & plausible
