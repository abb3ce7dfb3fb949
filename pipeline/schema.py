"""The single source of truth for every table socialtrace writes (DESIGN.md §4-5).

Every stage builds its output with these schemas (``table_from_rows`` / ``empty_table``) and every
reader can ``conform`` what it reads, so a column name or type lives in exactly one place.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pyarrow as pa

# --- value vocabularies (columns that hold one of a fixed set of strings) -----------------------

GAZE_SOURCES = ("face_mesh", "keypoints", "model")
GAZE_TARGET_TYPES = ("person", "hands", "object", "camera", "elsewhere", "unknown")
POINT_TARGET_TYPES = ("person", "hands", "object", "elsewhere")
EVENT_SOURCES = ("gaze", "gesture", "cross")
GAZE_EVENT_TYPES = (
    "gaze_at",
    "mutual_gaze",
    "joint_attention",
    "gaze_following",
    "attention_capture",
    "sudden_gaze_shift",
    "gaze_aversion",
)
GESTURE_EVENT_TYPES = ("pointing", "reaching", "showing", "giving")
CROSS_EVENT_TYPES = (
    "co_occur",
    "adjacent",
    "gaze_follows_gesture",
    "eye_contact_during_gesture",
    "gaze_gesture_alignment",
)
EVENT_TYPES_BY_SOURCE = {
    "gaze": GAZE_EVENT_TYPES,
    "gesture": GESTURE_EVENT_TYPES,
    "cross": CROSS_EVENT_TYPES,
}
EVENT_TARGET_TYPES = ("person", "object", "none")
STATUS_VALUES = ("ok", "failed", "skipped")

# --- tracks: one row per (sampled frame, person) ------------------------------------------------

TRACKS_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("frame_idx", pa.int32(), nullable=False),  # index among sampled frames
        pa.field("native_frame_idx", pa.int32(), nullable=False),  # index among decoded frames
        pa.field("t", pa.float64(), nullable=False),  # seconds from clip start, from pts
        pa.field("shot_id", pa.int32(), nullable=False),
        # when the row's shot began: the time of the cut's first decoded frame (0 for the first shot), so
        # events end at the cut itself, not at the sampled frame after it
        pa.field("shot_start_t", pa.float64(), nullable=True),
        pa.field("person_id", pa.int32(), nullable=False),
        pa.field("det_conf", pa.float32(), nullable=False),
        pa.field("bbox", pa.list_(pa.float32(), 4), nullable=False),  # xyxy, normalised
        pa.field("head_bbox", pa.list_(pa.float32()), nullable=True),  # xyxy, 4 values
        pa.field("keypoints", pa.list_(pa.float32()), nullable=True),  # COCO-17 x, y, score
        pa.field("gaze_origin", pa.list_(pa.float32()), nullable=True),  # x, y
        pa.field("gaze_dir", pa.list_(pa.float32()), nullable=True),  # unit x, y, z (z into scene)
        pa.field("gaze_source", pa.string(), nullable=True),
        # True when the gaze was bridged over a short gap (interpolated / carried), not measured
        pa.field("gaze_filled", pa.bool_(), nullable=True),
        pa.field("gaze_conf", pa.float32(), nullable=False),
        pa.field("gaze_point", pa.list_(pa.float32()), nullable=True),  # x, y
        pa.field("gaze_target_type", pa.string(), nullable=False),
        pa.field("gaze_target_id", pa.int32(), nullable=True),
        pa.field("pointing", pa.bool_(), nullable=False),
        pa.field("point_dir", pa.list_(pa.float32()), nullable=True),  # unit x, y in the image
        # where the pointing ray starts (fingertip / wrist, x, y), so render can draw the ray
        pa.field("point_origin", pa.list_(pa.float32()), nullable=True),
        pa.field("point_conf", pa.float32(), nullable=False),
        pa.field("point_target_type", pa.string(), nullable=True),
        pa.field("point_target_id", pa.int32(), nullable=True),
        # hands of this person (xyxy each, normalised) so "hands" targets and reaching can be recomputed
        pa.field("hand_bboxes", pa.list_(pa.list_(pa.float32(), 4)), nullable=True),
        pa.field("hand_open", pa.list_(pa.float32()), nullable=True),  # per hand, 1 = open palm
    ]
)

OBJECTS_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("frame_idx", pa.int32(), nullable=False),
        pa.field("t", pa.float64(), nullable=False),
        pa.field("object_id", pa.int32(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("bbox", pa.list_(pa.float32(), 4), nullable=False),
        pa.field("conf", pa.float32(), nullable=False),
        pa.field("holder_id", pa.int32(), nullable=True),  # person whose hand overlaps it, if any
    ]
)

# --- events: one row per event ------------------------------------------------------------------

EVENTS_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("event_id", pa.int64(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("event_type", pa.string(), nullable=False),
        pa.field("start_time", pa.float64(), nullable=False),
        pa.field("end_time", pa.float64(), nullable=False),
        pa.field("start_frame", pa.int32(), nullable=False),
        pa.field("end_frame", pa.int32(), nullable=False),
        pa.field("shot_id", pa.int32(), nullable=True),
        pa.field("persons_involved", pa.list_(pa.int32()), nullable=False),
        pa.field("initiator_id", pa.int32(), nullable=True),
        pa.field("target_type", pa.string(), nullable=True),
        pa.field("target_person_id", pa.int32(), nullable=True),
        pa.field("target_label", pa.string(), nullable=True),
        pa.field("leader_id", pa.int32(), nullable=True),
        pa.field("follower_id", pa.int32(), nullable=True),
        pa.field("lag_seconds", pa.float32(), nullable=True),
        pa.field("confidence", pa.float32(), nullable=False),
        pa.field("parent_event_ids", pa.list_(pa.int64()), nullable=False),
        pa.field("details", pa.string(), nullable=False),  # JSON, type-specific
    ]
)

# --- qa: one row per item -----------------------------------------------------------------------

GROUNDING_TYPE = pa.struct([pa.field("source", pa.string()), pa.field("persons", pa.list_(pa.int32()))])
REASONING_STEP_TYPE = pa.struct(
    [
        pa.field("text", pa.string()),
        pa.field("modality", pa.string()),
        pa.field("external_knowledge", pa.bool_()),
        pa.field("event_id", pa.int64()),
    ]
)

QA_SCHEMA = pa.schema(
    [
        pa.field("qa_id", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("category", pa.string(), nullable=False),
        pa.field("category_name", pa.string(), nullable=False),
        pa.field("difficulty", pa.string(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
        pa.field("options", pa.list_(pa.string()), nullable=False),
        pa.field("answer", pa.string(), nullable=False),
        pa.field("answer_text", pa.string(), nullable=False),
        pa.field("time_range", pa.list_(pa.float64(), 2), nullable=False),  # seconds from unit_start (see below)
        pa.field("source_event_ids", pa.list_(pa.int64()), nullable=False),
        pa.field("persons", pa.list_(pa.int32()), nullable=False),
        pa.field("grounding", pa.list_(GROUNDING_TYPE), nullable=False),
        pa.field("reasoning_trace", pa.list_(REASONING_STEP_TYPE), nullable=False),
        pa.field("template", pa.string(), nullable=True),  # question form within the category, e.g. T1.target
        # The QA unit (qa_gen/units.py: a GRASP-style clip of whole shots) the item is about. unit_start /
        # unit_end are VIDEO time (seconds from the video start, like the events table); every other time
        # of the item (question, options, answer_text, reasoning_trace texts, time_range) counts from
        # unit_start. Set on every item generate_qa makes; null only in tables written before units.
        pa.field("unit_id", pa.int32(), nullable=True),  # 0-based, in time order within the video
        pa.field("unit_start", pa.float64(), nullable=True),
        pa.field("unit_end", pa.float64(), nullable=True),
    ]
)

# --- frame labels (`socialtrace export --format frame-labels`, DESIGN.md §8b) ------------------
# One row per (sampled frame, person present), for probing frozen video encoders. The bools are null
# where the run cannot tell (the person's gaze is unknown, a pointing the tracks saw but no event confirmed).

FRAME_LABEL_SPLITS = ("train", "val", "test")
FRAME_LABELS_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("t", pa.float64(), nullable=False),  # seconds from the video start, from pts
        pa.field("frame_idx", pa.int32(), nullable=False),  # index among the video's DECODED frames (native)
        pa.field("sampled_frame_idx", pa.int32(), nullable=False),  # tracks' frame_idx
        pa.field("person_id", pa.int32(), nullable=False),
        pa.field("bbox", pa.list_(pa.float32(), 4), nullable=False),  # xyxy, normalised
        pa.field("head_bbox", pa.list_(pa.float32()), nullable=True),
        pa.field("gaze_target_type", pa.string(), nullable=False),  # GAZE_TARGET_TYPES; unknown stays unknown
        pa.field("gaze_target_id", pa.int32(), nullable=True),
        pa.field("in_eye_contact", pa.bool_(), nullable=True),  # inside a mutual_gaze event of this person
        pa.field("in_shared_attention", pa.bool_(), nullable=True),  # a member of a joint_attention event
        pa.field("pointing", pa.bool_(), nullable=True),  # inside a pointing event this person makes
        pa.field("pointing_target_type", pa.string(), nullable=True),  # person | hands | object | unknown
        pa.field("pointing_target_id", pa.int32(), nullable=True),
        pa.field("split", pa.string(), nullable=False),  # FRAME_LABEL_SPLITS, one per video
    ]
)

# --- perception's hand-over tables (not written to OUT: they let segments of a long video merge) --

SAMPLED_FRAMES_SCHEMA = pa.schema(
    [
        pa.field("frame_idx", pa.int32(), nullable=False),  # index among sampled frames
        pa.field("t", pa.float64(), nullable=False),  # seconds from clip start, from pts
        pa.field("native_frame_idx", pa.int32(), nullable=False),
        pa.field("shot_id", pa.int32(), nullable=False),
        pa.field("shot_start_t", pa.float64(), nullable=True),  # when the frame's shot began (cut time)
    ]
)

IDENTITIES_SCHEMA = pa.schema(
    [
        pa.field("person_id", pa.int32(), nullable=False),
        # mean torso colour descriptor (tracking.appearance) of the person's seen detections; all zero
        # when never seen well enough
        pa.field("appearance", pa.list_(pa.float32()), nullable=False),
        pa.field("n_frames", pa.int32(), nullable=False),  # sampled frames the person is in
    ]
)

# --- run bookkeeping ----------------------------------------------------------------------------

MANIFEST_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("uri", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string(), nullable=True),
        pa.field("duration_s", pa.float64(), nullable=True),
        pa.field("native_fps", pa.float64(), nullable=True),
        pa.field("width", pa.int32(), nullable=True),
        pa.field("height", pa.int32(), nullable=True),
        pa.field("rotation", pa.int32(), nullable=True),
        # the picture inside black bars (letterbox / pillarbox) or a blurred fill, normalised x0, y0, x1, y1 of
        # the displayed frame; null: neither. Perception, events and QA saw only this part (pipeline/picture.py)
        pa.field("picture", pa.list_(pa.float32(), 4), nullable=True),
        pa.field("n_frames", pa.int32(), nullable=True),  # sampled frames
        pa.field("n_persons", pa.int32(), nullable=True),
        pa.field("n_events", pa.int32(), nullable=True),
        pa.field("n_qa", pa.int32(), nullable=True),
        pa.field("wall_s", pa.float64(), nullable=True),
        pa.field("config_hash", pa.string(), nullable=True),
        pa.field("n_segments", pa.int32(), nullable=True),  # perceived as this many segments (long videos)
        # an input of the latest `socialtrace run` (false: a video an earlier run was given, kept with its data)
        pa.field("in_latest_run", pa.bool_(), nullable=True),
    ]
)

TABLES = {
    "tracks": TRACKS_SCHEMA,
    "objects": OBJECTS_SCHEMA,
    "events": EVENTS_SCHEMA,
    "qa": QA_SCHEMA,
}


def empty_table(schema: pa.Schema) -> pa.Table:
    """A zero-row table with exactly ``schema``."""
    return schema.empty_table()


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """Build a table from row dicts; missing nullable columns become null, extra keys are an error."""
    names = set(schema.names)
    for row in rows:
        extra = set(row) - names
        if extra:
            raise ValueError(f"unknown column(s) {sorted(extra)} for schema with {schema.names}")
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    return pa.Table.from_pydict(columns, schema=schema)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select and cast ``table`` to ``schema`` (column order and types), failing loudly on a missing
    required column. Hive partition columns read back as dictionary strings; this undoes that."""
    arrays = []
    for field in schema:
        if field.name in table.column_names:
            column = table.column(field.name)
            if pa.types.is_dictionary(column.type):
                column = column.cast(column.type.value_type)
            arrays.append(column.cast(field.type))
        elif field.nullable:
            arrays.append(pa.nulls(table.num_rows, field.type))
        else:
            raise ValueError(f"table lacks required column {field.name!r}")
    return pa.Table.from_arrays(arrays, schema=schema)


def check_values(table: pa.Table, column: str, allowed: Iterable[str]) -> None:
    """Raise if a string column holds a value outside its vocabulary (nulls allowed)."""
    allowed = set(allowed)
    present = set(v for v in table.column(column).to_pylist() if v is not None)
    bad = present - allowed
    if bad:
        raise ValueError(f"column {column!r} has values {sorted(bad)} outside {sorted(allowed)}")
