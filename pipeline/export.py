"""`socialtrace export`: OUT/qa -> a GRASP-Bench folder or a LLaVA-Video JSON, each item pointing at
the labelled clip of its QA unit.

Every QA unit (qa_gen/units.py) that has items becomes one clip, DIR/video/<video_id>_unit<NNN>.mp4:
the unit cut from the source with PyAV at 2 fps (the rate GRASP's loader assumes when it stamps frame
times; lower if the run sampled lower) with every person's box and "Person N" label drawn, H.264. An
item's times count from its unit's start, which is the clip's first frame. Each unit is decoded once,
whatever the number of its items.

grasp-bench: DIR/json/<video_id>__<qa_id>.json + DIR/video/ (qa_gen/export.py: grasp_bench_item).
llava-video: DIR/llava_video.json (or the .json path given) + video/ beside it; an item's "video" is
its clip's path relative to the JSON's folder (LLaVA-Video joins it to its video folder).
frame-labels: DIR/frame_labels.parquet + DIR/README.md (pipeline/frame_labels.py).
"""
from __future__ import annotations

import glob
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from pipeline.annotate import PersonAnnotator
from pipeline.config import Config
from pipeline.render import TrackIndex
from pipeline.storage import OutputStore
from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer
from pipeline.schema import QA_SCHEMA, table_from_rows
from qa_gen.corpus_balance import balance_corpus
from qa_gen.export import EXPORT_FORMATS, grasp_bench_item, llava_video_item

log = logging.getLogger("socialtrace")

GRASP_FPS = 2.0


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
    answers balanced across the folder (qa_gen/corpus_balance.py), ordered by (video_id, qa_id)."""
    store = OutputStore(out_dir)
    if store.fs.get_file_info(store.path("qa")).type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{store.path('qa')}: no QA table (run `socialtrace run` or `socialtrace qa` first)")
    table = store.read_table("qa")
    if table.num_rows == 0:
        return table
    # balanced across the folder (a no-op after `socialtrace qa`, which stores it balanced)
    rows, dropped = balance_corpus(table.to_pylist(), _seed(store))
    if dropped:
        log.info("export: %d item(s) dropped to balance answers across the corpus: %s", sum(dropped.values()), dropped)
        table = table_from_rows(rows, QA_SCHEMA)
    return table.sort_by([("video_id", "ascending"), ("qa_id", "ascending")])


def _seed(store: OutputStore) -> int:
    record = store.read_json(store.path("run.json")) or {}
    return Config.from_dict(record.get("config") or {}).seed


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
                     run_fps: float, max_side: int) -> dict[ClipUnit, int]:
    """Cut each unit [start, end) out of ``uri`` with PyAV (seek to the unit, decode to its end), sampled
    at the clip rate from the unit start (so clip time 0 is the unit start), with every person's box and
    label drawn from the tracks of the nearest sampled frame, to ``folder/<clip_file>``. Returns frames
    written per unit."""
    fps = clip_fps(run_fps)
    index = TrackIndex(tracks, run_fps)
    written: dict[ClipUnit, int] = {}
    for unit in sorted(set(units), key=lambda u: u.start):
        end = None if unit.end == float("inf") else unit.end
        frames = iter_frames(uri, fps, max_side, start_s=unit.start, end_s=end)
        writer = annotator = None
        try:
            for frame in frames:
                image = frame.image
                if writer is None:
                    h, w = image.shape[:2]
                    writer = H264Writer(folder / unit.clip_file(video_id), w, h, fps, crf=20)
                    annotator = PersonAnnotator(w, h)
                # supervision treats numpy scenes as BGR: draw in BGR so person_color() is what is seen
                bgr = np.ascontiguousarray(image[..., ::-1])
                writer.write(annotator.draw(bgr, index.rows_at(unit.start + frame.t)))
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        if writer is None:
            raise ValueError(f"{uri}: no frames decoded for {unit.start:.2f}-{unit.end:.2f} s")
        writer.close()
        written[unit] = writer.n_frames
    return written


def clip_fps(run_fps: float) -> float:
    """Exported clips play at GRASP's 2 fps (the rate its loader assumes when it stamps frame times), or
    at the run's rate when that is lower (there are no labels for frames in between)."""
    return min(run_fps, GRASP_FPS)


def _write_json(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False))
    os.replace(tmp, path)


def _remove_stale(folder: Path, pattern: str, keep: set[str]) -> None:
    """Drop what an earlier export of the same video left that this one did not write (a unit or item
    that no longer exists), so a re-export holds exactly the current items."""
    for path in folder.glob(pattern):
        if path.name not in keep:
            path.unlink()


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
        _remove_stale(folder, f"{glob.escape(video_id)}_unit[0-9][0-9][0-9].mp4", {u.clip_file(video_id) for u in written})
        for unit, n in sorted(written.items(), key=lambda kv: kv[0].start):
            log.info("export: %s %.1f s + %d frames at %g fps -> video/%s", video_id, unit.start, n,
                     clip_fps(fps), unit.clip_file(video_id))
        n_clips += len(written)
        n_frames += sum(written.values())
    return {"videos": len(units), "clips": n_clips, "frames": n_frames}


def export_grasp_bench(store: OutputStore, qa: pa.Table, dest: str, videos: Mapping[str, str]) -> dict:
    root = Path(dest)
    rows = qa.to_pylist()
    summary = _clips(store, rows, videos, root / "video")
    names: dict[str, set[str]] = {}
    for row in rows:
        doc = grasp_bench_item(row, unit_of_row(row).clip_file(row["video_id"]))
        name = f"{row['video_id']}__{row['qa_id']}.json"
        _write_json(root / "json" / name, doc)
        names.setdefault(row["video_id"], set()).add(name)
    for video_id, keep in names.items():
        _remove_stale(root / "json", f"{glob.escape(video_id)}__{'?' * 16}.json", keep)
    return {"items": len(rows), **summary}


def export_llava_video(store: OutputStore, qa: pa.Table, dest: str, videos: Mapping[str, str]) -> dict:
    path = Path(dest) if dest.endswith(".json") else Path(dest) / "llava_video.json"
    rows = qa.to_pylist()
    summary = _clips(store, rows, videos, path.parent / "video")
    items = [llava_video_item(row, "video/" + unit_of_row(row).clip_file(row["video_id"])) for row in rows]
    _write_json(path, items)
    return {"items": len(items), "file": str(path), **summary}


def export(out_dir: str, fmt: str, dest: str, *, videos: dict[str, str]) -> dict:
    """Export OUT/qa (``out_dir``) as ``fmt`` ("grasp-bench" | "llava-video") into ``dest``, or the
    per-frame labels of OUT's tracks and events ("frame-labels", pipeline/frame_labels.py; no video read).
    ``videos`` maps video_id -> source video uri. Returns a summary (items, videos, clips, frames, ...)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {list(EXPORT_FORMATS)}")
    if fmt == "frame-labels":
        from pipeline.frame_labels import export_frame_labels

        return export_frame_labels(out_dir, dest)
    qa = read_qa(out_dir)
    store = OutputStore(out_dir)
    if fmt == "llava-video":
        return export_llava_video(store, qa, dest, videos)
    return export_grasp_bench(store, qa, dest, videos)
