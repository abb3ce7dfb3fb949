"""The one configuration: every threshold of every stage, in seconds (not frames) where it is a time,
so results do not change with the sampling rate. A run records it in OUT/run.json with its hash; a
rerun skips clips whose status carries the same hash.

Sections are plain frozen dataclasses so they pickle to Ray workers and hash stably. Load overrides from
a YAML/JSON file with ``Config.load(path)``; the file may give any subset, nested by section name.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from detectors.config import DetectorConfig, GazeConfig, PointingConfig, ReferentConfig
from events.config import EventConfig
from qa_gen.config import QAConfig
from pipeline.code_version import stage_code
from tracking.config import TrackingConfig

__all__ = ["Config", "SamplingConfig", "RunConfig", "DetectorConfig", "GazeConfig", "PointingConfig", "ReferentConfig",
           "TrackingConfig", "EventConfig", "QAConfig", "usable_cores"]


@dataclass(frozen=True)
class SamplingConfig:
    fps: float = 2.0  # frames per second sampled from each video (pts-based)
    max_side: int = 960  # longest image side fed to the models (downscaled, never upscaled)
    max_clip_seconds: float = 120.0  # longer videos are split into segments of at most this (pipeline/segments.py)
    # consecutive segments of a long video share this much video, so the same people are seen by both and
    # identity is handed over by box overlap; < max_clip_seconds / 2 and >= 2 / fps (two shared frames).
    # A cut exactly at a boundary is only seen when this is >= scene_min_seconds + 2 / fps.
    segment_overlap_seconds: float = 2.0
    # cuts (pipeline/video.py ShotDetector, on every decoded frame): a frame is a cut when its grey
    # difference from the one before is this many times its neighbours' ...
    scene_threshold: float = 3.0
    scene_min_seconds: float = 0.6  # shortest allowed shot (the clip's start is no cut: a shot may open shorter)
    # ... and at least this (mean absolute difference, 0-255, of 64 px wide grey frames): within a shot
    # the shared clips stay <= 9.3 (a whip pan), different clips' frames differ by >= 37
    scene_min_change: float = 12.0
    # ... or this many times the two pictures' own contrast (mean absolute deviation of their grey levels) where
    # that is less: a dark, flat scene's cut changes less than 12 (tvhid_handshake_0001 cut from a close-up to
    # its wide shot: 11.9 at contrast 9.9); cuts differ by 1.05-1.47 of the contrast, frames within a shot of
    # the shared clips by at most 0.46; 0 = off
    scene_min_change_contrast: float = 1.0


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class RunConfig:
    executor: str = "auto"  # auto | local | ray
    workers: int = 0  # 0 = one per CPU core
    gpus_per_worker: float = 0.0
    clip_timeout_seconds: float = 1800.0
    max_retries: int = 2  # retries of a clip whose worker died
    # threads one perception worker uses for per-person models (0 = the cores this process may use, at
    # most 4); when set (a Ray actor sets it to its share of the node) it also caps the YOLO runtime's
    # inference threads, which otherwise take every core; outputs do not depend on it
    perception_threads: int = 0

    def perception_thread_count(self) -> int:
        """``perception_threads`` with 0 resolved for this machine."""
        return self.perception_threads or min(4, usable_cores())
    worker_start_timeout_seconds: float = 600.0  # a perception actor still loading models after this is replaced
    clip_timeout_per_video_second: float = 2.0  # added to clip_timeout_seconds per second of video (long videos)


@dataclass(frozen=True)
class Config:
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    detector: DetectorConfig = field(default_factory=DetectorConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    gaze: GazeConfig = field(default_factory=GazeConfig)
    pointing: PointingConfig = field(default_factory=PointingConfig)
    referents: ReferentConfig = field(default_factory=ReferentConfig)
    events: EventConfig = field(default_factory=EventConfig)
    qa: QAConfig = field(default_factory=QAConfig)
    run: RunConfig = field(default_factory=RunConfig)
    seed: int = 0

    # Sections that change no output table: they are left out of the hash so that, e.g., a rerun
    # with more workers still skips finished clips.
    _UNHASHED = ("run",)

    # What each stage's tables depend on, in pipeline order: a rerun redoes a stage only when its own
    # hash changed (a new QA seed does not redo perception). Each stage includes the stages before it.
    STAGES = ("perception", "events", "qa")
    _STAGE_KEYS = {
        "perception": ("sampling", "detector", "tracking", "gaze", "pointing", "referents"),
        "events": ("sampling", "detector", "tracking", "gaze", "pointing", "referents", "events"),
        "qa": ("sampling", "detector", "tracking", "gaze", "pointing", "referents", "events", "qa", "seed"),
    }

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def hash(self) -> str:
        data = {k: v for k, v in self.to_dict().items() if k not in self._UNHASHED}
        return _digest(data)

    def stage_hashes(self) -> dict[str, str]:
        """{"perception": ..., "events": ..., "qa": ...}: the hash of what each stage's tables depend on: its
        settings and the source of the code it runs (pipeline.code_version)."""
        data = self.to_dict()
        return {stage: _digest({**{k: data[k] for k in keys}, "code": stage_code(stage)})
                for stage, keys in self._STAGE_KEYS.items()}

    def replace(self, **sections: Any) -> "Config":
        """Return a copy with whole sections or section fields replaced:
        ``cfg.replace(sampling={"fps": 10})`` or ``cfg.replace(seed=3)``."""
        return _merge(self, sections)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Config":
        return _merge(cls(), data)

    @classmethod
    def load(cls, path: str | Path) -> "Config":
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ValueError(f"{path}: cannot read config file ({exc.strerror})") from exc
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: config must be a mapping of sections")
        try:
            return cls.from_dict(data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from exc


def _digest(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=list).encode()).hexdigest()[:16]


def _merge(obj: Any, updates: Mapping[str, Any]) -> Any:
    names = {f.name: f for f in dataclasses.fields(obj)}
    changes = {}
    for key, value in updates.items():
        if key not in names and key in getattr(type(obj), "RETIRED_KEYS", ()):
            continue  # a setting the stage no longer has, still in older run.json / YAML files
        if key not in names:
            raise ValueError(f"unknown config key {key!r} in {type(obj).__name__}; known: {sorted(names)}")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if dataclasses.is_dataclass(value):
                changes[key] = value
            elif isinstance(value, Mapping):
                changes[key] = _merge(current, value)
            else:
                raise ValueError(f"config section {key!r} must be a mapping, got {value!r}")
        else:
            if isinstance(current, tuple) and isinstance(value, list):
                value = tuple(value)
            changes[key] = value
    return dataclasses.replace(obj, **changes)
