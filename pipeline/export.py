"""`socialtrace export`: OUT/qa -> a GRASP-Bench folder or a LLaVA-Video JSON, each item pointing at
the labelled clip of its QA unit.

Every QA unit (qa_gen/units.py) that has items becomes one clip, DIR/video/<video_id>_unit<NNN>.mp4:
the unit's sampled frames (the run's rate, 2 fps by default, the rate GRASP's loader assumes when it
stamps frame times) with every person's box and "Person N" label drawn, H.264. An item's times count
from its unit's start, which is the clip's first frame. Each source video is decoded once for all its
units, whatever the number of items.

grasp-bench: DIR/json/<video_id>__<qa_id>.json + DIR/video/ (qa_gen/export.py: grasp_bench_item).
llava-video: DIR/llava_video.json (or the .json path given) + video/ beside it; an item's "video" is
its clip's path relative to the JSON's folder (LLaVA-Video joins it to its video folder).
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from pipeline.annotate import PersonAnnotator, rows_by_frame
from pipeline.config import Config
from pipeline.storage import OutputStore
from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer
from qa_gen.export import EXPORT_FORMATS, grasp_bench_item, llava_video_item

log = logging.getLogger("socialtrace")

_EPS = 1e-6


@dataclass(frozen=True)
class ClipUnit:
    """The span of video one exported clip shows (video time)."""

    unit_id: Optional[int]  # None: an item from before QA units, about the whole video
    start: float
    end: float

    def clip_file(self, video_id: str) -> str:
        return f"{video_id}.mp4" if self.unit_id is None else f"{video_id}_unit{self.unit_id:03d}.mp4"


def unit_of_row(row: Mapping) -> ClipUnit:
    if row.get("unit_id") is None:
        return ClipUnit(None, 0.0, float("inf"))
    return ClipUnit(int(row["unit_id"]), float(row["unit_start"]), float(row["unit_end"]))


def read_qa(out_dir: str) -> pa.Table:
    """OUT/qa as one table (hive-partitioned parquet on any pyarrow filesystem), conformed to QA_SCHEMA,
    ordered by (video_id, qa_id)."""
    store = OutputStore(out_dir)
    if store.fs.get_file_info(store.path("qa")).type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{store.path('qa')}: no QA table (run `socialtrace run` or `socialtrace qa` first)")
    table = store.read_table("qa")
    if table.num_rows == 0:
        return table
    return table.sort_by([("video_id", "ascending"), ("qa_id", "ascending")])


def _sampling(store: OutputStore) -> tuple[float, int]:
    """(fps, max_side) perception used, from OUT/run.json; the defaults when there is no record."""
    record = store.read_json(store.path("run.json")) or {}
    config = Config.from_dict(record.get("config") or {})
    return config.sampling.fps, config.sampling.max_side


def _read_tracks(store: OutputStore, video_id: str) -> pa.Table:
    tracks = store.read_video_table("tracks", video_id)
    if tracks is None:
        raise FileNotFoundError(f"{store.partition_file('tracks', video_id)}: no tracks for video {video_id!r}, "
                                "cannot draw its person labels")
    return tracks.select(["frame_idx", "t", "person_id", "bbox"])


def write_unit_clips(uri: str, tracks: pa.Table, units: Iterable[ClipUnit], folder: Path, video_id: str,
                     fps: float, max_side: int) -> dict[ClipUnit, int]:
    """Decode ``uri`` once at ``fps`` (the sampling perception used, so sampled frame k is tracks
    frame_idx k) and write each unit's frames [start, end), every person's box and label drawn, to
    ``folder/<clip_file>``. Returns frames written per unit."""
    ordered = sorted(set(units), key=lambda u: u.start)
    if not ordered:
        return {}
    by_frame = rows_by_frame(tracks)
    written: dict[ClipUnit, int] = {}
    writer: Optional[H264Writer] = None
    current: Optional[ClipUnit] = None
    annotator: Optional[PersonAnnotator] = None
    last_end = max(u.end for u in ordered)
    try:
        for frame in iter_frames(uri, fps, max_side):
            if frame.t >= last_end - _EPS:
                break  # past the last unit: no reason to decode the rest
            unit = next((u for u in ordered if u.start - _EPS <= frame.t < u.end - _EPS), None)
            if unit != current:
                if writer is not None:
                    writer.close()
                    written[current] = writer.n_frames
                    writer = None
                current = unit
            if unit is None:
                continue
            image = frame.image
            h, w = image.shape[:2]
            if writer is None:
                writer = H264Writer(folder / unit.clip_file(video_id), w, h, fps, crf=20)
                annotator = annotator or PersonAnnotator(w, h)
            # supervision treats numpy scenes as BGR: draw in BGR so person_color() is what is seen
            bgr = np.ascontiguousarray(image[..., ::-1])
            writer.write(annotator.draw(bgr, by_frame.get(frame.frame_idx, [])))
        if writer is not None:
            writer.close()
            written[current] = writer.n_frames
            writer = None
    finally:
        if writer is not None:
            writer.abort()
    missing = [u for u in ordered if u not in written]
    if missing:
        raise ValueError(f"{uri}: no frames decoded for unit(s) "
                         + ", ".join(f"{u.start:.2f}-{u.end:.2f} s" for u in missing))
    return written


def _write_json(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False))
    os.replace(tmp, path)


def _clips(store: OutputStore, rows: list[dict], videos: Mapping[str, str], folder: Path) -> dict:
    """Write the labelled clip of every unit the items name; (clips, frames) written."""
    fps, max_side = _sampling(store)
    units: dict[str, set[ClipUnit]] = {}
    for row in rows:
        units.setdefault(row["video_id"], set()).add(unit_of_row(row))
    missing = sorted(v for v in units if v not in videos)
    if missing:
        raise KeyError(f"no source video given for video_id(s) {missing}")
    n_clips = n_frames = 0
    for video_id in sorted(units):
        written = write_unit_clips(videos[video_id], _read_tracks(store, video_id), units[video_id], folder,
                                   video_id, fps, max_side)
        for unit, n in sorted(written.items(), key=lambda kv: kv[0].start):
            log.info("export: %s %.1f-%.1f s -> video/%s (%d frames at %g fps)", video_id, unit.start,
                     min(unit.end, unit.start + n / fps), unit.clip_file(video_id), n, fps)
        n_clips += len(written)
        n_frames += sum(written.values())
    return {"videos": len(units), "clips": n_clips, "frames": n_frames}


def export_grasp_bench(store: OutputStore, qa: pa.Table, dest: str, videos: Mapping[str, str]) -> dict:
    root = Path(dest)
    rows = qa.to_pylist()
    summary = _clips(store, rows, videos, root / "video")
    for row in rows:
        doc = grasp_bench_item(row, unit_of_row(row).clip_file(row["video_id"]))
        _write_json(root / "json" / f"{row['video_id']}__{row['qa_id']}.json", doc)
    return {"items": len(rows), **summary}


def export_llava_video(store: OutputStore, qa: pa.Table, dest: str, videos: Mapping[str, str]) -> dict:
    path = Path(dest) if dest.endswith(".json") else Path(dest) / "llava_video.json"
    rows = qa.to_pylist()
    summary = _clips(store, rows, videos, path.parent / "video")
    items = [llava_video_item(row, "video/" + unit_of_row(row).clip_file(row["video_id"])) for row in rows]
    _write_json(path, items)
    return {"items": len(items), "file": str(path), **summary}


def export(out_dir: str, fmt: str, dest: str, *, videos: dict[str, str]) -> dict:
    """Export OUT/qa (``out_dir``) as ``fmt`` ("grasp-bench" | "llava-video") into ``dest``.
    ``videos`` maps video_id -> source video uri. Returns a summary (items, videos, clips, frames, ...)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {list(EXPORT_FORMATS)}")
    qa = read_qa(out_dir)
    store = OutputStore(out_dir)
    if fmt == "llava-video":
        return export_llava_video(store, qa, dest, videos)
    return export_grasp_bench(store, qa, dest, videos)
