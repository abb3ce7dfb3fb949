"""Long videos as overlapping segments that keep one person_id space per video.

A video longer than ``sampling.max_clip_seconds`` is perceived as several segments, so that its
perception can run on several workers at once and each unit of work stays bounded. Boundaries are
planned from the probed duration on the sampling grid (every boundary a multiple of 1 / fps, so the
segments sample exactly the instants an unsegmented run would), not searched at scene cuts: finding cuts
first would need a second full decode, and decoding is what bounds a GPU node. Instead consecutive
segments overlap by ``sampling.segment_overlap_seconds``: the later one starts decoding that much before
its boundary, so the same people in the same frames are seen by both, which hands identity over directly
by box overlap (tracking.segment_identity); cut-aligned boundaries would leave only appearance to link
people.

``plan_segments`` makes the ClipSpecs, perception runs each as an ordinary clip, and ``merge_segments``
puts the results back together as one video-level ``PerceptionResult`` (exactly the tracks schema,
times from the video start, frame_idx over the video's sampled frames, shots continued across
boundaries, one person_id space numbered by first appearance), ready for ``runner.finish_clip``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import schema
from pipeline.clip import ClipSpec, PerceptionResult
from pipeline.config import Config, SamplingConfig
from tracking.segment_identity import IdentityLedger, SegmentPeople

__all__ = ["SegmentError", "check_segment_config", "merge_segments", "perceive_video", "plan_segments",
           "probe_duration", "segment_label"]

# Two samples of the same frame from two segments agree on its time to far better than this; it is also
# the sampler's own tolerance for "at or after an instant" (pipeline.video).
_TIME_TOLERANCE_S = 1e-3
# Target types whose id is a person_id (DESIGN.md §5); object ids are left as they are.
_PERSON_TARGET_TYPES = ("person", "hands")


class SegmentError(Exception):
    """A segment of a long video failed: the message names the file, the segment and the reason."""

    def __init__(self, clip: ClipSpec, n_segments: int, exc: BaseException):
        reason = str(exc).strip() or type(exc).__name__
        if reason.startswith(f"{clip.uri}: "):  # VideoError names the file; say it once
            reason = reason[len(clip.uri) + 2:]
        elif not reason.startswith(type(exc).__name__):
            reason = f"{type(exc).__name__}: {reason}"
        super().__init__(f"{clip.uri}: {segment_label(clip, n_segments)}: {reason}")
        self.clip = clip


def segment_label(clip: ClipSpec, n_segments: int) -> str:
    """"segment 2 of 3 [58.00, 120.00) s": which part of the video a segment decodes."""
    end = "end" if clip.end_s is None else f"{clip.end_s:.2f}"
    return f"segment {clip.segment_index + 1} of {n_segments} [{clip.start_s:.2f}, {end}) s"


# --- planning -----------------------------------------------------------------------------------

def check_segment_config(sampling: SamplingConfig) -> None:
    """Raise ValueError unless the sampling section can split a video into overlapping segments."""
    if sampling.fps <= 0:
        raise ValueError(f"sampling.fps must be positive, got {sampling.fps}")
    if sampling.max_clip_seconds <= 0:
        raise ValueError(f"sampling.max_clip_seconds must be positive, got {sampling.max_clip_seconds}")
    overlap = sampling.segment_overlap_seconds
    if not overlap < sampling.max_clip_seconds / 2:
        raise ValueError(f"sampling.segment_overlap_seconds ({overlap:g} s) must be less than half of "
                         f"sampling.max_clip_seconds ({sampling.max_clip_seconds:g} s)")
    if not overlap >= 2 / sampling.fps - 1e-9:
        raise ValueError(f"sampling.segment_overlap_seconds ({overlap:g} s) must cover at least two sampled "
                         f"frames: >= 2 / sampling.fps = {2 / sampling.fps:g} s")


def plan_segments(video_id: str, uri: str, duration_s: Optional[float], config: Config) -> list[ClipSpec]:
    """The units of perception for one video: the whole video (one ClipSpec) when it is no longer than
    ``sampling.max_clip_seconds`` or its duration is unknown, else equal segments of at most that length
    on the sampling grid, each but the first decoding ``segment_overlap_seconds`` (rounded up to the
    grid) before its boundary, the last open-ended (so a truncated tail is still detected).

    Raises ValueError when the config cannot split a video (see ``check_segment_config``)."""
    sampling = config.sampling
    whole = [ClipSpec(video_id=video_id, uri=uri)]
    if duration_s is None or not math.isfinite(duration_s) or duration_s <= sampling.max_clip_seconds:
        return whole
    check_segment_config(sampling)
    fps = sampling.fps
    n_instants = math.ceil(duration_s * fps - 1e-6)  # sampling instants k / fps inside the video
    max_instants = math.floor(sampling.max_clip_seconds * fps + 1e-9)
    n_segments = math.ceil(n_instants / max_instants)
    if n_segments <= 1:
        return whole
    per_segment = math.ceil(n_instants / n_segments)  # equal lengths, each <= max_instants
    overlap_instants = math.ceil(sampling.segment_overlap_seconds * fps - 1e-9)
    specs = []
    for index in range(n_segments):
        keep_from = index * per_segment
        end = (index + 1) * per_segment if index < n_segments - 1 else None
        specs.append(ClipSpec(
            video_id=video_id,
            uri=uri,
            start_s=max(keep_from - overlap_instants, 0) / fps,
            end_s=None if end is None else end / fps,
            segment_index=index,
            keep_from_s=keep_from / fps,
        ))
    return specs


def probe_duration(uri: str) -> Optional[float]:
    """The video's length from its header, None when unknown or unreadable (perceiving it then says why)."""
    from pipeline.video import VideoError, probe

    try:
        duration = probe(uri).duration_s
    except (VideoError, OSError):
        return None
    return duration if duration > 0 else None


def perceive_video(video_id: str, uri: str, perceive: Callable[[ClipSpec], PerceptionResult],
                   config: Config) -> PerceptionResult:
    """Perceive a whole video in process: one call for a short video, else its segments one after
    another, merged. A failing segment raises ``SegmentError`` naming it."""
    specs = plan_segments(video_id, uri, probe_duration(uri), config)
    if len(specs) == 1:
        return perceive(specs[0])
    results = []
    for spec in specs:
        try:
            results.append(perceive(spec))
        except Exception as exc:
            raise SegmentError(spec, len(specs), exc) from exc
    return merge_segments(results, config)


# --- merging ------------------------------------------------------------------------------------

def _int_column(values: np.ndarray) -> pa.Array:
    return pa.array(np.asarray(values, np.int64), type=pa.int32())


def _nullable_int_column(values: list[Optional[int]]) -> pa.Array:
    return pa.array(values, type=pa.int32())


def _match_times(times: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Index into sorted ``reference`` of the time equal to each of ``times`` (within tolerance), -1 if none."""
    if len(reference) == 0 or len(times) == 0:
        return np.full(len(times), -1, np.int64)
    right = np.clip(np.searchsorted(reference, times), 0, len(reference) - 1)
    left = np.clip(right - 1, 0, len(reference) - 1)
    nearest = np.where(np.abs(reference[left] - times) <= np.abs(reference[right] - times), left, right)
    return np.where(np.abs(reference[nearest] - times) <= _TIME_TOLERANCE_S, nearest, -1)


def _remap_targets(types: list[Optional[str]], ids: list[Optional[int]], mapping: dict[int, int],
                   where: str) -> list[Optional[int]]:
    out = []
    for kind, target in zip(types, ids):
        if target is None or kind not in _PERSON_TARGET_TYPES:
            out.append(target)
        elif target in mapping:
            out.append(mapping[target])
        else:  # targets are people of the same frame, so this is a broken table, not bad luck
            raise ValueError(f"{where}: {kind} target {target} is not a person of that segment's kept frames")
    return out


@dataclass
class _SegmentPiece:
    """One segment's kept rows, placed on the video's timeline with video-level person ids."""

    tracks: pa.Table  # the kept rows as perception wrote them (local frame_idx, t, ids)
    frame_idx: np.ndarray  # per row: video-level frame index
    t: np.ndarray  # seconds from the video start
    shot: np.ndarray  # video-level shot id
    shot_start: np.ndarray  # per row: when its shot began, seconds from the video start
    person: np.ndarray  # video-level identity (renumbered at the end)
    gaze_target: list[Optional[int]]  # person/hands targets as video-level identities
    point_target: list[Optional[int]]
    objects: Optional[pa.Table]


def merge_segments(results: list[PerceptionResult], config: Config) -> PerceptionResult:
    """One video-level result from the perceived segments of a video (any order; see module doc).

    Segment i contributes its sampled frames with video time in [b_i, b_{i+1}) (b_i = its
    ``keep_from_s``); ``t`` becomes seconds from the video start, ``frame_idx`` counts the video's kept
    sampled frames, ``shot_id`` continues across a boundary unless the later segment saw a cut between
    the two frames that straddle it, person ids become one video-wide space (tracking.segment_identity)
    numbered by first appearance, and person/hands targets follow them. Timings are summed."""
    if not results:
        raise ValueError("merge_segments: no segments to merge")
    results = sorted(results, key=lambda r: r.clip.segment_index)
    first = results[0].clip
    where = f"{first.uri}: merging segments"
    if any(r.clip.video_id != first.video_id for r in results):
        raise ValueError(f"{where}: segments of different videos {sorted({r.clip.video_id for r in results})}")
    if [r.clip.segment_index for r in results] != list(range(len(results))):
        raise ValueError(f"{where}: segment indices {[r.clip.segment_index for r in results]} are not 0..{len(results) - 1}")
    if len(results) == 1 and first.start_s == 0 and first.keep_from_s == 0:
        return results[0]  # a video perceived whole is already video-level
    missing = [r.clip.segment_index for r in results if r.frames is None]
    if missing:
        raise ValueError(f"{where}: segment(s) {missing} carry no frames table")

    ledger = IdentityLedger(config.tracking)
    kept_times = np.zeros(0)  # video time of each kept frame so far (the video's frame_idx order)
    frame_pieces: list[dict] = []
    pieces: list[_SegmentPiece] = []
    last_shot = -1
    last_shot_start = 0.0
    for position, result in enumerate(results):
        clip = result.clip
        keep_until = results[position + 1].clip.keep_from_s if position + 1 < len(results) else math.inf
        frames = result.frames
        local_frame = frames.column("frame_idx").to_numpy().astype(np.int64)
        if not np.array_equal(local_frame, np.arange(len(local_frame))):
            raise ValueError(f"{where}: segment {clip.segment_index} frames are not numbered 0..{len(local_frame) - 1}")
        video_t = clip.start_s + frames.column("t").to_numpy()
        local_shot = frames.column("shot_id").to_numpy().astype(np.int64)
        kept = (video_t >= clip.keep_from_s - _TIME_TOLERANCE_S) & (video_t < keep_until - _TIME_TOLERANCE_S)
        kept_positions = np.flatnonzero(kept)

        # video-level frame index: new indices for kept frames, the earlier segment's for the overlap
        video_frame = np.full(len(local_frame), -1, np.int64)
        video_frame[kept_positions] = len(kept_times) + np.arange(len(kept_positions))
        overlap = np.flatnonzero(~kept & (video_t < clip.keep_from_s))
        video_frame[overlap] = _match_times(video_t[overlap], kept_times)

        # shots continue over the boundary unless this segment saw a cut between the frames straddling it
        video_shot = np.full(len(local_frame), -1, np.int64)
        local_start = (frames.column("shot_start_t").to_numpy(zero_copy_only=False)
                       if "shot_start_t" in frames.column_names else np.zeros(len(local_frame)))
        video_shot_start = clip.start_s + np.nan_to_num(np.asarray(local_start, np.float64))
        if len(kept_positions):
            head = kept_positions[0]
            straddle_cut = head > 0 and not kept[head - 1] and local_shot[head] != local_shot[head - 1]
            start_shot = last_shot + 1 if (last_shot < 0 or straddle_cut) else last_shot
            video_shot[kept_positions] = start_shot + local_shot[kept_positions] - local_shot[head]
            if start_shot == last_shot:  # the shot goes on from the segment before: it began there
                video_shot_start[video_shot == last_shot] = last_shot_start
            last_shot = int(video_shot[kept_positions[-1]])
            last_shot_start = float(video_shot_start[kept_positions[-1]])
        kept_times = np.concatenate([kept_times, video_t[kept_positions]])
        frame_pieces.append({
            "frame_idx": video_frame[kept_positions], "t": video_t[kept_positions],
            "native_frame_idx": frames.column("native_frame_idx").to_numpy()[kept_positions],
            "shot_id": video_shot[kept_positions],
            "shot_start_t": video_shot_start[kept_positions],
        })

        tracks = result.tracks
        row_frame = tracks.column("frame_idx").to_numpy().astype(np.int64)
        if len(row_frame) and (row_frame.min() < 0 or row_frame.max() >= len(local_frame)):
            raise ValueError(f"{where}: segment {clip.segment_index} has rows outside its {len(local_frame)} frames")
        row_person = tracks.column("person_id").to_numpy().astype(np.int64)
        appearance = {}
        if result.identities is not None:
            for row in result.identities.to_pylist():
                appearance[int(row["person_id"])] = (np.asarray(row["appearance"], np.float64), int(row["n_frames"]))
        boxes = np.asarray(tracks.column("bbox").to_pylist(), np.float64).reshape(-1, 4)
        heads = np.array([[np.nan] * 4 if h is None else h for h in tracks.column("head_bbox").to_pylist()],
                         np.float64).reshape(-1, 4)
        people = SegmentPeople(person_id=row_person, frame=video_frame[row_frame], time=video_t[row_frame],
                               shot=video_shot[row_frame], box=boxes, kept=kept[row_frame], appearance=appearance,
                               head=heads)
        mapping = ledger.hand_off(people)

        keep_rows = kept[row_frame]
        kept_tracks = tracks.filter(pa.array(keep_rows))
        segment_where = f"{where}: segment {clip.segment_index}"
        pieces.append(_SegmentPiece(
            tracks=kept_tracks,
            frame_idx=video_frame[row_frame][keep_rows],
            t=video_t[row_frame][keep_rows],
            shot=video_shot[row_frame][keep_rows],
            shot_start=video_shot_start[row_frame][keep_rows],
            person=np.array([mapping[int(p)] for p in row_person[keep_rows]], np.int64),
            gaze_target=_remap_targets(kept_tracks.column("gaze_target_type").to_pylist(),
                                       kept_tracks.column("gaze_target_id").to_pylist(), mapping, segment_where),
            point_target=_remap_targets(kept_tracks.column("point_target_type").to_pylist(),
                                        kept_tracks.column("point_target_id").to_pylist(), mapping, segment_where),
            objects=_kept_objects(result.objects, clip.start_s, kept, video_frame, video_t, mapping),
        ))

    final = _number_by_first_appearance(pieces)
    tracks = _assemble_tracks(pieces, final)
    frames = pa.Table.from_pydict(
        {name: np.concatenate([p[name] for p in frame_pieces]) for name in schema.SAMPLED_FRAMES_SCHEMA.names},
        schema=schema.SAMPLED_FRAMES_SCHEMA,
    ) if frame_pieces else schema.empty_table(schema.SAMPLED_FRAMES_SCHEMA)
    timings: dict[str, float] = {}
    for result in results:
        for stage, seconds in result.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
    return PerceptionResult(
        clip=ClipSpec(video_id=first.video_id, uri=first.uri),
        info=results[0].info,
        tracks=tracks,
        objects=_assemble_objects(pieces, final),
        n_frames=len(kept_times),
        timings=timings,
        backend=results[0].backend,
        frames=frames,
        identities=_video_identities(ledger, final, tracks),
        n_segments=len(results),
        picture=results[0].picture,
    )


def _kept_objects(objects: Optional[pa.Table], start_s: float, kept: np.ndarray, video_frame: np.ndarray,
                  video_t: np.ndarray, mapping: dict[int, int]) -> Optional[pa.Table]:
    """A segment's object rows in its kept frames, on the video's timeline (holders as video-level ids)."""
    if objects is None:
        return None
    local = objects.column("frame_idx").to_numpy().astype(np.int64)
    keep = kept[local]
    rows = objects.filter(pa.array(keep))
    holders = [None if h is None else mapping.get(h) for h in rows.column("holder_id").to_pylist()]
    rows = rows.set_column(rows.schema.get_field_index("frame_idx"), "frame_idx", _int_column(video_frame[local][keep]))
    rows = rows.set_column(rows.schema.get_field_index("t"), "t", pa.array(video_t[local][keep], pa.float64()))
    return rows.set_column(rows.schema.get_field_index("holder_id"), "holder_id", _nullable_int_column(holders))


def _number_by_first_appearance(pieces: list[_SegmentPiece]) -> dict[int, int]:
    """Video-level id -> final person_id, 0-based by first appearance, ties left to right (as
    tracking.stitching numbers the people of one clip)."""
    first_seen: dict[int, tuple[int, float]] = {}
    for piece in pieces:
        boxes = np.asarray(piece.tracks.column("bbox").to_pylist(), np.float64).reshape(-1, 4)
        centre_x = (boxes[:, 0] + boxes[:, 2]) / 2
        for person, frame, x in zip(piece.person.tolist(), piece.frame_idx.tolist(), centre_x.tolist()):
            key = (frame, x)
            if person not in first_seen or key < first_seen[person]:
                first_seen[person] = key
    return {person: rank for rank, person in enumerate(sorted(first_seen, key=first_seen.__getitem__))}


def _renumber(values: list[Optional[int]], types: list[Optional[str]], final: dict[int, int]) -> list[Optional[int]]:
    return [final[v] if v is not None and kind in _PERSON_TARGET_TYPES else v for v, kind in zip(values, types)]


def _assemble_tracks(pieces: list[_SegmentPiece], final: dict[int, int]) -> pa.Table:
    parts = []
    for piece in pieces:
        table = piece.tracks
        columns = {
            "frame_idx": _int_column(piece.frame_idx),
            "t": pa.array(piece.t, pa.float64()),
            "shot_id": _int_column(piece.shot),
            "shot_start_t": pa.array(piece.shot_start, pa.float64()),
            "person_id": _int_column([final[p] for p in piece.person.tolist()]),
            "gaze_target_id": _nullable_int_column(
                _renumber(piece.gaze_target, table.column("gaze_target_type").to_pylist(), final)),
            "point_target_id": _nullable_int_column(
                _renumber(piece.point_target, table.column("point_target_type").to_pylist(), final)),
        }
        for name, column in columns.items():
            table = table.set_column(table.schema.get_field_index(name), schema.TRACKS_SCHEMA.field(name), column)
        parts.append(schema.conform(table, schema.TRACKS_SCHEMA))
    if not parts:
        return schema.empty_table(schema.TRACKS_SCHEMA)
    merged = pa.concat_tables(parts)
    return merged.sort_by([("frame_idx", "ascending"), ("person_id", "ascending")])


def _assemble_objects(pieces: list[_SegmentPiece], final: dict[int, int]) -> Optional[pa.Table]:
    parts = [p.objects for p in pieces if p.objects is not None]
    if not parts:
        return None
    merged = pa.concat_tables(parts)
    holders = [None if h is None else final.get(h) for h in merged.column("holder_id").to_pylist()]
    merged = merged.set_column(merged.schema.get_field_index("holder_id"), "holder_id", _nullable_int_column(holders))
    return schema.conform(merged, schema.OBJECTS_SCHEMA).sort_by([("frame_idx", "ascending"), ("object_id", "ascending")])


def _video_identities(ledger: IdentityLedger, final: dict[int, int], tracks: pa.Table) -> pa.Table:
    """The video's people (``schema.IDENTITIES_SCHEMA``): pooled colours and frames seen, per final id."""
    counts = pc.value_counts(tracks.column("person_id")).to_pylist() if tracks.num_rows else []
    n_frames = {int(c["values"]): int(c["counts"]) for c in counts}
    rows = []
    for video_id, person in sorted(final.items(), key=lambda item: item[1]):
        pooled = ledger.appearance(video_id)
        mass = float(pooled.sum())
        rows.append({"person_id": person, "appearance": (pooled / mass if mass > 0 else pooled).astype(np.float32).tolist(),
                     "n_frames": n_frames.get(person, 0)})
    return schema.table_from_rows(rows, schema.IDENTITIES_SCHEMA) if rows else schema.empty_table(schema.IDENTITIES_SCHEMA)
