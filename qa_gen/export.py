"""Exports of OUT/qa for training and evaluating video-language models.

grasp-bench: the layout GRASP's evaluation reads (eval/eval_social_qa.py: load_eval_data):
  DIR/json/<name>.json = {"clip_file": "<video>.mp4", "qa": {category, question, options, answer,
  answer_text, difficulty, ...}} and DIR/video/<video>.mp4 = the clip, sampled at the run's rate (2 fps,
  the rate GRASP's loader assumes when it stamps frame times), with every person's box and "Person N"
  label drawn, H.264. One labelled video per clip is shared by that clip's items; question times are
  seconds from the clip start, so the whole clip (not a cut) keeps them true.
llava-video: one JSON list in the LLaVA-Video-178K conversation format, mcq and open-ended alike.
"""
from __future__ import annotations

import json
import logging
import os
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Optional

import av
import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

log = logging.getLogger("socialtrace")

EXPORT_FORMATS = ("grasp-bench", "llava-video")
H264_ENCODERS = ("libx264", "h264", "libopenh264", "h264_nvenc", "h264_qsv", "h264_amf", "h264_v4l2m2m")
MCQ_SUFFIX = "Answer with the option's letter from the given choices directly."


def read_qa(out_dir: str) -> pa.Table:
    """OUT/qa as one table (hive-partitioned parquet on any pyarrow filesystem), conformed to QA_SCHEMA,
    ordered by (video_id, qa_id)."""
    from pipeline.storage import OutputStore

    store = OutputStore(out_dir)
    if store.fs.get_file_info(store.path("qa")).type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{store.path('qa')}: no QA table (run `socialtrace run` or `socialtrace qa` first)")
    table = store.read_table("qa")
    if table.num_rows == 0:
        return table
    return table.sort_by([("video_id", "ascending"), ("qa_id", "ascending")])


def h264_encoder() -> str:
    """The best H.264 encoder this PyAV build has (libx264 when present)."""
    for name in H264_ENCODERS:
        if name in av.codecs_available:
            try:
                av.codec.Codec(name, "w")
                return name
            except Exception:  # listed but not usable for encoding in this build
                continue
    raise RuntimeError("this PyAV build has no H.264 encoder (looked for " + ", ".join(H264_ENCODERS) + ")")


def _prompt(row: Mapping) -> str:
    if row["format"] == "mcq":
        return "\n".join([row["question"], *row["options"], MCQ_SUFFIX])
    return row["question"]


def _reply(row: Mapping) -> str:
    if row["format"] == "mcq":
        return f"{row['answer']}. {row['answer_text']}"
    return row["answer_text"]


def export_llava_video(qa: pa.Table, dest: str, videos: Mapping[str, str],
                       clips: Mapping[str, Mapping] | None = None) -> dict:
    """DIR/llava_video.json (or ``dest`` itself when it ends in .json): a list of
    {"id", "video", "conversations": [human "<video>\\n...", gpt answer]} items."""
    clips = clips or {}
    items = []
    for row in qa.to_pylist():
        video = videos.get(row["video_id"])
        if video is None:
            raise KeyError(f"no source video given for video_id {row['video_id']!r} (qa item {row['qa_id']})")
        item = {
            "id": row["qa_id"],
            "video": video,
            "conversations": [
                {"from": "human", "value": "<video>\n" + _prompt(row)},
                {"from": "gpt", "value": _reply(row)},
            ],
            "category": row["category"],
            "format": row["format"],
        }
        clip = clips.get(row["video_id"]) or {}
        if float(clip.get("start_s") or 0.0) > 0 or clip.get("end_s") is not None:
            item["clip_start_s"] = float(clip.get("start_s") or 0.0)  # the clip is a segment of ``video``
            item["clip_end_s"] = clip.get("end_s")
        items.append(item)
    path = Path(dest) if dest.endswith(".json") else Path(dest) / "llava_video.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(items, indent=1, ensure_ascii=False))
    os.replace(tmp, path)
    return {"items": len(items), "file": str(path)}


def grasp_bench_item(row: Mapping, clip_file: str) -> dict:
    """The JSON document of one GRASP-Bench item."""
    return {
        "clip_file": clip_file,
        "qa": {
            "category": row["category"],
            "question": row["question"],
            "options": list(row["options"]),
            "answer": row["answer"],
            "answer_text": row["answer_text"],
            "difficulty": row["difficulty"],
            "qa_id": row["qa_id"],
            "time_range": list(row["time_range"]),
            # beyond what GRASP's loader reads: what `socialtrace score` needs to score grounding and
            # reasoning from this folder exactly as from OUT/qa
            "video_id": row["video_id"],
            "format": row["format"],
            "template": row.get("template"),
            "grounding": [dict(g) for g in row["grounding"]],
            "reasoning_trace": [dict(step) for step in row["reasoning_trace"]],
        },
    }


def write_labelled_clip(uri: str, tracks: pa.Table, path: Path, fps: float, max_side: int,
                        start_s: float = 0.0, end_s: Optional[float] = None) -> int:
    """Decode ``uri`` at ``fps`` (the sampling perception used, so sampled frame k is tracks frame_idx
    k), draw each person's box and label, and encode H.264 to ``path``. Returns frames written."""
    from pipeline.annotate import PersonAnnotator, rows_by_frame
    from pipeline.video import iter_frames

    by_frame = rows_by_frame(tracks)
    encoder = h264_encoder()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.mp4")
    n = 0
    container = av.open(str(tmp), mode="w")
    try:
        stream = None
        annotator = None
        rate = Fraction(fps).limit_denominator(1000)
        for frame in iter_frames(uri, fps, max_side, start_s=start_s, end_s=end_s):
            image = frame.image
            if stream is None:
                h, w = image.shape[:2]
                stream = container.add_stream(encoder, rate=rate)
                stream.width, stream.height = w + w % 2, h + h % 2  # yuv420p needs even sizes
                stream.pix_fmt = "yuv420p"
                stream.time_base = 1 / rate
                if encoder == "libx264":
                    stream.options = {"crf": "20", "preset": "veryfast"}
                annotator = PersonAnnotator(w, h)
            # supervision treats numpy scenes as BGR: draw in BGR so person_color() is what is seen
            bgr = np.ascontiguousarray(image[..., ::-1])
            drawn = annotator.draw(bgr, by_frame.get(frame.frame_idx, []))
            if drawn.shape[0] != stream.height or drawn.shape[1] != stream.width:
                drawn = np.pad(drawn, ((0, stream.height - drawn.shape[0]), (0, stream.width - drawn.shape[1]), (0, 0)))
            video_frame = av.VideoFrame.from_ndarray(drawn, format="bgr24")
            video_frame.pts = n
            for packet in stream.encode(video_frame):
                container.mux(packet)
            n += 1
        if stream is not None:
            for packet in stream.encode():
                container.mux(packet)
    finally:
        container.close()
    if n == 0:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"{uri}: no frames decoded for the labelled clip")
    os.replace(tmp, path)
    return n


def _read_tracks(out_dir: str, video_id: str) -> pa.Table:
    from pipeline.storage import OutputStore

    store = OutputStore(out_dir)
    tracks = store.read_video_table("tracks", video_id)
    if tracks is None:
        raise FileNotFoundError(f"{store.partition_file('tracks', video_id)}: no tracks for video {video_id!r}, "
                                "cannot draw its person labels")
    return tracks.select(["frame_idx", "t", "person_id", "bbox"])


def _sampling(out_dir: str) -> tuple[float, int]:
    """(fps, max_side) perception used, from OUT/run.json; the defaults when there is no record."""
    from pipeline.config import Config
    from pipeline.storage import OutputStore

    store = OutputStore(out_dir)
    record = store.read_json(store.path("run.json")) or {}
    config = Config.from_dict(record.get("config") or {})
    return config.sampling.fps, config.sampling.max_side


def _clip_windows(out_dir: str) -> dict[str, dict]:
    """video_id -> its status record (start_s / end_s when the clip is a segment of a longer video)."""
    from pipeline.storage import OutputStore

    return {s["video_id"]: s for s in OutputStore(out_dir).iter_statuses() if "video_id" in s}


def export_grasp_bench(out_dir: str, qa: pa.Table, dest: str, videos: Mapping[str, str],
                       clips: Mapping[str, Mapping]) -> dict:
    root = Path(dest)
    (root / "json").mkdir(parents=True, exist_ok=True)
    fps, max_side = _sampling(out_dir)
    rows = qa.to_pylist()
    video_ids = sorted({r["video_id"] for r in rows})
    missing = [v for v in video_ids if v not in videos]
    if missing:
        raise KeyError(f"no source video given for video_id(s) {missing}")
    frames = 0
    for video_id in video_ids:
        clip = clips.get(video_id) or {}
        n = write_labelled_clip(videos[video_id], _read_tracks(out_dir, video_id),
                                root / "video" / f"{video_id}.mp4", fps, max_side,
                                start_s=float(clip.get("start_s") or 0.0), end_s=clip.get("end_s"))
        log.info("grasp-bench: %s -> %s (%d frames at %g fps)", videos[video_id], f"video/{video_id}.mp4", n, fps)
        frames += n
    for row in rows:
        doc = grasp_bench_item(row, f"{row['video_id']}.mp4")
        path = root / "json" / f"{row['video_id']}__{row['qa_id']}.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    return {"items": len(rows), "videos": len(video_ids), "frames": frames}


def export(out_dir: str, fmt: str, dest: str, *, videos: dict[str, str]) -> dict:
    """Export OUT/qa (``out_dir``) as ``fmt`` ("grasp-bench" | "llava-video") into ``dest``.
    ``videos`` maps video_id -> source video uri. Returns a summary (items, videos, ...)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {list(EXPORT_FORMATS)}")
    qa = read_qa(out_dir)
    clips = _clip_windows(out_dir)
    if fmt == "llava-video":
        return export_llava_video(qa, dest, videos, clips)
    return export_grasp_bench(out_dir, qa, dest, videos, clips)
