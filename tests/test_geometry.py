"""Target association (events/geometry.py): the Numba kernel equals its NumPy twin, and hand-built
frames give the targets a person would name."""
from __future__ import annotations

import numpy as np
import pytest

from events.geometry import (
    GAZE_CAMERA,
    GAZE_ELSEWHERE,
    GAZE_HANDS,
    GAZE_PERSON,
    GAZE_UNKNOWN,
    POINT_ELSEWHERE,
    POINT_HANDS,
    POINT_NONE,
    POINT_PERSON,
    assign_gaze_targets,
    assign_point_targets,
    camera_sight_lines,
    hands_at_face,
    head_only_targets,
    project_directions,
    settle_ambiguous_targets,
    stability_window,
    stable_targets,
    target_type_names,
    turned_directions,
)
from pipeline.schema import GAZE_TARGET_TYPES

ASPECT = 16 / 9


def _unit3(x, y, z):
    v = np.array([x, y, z], dtype=float)
    return v / np.linalg.norm(v)


def _toward(origin, target, depth=0.0, aspect=ASPECT):
    """Gaze direction whose image-plane part points from origin to target (normalised coords)."""
    d = np.array([(target[0] - origin[0]) * aspect, target[1] - origin[1]])
    d /= np.linalg.norm(d)
    return _unit3(d[0], d[1], depth)


def _scene():
    """Two people side by side: A (id 0) on the left, B (id 1) on the right holding something low."""
    heads = np.array([[0.25, 0.10, 0.35, 0.30], [0.60, 0.10, 0.70, 0.30]])
    head_owner = np.array([0, 1])
    hands = np.array([[0.30, 0.55, 0.36, 0.62], [0.58, 0.60, 0.66, 0.68]])
    hand_owner = np.array([0, 1])
    return heads, head_owner, hands, hand_owner


def _gaze(direction, origin=(0.30, 0.18), self_id=0, conf=0.9, **kw):
    heads, head_owner, hands, hand_owner = _scene()
    return assign_gaze_targets(
        [0], [origin], [direction], [conf], [self_id],
        heads, head_owner, [0, 0], hands, hand_owner, [0, 0],
        aspect=ASPECT, cone_half_angle_deg=15.0, camera_max_angle_deg=12.0, min_conf=0.2, **kw,
    )


def test_gaze_straight_at_a_head_is_person():
    code, target, point = _gaze(_toward((0.30, 0.18), (0.65, 0.20)))
    assert (code[0], target[0]) == (GAZE_PERSON, 1)
    heads = _scene()[0]
    assert heads[1, 0] <= point[0, 0] <= heads[1, 2] and heads[1, 1] <= point[0, 1] <= heads[1, 3]


def test_gaze_just_beside_a_head_is_a_near_miss():
    # aim 25 degrees above the top of B's head: outside the 15 degree cone
    origin = np.array([0.30, 0.18])
    corner = np.array([0.60, 0.10])
    v = np.array([(corner[0] - origin[0]) * ASPECT, corner[1] - origin[1]])
    angle = np.arctan2(v[1], v[0]) - np.radians(25)
    code, target, point = _gaze(_unit3(np.cos(angle), np.sin(angle), 0.0))
    assert (code[0], target[0]) == (GAZE_ELSEWHERE, -1)
    assert np.all((point >= 0) & (point <= 1))
    # 10 degrees off the corner is inside the cone: still B
    angle = np.arctan2(v[1], v[0]) - np.radians(10)
    code, target, _ = _gaze(_unit3(np.cos(angle), np.sin(angle), 0.0))
    assert (code[0], target[0]) == (GAZE_PERSON, 1)


def test_gaze_down_at_someone_elses_hands_is_hands_of_that_person():
    code, target, point = _gaze(_toward((0.30, 0.18), (0.62, 0.64), depth=0.3))
    assert (code[0], target[0]) == (GAZE_HANDS, 1)
    assert target_type_names(code) == ["hands"]


def test_own_hands_count_but_never_own_head():
    # B looks down at what B holds
    code, target, _ = _gaze(_toward((0.65, 0.20), (0.62, 0.64)), origin=(0.65, 0.20), self_id=1)
    assert (code[0], target[0]) == (GAZE_HANDS, 1)
    # A looking "at" their own head region (origin inside it, slightly up) finds nothing of their own
    code, target, _ = _gaze(_unit3(0.0, -1.0, 0.0))
    assert code[0] == GAZE_ELSEWHERE and target[0] == -1


def _through(origin, target, along, depth, aspect=ASPECT):
    """3D gaze from the scene point seen at ``origin`` whose perspective image runs toward ``target``:
    ``along`` of it in the image direction plus ``depth`` into the scene."""
    sight = camera_sight_lines(np.array([origin]), aspect)[0]
    u = np.array([(target[0] - origin[0]) * aspect, target[1] - origin[1]])
    u /= np.linalg.norm(u)
    return _unit3(*(along * u + sight[:2] * depth), depth)


def test_own_hands_need_the_ray_on_them_and_a_steep_gaze():
    """Issue 10: "own hands" needs positive evidence, not a ray ending low."""
    kw = dict(own_hands_min_pitch_deg=25.0, max_miss=1.5)
    origin, hand_centre = (0.65, 0.20), (0.62, 0.64)
    # B looks steeply down through his own hand box: his hands
    code, target, _ = _gaze(_toward(origin, hand_centre, depth=0.3), origin=origin, self_id=1, **kw)
    assert (code[0], target[0]) == (GAZE_HANDS, 1)
    # a nearly level gaze into the scene whose image ray crosses the same hand box: it looks past them
    level = _through(origin, hand_centre, along=0.25, depth=1.0)
    assert np.degrees(np.arcsin(level[1])) < 10.0
    code, target, _ = _gaze(level, origin=origin, self_id=1, **kw)
    assert code[0] == GAZE_ELSEWHERE and target[0] == -1
    code, target, _ = _gaze(level, origin=origin, self_id=1, **{**kw, "own_hands_min_pitch_deg": -90.0})
    assert (code[0], target[0]) == (GAZE_HANDS, 1)  # the same ray, were the pitch rule off
    # steep, but the ray passes beside the own hand box (inside the angular cone): not his hands
    beside = _toward(origin, (0.72, 0.64), depth=0.3)
    code, target, _ = _gaze(beside, origin=origin, self_id=1, **kw)
    assert code[0] == GAZE_ELSEWHERE and target[0] == -1


def test_a_target_needs_the_ray_near_it_relative_to_its_size():
    heads = np.array([[0.90, 0.45, 0.94, 0.52]])  # a small, far head
    origin = np.array([0.10, 0.50])
    centre = np.array([0.92, 0.485])
    v = (centre - origin) * [ASPECT, 1]
    for offset_deg, expected in ((0.0, GAZE_PERSON), (4.0, GAZE_ELSEWHERE)):
        a = np.arctan2(v[1], v[0]) + np.radians(offset_deg)
        code, _, _ = assign_gaze_targets(
            [0], [origin], [_unit3(np.cos(a), np.sin(a), 0.0)], [0.9], [0], heads, [1], [0],
            np.zeros((0, 4)), [], [], aspect=ASPECT, max_miss=1.5,
        )
        assert code[0] == expected, offset_deg
    # without the size rule the 15 degree cone alone would accept the 4 degree miss
    code, _, _ = assign_gaze_targets(
        [0], [origin], [_unit3(np.cos(a), np.sin(a), 0.0)], [0.9], [0], heads, [1], [0], np.zeros((0, 4)), [], [],
        aspect=ASPECT,
    )
    assert code[0] == GAZE_PERSON


def test_camera_is_the_line_of_sight_to_the_lens_from_where_the_person_is():
    origin = np.array([[0.05, 0.10]])  # top-left corner: the lens is to the right and below
    to_lens = -camera_sight_lines(origin, ASPECT)[0]
    to_lens /= np.linalg.norm(to_lens)
    code, _, point = _gaze(to_lens, origin=tuple(origin[0]))
    assert code[0] == GAZE_CAMERA and np.allclose(point[0], origin[0])
    # straight along the optical axis from there passes the lens by ~25 degrees: not the camera
    code, _, _ = _gaze(_unit3(0.0, 0.0, -1.0), origin=tuple(origin[0]))
    assert code[0] != GAZE_CAMERA
    # a ray at the lens projects to (almost) nothing in the image
    assert np.linalg.norm(project_directions(origin, to_lens[None], ASPECT)) < 1e-9


def test_unstable_targets_become_unknown():
    t = np.arange(10) * 0.1  # 10 fps
    person = np.zeros(10, int)
    shot = np.zeros(10, int)
    # A A A A B A A A A A: the lone flip has no support
    code = np.full(10, GAZE_PERSON)
    target = np.array([1, 1, 1, 1, 2, 1, 1, 1, 1, 1])
    new_code, new_target = stable_targets(t, person, shot, code, target, 0.2)
    assert new_code[4] == GAZE_UNKNOWN and new_target[4] == -1
    assert (new_code[[0, 1, 2, 3, 5, 6, 7, 8, 9]] == GAZE_PERSON).all()
    # a real change of target (A A A A A B B B B B) keeps both sides
    target = np.array([1] * 5 + [2] * 5)
    new_code, new_target = stable_targets(t, person, shot, code, target, 0.2)
    assert (new_code == GAZE_PERSON).all() and new_target.tolist() == target.tolist()
    # at 2 fps no neighbour is within 0.2 s: nothing changes; other people and shots do not vote
    sparse = np.arange(10) * 0.5
    assert stable_targets(sparse, person, shot, code, np.array([1, 2] * 5), 0.2)[1].tolist() == [1, 2] * 5
    other = np.array([0, 1] * 5)
    assert stable_targets(t, other, shot, code, np.array([1, 2] * 5), 0.2)[1].tolist() == [1, 2] * 5
    # unknown rows neither vote nor change
    code = np.array([GAZE_PERSON, GAZE_UNKNOWN, GAZE_UNKNOWN, GAZE_PERSON, GAZE_PERSON] + [GAZE_UNKNOWN] * 5)
    new_code, _ = stable_targets(t, person, shot, code, np.array([1, -1, -1, 1, 1] + [-1] * 5), 0.2)
    assert new_code.tolist() == code.tolist()


def test_turned_directions_are_the_read_turned_by_its_uncertainty():
    d = np.array([_unit3(0.3, 0.2, -1.0), _unit3(-0.5, 0.1, 0.8)])
    turned = turned_directions(d, [5.0, 20.0])
    assert turned.shape == (4, 2, 3)
    assert np.allclose(np.linalg.norm(turned, axis=2), 1.0)
    level = turned_directions(np.array([_unit3(0.3, 0.0, -1.0)]), 7.0)[:2, 0]  # left / right of a level look
    assert np.degrees(np.arccos(level @ _unit3(0.3, 0.0, -1.0))) == pytest.approx([7.0, 7.0])
    # left / right keep the height, up / down keep x
    assert np.allclose(turned[:2, :, 1], d[:, 1]) and np.allclose(turned[2:, :, 0], d[:, 0])
    # a scalar applies to every row; zero leaves every read as it was
    assert np.allclose(turned_directions(d, 0.0), d[None])


def test_a_decision_inside_its_uncertainty_keeps_the_looks_firm_neighbour():
    t = np.arange(6) * 0.5
    person, shot = np.zeros(6, int), np.zeros(6, int)
    # person 1's head, firm at 0, 0.5, 1.5; at 1.0 the ray grazes its edge: one turned read says elsewhere
    code = np.array([GAZE_PERSON, GAZE_PERSON, GAZE_ELSEWHERE, GAZE_PERSON, GAZE_CAMERA, GAZE_ELSEWHERE])
    target = np.array([1, 1, -1, 1, -1, -1])
    alt_code = np.tile(code, (4, 1))
    alt_id = np.tile(target, (4, 1))
    alt_code[0, 2], alt_id[0, 2] = GAZE_PERSON, 1
    # at 2.5 camera and elsewhere are within the noise; the camera row at 2.0 is firm
    alt_code[1, 5] = GAZE_CAMERA
    new_code, new_id, firm = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0)
    assert firm.tolist() == [True, True, False, True, True, False]
    assert new_code.tolist() == [GAZE_PERSON] * 4 + [GAZE_CAMERA, GAZE_CAMERA]
    assert new_id.tolist() == [1, 1, 1, 1, -1, -1]
    # a firm neighbour whose target is not among the row's reads is no evidence for it: the row keeps its read
    alt_code[0, 2], alt_id[0, 2] = GAZE_PERSON, 2
    kept = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0)
    assert kept[0][2] == GAZE_ELSEWHERE
    # other people, other shots and rows beyond the window are no neighbours
    alt_code[0, 2], alt_id[0, 2] = GAZE_PERSON, 1
    alone = np.array([0, 0, 1, 0, 0, 0])
    assert settle_ambiguous_targets(t, alone, shot, code, target, alt_code, alt_id, 1.0)[0][2] == GAZE_ELSEWHERE
    assert settle_ambiguous_targets(t, person, alone, code, target, alt_code, alt_id, 1.0)[0][2] == GAZE_ELSEWHERE
    assert settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 0.25)[0][2] == GAZE_ELSEWHERE
    # a neighbour whose gaze is turned further than the row's uncertainty is another look: no evidence
    look = np.array([_unit3(0.0, 0.5, -1.0)] * 6)
    look[2] = _unit3(0.05, 0.5, -1.0)  # about 2.5 degrees from the others
    near = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0, direction=look,
                                    max_turn_deg=5.0)
    assert near[0][2] == GAZE_PERSON
    look[[0, 1, 3]] = _unit3(0.4, 0.5, -1.0)  # the head had turned at the firm neighbours
    turned = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0, direction=look,
                                      max_turn_deg=np.full(6, 5.0))
    assert turned[0][2] == GAZE_ELSEWHERE
    # when the reads all agree nothing changes
    same = settle_ambiguous_targets(t, person, shot, code, target, np.tile(code, (4, 1)), np.tile(target, (4, 1)), 1.0)
    assert same[0].tolist() == code.tolist() and same[2].all()


def test_a_read_that_cannot_stand_alone_is_unknown_unless_a_firm_neighbour_settles_it():
    t = np.arange(3) * 0.5
    person, shot = np.zeros(3, int), np.zeros(3, int)
    code, target = np.full(3, GAZE_PERSON), np.ones(3, int)
    alt_code, alt_id = np.tile(code, (4, 1)), np.tile(target, (4, 1))
    alt_code[3, 1], alt_id[3, 1] = GAZE_ELSEWHERE, -1  # at 0.5 s the look turned down misses the head
    flagged = np.ones(3, bool)
    settled = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0, unsettled_unknown=flagged)
    assert settled[0].tolist() == [GAZE_PERSON] * 3  # its firm neighbours hold the look on the head
    alt_code[3], alt_id[3] = GAZE_ELSEWHERE, -1  # every row grazes the head: no firm neighbour
    alone = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0, unsettled_unknown=flagged)
    assert alone[0].tolist() == [GAZE_UNKNOWN] * 3 and alone[1].tolist() == [-1] * 3
    # unflagged rows keep their own read (most marginal reads are right)
    kept = settle_ambiguous_targets(t, person, shot, code, target, alt_code, alt_id, 1.0,
                                    unsettled_unknown=np.array([False, True, False]))
    assert kept[0].tolist() == [GAZE_PERSON, GAZE_UNKNOWN, GAZE_PERSON]


def test_the_stability_window_always_reaches_the_neighbouring_samples():
    at_2fps = np.arange(8) * 0.5005  # 2 fps sampled from a 29.97 fps video
    assert stability_window(at_2fps, 0.2) == pytest.approx(1.25 * 0.5005)
    assert stability_window(np.arange(30) * 0.1, 0.2) == pytest.approx(0.2)  # 10 fps: the setting
    assert stability_window(np.zeros(3), 0.2) == 0.2  # one instant: nothing to widen to
    # at 2 fps a lone target between two others (A B A, A A B) becomes unknown; a held one stays
    person, shot = np.zeros(8, int), np.zeros(8, int)
    code = np.full(8, GAZE_PERSON)
    target = np.array([1, 2, 1, 1, 1, 1, 2, 2])
    _, kept = stable_targets(at_2fps, person, shot, code, target, stability_window(at_2fps, 0.2))
    assert kept.tolist() == [1, -1, 1, 1, 1, 1, 2, 2]


def test_into_the_lens_is_camera_and_low_confidence_is_unknown():
    code, target, point = _gaze(_unit3(0.05, 0.05, -1.0))
    assert (code[0], target[0]) == (GAZE_CAMERA, -1)
    assert np.allclose(point[0], [0.30, 0.18])
    code, target, point = _gaze(_toward((0.30, 0.18), (0.65, 0.20)), conf=0.1)
    assert (code[0], target[0]) == (GAZE_UNKNOWN, -1) and np.isnan(point).all()
    code, _, _ = _gaze(np.array([np.nan, np.nan, np.nan]))
    assert code[0] == GAZE_UNKNOWN


def test_nearer_candidate_wins_when_both_are_on_the_ray():
    heads = np.array([[0.45, 0.15, 0.52, 0.25], [0.80, 0.15, 0.87, 0.25]])
    code, target, _ = assign_gaze_targets(
        [0], [[0.30, 0.20]], [_unit3(1, 0, 0)], [0.9], [0],
        heads, [1, 2], [0, 0], np.zeros((0, 4)), [], [], aspect=ASPECT,
    )
    assert (code[0], target[0]) == (GAZE_PERSON, 1)


def test_candidates_from_other_frames_are_ignored():
    heads = np.array([[0.60, 0.10, 0.70, 0.30]])
    code, _, _ = assign_gaze_targets(
        [0, 1], [[0.3, 0.2], [0.3, 0.2]], [_unit3(1, 0, 0)] * 2, [0.9, 0.9], [0, 0],
        heads, [1], [1], np.zeros((0, 4)), [], [], aspect=ASPECT,
    )
    assert code.tolist() == [GAZE_ELSEWHERE, GAZE_PERSON]


def test_pointing_targets():
    heads, _, hands, hand_owner = _scene()
    bodies = np.array([[0.20, 0.08, 0.40, 0.95], [0.55, 0.08, 0.75, 0.95]])
    origin = np.array([[0.36, 0.5], [0.36, 0.5], [0.36, 0.5]])
    to_hands = np.array([(0.62 - 0.36) * ASPECT, 0.64 - 0.5])
    directions = np.array([[1.0, 0.0], to_hands / np.linalg.norm(to_hands), [-1.0, 0.0]])
    code, target, point = assign_point_targets(
        [0, 0, 0], origin, directions, [True, True, False], [0, 0, 0],
        bodies, [0, 1], [0, 0], hands, hand_owner, [0, 0], aspect=ASPECT,
    )
    assert (code[0], target[0]) == (POINT_PERSON, 1)
    assert (code[1], target[1]) == (POINT_HANDS, 1)  # what B holds, not B's body behind it
    assert code[2] == POINT_NONE and np.isnan(point[2]).all()
    code, target, point = assign_point_targets(
        [0], [[0.36, 0.5]], [[-1.0, 0.0]], [True], [0], bodies, [0, 1], [0, 0], hands, hand_owner, [0, 0], aspect=ASPECT
    )
    assert code[0] == POINT_ELSEWHERE and point[0, 0] == pytest.approx(0.0)  # leaves the frame on the left


@pytest.mark.parametrize("use_numba", [True, False])
def test_a_ray_starting_on_a_box_is_at_it_only_when_it_heads_into_it(use_numba):
    # ultralytics' zidane.jpg: the pointing fingertip lies over the right edge of the man behind, and the
    # finger points on to the right, past him; over his left edge, pointing across him, it is at him
    bodies = np.array([[0.20, 0.08, 0.40, 0.95], [0.55, 0.08, 0.75, 0.95]])
    no_hands = np.zeros((0, 4))
    code, target, point = assign_point_targets(
        [0, 0, 0], [[0.72, 0.5], [0.58, 0.5], [0.72, 0.5]], [[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]], [True] * 3,
        [0, 0, 0], bodies, [0, 1], [0, 0], no_hands, [], [], aspect=ASPECT, use_numba=use_numba,
    )
    assert code[0] == POINT_ELSEWHERE and point[0, 0] == pytest.approx(1.0)  # on to the frame edge
    assert (code[1], target[1]) == (POINT_PERSON, 1)
    assert (code[2], target[2]) == (POINT_PERSON, 1)
    # eyes inside another head's box (heads overlap in a hug): a look away from its centre is not at it
    heads = np.array([[0.40, 0.10, 0.50, 0.30], [0.46, 0.12, 0.56, 0.32]])
    codes, ids, _ = assign_gaze_targets(
        [0, 0], [[0.48, 0.20], [0.48, 0.20]], [_unit3(-1.0, 0.0, 0.0), _unit3(1.0, 0.0, 0.0)], [0.9, 0.9], [0, 0],
        heads, [0, 1], [0, 0], no_hands, [], [], aspect=ASPECT, camera_max_angle_deg=12.0, min_conf=0.2,
        use_numba=use_numba,
    )
    assert codes[0] == GAZE_ELSEWHERE
    assert (codes[1], ids[1]) == (GAZE_PERSON, 1)


def _random_problem(rng, n_frames=30, people=4):
    rows_frame, origins, dirs, confs, owners = [], [], [], [], []
    heads, head_owner, head_frame, hands, hand_owner, hand_frame = [], [], [], [], [], []
    for f in range(n_frames):
        for p in range(rng.integers(0, people + 1)):
            centre = rng.uniform(0.05, 0.95, 2)
            size = rng.uniform(0.02, 0.2)
            heads.append([*(centre - size / 2), *(centre + size / 2)])
            head_owner.append(p)
            head_frame.append(f)
            for _ in range(2):
                c = rng.uniform(0, 1, 2)
                s = rng.uniform(0.01, 0.08)
                hands.append([*(c - s), *(c + s)] if rng.random() > 0.1 else [np.nan] * 4)
                hand_owner.append(p)
                hand_frame.append(f)
            rows_frame.append(f)
            origins.append(centre)
            dirs.append(_unit3(*rng.normal(size=3)))
            confs.append(rng.uniform(0, 1))
            owners.append(p)
    return (
        np.array(rows_frame), np.array(origins), np.array(dirs), np.array(confs), np.array(owners),
        np.array(heads).reshape(-1, 4), np.array(head_owner), np.array(head_frame),
        np.array(hands).reshape(-1, 4), np.array(hand_owner), np.array(hand_frame),
    )


@pytest.mark.parametrize("seed", range(5))
def test_numba_kernel_equals_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    problem = _random_problem(rng)
    # objects: a few random boxes per frame
    objects = rng.uniform(0, 1, (40, 2))
    objects = np.concatenate([objects - 0.03, objects + 0.03], axis=1)
    object_id = np.arange(40)
    object_frame = rng.integers(0, 30, 40)
    kw = dict(aspect=1.3, cone_half_angle_deg=20.0, camera_max_angle_deg=12.0, min_conf=0.2)
    if seed % 2:  # half the cases with the evidence rules on
        kw.update(max_miss=2.0, own_hands_min_pitch_deg=10.0)
    fast = assign_gaze_targets(*problem, objects, object_id, object_frame, use_numba=True, **kw)
    slow = assign_gaze_targets(*problem, objects, object_id, object_frame, use_numba=False, **kw)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert np.allclose(fast[2], slow[2], equal_nan=True, atol=1e-6)
    codes = set(fast[0].tolist())
    assert {GAZE_PERSON, GAZE_ELSEWHERE, GAZE_UNKNOWN} <= codes  # the random cases exercise the branches
    assert all(0 <= c < len(GAZE_TARGET_TYPES) for c in codes)

    frame, origin, direction, _, owner, heads, head_owner, head_frame, hands, hand_owner, hand_frame = problem
    pointing = rng.random(len(frame)) > 0.3
    fast = assign_point_targets(frame, origin, direction[:, :2], pointing, owner, heads, head_owner, head_frame,
                                hands, hand_owner, hand_frame, objects, object_id, object_frame, aspect=1.3, use_numba=True)
    slow = assign_point_targets(frame, origin, direction[:, :2], pointing, owner, heads, head_owner, head_frame,
                                hands, hand_owner, hand_frame, objects, object_id, object_frame, aspect=1.3, use_numba=False)
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])
    assert np.allclose(fast[2], slow[2], equal_nan=True, atol=1e-6)


def test_bad_input_raises():
    heads, head_owner, hands, hand_owner = _scene()
    with pytest.raises(ValueError, match="origin"):
        assign_gaze_targets([0, 1], [[0.3, 0.2]], [[1, 0, 0]] * 2, [1, 1], [0, 0], heads, head_owner, [0, 0], hands, hand_owner, [0, 0])
    with pytest.raises(ValueError, match="direction"):
        assign_gaze_targets([0], [[0.3, 0.2]], [[1, 0]], [1], [0], heads, head_owner, [0, 0], hands, hand_owner, [0, 0])
    with pytest.raises(ValueError, match="heads"):
        assign_gaze_targets([0], [[0.3, 0.2]], [[1, 0, 0]], [1], [0], heads, head_owner, [0], hands, hand_owner, [0, 0])


def test_a_hand_raised_beside_a_face_is_that_person():
    """tvhid_highfive_0018: B watched A's face while A's hand was up beside it, and the ray read "A's
    hands". A hand at a face is the person; one at chest height stays hands; one's own hand at one's own
    face is no target."""
    heads = np.array([[0.25, 0.10, 0.35, 0.30], [0.60, 0.10, 0.70, 0.30]])
    hands = np.array([[0.34, 0.24, 0.40, 0.34],   # A's hand beside A's chin
                      [0.30, 0.55, 0.36, 0.62]])  # A's other hand, low
    kw = dict(aspect=ASPECT, hands_at_face_margin=0.5, own_hands_min_pitch_deg=-90.0)

    def gaze(origin, target, self_id, depth=0.0):
        return assign_gaze_targets([0], [origin], [_toward(origin, target, depth=depth)], [0.9], [self_id], heads,
                                   [0, 1], [0, 0], hands, [0, 0], [0, 0], **kw)

    code, target, point = gaze((0.65, 0.15), (0.37, 0.33), self_id=1)  # passes below A's head box
    assert (code[0], target[0]) == (GAZE_PERSON, 0)
    assert hands[0, 0] <= point[0, 0] <= hands[0, 2]  # the ray lands on the raised hand
    code, target, _ = gaze((0.65, 0.20), (0.33, 0.585), self_id=1, depth=0.3)
    assert (code[0], target[0]) == (GAZE_HANDS, 0)
    # A's own ray through his raised hand: neither "his hands" nor himself
    code, target, _ = gaze((0.30, 0.20), (0.37, 0.30), self_id=0, depth=0.3)
    assert code[0] == GAZE_ELSEWHERE and target[0] == -1
    # the rule off: the raised hand is hands again
    kw["hands_at_face_margin"] = -1.0
    code, target, _ = gaze((0.65, 0.15), (0.37, 0.33), self_id=1)
    assert (code[0], target[0]) == (GAZE_HANDS, 0)


def test_hands_at_face_matches_each_hand_to_its_owners_head_in_its_frame():
    heads = np.array([[0.2, 0.2, 0.3, 0.4], [0.2, 0.2, 0.3, 0.4]])
    hands = np.array([[0.3, 0.3, 0.34, 0.34],        # owner 0, frame 0: just right of the head, inside 0.5 x
                      [0.3, 0.3, 0.34, 0.34],        # owner 1, frame 0: owner 1 has no head in frame 0
                      [0.5, 0.3, 0.54, 0.34],        # owner 0, frame 1: 2 head widths away
                      [np.nan, np.nan, np.nan, np.nan]])
    got = hands_at_face(hands, [0, 1, 0, 0], [0, 0, 1, 1], heads, [0, 0], [0, 1], 0.5)
    assert got.tolist() == [True, False, False, False]
    assert not hands_at_face(hands, [0, 1, 0, 0], [0, 0, 1, 1], heads, [0, 0], [0, 1], -1.0).any()


def test_a_lone_target_with_a_real_head_turn_is_kept():
    """At 2 fps a 0.8 s look into the camera is one sample between two others: kept when the gaze turned
    (>= min_turn_deg from every disagreeing neighbour), unknown when the head barely moved (a flicker)."""
    t = np.arange(3) * 0.5
    person, shot = np.zeros(3, int), np.zeros(3, int)
    code = np.array([GAZE_HANDS, GAZE_CAMERA, GAZE_HANDS])
    target = np.array([1, -1, 1])
    down, at_lens = _unit3(0.3, 0.8, 0.4), _unit3(0.1, 0.0, -1.0)
    slightly = _unit3(0.3, 0.7, 0.4)
    window = stability_window(t, 0.2)
    kept, _ = stable_targets(t, person, shot, code, target, window, direction=[down, at_lens, down], min_turn_deg=20.0)
    assert kept.tolist() == code.tolist()
    flicker, _ = stable_targets(t, person, shot, code, target, window, direction=[down, slightly, down], min_turn_deg=20.0)
    assert flicker[1] == GAZE_UNKNOWN
    # the rule off, or a neighbour without a direction: the vote alone decides
    off, _ = stable_targets(t, person, shot, code, target, window, direction=[down, at_lens, down], min_turn_deg=0.0)
    assert off[1] == GAZE_UNKNOWN
    nan = np.full(3, np.nan)
    blind, _ = stable_targets(t, person, shot, code, target, window, direction=[nan, at_lens, down], min_turn_deg=20.0)
    assert blind[1] == GAZE_UNKNOWN


def _head_only_case(distance_heads: float, code: int, back: bool = False, head_only: bool = True):
    """Looker (person 1) and a person (2) in one frame, heads 0.1 frame heights tall, the target's head
    ``distance_heads`` head sizes to the looker's right."""
    heads = np.array([[0.1, 0.4, 0.1 + 0.1 / ASPECT, 0.5], [0.0, 0.4, 0.1 / ASPECT, 0.5]], np.float32)
    heads[1, [0, 2]] += distance_heads * 0.1 / ASPECT + heads[0, 0]
    bodies = np.array([[h[0], h[1], h[2], h[1] + 0.5] for h in heads], np.float32)
    origin = np.array([[(heads[0, 0] + heads[0, 2]) / 2, 0.45]] * 2, np.float32)
    return head_only_targets(
        np.array([code, GAZE_ELSEWHERE]), np.array([2 if code in (GAZE_PERSON, GAZE_HANDS) else -1, -1]),
        np.array([head_only, head_only]), np.array([back, back]), origin, np.array([0, 0]), np.array([1, 2]),
        heads, bodies, aspect=ASPECT, max_heads=8.0)


def test_a_keypoint_gaze_names_only_a_near_person():
    code, ids = _head_only_case(4.0, GAZE_PERSON)
    assert (code[0], ids[0]) == (GAZE_PERSON, 2)
    code, ids = _head_only_case(12.0, GAZE_PERSON)  # a +-25 degree direction sweeps several people there
    assert (code[0], ids[0]) == (GAZE_UNKNOWN, -1)
    assert code[1] == GAZE_ELSEWHERE  # "hits nothing" stays for a face seen from the side or front


def test_a_keypoint_gaze_never_names_hands_or_the_camera_but_a_face_mesh_gaze_may():
    for target in (GAZE_HANDS, GAZE_CAMERA):
        code, ids = _head_only_case(2.0, target)
        assert (code[0], ids[0]) == (GAZE_UNKNOWN, -1)
        code, _ = _head_only_case(12.0, target, head_only=False)
        assert code[0] == target
    code, ids = _head_only_case(12.0, GAZE_PERSON, head_only=False)
    assert (code[0], ids[0]) == (GAZE_PERSON, 2)


def test_a_head_seen_from_behind_has_no_target():
    code, ids = _head_only_case(2.0, GAZE_PERSON, back=True)
    assert code.tolist() == [GAZE_UNKNOWN, GAZE_UNKNOWN] and ids.tolist() == [-1, -1]
