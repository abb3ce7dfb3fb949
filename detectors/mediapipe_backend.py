"""The offline default backend: people from MediaPipe faces and poses, no downloads, CPU only.

Per frame:
1. full-range face detection finds frontal and profile faces;
2. for each face, pose on an upper-body crop below it (other faces greyed out so the pose detector
   cannot drift to a neighbour) gives COCO-17 keypoints and the person box;
3. people the face detector missed (seen from behind, faces too small or blurred) are searched by
   running pose on the whole frame with the people already found greyed out, a few times;
4. the shared refinement (detectors/refine.py) adds face mesh gaze, hands and pointing.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from detectors.base import check_frames
from detectors.keypoints import (
    MEDIAPIPE_HAND_POINTS,
    box_iou,
    coco_from_mediapipe,
    hand_boxes_from_points,
    head_box,
    person_box,
    visible,
)
from detectors.mediapipe_models import MIN_FACE_SHARE, Face, MediaPipeModels
from detectors.person_pool import PersonPool
from detectors.observation import LEFT_HIP, LEFT_SHOULDER, RIGHT_HIP, RIGHT_SHOULDER, FrameObservations
from detectors.refine import PersonRefiner
from detectors.config import DetectorConfig, GazeConfig, PointingConfig

GREY = 127
KEYPOINT_MIN_SCORE = 0.5  # MediaPipe visibility above which a landmark counts as seen


@dataclass
class PersonCandidate:
    """One person found in a frame, in pixels, before refinement."""

    box: np.ndarray  # (4,)
    confidence: float
    keypoints: np.ndarray  # (17, 3) x, y, score; NaN x/y when unknown
    head: np.ndarray | None  # (4,) or None
    hand_boxes: np.ndarray  # (2, 4), NaN rows when unknown
    face: Face | None  # the detected face this person is anchored on, if any


def _empty_keypoints() -> np.ndarray:
    keypoints = np.full((17, 3), np.nan)
    keypoints[:, 2] = 0.0
    return keypoints


def _clip_box(box: np.ndarray, width: int, height: int) -> np.ndarray:
    return np.clip(box, [0, 0, 0, 0], [width, height, width, height]).astype(np.float64)


def _intersection(a: np.ndarray, b: np.ndarray) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _upright_body(keypoints: np.ndarray, seen: np.ndarray) -> bool:
    """Human proportions, to reject poses hallucinated on clutter: the head above the shoulders and,
    when the hips are seen, a torso at least ~0.7 shoulder widths long."""
    shoulders = keypoints[[LEFT_SHOULDER, RIGHT_SHOULDER], :2]
    shoulder_width = float(np.linalg.norm(shoulders[0] - shoulders[1]))
    head_y = float(keypoints[[k for k in range(5) if seen[k]], 1].mean())
    if shoulder_width <= 0 or head_y >= shoulders[:, 1].min():
        return False
    if seen[LEFT_HIP] and seen[RIGHT_HIP]:
        torso = float(keypoints[[LEFT_HIP, RIGHT_HIP], 1].mean() - shoulders[:, 1].mean())
        return torso >= 0.7 * shoulder_width
    return True


def _grey_out(image: np.ndarray, boxes: list[np.ndarray]) -> np.ndarray:
    """Copy of ``image`` with ``boxes`` (pixels, xyxy) filled with mid grey."""
    masked = image.copy()
    height, width = image.shape[:2]
    for box in boxes:
        x1, y1, x2, y2 = _clip_box(box, width, height).round().astype(int)
        masked[y1:y2, x1:x2] = GREY
    return masked


class MediaPipeDetector:
    """``PersonDetector`` built from MediaPipe face detection, pose, face mesh and hands."""

    name = "mediapipe"

    def __init__(
        self, config: DetectorConfig, gaze: GazeConfig, pointing: PointingConfig, *, fps: float, threads: int,
        models: MediaPipeModels | None = None,
    ) -> None:
        self.config = config
        # each person's crops are handled by one of the threads' model sets
        self.pool = PersonPool(threads, lambda: MediaPipeModels(face_min_conf=0.3, pose_min_conf=0.4), first=models)
        self.models = self.pool.model_sets[0]
        self.model_sets = self.pool.model_sets
        self.refiners = [PersonRefiner(gaze, pointing, hand_model=config.hand_model, models=m,
                                      mirror_average=config.mirror_average) for m in self.model_sets]
        self.max_search_passes = config.mediapipe_search_passes
        # frames between whole-frame searches while a search finds nobody (always the next frame otherwise)
        self.search_every = max(1, round(fps * config.search_interval_seconds))

    def close(self) -> None:
        self.pool.close()

    def detect(self, frames: list[np.ndarray]) -> list[FrameObservations]:
        """People in each RGB frame (see ``PersonDetector.detect``). Frames are consecutive samples of one
        clip: the costly search for people without a visible face runs on the batch's first frame, when
        faces explain fewer people than were seen in any of the last ``search_every`` frames, and
        otherwise every ``search_every`` frames (to find newcomers seen from behind)."""
        check_frames(frames)
        observations = []
        recent_counts: deque[int] = deque(maxlen=self.search_every)
        for index, frame in enumerate(frames):
            periodic = index % self.search_every == 0
            candidates = self.find_people(frame, search=periodic, search_below=max(recent_counts, default=0))
            recent_counts.append(len(candidates))
            observations.append(self._observe(frame, candidates))
        return observations

    def _observe(self, frame: np.ndarray, candidates: list[PersonCandidate]) -> FrameObservations:
        observations = self._to_observations(candidates, frame.shape[1], frame.shape[0])
        self._per_person(
            lambda i, slot: self.refiners[slot].refine_person(frame, observations, i, candidates[i].face),
            range(len(candidates)),
        )
        self.refiners[0].settle_shared_faces(frame, observations)
        return observations

    def _per_person(self, work: Callable[[Any, int], Any], items: Iterable[Any]) -> list[Any]:
        return self.pool.map(work, items)

    # --- person search ------------------------------------------------------------------------

    def find_people(self, frame: np.ndarray, search: bool = True, search_below: int = 0) -> list[PersonCandidate]:
        """Face-anchored people first, then people found by pose on the unexplained rest of the frame
        (when ``search``, or when faces explain fewer than ``search_below`` people)."""
        faces = [f for f in self.models.faces(frame) if self._plausible_face(f, frame)]
        people: list[PersonCandidate] = self._per_person(
            lambda face, slot: self._person_from_face(
                frame, face, [f.box for f in faces if f is not face], self.model_sets[slot]
            ),
            faces,
        )
        search = search or len(people) < search_below
        for _ in range(self.max_search_passes if search else 0):
            found = self._person_from_rest(frame, people)
            if found is None:
                break
            people.append(found)
        return [p for p in people if p.confidence >= self.config.person_conf]

    @staticmethod
    def _plausible_face(face: Face, frame: np.ndarray) -> bool:
        width = face.box[2] - face.box[0]
        return width >= MIN_FACE_SHARE * max(frame.shape[:2])  # tiny faces cannot carry pose, gaze or hands

    def _person_from_face(
        self, frame: np.ndarray, face: Face, other_faces: list[np.ndarray], models: MediaPipeModels
    ) -> PersonCandidate:
        height, width = frame.shape[:2]
        fx1, fy1, fx2, fy2 = face.box
        face_w, face_h = fx2 - fx1, fy2 - fy1
        centre_x = (fx1 + fx2) / 2
        # An upper-body crop: a person is ~3 face widths wide with arms, torso ~3 face heights long.
        crop = _clip_box(
            np.array([centre_x - 2.3 * face_w, fy1 - 0.8 * face_h, centre_x + 2.3 * face_w, fy1 + 7.0 * face_h]),
            width,
            height,
        ).round().astype(int)
        x0, y0, x1, y1 = crop
        patch = _grey_out(frame[y0:y1, x0:x1], [b - [x0, y0, x0, y0] for b in other_faces])
        landmarks = models.pose(patch) if min(patch.shape[:2]) >= 16 else None
        keypoints = _empty_keypoints()
        hand_boxes = np.full((2, 4), np.nan)
        if landmarks is not None:
            landmarks[:, 0] += x0
            landmarks[:, 1] += y0
            candidate_keypoints = coco_from_mediapipe(landmarks)
            if self._pose_belongs_to_face(candidate_keypoints, face):
                keypoints = candidate_keypoints
                hand_boxes = self._hand_boxes(landmarks)
        box = person_box(keypoints, KEYPOINT_MIN_SCORE)
        if box is None:  # no body: the face alone says where the person is (head and shoulders)
            box = np.array([centre_x - 1.5 * face_w, fy1 - 0.3 * face_h, centre_x + 1.5 * face_w, fy2 + 2.5 * face_h])
        box = np.minimum(np.maximum(box, [0, 0, 0, 0]), [width, height, width, height])
        box[:2] = np.minimum(box[:2], face.box[:2])
        box[2:] = np.maximum(box[2:], face.box[2:])
        return PersonCandidate(
            box=_clip_box(box, width, height),
            confidence=face.score,
            keypoints=keypoints,
            head=face.head_box(),
            hand_boxes=hand_boxes,
            face=face,
        )

    @staticmethod
    def _pose_belongs_to_face(keypoints: np.ndarray, face: Face) -> bool:
        seen = visible(keypoints, KEYPOINT_MIN_SCORE)
        head = [k for k in range(5) if seen[k]]
        if not head:
            return bool(seen[[LEFT_SHOULDER, RIGHT_SHOULDER]].any())
        x1, y1, x2, y2 = face.box
        w, h = x2 - x1, y2 - y1
        cx, cy = keypoints[head, :2].mean(axis=0)
        return x1 - 0.5 * w <= cx <= x2 + 0.5 * w and y1 - 0.5 * h <= cy <= y2 + 0.5 * h

    @staticmethod
    def _hand_boxes(landmarks: np.ndarray) -> np.ndarray:
        points = landmarks[MEDIAPIPE_HAND_POINTS][..., :2]
        scores = landmarks[MEDIAPIPE_HAND_POINTS][..., 3]
        return hand_boxes_from_points(points, scores, KEYPOINT_MIN_SCORE)

    def _person_from_rest(self, frame: np.ndarray, people: list[PersonCandidate]) -> PersonCandidate | None:
        """Pose on the frame with everyone found so far greyed out (their head and torso, not their
        whole box, so a person partly behind them stays visible)."""
        height, width = frame.shape[:2]
        masked = _grey_out(frame, [self._core_region(p) for p in people]) if people else frame
        landmarks = self.models.pose(masked)
        if landmarks is None:
            return None
        keypoints = coco_from_mediapipe(landmarks)
        seen = visible(keypoints, KEYPOINT_MIN_SCORE)
        # A person needs both shoulders and a head (nose, eyes or ears): stray points on clothing,
        # furniture or someone's lap are not one.
        if seen[[LEFT_SHOULDER, RIGHT_SHOULDER]].sum() < 2 or seen[:5].sum() < 2 or seen.sum() < 6:
            return None
        if not _upright_body(keypoints, seen):
            return None
        box = person_box(keypoints, KEYPOINT_MIN_SCORE)
        head = head_box(keypoints, KEYPOINT_MIN_SCORE)
        if box is None:
            return None
        box = _clip_box(box, width, height)
        area = max((box[2] - box[0]) * (box[3] - box[1]), 1.0)
        for person in people:
            if box_iou(box, person.box) > 0.5 or _intersection(box, person.box) / area > 0.6:
                return None  # mostly inside someone already found: part of them, not a new person
            if head is not None and person.head is not None and box_iou(head, person.head) > 0.2:
                return None
        confidence = float(np.mean(keypoints[seen, 2])) * min(1.0, seen.sum() / 10)
        return PersonCandidate(
            box=box,
            confidence=confidence,
            keypoints=keypoints,
            head=head,
            hand_boxes=self._hand_boxes(landmarks),
            face=None,
        )

    @staticmethod
    def _core_region(person: PersonCandidate) -> np.ndarray:
        seen = visible(person.keypoints, KEYPOINT_MIN_SCORE)
        core = [k for k in range(13) if seen[k] and k not in (7, 8, 9, 10)]  # head, shoulders, hips
        boxes = [person.head] if person.head is not None else []
        if len(core) >= 3:
            points = person.keypoints[core, :2]
            boxes.append(np.concatenate([points.min(axis=0), points.max(axis=0)]))
        if not boxes:
            return person.box
        stacked = np.array(boxes)
        return np.concatenate([stacked[:, :2].min(axis=0), stacked[:, 2:].max(axis=0)])

    # --- adapter ------------------------------------------------------------------------------

    @staticmethod
    def _to_observations(people: list[PersonCandidate], width: int, height: int) -> FrameObservations:
        if not people:
            return FrameObservations.empty()
        scale4 = np.array([width, height, width, height], dtype=np.float64)
        keypoints = np.stack([p.keypoints for p in people]).copy()
        keypoints[..., 0] /= width
        keypoints[..., 1] /= height
        missing = ~np.isfinite(keypoints[..., :2]).all(axis=-1)
        keypoints[missing, 2] = 0.0
        heads = np.stack([p.head if p.head is not None else np.full(4, np.nan) for p in people]) / scale4
        return FrameObservations(
            xyxy=np.clip(np.stack([p.box for p in people]) / scale4, 0.0, 1.0),
            confidence=np.array([p.confidence for p in people]),
            keypoints=keypoints,
            head_xyxy=np.clip(heads, 0.0, 1.0),
            hand_xyxy=np.clip(np.stack([p.hand_boxes for p in people]) / scale4, 0.0, 1.0),
        )
