"""Pointed-at objects without an object model: along a pointing ray, the first distinct physical thing.

No offline object weights exist, and a referent need not be a class any model knows (a table lamp is
not a COCO class), so this finder is class-agnostic and uses pixels only. On a frame where someone
points, the ray from their fingertip is walked across an edge-preserving smoothed copy of the frame
and cut into regions of uniform colour (each grown by flood fill from the first ray pixel it does not
already hold). The first region that looks like one compact thing standing out from what surrounds it
(size, compactness, colour contrast with a ring around it, clear of every person box and of the frame
border) is the referent. When no region qualifies, nothing is returned: a wall, a floor or a sofa the
ray crosses is not a thing anyone could name.

``find_referents`` is the plugin: an RGB frame, the frame's pointing rays and person boxes, and its
own config section (``detectors.config.ReferentConfig``) in; ``FrameObjects`` with the generic label
``REFERENT_LABEL`` out. Wording of that label lives in qa_gen/wording.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from detectors.config import ReferentConfig
from detectors.keypoints import box_intersection_matrix
from detectors.objects import FrameObjects
from detectors.observation import FrameObservations

REFERENT_LABEL = "object"  # no class name is known: the QA says "the object Person N points at"


@dataclass
class Region:
    """One uniform-colour region the ray crosses, in working-image pixels."""

    mask: np.ndarray  # (H, W) bool
    box: tuple[int, int, int, int]  # x1, y1, x2, y2 (exclusive)
    contrast: float  # Lab distance between the region's mean colour and its surrounding ring's
    colour_share: float  # pixels elsewhere in the frame of the region's colour / the region's pixels


def find_referents(
    image: np.ndarray,
    point_origin: np.ndarray,
    point_dir: np.ndarray,
    person_boxes: np.ndarray,
    config: ReferentConfig,
) -> FrameObjects:
    """The things pointed at in one RGB frame: for each pointing ray (``point_origin`` (P, 2) normalised,
    ``point_dir`` (P, 2) unit image-plane direction; NaN rows ignored) the first qualifying region
    beyond the fingertip, as a normalised box with label ``REFERENT_LABEL`` and its contrast as
    confidence (scaled to [0.5, 1]); ``person_boxes`` (N, 4) normalised xyxy are never referents."""
    origins = np.asarray(point_origin, np.float64).reshape(-1, 2)
    directions = np.asarray(point_dir, np.float64).reshape(-1, 2)
    rays = np.isfinite(origins).all(axis=1) & np.isfinite(directions).all(axis=1)
    if not rays.any() or image.size == 0:
        return FrameObjects.empty()
    working = _working_image(image, config)
    height, width = working.shape[:2]
    lab = cv2.cvtColor(working, cv2.COLOR_RGB2LAB)
    # the image regions grow in: Lab with lightness weighted down, so the shadowed side of a thing
    # joins its lit side while a change of colour still separates it from what is behind
    grow_on = np.ascontiguousarray(np.dstack([np.rint(lab[..., 0] * config.lightness_weight), lab[..., 1], lab[..., 2]]).astype(np.uint8))
    lab = lab.astype(np.float32)
    people = np.asarray(person_boxes, np.float64).reshape(-1, 4) * [width, height, width, height]
    people = people[np.isfinite(people).all(axis=1)]
    boxes, scores = [], []
    for origin, direction in zip(origins[rays], directions[rays]):
        region = _first_referent(grow_on, lab, origin * [width, height], direction, people, config)
        if region is not None:
            x1, y1, x2, y2 = region.box
            boxes.append([x1 / width, y1 / height, x2 / width, y2 / height])
            scores.append(min(1.0, 0.5 * region.contrast / config.min_contrast))
    if not boxes:
        return FrameObjects.empty()
    return FrameObjects(np.clip(np.asarray(boxes), 0.0, 1.0), np.asarray(scores),
                        np.full(len(boxes), REFERENT_LABEL, dtype=object))


def referents_in_frames(images: list[np.ndarray], people: list[FrameObservations],
                        config: ReferentConfig) -> list[FrameObjects]:
    """``find_referents`` over a batch of frames and their people (frames where nobody points get none)."""
    found = []
    for image, frame in zip(images, people):
        pointing = np.isfinite(frame.point_dir).all(axis=1) & (frame.point_conf > 0)
        found.append(find_referents(image, frame.point_origin[pointing], frame.point_dir[pointing], frame.xyxy, config)
                     if config.enabled and pointing.any() else FrameObjects.empty())
    return found


def _working_image(image: np.ndarray, config: ReferentConfig) -> np.ndarray:
    """The frame downscaled to ``working_side`` pixels on its longer side and smoothed so that texture (a
    pleated shade, fabric) does not split one thing into many regions while edges stay sharp."""
    scale = min(1.0, config.working_side / max(image.shape[:2]))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    return cv2.pyrMeanShiftFiltering(np.ascontiguousarray(small), config.smoothing_radius, config.smoothing_colour)


def _ray_pixels(origin: np.ndarray, direction: np.ndarray, width: int, height: int, reach: float) -> np.ndarray:
    """Integer pixels along the ray from ``origin`` until it leaves the frame or has gone ``reach`` x
    the frame diagonal."""
    norm = float(np.hypot(*direction))
    if norm < 1e-9:
        return np.zeros((0, 2), np.int64)
    steps = np.arange(0.0, reach * float(np.hypot(width, height)), 1.0)
    points = np.rint(origin[None, :] + steps[:, None] * (direction / norm)[None, :]).astype(np.int64)
    inside = (points[:, 0] >= 0) & (points[:, 0] < width) & (points[:, 1] >= 0) & (points[:, 1] < height)
    stop = np.argmin(inside) if not inside.all() else len(points)
    return points[:stop]


def _on_person(point: np.ndarray, people: np.ndarray) -> bool:
    return bool(np.any((people[:, 0] <= point[0]) & (point[0] <= people[:, 2])
                       & (people[:, 1] <= point[1]) & (point[1] <= people[:, 3])))


def _first_referent(grow_on, lab, origin, direction, people, config: ReferentConfig):
    """The first region along the ray that qualifies (``_qualifies``), or None."""
    height, width = grow_on.shape[:2]
    ray = _ray_pixels(origin, direction, width, height, config.max_reach)
    covered = np.zeros((height, width), bool)
    skip = int(round(config.fingertip_clearance * np.hypot(width, height)))
    for point in ray[skip:]:
        x, y = int(point[0]), int(point[1])
        if covered[y, x] or _on_person(point, people):
            continue
        region = _grow(grow_on, lab, x, y, config)
        covered |= region.mask
        if _qualifies(region, people, width, height, config):
            return region
    return None


def _grow(grow_on, lab, x: int, y: int, config: ReferentConfig) -> Region:
    """The uniform-colour region around pixel (x, y) and its contrast with a ring around it."""
    height, width = grow_on.shape[:2]
    mask = np.zeros((height + 2, width + 2), np.uint8)
    tolerance = (config.colour_tolerance,) * 3
    flags = 4 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (1 << 8)
    cv2.floodFill(grow_on, mask, (x, y), (0, 0, 0), tolerance, tolerance, flags)
    inside = mask[1:-1, 1:-1].astype(bool)
    ys, xs = np.nonzero(inside)
    box = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    ring_width = max(1, int(round(config.ring_width * np.hypot(width, height))))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * ring_width + 1, 2 * ring_width + 1))
    ring = cv2.dilate(inside.astype(np.uint8), kernel).astype(bool) & ~inside
    colour = lab[inside].mean(axis=0)
    contrast = float(np.linalg.norm(colour - lab[ring].mean(axis=0))) if ring.any() else 0.0
    alike = np.linalg.norm(lab - colour, axis=2) < config.same_colour_distance
    colour_share = float(np.count_nonzero(alike & ~inside)) / float(len(xs))
    return Region(inside, box, contrast, colour_share)


def _qualifies(region: Region, people: np.ndarray, width: int, height: int, config: ReferentConfig) -> bool:
    """A compact thing of plausible size that stands out from its surroundings, of a colour rare in the
    frame (a patch of a backpack, a floor or a table leg shares its colour with the rest of that thing),
    clear of people and of the frame border (a region cut by the border is background or a thing only
    partly seen)."""
    x1, y1, x2, y2 = region.box
    area = float(region.mask.sum())
    box_area = float((x2 - x1) * (y2 - y1))
    if not config.min_area <= area / (width * height) <= config.max_area:
        return False
    if x1 <= 0 or y1 <= 0 or x2 >= width or y2 >= height:
        return False
    if area / box_area < config.min_fill:
        return False
    if max(x2 - x1, y2 - y1) > config.max_elongation * min(x2 - x1, y2 - y1):
        return False
    if region.contrast < config.min_contrast:
        return False
    if region.colour_share > config.max_colour_share:
        return False
    if len(people) and float(box_intersection_matrix(people, region.box).max()) > config.max_person_overlap * box_area:
        return False
    return True
