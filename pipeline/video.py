"""Video input: probe a file, decode it once, sample frames by pts, and find camera shots.

Everything here reads through PyAV, so local paths and pyarrow.fs URIs (s3://, gs://, file://) work the
same way. Sampling is by presentation time, not by frame count, so variable-frame-rate video is sampled
at the right instants; rotation metadata is applied so every image is upright as a player shows it.
Every failure is a ``VideoError`` whose message is "<uri>: <reason>".
"""
from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import IO, Callable, Iterator, Optional

import av
import cv2
import numpy as np

from pipeline.clip import VideoInfo

log = logging.getLogger(__name__)

# A decoded frame this close before a sampling instant still counts as "at" it (pts rounding).
_PTS_EPSILON_S = 1e-3
# A stream that ends this much earlier than its header promises is truncated (seconds, or fraction).
_TRUNCATION_TOLERANCE_S = 0.5
_TRUNCATION_TOLERANCE_FRACTION = 0.1


class VideoError(Exception):
    """A video that cannot be read. The message is always "<uri>: <reason>"."""

    def __init__(self, uri: str, reason: str):
        super().__init__(f"{uri}: {reason}")
        self.uri = uri
        self.reason = reason


@dataclass(frozen=True)
class SampledFrame:
    """One sampled frame: upright RGB uint8 image, resized so its longest side <= max_side."""

    frame_idx: int  # index among sampled frames of the clip, from 0
    native_frame_idx: int  # index among the video's decoded frames
    t: float  # seconds from the clip start, from pts
    image: np.ndarray  # (H, W, 3) uint8 RGB, C-contiguous


# --- opening ------------------------------------------------------------------------------------


def _is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


@contextlib.contextmanager
def _open_container(uri: str) -> Iterator[av.container.InputContainer]:
    """Open ``uri`` with PyAV after checking it exists and is not empty; translate PyAV's errors."""
    source: str | IO[bytes]
    handle: Optional[IO[bytes]] = None
    if _is_remote(uri) or uri.startswith("file://"):
        import pyarrow.fs as pafs

        try:
            filesystem, path = pafs.FileSystem.from_uri(uri)
            file_info = filesystem.get_file_info(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for bad URIs
            raise VideoError(uri, f"cannot resolve URI ({exc})") from exc
        if file_info.type == pafs.FileType.NotFound:
            raise VideoError(uri, "file not found")
        if file_info.type != pafs.FileType.File:
            raise VideoError(uri, "not a file")
        if file_info.size == 0:
            raise VideoError(uri, "empty file (0 bytes)")
        handle = filesystem.open_input_file(path)
        source = handle
    else:
        if not os.path.exists(uri):
            raise VideoError(uri, "file not found")
        if not os.path.isfile(uri):
            raise VideoError(uri, "not a file")
        if os.path.getsize(uri) == 0:
            raise VideoError(uri, "empty file (0 bytes)")
        source = uri
    try:
        try:
            container = av.open(source, mode="r")
        except av.error.InvalidDataError as exc:
            raise VideoError(uri, "not a readable video: invalid or truncated data") from exc
        except av.error.FFmpegError as exc:
            raise VideoError(uri, f"cannot open as video ({exc.strerror or exc})") from exc
        try:
            yield container
        finally:
            container.close()
    finally:
        if handle is not None:
            handle.close()


def _video_stream(container: av.container.InputContainer, uri: str) -> av.video.stream.VideoStream:
    if not container.streams.video:
        kinds = sorted({s.type for s in container.streams}) or ["none"]
        raise VideoError(uri, f"no video stream (streams: {', '.join(kinds)})")
    stream = container.streams.video[0]
    if stream.codec_context is None:
        raise VideoError(uri, "unsupported codec: no decoder available")
    return stream


# --- geometry: rotation and display size ---------------------------------------------------------


def rotation_from_display_matrix(ccw_degrees: float) -> int:
    """Clockwise rotation (0/90/180/270) that displays a frame whose display matrix rotates it
    ``ccw_degrees`` counter-clockwise (FFmpeg's av_display_rotation_get / PyAV's VideoFrame.rotation)."""
    return int(round(-float(ccw_degrees) / 90.0)) * 90 % 360


def rotate_image(image: np.ndarray, rotation_cw: int) -> np.ndarray:
    """Rotate an (H, W, C) image clockwise by 0/90/180/270 degrees."""
    if rotation_cw % 360 == 0:
        return image
    if rotation_cw % 90:
        raise ValueError(f"rotation must be a multiple of 90 degrees, got {rotation_cw}")
    return np.ascontiguousarray(np.rot90(image, k=-(rotation_cw // 90)))


def _stream_rotation(stream: av.video.stream.VideoStream, first_frame: Optional[av.VideoFrame]) -> int:
    """Clockwise display rotation: the frame's display matrix (FFmpeg copies the stream's onto every
    frame), else the legacy ``rotate`` metadata tag (already clockwise)."""
    if first_frame is not None and first_frame.rotation:
        return rotation_from_display_matrix(first_frame.rotation)
    tag = stream.metadata.get("rotate")
    if tag:
        try:
            return int(round(float(tag) / 90.0)) * 90 % 360
        except ValueError:
            log.warning("ignoring unparsable rotate tag %r", tag)
    return 0


def _display_size(stream: av.video.stream.VideoStream) -> tuple[int, int]:
    """Coded width/height corrected for non-square pixels (before rotation)."""
    width, height = stream.codec_context.width, stream.codec_context.height
    sar = stream.sample_aspect_ratio
    if sar is not None and sar > 0 and sar != 1:
        width = int(round(width * float(sar)))
    return width, height


def scaled_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """Size with the longest side <= max_side, aspect kept, never upscaled."""
    scale = min(1.0, max_side / float(max(width, height)))
    return max(1, int(round(width * scale))), max(1, int(round(height * scale)))


# --- probe --------------------------------------------------------------------------------------


def _frame_rate(stream: av.video.stream.VideoStream) -> float:
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    return float(rate) if rate else 0.0


def _declared_duration(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> float:
    """The longest duration the headers promise for the video stream (0 when unknown). AVI indexes
    shrink with truncation while the frame count in the header does not, so take the larger."""
    candidates = [0.0]
    if stream.duration is not None and stream.time_base is not None:
        candidates.append(float(stream.duration * stream.time_base))
    rate = _frame_rate(stream)
    if stream.frames and rate > 0:
        candidates.append(stream.frames / rate)
    if len(candidates) == 1 and container.duration is not None:
        candidates.append(container.duration / av.time_base)
    return max(candidates)


def _stream_start(stream: av.video.stream.VideoStream) -> float:
    if stream.start_time is None or stream.time_base is None:
        return 0.0
    return float(stream.start_time * stream.time_base)


def check_container(uri: str) -> None:
    """Raise VideoError when ``uri`` is missing, empty, not a media container or has no video stream;
    reads headers only (no decoding), so a corpus can be checked before any model loads."""
    with _open_container(str(uri)) as container:
        _video_stream(container, str(uri))


def probe(uri: str) -> VideoInfo:
    """Read a video's duration, frame rate, displayed size and rotation; decodes one frame to prove
    the stream is decodable. Raises VideoError naming the file and the reason."""
    uri = str(uri)
    with _open_container(uri) as container:
        stream = _video_stream(container, uri)
        first = _first_frame(container, stream, uri)
        rotation = _stream_rotation(stream, first)
        # times count from the first frame (iter_frames): so does the length
        lead = _lead_of(first, stream)
        width, height = _display_size(stream)
        if rotation in (90, 270):
            width, height = height, width
        return VideoInfo(
            uri=uri,
            duration_s=max(_declared_duration(container, stream) - lead, 0.0),
            native_fps=_frame_rate(stream),
            width=width,
            height=height,
            rotation=rotation,
            n_native_frames=int(stream.frames or 0),
            codec=stream.codec_context.name,
        )


def _first_frame(container: av.container.InputContainer, stream: av.video.stream.VideoStream, uri: str) -> av.VideoFrame:
    try:
        for frame in container.decode(stream):
            return frame
    except av.error.FFmpegError as exc:
        raise VideoError(uri, f"no decodable frames ({exc.strerror or exc})") from exc
    raise VideoError(uri, "no decodable frames (truncated or corrupt video stream)")


def _lead_of(first: av.VideoFrame, stream: av.video.stream.VideoStream) -> float:
    """Seconds from the stream's start to its first decoded frame ``first`` (0 when that is earlier or has no pts)."""
    if first.pts is None:
        return 0.0
    return max(float(first.pts * (stream.time_base or Fraction(1, 1))) - _stream_start(stream), 0.0)


# --- decode + sample ----------------------------------------------------------------------------


def _upright_rgb(frame: av.VideoFrame, size: tuple[int, int], rotation: int,
                 crop: Optional[tuple[slice, slice]] = None) -> np.ndarray:
    """The frame as upright RGB uint8 of ``size`` (before rotation), cut to ``crop`` (rows, columns of the
    upright image; None: whole), C-contiguous: FFmpeg pads each row to its alignment (a 312 px wide frame:
    936 bytes of pixels in 960), so the array is a strided view; dlib's face chips refuse one, and no consumer
    should meet it."""
    image = rotate_image(frame.reformat(width=size[0], height=size[1], format="rgb24").to_ndarray(), rotation)
    return np.ascontiguousarray(image if crop is None else image[crop])


def _sampled_size(stream: av.video.stream.VideoStream, rotation: int, max_side: int,
                  window: Optional[tuple[float, float, float, float]]) -> tuple[tuple[int, int], Optional[tuple[slice, slice]]]:
    """The size (before rotation) sampled frames are scaled to and the crop of the upright image that leaves
    the picture ``window`` (normalised x0, y0, x1, y1 of the displayed frame; None: the whole frame), so that
    the picture's longer side is at most ``max_side``: the picture inside black bars or a fill gets the pixels
    the same picture without them would (pipeline/picture.py)."""
    width, height = _display_size(stream)
    if window is None:
        return scaled_size(width, height, max_side), None
    upright = (height, width) if rotation in (90, 270) else (width, height)
    x0, y0, x1, y1 = window
    picture = max(upright[0] * (x1 - x0), upright[1] * (y1 - y0))
    scale = min(1.0, max_side / max(picture, 1.0))
    size = max(1, int(round(width * scale))), max(1, int(round(height * scale)))
    shown = (size[1], size[0]) if rotation in (90, 270) else size
    return size, window_slices(shown[1], shown[0], window)


def window_slices(height: int, width: int, window: tuple[float, float, float, float]) -> tuple[slice, slice]:
    """The rows and columns of a ``height`` x ``width`` image inside ``window`` (normalised x0, y0, x1, y1),
    at least one of each."""
    x0, y0, x1, y1 = window
    top, left = int(round(y0 * height)), int(round(x0 * width))
    return slice(top, max(int(round(y1 * height)), top + 1)), slice(left, max(int(round(x1 * width)), left + 1))


def iter_frames(
    uri: str,
    fps: float,
    max_side: int,
    start_s: float = 0.0,
    end_s: Optional[float] = None,
    on_decoded: Optional[Callable[[float, av.VideoFrame], None]] = None,
    sample_end: bool = False,
    window: Optional[tuple[float, float, float, float]] = None,
) -> Iterator[SampledFrame]:
    """Decode ``uri`` once and yield the first frame at or after each instant start_s + k / fps.

    ``window``: the part of the displayed frame to yield (normalised x0, y0, x1, y1: the picture inside black
    bars, pipeline/picture.py), its longer side at most ``max_side``; None: the whole frame.

    ``sample_end`` (with no ``end_s``: the clip runs to the video's end): the video's last frame is sampled
    too when it lies at least half a step after the last sampled one, so every moment of the clip is within
    half a step of a sampled frame (a 1.96 s clip at 2 fps is otherwise seen until 1.5 s: its last
    quarter never).

    Times come from pts (seconds from the clip start), so variable frame rate is sampled correctly. The clip
    starts at its first frame: a container that puts it later (an AVI's decoder delay) and one that puts it
    at 0 (the same frames in MP4) give the same times and sample the same frames.
    Frames not sampled are never colour-converted; ``on_decoded(t, frame)`` sees every decoded frame of
    the clip (ShotDetector.push_frame: cuts are found at the frame where they happen). Raises VideoError when the file cannot be read,
    yields no frame, or ends well before its header says (truncated).
    """
    uri = str(uri)
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if max_side <= 0:
        raise ValueError(f"max_side must be positive, got {max_side}")
    if end_s is not None and end_s <= start_s:
        raise ValueError(f"end_s ({end_s}) must be after start_s ({start_s})")
    with _open_container(uri) as container:
        stream = _video_stream(container, uri)
        # frame + slice threads: decoding dominates at low sampling rates. Their count stays FFmpeg's: one
        # decoding thread (thread_count 1) surfaced a truncated file's last packet as "Invalid data" a second
        # early, where the threaded decoder ends at the last whole frame, so the count would change outputs
        stream.thread_type = "AUTO"
        native_fps = _frame_rate(stream)
        stream_start = _stream_start(stream)
        declared = _declared_duration(container, stream)
        time_base = stream.time_base or Fraction(1, 1)
        # the clip's time 0 is its first frame: an AVI's first frame can carry pts 0.125 s (the decoder's
        # reordering delay) where the same frames muxed into MP4 start at 0, and the sampling grid must
        # land on the same frames of both (a copy of the clip gives the same output)
        lead = None if start_s <= 0 else _lead_of(_first_frame(container, stream, uri), stream)
        if start_s > 0:
            # Seek to the keyframe before start_s; frames before it are decoded but not sampled.
            container.seek(int((start_s + lead + stream_start) / time_base), stream=stream, backward=True)

        n_sampled = 0
        n_decoded = 0
        next_instant = 0.0
        last_t: Optional[float] = None
        last_sampled_t = -np.inf
        unsampled_end = None  # (frame, t, native index) of the last decoded frame after the last sampled one
        rotation: Optional[int] = None
        out_size: Optional[tuple[int, int]] = None
        crop: Optional[tuple[slice, slice]] = None
        try:
            for frame in container.decode(stream):
                n_decoded += 1
                if frame.pts is None:
                    continue  # no timestamp, no place on the timeline
                video_t = float(frame.pts * time_base) - stream_start
                if lead is None:
                    lead = max(video_t, 0.0)
                video_t -= lead
                native_idx = (
                    int(round(video_t * native_fps)) if start_s > 0 and native_fps > 0 else n_decoded - 1
                )
                t = video_t - start_s
                if t < -_PTS_EPSILON_S:
                    continue
                if end_s is not None and video_t >= end_s - _PTS_EPSILON_S:
                    break
                last_t = t
                if on_decoded is not None:
                    on_decoded(max(t, 0.0), frame)
                if t < next_instant - _PTS_EPSILON_S:
                    unsampled_end = (frame, t, native_idx)
                    continue  # not sampled: skip the (costly) colour conversion
                if rotation is None:
                    rotation = _stream_rotation(stream, frame)
                    out_size, crop = _sampled_size(stream, rotation, max_side, window)
                yield SampledFrame(n_sampled, native_idx, max(t, 0.0), _upright_rgb(frame, out_size, rotation, crop))
                n_sampled += 1
                last_sampled_t, unsampled_end = t, None
                # One frame covers every instant up to its own time (low native fps or VFR gaps).
                next_instant = (int(np.floor((t + _PTS_EPSILON_S) * fps)) + 1) / fps
            if (sample_end and end_s is None and unsampled_end is not None
                    and unsampled_end[1] - last_sampled_t >= 0.5 / fps - _PTS_EPSILON_S):
                frame, t, native_idx = unsampled_end
                yield SampledFrame(n_sampled, native_idx, max(t, 0.0), _upright_rgb(frame, out_size, rotation, crop))
                n_sampled += 1
        except av.error.FFmpegError as exc:
            if n_sampled == 0:
                raise VideoError(uri, f"no decodable frames ({exc.strerror or exc})") from exc
            raise VideoError(uri, f"decoding failed after {last_t:.2f} s ({exc.strerror or exc})") from exc
        if n_sampled == 0:
            raise VideoError(uri, "no decodable frames (truncated or corrupt video stream)")
        if end_s is None and declared > 0 and last_t is not None:
            decoded_until = last_t + start_s + lead + (1.0 / native_fps if native_fps > 0 else 0.0)
            tolerance = max(_TRUNCATION_TOLERANCE_S, _TRUNCATION_TOLERANCE_FRACTION * declared)
            if decoded_until < declared - tolerance:
                raise VideoError(
                    uri, f"truncated: frames end at {decoded_until:.2f} s but the header declares {declared:.2f} s"
                )


# --- camera shots -------------------------------------------------------------------------------


class ShotDetector:
    """Streaming cut detection over every decoded frame (no second decode, no colour conversion).

    Each frame is shrunk to a small grey image (its luma plane, strided then area-averaged to
    ``WORK_WIDTH`` pixels wide: ~0.15 ms for 1080p). A cut is a frame whose mean absolute grey difference
    from the previous frame is (a) at least ``min_change`` (0-255 scale), or ``min_change_contrast`` times the two
    pictures' own contrast (the mean absolute deviation of their grey levels) where that is less (0: off), (b) at
    least ``threshold`` times the mean difference of its neighbours (``WINDOW`` frames each side, those that
    exist: so a fast pan, whose every frame differs, is not a cut, and a cut in the clip's second frame is),
    and (c) lasting: the
    frame after it differs from the frame before it by at least half as much (a flash or a single bad
    frame is not a cut). Cuts closer than ``min_seconds`` to the previous cut are ignored; the clip start is
    no cut, so a cut right after it counts.

    Measured on the shared clips (64 px wide): within a shot the difference of consecutive frames stays
    <= 9.3 (tvhid_highfive_0018's whip pan) and <= 4 times its neighbours' (opencv_vtest, at 3.3); the
    last frame of one shared clip against the first of another differs by 37-90. A cut in a dark, flat scene
    changes less: tvhid_handshake_0001 (grey levels 8-10 around their mean) cut from a close-up to the wide
    shot of the same men differs by 11.9; relative to the pictures' contrast, cuts (close-up to wide shot of the
    same scene included) differ by 1.05-1.47, frames within a shot by at most 0.46 (0.70 at 10 fps).
    """

    WORK_WIDTH = 64
    WINDOW = 2

    def __init__(self, threshold: float = 3.0, min_seconds: float = 0.6, min_change: float = 12.0,
                 min_change_contrast: float = 1.0, window: Optional[tuple[float, float, float, float]] = None):
        self.threshold = float(threshold)
        # the picture inside black bars or a fill (pipeline/picture.coded_window): constant margins would dilute
        # every change
        self.window = window
        self.min_seconds = float(min_seconds)
        self.min_change = float(min_change)
        self.min_change_contrast = float(min_change_contrast)
        self._times: list[float] = []  # every pushed frame's time
        self._greys: list[np.ndarray] = []  # the last few small grey frames (index = frame number)
        self._diffs: list[float] = []  # _diffs[i]: frame i vs frame i-1 (0 for frame 0)
        self._contrasts: list[float] = []  # _contrasts[i]: frame i's mean absolute deviation of grey levels
        self._judged = 0  # frames up to here have been judged
        self._cuts: list[float] = []  # times of the first frame of each new shot

    # -- feeding

    def push_frame(self, t: float, frame: av.VideoFrame) -> None:
        """Feed the next decoded frame (any pixel format) at time ``t`` (seconds, increasing)."""
        self._push(t, small_grey(frame, self.WORK_WIDTH, self.window))

    def push_image(self, t: float, image: np.ndarray) -> None:
        """Feed the next frame as an RGB (or grey) uint8 image at time ``t``."""
        self._push(t, small_grey_image(image, self.WORK_WIDTH))

    def _push(self, t: float, grey: np.ndarray) -> None:
        if self._times and t <= self._times[-1]:
            raise ValueError(f"ShotDetector expects increasing times, got {t} after {self._times[-1]}")
        n = len(self._times)
        previous = self._greys[n - 1] if n else None
        self._times.append(float(t))
        self._diffs.append(_grey_change(previous, grey) if previous is not None else 0.0)
        self._contrasts.append(float(np.abs(grey - grey.mean()).mean()))
        self._greys.append(grey)
        # judge every frame that now has its whole look-ahead window
        while self._judged <= n - self.WINDOW:
            self._judge(self._judged, len(self._times))
            self._judged += 1
        # only the frames a later judgement can still read are kept
        for old in range(max(0, n - 2 * self.WINDOW - 2), max(0, n - 2 * self.WINDOW - 1)):
            self._greys[old] = None  # type: ignore[call-overload]

    def _judge(self, i: int, n: int) -> None:
        if i == 0:
            return
        change = self._diffs[i]
        limit = self.min_change
        if self.min_change_contrast > 0:
            limit = min(limit, self.min_change_contrast * (self._contrasts[i - 1] + self._contrasts[i]) / 2)
        if change < limit:
            return
        if self._cuts and self._times[i] - self._cuts[-1] < self.min_seconds - _PTS_EPSILON_S:
            return
        neighbours = [self._diffs[k] for k in range(max(1, i - self.WINDOW), min(n, i + self.WINDOW + 1)) if k != i]
        baseline = float(np.mean(neighbours)) if neighbours else 0.0
        if change < self.threshold * baseline:
            return
        if i + 1 < n:  # the new picture stays: the frame after still differs from the one before the cut
            if _grey_change(self._greys[i - 1], self._greys[i + 1]) < 0.5 * change:
                return
        self._cuts.append(self._times[i])

    def finish(self) -> None:
        """Judge the last frames (their look-ahead is cut short by the end of the stream)."""
        n = len(self._times)
        while self._judged < n:
            self._judge(self._judged, n)
            self._judged += 1

    # -- reading

    def cut_times(self) -> list[float]:
        """Times of the first frame of each shot after the first (call ``finish`` first)."""
        return list(self._cuts)

    def shot_ids(self, times) -> np.ndarray:
        """(len(times),) int32 shot per sampled time: 0, +1 for each shot that has a sampled frame (a
        shot lying wholly between two samples is skipped, so ids count the shots that were seen)."""
        times = np.asarray(times, np.float64)
        passed = np.searchsorted(np.asarray(self._cuts, np.float64), times + _PTS_EPSILON_S, side="right")
        if len(times) == 0:
            return np.zeros(0, np.int32)
        changes = np.concatenate([[0], (np.diff(passed) > 0).astype(np.int32)])
        return np.cumsum(changes, dtype=np.int32)

    def shot_starts(self, times) -> np.ndarray:
        """(len(times),) float64: when each sampled time's shot began (the cut's time; 0 for the first)."""
        times = np.asarray(times, np.float64)
        cuts = np.concatenate([[0.0], np.asarray(self._cuts, np.float64)])
        passed = np.searchsorted(cuts, times + _PTS_EPSILON_S, side="right") - 1
        return cuts[np.maximum(passed, 0)]


def _grey_change(earlier: np.ndarray, later: np.ndarray) -> float:
    """Mean absolute difference of two small grey frames (0-255); ``later`` is resized to ``earlier``'s size
    when the stream changed size mid-way (itself a cut)."""
    if later.shape != earlier.shape:
        later = cv2.resize(later, (earlier.shape[1], earlier.shape[0]), interpolation=cv2.INTER_AREA)
    return float(np.abs(later - earlier).mean())


def shrink_grey(grey: np.ndarray, width: int) -> np.ndarray:
    """A grey image area-averaged to ``width`` pixels wide (aspect kept), as float32."""
    height_in, width_in = grey.shape[:2]
    step = max(1, width_in // (4 * width))  # stride first: area-averaging 1080p in full costs 5x more
    grey = grey[::step, ::step]
    height = max(1, int(round(width * height_in / width_in)))
    return cv2.resize(np.ascontiguousarray(grey), (width, height), interpolation=cv2.INTER_AREA).astype(np.float32)


_LUMA_FORMATS = {"gray", "yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv21",
                 "yuv410p", "yuv411p", "yuv440p", "yuva420p"}


def small_grey_image(image: np.ndarray, width: int) -> np.ndarray:
    """An RGB (or grey) uint8 image as a small grey image ``width`` pixels wide."""
    grey = image if image.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2GRAY)
    return shrink_grey(grey, width)


def small_grey(frame: av.VideoFrame, width: int,
               window: Optional[tuple[float, float, float, float]] = None) -> np.ndarray:
    """A decoded frame as a small grey image: its luma plane read in place where the format has one; only its
    ``window`` (normalised x0, y0, x1, y1 of the stored, unrotated frame: the picture inside black bars or a
    fill), if given."""
    if frame.format.name in _LUMA_FORMATS:
        plane = frame.planes[0]
        luma = np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
    else:
        luma = frame.to_ndarray(format="gray")
    if window is not None:
        luma = luma[window_slices(*luma.shape[:2], window)]
    return shrink_grey(luma, width)


def assign_shots(images: list[np.ndarray], fps: float, threshold: float = 3.0, min_seconds: float = 0.6,
                 min_change: float = 12.0, min_change_contrast: float = 1.0) -> np.ndarray:
    """Shot id per image of a sequence taken ``fps`` frames a second (see ShotDetector)."""
    detector = ShotDetector(threshold=threshold, min_seconds=min_seconds, min_change=min_change,
                            min_change_contrast=min_change_contrast)
    times = np.arange(len(images)) / float(fps)
    for t, image in zip(times, images):
        detector.push_image(float(t), image)
    detector.finish()
    return detector.shot_ids(times)
