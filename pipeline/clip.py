"""What one unit of work is (a clip) and what perception hands back for it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pyarrow as pa


@dataclass(frozen=True)
class ClipSpec:
    """One video, or a [start_s, end_s) segment of a longer one (pipeline/segments.py: <= 120 s plus an overlap)."""

    video_id: str
    uri: str  # local path or pyarrow.fs URI
    start_s: float = 0.0
    end_s: Optional[float] = None  # None = to the end
    # Long videos (pipeline/segments.py): which segment this is, and the video time from which its rows are
    # kept; the decoded stretch before it is the overlap shared with the previous segment.
    segment_index: int = 0
    keep_from_s: float = 0.0


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
    # pipeline.schema.SAMPLED_FRAMES_SCHEMA: every sampled frame (also those with nobody), so segments can
    # be merged into one video (pipeline/segments.py)
    frames: Optional[pa.Table] = None
    # pipeline.schema.IDENTITIES_SCHEMA: one row per person_id, their mean appearance descriptor
    identities: Optional[pa.Table] = None
    n_segments: int = 1  # how many segments of the video were perceived to make this result
    # the picture inside the video's black bars or fill (normalised x0, y0, x1, y1 of the displayed frame;
    # None: neither). The tables above are then in the picture's coordinates (pipeline/picture.py)
    picture: Optional[tuple[float, float, float, float]] = None
