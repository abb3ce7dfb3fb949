"""One face, one person (detectors.refine.PersonRefiner.settle_shared_faces): where two people's face-mesh reads are
the same face, the face stays with the person whose own pose keypoints lie on it, and the other is read from
keypoints. Synthetic observations with known answers; the real case (mmaction2_hug_lab mirrored, where the man in
profile was given the frontal man's face) is checked in tests/test_camera_invariance.py."""
from __future__ import annotations

import numpy as np

from detectors.config import GazeConfig, PointingConfig
from detectors.observation import (GAZE_SOURCE_FACE_MESH, GAZE_SOURCE_KEYPOINTS, LEFT_EAR, LEFT_EYE, LEFT_SHOULDER,
                                   NOSE, RIGHT_EAR, RIGHT_EYE, RIGHT_SHOULDER, FrameObservations)
from detectors.refine import PersonRefiner

WIDTH, HEIGHT = 400, 300


def _frontal(cx: float, cy: float) -> np.ndarray:
    """COCO-17 keypoints (normalised) of a frontal head whose eyes' midpoint is at (cx, cy) pixels."""
    keypoints = np.zeros((17, 3), np.float32)
    keypoints[:, :2] = np.nan
    for joint, (dx, dy) in {LEFT_EYE: (8, 0), RIGHT_EYE: (-8, 0), NOSE: (0, 8), LEFT_EAR: (18, 4),
                            RIGHT_EAR: (-18, 4), LEFT_SHOULDER: (40, 60), RIGHT_SHOULDER: (-40, 60)}.items():
        keypoints[joint] = ((cx + dx) / WIDTH, (cy + dy) / HEIGHT, 0.9)
    return keypoints


def _profile_facing_left(cx: float, cy: float) -> np.ndarray:
    """A head in profile, facing the image left: nose and the near (left) eye and ear seen."""
    keypoints = np.zeros((17, 3), np.float32)
    keypoints[:, :2] = np.nan
    for joint, (dx, dy) in {NOSE: (-12, 6), LEFT_EYE: (-6, 0), LEFT_EAR: (12, 4), LEFT_SHOULDER: (30, 60),
                            RIGHT_SHOULDER: (-20, 60)}.items():
        keypoints[joint] = ((cx + dx) / WIDTH, (cy + dy) / HEIGHT, 0.9)
    return keypoints


def _two_mesh_reads(origins_px) -> FrameObservations:
    """A frontal person at (120, 100) and a profile one at (160, 90), both with a face-mesh read at ``origins_px``."""
    keypoints = np.stack([_frontal(120, 100), _profile_facing_left(160, 90)])
    obs = FrameObservations(xyxy=[[0.2, 0.2, 0.4, 1.0], [0.3, 0.2, 0.5, 1.0]], confidence=[0.9, 0.9],
                            keypoints=keypoints)
    obs.head_xyxy[:] = [[90 / WIDTH, 70 / HEIGHT, 150 / WIDTH, 140 / HEIGHT]] * 2  # one face box given to both
    obs.gaze_origin[:] = np.asarray(origins_px, np.float32) / [WIDTH, HEIGHT]
    obs.gaze_dir[:] = [0.3, 0.1, -0.95]
    obs.gaze_source[:] = GAZE_SOURCE_FACE_MESH
    obs.gaze_conf[:] = 0.6
    obs.gaze_eye_cues[:] = 1.0
    obs.face_seen[:] = True
    return obs


def _settle(obs: FrameObservations) -> FrameObservations:
    PersonRefiner(GazeConfig(), PointingConfig()).settle_shared_faces(np.zeros((HEIGHT, WIDTH, 3), np.uint8), obs)
    return obs


def test_a_face_read_for_two_people_stays_with_the_one_whose_keypoints_lie_on_it():
    obs = _settle(_two_mesh_reads([[121, 101], [121, 101]]))
    assert obs.gaze_source[0] == GAZE_SOURCE_FACE_MESH
    np.testing.assert_allclose(obs.gaze_dir[0], [0.3, 0.1, -0.95], atol=1e-6)
    # the profile person is read from its own keypoints: facing the image left, its head box its own
    assert obs.gaze_source[1] == GAZE_SOURCE_KEYPOINTS
    assert obs.gaze_dir[1][0] < -0.5
    assert not obs.face_seen[1]
    head = obs.head_xyxy[1] * [WIDTH, HEIGHT, WIDTH, HEIGHT]
    assert head[0] < 160 < head[2] and head[1] < 90 < head[3]
    assert not (head[0] < 120 - 8 and head[2] > 120 + 8 and head[1] < 100 < head[3])  # not over the other's eyes


def test_the_owner_wins_whichever_row_comes_first():
    obs = _two_mesh_reads([[121, 101], [121, 101]])
    swapped = FrameObservations.merge([obs[np.array([1])], obs[np.array([0])]])
    _settle(swapped)
    assert list(swapped.gaze_source) == [GAZE_SOURCE_KEYPOINTS, GAZE_SOURCE_FACE_MESH]


def test_two_faces_side_by_side_keep_their_own_reads():
    obs = _settle(_two_mesh_reads([[120, 100], [150, 90]]))  # 30 px apart on 60 px heads: two faces
    assert list(obs.gaze_source) == [GAZE_SOURCE_FACE_MESH, GAZE_SOURCE_FACE_MESH]
    assert np.all(obs.face_seen)
