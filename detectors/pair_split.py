"""Boxes that may hold two people, looked at again zoomed in.

A pose model at frame scale sometimes boxes two people walking one just behind the other as one person
(one skeleton, a box widened by the second). Such a box is cropped with a margin and detected again at a
larger scale (the crop is upsampled to the network input); a box holding the people found in it
when there are two or more is dropped (``without_pair_boxes`` says why not replaced); a crop that shows
one person keeps the box.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from detectors.keypoints import box_intersection_matrix, box_iou_matrix
from detectors.observation import FrameObservations

# detects people in crops (RGB, any size); boxes and keypoints normalised to each crop
CropDetector = Callable[[list[np.ndarray]], list[FrameObservations]]


def pair_candidates(observations: FrameObservations, min_aspect: float, max_height: float, frame_shape: tuple[int, ...]) -> np.ndarray:
    """Indices of boxes at least ``min_aspect`` as wide as tall (in pixels) and shorter than ``max_height``
    of the frame: wide enough to hold a second person, small enough that zooming adds pixels."""
    if not len(observations):
        return np.zeros(0, int)
    height, width = frame_shape[:2]
    box = observations.xyxy.astype(np.float64)
    box_w, box_h = (box[:, 2] - box[:, 0]) * width, (box[:, 3] - box[:, 1]) * height
    return np.flatnonzero((box_w >= min_aspect * np.maximum(box_h, 1e-9)) & (box[:, 3] - box[:, 1] < max_height))


def crop_region(box: np.ndarray, margin: float, frame_shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Pixel region (x1, y1, x2, y2) of a normalised box grown by ``margin`` of its size on every side,
    inside the frame."""
    height, width = frame_shape[:2]
    x1, y1, x2, y2 = np.asarray(box, np.float64) * [width, height, width, height]
    grow_x, grow_y = margin * (x2 - x1), margin * (y2 - y1)
    return (max(0, int(np.floor(x1 - grow_x))), max(0, int(np.floor(y1 - grow_y))),
            min(width, int(np.ceil(x2 + grow_x))), min(height, int(np.ceil(y2 + grow_y))))


def to_frame(found: FrameObservations, region: tuple[int, int, int, int], frame_shape: tuple[int, ...]) -> FrameObservations:
    """``found`` (normalised to the crop ``region``) normalised to the whole frame."""
    height, width = frame_shape[:2]
    x1, y1, x2, y2 = region
    scale = np.array([(x2 - x1) / width, (y2 - y1) / height], np.float32)
    offset = np.array([x1 / width, y1 / height], np.float32)
    moved = found[np.arange(len(found))]  # a copy
    moved.xyxy = (moved.xyxy.reshape(-1, 2, 2) * scale + offset).reshape(-1, 4)
    moved.head_xyxy = (moved.head_xyxy.reshape(-1, 2, 2) * scale + offset).reshape(-1, 4)
    moved.keypoints[..., :2] = moved.keypoints[..., :2] * scale + offset
    return moved


def people_inside(found: FrameObservations, box: np.ndarray, *, min_conf: float, min_inside: float,
                  min_height: float, same_person_iou: float) -> FrameObservations:
    """The separate people of ``found`` (frame coordinates) that stand in ``box``: confident enough, mostly
    inside it and nearly as tall (a neighbour's feet or head reaching into the margin is not one), one
    box per person (the most confident of boxes overlapping by ``same_person_iou``)."""
    if not len(found):
        return found
    xyxy = found.xyxy.astype(np.float64)
    area = np.maximum((xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1]), 1e-12)
    keep = ((found.confidence >= min_conf) & (box_intersection_matrix(xyxy, box)[:, 0] / area >= min_inside)
            & (xyxy[:, 3] - xyxy[:, 1] >= min_height * (box[3] - box[1])))
    people = found[np.flatnonzero(keep)]
    people = people[np.argsort(-people.confidence, kind="stable")]
    separate = [k for k in range(len(people))
                if k == 0 or box_iou_matrix(people.xyxy[k:k + 1], people.xyxy[:k]).max() < same_person_iou]
    return people[separate]


def without_pair_boxes(frames: list[np.ndarray], observations: list[FrameObservations], detect_crops: CropDetector, *,
                       min_aspect: float, max_height: float, margin: float, min_conf: float, min_inside: float,
                       min_height: float, same_person_iou: float) -> tuple[list[FrameObservations], int]:
    """``observations`` less every candidate box (see ``pair_candidates``) that holds two or more people
    when detected again zoomed in; all crops of the batch go to ``detect_crops`` at once. Returns the new
    observations and how many crops were detected.

    The box is dropped, not replaced by the people found: zoomed in, the model again boxes the one in
    front together with the one behind (one skeleton, the same wide box), and the one behind scores low
    and stands in no box of the next samples, so adding them handed their single row to a neighbour's
    track. A person without a box for one sample costs less than a row of someone else in their id."""
    jobs = []  # (frame index, box index, region)
    for k, (frame, obs) in enumerate(zip(frames, observations)):
        for i in pair_candidates(obs, min_aspect, max_height, frame.shape):
            jobs.append((k, int(i), crop_region(obs.xyxy[i], margin, frame.shape)))
    if not jobs:
        return observations, 0
    crops = [np.ascontiguousarray(frames[k][y1:y2, x1:x2]) for k, _, (x1, y1, x2, y2) in jobs]
    pairs: dict[int, list[int]] = {}
    for (k, i, region), found in zip(jobs, detect_crops(crops)):
        people = people_inside(to_frame(found, region, frames[k].shape), observations[k].xyxy[i].astype(np.float64),
                               min_conf=min_conf, min_inside=min_inside, min_height=min_height,
                               same_person_iou=same_person_iou)
        if len(people) >= 2:
            pairs.setdefault(k, []).append(i)
    out = [obs[np.setdiff1d(np.arange(len(obs)), pairs[k])] if k in pairs else obs for k, obs in enumerate(observations)]
    return out, len(jobs)
