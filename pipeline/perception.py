"""Perception for one clip: video -> identity-consistent person tracks with gaze and pointing targets.

``PerceptionWorker`` is a callable class (Ray Data style): models load once in ``__init__``, each call
handles one clip and returns Arrow tables only. Frames stream through: each batch of sampled frames is
detected, described (torso colours) and fed to the shot detector, then released, so memory does not
grow with the length of the video; only the small per-frame observations are kept for tracking.

Stages (timed in ``PerceptionResult.timings``): decode (including colour conversion and resizing),
shots, detect (finding people), refine (face mesh / hands on their crops, when the backend reports it
apart), objects (only with ``--object-weights``), referents (the thing pointed at, on pointing frames:
detectors/referents.py), track (appearance, tracker, stitching), gaze
(gap filling and target association), table, total.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Iterator, Optional

import numpy as np
import pyarrow as pa

from detectors.gaze import face_keypoints_seen
from detectors.objects import FrameObjects
from detectors.observation import GAZE_SOURCE_FACE_MESH, GAZE_SOURCE_KEYPOINTS, FrameObservations
from detectors.referents import REFERENT_LABEL, referents_in_frames
from pipeline import schema
from pipeline.camera_motion import CameraPath, shot_relative
from pipeline.clip import ClipSpec, PerceptionResult
from pipeline.config import Config
from pipeline.prefetch import Prefetcher
from pipeline.picture import coded_window, displayed_moves, find_picture, picture_aspect
from pipeline.video import SampledFrame, ShotDetector, VideoError, iter_frames, probe
from tracking.appearance import appearance_descriptors
from tracking.gaze_gaps import fill_gaze_gaps
from tracking.gaze_smoothing import smooth_gaze_directions
from tracking.objects import assign_object_ids, carry_objects
from tracking.faces import FaceBank
from tracking.stitching import assign_person_ids

__all__ = ["PerceptionWorker", "VideoError", "build_identities_table", "build_objects_table", "build_tracks_table"]

log = logging.getLogger("socialtrace")

# a segment decodes this many sampling steps past its end for the shot detector alone: it judges a frame
# once it has seen the next ShotDetector.WINDOW decoded frames, which two steps cover at any native rate
SHOT_LOOKAHEAD_FRAMES = 2
# pipeline.video's tolerance for "at or after an instant" (pts rounding)
_PTS_EPSILON_S = 1e-3
# an object is held by the person whose hand box covers at least this share of the hand box
_HOLD_MIN_HAND_SHARE = 0.3


def detector_for(config: Config):
    """The person detector of ``config``, given its own sections and the sampling it will see."""
    from detectors import create_detector

    return create_detector(
        config.detector, config.gaze, config.pointing, fps=config.sampling.fps,
        max_side=config.sampling.max_side, threads=config.run.perception_thread_count(),
        inference_threads=config.run.perception_threads,
    )


class PerceptionWorker:
    """Decode, detect, track and associate targets for one clip at a time."""

    def __init__(self, config: Config):
        self.config = config
        self.detector = detector_for(config)
        self.backend = getattr(self.detector, "name", type(self.detector).__name__)
        self.on_frames = None  # optional callable(n): n more sampled frames were detected (progress display)
        self.object_detector = None
        self.face_describer = None
        if config.tracking.face_min_head_pixels > 0:  # faces for re-identification (tracking/faces.py)
            from detectors.face_identity import FaceDescriber

            self.face_describer = FaceDescriber()
        if config.detector.object_weights:
            from detectors.objects import ObjectDetector

            self.object_detector = ObjectDetector(config.detector)

    def close(self) -> None:
        """Release the detector's models and threads (use ``contextlib.closing``)."""
        self.detector.close()

    def __call__(self, clip: ClipSpec) -> PerceptionResult:
        """Run perception on ``clip``; raises VideoError when its video cannot be read."""
        timings: dict[str, float] = defaultdict(float)
        started = time.perf_counter()
        sampling = self.config.sampling

        with _timed(timings, "decode"):
            info = probe(clip.uri)
            # perception sees the picture alone, never black bars or a fill (pipeline/picture.py)
            picture = find_picture(clip.uri)
        stored_picture = coded_window(picture, info.rotation)  # what readers of the raw decoded frames crop
        shots = ShotDetector(threshold=sampling.scene_threshold, min_seconds=sampling.scene_min_seconds,
                             min_change=sampling.scene_min_change,
                             min_change_contrast=sampling.scene_min_change_contrast, window=stored_picture)
        camera = CameraPath(stored_picture) if self.config.tracking.camera_motion else None
        observations: list[FrameObservations] = []
        objects: list[FrameObjects] = []
        referents: list[FrameObjects] = []
        times: list[float] = []
        native_idx: list[int] = []
        batch: list[SampledFrame] = []
        faces = (FaceBank(self.face_describer, self.config.tracking.face_min_head_pixels,
                          self.config.tracking.face_chips_per_tracklet)
                 if self.face_describer is not None else None)
        # closing(): the container is released even when detection fails halfway through the clip
        # decoding runs a batch ahead in a background thread, overlapping detection of the batch before
        # A clip that ends before the video does (a segment of a long one) decodes a few frames past its
        # end for the shot detector alone, so that a cut in its last frames is judged as in a whole run.
        decode_end = None if clip.end_s is None else clip.end_s + SHOT_LOOKAHEAD_FRAMES / sampling.fps
        # every decoded frame (not only the sampled ones) goes to the shot detector, in the decode thread
        # a clip that runs to the video's end also samples its last frame (iter_frames' sample_end)
        # ...and to the camera-move estimate (pipeline/camera_motion.py), in the same pass
        decode = partial(iter_frames, clip.uri, sampling.fps, sampling.max_side, clip.start_s, decode_end,
                         on_decoded=shots.push_frame if camera is None else _both(shots.push_frame, camera.push_frame),
                         sample_end=True, window=picture)
        depth = 2 * max(1, self.config.detector.batch_size)
        with closing(Prefetcher(decode, depth)) as frames:
            while True:
                with _timed(timings, "decode"):
                    frame = next(frames, None)
                if frame is not None:
                    if clip.end_s is not None and clip.start_s + frame.t >= clip.end_s - _PTS_EPSILON_S:
                        continue  # look-ahead frame: seen by the shot detector only
                    batch.append(frame)
                    times.append(frame.t)
                    native_idx.append(frame.native_frame_idx)
                if batch and (frame is None or len(batch) >= max(1, self.config.detector.batch_size)):
                    seen = self._observe(batch, timings)
                    if faces is not None:
                        with _timed(timings, "face_chips"):
                            for k, (sampled, frame_seen) in enumerate(zip(batch, seen)):
                                faces.add_frame(len(observations) + k, sampled.image, frame_seen)
                    observations.extend(seen)
                    with _timed(timings, "referents"):
                        referents.extend(referents_in_frames([f.image for f in batch], seen, self.config.referents))
                    if self.on_frames is not None:
                        self.on_frames(len(batch))
                    if self.object_detector is not None:
                        with _timed(timings, "objects"):
                            objects.extend(self.object_detector.detect([f.image for f in batch]))
                    batch = []  # the images are released here
                if frame is None:
                    break

        if not times:
            raise VideoError(clip.uri, f"no frames in [{clip.start_s:.2f}, {clip.end_s:.2f}) s")
        times_array = np.asarray(times, np.float64)
        shots.finish()
        shot_ids = shots.shot_ids(times_array)
        shot_starts = shots.shot_starts(times_array)
        objects = _with_referents(objects, referents, times_array, shot_ids, self.config.referents.carry_seconds)
        with _timed(timings, "track"):
            camera_moves = (shot_relative(displayed_moves(camera.offsets(times_array, shots.cut_times()), info.rotation),
                                          shot_ids) if camera is not None else None)
            people = assign_person_ids(observations, times_array, shot_ids, self.config.tracking, self.config.sampling.fps,
                                       faces, camera_moves)
            object_ids = (assign_object_ids(objects, shot_ids, self.config.tracking, self.config.sampling.fps,
                                            self.config.detector.object_conf, camera_moves)
                          if objects is not None else None)
        if faces is not None:  # described inside stitching, only for the tracklets it asked about
            timings["track"] -= faces.describe_seconds
            timings["face_describe"] = faces.describe_seconds
            timings["faces_described"] = float(faces.n_described)
        with _timed(timings, "gaze"):
            smooth_gaze_directions(people, times_array, shot_ids, self.config.gaze.smooth_seconds)
            filled = fill_gaze_gaps(people, times_array, shot_ids, self.config.gaze)
            found = (objects, object_ids) if object_ids is not None else None
            targets = associate_targets(people, picture_aspect(info.width, info.height, picture), self.config,
                                        times_array, shot_ids, objects=found)
        with _timed(timings, "table"):
            tracks = build_tracks_table(
                clip.video_id, people, times_array, np.asarray(native_idx), shot_ids, filled, targets, shot_starts
            )
            frames = schema.table_from_rows(
                [{"frame_idx": k, "t": float(t), "native_frame_idx": int(n), "shot_id": int(s), "shot_start_t": float(b)}
                 for k, (t, n, s, b) in enumerate(zip(times, native_idx, shot_ids, shot_starts))],
                schema.SAMPLED_FRAMES_SCHEMA,
            )
            identities = build_identities_table(people)
            objects_table = (build_objects_table(clip.video_id, objects, object_ids, people, times_array)
                             if object_ids is not None else None)
        timings["total"] = time.perf_counter() - started
        return PerceptionResult(
            clip=clip,
            info=info,
            tracks=tracks,
            objects=objects_table,
            n_frames=len(times),
            timings=dict(timings),
            backend=self.backend,
            frames=frames,
            identities=identities,
            picture=picture,
        )

    def _observe(self, batch: list[SampledFrame], timings: dict[str, float]) -> list[FrameObservations]:
        """Detect people in a batch of frames and attach their appearance descriptors."""
        images = [f.image for f in batch]
        refined_before = getattr(self.detector, "refine_seconds", None)
        with _timed(timings, "detect"):
            observations = self.detector.detect(images)
        if refined_before is not None:
            refine = self.detector.refine_seconds - refined_before
            timings["detect"] -= refine
            timings["refine"] += refine
        if len(observations) != len(images):
            raise RuntimeError(f"detector {self.backend} returned {len(observations)} results for {len(images)} frames")
        with _timed(timings, "track"):
            for image, frame in zip(images, observations):
                frame.appearance = appearance_descriptors(image, frame.xyxy, frame.keypoints)
        return observations


def _with_referents(detected: list[FrameObjects], referents: list[FrameObjects], times: np.ndarray,
                    shot_ids: np.ndarray, carry_seconds: float) -> Optional[list[FrameObjects]]:
    """Per frame, the object model's objects (when it ran) and the referents found (carried over
    ``carry_seconds`` within the shot); None when there are neither, so no objects table is written."""
    if not any(len(f) for f in referents):
        return detected if detected else None
    referents = carry_objects(referents, times, shot_ids, carry_seconds)
    if not detected:
        return referents
    return [FrameObjects.concat([d, r]) for d, r in zip(detected, referents)]


def _both(first, second):
    """One decoded-frame callback that feeds two readers."""
    def feed(t, frame):
        first(t, frame)
        second(t, frame)
    return feed


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the wall time of a ``with`` block to ``timings[stage]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] += time.perf_counter() - start


# --- targets ------------------------------------------------------------------------------------


@dataclass
class FrameTargets:
    """Gaze and pointing targets of one frame's people (one entry per row)."""

    gaze_type: list[str]
    gaze_id: list[Optional[int]]
    gaze_point: np.ndarray  # (N, 2) float32, NaN when unknown
    gaze_dir: np.ndarray  # (N, 3) float32: the direction the target was read along (NaN without a gaze)
    pointing: np.ndarray  # (N,) bool
    point_type: list[Optional[str]]
    point_id: list[Optional[int]]


def associate_targets(
    people: list[FrameObservations], aspect: float, config: Config,
    times: Optional[np.ndarray] = None, shot_ids: Optional[np.ndarray] = None, *,
    objects: tuple[list[FrameObjects], list[np.ndarray]] | None = None,
) -> list[FrameTargets]:
    """Per-frame gaze and pointing targets of every person, over the whole clip at once
    (events.geometry's Numba association). ``aspect`` = displayed frame width / height; with the
    frames' ``times`` and ``shot_ids``, gaze targets that do not hold over neighbouring frames
    become unknown (``gaze.target_stable_seconds``, widened to reach the neighbouring samples:
    ``geometry.stability_window``); ``objects`` = (per-frame objects, their object ids) when an object
    detector or the referent finder found any (ids < 0 are ignored); a gaze that hits nothing then counts
    on the object its owner points at when it passes near it (``geometry.gaze_on_pointed_objects``)."""
    from events import geometry

    counts = [len(frame) for frame in people]
    if sum(counts) == 0:
        return [FrameTargets([], [], np.zeros((0, 2), np.float32), np.zeros((0, 3), np.float32), np.zeros(0, bool),
                             [], []) for _ in people]
    merged = FrameObservations.merge(people)
    frame_index = np.repeat(np.arange(len(people)), counts)
    person = merged.tracker_id.astype(np.int64)
    hands = merged.hand_xyxy.reshape(-1, 4)
    hand_owner = np.repeat(person, merged.hand_xyxy.shape[1])
    hand_frame = np.repeat(frame_index, merged.hand_xyxy.shape[1])
    object_boxes = object_id = object_frame = None
    if objects is not None:
        frames, ids = objects
        object_boxes = np.concatenate([f.xyxy for f in frames] + [np.zeros((0, 4), np.float32)])
        object_id = np.concatenate([i for i in ids] + [np.zeros(0, np.int32)]).astype(np.int64)
        object_frame = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
        labels = np.concatenate([f.label for f in frames] + [np.zeros(0, dtype=object)])
        claimed = object_id >= 0
        object_boxes, object_id, object_frame = object_boxes[claimed], object_id[claimed], object_frame[claimed]
        referent_ids = np.unique(object_id[labels[claimed] == REFERENT_LABEL])
    gaze = config.gaze
    pointing = np.isfinite(merged.point_dir).all(axis=1) & (merged.point_conf > 0)
    point_code, point_id, _ = geometry.assign_point_targets(
        frame_index, merged.point_origin, merged.point_dir, pointing, person,
        merged.xyxy, person, frame_index, hands, hand_owner, hand_frame,
        object_boxes, object_id, object_frame,
        aspect=aspect,
        cone_half_angle_deg=config.pointing.cone_half_angle_deg,
    )
    head_only = merged.gaze_source == GAZE_SOURCE_KEYPOINTS
    back_view = ~face_keypoints_seen(merged.keypoints)
    with_times = times is not None and shot_ids is not None
    # each row's time and shot, for the rules that look at a person's neighbouring samples
    row_times = np.asarray(times)[frame_index] if with_times else None
    row_shots = np.asarray(shot_ids)[frame_index] if with_times else None

    # a face whose eyes are too small to read gives the head's direction, and the eyes may look up to this far
    # from it (gaze.unread_eyes_uncertainty_deg, growing as the eye cues fade); 0 where the eyes were read
    unread = (merged.gaze_source == GAZE_SOURCE_FACE_MESH) & (merged.gaze_eye_cues < 1.0)
    eye_range = np.where(unread, gaze.unread_eyes_uncertainty_deg * (1.0 - merged.gaze_eye_cues), 0.0)
    # ... down onto one's own hands too: a head bowed 30 degrees over them, its eyes unread, may be looking at
    # them, so they are a candidate from that much less than own_hands_min_pitch_deg (and where the reads
    # within the range disagree, the rules below leave the row unknown rather than "elsewhere")
    own_hands_pitch = gaze.own_hands_min_pitch_deg - eye_range

    def gaze_targets(direction: np.ndarray):
        """(code, id, point) of every row for these gaze directions: the association and the rules on it."""
        code, ids, point = geometry.assign_gaze_targets(
            frame_index, merged.gaze_origin, direction, merged.gaze_conf, person,
            merged.head_xyxy, person, frame_index, hands, hand_owner, hand_frame,
            object_boxes, object_id, object_frame,
            aspect=aspect,
            cone_half_angle_deg=gaze.cone_half_angle_deg,
            camera_max_angle_deg=gaze.camera_max_angle_deg,
            min_conf=gaze.min_conf,
            reach=gaze.point_reach,
            max_miss=gaze.target_max_miss,
            own_hands_min_pitch_deg=own_hands_pitch,
            hands_at_face_margin=gaze.hands_at_face_margin,
        )
        code, ids = geometry.head_only_targets(
            code, ids, head_only, back_view, merged.gaze_origin, frame_index, person,
            merged.head_xyxy, merged.xyxy, aspect=aspect, max_heads=gaze.head_only_max_target_heads,
        )
        if with_times and object_boxes is not None:
            code, ids = geometry.gaze_on_pointed_objects(
                row_times, frame_index, person, row_shots, code, ids,
                merged.gaze_origin, direction, point_code, point_id, merged.head_xyxy, person, frame_index,
                object_boxes, object_id, object_frame, aspect=aspect,
                max_angle_deg=gaze.pointed_object_max_angle_deg, hold_seconds=gaze.pointed_object_hold_seconds,
            )
            # a referent's box is the part of a thing the *pointing* ray crossed, not where the gaze lands:
            # its gaze points stay the measured gaze step, so that gaze-point motion (sudden_gaze_shift)
            # follows the head and eyes, not which box the look was credited to
            on_referent = (code == geometry.GAZE_OBJECT) & np.isin(ids, referent_ids)
            point[on_referent] = geometry.gaze_step_points(
                merged.gaze_origin[on_referent], direction[on_referent], aspect, gaze.point_reach)
        return code, ids, point

    def turned_reads(degrees):
        """gaze_targets along each direction turned by ``degrees`` (scalar or per row) left, right, up and
        down: the reads, and their (4, R) codes and ids."""
        reads = [gaze_targets(turned.astype(np.float32)) for turned in geometry.turned_directions(merged.gaze_dir, degrees)]
        return reads, np.stack([r[0] for r in reads]), np.stack([r[1] for r in reads])

    gaze_code, gaze_id, gaze_point = gaze_targets(merged.gaze_dir)
    read_dir = merged.gaze_dir.copy()  # what each row's target was read along (the eyes may change it below)
    # each row's look with its eye cues read in full however small the eyes (its gaze where none was measured)
    has_eye_dir = np.isfinite(merged.gaze_eye_dir).all(axis=1)
    eye_dir = np.where(has_eye_dir[:, None], merged.gaze_eye_dir, merged.gaze_dir).astype(np.float32)
    uncertainty = np.where(head_only, gaze.keypoint_target_uncertainty_deg, gaze.target_uncertainty_deg)
    if with_times and np.any(uncertainty > 0):
        # the same decisions along directions turned within the read's uncertainty: where they differ, the
        # margin is inside the noise and the target settles on the look's firm neighbours
        reads, alt_code, alt_id = turned_reads(uncertainty)
        # a read from body keypoints has no elevation: one that reaches a person only at the edge of its
        # uncertainty (the head well above or below its level line) cannot name them on its own
        settled_code, settled_id, _ = geometry.settle_ambiguous_targets(
            row_times, person, row_shots, gaze_code, gaze_id, alt_code, alt_id, gaze.settle_seconds,
            direction=merged.gaze_dir, max_turn_deg=uncertainty,
            unsettled_unknown=head_only & (gaze_code == geometry.GAZE_PERSON),
        )
        changed = (settled_code != gaze_code) | (settled_id != gaze_id)
        for k in np.flatnonzero(changed & (settled_code != geometry.GAZE_UNKNOWN)).tolist():
            # the gaze point of the read that named the settled target
            for code, ids, point in reads:
                if code[k] == settled_code[k] and ids[k] == settled_id[k]:
                    gaze_point[k] = point[k]
                    break
        gaze_code, gaze_id = settled_code, settled_id
    if with_times and gaze.unread_eyes_uncertainty_deg > 0:
        # a face whose eyes are too small to read gives the head's direction; the eyes may look anywhere within
        # their usual range of it, and where that range holds another person than the one named, the read
        # cannot say who is looked at
        if unread.any():
            _, alt_code, alt_id = turned_reads(eye_range)
            other = unread & geometry.names_another_person(gaze_code, gaze_id, alt_code, alt_id)
            # ... but the eyes, read however small, may choose among the people that range holds: a cue too
            # weak to turn the look on its own still tells a look down at one's own hands from a level one at a
            # neighbour's (pyscenedetect_archive_two_women at half resolution: eyes 6 pixels wide, their lid
            # reads within 0.06 of the full-size ones'); it never names a target outside the head's range, nor
            # overrules the head where that range holds one person only
            eye_read = other & has_eye_dir
            if eye_read.any():
                eye_code, eye_id, eye_point = gaze_targets(eye_dir)
                in_range = ((eye_code == gaze_code) & (eye_id == gaze_id)) | (
                    (alt_code == eye_code[None, :]) & (alt_id == eye_id[None, :])).any(axis=0)
                chosen = eye_read & in_range & (eye_code != geometry.GAZE_UNKNOWN)
                gaze_point[chosen] = eye_point[chosen]
                read_dir[chosen] = eye_dir[chosen]
                other &= ~chosen
                gaze_code, gaze_id = np.where(chosen, eye_code, gaze_code), np.where(chosen, eye_id, gaze_id)
            gaze_code = np.where(other, geometry.GAZE_UNKNOWN, gaze_code)
            gaze_id = np.where(other, -1, gaze_id)
    if with_times and gaze.target_stable_seconds > 0:
        # a look that turned far from its neighbours' is a new look, not a flicker: how far, the eyes say too
        # (read however small: a glance into the lens between looks at hands turns the eyes more than the head)
        gaze_code, gaze_id = geometry.stable_targets(
            row_times, person, row_shots, gaze_code, gaze_id,
            geometry.stability_window(np.asarray(times), gaze.target_stable_seconds),
            direction=eye_dir, min_turn_deg=gaze.target_turn_keep_deg,
        )
    # rows made unknown after the association (keypoint-only limits, stability) have no gaze point
    gaze_point = np.where((gaze_code == geometry.GAZE_UNKNOWN)[:, None], np.nan, gaze_point).astype(np.float32)
    gaze_names = geometry.target_type_names(gaze_code, schema.GAZE_TARGET_TYPES)
    point_names = geometry.target_type_names(point_code, schema.POINT_TARGET_TYPES)
    targets = []
    for start, stop in zip(np.cumsum([0] + counts[:-1]), np.cumsum(counts)):
        rows = range(start, stop)
        targets.append(
            FrameTargets(
                gaze_type=[gaze_names[r] for r in rows],
                gaze_id=[int(gaze_id[r]) if gaze_id[r] >= 0 else None for r in rows],
                gaze_point=gaze_point[start:stop],
                gaze_dir=read_dir[start:stop],
                pointing=pointing[start:stop],
                point_type=[point_names[r] for r in rows],
                point_id=[int(point_id[r]) if point_id[r] >= 0 else None for r in rows],
            )
        )
    return targets


# --- the objects table --------------------------------------------------------------------------


def holder_of(box: np.ndarray, people: FrameObservations) -> Optional[int]:
    """The person whose hand box overlaps ``box`` most (at least ``_HOLD_MIN_HAND_SHARE`` of the hand
    box inside it), or None."""
    hands = people.hand_xyxy.reshape(-1, 4)
    if not len(hands):
        return None
    width = np.clip(np.minimum(hands[:, 2], box[2]) - np.maximum(hands[:, 0], box[0]), 0, None)
    height = np.clip(np.minimum(hands[:, 3], box[3]) - np.maximum(hands[:, 1], box[1]), 0, None)
    area = (hands[:, 2] - hands[:, 0]) * (hands[:, 3] - hands[:, 1])
    share = np.where(area > 0, width * height / np.where(area > 0, area, 1.0), 0.0)
    share = np.nan_to_num(share, nan=0.0)
    best = int(np.argmax(share))
    if share[best] < _HOLD_MIN_HAND_SHARE:
        return None
    return int(people.tracker_id[best // people.hand_xyxy.shape[1]])


def build_objects_table(
    video_id: str, objects: list[FrameObjects], object_ids: list[np.ndarray], people: list[FrameObservations],
    times: np.ndarray,
) -> pa.Table:
    """The objects table (exactly ``schema.OBJECTS_SCHEMA``): tracked objects only, rows sorted by
    (frame_idx, object_id), each with the person holding it when a hand overlaps it."""
    rows = []
    for position, (frame, ids) in enumerate(zip(objects, object_ids)):
        for row in np.argsort(ids, kind="stable"):
            if ids[row] < 0:
                continue
            rows.append({
                "video_id": video_id,
                "frame_idx": position,
                "t": float(times[position]),
                "object_id": int(ids[row]),
                "label": str(frame.label[row]),
                "bbox": frame.xyxy[row].tolist(),
                "conf": float(frame.confidence[row]),
                "holder_id": holder_of(frame.xyxy[row], people[position]),
            })
    return schema.table_from_rows(rows, schema.OBJECTS_SCHEMA) if rows else schema.empty_table(schema.OBJECTS_SCHEMA)


# --- the tracks table ---------------------------------------------------------------------------


def build_identities_table(people: list[FrameObservations]) -> pa.Table:
    """One row per person_id (``schema.IDENTITIES_SCHEMA``): the mean of the appearance descriptors
    perception already computed for their detections (unseen, all-zero descriptors left out) and the
    number of frames they are in. Segments of a long video are joined on these (pipeline/segments.py)."""
    sums: dict[int, np.ndarray] = {}
    seen: dict[int, int] = defaultdict(int)
    frames: dict[int, int] = defaultdict(int)
    for frame in people:
        for person, descriptor in zip(frame.tracker_id.tolist(), frame.appearance):
            frames[person] += 1
            if descriptor.size and float(descriptor.sum()) > 0:
                sums[person] = sums.get(person, 0) + descriptor.astype(np.float64)
                seen[person] += 1
    width = next((f.appearance.shape[1] for f in people if len(f)), 0)
    rows = [
        {"person_id": person,
         "appearance": (sums[person] / seen[person] if person in sums else np.zeros(width)).astype(np.float32).tolist(),
         "n_frames": frames[person]}
        for person in sorted(frames)
    ]
    return schema.table_from_rows(rows, schema.IDENTITIES_SCHEMA) if rows else schema.empty_table(schema.IDENTITIES_SCHEMA)


def _list_or_none(values: np.ndarray) -> Optional[list[float]]:
    values = np.asarray(values, np.float32)
    return None if not np.all(np.isfinite(values)) else values.tolist()


def build_tracks_table(
    video_id: str,
    people: list[FrameObservations],
    times: np.ndarray,
    native_frame_idx: np.ndarray,
    shot_ids: np.ndarray,
    gaze_filled: list[np.ndarray],
    targets: list[FrameTargets],
    shot_starts: Optional[np.ndarray] = None,
) -> pa.Table:
    """The tracks table (exactly ``schema.TRACKS_SCHEMA``), rows sorted by (frame_idx, person_id)."""
    rows = []
    for position, frame in enumerate(people):
        frame_targets = targets[position]
        for row in np.argsort(frame.tracker_id, kind="stable"):
            keypoints = frame.keypoints[row]
            has_keypoints = bool(np.any(keypoints[:, 2] > 0))
            hands_seen = np.all(np.isfinite(frame.hand_xyxy[row]), axis=1)
            pointing = bool(frame_targets.pointing[row])
            rows.append(
                {
                    "video_id": video_id,
                    "frame_idx": position,
                    "native_frame_idx": int(native_frame_idx[position]),
                    "t": float(times[position]),
                    "shot_id": int(shot_ids[position]),
                    "shot_start_t": float(shot_starts[position]) if shot_starts is not None else None,
                    "person_id": int(frame.tracker_id[row]),
                    "det_conf": float(frame.confidence[row]),
                    "bbox": np.clip(frame.xyxy[row], 0.0, 1.0).tolist(),
                    "head_bbox": _list_or_none(frame.head_xyxy[row]),
                    "keypoints": keypoints.reshape(-1).tolist() if has_keypoints else None,
                    "gaze_origin": _list_or_none(frame.gaze_origin[row]),
                    "gaze_dir": _list_or_none(frame_targets.gaze_dir[row]),
                    "gaze_source": frame.gaze_source[row] or None,
                    "gaze_filled": bool(gaze_filled[position][row]),
                    "gaze_conf": float(frame.gaze_conf[row]),
                    "gaze_point": _list_or_none(frame_targets.gaze_point[row]),
                    "gaze_target_type": frame_targets.gaze_type[row],
                    "gaze_target_id": frame_targets.gaze_id[row],
                    "pointing": pointing,
                    "point_dir": _list_or_none(frame.point_dir[row]) if pointing else None,
                    "point_origin": _list_or_none(frame.point_origin[row]) if pointing else None,
                    "point_conf": float(frame.point_conf[row]),
                    "point_target_type": frame_targets.point_type[row] if pointing else None,
                    "point_target_id": frame_targets.point_id[row] if pointing else None,
                    "hand_bboxes": (
                        [b.tolist() for b in frame.hand_xyxy[row]] if hands_seen.any() else None
                    ),
                    "hand_open": (
                        np.where(hands_seen, frame.hand_open[row], np.nan).tolist() if hands_seen.any() else None
                    ),
                }
            )
    return schema.table_from_rows(rows, schema.TRACKS_SCHEMA) if rows else schema.empty_table(schema.TRACKS_SCHEMA)
