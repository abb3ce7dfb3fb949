"""The MediaPipe solutions socialtrace uses, created once and adapted to plain numpy arrays.

mediapipe==0.10.14 ships these models inside its wheel (face detection full range, pose landmark
"full", face mesh with iris, hands lite/full), so nothing is downloaded. Pose must use
model_complexity=1: the lite and heavy pose models are not in the wheel and would be fetched.
Every call takes an RGB uint8 image and returns pixel coordinates of that image.
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np

os.environ.setdefault("GLOG_minloglevel", "2")  # MediaPipe's C++ logs are noise for users

N_POSE_LANDMARKS = 33
N_FACE_MESH_LANDMARKS = 478
N_HAND_LANDMARKS = 21
# A head's crop (1.6 head sizes wide) often holds a neighbour's face too, and the mesh's surest face can be
# the neighbour's (a friend's frontal face beside a bowed head): the mesh reads this many faces, and the
# caller keeps the one on its own head (detectors.refine)
MESH_MAX_FACES = 3


MIN_FACE_SHARE = 0.015  # faces narrower than this share of the frame's longest side cannot carry gaze
HEAD_WIDTH_PER_FACE_WIDTH = 1.2  # Face.head_box widens the brows-to-chin box by 0.1 of its width each side


def head_carries_gaze(head_width: float, frame_width: int, frame_height: int) -> bool:
    """Is a head this wide (pixels) large enough for anyone to tell where it looks: its face at least
    MIN_FACE_SHARE of the frame's longest side? A share, not pixels, so a resized copy of a clip decides
    alike."""
    return head_width >= HEAD_WIDTH_PER_FACE_WIDTH * MIN_FACE_SHARE * max(frame_width, frame_height)

# A MediaPipe solution is never garbage collected (its graph's output callback holds it) and its graph
# runs native threads: one left open until the interpreter tears its libraries down can crash the process
# after its work is done. Owners close their models; whatever is still open at exit is closed first.
_OPEN_SOLUTIONS: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _close_open_solutions() -> None:
    for solution in list(_OPEN_SOLUTIONS):
        solution.close()
    _OPEN_SOLUTIONS.clear()


@dataclass(frozen=True)
class Face:
    """A face found by the full-range face detector: box (x1, y1, x2, y2) pixels, score, and its six
    keypoints (right eye, left eye, nose tip, mouth, right ear tragion, left ear tragion) in pixels."""

    box: np.ndarray
    score: float
    keypoints: np.ndarray

    def head_box(self) -> np.ndarray:
        """The head around this face (pixels): the detector's box spans brows to chin; a head box also
        holds the forehead and hair."""
        x1, y1, x2, y2 = self.box
        w, h = x2 - x1, y2 - y1
        return np.array([x1 - 0.1 * w, y1 - 0.35 * h, x2 + 0.1 * w, y2 + 0.05 * h])


class MediaPipeModels:
    """Holds one instance of each MediaPipe solution; models load lazily on first use.

    Instances are not thread-safe (MediaPipe graphs are stateful): use one per worker.
    """

    def __init__(self, face_min_conf: float = 0.3, pose_min_conf: float = 0.4, hand_min_conf: float = 0.4) -> None:
        self.face_min_conf = face_min_conf
        self.pose_min_conf = pose_min_conf
        self.hand_min_conf = hand_min_conf
        self._face_detector = None
        self._pose = None
        self._face_mesh = None
        self._hands = None
        self._lock = threading.Lock()

    @staticmethod
    def _solutions():
        import mediapipe as mp  # imported here: importing mediapipe costs ~0.5 s and only this backend needs it

        return mp.solutions

    def _get(self, attribute: str):
        model = getattr(self, attribute)
        if model is None:
            with self._lock:
                model = getattr(self, attribute)
                if model is None:
                    model = self._create(attribute)
                    _OPEN_SOLUTIONS.add(model)
                    setattr(self, attribute, model)
        return model

    def _create(self, attribute: str):
        solutions = self._solutions()
        if attribute == "_face_detector":
            return solutions.face_detection.FaceDetection(model_selection=1, min_detection_confidence=self.face_min_conf)
        if attribute == "_pose":
            return solutions.pose.Pose(
                static_image_mode=True, model_complexity=1, min_detection_confidence=self.pose_min_conf
            )
        if attribute == "_face_mesh":
            return solutions.face_mesh.FaceMesh(
                static_image_mode=True, max_num_faces=MESH_MAX_FACES, refine_landmarks=True, min_detection_confidence=0.4
            )
        if attribute == "_hands":
            return solutions.hands.Hands(
                static_image_mode=True, max_num_hands=1, model_complexity=1, min_detection_confidence=self.hand_min_conf
            )
        raise KeyError(attribute)

    def faces(self, image: np.ndarray) -> list[Face]:
        """Faces in ``image`` (full-range detector, works up to ~5 m)."""
        height, width = image.shape[:2]
        result = self._get("_face_detector").process(np.ascontiguousarray(image))
        faces = []
        for detection in result.detections or []:
            box = detection.location_data.relative_bounding_box
            xyxy = np.array([box.xmin, box.ymin, box.xmin + box.width, box.ymin + box.height]) * [width, height, width, height]
            points = np.array([[p.x * width, p.y * height] for p in detection.location_data.relative_keypoints])
            faces.append(Face(box=xyxy, score=float(detection.score[0]), keypoints=points))
        return faces

    def pose(self, image: np.ndarray) -> np.ndarray | None:
        """(33, 4) pose landmarks of the most prominent person: x, y pixels, z (pixels, relative to the
        hips, smaller = nearer the camera), visibility. None when nobody is found."""
        height, width = image.shape[:2]
        result = self._get("_pose").process(np.ascontiguousarray(image))
        if result.pose_landmarks is None:
            return None
        return np.array(
            [[p.x * width, p.y * height, p.z * width, p.visibility] for p in result.pose_landmarks.landmark],
            dtype=np.float64,
        )

    def face_meshes(self, image: np.ndarray) -> list[np.ndarray]:
        """(478, 3) face-mesh landmarks (with iris), pixels, of each face in ``image`` (up to MESH_MAX_FACES,
        surest first); empty if none."""
        height, width = image.shape[:2]
        result = self._get("_face_mesh").process(np.ascontiguousarray(image))
        return [np.array([[p.x * width, p.y * height, p.z * width] for p in face.landmark])
                for face in result.multi_face_landmarks or []]

    def hand(self, image: np.ndarray) -> tuple[np.ndarray, float] | None:
        """(21, 3) landmarks (pixels) of the most confident hand in ``image`` and its score; None if none."""
        height, width = image.shape[:2]
        result = self._get("_hands").process(np.ascontiguousarray(image))
        if not result.multi_hand_landmarks:
            return None
        score = float(result.multi_handedness[0].classification[0].score) if result.multi_handedness else 0.5
        points = np.array([[p.x * width, p.y * height, p.z * width] for p in result.multi_hand_landmarks[0].landmark])
        return points, score

    def close(self) -> None:
        for attribute in ("_face_detector", "_pose", "_face_mesh", "_hands"):
            model = getattr(self, attribute)
            if model is not None:
                if model in _OPEN_SOLUTIONS:  # not closed already at exit
                    _OPEN_SOLUTIONS.discard(model)
                    model.close()
                setattr(self, attribute, None)
