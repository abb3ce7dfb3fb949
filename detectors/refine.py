"""Per-person refinement shared by every backend: head box, gaze (face mesh or keypoints), hand boxes,
hand shape (pointing / open palm) and the pointing ray.

A backend finds people (boxes + COCO-17 keypoints); ``PersonRefiner.refine`` looks closer at each one
with MediaPipe face mesh and hands on small crops, so both backends produce the same observations.
Work that cannot change the result is skipped: the hand model runs only on arms raised away from the
body (a hand by the side cannot be pointing), face mesh only where a face can be seen.
"""
from __future__ import annotations

import numpy as np

from detectors.gaze import GazeEstimate, gaze_from_face_mesh, gaze_from_keypoints
from detectors.hands import arm_raised, index_follows_forearm, index_ray, open_palm_score, pointing_score
from detectors.keypoints import ARMS, hand_boxes_from_arm, head_box, visible
from detectors.mediapipe_models import Face, MediaPipeModels, head_carries_gaze
from detectors.mirror import flipped_boxes, flipped_gaze, flipped_hand, merged_gaze_reads, merged_hand_reads
from detectors.observation import (GAZE_SOURCE_FACE_MESH, GAZE_SOURCE_KEYPOINTS, GAZE_SOURCE_NONE, LEFT_EYE, LEFT_HIP,
                                   NOSE, RIGHT_EYE, RIGHT_HIP, FrameObservations)
from detectors.config import GazeConfig, PointingConfig

KEYPOINT_MIN_SCORE = 0.5
MESH_MIN_HEAD_PIXELS = 24  # smaller heads give unstable landmarks; keypoint gaze is as good there
FACE_SCORE_WITHOUT_DETECTION = 0.6  # confidence prior for a mesh found without a face detection
ARM_RAY_CONF_FACTOR = 0.6  # elbow -> wrist rays are coarser than index-finger rays
# two face-mesh reads whose eye midpoints lie closer than this share of the narrower head box are one face
SAME_FACE_SHARE = 0.25


def _square_crop(centre: np.ndarray, side: float, width: int, height: int) -> tuple[int, int, int, int]:
    half = side / 2
    x0, y0 = int(max(0, round(centre[0] - half))), int(max(0, round(centre[1] - half)))
    x1, y1 = int(min(width, round(centre[0] + half))), int(min(height, round(centre[1] + half)))
    return x0, y0, x1, y1


def _keypoint_face_distance(keypoints: np.ndarray, eyes: np.ndarray) -> float:
    """Pixels from a person's own face keypoints (the midpoint of both eyes, else the nose, else any eye) to
    a face read's eye midpoint ``eyes``; infinite when the pose model saw none of them."""
    seen = visible(keypoints, KEYPOINT_MIN_SCORE)
    if seen[LEFT_EYE] and seen[RIGHT_EYE]:
        own = (keypoints[LEFT_EYE, :2] + keypoints[RIGHT_EYE, :2]) / 2
    else:
        ids = [k for k in (NOSE, LEFT_EYE, RIGHT_EYE) if seen[k]]
        if not ids:
            return float("inf")
        own = keypoints[ids[0], :2]
    return float(np.linalg.norm(own - eyes))


def own_face(meshes: list[np.ndarray], head: np.ndarray) -> np.ndarray | None:
    """Of face meshes (landmarks, pixels), the one whose centre lies inside the ``head`` box (xyxy, the same
    pixels) nearest the box's centre; None when no centre lies inside it."""
    centre = (head[:2] + head[2:]) / 2
    best, best_distance = None, np.inf
    for mesh in meshes:
        mesh_centre = mesh[:468, :2].mean(axis=0)
        inside = head[0] <= mesh_centre[0] <= head[2] and head[1] <= mesh_centre[1] <= head[3]
        distance = float(np.hypot(*(mesh_centre - centre)))
        if inside and distance < best_distance:
            best, best_distance = mesh, distance
    return best


class PersonRefiner:
    """Adds gaze, hands and pointing to ``FrameObservations`` (normalised coordinates in and out)."""

    def __init__(
        self, gaze: GazeConfig, pointing: PointingConfig, *, hand_model: bool = True,
        models: MediaPipeModels | None = None, mirror_average: bool = False,
    ) -> None:
        self.gaze = gaze
        self.mirror_average = mirror_average  # read each crop mirrored too and average (detectors/mirror.py)
        self.pointing = pointing
        self.hand_model = hand_model  # run the hand landmark model on raised arms
        self.models = models or MediaPipeModels()

    def refine(
        self, frame: np.ndarray, observations: FrameObservations, faces: list[Face | None] | None = None
    ) -> FrameObservations:
        """Fill head_xyxy (when missing), gaze_*, hand_*, point_* of every person in ``observations``.

        ``frame`` is the RGB image the observations were made on; ``faces`` optionally gives, per
        person, the face detection they are anchored on (its score weights gaze confidence)."""
        n = len(observations)
        faces = faces if faces is not None else [None] * n
        if len(faces) != n:
            raise ValueError(f"refine: got {len(faces)} faces for {n} people")
        for i in range(n):
            self.refine_person(frame, observations, i, faces[i])
        self.settle_shared_faces(frame, observations)
        return observations

    def refine_person(self, frame: np.ndarray, observations: FrameObservations, i: int, face: Face | None) -> None:
        """Refine row ``i`` only; rows are independent, so different rows may be refined at the same time
        by refiners holding different models."""
        height, width = frame.shape[:2]
        keypoints_px = self._keypoints_px(observations, i, width, height)
        self._refine_head_and_gaze(frame, observations, i, keypoints_px, face)
        self._refine_hands(frame, observations, i, keypoints_px)

    # --- gaze ---------------------------------------------------------------------------------

    def settle_shared_faces(self, frame: np.ndarray, observations: FrameObservations) -> None:
        """One face, one person: where two people's face-mesh reads are the same face (their eye midpoints
        within ``SAME_FACE_SHARE`` of the narrower head apart: heads overlapping in a hug, a face detection
        straddling two heads gave one of them a head box over the other's face), the face stays with the one
        whose own pose keypoints (eyes, else nose) lie nearest it. The other is read again as if no face were
        seen: head box from its keypoints, gaze from keypoints (mmaction2_hug_lab mirrored, 2.5 s: the man in
        profile was given the frontal man's face and so his look). Call after every row is refined."""
        height, width = frame.shape[:2]
        scale = np.array([width, height], dtype=np.float64)
        mesh_rows = np.flatnonzero(observations.gaze_source == GAZE_SOURCE_FACE_MESH)
        for a_pos, a in enumerate(mesh_rows):
            for b in mesh_rows[a_pos + 1:]:
                if not np.all(observations.gaze_source[[a, b]] == GAZE_SOURCE_FACE_MESH):
                    continue  # one of them already lost the face to an earlier pair
                heads = observations.head_xyxy[[a, b]].astype(np.float64)
                narrower = float(np.min(heads[:, 2] - heads[:, 0])) * width
                apart = float(np.linalg.norm((observations.gaze_origin[a] - observations.gaze_origin[b]) * scale))
                if not apart <= SAME_FACE_SHARE * narrower:
                    continue
                eyes = observations.gaze_origin[a].astype(np.float64) * scale
                keypoints = [self._keypoints_px(observations, k, width, height) for k in (a, b)]
                lost = int(_keypoint_face_distance(keypoints[0], eyes) <= _keypoint_face_distance(keypoints[1], eyes))
                loser = (a, b)[lost]
                observations.head_xyxy[loser] = np.nan
                observations.gaze_origin[loser] = np.nan
                observations.gaze_dir[loser] = np.nan
                observations.gaze_source[loser] = GAZE_SOURCE_NONE
                observations.gaze_conf[loser] = 0.0
                observations.gaze_eye_cues[loser] = 0.0
                observations.gaze_eye_dir[loser] = np.nan
                observations.face_seen[loser] = False
                self._refine_head_and_gaze(frame, observations, loser, keypoints[lost], None, face_mesh=False)

    @staticmethod
    def _keypoints_px(observations: FrameObservations, i: int, width: int, height: int) -> np.ndarray:
        keypoints = observations.keypoints[i].astype(np.float64).copy()
        keypoints[:, :2] *= np.array([width, height], dtype=np.float64)
        return keypoints

    def _refine_head_and_gaze(
        self, frame: np.ndarray, obs: FrameObservations, i: int, keypoints: np.ndarray, face: Face | None,
        face_mesh: bool = True,
    ) -> None:
        height, width = frame.shape[:2]
        scale4 = np.array([width, height, width, height], dtype=np.float64)
        head = obs.head_xyxy[i].astype(np.float64) * scale4
        if not np.isfinite(head).all():
            from_keypoints = head_box(keypoints, KEYPOINT_MIN_SCORE)
            if from_keypoints is not None:
                head = from_keypoints
                obs.head_xyxy[i] = np.clip(head / scale4, 0.0, 1.0)
        seen = visible(keypoints, KEYPOINT_MIN_SCORE)
        face_visible = face is not None or (seen[NOSE] and seen[LEFT_EYE] and seen[RIGHT_EYE])
        if (face_mesh and np.isfinite(head).all() and face_visible
                and min(head[2] - head[0], head[3] - head[1]) >= MESH_MIN_HEAD_PIXELS):
            estimate, obs.face_seen[i] = self._mesh_gaze(frame, head, face)
            if estimate is not None:
                obs.gaze_origin[i] = estimate.origin / [width, height]
                obs.gaze_dir[i] = estimate.direction
                obs.gaze_source[i] = GAZE_SOURCE_FACE_MESH
                obs.gaze_conf[i] = estimate.confidence
                obs.gaze_eye_cues[i] = estimate.eye_cues
                if estimate.eye_direction is not None:
                    obs.gaze_eye_dir[i] = estimate.eye_direction
                return
        # A head too small to show its face (a walker far off, seen from above) carries no gaze: its few face
        # keypoints cannot say whom it looks at, nor can a person checking the frame.
        if not (np.isfinite(head).all() and head_carries_gaze(head[2] - head[0], width, height)):
            return
        # No usable face: which way the head and shoulders face (pixels keep the geometry isotropic).
        origin, direction, confidence = gaze_from_keypoints(keypoints[None])
        if confidence[0] > 0:
            obs.gaze_origin[i] = origin[0] / [width, height]
            obs.gaze_dir[i] = direction[0]
            obs.gaze_source[i] = GAZE_SOURCE_KEYPOINTS
            obs.gaze_conf[i] = confidence[0]

    def _mesh_gaze(self, frame: np.ndarray, head: np.ndarray, face: Face | None) -> tuple[GazeEstimate | None, bool]:
        """Face-mesh gaze of the face in ``head`` (pixels). With ``mirror_average`` the crop is also read
        mirrored and the two reads are averaged (the mirrored one flipped back): the mesh's errors are not
        mirror-symmetric, so a mirrored clip reads the same look 10-30 degrees apart; the average is the same
        on both and steadier than either read. Returns the estimate (None when the mesh finds no face; with
        ``mirror_average``, when either read finds none: detectors.mirror.merged_gaze_reads) and whether any
        read found the face."""
        height, width = frame.shape[:2]
        centre = (head[:2] + head[2:]) / 2
        side = 1.6 * max(head[2] - head[0], head[3] - head[1])
        x0, y0, x1, y1 = _square_crop(centre, side, width, height)
        if x1 - x0 < MESH_MIN_HEAD_PIXELS or y1 - y0 < MESH_MIN_HEAD_PIXELS:
            return None, False
        crop = frame[y0:y1, x0:x1]
        score = face.score if face is not None else FACE_SCORE_WITHOUT_DETECTION
        direct = self._crop_gaze(crop, x0, y0, (width, height), head, score)
        if not self.mirror_average:
            return direct, direct is not None
        # the mirrored crop sits in the mirrored frame at columns width - x1 .. width - x0
        mirrored = flipped_gaze(self._crop_gaze(crop[:, ::-1], width - x1, y0, (width, height),
                                                flipped_boxes(head[None], width)[0], score), width)
        return merged_gaze_reads(direct, mirrored), direct is not None or mirrored is not None

    def _crop_gaze(self, crop: np.ndarray, x0: int, y0: int, image_size: tuple[int, int], head: np.ndarray,
                   score: float) -> GazeEstimate | None:
        """Gaze from the face mesh of ``crop``, whose top-left corner is (x0, y0) of an image of ``image_size``:
        of the faces the mesh finds there, the one centred on ``head`` (nearest its centre); a neighbour's
        face reaching into the crop is never read as this person's. None when no face is on the head."""
        mesh = own_face(self.models.face_meshes(crop), head - [x0, y0, x0, y0])
        if mesh is None:
            return None
        mesh[:, 0] += x0
        mesh[:, 1] += y0
        g = self.gaze
        return gaze_from_face_mesh(
            mesh, image_size, score, g.iris_weight, g.head_pitch_bias_deg, g.head_pose, g.eye_open_level,
            (g.eye_cue_min_pixels, g.eye_cue_full_pixels), g.eye_view_power, (g.smile_mouth_width, g.lower_lid_rest),
        )

    # --- hands and pointing -------------------------------------------------------------------

    def _refine_hands(self, frame: np.ndarray, obs: FrameObservations, i: int, keypoints: np.ndarray) -> None:
        height, width = frame.shape[:2]
        scale4 = np.array([width, height, width, height], dtype=np.float64)
        hand_boxes = obs.hand_xyxy[i].astype(np.float64) * scale4
        from_arm = hand_boxes_from_arm(keypoints, KEYPOINT_MIN_SCORE)
        missing = ~np.isfinite(hand_boxes).all(axis=1)
        hand_boxes[missing] = from_arm[missing]

        pointing_cfg = self.pointing
        best_conf, best_ray = 0.0, None
        for side, (shoulder, elbow, wrist) in enumerate(ARMS):
            hip = LEFT_HIP if side == 0 else RIGHT_HIP
            raised = arm_raised(
                keypoints[shoulder, :2],
                keypoints[elbow, :2],
                keypoints[wrist, :2],
                keypoints[hip, :2] if visible(keypoints, KEYPOINT_MIN_SCORE)[hip] else None,
                pointing_cfg.min_arm_extension,
                pointing_cfg.min_arm_elevation_deg,
                pointing_cfg.min_forearm_ratio,
            )[0]
            if not raised or not np.isfinite(hand_boxes[side]).all():
                continue
            hand = self._hand_landmarks(frame, hand_boxes[side]) if self.hand_model else None
            if hand is None:
                continue
            landmarks, hand_score = hand
            hand_boxes[side] = np.concatenate([landmarks[:, :2].min(axis=0), landmarks[:, :2].max(axis=0)])
            score = float(pointing_score(landmarks[None], middle_weight=pointing_cfg.raised_arm_middle_weight)[0])
            obs.hand_pointing[i, side] = score
            obs.hand_open[i, side] = float(open_palm_score(landmarks[None])[0])
            if score < pointing_cfg.score_threshold:
                continue
            origin, direction = index_ray(landmarks[None])
            conf = score * hand_score
            forearm = keypoints[wrist, :2] - keypoints[elbow, :2]
            if np.isfinite(direction).all() and not index_follows_forearm(direction[0], forearm):
                continue  # the "index" points back along the arm (a hand folded on the body): not pointing
            if not np.isfinite(direction).all():
                # hand resolved as pointing but the finger is foreshortened: fall back to the forearm
                norm = np.linalg.norm(forearm)
                if norm <= 0:
                    continue
                origin, direction = keypoints[wrist, :2][None], (forearm / norm)[None]
                conf *= ARM_RAY_CONF_FACTOR
            if conf > best_conf:
                best_conf, best_ray = conf, (origin[0], direction[0])
        obs.hand_xyxy[i] = np.clip(hand_boxes / scale4, 0.0, 1.0)
        if best_ray is not None:
            origin, direction = best_ray
            # Directions stay isotropic (pixel geometry, like gaze_dir); only positions are normalised.
            obs.point_origin[i] = origin / [width, height]
            obs.point_dir[i] = direction
            obs.point_conf[i] = best_conf

    def _hand_landmarks(self, frame: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, float] | None:
        height, width = frame.shape[:2]
        centre = (box[:2] + box[2:]) / 2
        side = max(2.2 * max(box[2] - box[0], box[3] - box[1]), 48.0)
        x0, y0, x1, y1 = _square_crop(centre, side, width, height)
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        crop = frame[y0:y1, x0:x1]
        found = self.models.hand(crop)
        if self.mirror_average:
            found = merged_hand_reads(found, flipped_hand(self.models.hand(crop[:, ::-1]), x1 - x0))
        if found is None:
            return None
        landmarks, score = found
        landmarks[:, 0] += x0
        landmarks[:, 1] += y0
        return landmarks, score
