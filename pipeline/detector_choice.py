"""Which detector a run uses, checked and named once, before any work (issue 26 item 3).

Two rules the bare ``resolve_backend`` does not know:
- naming weights asks for YOLO: ``--weights NAME`` that is not on disk is an error, never a silent
  fall back to the MediaPipe-only backend;
- the same weights file is the same setting however it was spelled (``auto``'s pick, ``--detector yolo
  --weights yolo11n-pose.pt``, its absolute path): the detector section recorded in run.json (and hashed)
  names the resolved file, so switching spelling never re-perceives a corpus.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from detectors import find_local_weights, resolve_backend
from detectors.config import DetectorConfig

DEFAULT_WEIGHTS = DetectorConfig().weights


def _same_file(a: Path, b: Path | None) -> bool:
    try:
        return b is not None and a.is_file() and b.is_file() and os.path.samefile(a, b)
    except OSError:
        return False


def canonical_weights(weights: str) -> str:
    """One spelling per weights file: its bare name when that name finds the same file (Ultralytics'
    weights dir, an installed package), else its absolute path. Model definitions (*.yaml) as given."""
    local = find_local_weights(weights)
    if local is None or not local.is_file():
        return weights
    name = local.name
    if _same_file(local, find_local_weights(name)):
        return name
    return str(local.resolve())


def choose_detector(detector: DetectorConfig, weights_given: bool) -> tuple[DetectorConfig, str, str]:
    """(the detector settings to run and record, backend name, reason); ValueError with a one-line
    message when the choice is impossible. ``weights_given``: the user named weights (--weights)."""
    if weights_given and detector.backend == "mediapipe":
        raise ValueError("--weights names YOLO weights, but --detector mediapipe does not use them; drop one of the two")
    if weights_given and detector.backend == "auto":
        detector = dataclasses.replace(detector, backend="yolo")  # named weights: YOLO or an error
    backend, reason = resolve_backend(detector)
    if backend == "mediapipe":
        # weights are unused: one record whether MediaPipe was asked for or auto fell back to it
        return dataclasses.replace(detector, backend="mediapipe", weights=DEFAULT_WEIGHTS), backend, reason
    weights = canonical_weights(detector.weights)
    if weights == DEFAULT_WEIGHTS:
        # the file auto picks: recorded as auto picks it, so outputs made at defaults stay current
        return dataclasses.replace(detector, backend="auto", weights=weights), backend, reason
    return dataclasses.replace(detector, backend="yolo", weights=weights), backend, reason
