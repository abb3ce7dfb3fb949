"""The person-detector plugin interface every backend implements (PySceneDetect / norfair style):
the rest of socialtrace is written against ``PersonDetector`` and never knows which backend ran."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from detectors.observation import FrameObservations


@runtime_checkable
class PersonDetector(Protocol):
    """Finds people in frames and fills as much of ``FrameObservations`` as the backend can."""

    name: str

    def detect(self, frames: list[np.ndarray]) -> list[FrameObservations]:
        """One ``FrameObservations`` per frame, coordinates normalised to [0, 1].

        ``frames`` are RGB uint8 arrays of shape (H, W, 3), rotation already applied and resized so
        the longest side is at most the sampling's ``max_side``.
        """
        ...

    def close(self) -> None:
        """Release the backend's models and threads (MediaPipe graphs are never garbage collected)."""
        ...


def check_frames(frames: list[np.ndarray]) -> None:
    """Raise a clear ValueError unless every frame is an RGB uint8 (H, W, 3) array."""
    if not isinstance(frames, (list, tuple)):
        raise ValueError(f"detect() expects a list of frames, got {type(frames).__name__}")
    for i, frame in enumerate(frames):
        if not isinstance(frame, np.ndarray) or frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            shape = getattr(frame, "shape", None)
            dtype = getattr(frame, "dtype", type(frame).__name__)
            raise ValueError(f"frame {i}: expected an RGB uint8 array (H, W, 3), got shape {shape} dtype {dtype}")
        if frame.shape[0] < 8 or frame.shape[1] < 8:
            raise ValueError(f"frame {i}: too small ({frame.shape[1]}x{frame.shape[0]} pixels)")
