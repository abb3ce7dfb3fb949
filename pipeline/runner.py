"""Run the stages over a corpus: which clips to do, per-clip processing, status, manifest, run.json.

The per-clip functions here are shared by both executors: the local loop below and pipeline/ray_runner.py
call exactly the same ``perceive`` / ``finish_clip`` / ``failed_status`` code, so both write equal tables.
"""
from __future__ import annotations

import json
import logging
import math
import platform
import socket
import time
import traceback
from contextlib import closing
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import pyarrow as pa

from pipeline import schema
from pipeline.clip import ClipSpec, PerceptionResult
from pipeline.config import Config, usable_cores
from pipeline.inputs import InputVideo
from pipeline.picture import OBJECT_COORDINATES, TRACK_COORDINATES, picture_aspect, to_frame, to_picture, window_of
from pipeline.plurals import plural
from pipeline.storage import OutputStore
from qa_gen.generate import generate_qa, plan_video_units
from qa_gen.units import Shot, shots_from_frames, unit_of_times

log = logging.getLogger("socialtrace")

PACKAGES_RECORDED = (
    "socialtrace", "numpy", "pyarrow", "av", "opencv-python", "opencv-contrib-python", "mediapipe",
    "ultralytics", "torch", "numba", "ray", "openvino", "dlib-bin", "supervision",
)


# --- per-clip work (shared by every executor) ---------------------------------------------------

def derive_events(tracks: pa.Table, objects: Optional[pa.Table], config: Config, clip_duration: Optional[float]) -> pa.Table:
    """The events stage: one video's tracks (and objects) -> its events table, every event inside
    [0, clip_duration] (the probed duration recorded in the clip's status; 0 or None when the headers
    did not say, and then the tracks' last frame bounds the events)."""
    from events import detect_events

    known = clip_duration if clip_duration and clip_duration > 0 else None
    return detect_events(tracks, config.events, objects=objects, fps=config.sampling.fps, clip_duration=known)


def derive_qa(events: pa.Table, tracks: pa.Table, config: Config, clip_duration: Optional[float],
              shots: Optional[list[Shot]], aspect: Optional[float] = None,
              objects: Optional[pa.Table] = None) -> tuple[pa.Table, dict, list[dict]]:
    """The QA stage: one video's events -> its QA table, the validation drop counts, and its QA units
    (status records: span, shots, events and items in each). ``aspect``: the displayed frame's width /
    height (None: unknown, and no item that needs the gaze geometry is made)."""
    qa, drops = generate_qa(events, tracks, config.qa, seed=config.seed, clip_duration=clip_duration, shots=shots,
                            aspect=aspect, objects=objects)
    units = plan_video_units(events, tracks, config.qa, clip_duration, shots)
    starts = events.column("start_time").to_numpy() if events.num_rows else []
    event_unit = unit_of_times(units, starts)
    qa_units = qa.column("unit_id").to_pylist()
    records = [{**unit.to_dict(), "n_events": int((event_unit == k).sum()), "n_qa": qa_units.count(unit.unit_id)}
               for k, unit in enumerate(units)]
    return qa, drops, records


def _aspect(width: Optional[int], height: Optional[int], picture=None) -> Optional[float]:
    return picture_aspect(width, height, picture) if width and height else None


def shots_record(shots: list[Shot]) -> list[dict]:
    """Shots as the status file keeps them, so `socialtrace qa` plans the same units without video."""
    return [{"shot_id": s.shot_id, "start": round(s.start, 6), "end": round(s.end, 6)} for s in shots]


def shots_of_status(status: dict) -> Optional[list[Shot]]:
    """The shots a status file recorded; None for runs made before shots were recorded (QA then reads
    them off the tracks)."""
    recorded = status.get("shots")
    if not recorded:
        return None
    return [Shot(int(s["shot_id"]), float(s["start"]), float(s["end"])) for s in recorded]


def error_message(uri: str, exc: BaseException) -> str:
    """One line naming the file and the reason; errors that already name the file are kept as they are."""
    text = str(exc).strip() or type(exc).__name__
    if uri in text:
        return text
    return f"{uri}: {type(exc).__name__}: {text}"


def finish_clip(result: PerceptionResult, config: Config, store: OutputStore, started: float) -> dict:
    """Events + QA for a perceived clip, write its tables, then its status file last."""
    t0 = time.perf_counter()
    # events and QA read the picture's coordinates, the tables are written in the frame's (pipeline/picture.py)
    events = derive_events(result.tracks, result.objects, config, result.info.duration_s)
    shots = None
    if result.frames is not None:
        shots = shots_from_frames(result.frames.column("t").to_numpy(), result.frames.column("shot_id").to_numpy(),
                                  result.info.duration_s)
    qa, drops, units = derive_qa(events, result.tracks, config, result.info.duration_s, shots,
                                 _aspect(result.info.width, result.info.height, result.picture), result.objects)
    timings = dict(result.timings)
    timings["events_qa"] = time.perf_counter() - t0
    log.debug("%s: events and QA in %.2f s (%s, %s)", result.clip.video_id, timings["events_qa"],
              plural(events.num_rows, "event"), plural(qa.num_rows, "QA item"))
    video_id = result.clip.video_id
    store.write_table("tracks", video_id, to_frame(result.tracks, result.picture, TRACK_COORDINATES))
    if result.objects is not None:
        store.write_table("objects", video_id, to_frame(result.objects, result.picture, OBJECT_COORDINATES))
    store.write_table("events", video_id, events)
    store.write_table("qa", video_id, qa)
    info = result.info
    status = {
        "video_id": video_id,
        "uri": result.clip.uri,
        "status": "ok",
        "error": None,
        "config_hash": config.hash(),
        # per stage: the hash of its settings and code, and the command that wrote its table (plan_run reads both)
        "stage_hashes": config.stage_hashes(),
        "stage_commands": {stage: "run" for stage in Config.STAGES},
        "backend": result.backend,
        "duration_s": info.duration_s,
        "native_fps": info.native_fps,
        "width": info.width,
        "height": info.height,
        "rotation": info.rotation,
        "picture": list(result.picture) if result.picture is not None else None,
        "n_frames": result.n_frames,
        "n_segments": result.n_segments,
        "n_persons": len(set(result.tracks.column("person_id").to_pylist())),
        "n_events": events.num_rows,
        "n_qa": qa.num_rows,
        "qa_dropped": drops,
        "shots": shots_record(shots) if shots is not None else None,
        "units": units,
        "timings": timings,
        "wall_s": time.time() - started,
        "finished_at": time.time(),
    }
    store.write_json(store.status_file(video_id), status)
    return status


def failed_status(video: InputVideo, error: str, config: Config, store: OutputStore, started: float) -> dict:
    """Remove whatever the clip wrote and record why it failed."""
    store.delete_video(video.video_id)
    status = {
        "video_id": video.video_id,
        "uri": video.uri,
        "status": "failed",
        "error": error,
        "config_hash": config.hash(),
        "wall_s": time.time() - started,
        "finished_at": time.time(),
    }
    store.write_json(store.status_file(video.video_id), status)
    return status


def process_video(video: InputVideo, perceive: Callable[[ClipSpec], PerceptionResult], config: Config,
                  store: OutputStore) -> dict:
    """Perceive, derive, write one video; any exception becomes a failed status, never a crash.

    A video longer than ``sampling.max_clip_seconds`` is perceived as overlapping segments, one after
    another, and merged into one video-level result (pipeline/segments.py); one status per video."""
    from pipeline.segments import perceive_video

    started = time.time()
    store.delete_video(video.video_id)
    try:
        log.debug("%s: perception starts (%s)", video.video_id, video.uri)
        result = perceive_video(video.video_id, video.uri, perceive, config)
        log.debug("%s: perception done in %.2f s, %d frames", video.video_id, time.time() - started, result.n_frames)
        return finish_clip(result, config, store, started)
    except Exception as exc:  # one bad clip must never stop a corpus run
        log.debug("clip %s failed:\n%s", video.video_id, traceback.format_exc())
        return failed_status(video, error_message(video.uri, exc), config, store, started)


def reject_unreadable(todo: list[InputVideo], config: Config, store: OutputStore) -> tuple[list[InputVideo], list[dict]]:
    """Record the local inputs that cannot be video at all (empty, not a media file, no video stream) as
    failed before any model loads; (the rest, their failed statuses). Headers only: a few ms per file.
    Remote inputs are left to perception (checking them here would fetch them twice)."""
    from pipeline.video import VideoError, check_container

    kept, failed = [], []
    for video in todo:
        started = time.time()
        try:
            if "://" not in video.uri or video.uri.startswith("file://"):
                check_container(video.uri)
        except VideoError as exc:
            failed.append(failed_status(video, error_message(video.uri, exc), config, store, started))
            continue
        kept.append(video)
    return kept, failed


# --- planning and bookkeeping -------------------------------------------------------------------

@dataclass
class RunPlan:
    todo: list[InputVideo]  # perception (and everything after it) to run
    done: list[InputVideo] = field(default_factory=list)  # ok with the same settings and code: skipped
    # ok, perception current, a later stage's settings or code changed: that stage and the next are re-derived
    # from the stored tables (no video), as (video, first stage to redo)
    rederive: list[tuple[InputVideo, str]] = field(default_factory=list)
    # ok, but a later stage was recomputed by `socialtrace events` / `qa` with other settings than this
    # command's: kept, never silently replaced; (video, stage, command that wrote it)
    kept: list[tuple[InputVideo, str, str]] = field(default_factory=list)


def plan_run(videos: list[InputVideo], config: Config, store: OutputStore, overwrite: bool) -> RunPlan:
    """Decide per video what a run does: perceive it, re-derive a later stage, keep it, or skip it."""
    wanted = config.stage_hashes()
    plan = RunPlan(todo=[])
    for video in videos:
        status = None if overwrite else store.read_status(video.video_id)
        if not status or status.get("status") != "ok" or status.get("uri") != video.uri:
            plan.todo.append(video)
            continue
        stored = status.get("stage_hashes")
        if stored is None:  # written before per-stage hashes: only the whole-config hash tells
            (plan.done if status.get("config_hash") == config.hash() else plan.todo).append(video)
            continue
        if stored.get("perception") != wanted["perception"]:
            plan.todo.append(video)
            continue
        stale = next((stage for stage in Config.STAGES[1:] if stored.get(stage) != wanted[stage]), None)
        command = (status.get("stage_commands") or {}).get(stale, "run")
        if stale is None:
            plan.done.append(video)
        elif command != "run":
            plan.kept.append((video, stale, command))
        else:
            plan.rederive.append((video, stale))
    return plan


def build_manifest(store: OutputStore, latest_inputs: Optional[Iterable[str]] = None) -> pa.Table:
    """OUT/manifest.parquet rebuilt from the status files (the truth), one row per video the folder
    holds. ``in_latest_run`` says which rows are inputs of the latest `socialtrace run` (default: the
    video ids run.json records): rows of videos no longer given (a renamed or removed input) stay, with
    their data, marked false."""
    if latest_inputs is None:
        latest_inputs = (store.read_json(store.path("run.json")) or {}).get("inputs")
    latest = None if latest_inputs is None else set(latest_inputs)
    rows = []
    for status in store.iter_statuses():
        row = {name: status.get(name) for name in schema.MANIFEST_SCHEMA.names}
        row["in_latest_run"] = None if latest is None else status.get("video_id") in latest
        rows.append(row)
    rows.sort(key=lambda r: r["video_id"])
    table = schema.table_from_rows(rows, schema.MANIFEST_SCHEMA)
    store.write_parquet(store.path("manifest.parquet"), table)
    return table


def package_versions() -> dict[str, Optional[str]]:
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in PACKAGES_RECORDED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_run_record(store: OutputStore, config: Config, manifest: pa.Table, extra: dict) -> dict:
    statuses = manifest.column("status").to_pylist()
    totals = {
        "clips": len(statuses),
        "ok": statuses.count("ok"),
        "failed": statuses.count("failed"),
        "frames": int(sum(v or 0 for v in manifest.column("n_frames").to_pylist())),
        "persons": int(sum(v or 0 for v in manifest.column("n_persons").to_pylist())),
        "events": int(sum(v or 0 for v in manifest.column("n_events").to_pylist())),
        "qa": int(sum(v or 0 for v in manifest.column("n_qa").to_pylist())),
        "video_seconds": float(sum(v or 0 for v in manifest.column("duration_s").to_pylist())),
    }
    record = {
        "config": config.to_dict(),
        "config_hash": config.hash(),
        "versions": package_versions(),
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(),
                 "cpus": usable_cores(), "python": platform.python_version()},
        "totals": totals,
        **extra,
    }
    store.write_json(store.path("run.json"), record)
    return record


def read_run_config(store: OutputStore) -> Config:
    record = store.read_json(store.path("run.json"))
    if record is None:
        raise FileNotFoundError(f"{store.uri}: no run.json (is this the output folder of `socialtrace run`?)")
    return Config.from_dict(record["config"])


def iter_local(todo: Iterable[InputVideo], config: Config, store: OutputStore,
               progress: Optional["VideoProgress"] = None) -> Iterable[dict]:
    """The in-process executor: one perception worker, clips one after another."""
    from pipeline.perception import PerceptionWorker

    started = time.perf_counter()
    with closing(PerceptionWorker(config)) as worker:
        log.debug("perception worker ready in %.2f s (models loaded)", time.perf_counter() - started)
        if progress is not None:
            worker.on_frames = progress.advance_frames
        for video in todo:
            if progress is not None:
                progress.start_video(video, expected_frames(video.uri, config))
            yield process_video(video, worker, config, store)


class VideoProgress:
    """What an executor reports within a video (a progress display implements it)."""

    def start_video(self, video: InputVideo, frames: Optional[int]) -> None:
        """Perception of ``video`` starts; ``frames`` is how many frames it will sample (None: unknown)."""

    def advance_frames(self, n: int) -> None:
        """``n`` more frames of the current video were perceived."""


def expected_frames(uri: str, config: Config) -> Optional[int]:
    """How many frames perception will sample from the video at ``uri`` (from its header; None when the
    header does not tell). Segments of a long video decode their overlaps twice; this counts them once."""
    from pipeline.segments import probe_duration

    duration = probe_duration(uri)
    if not duration:
        return None
    fps = config.sampling.fps
    regular = math.ceil(duration * fps - 1e-6)  # samples at 0, 1/fps, ... before the end
    # and the last frame (taken to end the clip: a frame early at most) past half a step (iter_frames' sample_end)
    return regular + (1 if duration - (regular - 1) / fps >= 0.5 / fps + 1e-6 else 0)


def rederive_clip(store: OutputStore, status: dict, config: Config, first_stage: str, command: str) -> dict:
    """Redo ``first_stage`` ("events" or "qa") and the stages after it for one ok clip from its stored
    tables (no video), then its status; ``command`` is recorded as what wrote those tables."""
    video_id = status["video_id"]
    tracks = store.read_video_table("tracks", video_id)
    if tracks is None:
        raise FileNotFoundError(f"{store.partition_file('tracks', video_id)}: missing tracks for an ok clip")
    objects = store.read_video_table("objects", video_id)
    # events and QA read the picture inside black bars or a fill, as when the clip was perceived (pipeline/picture.py)
    picture = window_of(status)
    tracks = to_picture(tracks, picture, TRACK_COORDINATES)
    objects = to_picture(objects, picture, OBJECT_COORDINATES)
    if first_stage == "events":
        events = derive_events(tracks, objects, config, status.get("duration_s"))
        store.write_table("events", video_id, events)
    else:
        events = store.read_video_table("events", video_id)
        if events is None:
            raise FileNotFoundError(f"{store.partition_file('events', video_id)}: missing events for an ok clip")
    qa, drops, units = derive_qa(events, tracks, config, status.get("duration_s"), shots_of_status(status),
                                 _aspect(status.get("width"), status.get("height"), picture), objects)
    store.write_table("qa", video_id, qa)
    redone = Config.STAGES[Config.STAGES.index(first_stage):]
    hashes, commands = dict(status.get("stage_hashes") or {}), dict(status.get("stage_commands") or {})
    for stage in redone:
        hashes[stage] = config.stage_hashes()[stage]
        commands[stage] = command
    status = {**status, "n_events": events.num_rows, "n_qa": qa.num_rows, "qa_dropped": drops, "units": units,
              "config_hash": config.hash(), "stage_hashes": hashes, "stage_commands": commands}
    store.write_json(store.status_file(video_id), status)
    return status


def recompute_tables(store: OutputStore, config: Config, with_events: bool) -> list[dict]:
    """`socialtrace events` / `socialtrace qa`: rebuild events (and QA) from stored tables, no video,
    then balance the answers of the whole folder's QA (qa_gen/corpus_balance.py)."""
    first_stage, command = ("events", "events") if with_events else ("qa", "qa")
    statuses = [rederive_clip(store, status, config, first_stage, command)
                for status in list(store.iter_statuses()) if status.get("status") == "ok"]
    return balance_stored_qa(store, statuses, config.seed)


def balance_stored_qa(store: OutputStore, statuses: list[dict], seed: int) -> list[dict]:
    """Balance answer classes across every ok clip's stored QA; rewrite the clips that changed (QA
    table, then status: n_qa, per-unit n_qa, qa_dropped["corpus_answer_balance"]). Returns the statuses."""
    from qa_gen.corpus_balance import balance_corpus

    tables = {s["video_id"]: store.read_video_table("qa", s["video_id"]) for s in statuses}
    rows = [r for t in tables.values() if t is not None for r in t.to_pylist()]
    kept, _ = balance_corpus(rows, seed)
    kept_of: dict[str, list[dict]] = {}
    for row in kept:
        kept_of.setdefault(row["video_id"], []).append(row)
    out = []
    for status in statuses:
        video_id, table = status["video_id"], tables[status["video_id"]]
        before = table.to_pylist() if table is not None else []
        after = kept_of.get(video_id, [])
        if after == before and status.get("n_qa") == len(after):
            out.append(status)
            continue
        store.write_table("qa", video_id, schema.table_from_rows(after, schema.QA_SCHEMA))
        drops = dict(status.get("qa_dropped") or {})
        drops["corpus_answer_balance"] = drops.get("corpus_answer_balance", 0) + len(before) - len(after)
        units = [{**u, "n_qa": sum(r["unit_id"] == u.get("unit_id") for r in after)} for u in status.get("units") or []]
        status = {**status, "n_qa": len(after), "qa_dropped": dict(sorted(drops.items())), "units": units}
        store.write_json(store.status_file(video_id), status)
        out.append(status)
    return out


def summarise_drops(statuses: Iterable[dict]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for status in statuses:
        for reason, count in (status.get("qa_dropped") or {}).items():
            totals[reason] = totals.get(reason, 0) + int(count)
    return dict(sorted(totals.items()))


def dumps(payload: dict) -> str:
    return json.dumps(payload, indent=2, sort_keys=True, default=str)
