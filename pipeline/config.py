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


@dataclass(frozen=True)
class SamplingConfig:
    fps: float = 2.0  # frames per second sampled from each video (pts-based)
    max_side: int = 960  # longest image side fed to the models (downscaled, never upscaled)
    max_clip_seconds: float = 120.0  # longer videos are split into segments of at most this (pipeline/segments.py)
    # consecutive segments of a long video share this much video, so the same people are seen by both and
    # identity is handed over by box overlap; < max_clip_seconds / 2 and >= 2 / fps (two shared frames).
    # A cut exactly at a boundary is only seen when this is >= scene_min_seconds + 2 / fps.
    segment_overlap_seconds: float = 2.0
    scene_threshold: float = 3.0  # PySceneDetect AdaptiveDetector adaptive_threshold
    scene_min_seconds: float = 0.6  # shortest allowed shot


@dataclass(frozen=True)
class DetectorConfig:
    backend: str = "auto"  # auto | yolo | mediapipe
    weights: str = "yolo11n-pose.pt"  # path or Ultralytics name; *.yaml builds an untrained model
    person_conf: float = 0.35  # minimum detection confidence kept
    batch_size: int = 8  # frames per YOLO forward pass
    device: str = ""  # "" lets the backend choose (GPU when present)
    mediapipe_search_passes: int = 1  # pose passes over the frame minus people found (back views)
    # that search runs on every frame while it finds someone, otherwise once per this interval
    search_interval_seconds: float = 1.0
    hand_model: bool = True  # run the hand landmark model on raised arms (pointing / open palm)


@dataclass(frozen=True)
class TrackingConfig:
    tracker: str = "bytetrack"  # bytetrack | botsort
    track_buffer_seconds: float = 2.0  # how long a lost track may come back, converted to frames at --fps
    track_high_thresh: float = 0.4
    track_low_thresh: float = 0.1
    new_track_thresh: float = 0.4
    match_thresh: float = 0.8
    stitch_max_gap_seconds: float = 60.0  # tracklets further apart than this are never joined
    stitch_appearance_max: float = 0.35  # max colour-histogram distance (Bhattacharyya) to join
    stitch_motion_max: float = 0.25  # max centre jump per second of gap (normalised units) within a shot
    stitch_motion_slack: float = 0.5  # plus this fraction of the box width, whatever the gap
    min_track_seconds: float = 0.3  # tracklets shorter than this (after stitching) are dropped
    # long videos (pipeline/segments.py): a segment's person takes over a video-level identity when their
    # boxes overlap by at least this IoU, averaged over the frames both segments share (absence counts 0);
    # the others are matched by colours (stitch_appearance_max) to people not seen in the segment
    segment_handoff_iou: float = 0.5


@dataclass(frozen=True)
class GazeConfig:
    cone_half_angle_deg: float = 15.0  # a head counts as a gaze target inside this cone
    camera_max_angle_deg: float = 12.0  # gaze this close to the optical axis (toward the lens) = camera
    head_margin: float = 0.02  # head boxes are grown by this fraction of the frame for hit tests
    min_conf: float = 0.2  # gaze below this confidence gets target "unknown"
    iris_weight: float = 0.5  # how much the iris offset turns the head-pose direction
    smooth_seconds: float = 0.1  # measured directions are averaged over this half-window (0 = off)
    interpolate_max_seconds: float = 0.3  # gaps up to this are interpolated (GRASP: 3 frames at 10 fps)
    carry_max_seconds: float = 1.0  # gaps up to this carry the last gaze with decaying confidence
    point_reach: float = 0.25  # gaze point when nothing is hit: origin + this x image-plane direction


@dataclass(frozen=True)
class PointingConfig:
    score_threshold: float = 0.5  # pointing_score >= this = extended index, other fingers curled
    min_arm_extension: float = 0.6  # wrist-shoulder distance / (upper arm + forearm) for a raised arm
    cone_half_angle_deg: float = 12.0
    min_arm_elevation_deg: float = 35.0  # arm (shoulder->wrist) this far from the torso axis = raised


@dataclass(frozen=True)
class EventConfig:
    min_gaze_at_seconds: float = 0.5
    min_mutual_gaze_seconds: float = 1.0
    mutual_gaze_merge_gap_seconds: float = 1.5
    min_joint_attention_seconds: float = 0.5
    joint_attention_min_score: float = 0.6  # exp(-3 x median distance to centroid)
    following_min_lag_seconds: float = 0.5
    following_max_lag_seconds: float = 2.0
    following_same_location: float = 0.03  # normalised distance for "same location"
    capture_min_people: int = 3
    capture_window_seconds: float = 0.5
    shift_min_speed: float = 0.7  # gaze point relative to face centre, frame widths per second
    shift_min_seconds: float = 0.5
    shift_max_seconds: float = 1.5
    smoothing_gap_seconds: float = 0.5  # gaps this short are bridged (blinks, missed detections)
    smoothing_blip_seconds: float = 0.3  # runs this short are dropped
    min_gesture_seconds: float = 0.3
    cross_adjacent_seconds: float = 3.0
    gaze_follows_gesture_window_seconds: float = 3.0
    # joint attention on a location (no target box): the GRASP convergence score, stricter because gaze
    # points that hit nothing are projections and 0.6 would accept points 0.34 of the frame apart
    joint_attention_location_min_score: float = 0.85
    aversion_min_contact_seconds: float = 0.5  # eye contact must have lasted this long before it breaks
    aversion_min_hold_seconds: float = 0.5  # the partner keeps looking at least this long afterwards
    reach_min_extension: float = 0.8  # |wrist - shoulder| / arm length for an extended (reaching) arm
    reach_min_open: float = 0.5  # hand_open score of a reaching hand
    reach_cone_half_angle_deg: float = 30.0  # a box counts as the arm's target inside this cone
    reach_min_arm_angle_deg: float = 45.0  # shoulder->wrist at least this far from hanging straight down
    show_min_extension: float = 0.7  # arm extension of someone holding an object out to another person
    hold_min_overlap: float = 0.2  # hand/object intersection over the smaller box for "holding"
    give_max_gap_seconds: float = 1.0  # an object may be in nobody's hand this long during a hand-over


@dataclass(frozen=True)
class QAConfig:
    formats: tuple[str, ...] = ()  # () = each category's default format; ("mcq",) = all mcq
    max_items_per_category: int = 6  # per clip
    near_duplicate_threshold: float = 0.9  # question similarity above which the later item is dropped
    time_step_seconds: float = 0.5  # times printed in questions are rounded to this
    reciprocal_window_seconds: float = 3.0  # G6: a gesture back within this long after the first one ends
    response_window_seconds: float = 3.0  # C2/C3/T5: how long after a gesture or gaze a response counts


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
    # most 4); outputs do not depend on it
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
    events: EventConfig = field(default_factory=EventConfig)
    qa: QAConfig = field(default_factory=QAConfig)
    run: RunConfig = field(default_factory=RunConfig)
    seed: int = 0

    # Sections that change no output table: they are left out of the hash so that, e.g., a rerun
    # with more workers still skips finished clips.
    _UNHASHED = ("run",)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def hash(self) -> str:
        data = {k: v for k, v in self.to_dict().items() if k not in self._UNHASHED}
        blob = json.dumps(data, sort_keys=True, default=list).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

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


def _merge(obj: Any, updates: Mapping[str, Any]) -> Any:
    names = {f.name: f for f in dataclasses.fields(obj)}
    changes = {}
    for key, value in updates.items():
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
