"""Known answers for the head pose read off the face mesh's own 3D landmarks (detectors/face_pose.py) and
the eye cues measured on the face: a synthetic face turned by a known yaw / pitch, seen in its crop the
way MediaPipe reports it (x, y pixels, z depth on the same scale), must give that direction back."""
from __future__ import annotations

import numpy as np
import pytest

from detectors.face_pose import face_axes, mesh_head_rotation, sight_rotation
from detectors.gaze import EYE_OPEN_DOWN, EYES, face_keypoints_seen, gaze_from_face_mesh, gaze_from_keypoints, iris_offsets

IMAGE = (960, 540)
EYE_WIDTH = 30.0
LEVEL_OPENING = 0.27


def _face(opening: float = LEVEL_OPENING) -> np.ndarray:
    """(478, 3) synthetic landmarks in face axes (x across to the image right of a frontal face, y down,
    z into the head; units ~ mm), only the ids the gaze code reads placed, the rest at the face centre."""
    points = np.tile([0.0, 0.0, 40.0], (478, 1))
    half = opening * EYE_WIDTH / 2
    placed = {
        1: (0, 10, -25),  # nose tip
        10: (0, -90, 28), 152: (0, 85, 28),  # forehead top, chin (same depth: the face's own "down")
        33: (-45, -35, 20), 133: (-15, -35, 20), 362: (15, -35, 20), 263: (45, -35, 20),  # eye corners
        159: (-30, -35 - half, 17), 145: (-30, -35 + half, 17),  # right eye's upper / lower lid
        386: (30, -35 - half, 17), 374: (30, -35 + half, 17),
        468: (-30, -35, 15), 473: (30, -35, 15),  # iris centres (looking straight out of the face)
        234: (-70, -10, 60), 454: (70, -10, 60),  # cheek edges
        61: (-25, 40, 20), 291: (25, 40, 20),  # mouth corners
    }
    for i, p in placed.items():
        points[i] = p
    return points


def _turn(yaw_deg: float, pitch_deg: float) -> np.ndarray:
    """Rotation of a face that looks along -z: yaw turns it toward the image right (+x), pitch down (+y)."""
    yaw, pitch = np.radians(yaw_deg), np.radians(pitch_deg)
    # pitch about x (forward -z tips toward +y), then yaw about y (forward tips toward +x)
    rx = np.array([[1, 0, 0], [0, np.cos(pitch), -np.sin(pitch)], [0, np.sin(pitch), np.cos(pitch)]])
    ry = np.array([[np.cos(yaw), 0, -np.sin(yaw)], [0, 1, 0], [np.sin(yaw), 0, np.cos(yaw)]])
    return ry @ rx


def _direction(yaw_deg: float, pitch_deg: float) -> np.ndarray:
    yaw, pitch = np.radians(yaw_deg), np.radians(pitch_deg)
    return np.array([np.sin(yaw) * np.cos(pitch), np.sin(pitch), -np.cos(yaw) * np.cos(pitch)])


def _mesh(rotation: np.ndarray, centre_px=(480.0, 270.0), scale: float = 0.8, opening: float = LEVEL_OPENING) -> np.ndarray:
    """The face as its crop shows it: rotated, scaled to pixels (z too), placed at ``centre_px``."""
    points = _face(opening) @ rotation.T * scale
    points[:, 0] += centre_px[0]
    points[:, 1] += centre_px[1]
    return points


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))))


def test_turning_direction_helpers_agree():
    for yaw, pitch in ((0, 0), (40, 0), (0, 30), (-60, 20)):
        assert _angle(_turn(yaw, pitch) @ [0, 0, -1.0], _direction(yaw, pitch)) < 1e-6


@pytest.mark.parametrize("yaw, pitch", [(0, 0), (30, 0), (-50, 0), (0, 25), (0, -15), (-45, 30), (60, 15), (-70, -10)])
def test_known_yaw_and_pitch_come_back_at_the_image_centre(yaw, pitch):
    # eyes midway between the outer corners lie on the optical axis only for a frontal face; put the
    # face so that they do, where the line of sight is the optical axis
    rotation = _turn(yaw, pitch)
    mesh = _mesh(rotation)
    eyes = mesh[[33, 263], :2].mean(axis=0)
    mesh[:, :2] += np.array([480.0, 270.0]) - eyes
    head, axes = mesh_head_rotation(mesh, IMAGE)
    assert _angle(head @ [0, 0, -1.0], _direction(yaw, pitch)) < 0.5
    assert np.allclose(axes, rotation, atol=1e-6)


def test_a_frontal_face_off_centre_looks_into_the_lens():
    # a face that looks straight out of its crop at the image's top-right looks along its line of sight
    # back to the lens: down and to the left in the camera frame
    mesh = _mesh(np.eye(3), centre_px=(900.0, 60.0))
    head, _ = mesh_head_rotation(mesh, IMAGE)
    eyes = mesh[[33, 263], :2].mean(axis=0)
    focal = max(IMAGE)
    toward_lens = -np.array([(eyes[0] - 480) / focal, (eyes[1] - 270) / focal, 1.0])
    assert _angle(head @ [0, 0, -1.0], toward_lens) < 0.5


def test_sight_rotation_is_a_rotation_onto_the_line_of_sight():
    r = sight_rotation(np.array([100.0, 500.0]), IMAGE)
    assert np.allclose(r @ r.T, np.eye(3), atol=1e-9) and np.isclose(np.linalg.det(r), 1.0)
    sight = np.array([(100 - 480) / 960, (500 - 270) / 960, 1.0])
    assert _angle(r @ [0, 0, 1.0], sight) < 1e-6
    assert np.allclose(sight_rotation(np.array([480.0, 270.0]), IMAGE), np.eye(3))


def test_degenerate_landmarks_give_no_pose():
    assert face_axes(np.zeros((478, 3))) is None
    assert mesh_head_rotation(np.zeros((478, 3)), IMAGE) is None


@pytest.mark.parametrize("yaw", [0, 35, -50])
def test_lid_cue_on_the_face_ignores_the_head_turn(yaw):
    """A level look reads level however far the head is turned (in the image a 3/4 view foreshortens the
    eye width and the far eye's opening reads wider); eyes half closed read as looking down."""
    for opening, expected in ((LEVEL_OPENING, 0.0), ((LEVEL_OPENING + 0.08) / 2, 0.5)):
        rotation = _turn(yaw, 0)
        mesh = _mesh(rotation, opening=opening)
        horizontal, down = iris_offsets(mesh, face_axes(mesh), LEVEL_OPENING)
        assert abs(horizontal) < 1e-6 and down == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("yaw, pitch", [(0, 0), (-45, 10), (40, -5)])
def test_gaze_with_level_eyes_follows_the_head(yaw, pitch):
    mesh = _mesh(_turn(yaw, pitch))
    eyes = mesh[[33, 263], :2].mean(axis=0)
    mesh[:, :2] += np.array([480.0, 270.0]) - eyes
    estimate = gaze_from_face_mesh(mesh, IMAGE, 0.9, 1.0, head_pose="mesh", eye_open_level=LEVEL_OPENING)
    assert estimate is not None and _angle(estimate.direction, _direction(yaw, pitch)) < 0.5
    # lowered lids turn the gaze down from the head direction, not sideways
    lowered = _mesh(_turn(yaw, pitch), opening=0.08)
    lowered[:, :2] += np.array([480.0, 270.0]) - eyes
    down = gaze_from_face_mesh(lowered, IMAGE, 0.9, 1.0, head_pose="mesh", eye_open_level=LEVEL_OPENING)
    assert down is not None and down.direction[1] > estimate.direction[1] + 0.3


def test_head_pose_must_be_known():
    with pytest.raises(ValueError, match="head_pose"):
        gaze_from_face_mesh(_mesh(np.eye(3)), IMAGE, 0.9, 1.0, head_pose="model")


def test_eye_cues_fade_on_eyes_a_few_pixels_wide():
    """Lowered lids turn the gaze down on a face large enough to show them, not on one whose eyes are a
    few pixels wide (there a landmark's error spans the whole lid range)."""
    def gaze(scale):
        mesh = _mesh(_turn(-30, 0), scale=scale, opening=0.08)
        return gaze_from_face_mesh(mesh, IMAGE, 0.9, 1.0, head_pose="mesh", eye_open_level=LEVEL_OPENING,
                                   eye_cue_pixels=(8.0, 10.0)).direction
    eye_px = lambda scale: EYE_WIDTH * scale * np.cos(np.radians(30))  # the wider eye's image width
    assert eye_px(0.25) < 8.0 < 10.0 < eye_px(0.8)
    assert _angle(gaze(0.25), _direction(-30, 0)) < 1.0  # the head direction alone
    assert gaze(0.8)[1] > np.sin(np.radians(30))  # lids down: well below level


def test_eye_cues_read_in_full_however_small_are_kept_apart():
    """The direction with the eye cues read in full (eye_direction) is kept beside the faded one: on small eyes
    it reads the lowered lids the faded direction leaves out; on eyes large enough both are the same."""
    def estimate(scale):
        mesh = _mesh(_turn(-30, 0), scale=scale, opening=0.08)
        return gaze_from_face_mesh(mesh, IMAGE, 0.9, 1.0, head_pose="mesh", eye_open_level=LEVEL_OPENING,
                                   eye_cue_pixels=(8.0, 10.0))
    small, large = estimate(0.25), estimate(0.8)
    assert small.eye_cues == 0.0 and large.eye_cues == 1.0
    assert small.eye_direction[1] > np.sin(np.radians(30))  # lids down, as the large face reads them
    assert _angle(small.eye_direction, large.direction) < 3.0
    np.testing.assert_allclose(large.eye_direction, large.direction)


def _set_opening(points: np.ndarray, eye: dict, opening: float) -> None:
    """Put one eye's lids (face axes, before turning) at ``opening`` eye widths apart."""
    half = opening * EYE_WIDTH / 2
    x = points[eye["lids"][0], 0]
    points[eye["lids"][0]] = (x, -35 - half, 17)
    points[eye["lids"][1]] = (x, -35 + half, 17)


@pytest.mark.parametrize("yaw", [-60, 60])
def test_eye_cues_weighted_by_how_squarely_each_eye_is_seen(yaw):
    """On a turned head the far eye is seen edge-on: with view_power p each eye's iris offset, and its lid
    cue where that reads an up-look, counts (image width / face width) ** p, so a far eye read wide open
    no longer outvotes a near eye at a level look; lids read closing count in full; a frontal face's two
    eyes count alike whatever p."""
    rotation = _turn(yaw, 0)
    face = _face()
    face[[33, 263], 2] = 25  # the eyes sit on a curved face: outer corners deeper than the inner ones
    image_width = lambda mesh, eye: np.linalg.norm(mesh[eye["corners"][1], :2] - mesh[eye["corners"][0], :2])
    ratios = [image_width(face @ rotation.T * 0.8, eye) / (EYE_WIDTH * 0.8) for eye in EYES]
    far = int(np.argmin(ratios))
    assert ratios[far] < 0.4 < 0.6 < ratios[1 - far]  # the far eye is the more foreshortened one
    _set_opening(face, EYES[far], 0.45)  # read wide open: the up-look cue clips at -0.5
    mesh = face @ rotation.T * 0.8
    axes = face_axes(mesh)
    plain = iris_offsets(mesh, axes, LEVEL_OPENING)[1]
    weighted = iris_offsets(mesh, axes, LEVEL_OPENING, view_power=2.0)[1]
    assert plain == pytest.approx(-0.25, abs=1e-6)  # the mean of -0.5 (far) and 0 (near)
    w_far, w_near = ratios[far] ** 2, ratios[1 - far] ** 2
    # the near eye's level read (no up-look) counts in full
    assert weighted == pytest.approx(-0.5 * w_far / (w_far + 1.0), abs=1e-6)
    frontal = _face()
    frontal[[33, 263], 2] = 25
    _set_opening(frontal, EYES[far], 0.45)
    assert iris_offsets(frontal * 0.8, np.eye(3), LEVEL_OPENING, view_power=2.0)[1] == pytest.approx(-0.25, abs=1e-6)
    # a far eye read closing (a down-look) keeps its full say
    _set_opening(face, EYES[far], (LEVEL_OPENING + 0.08) / 2)  # lid cue 0.5
    mesh = face @ rotation.T * 0.8
    assert iris_offsets(mesh, face_axes(mesh), LEVEL_OPENING, view_power=2.0)[1] == pytest.approx(0.25, abs=1e-6)
    # the iris offset is weighted alike: a far eye's iris at its outer corner pulls the mean less
    face = _face()
    face[[33, 263], 2] = 25
    face[EYES[far]["iris"], 0] = face[EYES[far]["corners"][1], 0] - 0.25 * EYE_WIDTH  # offset +0.5
    mesh = face @ rotation.T * 0.8
    axes = face_axes(mesh)
    assert iris_offsets(mesh, axes, LEVEL_OPENING)[0] == pytest.approx(0.25, abs=1e-6)
    assert iris_offsets(mesh, axes, LEVEL_OPENING, view_power=2.0)[0] == pytest.approx(
        0.5 * w_far / (w_far + w_near), abs=1e-6)


def _smiling_face(mouth_half_width: float, upper_above: float, lower_below: float) -> np.ndarray:
    """The synthetic face with both eyes' lids at ``upper_above`` / ``lower_below`` eye widths from the eye
    corners' line and mouth corners ``mouth_half_width`` from its middle (its cheeks are 70 either side)."""
    face = _face()
    for eye in EYES:
        x = face[eye["lids"][0], 0]
        face[eye["lids"][0]] = (x, -35 - upper_above * EYE_WIDTH, 17)
        face[eye["lids"][1]] = (x, -35 + lower_below * EYE_WIDTH, 17)
    face[61, 0], face[291, 0] = -mouth_half_width, mouth_half_width
    return face


@pytest.mark.parametrize("yaw", [0, 40])
def test_a_smile_raising_the_lower_lids_is_not_a_look_down(yaw):
    """Smiling cheeks push the lower lids up (0.03 of the eye width below the corners' line instead of about
    0.08): the opening narrows as in a look down. On a smiling mouth (60 of the face's 140 = 0.43) the lower
    lid counts at its rest depth, so a level look reads level; a look down, which lowers the upper lid, still
    reads down; a neutral mouth (50 of 140) reads the narrowed opening as before; the setting at 0 is off."""
    smile = (0.40, 0.08)

    def down(face, setting=smile):
        mesh = face @ _turn(yaw, 0).T * 0.8
        return iris_offsets(mesh, face_axes(mesh), LEVEL_OPENING, smile=setting)[1]

    span = LEVEL_OPENING - EYE_OPEN_DOWN  # the opening a look from level to fully down closes
    upper = LEVEL_OPENING - 0.08  # the upper lid where a level look puts it (the lower lid at rest)
    assert down(_smiling_face(25, upper, 0.08)) == pytest.approx(0.0, abs=1e-6)
    assert down(_smiling_face(30, upper, 0.03)) == pytest.approx(0.0, abs=1e-6)
    assert down(_smiling_face(25, upper, 0.03)) == pytest.approx(0.05 / span, abs=1e-6)  # 0.05 of the opening lost
    assert down(_smiling_face(30, upper, 0.03), (0.0, 0.08)) == pytest.approx(0.05 / span, abs=1e-6)
    # the upper lid lowered by 0.14 reads down by 0.14 of the span, smile or not
    assert down(_smiling_face(30, upper - 0.14, 0.03)) == pytest.approx(0.14 / span, abs=1e-6)


def _coco(scores: dict[int, float]) -> np.ndarray:
    """One person's COCO-17 keypoints: a head at x 100-120 above shoulders, given scores (else 0)."""
    xy = {0: (110, 50), 1: (113, 47), 2: (107, 47), 3: (118, 50), 4: (102, 50), 5: (125, 80), 6: (95, 80)}
    points = np.zeros((17, 3))
    points[:, :2] = np.nan
    for k, (x, y) in xy.items():
        points[k] = (x, y, scores.get(k, 0.0))
    return points


def test_a_head_seen_from_behind_is_told_from_a_profile_by_the_face_keypoints():
    back = _coco({3: 0.9, 4: 0.9, 5: 0.9, 6: 0.9, 0: 0.2})  # both ears and shoulders, no face
    profile = _coco({0: 0.9, 2: 0.8, 4: 0.9, 5: 0.9, 6: 0.9})  # nose, one eye, one ear
    eyes_only = _coco({1: 0.5, 2: 0.5, 5: 0.9, 6: 0.9})
    assert face_keypoints_seen(np.stack([back, profile, eyes_only])).tolist() == [False, True, True]
    _, direction, _ = gaze_from_keypoints(np.stack([back, profile]))
    assert direction[0, 2] > 0 > direction[1, 2]  # a back view looks into the scene, a face toward the lens


def test_a_torso_seen_from_behind_needs_sure_face_points():
    """tvhid_handshake_0001's A, back to the camera, face never visible: the pose model gives his head a nose at
    0.29-0.32 and one eye at 0.5; a re-encode moved the nose over 0.3 and made him a profile looking at B."""
    def person(nose: float, shoulders: float = 0.95, from_behind: bool = True) -> np.ndarray:
        points = _coco({0: nose, 2: 0.5, 3: 0.99, 5: shoulders, 6: shoulders})
        if from_behind:  # the subject's left shoulder on the image left
            points[[5, 6], 0] = points[[6, 5], 0]
        return points

    faint, sure = person(0.32), person(0.8)
    facing = person(0.32, from_behind=False)
    unsure_torso = person(0.32, shoulders=0.4)
    assert face_keypoints_seen(np.stack([faint, sure, facing, unsure_torso])).tolist() == [False, True, True, True]
    _, direction, _ = gaze_from_keypoints(np.stack([faint, sure]))
    assert direction[0, 2] > 0 > direction[1, 2]  # the faint one reads as a back view, into the scene
