"""Dense per-frame arrays of one video, built from its tracks (and objects) table.

Everything the detectors need is laid out as people x frames (x ...) NumPy arrays over the full range of
sampled frames, so relations between people and targets become array operations and Numba kernels.
A person absent from a frame has ``present = False`` and NaN / -1 values there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from detectors.observation import (
    GAZE_SOURCE_KEYPOINTS,
    LEFT_ELBOW,
    LEFT_SHOULDER,
    LEFT_WRIST,
    RIGHT_ELBOW,
    RIGHT_SHOULDER,
    RIGHT_WRIST,
)
from pipeline.schema import GAZE_TARGET_TYPES, POINT_TARGET_TYPES

REQUIRED_TRACK_COLUMNS = (
    "video_id", "frame_idx", "t", "shot_id", "person_id", "bbox", "gaze_conf", "gaze_target_type", "pointing",
)
GAZE_CODE = {name: code for code, name in enumerate(GAZE_TARGET_TYPES)}
POINT_CODE = {name: code for code, name in enumerate(POINT_TARGET_TYPES)}
MIN_KEYPOINT_SCORE = 0.3  # keypoints scored below this are treated as unseen


@dataclass
class TrackArrays:
    """One video's tracks as dense arrays. P people (sorted person ids), F frames, O objects."""

    video_id: str
    fps: float
    frame_idx: np.ndarray  # (F,) int64 sampled-frame index of each column
    times: np.ndarray  # (F,) float64 seconds
    end_times: np.ndarray  # (F,) float64 when each frame's stretch of time ends (see frame_end_times)
    shot_id: np.ndarray  # (F,) int64
    segment: np.ndarray  # (F,) int64 contiguous-shot label (changes exactly where shot_id changes)
    person_ids: np.ndarray  # (P,) int64
    present: np.ndarray  # (P, F) bool
    body_box: np.ndarray  # (P, F, 4) float64
    head_box: np.ndarray  # (P, F, 4)
    gaze_type: np.ndarray  # (P, F) int64 code into GAZE_TARGET_TYPES, -1 absent
    gaze_id: np.ndarray  # (P, F) int64, -1 null
    gaze_conf: np.ndarray  # (P, F) float64
    # (P, F) bool: the gaze was read from body keypoints alone (head yaw, no pitch, eyes unseen), not the face
    gaze_from_keypoints: np.ndarray
    gaze_point: np.ndarray  # (P, F, 2)
    gaze_dir: np.ndarray  # (P, F, 3) unit gaze direction in the camera frame, NaN where none was read
    pointing: np.ndarray  # (P, F) bool
    point_conf: np.ndarray  # (P, F) float64
    point_type: np.ndarray  # (P, F) int64 code into POINT_TARGET_TYPES, -1 null
    point_id: np.ndarray  # (P, F) int64
    hand_boxes: np.ndarray  # (P, F, 2, 4), hand 0 = left, 1 = right
    hand_open: np.ndarray  # (P, F, 2)
    shoulder: np.ndarray  # (P, F, 2, 2) per arm (0 left, 1 right) x, y
    elbow: np.ndarray  # (P, F, 2, 2)
    wrist: np.ndarray  # (P, F, 2, 2)
    object_ids: np.ndarray  # (O,) int64
    object_labels: list[str]
    object_boxes: np.ndarray  # (O, F, 4)
    object_holder: np.ndarray  # (O, F) int64 person_id from the objects table, -1 none

    @property
    def n_people(self) -> int:
        return len(self.person_ids)

    @property
    def n_frames(self) -> int:
        return len(self.times)

    def frames(self, seconds: float) -> int:
        """A duration in seconds as a whole number of sampled frames (at least 0)."""
        return max(0, int(np.floor(seconds * self.fps + 1e-6)))

    def min_frames(self, seconds: float, min_samples: int = 1) -> int:
        """Fewest frames whose covered time (n / fps) reaches ``seconds``, and at least ``min_samples``."""
        return max(1, int(min_samples), int(np.ceil(seconds * self.fps - 1e-6)))


def _column(table: pa.Table, name: str) -> pa.Array:
    column = table.column(name)
    if isinstance(column, pa.ChunkedArray):
        # a single chunk is used as is: combine_chunks would copy it
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def _list_layout(array: pa.Array) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """Where each row's values lie in the list column's child array: (start offset, length, child).
    Null rows get length 0. Works on sliced arrays (offsets are absolute positions in the child)."""
    n = len(array)
    if pa.types.is_fixed_size_list(array.type):
        size = array.type.list_size
        starts = (array.offset + np.arange(n, dtype=np.int64)) * size
        lengths = np.full(n, size, np.int64)
    else:
        offsets = np.asarray(array.offsets).astype(np.int64)
        starts, lengths = offsets[:-1], np.diff(offsets)
    if array.null_count:
        lengths = np.where(np.asarray(array.is_valid()), lengths, 0)
    return starts, lengths, array.values


def _gather(starts: np.ndarray, lengths: np.ndarray, values: np.ndarray, width: int, positions: np.ndarray) -> np.ndarray:
    """Rows of a flattened list column as (n, len(positions)) float64: row i holds
    ``values[starts[i] + positions]`` when it has at least ``width`` values, NaN otherwise."""
    n = len(starts)
    if n and (lengths == width).all() and (n == 1 or (np.diff(starts) == width).all()):
        # the common case: consecutive rows of exactly ``width`` values, a reshape of the child array
        block = values[starts[0] : starts[0] + n * width].reshape(n, width)
        if len(positions) == width and (positions == np.arange(width)).all():
            return block.astype(np.float64)
        if (np.diff(positions) == 1).all():  # a contiguous range of entries: a slice, not a gather
            return block[:, positions[0] : positions[-1] + 1].astype(np.float64)
        return block[:, positions].astype(np.float64)
    out = np.full((n, len(positions)), np.nan)
    good = lengths >= width
    if good.any():
        out[good] = values[starts[good][:, None] + positions[None, :]]
    return out


def _list_matrix(array: pa.Array, width: int, positions: tuple[int, ...] | None = None) -> np.ndarray:
    """A list<float> column as (n, width) float64; null rows or rows shorter than width become NaN.
    With ``positions``, only those entries of each row: (n, len(positions)) (rows still need ``width``).
    Vectorised over the column's offsets: no per-row Python."""
    cols = np.arange(width) if positions is None else np.asarray(positions, np.int64)
    if len(array) == 0:
        return np.full((0, len(cols)), np.nan)
    starts, lengths, child = _list_layout(array)
    values = child.to_numpy(zero_copy_only=False)  # zero-copy unless the child has nulls (-> NaN)
    return _gather(starts, lengths, values, width, cols)


def _hand_boxes(array: pa.Array) -> np.ndarray:
    """list<list<float32, 4>> per row -> (n, 2, 4) float64; missing hands NaN."""
    n = len(array)
    if n == 0:
        return np.full((0, 2, 4), np.nan)
    starts, n_hands, boxes = _list_layout(array)
    box_starts, box_lengths, child = _list_layout(boxes)
    values = child.to_numpy(zero_copy_only=False)
    cols = np.arange(4)
    if (n_hands == 2).all() and (n == 1 or (np.diff(starts) == 2).all()):
        # every row has both hands, stored one after the other: gather all 2n boxes at once
        rows = np.arange(starts[0], starts[0] + 2 * n)
        return _gather(box_starts[rows], box_lengths[rows], values, 4, cols).reshape(n, 2, 4)
    out = np.full((n, 2, 4), np.nan)
    for hand in range(2):
        has = n_hands > hand
        if has.any():
            rows = starts[has] + hand
            out[has, hand] = _gather(box_starts[rows], box_lengths[rows], values, 4, cols)
    return out


def _codes(array: pa.Array, vocabulary: tuple[str, ...], column: str, video_id: str) -> np.ndarray:
    """String column -> int64 codes into ``vocabulary`` (-1 for null); unknown strings are an error."""
    codes = pc.index_in(array, value_set=pa.array(vocabulary))
    bad = pc.and_(pc.is_null(codes), pc.is_valid(array))
    if pc.any(bad).as_py():
        values = sorted(set(pc.filter(array, bad).to_pylist()))
        raise ValueError(f"tracks of video {video_id!r}: column {column!r} has values {values} outside {list(vocabulary)}")
    return codes.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _ints(array: pa.Array, null: int = -1) -> np.ndarray:
    return array.fill_null(null).to_numpy(zero_copy_only=False).astype(np.int64)


def _floats(array: pa.Array, null: float = np.nan) -> np.ndarray:
    return array.fill_null(null).to_numpy(zero_copy_only=False).astype(np.float64)


def infer_fps(frame_idx: np.ndarray, times: np.ndarray) -> float:
    """Sampling rate from per-frame times: 1 / median time step per frame index (1.0 with < 2 frames)."""
    order = np.argsort(frame_idx, kind="stable")
    frames, first = np.unique(frame_idx[order], return_index=True)
    t = times[order][first]
    if len(frames) < 2:
        return 1.0
    step = np.diff(t) / np.diff(frames)
    step = step[step > 0]
    if len(step) == 0:
        raise ValueError("tracks: times do not increase with frame_idx, cannot infer the sampling rate")
    return float(1.0 / np.median(step))


def frame_end_times(times: np.ndarray, fps: float, clip_duration: float | None,
                    shot_start: np.ndarray | None = None) -> np.ndarray:
    """When the stretch of time each sampled frame stands for ends: one sampling step after it, but never
    after the next sampled frame (so intervals that meet never overlap, whatever the pts jitter) nor after
    the clip's end. ``clip_duration`` None: the clip is taken to end one step after its last frame. A
    duration that ends before a frame (a header that undercounts) gives that frame no time, never a
    negative one. ``shot_start`` (per frame, when its shot began): the last frame of a shot ends at the
    cut, not at the next sample (what it stands for stops being on screen there)."""
    ends = times + 1.0 / fps
    if len(times) > 1:
        ends[:-1] = np.minimum(ends[:-1], times[1:])
        if shot_start is not None:
            cut = np.flatnonzero(np.isfinite(shot_start[1:]) & (shot_start[1:] > shot_start[:-1]))
            ends[cut] = np.maximum(np.minimum(ends[cut], shot_start[cut + 1]), times[cut])
    if clip_duration is not None:
        ends = np.maximum(np.minimum(ends, clip_duration), times)
    return ends


def tracks_to_arrays(tracks: pa.Table, objects: pa.Table | None = None, fps: float | None = None,
                     clip_duration: float | None = None) -> TrackArrays:
    """Lay one video's tracks (pipeline.schema.TRACKS_SCHEMA columns) out as dense arrays; ``clip_duration``
    (seconds, from the video's probe) bounds every frame's time (``end_times``).

    Raises ValueError naming the video and the reason when columns are missing, the table mixes videos,
    or values are outside their vocabulary."""
    missing = [name for name in REQUIRED_TRACK_COLUMNS if name not in tracks.column_names]
    if missing:
        raise ValueError(f"tracks table lacks required column(s) {missing}")
    video_ids = pc.unique(_column(tracks, "video_id")).to_pylist()
    if len(video_ids) > 1:
        raise ValueError(f"tracks table holds several videos {sorted(map(str, video_ids))[:5]}; pass one video at a time")
    video_id = str(video_ids[0]) if video_ids else ""

    frame_col = _ints(_column(tracks, "frame_idx"))
    time_col = _floats(_column(tracks, "t"))
    if np.isnan(time_col).any():
        raise ValueError(f"tracks of video {video_id!r}: column 't' has missing values")
    if fps is None:
        fps = infer_fps(frame_col, time_col) if len(frame_col) else 1.0
    if not fps > 0:
        raise ValueError(f"tracks of video {video_id!r}: sampling rate must be positive, got {fps}")
    if clip_duration is not None and not (np.isfinite(clip_duration) and clip_duration > 0):
        raise ValueError(f"tracks of video {video_id!r}: clip duration must be a positive number of seconds, got {clip_duration}")

    person_col = _ints(_column(tracks, "person_id"))
    person_ids = np.unique(person_col)
    first_frame = int(frame_col.min()) if len(frame_col) else 0
    n_frames = int(frame_col.max()) - first_frame + 1 if len(frame_col) else 0
    frame_idx = np.arange(first_frame, first_frame + n_frames, dtype=np.int64)
    p = np.searchsorted(person_ids, person_col)
    f = frame_col - first_frame
    n_people = len(person_ids)

    # per-frame time and shot: known frames from the rows, frames where nobody was seen interpolated
    times = np.full(n_frames, np.nan)
    times[f] = time_col
    shot_col = _ints(_column(tracks, "shot_id"), 0)
    shot = np.full(n_frames, -1, np.int64)
    shot[f] = shot_col
    known = ~np.isnan(times)
    if n_frames and not known.all():
        times[~known] = np.interp(frame_idx[~known], frame_idx[known], times[known])
        last = np.maximum.accumulate(np.where(known, np.arange(n_frames), 0))
        shot = shot[last]
    shot_start = None
    if "shot_start_t" in tracks.column_names:  # tracks written before cuts were timed lack it
        shot_start = np.full(n_frames, np.nan)
        shot_start[f] = _floats(_column(tracks, "shot_start_t"))
        if n_frames and not known.all():
            shot_start = shot_start[last]
    if n_frames > 1 and (np.diff(times) <= 0).any():
        raise ValueError(f"tracks of video {video_id!r}: times 't' must increase with frame_idx")
    segment = np.concatenate([[0], np.cumsum(shot[1:] != shot[:-1])]).astype(np.int64) if n_frames else shot.copy()

    cell = p * n_frames + f  # flat (person, frame) cell of each row
    seen_cell = np.zeros(n_people * n_frames, bool)
    seen_cell[cell] = True
    empty_cell = np.flatnonzero(~seen_cell)

    def dense(values: np.ndarray, fill: float | int | bool, dtype) -> np.ndarray:
        # every cell is written once: the fill only where nobody was seen, the rest from the rows
        out = np.empty((n_people, n_frames) + values.shape[1:], dtype=dtype)
        flat = out.reshape((n_people * n_frames,) + values.shape[1:])
        flat[empty_cell] = fill
        flat[cell] = values
        return out

    columns = set(tracks.column_names)

    def optional_matrix(name: str, width: int, positions: tuple[int, ...] | None = None) -> np.ndarray:
        if name not in columns:
            return np.full((len(person_col), width if positions is None else len(positions)), np.nan)
        return _list_matrix(_column(tracks, name), width, positions)

    present = dense(np.ones(len(person_col), bool), False, bool)
    body_box = dense(_list_matrix(_column(tracks, "bbox"), 4), np.nan, np.float64)
    head_box = dense(optional_matrix("head_bbox", 4), np.nan, np.float64)
    gaze_point = dense(optional_matrix("gaze_point", 2), np.nan, np.float64)
    gaze_dir = dense(optional_matrix("gaze_dir", 3), np.nan, np.float64)
    gaze_type = dense(_codes(_column(tracks, "gaze_target_type"), GAZE_TARGET_TYPES, "gaze_target_type", video_id), -1, np.int64)
    gaze_id = dense(_ints(_column(tracks, "gaze_target_id")) if "gaze_target_id" in columns else np.full(len(p), -1), -1, np.int64)
    gaze_conf = dense(_floats(_column(tracks, "gaze_conf"), 0.0), 0.0, np.float64)
    from_keypoints = (pc.fill_null(pc.equal(_column(tracks, "gaze_source"), GAZE_SOURCE_KEYPOINTS), False)
                      .to_numpy(zero_copy_only=False) if "gaze_source" in columns else np.zeros(len(p), bool))
    gaze_from_keypoints = dense(from_keypoints.astype(bool), False, bool)
    pointing = dense(_column(tracks, "pointing").fill_null(False).to_numpy(zero_copy_only=False).astype(bool), False, bool)
    point_conf = dense(_floats(_column(tracks, "point_conf"), 0.0) if "point_conf" in columns else np.zeros(len(p)), 0.0, np.float64)
    point_type = dense(
        _codes(_column(tracks, "point_target_type"), POINT_TARGET_TYPES, "point_target_type", video_id)
        if "point_target_type" in columns else np.full(len(p), -1),
        -1, np.int64,
    )
    point_id = dense(_ints(_column(tracks, "point_target_id")) if "point_target_id" in columns else np.full(len(p), -1), -1, np.int64)
    hands = _hand_boxes(_column(tracks, "hand_bboxes")) if "hand_bboxes" in columns else np.full((len(p), 2, 4), np.nan)
    hand_boxes = dense(hands, np.nan, np.float64)
    hand_open = dense(optional_matrix("hand_open", 2), np.nan, np.float64)

    # only the arm joints of the COCO-17 (x, y, score) keypoints are used: read just those 18 values
    joints = (LEFT_SHOULDER, RIGHT_SHOULDER, LEFT_ELBOW, RIGHT_ELBOW, LEFT_WRIST, RIGHT_WRIST)
    keypoints = optional_matrix("keypoints", 51, tuple(3 * j + c for j in joints for c in range(3))).reshape(-1, 6, 3)
    seen = keypoints[..., 2] >= MIN_KEYPOINT_SCORE
    xy = keypoints[..., :2].copy()
    xy[~seen] = np.nan
    shoulder = dense(xy[:, 0:2], np.nan, np.float64)
    elbow = dense(xy[:, 2:4], np.nan, np.float64)
    wrist = dense(xy[:, 4:6], np.nan, np.float64)

    object_ids, object_labels, object_boxes, object_holder = _object_arrays(objects, video_id, first_frame, n_frames)
    return TrackArrays(
        video_id=video_id, fps=float(fps), frame_idx=frame_idx, times=times,
        end_times=frame_end_times(times, float(fps), clip_duration, shot_start), shot_id=shot, segment=segment,
        person_ids=person_ids, present=present, body_box=body_box, head_box=head_box, gaze_type=gaze_type,
        gaze_id=gaze_id, gaze_conf=gaze_conf, gaze_from_keypoints=gaze_from_keypoints, gaze_point=gaze_point,
        gaze_dir=gaze_dir,
        pointing=pointing, point_conf=point_conf, point_type=point_type, point_id=point_id, hand_boxes=hand_boxes,
        hand_open=hand_open,
        shoulder=shoulder, elbow=elbow, wrist=wrist, object_ids=object_ids, object_labels=object_labels,
        object_boxes=object_boxes, object_holder=object_holder,
    )


def _object_arrays(objects: pa.Table | None, video_id: str, first_frame: int, n_frames: int):
    """Objects table -> ids, labels (most frequent per id), (O, F, 4) boxes, (O, F) holder person ids."""
    if objects is None or objects.num_rows == 0:
        return np.zeros(0, np.int64), [], np.full((0, n_frames, 4), np.nan), np.full((0, n_frames), -1, np.int64)
    missing = [c for c in ("frame_idx", "object_id", "label", "bbox") if c not in objects.column_names]
    if missing:
        raise ValueError(f"objects table of video {video_id!r} lacks column(s) {missing}")
    if "video_id" in objects.column_names:
        others = set(pc.unique(_column(objects, "video_id")).to_pylist()) - {video_id}
        if others and video_id:
            raise ValueError(f"objects table holds rows of other videos {sorted(others)[:5]} than {video_id!r}")
    frame = _ints(_column(objects, "frame_idx")) - first_frame
    object_col = _ints(_column(objects, "object_id"))
    keep = (frame >= 0) & (frame < n_frames)
    object_ids = np.unique(object_col)
    o = np.searchsorted(object_ids, object_col)
    boxes = np.full((len(object_ids), n_frames, 4), np.nan)
    boxes[o[keep], frame[keep]] = _list_matrix(_column(objects, "bbox"), 4)[keep]
    holder = np.full((len(object_ids), n_frames), -1, np.int64)
    if "holder_id" in objects.column_names:
        holder[o[keep], frame[keep]] = _ints(_column(objects, "holder_id"))[keep]
    labels_col = np.asarray(_column(objects, "label").to_pylist(), dtype=object)
    labels = []
    for k in range(len(object_ids)):
        names, counts = np.unique(labels_col[o == k].astype(str), return_counts=True)
        labels.append(str(names[np.argmax(counts)]))
    return object_ids, labels, boxes, holder
