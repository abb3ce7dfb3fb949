"""Objects from an Ultralytics detection model (``--object-weights``, e.g. a COCO model), so gaze and
pointing targets can be objects with a class name. Off unless weights are given: no object weights of
useful quality ship in a package, and socialtrace never downloads any."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from detectors.base import check_frames
from detectors.config import DetectorConfig
from detectors.runtime import resolve_device
from detectors.yolo_backend import inference_size, load_ultralytics

PERSON_LABEL = "person"  # people come from the pose model, with identities


@dataclass
class FrameObjects:
    """Objects seen in one frame: parallel arrays, boxes normalised xyxy."""

    xyxy: np.ndarray  # (K, 4) float32
    confidence: np.ndarray  # (K,) float32
    label: np.ndarray  # (K,) object (str): the model's class name

    def __post_init__(self) -> None:
        self.xyxy = np.asarray(self.xyxy, np.float32).reshape(-1, 4)
        self.confidence = np.asarray(self.confidence, np.float32).reshape(len(self.xyxy))
        self.label = np.asarray(self.label, dtype=object).reshape(len(self.xyxy))

    def __len__(self) -> int:
        return len(self.xyxy)

    @classmethod
    def empty(cls) -> "FrameObjects":
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, dtype=object))

    @classmethod
    def concat(cls, parts: list["FrameObjects"]) -> "FrameObjects":
        """One frame's objects from several sources (a detection model, the referent finder)."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        return cls(np.concatenate([p.xyxy for p in parts]), np.concatenate([p.confidence for p in parts]),
                   np.concatenate([p.label for p in parts]))


def object_classes(names: list[str]) -> list[int]:
    """The class indices to detect: all but people (the pose model finds them, with identities)."""
    return [k for k, name in enumerate(names) if name != PERSON_LABEL]


class ObjectDetector:
    """Ultralytics detection model over batches of RGB frames; ``config.object_weights`` is a local
    file or a ``*.yaml`` definition (an untrained model, for plumbing tests)."""

    def __init__(self, config: DetectorConfig) -> None:
        from detectors import find_local_weights

        local = find_local_weights(config.object_weights)
        if local is None:
            raise ValueError(f"{config.object_weights}: object weights file not found (socialtrace never downloads weights)")
        self.config = config
        self.model = load_ultralytics(str(local), "detect")
        self.device = resolve_device(config.device)
        names = self.model.names
        self.names = [names[k] for k in sorted(names)] if isinstance(names, dict) else list(names)
        self.classes = object_classes(self.names)

    def detect(self, frames: list[np.ndarray]) -> list[FrameObjects]:
        """Objects in each RGB frame (same frames as the person detector sees)."""
        check_frames(frames)
        if not frames:
            return []
        results = self.model.predict(
            [np.ascontiguousarray(f[..., ::-1]) for f in frames],  # Ultralytics expects BGR
            conf=self.config.object_conf,
            classes=self.classes,
            device=self.device,
            verbose=False,
            imgsz=inference_size(self.config.object_input_size),
        )
        out = []
        for result in results:
            boxes = result.boxes
            if boxes is None or len(boxes) == 0:
                out.append(FrameObjects.empty())
                continue
            class_ids = boxes.cls.cpu().numpy().astype(int)
            out.append(FrameObjects(
                np.clip(boxes.xyxyn.cpu().numpy(), 0.0, 1.0),
                boxes.conf.cpu().numpy(),
                np.array([self.names[k] for k in class_ids], dtype=object),
            ))
        return out
