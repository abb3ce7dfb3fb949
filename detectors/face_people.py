"""People found by their face alone: close-ups (issue 23).

In a face close-up the head and shoulders fill the frame and the body is out of view, so the pose model
often finds no one there. A face the face detector found that no person holds (``YoloPoseDetector``
anchors faces on people's head keypoints) becomes a person of its own when

- its body would be out of view: fewer than ``max_body_heads`` head heights of the frame lie below the
  head (a medium shot shows the chest and more, where the pose model should find the body itself);
- it is on top of no body the pose model has (its centre inside no person's box): never a second person
  over one already found.

The person gets the face's head box (forehead and hair included, ``Face.head_box``), no keypoints, and
a body box extrapolated from the head, running off the frame: ``BODY_WIDTH_HEADS`` head widths wide,
``BODY_HEIGHT_HEADS`` head heights tall from the top of the head (the tracks table clips it to the frame).
"""
from __future__ import annotations

import numpy as np

from detectors.mediapipe_models import Face
from detectors.observation import FrameObservations

BODY_HEIGHT_HEADS = 7.5  # an adult is about 7.5 head heights tall
BODY_WIDTH_HEADS = 2.5  # and about 2.5 head widths across the shoulders


def face_only_people(faces: list[Face], people: FrameObservations, width: int, height: int,
                     max_body_heads: float) -> tuple[FrameObservations, list[Face]]:
    """New rows (normalised, like ``people``) for the faces of ``faces`` (pixels; those no person holds)
    whose body is out of view and that lie on no one's box, and the face of each new row.
    ``max_body_heads`` <= 0: none."""
    if max_body_heads <= 0 or not faces:
        return FrameObservations.empty(), []
    scale = np.array([width, height, width, height], np.float64)
    boxes = people.xyxy.astype(np.float64) * scale
    kept: list[Face] = []
    for face in sorted(faces, key=lambda f: -f.score):
        head = face.head_box()
        head_w, head_h = head[2] - head[0], head[3] - head[1]
        if height - head[3] >= max_body_heads * head_h:
            continue  # the body should be in view: the pose model's business
        centre = (face.box[:2] + face.box[2:]) / 2
        taken = [*boxes, *(f.head_box() for f in kept)]
        if any(b[0] <= centre[0] <= b[2] and b[1] <= centre[1] <= b[3] for b in taken):
            continue  # on a body (or a face-only head) already found
        kept.append(face)
    if not kept:
        return FrameObservations.empty(), []
    heads = np.stack([f.head_box() for f in kept])
    centre_x = (heads[:, 0] + heads[:, 2]) / 2
    half_width = BODY_WIDTH_HEADS * (heads[:, 2] - heads[:, 0]) / 2
    bodies = np.stack([centre_x - half_width, heads[:, 1], centre_x + half_width,
                       heads[:, 1] + BODY_HEIGHT_HEADS * (heads[:, 3] - heads[:, 1])], axis=1)
    rows = FrameObservations(
        xyxy=(bodies / scale).astype(np.float32),
        confidence=np.array([f.score for f in kept], np.float32),
        head_xyxy=np.clip(heads / scale, 0.0, 1.0).astype(np.float32),
    )
    return rows, kept
