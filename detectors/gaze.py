"""Gaze direction from a face mesh (head pose + iris) or, without a visible face, from body keypoints.

Conventions: directions are unit 3-vectors in the camera frame (x right, y down, z into the scene), so
a person looking into the lens has direction close to (0, 0, -1). Image points are pixels of the
(rotation-applied) frame unless a function says otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from detectors.face_pose import mesh_head_rotation
from detectors.observation import LEFT_EAR, LEFT_EYE, LEFT_SHOULDER, NOSE, RIGHT_EAR, RIGHT_EYE, RIGHT_SHOULDER

# A canonical 3D face (the widely used generic head model, units ~0.1 mm) in camera axes for a face
# looking straight into the lens: x toward the image right, y down, z into the scene (the nose tip is
# nearest the camera). The face looks along -z of this frame. Ids are the MediaPipe face-mesh points.
CANONICAL_FACE = np.array(
    [
        [0.0, 0.0, 0.0],  # nose tip
        [0.0, 330.0, 65.0],  # chin
        [-225.0, -170.0, 135.0],  # outer corner of the eye on the image left (subject's right eye)
        [225.0, -170.0, 135.0],  # outer corner of the eye on the image right (subject's left eye)
        [-150.0, 150.0, 125.0],  # mouth corner, image left
        [150.0, 150.0, 125.0],  # mouth corner, image right
    ],
    dtype=np.float64,
)
CANONICAL_EYE_SPAN = 450.0
CANONICAL_FACE_MESH_IDS = np.array([1, 152, 33, 263, 61, 291])

# Eye corners ordered image-left -> image-right for a frontal face, upper/lower lid and iris centre.
EYES = (
    {"corners": (33, 133), "lids": (159, 145), "iris": 468},  # subject's right eye
    {"corners": (362, 263), "lids": (386, 374), "iris": 473},  # subject's left eye
)
N_MESH_WITH_IRIS = 478

# Half the eye opening (corner to centre) over the eyeball radius (~15 mm / 12 mm): an iris offset
# of o half-widths means an eye rotation of asin(o x this).
EYE_HALF_WIDTH_OVER_RADIUS = 1.25
MAX_EYE_DOWN_DEG = 45.0  # eyes looking fully down (lids nearly closed) ~ this far below the head direction
# The upper lid follows the eye's vertical rotation, so the lid opening (lid distance / eye width)
# measures looking down far better than the iris, which the lowered lid hides.
EYE_OPEN_LEVEL = 0.36  # opening when looking straight ahead
EYE_OPEN_DOWN = 0.08  # opening when looking down as far as the eyes go
EYE_UP_LIMIT = 0.5  # wide-open lids read as looking up by at most this fraction of MAX_EYE_DOWN_DEG
# a keypoint the pose model is sure of (its score is a visibility probability); 0.4 and 0.6 measured alike
SURE_KEYPOINT_SCORE = 0.5


@dataclass(frozen=True)
class GazeEstimate:
    """One person's gaze: origin (x, y) pixels, unit direction (3,), confidence in [0, 1], and the share of the
    eye cues (iris, lids) it holds: 1 = read in full, 0 = the head's direction alone (eyes a few pixels wide).
    ``eye_direction`` is the direction with the eye cues read in full however small the eyes (the same as
    ``direction`` where they are read in full; None = not measured): too weak to stand on its own, it may
    choose among the targets the head's direction leaves open (pipeline.perception.associate_targets)."""

    origin: np.ndarray
    direction: np.ndarray
    confidence: float
    eye_cues: float = 1.0
    eye_direction: np.ndarray | None = None


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def weighted_unit_mean(weights, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The unit mean of two directions weighted by ``weights`` (two numbers); None when they cancel or either
    is not measured (NaN)."""
    direction = weights[0] * a + weights[1] * b
    norm = float(np.linalg.norm(direction))
    return direction / norm if norm >= 1e-9 else None


def head_rotation(mesh_px: np.ndarray, image_size: tuple[int, int]) -> tuple[np.ndarray, float] | None:
    """Head rotation (3x3, canonical face -> camera) from face-mesh landmarks (pixels) by solvePnP,
    and the mean reprojection error in pixels. None when the pose cannot be solved."""
    width, height = image_size
    focal = float(max(width, height))  # ~53 degree field of view: a fair prior for unknown cameras
    camera = np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]], dtype=np.float64)
    image_points = np.ascontiguousarray(mesh_px[CANONICAL_FACE_MESH_IDS, :2], dtype=np.float64)
    # Start from a frontal face at the distance its eye span implies: keeps the iterative solver away
    # from the mirrored solution behind the camera.
    eye_span_px = max(float(np.linalg.norm(image_points[3] - image_points[2])), 1.0)
    distance = focal * CANONICAL_EYE_SPAN / eye_span_px
    nose = image_points[0]
    rvec = np.zeros((3, 1))
    tvec = np.array([[(nose[0] - width / 2) * distance / focal], [(nose[1] - height / 2) * distance / focal], [distance]])
    ok, rvec, tvec = cv2.solvePnP(
        CANONICAL_FACE, image_points, camera, None, rvec, tvec, useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE
    )
    if not ok or tvec[2, 0] <= 0:
        return None
    projected, _ = cv2.projectPoints(CANONICAL_FACE, rvec, tvec, camera, None)
    error = float(np.linalg.norm(projected.reshape(-1, 2) - image_points, axis=1).mean())
    rotation, _ = cv2.Rodrigues(rvec)
    return rotation, error


# mouth corners and the cheeks' widest points: a smile stretches the mouth across the face
MOUTH_CORNERS = (61, 291)
FACE_SIDES = (234, 454)


def smile_width(points: np.ndarray) -> float:
    """Mouth width over face width (both measured across the face): about 0.22-0.39 for neutral mouths,
    0.40-0.50 for smiles on the shared truth's faces."""
    face = float(np.linalg.norm(points[FACE_SIDES[1], :2] - points[FACE_SIDES[0], :2]))
    mouth = float(np.linalg.norm(points[MOUTH_CORNERS[1], :2] - points[MOUTH_CORNERS[0], :2]))
    return mouth / face if face > 1e-9 else 0.0


def iris_offsets(
    mesh_px: np.ndarray, face_axes: np.ndarray | None = None, open_level: float = EYE_OPEN_LEVEL,
    view_power: float = 0.0, smile: tuple[float, float] = (0.0, 0.0),
) -> tuple[float, float]:
    """Eye-in-head direction cues averaged over both eyes: (horizontal iris offset in [-1, 1], positive
    toward the image right of the face; downward look in [-EYE_UP_LIMIT, 1] from how far the lids have closed).

    Without ``face_axes`` the cues are measured in the image (2D: a turned or tilted head foreshortens
    the eye width and the lid opening). With ``face_axes`` (3x3, columns = the face's axes in the mesh's
    x, y, z coordinates, detectors.face_pose.face_axes) they are measured on the face itself, from the
    mesh's 3D landmarks. ``open_level`` = the lid opening (over eye width) of a level look.
    ``view_power`` > 0 (with ``face_axes``) weights each eye's iris offset, and its lid cue where that
    reads wider than level (an up-look), by (its width in the image / its width on the face) **
    view_power: the far eye of a turned head is seen edge-on, its lids and iris squeezed into a few
    pixels the mesh mostly guesses; a lid cue reading down (closing lids) counts in full; 0 = both eyes
    alike. ``smile`` = (mouth share, rest depth), with ``face_axes``: on a face whose ``smile_width`` is at least
    the share, each lower lid counts at no less than the rest depth (eye widths) below the eye corners' line
    (smiling cheeks raise it, with no look down); (0, _) = off."""
    points = np.asarray(mesh_px, dtype=np.float64)
    if face_axes is not None:
        points = points[:, :3] @ face_axes  # face coordinates: x across, y down the face
    horizontal, vertical, weights = [], [], []
    image = np.asarray(mesh_px, dtype=np.float64)
    min_smile, lower_rest = smile
    smiling = face_axes is not None and min_smile > 0 and smile_width(points) >= min_smile
    for eye in EYES:
        left, right = points[eye["corners"][0], :2], points[eye["corners"][1], :2]
        iris = points[eye["iris"], :2]
        axis = right - left
        width = float(np.linalg.norm(axis))
        if width <= 1e-6:
            continue
        axis_unit = axis / width
        normal = np.array([-axis_unit[1], axis_unit[0]])  # image "down" for an upright face
        along = float(np.dot(iris - left, axis_unit)) / width
        horizontal.append(np.clip((along - 0.5) * 2.0, -1.0, 1.0))
        opening = abs(float(np.dot(points[eye["lids"][1], :2] - points[eye["lids"][0], :2], normal))) / width
        if smiling:
            # a smile's cheeks push the lower lid up, narrowing the opening with no look down: the lower lid
            # counts at no less than its rest depth below the corners' line
            middle = (left + right) / 2
            upper = float(np.dot(middle - points[eye["lids"][0], :2], normal)) / width
            lower = float(np.dot(points[eye["lids"][1], :2] - middle, normal)) / width
            opening = upper + max(lower, lower_rest)
        # wide-open lids mean looking up, but lids open less far up than they close down
        vertical.append(np.clip((open_level - opening) / (open_level - EYE_OPEN_DOWN), -EYE_UP_LIMIT, 1.0))
        seen = float(np.linalg.norm(image[eye["corners"][1], :2] - image[eye["corners"][0], :2]))
        weights.append(min(seen / width, 1.0) ** view_power if face_axes is not None and view_power > 0 else 1.0)
    if not horizontal or sum(weights) <= 1e-9:
        return 0.0, 0.0
    # a lid closing (a down-look) shows in both eyes alike; only an up-look read is weighted
    up_weights = [w if v < 0 else 1.0 for w, v in zip(weights, vertical)]
    return float(np.average(horizontal, weights=weights)), float(np.average(vertical, weights=up_weights))


def gaze_from_face_mesh(
    mesh_px: np.ndarray, image_size: tuple[int, int], face_score: float, iris_weight: float,
    head_pitch_bias_deg: float = 0.0, head_pose: str = "pnp", eye_open_level: float = EYE_OPEN_LEVEL,
    eye_cue_pixels: tuple[float, float] = (0.0, 0.0), eye_view_power: float = 0.0,
    smile: tuple[float, float] = (0.0, 0.0),
) -> GazeEstimate | None:
    """Gaze from 478 face-mesh landmarks (with iris) in frame pixels: head pose by solvePnP against the
    canonical face, turned by ``iris_weight`` x the eye-in-head angle the iris offset implies (less as
    the lids close: they hide the iris) and down by the lid cue.
    ``head_pitch_bias_deg`` is how far below the true head direction the generic face model reads (its
    nose and chin sit differently from most real faces); the direction is turned up by that much.
    ``head_pose``: "pnp" (the canonical face by solvePnP; iris and lids measured in the image) or "mesh"
    (the mesh's own 3D landmarks, detectors.face_pose; iris and lids measured on the face, with
    ``eye_open_level`` as a level look's lid opening; the eye cues fade from none at an eye width (the
    wider eye, image pixels) of ``eye_cue_pixels[0]`` to full at ``eye_cue_pixels[1]``; (0, 0) = always full;
    each eye weighted by how squarely it is seen, ``eye_view_power``, and a smile's raised lower lids not read
    as a look down, ``smile``: see ``iris_offsets``).
    Origin = midpoint of the two eyes. Confidence = face score x fit quality of the head model (the
    canonical face's reprojection error, also with "mesh")."""
    mesh_px = np.asarray(mesh_px, dtype=np.float64)
    if mesh_px.shape[0] < N_MESH_WITH_IRIS:
        raise ValueError(f"face mesh needs {N_MESH_WITH_IRIS} landmarks (refine_landmarks=True), got {mesh_px.shape[0]}")
    if head_pose not in ("pnp", "mesh"):
        raise ValueError(f"head_pose must be 'pnp' or 'mesh', got {head_pose!r}")
    solved = head_rotation(mesh_px, image_size)
    if solved is None:
        return None
    rotation, error = solved
    if head_pose == "mesh":
        from_mesh = mesh_head_rotation(mesh_px, image_size)
        if from_mesh is None:
            return None
        rotation, face_axes = from_mesh
        yaw_offset, pitch_offset = iris_offsets(mesh_px, face_axes, eye_open_level, eye_view_power, smile)
        # eyes a few pixels wide cannot show the lids or the iris: their cues fade out with the width
        # of the wider eye in the image (a 1-pixel landmark error is a large part of the lid range there)
        low, full = eye_cue_pixels
        visible = 1.0
        if full > low:
            widths = [np.linalg.norm(mesh_px[e["corners"][1], :2] - mesh_px[e["corners"][0], :2]) for e in EYES]
            visible = float(np.clip((max(widths) - low) / (full - low), 0.0, 1.0))
    else:
        yaw_offset, pitch_offset = iris_offsets(mesh_px)
        visible = 1.0
    direction = _unit(rotation @ _eye_in_head(yaw_offset * visible, pitch_offset * visible, iris_weight,
                                               head_pitch_bias_deg))
    eye_direction = direction if visible >= 1.0 else _unit(
        rotation @ _eye_in_head(yaw_offset, pitch_offset, iris_weight, head_pitch_bias_deg))
    eye_centres = [(mesh_px[e["corners"][0], :2] + mesh_px[e["corners"][1], :2]) / 2 for e in EYES]
    origin = (eye_centres[0] + eye_centres[1]) / 2
    face_width = float(np.ptp(mesh_px[:468, 0])) or 1.0
    fit = float(np.exp(-error / (0.08 * face_width)))
    eye_cues = visible if head_pose == "mesh" else 1.0
    return GazeEstimate(origin=origin, direction=direction, confidence=float(np.clip(face_score * fit, 0.0, 1.0)),
                        eye_cues=float(eye_cues), eye_direction=eye_direction)


def _eye_in_head(yaw_offset: float, pitch_offset: float, iris_weight: float, head_pitch_bias_deg: float) -> np.ndarray:
    """The eye-in-head direction (canonical-face axes: the face looks along -z, +y = down, +x = image right) for
    an iris offset and a lid cue (``iris_offsets``)."""
    # a lowering lid covers the iris and drags its landmark around: trust the iris offset less the
    # further the lids have closed (looking down), not at all when they are nearly shut
    iris_trust = iris_weight * (1.0 - float(np.clip(pitch_offset, 0.0, 1.0)))
    eye_yaw = iris_trust * np.arcsin(np.clip(yaw_offset * EYE_HALF_WIDTH_OVER_RADIUS, -1.0, 1.0))
    # the lid cue is a stable measurement and applies in full
    eye_pitch = np.radians(pitch_offset * MAX_EYE_DOWN_DEG - head_pitch_bias_deg)
    return np.array([np.sin(eye_yaw) * np.cos(eye_pitch), np.sin(eye_pitch), -np.cos(eye_yaw) * np.cos(eye_pitch)])


def face_keypoints_seen(keypoints: np.ndarray, min_score: float = 0.3) -> np.ndarray:
    """(N,) bool: COCO-17 keypoints (N, 17, 3) show the face (the nose, or both eyes); False = a head
    seen from behind, whose direction ``gaze_from_keypoints`` can only guess.

    A torso seen from behind (both shoulders sure, the subject's left one on the image left) needs sure
    face points (``SURE_KEYPOINT_SCORE``): from a back view a head shows the camera at most a lost profile,
    and the pose model puts faint noses and eyes on the backs of heads (tvhid_handshake_0001's A, "face
    never visible": nose 0.29-0.32, one eye 0.48-0.59), where a score a hair either side of ``min_score``
    switched the read between a back view (no target) and a profile looking at someone (a false eye contact
    in a re-encoded copy of the clip)."""
    keypoints = np.asarray(keypoints, dtype=np.float64).reshape(-1, 17, 3)
    placed = np.isfinite(keypoints[:, :, :2]).all(axis=2)
    seen = placed & (keypoints[:, :, 2] >= min_score)
    sure = placed & (keypoints[:, :, 2] >= max(min_score, SURE_KEYPOINT_SCORE))
    from_behind = (sure[:, LEFT_SHOULDER] & sure[:, RIGHT_SHOULDER]
                   & (keypoints[:, RIGHT_SHOULDER, 0] > keypoints[:, LEFT_SHOULDER, 0]))
    face = np.where(from_behind[:, None], sure, seen)
    return face[:, NOSE] | (face[:, LEFT_EYE] & face[:, RIGHT_EYE])


def gaze_from_keypoints(
    keypoints: np.ndarray, min_score: float = 0.3, max_conf: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coarse gaze of N people from COCO-17 keypoints (x, y in any isotropic image units, score):
    which way the head faces, from the nose's offset between the ears and whether the face is
    visible at all (ears/shoulders without nose and eyes = a back view, looking away from the camera).
    Returns origin (N, 2), unit direction (N, 3) and confidence (N,) capped at ``max_conf``; NaN/0
    where the head is not seen. Pitch is not observable from these points and is left level."""
    keypoints = np.asarray(keypoints, dtype=np.float64)
    if keypoints.ndim != 3 or keypoints.shape[1:] != (17, 3):
        raise ValueError(f"keypoints must have shape (N, 17, 3), got {keypoints.shape}")
    n = len(keypoints)
    origin = np.full((n, 2), np.nan)
    direction = np.full((n, 3), np.nan)
    confidence = np.zeros(n)
    face_seen = face_keypoints_seen(keypoints, min_score)
    for i, person in enumerate(keypoints):
        seen = np.isfinite(person[:, :2]).all(axis=1) & (person[:, 2] >= min_score)
        head_ids = [k for k in (NOSE, LEFT_EYE, RIGHT_EYE, LEFT_EAR, RIGHT_EAR) if seen[k]]
        ears = [k for k in (LEFT_EAR, RIGHT_EAR) if seen[k]]
        shoulders_seen = seen[LEFT_SHOULDER] and seen[RIGHT_SHOULDER]
        if not head_ids and not shoulders_seen:
            continue
        # Subject's left shoulder on the image right = facing the camera (COCO labels are anatomical).
        shoulder_span = person[LEFT_SHOULDER, 0] - person[RIGHT_SHOULDER, 0] if shoulders_seen else 0.0
        head_width = abs(shoulder_span) * 0.45 if shoulders_seen else 0.0
        if len(ears) == 2:
            head_width = max(head_width, abs(person[LEFT_EAR, 0] - person[RIGHT_EAR, 0]))
        head_centre = person[ears, :2].mean(axis=0) if ears else person[head_ids or [LEFT_SHOULDER, RIGHT_SHOULDER], :2].mean(axis=0)
        if face_seen[i]:
            eyes = [k for k in (LEFT_EYE, RIGHT_EYE) if seen[k]]
            origin[i] = person[eyes, :2].mean(axis=0) if eyes else person[NOSE, :2]
            face_x = person[NOSE, 0] if seen[NOSE] else origin[i, 0]
            if len(ears) == 2 and head_width > 0:
                lateral = np.clip((face_x - head_centre[0]) / (0.5 * head_width), -1.0, 1.0)
                yaw = np.arcsin(lateral)
            elif len(ears) == 1:  # profile: the face points away from the one visible ear
                yaw = np.radians(70.0) * np.sign(face_x - person[ears[0], 0])
            else:
                yaw = 0.0
            direction[i] = [np.sin(yaw), 0.0, -np.cos(yaw)]
            used = [NOSE, LEFT_EYE, RIGHT_EYE] + ears
        else:
            origin[i] = head_centre
            # Back view: the head faces into the scene; turn it toward the side of a single visible
            # ear's opposite (we see the back-left of a head turned to the image right) or along the
            # shoulder line's normal when the shoulders are seen edge-on.
            lateral = 0.0
            if len(ears) == 1 and seen[LEFT_SHOULDER] | seen[RIGHT_SHOULDER]:
                neck_x = np.nanmean([person[k, 0] for k in (LEFT_SHOULDER, RIGHT_SHOULDER) if seen[k]])
                lateral = np.clip((person[ears[0], 0] - neck_x) / max(head_width, 1e-6), -1.0, 1.0)
            yaw = np.arcsin(lateral * 0.9)
            direction[i] = [np.sin(yaw), 0.0, np.cos(yaw)]
            used = ears + [LEFT_SHOULDER, RIGHT_SHOULDER]
        scores = person[used, 2]
        scores = scores[np.isfinite(scores)]
        confidence[i] = max_conf * float(np.clip(scores.mean() if len(scores) else 0.0, 0.0, 1.0))
    return origin, direction, confidence
