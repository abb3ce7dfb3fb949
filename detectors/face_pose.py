"""Head orientation read directly off the face mesh's own 3D landmarks (no generic face model, no PnP).

MediaPipe's face mesh gives every landmark an x, y in pixels and a depth z on the same scale, as the
network sees the face in its crop: a weak-perspective view along the line of sight from the lens to
the face. The face's axes come from landmark pairs that do not move with expression (outer eye
corners, cheek edges, mouth corners across; forehead top to chin down), so they need no model of a
typical face, whose nose and chin sit differently from most real ones (the canonical-face solvePnP read
head pitch 0-28 degrees low on level looks and over-read yaw toward the lens in 3/4 views,
benchmarks/README.md). The crop's view is then turned onto the line of sight through the face, for a
pinhole camera whose focal length is the longer image side (the prior events.geometry uses too).

Conventions as in detectors.gaze: camera frame x right, y down, z into the scene; the returned rotation
takes face axes (x toward the image right of a frontal face, y down, z into the head: the face looks
along -z) to the camera frame.
"""
from __future__ import annotations

import numpy as np

# Face-mesh ids. Across the face: (image-left, image-right) pairs of a frontal face.
ACROSS_PAIRS = ((33, 263), (234, 454), (61, 291))  # outer eye corners, cheek edges, mouth corners
FOREHEAD, CHIN = 10, 152
EYE_OUTER = (33, 263)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def face_axes(mesh: np.ndarray) -> np.ndarray | None:
    """(3, 3) rotation whose columns are the face's x (across), y (forehead -> chin) and z (into the
    head) axes in the mesh's own coordinates (pixels, with z), or None when the landmarks are degenerate."""
    points = np.asarray(mesh, dtype=np.float64)[:, :3]
    across = [_unit(points[b] - points[a]) for a, b in ACROSS_PAIRS]
    x = _unit(np.sum(across, axis=0))
    down = points[CHIN] - points[FOREHEAD]
    y = down - float(down @ x) * x
    if np.linalg.norm(x) < 0.5 or np.linalg.norm(y) < 1e-6:
        return None
    y = _unit(y)
    return np.stack([x, y, np.cross(x, y)], axis=1)


def sight_rotation(point_px: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """(3, 3) rotation taking the optical axis (0, 0, 1) onto the line of sight through image point
    ``point_px`` (pixels), focal length = the longer image side."""
    width, height = image_size
    focal = float(max(width, height))
    sight = _unit(np.array([(point_px[0] - width / 2) / focal, (point_px[1] - height / 2) / focal, 1.0]))
    axis = np.cross([0.0, 0.0, 1.0], sight)
    sin, cos = float(np.linalg.norm(axis)), float(sight[2])
    if sin < 1e-12:
        return np.eye(3)
    k = axis / sin
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + sin * cross + (1.0 - cos) * cross @ cross


def mesh_head_rotation(mesh_px: np.ndarray, image_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """Head rotation (face axes -> camera frame) from the mesh's 3D landmarks, and the face axes in
    the mesh's own (crop-view) coordinates, for measuring eye cues on the face itself; None when the
    landmarks are degenerate."""
    axes = face_axes(mesh_px)
    if axes is None:
        return None
    eyes = np.asarray(mesh_px, dtype=np.float64)[list(EYE_OUTER), :2].mean(axis=0)
    return sight_rotation(eyes, image_size) @ axes, axes
