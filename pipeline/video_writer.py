"""The one H.264 writer: every mp4 socialtrace makes (`render`, the labelled clips of `export`).

Frames go to a temporary name in the destination folder and are renamed into place when the writer
closes cleanly, so an interrupted or failed write never leaves a broken mp4 under the final name. The
encoder is the best H.264 encoder this PyAV build has: libx264 when present, else the next that can
encode, so both commands work on the same builds.
"""
from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

H264_ENCODERS = ("libx264", "h264", "libopenh264", "h264_nvenc", "h264_qsv", "h264_amf", "h264_v4l2m2m")


def usable_encoder(names) -> str | None:
    """The first of the codec ``names`` this PyAV build can encode with, or None."""
    for name in names:
        if name in av.codecs_available:
            try:
                av.codec.Codec(name, "w")
                return name
            except Exception:  # listed but not usable for encoding in this build
                continue
    return None


def h264_encoder() -> str:
    """The best H.264 encoder this PyAV build has (libx264 when present)."""
    name = usable_encoder(H264_ENCODERS)
    if name is None:
        raise RuntimeError("this PyAV build has no H.264 encoder (looked for " + ", ".join(H264_ENCODERS) + ")")
    return name


class H264Writer:
    """Writes BGR frames to an mp4 browsers play: H.264, yuv420p, faststart, at a constant ``fps``.
    Frames of ``width`` x ``height``; an odd size is padded by one black row / column (yuv420p needs even
    sizes). Use as a context manager: a clean exit renames the file into place, an exception removes it.
    ``threads``: encoder threads, 0 = the encoder's choice (fast); 1 = steadier bytes from run to run
    (several threads on a busy machine encode the same frames a little differently each time)."""

    def __init__(self, path: str | Path, width: int, height: int, fps: float, crf: int = 23, threads: int = 0) -> None:
        if width <= 0 or height <= 0:
            raise ValueError(f"frame size must be positive, got {width}x{height}")
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(f".{self.path.stem}.partial{self.path.suffix}")
        self.width, self.height = int(width), int(height)
        self.encoder = h264_encoder()
        self.n_frames = 0
        rate = Fraction(fps).limit_denominator(1001)
        self._container = av.open(str(self.partial), mode="w", options={"movflags": "+faststart"})
        self._closed = False
        try:
            self._stream = self._container.add_stream(self.encoder, rate=rate)
            self._stream.width, self._stream.height = self.width + self.width % 2, self.height + self.height % 2
            self._stream.pix_fmt = "yuv420p"
            self._stream.time_base = 1 / rate
            if self.encoder == "libx264":
                self._stream.options = {"crf": str(crf), "preset": "veryfast"}
            if threads > 0:
                self._stream.codec_context.thread_count = int(threads)
        except Exception:
            self.abort()
            raise

    def write(self, frame_bgr: np.ndarray) -> None:
        if frame_bgr.shape != (self.height, self.width, 3):
            raise ValueError(f"frame shape {frame_bgr.shape} != ({self.height}, {self.width}, 3)")
        pad = ((0, self._stream.height - self.height), (0, self._stream.width - self.width), (0, 0))
        image = np.pad(frame_bgr, pad) if any(p[1] for p in pad) else np.ascontiguousarray(frame_bgr)
        frame = av.VideoFrame.from_ndarray(image, format="bgr24").reformat(format="yuv420p")
        frame.pts = self.n_frames
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.n_frames += 1

    def close(self) -> None:
        """Flush the encoder and rename the file into place (an mp4 without frames is an error)."""
        if self._closed:
            return
        self._closed = True
        try:
            for packet in self._stream.encode():
                self._container.mux(packet)
        finally:
            self._container.close()
        if self.n_frames == 0:
            self.partial.unlink(missing_ok=True)
            raise ValueError(f"{self.path}: no frames were written")
        os.replace(self.partial, self.path)

    def abort(self) -> None:
        """Stop without keeping anything."""
        if not self._closed:
            self._closed = True
            try:
                self._container.close()
            except Exception:  # the container may be half-written; it is being thrown away
                pass
        self.partial.unlink(missing_ok=True)

    def __enter__(self) -> "H264Writer":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
