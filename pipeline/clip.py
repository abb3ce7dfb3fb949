"""What one unit of work is (a clip) and what perception hands back for it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pyarrow as pa


@dataclass(frozen=True)
class ClipSpec:
    """One video, or a [start_s, end_s) segment of a longer one (scene-bounded, <= 120 s)."""

    video_id: str
    uri: str  # local path or pyarrow.fs URI
    start_s: float = 0.0
    end_s: Optional[float] = None  # None = to the end


@dataclass(frozen=True)
class VideoInfo:
    """What probing a video tells before decoding it (rotation applied to width/height)."""

    uri: str
    duration_s: float
    native_fps: float
    width: int  # displayed width, after rotation
    height: int
    rotation: int  # degrees clockwise applied to display the frames (0, 90, 180, 270)
    n_native_frames: int  # from the container; may be 0 when unknown
    codec: str


@dataclass
class PerceptionResult:
    """Everything perception emits for one clip: Arrow tables only, never frames."""

    clip: ClipSpec
    info: VideoInfo
    tracks: pa.Table  # pipeline.schema.TRACKS_SCHEMA
    objects: Optional[pa.Table]  # pipeline.schema.OBJECTS_SCHEMA, None when no object detector ran
    n_frames: int  # sampled frames
    timings: dict = field(default_factory=dict)  # stage name -> seconds
    backend: str = ""  # which detector backend ran
