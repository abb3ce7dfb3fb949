"""socialtrace detectors: person / pose backends behind one ``PersonDetector`` interface, plus the
face -> gaze and hand -> pointing refinement every backend shares.

``create_detector(detector, gaze, pointing, fps=..., max_side=..., threads=...)`` is the only entry point
the pipeline needs; ``resolve_backend(detector)`` says which backend ``auto`` picks and why, without
loading any model.
"""
from __future__ import annotations

import logging
from pathlib import Path

from detectors.base import PersonDetector
from detectors.observation import FrameObservations
from detectors.config import DetectorConfig, GazeConfig, PointingConfig

__all__ = ["PersonDetector", "FrameObservations", "create_detector", "resolve_backend", "find_local_weights"]

BACKENDS = ("auto", "yolo", "mediapipe")
logger = logging.getLogger("socialtrace")


def _looks_like_path(weights: str) -> bool:
    return any(sep in weights for sep in ("/", "\\")) or weights.startswith(".")


def find_local_weights(weights: str) -> Path | None:
    """The local file ``weights`` names: the path itself, or the name inside Ultralytics' weights
    directory. ``*.yaml`` model definitions count (they build an untrained model, no download)."""
    if not weights:
        return None
    path = Path(weights).expanduser()
    if path.is_file():
        return path
    if weights.endswith((".yaml", ".yml")) and not _looks_like_path(weights):
        return Path(weights)  # an Ultralytics model definition it ships (e.g. yolo11n-pose.yaml)
    if not _looks_like_path(weights):
        try:
            from ultralytics.utils import WEIGHTS_DIR
        except ImportError:
            return None
        candidate = Path(WEIGHTS_DIR) / weights
        if candidate.is_file():
            return candidate
    return None


def resolve_backend(config: DetectorConfig) -> tuple[str, str]:
    """(backend name, human-readable reason) for ``config``; raises ValueError for an unknown backend or
    an explicitly given weights path that does not exist."""
    backend = config.backend
    weights = config.weights
    if backend not in BACKENDS:
        raise ValueError(f"unknown detector backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "mediapipe":
        return "mediapipe", "requested explicitly (--detector mediapipe)"
    local = find_local_weights(weights)
    if backend == "yolo":
        if local is None and _looks_like_path(weights):
            raise ValueError(f"{weights}: YOLO weights file not found")
        where = f"local weights {local}" if local is not None else f"weights {weights!r} (Ultralytics may download them)"
        return "yolo", f"requested explicitly (--detector yolo) with {where}"
    if local is not None:
        return "yolo", f"auto: YOLO weights found locally at {local}"
    if _looks_like_path(weights):
        raise ValueError(f"{weights}: YOLO weights file not found")
    return "mediapipe", f"auto: no local YOLO weights {weights!r} (checked the path and Ultralytics' weights dir), using the offline MediaPipe backend"


def create_detector(
    config: DetectorConfig, gaze: GazeConfig, pointing: PointingConfig, *, fps: float, max_side: int, threads: int
) -> PersonDetector:
    """The person detector ``config`` asks for (``auto`` = YOLO when its weights are local, else
    MediaPipe), refining gaze and pointing with ``gaze`` and ``pointing``. ``fps`` is the sampling rate
    of the frames it will see, ``max_side`` their longest side, ``threads`` how many per-person model
    threads it may use. Models are created once here; call ``detect`` many times."""
    backend, reason = resolve_backend(config)
    logger.info("detector backend: %s (%s)", backend, reason)
    if backend == "yolo":
        from detectors.yolo_backend import YoloPoseDetector

        local = find_local_weights(config.weights)
        return YoloPoseDetector(config, gaze, pointing, max_side=max_side,
                                weights=str(local) if local is not None else config.weights)
    from detectors.mediapipe_backend import MediaPipeDetector

    return MediaPipeDetector(config, gaze, pointing, fps=fps, threads=threads)
