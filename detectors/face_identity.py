"""Face identity descriptors for re-identification across cuts, gaps and zooms: dlib's face recognition
ResNet (128-d, faces of one person < ~0.6 apart in Euclidean distance) on faces aligned by dlib's
5-point landmark model.

Models: ``dlib_face_recognition_resnet_model_v1.dat`` and ``shape_predictor_5_face_landmarks.dat`` from
the ``face-recognition-models`` package (MIT; the model files are Davis King's dlib-models, released into
the public domain), run by the ``dlib-bin`` wheel (dlib, Boost Software License). Nothing is downloaded.

Descriptors are computed per tracklet from a few aligned face chips (``FaceChips`` keeps chips of faces
large enough while the frames are decoded; stitching picks the largest few per tracklet), never per frame.
"""
from __future__ import annotations

import importlib.util
import os
from typing import Optional

import numpy as np

DESCRIPTOR_SIZE = 128
CHIP_SIZE = 150  # the size dlib's ResNet was trained on
CHIP_PADDING = 0.25


def _model_dir() -> str:
    # the package's __init__ imports pkg_resources (setuptools): find its folder without importing it
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("face identity needs the face-recognition-models package (pip install face-recognition-models)")
    return os.path.join(list(spec.submodule_search_locations)[0], "models")


def face_rect_from_head(head_px: np.ndarray) -> np.ndarray:
    """The brows-to-chin face box (pixels, what dlib's landmark model expects) inside a head box (hair
    and forehead included: mediapipe_models.Face.head_box widens a face box by these same fractions)."""
    x1, y1, x2, y2 = head_px
    w, h = (x2 - x1) / 1.2, (y2 - y1) / 1.4
    fx1, fy1 = x1 + 0.1 * w, y1 + 0.35 * h
    return np.array([fx1, fy1, fx1 + w, fy1 + h])


class FaceDescriber:
    """dlib 5-point alignment + face recognition ResNet. ``chip`` on the decoding side, ``describe`` on
    the few chips kept per tracklet."""

    def __init__(self, model_dir: Optional[str] = None):
        import dlib

        model_dir = model_dir or _model_dir()
        self._dlib = dlib
        self._shape = dlib.shape_predictor(os.path.join(model_dir, "shape_predictor_5_face_landmarks.dat"))
        self._net = dlib.face_recognition_model_v1(os.path.join(model_dir, "dlib_face_recognition_resnet_model_v1.dat"))

    def chip(self, image: np.ndarray, head_px: np.ndarray) -> np.ndarray:
        """(CHIP_SIZE, CHIP_SIZE, 3) uint8 aligned face chip of the face in head box ``head_px`` (pixels)
        of an RGB uint8 image."""
        image = np.ascontiguousarray(image)  # dlib takes no strided view (a cropped or row-padded frame)
        x1, y1, x2, y2 = (int(round(v)) for v in face_rect_from_head(head_px))
        shape = self._shape(image, self._dlib.rectangle(x1, y1, x2, y2))
        return np.asarray(self._dlib.get_face_chip(image, shape, size=CHIP_SIZE, padding=CHIP_PADDING))

    def describe(self, chips: list[np.ndarray]) -> np.ndarray:
        """(N, 128) float32 descriptors of aligned chips."""
        if not chips:
            return np.zeros((0, DESCRIPTOR_SIZE), np.float32)
        out = self._net.compute_face_descriptor([np.ascontiguousarray(c) for c in chips])
        return np.asarray([np.asarray(d) for d in out], np.float32)
