"""pointing_score / open_palm_score on synthetic hands with known answers, their invariances, and the
arm geometry that decides whether a pointing hand is a pointing gesture."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.hands import arm_raised, index_ray, open_palm_score, pointing_score

# finger -> (MCP angle around the palm in degrees, y up), long fingers index..pinky
FINGER_ANGLES = {"index": 105.0, "middle": 92.0, "ring": 80.0, "pinky": 68.0}
SEGMENTS = (0.45, 0.28, 0.22)  # proximal, middle, distal phalanx, in palm lengths
CURL_BENDS = (75.0, 100.0, 60.0)  # joint flexion of a curled finger (MCP, PIP, DIP)


def _finger(angle_deg: float, bends: tuple[float, float, float]) -> np.ndarray:
    """MCP, PIP, DIP, tip of one finger in a side-on 2D view (y up)."""
    base = np.radians(angle_deg)
    mcp = np.array([np.cos(base), np.sin(base)])
    points = [mcp]
    direction = base
    for length, bend in zip(SEGMENTS, bends):
        direction -= np.radians(bend)  # flex toward the palm
        points.append(points[-1] + length * np.array([np.cos(direction), np.sin(direction)]))
    return np.array(points)


def make_hand(extended: set[str], thumb_out: bool = False) -> np.ndarray:
    """(21, 2) MediaPipe-ordered landmarks in image coordinates (y down) of a hand whose fingers in
    ``extended`` are straight and the others curled into the palm."""
    hand = np.zeros((21, 2))
    thumb_dir = np.radians(150.0 if thumb_out else 110.0)
    thumb_bend = 0.0 if thumb_out else 50.0
    point = np.array([0.25 * np.cos(np.radians(160)), 0.25 * np.sin(np.radians(160))])
    hand[1] = point
    for k, length in zip(range(2, 5), (0.35, 0.3, 0.25)):
        thumb_dir -= np.radians(thumb_bend)
        point = point + length * np.array([np.cos(thumb_dir), np.sin(thumb_dir)])
        hand[k] = point
    for first, (name, angle) in zip((5, 9, 13, 17), FINGER_ANGLES.items()):
        bends = (0.0, 0.0, 0.0) if name in extended else CURL_BENDS
        hand[first : first + 4] = _finger(angle, bends)
    hand[:, 1] *= -1  # y down
    return hand


POINTING = make_hand({"index"})
FIST = make_hand(set())
OPEN_PALM = make_hand({"index", "middle", "ring", "pinky"}, thumb_out=True)
VICTORY = make_hand({"index", "middle"})
POINTING_THUMB_OUT = make_hand({"index"}, thumb_out=True)


def _transform(hand: np.ndarray, scale: float, angle_deg: float, offset: tuple[float, float], mirror: bool) -> np.ndarray:
    a = np.radians(angle_deg)
    rotation = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    out = hand @ rotation.T * scale + np.asarray(offset)
    if mirror:
        out[:, 0] *= -1
    return out


def test_known_hand_shapes():
    hands = np.stack([POINTING, POINTING_THUMB_OUT, FIST, OPEN_PALM, VICTORY])
    pointing = pointing_score(hands)
    open_palm = open_palm_score(hands)
    assert pointing.shape == (5,) and pointing.dtype == np.float32
    assert pointing[0] > 0.9 and pointing[1] > 0.9  # the thumb does not matter
    assert pointing[2] < 0.1  # fist
    assert pointing[3] < 0.1  # open palm (high five, wave) is not pointing
    assert pointing[4] < 0.5  # two fingers out is not pointing
    assert open_palm[3] > 0.9
    assert open_palm[0] < 0.1 and open_palm[2] < 0.1


def test_pixel_coordinates_with_z_and_batch_agree():
    pixels = _transform(POINTING, 180.0, 30.0, (640.0, 360.0), False)
    with_z = np.concatenate([pixels, np.random.default_rng(0).normal(size=(21, 1))], axis=1)
    batch = np.stack([with_z, _transform(FIST, 0.01, 0, (0.5, 0.5), False)[:, [0, 1, 0]] * [1, 1, 0]])
    scores = pointing_score(batch)
    # a pixel of depth noise on a 180-pixel hand barely moves the score; without depth it is exact
    assert scores[0] == pytest.approx(pointing_score(POINTING[None])[0], abs=1e-3)
    assert pointing_score(batch, use_depth=False)[0] == pytest.approx(pointing_score(POINTING[None])[0], abs=1e-6)
    assert scores[1] < 0.1


def _toward_camera(hand: np.ndarray) -> np.ndarray:
    """(21, 3) the hand with its palm in the image plane and the index finger sticking straight out of
    it toward the camera (z < 0): seen in the image, the finger is a stub on its knuckle."""
    out = np.concatenate([hand, np.zeros((21, 1))], axis=1)
    mcp = out[5].copy()
    for joint, depth in zip((6, 7, 8), np.cumsum(SEGMENTS)):
        out[joint] = mcp + [0.01 * depth, 0.0, -depth]
    return out


def test_foreshortened_pointing_is_found_with_depth():
    """A finger aimed at the camera has almost no length in the image: 3D distances still see it."""
    hands = np.stack([_toward_camera(POINTING), _toward_camera(FIST)])
    with_depth = pointing_score(hands)
    image_only = pointing_score(hands, use_depth=False)
    assert with_depth[0] >= 0.7 and image_only[0] < 0.5
    assert with_depth[1] >= 0.7  # a fist whose index sticks out at the camera is a pointing hand
    assert pointing_score(np.stack([_toward_camera(OPEN_PALM)]))[0] < 0.1  # others extended: not pointing


def test_middle_weight_accepts_two_finger_pointing_only_when_asked():
    hands = np.stack([VICTORY, POINTING, OPEN_PALM])
    strict = pointing_score(hands)
    lenient = pointing_score(hands, middle_weight=0.45)
    assert strict[0] < 0.5 <= lenient[0]  # index + middle out: pointing only on a raised arm
    assert strict[1] > 0.9 and lenient[1] > 0.9
    assert lenient[2] < 0.1  # ring and little finger out: never pointing


@settings(max_examples=60, deadline=None)
@given(
    scale=st.floats(1e-3, 1e4),
    angle=st.floats(-180, 180),
    dx=st.floats(-1e4, 1e4),
    dy=st.floats(-1e4, 1e4),
    mirror=st.booleans(),
    which=st.sampled_from(["pointing", "fist", "open", "victory"]),
)
def test_scores_invariant_to_similarity_transforms(scale, angle, dx, dy, mirror, which):
    hand = {"pointing": POINTING, "fist": FIST, "open": OPEN_PALM, "victory": VICTORY}[which]
    moved = _transform(hand, scale, angle, (dx, dy), mirror)
    assert pointing_score(moved[None])[0] == pytest.approx(pointing_score(hand[None])[0], abs=1e-4)
    assert open_palm_score(moved[None])[0] == pytest.approx(open_palm_score(hand[None])[0], abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=42, max_size=42))
def test_scores_always_in_unit_interval(values):
    hand = np.array(values).reshape(1, 21, 2)
    for score in (pointing_score(hand), open_palm_score(hand)):
        assert np.isfinite(score).all() and 0.0 <= score[0] <= 1.0


def test_unseen_and_degenerate_hands_score_zero():
    hands = np.stack([np.full((21, 2), np.nan), np.zeros((21, 2))])
    assert pointing_score(hands).tolist() == [0.0, 0.0]
    assert open_palm_score(hands).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("shape", [(21, 2), (1, 20, 2), (3, 21, 4), (2, 21, 1), (21,)])
def test_bad_shapes_raise(shape):
    with pytest.raises(ValueError, match=r"\(N, 21, 2\|3\)"):
        pointing_score(np.zeros(shape))
    with pytest.raises(ValueError):
        open_palm_score(np.zeros(shape))


def test_index_ray_points_along_the_finger():
    rotated = _transform(POINTING, 50.0, 90.0, (100.0, 100.0), False)
    origin, direction = index_ray(rotated[None])
    expected = rotated[8] - rotated[5]
    assert np.allclose(origin[0], rotated[8])
    assert np.allclose(direction[0], expected / np.linalg.norm(expected))


def test_arm_raised_needs_a_straight_arm_away_from_the_body():
    shoulder = np.array([[100.0, 100.0]] * 4)
    hip = np.array([[100.0, 300.0]] * 4)
    elbow = np.array([[100.0, 180.0], [180.0, 100.0], [160.0, 160.0], [180.0, 80.0]])
    wrist = np.array([[100.0, 260.0], [260.0, 100.0], [100.0, 140.0], [255.0, 50.0]])
    # hanging straight down, held out sideways, bent with the hand at the chest, raised forward-up
    raised = arm_raised(shoulder, elbow, wrist, hip, min_extension=0.6, min_elevation_deg=35.0)
    assert raised.tolist() == [False, True, False, True]
    missing = arm_raised(shoulder[:1], elbow[:1], np.full((1, 2), np.nan), None, 0.6, 35.0)
    assert missing.tolist() == [False]


def test_an_elbow_collapsed_onto_the_hand_is_not_a_straight_arm():
    # hands held together in front of the chest with the elbow hidden: the pose model puts the elbow
    # keypoint on the hands, and shoulder -> wrist then equals the chain (extension 1.0)
    shoulder, hip = np.array([[100.0, 100.0]] * 2), np.array([[100.0, 300.0]] * 2)
    elbow = np.array([[-5.0, 165.0], [180.0, 100.0]])
    wrist = np.array([[-8.0, 170.0], [260.0, 100.0]])
    assert arm_raised(shoulder, elbow, wrist, hip, 0.6, 35.0).tolist() == [True, True]  # what it read before
    assert arm_raised(shoulder, elbow, wrist, hip, 0.6, 35.0, min_forearm_ratio=0.35).tolist() == [False, True]


def test_an_index_pointing_back_along_the_forearm_is_no_pointing_hand():
    """The wrist bends about 70-80 degrees at most: an index ray more than 90 degrees from the forearm is a hand
    folded on the body (bus.jpg's man with his arms crossed, 141-163 degrees), not a finger pointing."""
    from detectors.hands import index_follows_forearm

    forearm = np.array([30.0, 0.0])  # elbow -> wrist, to the right
    assert index_follows_forearm(np.array([1.0, 0.0]), forearm)
    assert index_follows_forearm(np.array([np.cos(np.radians(60)), -np.sin(np.radians(60))]), forearm)
    assert not index_follows_forearm(np.array([-0.98, -0.22]), forearm)  # the crossed arms' "index"
    assert not index_follows_forearm(np.array([np.cos(np.radians(100)), np.sin(np.radians(100))]), forearm)
    # unknown forearm or ray: no evidence against
    assert index_follows_forearm(np.array([-1.0, 0.0]), np.array([0.0, 0.0]))
    assert index_follows_forearm(np.array([np.nan, 0.0]), forearm)
