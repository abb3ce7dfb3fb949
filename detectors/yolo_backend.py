"""Ultralytics YOLO-pose backend: person boxes + COCO-17 keypoints in batches (GPU when present), then
the same face / gaze / hands refinement as the MediaPipe backend (detectors/refine.py)."""
from __future__ import annotations

import time

import numpy as np

from detectors.base import check_frames
from detectors.keypoints import head_box
from detectors.mediapipe_models import MIN_FACE_SHARE, Face, MediaPipeModels
from detectors.observation import FrameObservations
from detectors.person_pool import PersonPool
from detectors.refine import KEYPOINT_MIN_SCORE, PersonRefiner
from detectors.config import DetectorConfig, GazeConfig, PointingConfig


def _pick_device(requested: str) -> str:
    if requested:
        return requested
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class YoloPoseDetector:
    """``PersonDetector`` over an Ultralytics pose model. ``weights`` is a local path, an Ultralytics
    name, or a ``*.yaml`` model definition (builds an untrained model: smoke and speed tests only)."""

    name = "yolo"

    def __init__(
        self, config: DetectorConfig, gaze: GazeConfig, pointing: PointingConfig, *,
        weights: str | None = None, threads: int = 1,
    ) -> None:
        self.config = config
        self.weights = weights or config.weights
        self.model = load_ultralytics(self.weights, "pose")
        self.device = _pick_device(config.device)
        # face mesh and hands run per person on crops, one MediaPipe model set per thread
        self.pool = PersonPool(threads, MediaPipeModels)
        self.refiners = [PersonRefiner(gaze, pointing, hand_model=config.hand_model, models=m) for m in self.pool.model_sets]
        self.refine_seconds = 0.0  # time spent in face mesh / hands so far (the pipeline reports it apart)

    def detect(self, frames: list[np.ndarray]) -> list[FrameObservations]:
        """People in each RGB frame (see ``PersonDetector.detect``), ``config.batch_size``
        frames per forward pass."""
        check_frames(frames)
        out: list[FrameObservations] = []
        batch_size = max(1, int(self.config.batch_size))
        for start in range(0, len(frames), batch_size):
            batch = frames[start : start + batch_size]
            results = self._predict(batch, self.config.yolo_input_size)
            heights = np.concatenate([r.boxes.xywhn[:, 3].cpu().numpy() for r in results if r.boxes is not None])
            if len(heights) and float(np.median(heights)) < self.config.small_person_height:
                results = self._predict(batch, self.config.yolo_small_people_input_size)
            started = time.perf_counter()
            for frame, result in zip(batch, results):
                observations = without_group_boxes(self.from_ultralytics(result, frame.shape[1], frame.shape[0]))
                faces = self._faces(frame, observations)
                self.pool.map(lambda i, slot: self.refiners[slot].refine_person(frame, observations, i, faces[i]),
                              range(len(observations)))
                out.append(observations)
            self.refine_seconds += time.perf_counter() - started
        return out

    def _faces(self, frame: np.ndarray, observations: FrameObservations) -> list[Face | None]:
        """Each person's face from MediaPipe's full-range face detector (the one whose centre lies in
        their keypoint head box, enlarged by a quarter), as the MediaPipe backend anchors people:
        its box becomes the head box (forehead and hair included) and its score weights gaze confidence.
        People seen from behind keep their keypoint head box and no face."""
        if not len(observations):
            return []
        height, width = frame.shape[:2]
        scale = np.array([width, height, width, height], np.float64)
        faces = [f for f in self.pool.model_sets[0].faces(frame)
                 if f.score >= FACE_MIN_SCORE and f.box[2] - f.box[0] >= MIN_FACE_SHARE * max(width, height)]
        heads = observations.head_xyxy.astype(np.float64) * scale
        margin = np.tile(0.125 * (heads[:, 2:] - heads[:, :2]), 2) * [-1, -1, 1, 1]
        regions = heads + margin  # NaN rows (no head keypoints) never hold a face
        chosen: list[Face | None] = [None] * len(observations)
        for face in sorted(faces, key=lambda f: -f.score):
            centre = (face.box[:2] + face.box[2:]) / 2
            inside = [i for i in range(len(regions)) if chosen[i] is None
                      and regions[i, 0] <= centre[0] <= regions[i, 2] and regions[i, 1] <= centre[1] <= regions[i, 3]]
            if inside:
                # the smallest region holding it: the nearest person when heads overlap
                i = min(inside, key=lambda k: (regions[k, 2] - regions[k, 0]) * (regions[k, 3] - regions[k, 1]))
                chosen[i] = face
                observations.head_xyxy[i] = np.clip(face.head_box() / scale, 0.0, 1.0)
        return chosen

    def _predict(self, batch: list[np.ndarray], input_size: int):
        return self.model.predict(
            [np.ascontiguousarray(f[..., ::-1]) for f in batch],  # Ultralytics expects BGR
            conf=self.config.person_conf,
            classes=[0],
            device=self.device,
            verbose=False,
            imgsz=inference_size(input_size),
        )

    @staticmethod
    def from_ultralytics(result, width: int, height: int) -> FrameObservations:
        """Adapt one Ultralytics ``Results`` (pose task) into ``FrameObservations``."""
        boxes = result.boxes
        if boxes is None or len(boxes) == 0:
            return FrameObservations.empty()
        xyxy = boxes.xyxyn.cpu().numpy().astype(np.float32)
        confidence = boxes.conf.cpu().numpy().astype(np.float32)
        n = len(xyxy)
        keypoints = np.full((n, 17, 3), np.nan, np.float32)
        keypoints[..., 2] = 0.0
        if result.keypoints is not None and len(result.keypoints):
            xy = result.keypoints.xyn.cpu().numpy()
            scores = result.keypoints.conf
            scores = scores.cpu().numpy() if scores is not None else np.ones(xy.shape[:2], np.float32)
            keypoints[..., :2] = xy
            keypoints[..., 2] = scores
            # Ultralytics reports unseen keypoints at (0, 0)
            unseen = (xy == 0).all(axis=-1)
            keypoints[unseen, :2] = np.nan
            keypoints[unseen, 2] = 0.0
        heads = np.full((n, 4), np.nan, np.float32)
        scale = np.array([width, height], dtype=np.float64)
        for i in range(n):
            pixels = keypoints[i].astype(np.float64)
            pixels[:, :2] *= scale
            head = head_box(pixels, KEYPOINT_MIN_SCORE)
            if head is not None:
                heads[i] = head / np.concatenate([scale, scale])
        return FrameObservations(
            xyxy=np.clip(xyxy, 0.0, 1.0),
            confidence=confidence,
            keypoints=keypoints,
            head_xyxy=np.clip(heads, 0.0, 1.0),
        )


# a face must be this sure to re-anchor a body found without it (MediaPipe's own default threshold): the
# ear and cheek of someone seen from behind score lower
FACE_MIN_SCORE = 0.5
GROUP_BOX_COVERS = 0.8  # a box holding this share of two other people's boxes is a box around both


def without_group_boxes(observations: FrameObservations) -> FrameObservations:
    """Drop boxes that cover two other detected people (a detector sometimes boxes a hugging or
    high-fiving pair as one): each person is kept once, by their own box."""
    boxes = observations.xyxy
    if len(boxes) < 3:
        return observations
    width = np.clip(np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0]), 0, None)
    height = np.clip(np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1]), 0, None)
    area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
    inside = width * height / area[None, :]  # [i, j]: share of box j inside box i
    np.fill_diagonal(inside, 0.0)
    group = (inside >= GROUP_BOX_COVERS).sum(axis=1) >= 2
    return observations[~group] if group.any() else observations


def inference_size(input_size: int) -> int:
    """Network input side: ``input_size`` rounded up to the stride (32), at most 1280. It may exceed the
    frame's side: Ultralytics then upsamples, which is what finds people a few dozen pixels tall."""
    return int(np.ceil(min(input_size, 1280) / 32) * 32)


def load_ultralytics(weights: str, task: str):
    """An Ultralytics model of ``task`` from a local file or a ``*.yaml`` definition, without network;
    a ValueError naming the file when it cannot be loaded or is a model of another task."""
    from detectors import use_ultralytics_offline

    use_ultralytics_offline()
    from ultralytics import YOLO

    try:
        model = YOLO(weights, task=task)
    except (FileNotFoundError, RuntimeError, ValueError, KeyError, AttributeError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{weights}: cannot load Ultralytics weights ({first_line})") from exc
    if getattr(model, "task", task) != task:
        raise ValueError(f"{weights}: a {model.task!r} model, expected a {task!r} model")
    return model
