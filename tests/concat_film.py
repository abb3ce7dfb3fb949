"""A longer real input built from the shared clips: one film of several clips joined by hard cuts, written
with PyAV into a test's tmp folder (the clips themselves are never copied into the repository).

Every clip keeps all its frames and their own presentation times (a clip with a gap in its timestamps keeps
the gap), shifted to start one frame after the previous clip's last frame. Each frame is scaled into one
frame size (960x540 by default) at its displayed aspect ratio, with black bars where the shapes differ: a
clip stored with non-square pixels (pyscenedetect_archive_two_women, 704x576 at 16:11) is shown at its
displayed 1024x576 shape, so people keep their real proportions and positions. The film has square pixels.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Sequence

import av
import cv2
import numpy as np

from tests.camera_edits import near_lossless_stream

_TIME_BASE = Fraction(1, 90000)
_RATE = Fraction(30, 1)


def _letterbox(image: np.ndarray, sar: Fraction, size: tuple[int, int]) -> np.ndarray:
    """``image`` (stored pixels, sample aspect ratio ``sar``) scaled into ``size`` (w, h) at its displayed
    aspect ratio, centred on black."""
    width, height = size
    stored_h, stored_w = image.shape[:2]
    display_w = stored_w * float(sar)
    scale = min(width / display_w, height / stored_h)
    new_w, new_h = max(2, int(round(display_w * scale))), max(2, int(round(stored_h * scale)))
    scaled = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((height, width, 3), dtype=np.uint8)
    x0, y0 = (width - new_w) // 2, (height - new_h) // 2
    canvas[y0:y0 + new_h, x0:x0 + new_w] = scaled
    return canvas


def concat_clips(sources: Sequence[str | Path], dst: str | Path,
                 size: tuple[int, int] = (960, 540)) -> list[tuple[str, float, float]]:
    """Write ``sources`` one after the other into ``dst`` (.mp4, hard cuts). Returns (clip stem, start,
    end) of each clip in the film's time, in seconds (end: the clip's last frame's time)."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    spans: list[tuple[str, float, float]] = []
    offset = 0.0  # where the next clip starts in the film, seconds
    last_pts = -1
    with av.open(str(dst), mode="w") as sink:
        # lossless (crf 0): the decoded pixels are the same whatever the encoder's threads. At crf 16 with the
        # encoder's own threads the film differed from run to run on a busy machine, and with it whether the
        # folding clip's lamp is found as the pointing's referent (G2) and where the hug's eye contact ends (T3)
        stream = near_lossless_stream(sink, size, _RATE, _TIME_BASE)
        for src in sources:
            with av.open(str(src)) as source:
                in_stream = source.streams.video[0]
                sar = in_stream.sample_aspect_ratio
                sar = Fraction(sar) if sar is not None and sar > 0 else Fraction(1)
                rate = in_stream.average_rate or in_stream.guessed_rate or Fraction(25, 1)
                first, clip_last, prev = None, None, None
                for frame in source.decode(in_stream):
                    if frame.pts is None or frame.time is None or (prev is not None and frame.pts <= prev):
                        continue  # no place on the timeline (a run skips these too)
                    prev = frame.pts
                    first = frame.time if first is None else first
                    t = offset + (frame.time - first)
                    pts = max(int(round(t / _TIME_BASE)), last_pts + 1)
                    image = _letterbox(frame.to_ndarray(format="bgr24"), sar, size)
                    out = av.VideoFrame.from_ndarray(image, format="bgr24").reformat(format="yuv420p")
                    out.pts, out.time_base = pts, _TIME_BASE
                    for packet in stream.encode(out):
                        sink.mux(packet)
                    last_pts, clip_last = pts, float(pts * _TIME_BASE)
                if clip_last is None:
                    raise ValueError(f"{src}: no decodable video frame")
                spans.append((Path(src).stem, offset, clip_last))
                offset = clip_last + float(1 / rate)
        for packet in stream.encode():
            sink.mux(packet)
    return spans
