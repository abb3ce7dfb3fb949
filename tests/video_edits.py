"""Edited videos built from the shared clips for identity and cut tests (PyAV + OpenCV, in the test's tmp
folder: media is never copied into the repository): cutaways, digital zooms.

Every edit is written at one frame rate and size, so each piece's first frame is at a known time."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import cv2
import numpy as np

from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer


def clip_frames(path: Path, fps: float, size: tuple[int, int], seconds: Optional[float] = None) -> list[np.ndarray]:
    """The clip's frames at ``fps`` as BGR images of ``size`` (w, h), at most ``seconds`` long."""
    frames = []
    for frame in iter_frames(str(path), fps, 4096):
        if seconds is not None and frame.t >= seconds - 1e-6:
            break
        frames.append(np.ascontiguousarray(cv2.resize(frame.image, size, interpolation=cv2.INTER_AREA)[..., ::-1]))
    return frames


def zoomed(frames: list[np.ndarray], final_fraction: float) -> list[np.ndarray]:
    """A smooth digital zoom: frame k shows the centre crop of side 1 -> ``final_fraction`` of the frame
    (linearly over the frames), scaled back up to the full size."""
    height, width = frames[0].shape[:2]
    out = []
    for k, image in enumerate(frames):
        fraction = 1.0 + (final_fraction - 1.0) * k / max(1, len(frames) - 1)
        w, h = width * fraction, height * fraction
        x0, y0 = (width - w) / 2, (height - h) / 2
        crop = image[int(round(y0)): int(round(y0 + h)), int(round(x0)): int(round(x0 + w))]
        out.append(cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR))
    return out


def write_edit(path: Path, pieces: list[list[np.ndarray]], fps: float) -> list[float]:
    """Write the pieces one after another (BGR frames of one size); returns each piece's start time."""
    height, width = pieces[0][0].shape[:2]
    starts, n = [], 0
    with H264Writer(path, width, height, fps) as writer:
        for piece in pieces:
            starts.append(n / fps)
            for image in piece:
                writer.write(image)
                n += 1
    return starts
