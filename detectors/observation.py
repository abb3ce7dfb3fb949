"""The one per-frame observation type every stage passes along (supervision's ``Detections`` idea):
parallel numpy arrays, one row per person candidate, validated on construction.

Backends adapt their output into ``FrameObservations`` (``from_*`` functions live with each backend);
tracking fills ``tracker_id``; nothing downstream knows which backend ran.

Coordinates are normalised to [0, 1] in the displayed (rotation-applied) frame, x right, y down.
Missing values are NaN (floats) or -1 (ids), never absent rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

N_KEYPOINTS = 17  # COCO-17
HANDS_PER_PERSON = 2  # index 0 = the person's left hand, 1 = right hand

# COCO-17 indices used across the code base
NOSE, LEFT_EYE, RIGHT_EYE, LEFT_EAR, RIGHT_EAR = 0, 1, 2, 3, 4
LEFT_SHOULDER, RIGHT_SHOULDER, LEFT_ELBOW, RIGHT_ELBOW, LEFT_WRIST, RIGHT_WRIST = 5, 6, 7, 8, 9, 10
LEFT_HIP, RIGHT_HIP = 11, 12

GAZE_SOURCE_NONE = ""
# where a gaze direction came from (the values of pipeline.schema.GAZE_SOURCES the detectors write)
GAZE_SOURCE_FACE_MESH, GAZE_SOURCE_KEYPOINTS = "face_mesh", "keypoints"


def _nan(*shape: int) -> np.ndarray:
    return np.full(shape, np.nan, dtype=np.float32)


@dataclass
class FrameObservations:
    """People seen in one sampled frame. Every array's first axis has length ``len(self)``."""

    xyxy: np.ndarray  # (N, 4) float32 person box
    confidence: np.ndarray  # (N,) float32 detection confidence
    keypoints: np.ndarray = None  # (N, 17, 3) float32 COCO-17 x, y, score (NaN x/y when unseen)
    head_xyxy: np.ndarray = None  # (N, 4) float32 head/face box, NaN row when unknown
    gaze_origin: np.ndarray = None  # (N, 2) float32 point between the eyes
    gaze_dir: np.ndarray = None  # (N, 3) float32 unit vector, camera frame, z into the scene
    gaze_source: np.ndarray = None  # (N,) str: face_mesh | keypoints | model | "" (none)
    gaze_conf: np.ndarray = None  # (N,) float32, 0 when no gaze
    gaze_eye_cues: np.ndarray = None  # (N,) float32: share of the eye cues a face-mesh gaze holds (0: head alone)
    # (N, 3) float32: a face-mesh gaze with its eye cues read in full however small the eyes (= gaze_dir where
    # they are read in full; NaN without a face-mesh read): detectors.gaze.GazeEstimate.eye_direction
    gaze_eye_dir: np.ndarray = None
    # (N,) bool: the face mesh found this person's face (on at least one of its reads, detectors/mirror.py),
    # whether or not the gaze was read from it: a face seen for re-identification (tracking/faces.py)
    face_seen: np.ndarray = None
    hand_xyxy: np.ndarray = None  # (N, 2, 4) float32 per hand box, NaN when not seen
    hand_pointing: np.ndarray = None  # (N, 2) float32 pointing_score per hand, 0 when not seen
    hand_open: np.ndarray = None  # (N, 2) float32 open-palm score per hand
    point_dir: np.ndarray = None  # (N, 2) float32 unit image-plane pointing ray, NaN when not pointing
    point_origin: np.ndarray = None  # (N, 2) float32 where the pointing ray starts (fingertip / wrist)
    point_conf: np.ndarray = None  # (N,) float32, 0 when not pointing
    appearance: np.ndarray = None  # (N, D) float32 appearance descriptor for re-identification
    tracker_id: np.ndarray = None  # (N,) int32, -1 until tracking assigns one

    def __post_init__(self) -> None:
        self.xyxy = np.asarray(self.xyxy, dtype=np.float32).reshape(-1, 4)
        n = len(self.xyxy)
        self.confidence = np.asarray(self.confidence, dtype=np.float32).reshape(n)
        defaults: dict[str, Any] = {
            "keypoints": lambda: _keypoints_unknown(n),
            "head_xyxy": lambda: _nan(n, 4),
            "gaze_origin": lambda: _nan(n, 2),
            "gaze_dir": lambda: _nan(n, 3),
            "gaze_source": lambda: np.full(n, GAZE_SOURCE_NONE, dtype=object),
            "gaze_conf": lambda: np.zeros(n, np.float32),
            "gaze_eye_cues": lambda: np.zeros(n, np.float32),
            "gaze_eye_dir": lambda: _nan(n, 3),
            "face_seen": lambda: np.zeros(n, bool),
            "hand_xyxy": lambda: _nan(n, HANDS_PER_PERSON, 4),
            "hand_pointing": lambda: np.zeros((n, HANDS_PER_PERSON), np.float32),
            "hand_open": lambda: np.zeros((n, HANDS_PER_PERSON), np.float32),
            "point_dir": lambda: _nan(n, 2),
            "point_origin": lambda: _nan(n, 2),
            "point_conf": lambda: np.zeros(n, np.float32),
            "appearance": lambda: np.zeros((n, 0), np.float32),
            "tracker_id": lambda: np.full(n, -1, np.int32),
        }
        shapes = {
            "keypoints": (n, N_KEYPOINTS, 3),
            "head_xyxy": (n, 4),
            "gaze_origin": (n, 2),
            "gaze_dir": (n, 3),
            "gaze_source": (n,),
            "gaze_conf": (n,),
            "gaze_eye_cues": (n,),
            "gaze_eye_dir": (n, 3),
            "face_seen": (n,),
            "hand_xyxy": (n, HANDS_PER_PERSON, 4),
            "hand_pointing": (n, HANDS_PER_PERSON),
            "hand_open": (n, HANDS_PER_PERSON),
            "point_dir": (n, 2),
            "point_origin": (n, 2),
            "point_conf": (n,),
            "tracker_id": (n,),
        }
        for name, make in defaults.items():
            value = getattr(self, name)
            if value is None:
                value = make()
            elif name == "gaze_source":
                value = np.asarray(value, dtype=object)
            elif name == "tracker_id":
                value = np.asarray(value, dtype=np.int32)
            elif name == "face_seen":
                value = np.asarray(value, dtype=bool)
            else:
                value = np.asarray(value, dtype=np.float32)
            if name == "appearance":
                # reshape(0, -1) is ambiguous for zero rows: keep the given width then
                width = value.shape[-1] if value.ndim == 2 else 0
                value = value.reshape(n, -1) if n else value.reshape(0, width)
            elif value.shape != shapes[name]:
                raise ValueError(f"FrameObservations.{name} has shape {value.shape}, expected {shapes[name]}")
            setattr(self, name, value)

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: Any) -> "FrameObservations":
        """Select rows with an int array, a slice or a boolean mask (like supervision)."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        return FrameObservations(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def translated(self, dx: float, dy: float) -> "FrameObservations":
        """A copy with every position (boxes, keypoints, gaze and pointing origins) moved by (dx, dy),
        normalised: the same people in another frame of reference (tracking takes camera moves out)."""
        shift2 = np.array([dx, dy], np.float32)
        shift4 = np.concatenate([shift2, shift2])
        keypoints = self.keypoints.copy()
        keypoints[..., :2] += shift2
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(xyxy=self.xyxy + shift4, head_xyxy=self.head_xyxy + shift4, keypoints=keypoints,
                      gaze_origin=self.gaze_origin + shift2, hand_xyxy=self.hand_xyxy + shift4,
                      point_origin=self.point_origin + shift2)
        return FrameObservations(**values)

    @classmethod
    def empty(cls) -> "FrameObservations":
        return cls(xyxy=np.zeros((0, 4), np.float32), confidence=np.zeros(0, np.float32))

    @classmethod
    def merge(cls, parts: list["FrameObservations"]) -> "FrameObservations":
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        widths = {p.appearance.shape[1] for p in parts}
        if len(widths) > 1:
            raise ValueError(f"cannot merge observations with appearance widths {sorted(widths)}")
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)})

    # Ultralytics' trackers read these three attributes (and boolean indexing) from their input.
    @property
    def conf(self) -> np.ndarray:
        return self.confidence

    @property
    def cls(self) -> np.ndarray:
        return np.zeros(len(self), np.float32)  # one class: person

    @property
    def xywh(self) -> np.ndarray:
        centre = (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2
        size = self.xyxy[:, 2:] - self.xyxy[:, :2]
        return np.concatenate([centre, size], axis=1)


def _keypoints_unknown(n: int) -> np.ndarray:
    keypoints = np.full((n, N_KEYPOINTS, 3), np.nan, np.float32)
    keypoints[..., 2] = 0.0
    return keypoints
