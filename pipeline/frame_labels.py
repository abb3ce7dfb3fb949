"""`socialtrace export OUT --format frame-labels -o DIR`: per-frame social labels for probing frozen video
encoders (DESIGN.md §8b; SocialFusion's decodability lens: linear probes of gaze, mutual gaze and pointing).

DIR/frame_labels.parquet holds one row per tracks row (sampled frame x person present) with labels taken
from the run's own tables, nothing re-estimated:

- gaze_target_type / gaze_target_id: the tracks' per-frame gaze target (``unknown`` stays unknown).
- in_eye_contact: the frame lies inside a mutual_gaze event of this person.
- in_shared_attention: the person is a member of a joint_attention event at this frame: everyone in its
  persons_involved over the whole event; someone in joined_later from their first frame on one of its foci.
- pointing: the frame lies inside a pointing event this person makes; its target is the event's.
- split: train / val / test by video, from a hash of the video id (the same in every export).

A bool is null where the run cannot tell: eye contact and shared attention when the person's gaze is
unknown at that frame and no event says yes; pointing when the tracks saw a pointing hand that no event
confirmed, or when neither hands nor body keypoints were seen. DIR/README.md lists the columns and the
class balance of this export.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Optional

import numpy as np
import pyarrow as pa

from pipeline.plurals import plural
from pipeline.schema import FRAME_LABEL_SPLITS, FRAME_LABELS_SCHEMA
from pipeline.storage import OutputStore

# share of videos per split, in FRAME_LABEL_SPLITS order
SPLIT_SHARES = (0.8, 0.1, 0.1)
POINTING_TARGETS = ("person", "hands", "object")


def split_of(video_id: str) -> str:
    """train / val / test for a video, from the SHA-1 of its id: stable across exports and corpora (a
    video keeps its split when others are added), so no video's frames leak between splits."""
    u = int(hashlib.sha1(video_id.encode()).hexdigest()[:8], 16) / 2**32
    edges = np.cumsum(SPLIT_SHARES)
    return FRAME_LABEL_SPLITS[int(np.searchsorted(edges, u, side="right"))]


def _cover(frames: np.ndarray, start: int, end: int) -> np.ndarray:
    return (frames >= start) & (frames <= end)


def video_frame_labels(tracks: pa.Table, events: Optional[pa.Table], video_id: str) -> pa.Table:
    """One video's label rows (FRAME_LABELS_SCHEMA), in the tracks' order."""
    n = tracks.num_rows
    frames = tracks.column("frame_idx").to_numpy()
    person = tracks.column("person_id").to_numpy()
    gaze_type = np.asarray(tracks.column("gaze_target_type").to_pylist(), dtype=object)
    gaze_id = tracks.column("gaze_target_id").to_pylist()
    gaze_known = gaze_type != "unknown"
    eye = np.zeros(n, bool)
    shared = np.zeros(n, bool)
    point = np.zeros(n, bool)
    point_type: list[Optional[str]] = [None] * n
    point_id: list[Optional[int]] = [None] * n
    for e in (events.to_pylist() if events is not None else []):
        span = _cover(frames, e["start_frame"], e["end_frame"])
        members = np.isin(person, e["persons_involved"])
        if e["event_type"] == "mutual_gaze":
            eye |= span & members
        elif e["event_type"] == "joint_attention":
            shared |= span & members
            details = json.loads(e["details"] or "{}")
            foci = {(f["target_type"], f["target_id"]) for f in details.get("targets", [])}
            foci.add((details.get("target_type"), details.get("target_id")))
            for p in details.get("joined_later", []):
                on_focus = np.array([(gaze_type[i], gaze_id[i]) in foci for i in range(n)], bool)
                arrived = np.flatnonzero(span & (person == p) & on_focus)
                if len(arrived):
                    shared |= span & (person == p) & (frames >= frames[arrived].min())
        elif e["event_type"] == "pointing" and e["initiator_id"] is not None:
            rows = np.flatnonzero(span & (person == e["initiator_id"]))
            details = json.loads(e["details"] or "{}")
            kind = details.get("target_type")
            target = (kind, details.get("target_id")) if kind in POINTING_TARGETS else ("unknown", None)
            for i in rows:
                point[i] = True
                point_type[i], point_id[i] = target
    tracks_pointing = tracks.column("pointing").to_numpy(zero_copy_only=False)
    no_arm_seen = np.array([h is None and k is None for h, k in zip(tracks.column("hand_bboxes").to_pylist(),
                                                                    tracks.column("keypoints").to_pylist())], bool)
    pointing_unknown = ~point & (tracks_pointing | no_arm_seen)

    def tri(value: np.ndarray, unknown: np.ndarray) -> pa.Array:
        return pa.array(value, pa.bool_(), mask=unknown & ~value)

    columns = {
        "video_id": pa.array([video_id] * n, pa.string()),
        "t": tracks.column("t"),
        "frame_idx": tracks.column("native_frame_idx"),
        "sampled_frame_idx": tracks.column("frame_idx"),
        "person_id": tracks.column("person_id"),
        "bbox": tracks.column("bbox"),
        "head_bbox": tracks.column("head_bbox"),
        "gaze_target_type": tracks.column("gaze_target_type"),
        "gaze_target_id": tracks.column("gaze_target_id"),
        "in_eye_contact": tri(eye, ~gaze_known),
        "in_shared_attention": tri(shared, ~gaze_known),
        "pointing": tri(point, pointing_unknown),
        "pointing_target_type": pa.array(point_type, pa.string()),
        "pointing_target_id": pa.array(point_id, pa.int32()),
        "split": pa.array([split_of(video_id)] * n, pa.string()),
    }
    return pa.Table.from_pydict(columns, schema=FRAME_LABELS_SCHEMA)


def frame_labels(out_dir: str) -> pa.Table:
    """Every ok video's label rows, ordered by (video_id, t, person_id)."""
    store = OutputStore(out_dir)
    tables = []
    for status in store.iter_statuses():
        if status.get("status") != "ok":
            continue
        video_id = status["video_id"]
        tracks = store.read_video_table("tracks", video_id)
        if tracks is None:
            raise FileNotFoundError(f"{store.partition_file('tracks', video_id)}: missing tracks for an ok clip")
        tables.append(video_frame_labels(tracks, store.read_video_table("events", video_id), video_id))
    if not tables:
        return FRAME_LABELS_SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    return table.sort_by([("video_id", "ascending"), ("t", "ascending"), ("person_id", "ascending")])


def _counts(table: pa.Table, column: str, null_name: str) -> Counter:
    return Counter(null_name if v is None else str(v).lower() for v in table.column(column).to_pylist())


def readme(table: pa.Table) -> str:
    """DIR/README.md: what each column means and how the classes are balanced in this export."""
    lines = [
        "# socialtrace frame-level social labels",
        "",
        "`frame_labels.parquet`: one row per sampled frame and person present, labels from the run's tracks",
        "and events (socialtrace DESIGN.md §8b). Null booleans and `unknown` targets mean the run could not",
        "tell: leave them out of a probe's loss rather than reading them as false.",
        "",
        "| column | meaning |",
        "|---|---|",
        "| video_id | the video (file-name stem) |",
        "| t | seconds from the video start (frame pts) |",
        "| frame_idx | index of the frame among the video's decoded (native) frames |",
        "| sampled_frame_idx | index among the run's sampled frames (tracks' frame_idx) |",
        "| person_id | the person, identity-consistent within the video (\"Person N\") |",
        "| bbox | body box, xyxy normalised to [0, 1] of the displayed frame |",
        "| head_bbox | head box, xyxy normalised (null when no head was seen) |",
        "| gaze_target_type | person / hands / object / camera / elsewhere / unknown |",
        "| gaze_target_id | person_id (person, hands) or object_id (object) the gaze lands on |",
        "| in_eye_contact | inside a mutual_gaze event of this person (null: gaze unknown) |",
        "| in_shared_attention | a member of a joint_attention event at this frame (null: gaze unknown) |",
        "| pointing | inside a pointing event this person makes (null: not confirmed or arm unseen) |",
        "| pointing_target_type | person / hands / object / unknown, while pointing |",
        "| pointing_target_id | person_id or object_id pointed at, while pointing |",
        "| split | train / val / test, one per video, from a hash of the video id |",
        "",
        "## Class balance",
        "",
        f"{plural(table.num_rows, 'row')}, {plural(len(set(table.column('video_id').to_pylist())), 'video')}.",
        "",
    ]
    for column, null_name in (("split", ""), ("gaze_target_type", ""), ("in_eye_contact", "unknown"),
                              ("in_shared_attention", "unknown"), ("pointing", "unknown"),
                              ("pointing_target_type", "(not pointing)")):
        counts = _counts(table, column, null_name)
        lines.append(f"- {column}: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"))
    if "split" in table.column_names:
        by_split = Counter()
        for video, split in set(zip(table.column("video_id").to_pylist(), table.column("split").to_pylist())):
            by_split[split] += 1
        lines.append("- videos per split: " + ", ".join(f"{s} {by_split.get(s, 0)}" for s in FRAME_LABEL_SPLITS))
    return "\n".join(lines) + "\n"


def export_frame_labels(out_dir: str, dest: str) -> dict:
    """Write DIR/frame_labels.parquet and DIR/README.md (each to a temporary name, then renamed)."""
    table = frame_labels(out_dir)
    folder = Path(dest).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    OutputStore(str(folder)).write_parquet(str(folder / "frame_labels.parquet"), table)
    tmp = folder / ".README.md.tmp"
    tmp.write_text(readme(table))
    os.replace(tmp, folder / "README.md")
    return {"rows": table.num_rows, "videos": len(set(table.column("video_id").to_pylist())),
            "file": str(folder / "frame_labels.parquet")}
