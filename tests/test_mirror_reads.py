"""Every model reads an image as it is and mirrored (detectors/mirror.py): the merges on synthetic reads with
known answers, and the real detector on a frame and its mirror giving mirrored people, gaze and hands."""
from __future__ import annotations

from contextlib import closing

import numpy as np
import pytest

from detectors.gaze import GazeEstimate
from detectors.mediapipe_models import Face
from detectors.mirror import (COCO_MIRROR, flipped_faces, flipped_gaze, flipped_hand, flipped_observations,
                              merged_faces, merged_gaze_reads, merged_hand_reads, merged_reads)
from detectors.observation import LEFT_SHOULDER, RIGHT_SHOULDER, FrameObservations
from pipeline.config import Config
from pipeline.perception import detector_for
from tests.test_detectors import decode


def _people(boxes, confidences, seed=0) -> FrameObservations:
    rng = np.random.default_rng(seed)
    boxes = np.asarray(boxes, np.float32)
    keypoints = np.zeros((len(boxes), 17, 3), np.float32)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        keypoints[i, :, 0] = rng.uniform(x0, x1, 17)
        keypoints[i, :, 1] = rng.uniform(y0, y1, 17)
        keypoints[i, :, 2] = rng.uniform(0.2, 1.0, 17)
    return FrameObservations(xyxy=boxes, confidence=confidences, keypoints=keypoints)


def test_flipping_twice_is_the_identity_and_swaps_left_and_right_joints():
    people = _people([[0.1, 0.2, 0.3, 0.9]], [0.8])
    people.keypoints[0, LEFT_SHOULDER] = [0.25, 0.3, 0.9]  # the subject's left shoulder on the image right
    people.keypoints[0, RIGHT_SHOULDER] = [0.15, 0.3, 0.7]
    flipped = flipped_observations(people)
    np.testing.assert_allclose(flipped.xyxy[0], [0.7, 0.2, 0.9, 0.9], atol=1e-6)
    # in the mirror the left shoulder is the one on the image left, at the mirrored place
    np.testing.assert_allclose(flipped.keypoints[0, LEFT_SHOULDER], [0.85, 0.3, 0.7], atol=1e-6)
    np.testing.assert_allclose(flipped.keypoints[0, RIGHT_SHOULDER], [0.75, 0.3, 0.9], atol=1e-6)
    back = flipped_observations(flipped)
    np.testing.assert_allclose(back.xyxy, people.xyxy, atol=1e-6)
    np.testing.assert_allclose(back.keypoints, people.keypoints, atol=1e-6)
    assert sorted(COCO_MIRROR.tolist()) == list(range(17)) and (COCO_MIRROR[COCO_MIRROR] == np.arange(17)).all()


def test_merged_reads_average_one_person_keep_the_rest_and_do_not_depend_on_the_order():
    direct = _people([[0.10, 0.1, 0.30, 0.9], [0.60, 0.2, 0.70, 0.5]], [0.9, 0.5], seed=1)
    mirrored = _people([[0.12, 0.1, 0.32, 0.9], [0.80, 0.3, 0.90, 0.6]], [0.7, 0.4], seed=2)
    merged = merged_reads(direct, mirrored)
    assert len(merged) == 3  # the overlapping pair is one person, each read's other box is kept
    np.testing.assert_allclose(merged.xyxy[0], [0.11, 0.1, 0.31, 0.9], atol=1e-6)
    assert merged.confidence[0] == pytest.approx(0.8)  # the mean: a faint near-duplicate box stays faint
    wa, wb = direct.keypoints[0, :, 2:], mirrored.keypoints[0, :, 2:]  # places weighed by their scores
    np.testing.assert_allclose(merged.keypoints[0, :, :2],
                               (wa * direct.keypoints[0, :, :2] + wb * mirrored.keypoints[0, :, :2]) / (wa + wb), atol=1e-5)
    np.testing.assert_allclose(merged.keypoints[0, :, 2], np.maximum(direct.keypoints[0, :, 2], mirrored.keypoints[0, :, 2]))
    swapped = merged_reads(mirrored, direct)
    np.testing.assert_allclose(swapped.xyxy, merged.xyxy, atol=1e-6)
    np.testing.assert_allclose(swapped.confidence, merged.confidence)
    assert len(merged_reads(direct, FrameObservations.empty())) == 2
    assert len(merged_reads(FrameObservations.empty(), FrameObservations.empty())) == 0


def test_a_joint_only_one_read_sees_keeps_its_place():
    direct, mirrored = _people([[0.1, 0.1, 0.3, 0.9]], [0.8], 3), _people([[0.1, 0.1, 0.3, 0.9]], [0.8], 4)
    direct.keypoints[0, 0, :2] = np.nan
    direct.keypoints[0, 0, 2] = 0.0
    merged = merged_reads(direct, mirrored)
    np.testing.assert_allclose(merged.keypoints[0, 0], mirrored.keypoints[0, 0], atol=1e-6)


def test_a_sure_box_pairs_with_the_other_reads_sure_box_not_its_faint_duplicate():
    """One person at the frame's edge boxed twice by each read (a sure box and a faint near-duplicate): the
    sure boxes pair, the faint ones pair, and the faint pair stays faint (under the person threshold)."""
    direct = _people([[0.915, 0.1, 1.0, 0.93], [0.945, 0.1, 1.0, 0.93]], [0.71, 0.15], 5)
    mirrored = _people([[0.935, 0.1, 1.0, 0.93], [0.906, 0.1, 1.0, 0.93]], [0.61, 0.38], 6)
    merged = merged_reads(direct, mirrored)
    np.testing.assert_allclose(sorted(merged.confidence), [0.265, 0.66], atol=1e-6)


def test_faces_flip_with_their_eyes_and_ears_swapped_and_merge():
    face = Face(box=np.array([10.0, 20.0, 50.0, 70.0]), score=0.8,
                keypoints=np.array([[20, 40], [40, 40], [30, 50], [30, 60], [12, 45], [48, 45]], np.float64))
    flipped = flipped_faces([face], 100.0)[0]
    np.testing.assert_allclose(flipped.box, [50, 20, 90, 70])
    np.testing.assert_allclose(flipped.keypoints[0], [60, 40])  # the right eye is now at the left eye's mirror
    np.testing.assert_allclose(flipped.keypoints[4], [52, 45])
    other = Face(box=np.array([12.0, 20.0, 52.0, 70.0]), score=0.6, keypoints=face.keypoints + 2)
    far = Face(box=np.array([70.0, 0.0, 90.0, 20.0]), score=0.9, keypoints=face.keypoints)
    merged = merged_faces([face], [other, far])
    assert [f.score for f in merged] == [0.9, 0.8]
    np.testing.assert_allclose(merged[1].box, [11, 20, 51, 70])


def _gaze(direction, conf) -> GazeEstimate:
    direction = np.asarray(direction, np.float64)
    return GazeEstimate(origin=np.array([10.0, 20.0]), direction=direction / np.linalg.norm(direction), confidence=conf)


def test_a_face_read_on_one_side_only_is_not_read_and_reads_weigh_by_confidence():
    good, poor = _gaze([0.0, 0.0, -1.0], 0.6), _gaze([1.0, 0.0, 0.0], 0.2)
    assert merged_gaze_reads(good, None) is None and merged_gaze_reads(None, good) is None
    merged = merged_gaze_reads(good, poor)
    # 0.6 (0, 0, -1) + 0.2 (1, 0, 0): turned toward the poor read by atan(1/3)
    assert np.degrees(np.arctan2(merged.direction[0], -merged.direction[2])) == pytest.approx(np.degrees(np.arctan(1 / 3)), abs=1e-3)
    assert merged.confidence == pytest.approx(0.4)
    assert np.allclose(merged_gaze_reads(poor, good).direction, merged.direction)
    assert merged.eye_direction is None  # neither read measured one


def test_the_eye_cue_directions_flip_and_merge_like_the_gaze():
    small = GazeEstimate(origin=np.array([10.0, 20.0]), direction=np.array([0.0, 0.0, -1.0]), confidence=0.6,
                         eye_cues=0.0, eye_direction=np.array([0.6, 0.8, 0.0]))
    flipped = flipped_gaze(small, 100.0)
    np.testing.assert_allclose(flipped.eye_direction, [-0.6, 0.8, 0.0])
    merged = merged_gaze_reads(small, flipped_gaze(flipped, 100.0))  # the same read from both sides
    np.testing.assert_allclose(merged.eye_direction, [0.6, 0.8, 0.0])
    assert merged.eye_cues == 0.0


def test_a_gaze_and_a_hand_read_in_the_mirror_flip_back():
    gaze = flipped_gaze(_gaze([0.6, 0.0, -0.8], 0.5), 100.0)
    np.testing.assert_allclose(gaze.origin, [90.0, 20.0])
    np.testing.assert_allclose(gaze.direction, [-0.6, 0.0, -0.8])
    assert gaze.confidence == 0.5 and flipped_gaze(None, 100.0) is None
    hand = np.zeros((21, 3))
    hand[:, 0], hand[:, 2] = np.arange(21), 0.5
    landmarks, score = flipped_hand((hand, 0.8), 40.0)
    np.testing.assert_allclose(landmarks[:, 0], 40.0 - np.arange(21))
    np.testing.assert_allclose(landmarks[:, 1:], hand[:, 1:])
    assert score == 0.8 and hand[5, 0] == 5  # the read itself is left as it was


def test_two_reads_of_different_hands_keep_the_surer_one():
    hand = np.zeros((21, 3))
    hand[:, 0], hand[:, 1] = np.linspace(0, 20, 21), np.linspace(0, 30, 21)
    same = (hand + 1.0, 0.7)
    merged, score = merged_hand_reads((hand, 0.9), same)
    np.testing.assert_allclose(merged, hand + 0.5)
    assert score == 0.9
    other_hand = (hand + np.array([60.0, 0.0, 0.0]), 0.95)
    assert merged_hand_reads((hand, 0.9), other_hand)[1] == 0.95
    assert merged_hand_reads(None, same) is same and merged_hand_reads(None, None) is None


@pytest.mark.slow
def test_a_mirrored_frame_gives_the_mirrored_people_gaze_and_hands(media_dir):
    """The real default detector on atd_kitchen frames and on the same frames mirrored: the same people at
    mirrored places with mirrored keypoints, gaze directions and hands (without the mirror reads, YOLO's boxes
    and the face mesh's gaze moved by pixels and degrees)."""
    frames = decode(media_dir / "atd_kitchen.mp4", [0, 30, 60])
    mirrored_frames = [np.ascontiguousarray(f[:, ::-1]) for f in frames]
    with closing(detector_for(Config())) as detector:
        assert detector.name == "yolo"
        original = detector.detect(frames)
        mirrored = detector.detect(mirrored_frames)
    for a, b in zip(original, mirrored):
        assert len(a) == len(b) == 2
        back = flipped_observations(b)
        order = [int(np.argmin(np.abs(back.xyxy[:, 0] - x))) for x in a.xyxy[:, 0]]
        np.testing.assert_allclose(back.xyxy[order], a.xyxy, atol=2e-3)
        np.testing.assert_allclose(back.keypoints[order][..., :2], a.keypoints[..., :2], atol=3e-3)
        gaze_b = b.gaze_dir[order] * np.array([-1.0, 1.0, 1.0], np.float32)
        with_mesh = a.gaze_source == "face_mesh"
        assert with_mesh.any() and (b.gaze_source[order] == a.gaze_source).all()
        angle = np.degrees(np.arccos(np.clip((gaze_b[with_mesh] * a.gaze_dir[with_mesh]).sum(axis=1), -1, 1)))
        assert angle.max() < 2.0, angle
