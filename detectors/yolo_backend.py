"""Ultralytics YOLO-pose backend: person boxes + COCO-17 keypoints in batches (GPU when present), then
the same face / gaze / hands refinement as the MediaPipe backend (detectors/refine.py)."""
from __future__ import annotations

import time

import numpy as np

from detectors.base import check_frames
from detectors.keypoints import box_intersection_matrix, box_iou_matrix, head_box
from detectors.mediapipe_models import MIN_FACE_SHARE, Face, MediaPipeModels
from detectors.mirror import flipped_faces, flipped_observations, merged_faces, merged_reads
from detectors.observation import FrameObservations
from detectors.pair_split import without_pair_boxes
from detectors.person_pool import PersonPool
from detectors.refine import KEYPOINT_MIN_SCORE, PersonRefiner
from detectors.runtime import load_model
from detectors.config import DetectorConfig, GazeConfig, PointingConfig
from detectors.face_people import face_only_people


class YoloPoseDetector:
    """``PersonDetector`` over an Ultralytics pose model. ``weights`` is a local path, an Ultralytics
    name, or a ``*.yaml`` model definition (builds an untrained model: smoke and speed tests only)."""

    name = "yolo"

    def __init__(
        self, config: DetectorConfig, gaze: GazeConfig, pointing: PointingConfig, *,
        weights: str | None = None, threads: int = 1, inference_threads: int = 0,
    ) -> None:
        self.config = config
        self.weights = weights or config.weights
        loaded = load_model(self.weights, "pose", runtime=config.runtime, device=config.device,
                            threads=inference_threads)
        self.model, self.runtime, self.device = loaded.model, loaded.runtime, loaded.device
        # face mesh and hands run per person on crops, one MediaPipe model set per thread
        self.pool = PersonPool(threads, MediaPipeModels)
        self.refiners = [PersonRefiner(gaze, pointing, hand_model=config.hand_model, models=m,
                                      mirror_average=config.mirror_average) for m in self.pool.model_sets]
        self.refine_seconds = 0.0  # time spent in face mesh / hands so far (the pipeline reports it apart)
        self.pair_crops = 0  # boxes detected again zoomed in so far (detectors/pair_split.py)

    def close(self) -> None:
        self.pool.close()

    def detect(self, frames: list[np.ndarray]) -> list[FrameObservations]:
        """People in each RGB frame (see ``PersonDetector.detect``), ``config.batch_size``
        frames per forward pass."""
        check_frames(frames)
        out: list[FrameObservations] = []
        batch_size = max(1, int(self.config.batch_size))
        for start in range(0, len(frames), batch_size):
            batch = frames[start : start + batch_size]
            reads = self._observe(batch, self.config.yolo_input_size, self._candidate_conf())
            boxes = [_boxes(r) for r in reads]
            # each frame is judged on its own people, never on its batch's (which frames share a batch depends
            # on the batch size and the clip's length, and must not change what a frame shows): a crowd of small
            # people is read whole at the larger input
            crowd = [k for k, (c, h) in enumerate(boxes) if np.any(c >= self.config.person_conf)
                     and float(np.median(h[c >= self.config.person_conf])) < self.config.small_person_height]
            # frames where a faint small person stands among large ones (who keep the median up), and
            # frames where nobody was found at all (a far crowd may leave not even a faint candidate)
            faint = [k for k, (c, h) in enumerate(boxes) if k not in crowd and (
                np.any((h < self.config.small_person_height) & (c >= self.config.small_candidate_conf))
                or (self.config.small_people_when_empty and not np.any(c >= self.config.person_conf)))]
            # one larger-input call for all of them
            again = crowd + faint
            larger = dict(zip(again, self._observe([batch[k] for k in again], self.config.yolo_small_people_input_size))) if again else {}
            reads = [larger[k] if k in crowd else r for k, r in enumerate(reads)]
            found = []
            for k, observations in enumerate(reads):
                observations = observations[observations.confidence >= self.config.person_conf]
                if k in faint:
                    # small people from the larger input; large ones keep their usual-input boxes (a
                    # large person's box differs between sizes, which broke their track)
                    observations = with_small_people(observations, larger[k], self.config.small_person_height)
                found.append(observations)
            found = self._without_pair_boxes(batch, found)
            started = time.perf_counter()
            for frame, observations in zip(batch, found):
                observations = without_group_boxes(without_duplicate_people(observations))
                faces, unclaimed = self._faces(frame, observations)
                # close-ups: a face no one holds, its body out of view, is a person of its own
                alone, alone_faces = face_only_people(unclaimed, observations, frame.shape[1], frame.shape[0],
                                                      self.config.face_people_max_body_heads)
                if len(alone):
                    observations = FrameObservations.merge([observations, alone])
                    faces = faces + alone_faces
                self.pool.map(lambda i, slot: self.refiners[slot].refine_person(frame, observations, i, faces[i]),
                              range(len(observations)))
                self.refiners[0].settle_shared_faces(frame, observations)
                out.append(observations)
            self.refine_seconds += time.perf_counter() - started
        return out

    def _faces(self, frame: np.ndarray, observations: FrameObservations) -> tuple[list[Face | None], list[Face]]:
        """Each person's face from MediaPipe's full-range face detector (the one whose centre lies in
        their keypoint head box, enlarged by a quarter), as the MediaPipe backend anchors people:
        its box becomes the head box (forehead and hair included) and its score weights gaze confidence.
        People seen from behind keep their keypoint head box and no face. Also returns the faces no one
        holds (for face-only people; the detector runs on a frame without people only for them)."""
        if not len(observations) and self.config.face_people_max_body_heads <= 0:
            return [], []
        height, width = frame.shape[:2]
        scale = np.array([width, height, width, height], np.float64)
        detector = self.pool.model_sets[0]
        read = detector.faces(frame)
        if self.config.mirror_average:
            read = merged_faces(read, flipped_faces(detector.faces(frame[:, ::-1]), width))
        faces = [f for f in read
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
        held = {id(f) for f in chosen if f is not None}
        return chosen, [f for f in faces if id(f) not in held]

    def _without_pair_boxes(self, batch: list[np.ndarray], found: list[FrameObservations]) -> list[FrameObservations]:
        """``found`` less boxes that hold two people when seen zoomed in (detectors/pair_split.py)."""
        config = self.config
        if config.pair_split_input_size <= 0:
            return found
        found, crops = without_pair_boxes(
            batch, found, self._detect_crops, min_aspect=config.pair_split_min_aspect,
            max_height=config.pair_split_max_height, margin=config.pair_split_margin, min_conf=config.pair_split_conf,
            min_inside=config.pair_split_inside, min_height=config.pair_split_min_height, same_person_iou=SAME_PERSON_IOU)
        self.pair_crops += crops
        return found

    def _detect_crops(self, crops: list[np.ndarray]) -> list[FrameObservations]:
        """People in each crop, normalised to the crop, down to ``pair_split_conf``. One crop per call: crops
        of other sizes in the same call (from other frames of the batch) changed a crop's read, so a frame's
        people depended on which frames shared its batch (the batch size, the clip's length)."""
        return [self._observe([crop], self.config.pair_split_input_size, self.config.pair_split_conf)[0]
                for crop in crops]

    def _candidate_conf(self) -> float:
        return min(self.config.small_candidate_conf, self.config.person_conf)

    def _observe(self, batch: list[np.ndarray], input_size: int, conf: float | None = None) -> list[FrameObservations]:
        """People in each frame of ``batch`` at ``input_size`` (see ``_predict``). With ``mirror_average``
        each frame is also read mirrored and the reads merged (detectors/mirror.py)."""
        if not batch:
            return []
        if not self.config.mirror_average:
            return [self.from_ultralytics(r, f.shape[1], f.shape[0]) for r, f in zip(self._predict(batch, input_size, conf), batch)]
        results = self._predict(batch + [f[:, ::-1] for f in batch], input_size, conf)
        found = []
        for k, frame in enumerate(batch):
            height, width = frame.shape[:2]
            direct = self.from_ultralytics(results[k], width, height)
            mirrored = flipped_observations(self.from_ultralytics(results[len(batch) + k], width, height))
            merged = merged_reads(direct, mirrored)
            merged.head_xyxy[:] = head_boxes(merged.keypoints, width, height)
            found.append(merged)
        return found

    def _predict(self, batch: list[np.ndarray], input_size: int, conf: float | None = None):
        """Ultralytics results at ``input_size``, boxes scoring at least ``conf`` (default person_conf;
        weaker boxes never suppress stronger ones in its NMS, so the kept people are the same)."""
        return self.model.predict(
            [np.ascontiguousarray(f[..., ::-1]) for f in batch],  # Ultralytics expects BGR
            conf=self.config.person_conf if conf is None else conf,
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
        return FrameObservations(
            xyxy=np.clip(xyxy, 0.0, 1.0),
            confidence=confidence,
            keypoints=keypoints,
            head_xyxy=head_boxes(keypoints, width, height),
        )


def head_boxes(keypoints: np.ndarray, width: int, height: int) -> np.ndarray:
    """(N, 4) normalised head boxes from (N, 17, 3) normalised keypoints of a ``width`` x ``height`` frame;
    NaN rows where the head keypoints are not seen."""
    heads = np.full((len(keypoints), 4), np.nan, np.float32)
    scale = np.array([width, height], dtype=np.float64)
    for i in range(len(keypoints)):
        pixels = keypoints[i].astype(np.float64)
        pixels[:, :2] *= scale
        head = head_box(pixels, KEYPOINT_MIN_SCORE)
        if head is not None:
            heads[i] = head / np.concatenate([scale, scale])
    return np.clip(heads, 0.0, 1.0)


def _boxes(observations: FrameObservations) -> tuple[np.ndarray, np.ndarray]:
    """(confidences, normalised heights) of one frame's boxes."""
    return observations.confidence, observations.xyxy[:, 3] - observations.xyxy[:, 1]


SAME_PERSON_IOU = 0.5  # boxes of one frame (at two input sizes) overlapping this much are one person


def with_small_people(found: FrameObservations, larger: FrameObservations, max_height: float) -> FrameObservations:
    """``found`` with its small people (box shorter than ``max_height``) taken from ``larger``, the same
    frame at a larger input size, where they score higher; its large people keep their boxes. A small
    person of ``found`` that ``larger`` misses is kept."""
    small = larger[(larger.xyxy[:, 3] - larger.xyxy[:, 1]) < max_height]
    small = small[np.argsort(-small.confidence, kind="stable")]
    # one box per person: the larger input sometimes leaves two overlapping boxes on a blurred one
    small = small[[k for k in range(len(small)) if _max_iou(small.xyxy[k:k + 1], small.xyxy[:k])[0] < SAME_PERSON_IOU]]
    found_small = (found.xyxy[:, 3] - found.xyxy[:, 1]) < max_height
    small = small[_max_iou(small.xyxy, found.xyxy[~found_small]) < SAME_PERSON_IOU]
    keep = ~found_small | (_max_iou(found.xyxy, small.xyxy) < SAME_PERSON_IOU)
    return FrameObservations.merge([found[keep], small])


def _max_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per box of ``a`` (N, 4) its largest IoU with a box of ``b`` (M, 4); 0 when ``b`` is empty."""
    return box_iou_matrix(a, b).max(axis=1) if len(a) and len(b) else np.zeros(len(a))


# a face must be this sure to re-anchor a body found without it (MediaPipe's own default threshold): the
# ear and cheek of someone seen from behind score lower
FACE_MIN_SCORE = 0.5
GROUP_BOX_COVERS = 0.8  # a box holding this share of two other people's boxes is a box around both
# ...when they are at least this share of its height: small people far behind a large one are not a group
GROUP_MEMBER_HEIGHT = 0.5


# a box holding this share of one other box at least PAIR_MEMBER_HEIGHT of its height, and at least
# PAIR_BOX_WIDTH times as wide, is a box around that person and a neighbour: opencv_vtest at 51.0 s boxes the
# red-jacket man and the blonde woman as one (0.091 wide) around her own box (0.054 wide, 93 % inside, same
# height); a box widened by a raised arm around the same skeleton is removed as a duplicate before
PAIR_BOX_COVERS = 0.85
PAIR_MEMBER_HEIGHT = 0.8
PAIR_BOX_WIDTH = 1.5


def without_group_boxes(observations: FrameObservations) -> FrameObservations:
    """Drop boxes that cover two other detected people (a detector sometimes boxes a hugging or
    high-fiving pair as one), or one other person at their height and much wider (a pair boxed as one
    beside one of them): each person is kept once, by their own box."""
    boxes = observations.xyxy
    if len(boxes) < 2:
        return observations
    area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
    inside = box_intersection_matrix(boxes, boxes) / area[None, :]  # [i, j]: share of box j inside box i
    np.fill_diagonal(inside, 0.0)
    heights = boxes[:, 3] - boxes[:, 1]
    tall_enough = heights[None, :] >= GROUP_MEMBER_HEIGHT * heights[:, None]
    group = ((inside >= GROUP_BOX_COVERS) & tall_enough).sum(axis=1) >= 2
    # a box around one detected person and someone beside them who has no box of their own: it holds that
    # person whole, at about their height, but is much wider (after without_duplicate_people, so it is no
    # second box of the same skeleton)
    widths = boxes[:, 2] - boxes[:, 0]
    as_tall = heights[None, :] >= PAIR_MEMBER_HEIGHT * heights[:, None]
    much_wider = widths[:, None] >= PAIR_BOX_WIDTH * widths[None, :]
    group |= ((inside >= PAIR_BOX_COVERS) & as_tall & much_wider).any(axis=1)
    return observations[~group] if group.any() else observations


# two boxes are one person when the joints both see confidently (at least SAME_PERSON_MIN_JOINTS of them)
# lie this close, in units of the taller box's height: deepoint_pointing_up's one man came out of the
# detector as two nested boxes (with and without the raised arm) whose joints coincide to 0.01
SAME_PERSON_JOINT_DISTANCE = 0.05
SAME_PERSON_MIN_JOINTS = 4
SAME_PERSON_JOINT_SCORE = 0.5


def without_duplicate_people(observations: FrameObservations) -> FrameObservations:
    """Drop the less confident of two boxes whose skeletons are the same person (the same confidently
    seen joints at the same places); people who merely overlap (a hug, a crowd) have joints apart."""
    n = len(observations)
    if n < 2:
        return observations
    xy, score = observations.keypoints[..., :2], observations.keypoints[..., 2]
    heights = observations.xyxy[:, 3] - observations.xyxy[:, 1]
    order = np.argsort(-observations.confidence, kind="stable")
    kept: list[int] = []
    for i in order:
        duplicate = False
        for j in kept:
            both = (score[i] >= SAME_PERSON_JOINT_SCORE) & (score[j] >= SAME_PERSON_JOINT_SCORE)
            if both.sum() < SAME_PERSON_MIN_JOINTS:
                continue
            distance = np.median(np.linalg.norm(xy[i][both] - xy[j][both], axis=1))
            if distance <= SAME_PERSON_JOINT_DISTANCE * max(heights[i], heights[j]):
                duplicate = True
                break
        if not duplicate:
            kept.append(int(i))
    return observations if len(kept) == n else observations[np.sort(np.array(kept))]


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
