"""Every model reads an image as it is and mirrored, and the two reads are averaged (test-time flip).

The networks socialtrace runs (YOLO pose, MediaPipe face detection, face mesh, hands) are not mirror
symmetric: the same person in a mirrored clip gets keypoints, boxes and face landmarks a few pixels and
10-30 degrees of gaze apart, and a target chosen near a box edge flips. A read of the image and a read of
its mirror, flipped back and averaged, is the same for a clip and its mirror (the pair of reads is the same
pair, swapped) and steadier than either read alone. The merges here are symmetric in their two arguments.
"""
from __future__ import annotations

import numpy as np

from detectors.gaze import GazeEstimate, weighted_unit_mean
from detectors.keypoints import box_iou_matrix
from detectors.mediapipe_models import Face
from detectors.observation import FrameObservations

# COCO-17 keypoints mirrored: a subject's left eye seen in a mirror is where a right eye would be
COCO_MIRROR = np.array([0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15])
# MediaPipe face detection's six keypoints: right eye, left eye, nose tip, mouth, right ear, left ear
FACE_KEYPOINTS_MIRROR = np.array([1, 0, 2, 3, 5, 4])
# two reads of one frame whose boxes overlap this much are the same person (or face)
SAME_READ_IOU = 0.5


def flipped_boxes(xyxy: np.ndarray, width: float) -> np.ndarray:
    """(N, 4) boxes mirrored about the vertical centre line of an image ``width`` wide (1.0 = normalised)."""
    xyxy = np.asarray(xyxy)
    return np.stack([width - xyxy[:, 2], xyxy[:, 1], width - xyxy[:, 0], xyxy[:, 3]], axis=1).astype(xyxy.dtype)


def flipped_observations(observations: FrameObservations) -> FrameObservations:
    """People found on a mirrored frame, as they stand in the frame itself (normalised coordinates):
    boxes and keypoints flipped, left and right joints swapped. Only the detector's fields are carried."""
    keypoints = observations.keypoints[:, COCO_MIRROR].copy()
    keypoints[..., 0] = 1.0 - keypoints[..., 0]
    return FrameObservations(
        xyxy=flipped_boxes(observations.xyxy, 1.0), confidence=observations.confidence, keypoints=keypoints,
        head_xyxy=flipped_boxes(observations.head_xyxy, 1.0),
    )


def _pairs(a: np.ndarray, score_a: np.ndarray, b: np.ndarray, score_b: np.ndarray) -> list[tuple[int, int]]:
    """Box pairs (i of ``a``, j of ``b``) of one thing read twice, surest first (as non-maximum suppression
    goes): each box, in order of score over both reads, takes the surest unpaired box of the other read that
    overlaps it at least SAME_READ_IOU. (Pairing by overlap alone matched a sure box of one read with the faint
    near-duplicate of the other: two boxes on one person at the frame's edge, both then kept.)"""
    if not len(a) or not len(b):
        return []
    iou = box_iou_matrix(a, b)
    order = sorted([(-float(s), 0, k) for k, s in enumerate(score_a)] + [(-float(s), 1, k) for k, s in enumerate(score_b)])
    free_a, free_b = set(range(len(a))), set(range(len(b)))
    pairs = []
    for _, side, k in order:
        if (k not in free_a) if side == 0 else (k not in free_b):
            continue
        overlaps = iou[k] if side == 0 else iou[:, k]
        candidates = [m for m in (free_b if side == 0 else free_a) if overlaps[m] >= SAME_READ_IOU]
        if not candidates:
            continue
        other_scores = score_b if side == 0 else score_a
        m = max(candidates, key=lambda c: (float(other_scores[c]), float(overlaps[c])))
        i, j = (k, m) if side == 0 else (m, k)
        free_a.discard(i)
        free_b.discard(j)
        pairs.append((i, j))
    return sorted(pairs)


def _mean_keypoints(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(17, 3) keypoints of one person read twice: each joint at the mean of the two places weighed by their
    scores (a joint one read places surely and the other barely stays where the sure read has it; where one
    read does not see it, its place); the higher score of the two (a joint is seen when either read is sure
    of it: the mean dropped an edge person's shoulder under the torso threshold and split her id)."""
    seen_a, seen_b = np.isfinite(a[:, :2]).all(axis=1), np.isfinite(b[:, :2]).all(axis=1)
    wa = np.where(seen_a, np.nan_to_num(a[:, 2]), 0.0) + 1e-6
    wb = np.where(seen_b, np.nan_to_num(b[:, 2]), 0.0) + 1e-6
    both = seen_a & seen_b
    out = np.full_like(a, np.nan)
    out[both, :2] = ((wa[both, None] * a[both, :2] + wb[both, None] * b[both, :2])
                     / (wa[both] + wb[both])[:, None])
    out[seen_a & ~seen_b, :2] = a[seen_a & ~seen_b, :2]
    out[seen_b & ~seen_a, :2] = b[seen_b & ~seen_a, :2]
    out[:, 2] = np.maximum(np.nan_to_num(a[:, 2]), np.nan_to_num(b[:, 2]))
    return out


def merged_reads(direct: FrameObservations, mirrored: FrameObservations) -> FrameObservations:
    """One frame's people from two reads (the frame, and its mirror flipped back): a person both reads hold
    gets the mean box, confidence and score-weighed keypoints (a faint near-duplicate box stays faint); a person
    only one read holds is kept as that read has it. Head boxes are left for the caller to
    recompute from the keypoints. Ordered by confidence."""
    pairs = _pairs(direct.xyxy, direct.confidence, mirrored.xyxy, mirrored.confidence)
    paired_direct = {i for i, _ in pairs}
    paired_mirrored = {j for _, j in pairs}
    xyxy, confidence, keypoints = [], [], []
    for i, j in pairs:
        xyxy.append((direct.xyxy[i] + mirrored.xyxy[j]) / 2)
        confidence.append((direct.confidence[i] + mirrored.confidence[j]) / 2)
        keypoints.append(_mean_keypoints(direct.keypoints[i], mirrored.keypoints[j]))
    for reads, paired in ((direct, paired_direct), (mirrored, paired_mirrored)):
        for k in range(len(reads)):
            if k not in paired:
                xyxy.append(reads.xyxy[k])
                confidence.append(reads.confidence[k])
                keypoints.append(reads.keypoints[k])
    if not xyxy:
        return FrameObservations.empty()
    merged = FrameObservations(xyxy=np.array(xyxy), confidence=np.array(confidence), keypoints=np.array(keypoints))
    # the same order for a clip and its mirror: confidence first, then height (never the x position)
    order = np.lexsort((-(merged.xyxy[:, 3] - merged.xyxy[:, 1]), -merged.confidence))
    return merged[order]


def flipped_faces(faces: list[Face], width: float) -> list[Face]:
    """Faces found on a mirrored image, as they lie in the image itself (pixels, ``width`` wide)."""
    out = []
    for face in faces:
        keypoints = face.keypoints[FACE_KEYPOINTS_MIRROR].copy()
        keypoints[:, 0] = width - keypoints[:, 0]
        out.append(Face(box=flipped_boxes(face.box[None], width)[0], score=face.score, keypoints=keypoints))
    return out


def flipped_gaze(estimate: GazeEstimate | None, width: float) -> GazeEstimate | None:
    """A gaze read on a mirrored image, as it lies in the image itself (pixels, ``width`` wide): origin
    mirrored, the direction's x negated."""
    if estimate is None:
        return None
    flip = np.array([-1.0, 1.0, 1.0])
    return GazeEstimate(origin=np.array([width - estimate.origin[0], estimate.origin[1]]),
                        direction=estimate.direction * flip, confidence=estimate.confidence,
                        eye_cues=estimate.eye_cues,
                        eye_direction=None if estimate.eye_direction is None else estimate.eye_direction * flip)


def flipped_hand(read: tuple[np.ndarray, float] | None, width: float) -> tuple[np.ndarray, float] | None:
    """A hand read on a mirrored crop ((21, 3) landmarks in pixels, score), as it lies in the crop itself
    (``width`` wide). The landmarks keep their ids: a hand has no left and right points to swap."""
    if read is None:
        return None
    landmarks, score = read
    landmarks = landmarks.copy()
    landmarks[:, 0] = width - landmarks[:, 0]
    return landmarks, score


def merged_faces(direct: list[Face], mirrored: list[Face]) -> list[Face]:
    """Faces from two reads of one image: a face both hold gets the mean box and keypoints and the higher
    score; a face only one holds is kept as it is. Ordered by score."""
    pairs = _pairs(np.array([f.box for f in direct]).reshape(-1, 4), np.array([f.score for f in direct]),
                   np.array([f.box for f in mirrored]).reshape(-1, 4), np.array([f.score for f in mirrored]))
    faces = [Face(box=(direct[i].box + mirrored[j].box) / 2, score=max(direct[i].score, mirrored[j].score),
                  keypoints=(direct[i].keypoints + mirrored[j].keypoints) / 2) for i, j in pairs]
    paired_direct, paired_mirrored = {i for i, _ in pairs}, {j for _, j in pairs}
    faces += [f for k, f in enumerate(direct) if k not in paired_direct]
    faces += [f for k, f in enumerate(mirrored) if k not in paired_mirrored]
    return sorted(faces, key=lambda f: (-f.score, -(f.box[3] - f.box[1])))


def merged_hand_reads(direct: tuple[np.ndarray, float] | None, mirrored: tuple[np.ndarray, float] | None
                      ) -> tuple[np.ndarray, float] | None:
    """One hand from two reads of a crop ((21, 3) landmarks in the crop's pixels, score; the mirrored read
    flipped back): the mean landmarks and the higher score when both found the same hand; when they found
    different hands (their centres further apart than half the hand's size: a crop holding two hands) or only
    one read found a hand, the surer read."""
    if direct is None or mirrored is None:
        return direct if mirrored is None else mirrored
    (a, score_a), (b, score_b) = direct, mirrored
    size = max(float(np.ptp(a[:, :2], axis=0).max()), float(np.ptp(b[:, :2], axis=0).max()), 1e-6)
    if np.linalg.norm(a[:, :2].mean(axis=0) - b[:, :2].mean(axis=0)) > 0.5 * size:
        return direct if score_a >= score_b else mirrored
    return (a + b) / 2, max(score_a, score_b)


def merged_gaze_reads(direct: GazeEstimate | None, mirrored: GazeEstimate | None) -> GazeEstimate | None:
    """One face-mesh gaze from two reads of a face (the mirrored one flipped back). None unless both reads
    found the face: a face the mesh finds on one side of the mirror only (blur, an arm across it) is not read
    (the keypoints then give the head's direction). Each read weighs by its confidence (face score x how well
    the face fits): a blurred or half-hidden face often fits poorly on one side, and that read must not drag
    the good one. The confidence is the mean of both."""
    if direct is None or mirrored is None:
        return None
    weights = np.array([direct.confidence, mirrored.confidence]) + 1e-6
    direction = weighted_unit_mean(weights, direct.direction, mirrored.direction)
    if direction is None:  # opposite reads: no direction
        return None
    eye_direction = None
    if direct.eye_direction is not None and mirrored.eye_direction is not None:
        eye_direction = weighted_unit_mean(weights, direct.eye_direction, mirrored.eye_direction)
    return GazeEstimate(origin=(weights[0] * direct.origin + weights[1] * mirrored.origin) / weights.sum(),
                        direction=direction, confidence=(direct.confidence + mirrored.confidence) / 2,
                        eye_cues=min(direct.eye_cues, mirrored.eye_cues), eye_direction=eye_direction)
