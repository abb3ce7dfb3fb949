"""Tracking + identity stitching on synthetic scenes with known identities.

People are drawn as a skin-coloured head over a shirt-coloured body on a noisy background; their
appearance descriptors are computed from the drawn frames, so the colour path is the real one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pytest

from detectors.observation import FrameObservations
from pipeline.config import Config
from tracking.appearance import DESCRIPTOR_SIZE, PART_SIZE, appearance_descriptors, appearance_distance, torso_boxes
from tracking.gaze_gaps import fill_gaze_gaps
from tracking.gaze_smoothing import smooth_gaze_directions
from tracking.stitching import (
    Tracklet, _clean_appearance, assign_person_ids, competitor_breaks, nearer_alternative, odd_rows, person_scales,
    plausible_motion,
)
from tracking.tracker import make_tracker, track_shot

FPS = 10.0
WIDTH, HEIGHT = 320, 180
SHIRTS = {
    "red": (200, 30, 30),
    "green": (30, 160, 40),
    "blue": (30, 60, 200),
    "yellow": (220, 200, 30),
}


@dataclass
class Person:
    name: str
    shirt: str
    path: Callable[[float], Optional[tuple[float, float]]]  # t -> box centre (normalised) or None = unseen
    size: tuple[float, float] = (0.12, 0.5)  # normalised width, height


def _render(t: float, people: list[Person], rng: np.random.Generator):
    image = rng.integers(90, 130, size=(HEIGHT, WIDTH, 3), dtype=np.uint8)
    boxes, names = [], []
    for person in people:
        centre = person.path(t)
        if centre is None:
            continue
        w, h = person.size
        box = np.array([centre[0] - w / 2, centre[1] - h / 2, centre[0] + w / 2, centre[1] + h / 2], np.float32)
        x1, y1, x2, y2 = (np.clip(box, 0, 1) * [WIDTH, HEIGHT, WIDTH, HEIGHT]).astype(int)
        head_bottom = y1 + (y2 - y1) // 5
        image[y1:head_bottom, x1 + (x2 - x1) // 4 : x2 - (x2 - x1) // 4] = (225, 180, 150)
        image[head_bottom:y2, x1:x2] = SHIRTS[person.shirt]
        boxes.append(np.clip(box, 0, 1))
        names.append(person.name)
    return image, boxes, names


def _scene(people: list[Person], duration: float, cut_at: Optional[float] = None, seed: int = 0, fps: float = FPS):
    """Observations, times, shot ids and the true name of every row."""
    rng = np.random.default_rng(seed)
    times = np.round(np.arange(0, duration, 1 / fps), 6)
    observations, truth = [], []
    for t in times:
        image, boxes, names = _render(t, people, rng)
        xyxy = np.array(boxes, np.float32).reshape(-1, 4)
        xyxy += rng.normal(0, 0.002, xyxy.shape).astype(np.float32)  # detector jitter
        observations.append(
            FrameObservations(
                xyxy=xyxy,
                confidence=np.full(len(xyxy), 0.85, np.float32),
                appearance=appearance_descriptors(image, xyxy),
            )
        )
        truth.append(names)
    shots = np.zeros(len(times), np.int32) if cut_at is None else (times >= cut_at).astype(np.int32)
    return observations, times, shots, truth


def _identities(result: list[FrameObservations], observations, truth) -> dict[str, set[int]]:
    """Person ids each true person received (rows matched back by box)."""
    ids: dict[str, set[int]] = {}
    for out, original, names in zip(result, observations, truth):
        for box, person_id in zip(out.xyxy, out.tracker_id):
            row = int(np.argmin(np.abs(original.xyxy - box).sum(axis=1)))
            ids.setdefault(names[row], set()).add(int(person_id))
    return ids


def _still(x: float, y: float = 0.5, visible=lambda t: True):
    return lambda t: (x, y) if visible(t) else None


def _walk(x0: float, speed: float, y: float = 0.5, visible=lambda t: True):
    return lambda t: (x0 + speed * t, y) if visible(t) else None


CONFIG = Config().replace(sampling={"fps": FPS})


def test_identity_survives_an_occlusion_longer_than_the_track_buffer() -> None:
    people = [
        Person("walker", "red", _walk(0.15, 0.08, visible=lambda t: not 1.0 <= t < 4.5)),  # hidden 3.5 s
        Person("stander", "blue", _still(0.85)),
    ]
    observations, times, shots, truth = _scene(people, 6.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    ids = _identities(result, observations, truth)
    assert ids == {"walker": {0}, "stander": {1}}
    assert sum(len(r) for r in result) == sum(len(o) for o in observations)


def test_crossing_people_keep_their_ids() -> None:
    people = [
        Person("left_to_right", "green", _walk(0.1, 0.2)),
        Person("right_to_left", "yellow", _walk(0.9, -0.2, y=0.55)),
    ]
    observations, times, shots, truth = _scene(people, 4.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"left_to_right": {0}, "right_to_left": {1}}


def test_crossing_with_occlusion_keeps_ids() -> None:
    # the nearer person hides the other one completely while they pass
    people = [
        Person("near", "red", _walk(0.1, 0.2), size=(0.16, 0.6)),
        Person("far", "blue", _walk(0.9, -0.2, visible=lambda t: not 1.6 <= t < 2.6)),
    ]
    observations, times, shots, truth = _scene(people, 4.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"near": {0}, "far": {1}}


def test_identity_is_restored_across_a_scene_cut() -> None:
    # after the cut the camera looks from the other side: the two swap sides and change size
    people = [
        Person("red", "red", lambda t: (0.25, 0.5) if t < 2.0 else (0.7, 0.55)),
        Person("blue", "blue", lambda t: (0.75, 0.5) if t < 2.0 else (0.3, 0.45)),
    ]
    observations, times, shots, truth = _scene(people, 4.0, cut_at=2.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"red": {0}, "blue": {1}}


def test_different_people_in_the_same_place_are_never_merged() -> None:
    # red leaves, and a second later green appears where red stood
    people = [
        Person("red", "red", _still(0.5, visible=lambda t: t < 2.0)),
        Person("green", "green", _still(0.5, visible=lambda t: t >= 3.0)),
    ]
    observations, times, shots, truth = _scene(people, 5.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"red": {0}, "green": {1}}


def test_leaving_and_coming_back_keeps_the_id_someone_else_gets_a_new_one() -> None:
    # red walks out at the right edge, comes back there 4 s later (far beyond any motion allowance);
    # meanwhile green arrives at the same edge: red keeps id 0, green gets its own
    people = [
        Person("red", "red", lambda t: (0.7 + 0.2 * t, 0.5) if t < 1.5 else ((0.98 - 0.1 * (t - 5.5), 0.5) if t >= 5.5 else None)),
        Person("green", "green", lambda t: (0.98 - 0.1 * (t - 2.5), 0.45) if 2.5 <= t < 4.5 else None),
    ]
    observations, times, shots, truth = _scene(people, 7.5)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"red": {0}, "green": {1}}


def test_same_shirt_but_impossible_jump_is_not_merged() -> None:
    people = [
        Person("first", "red", _still(0.1, visible=lambda t: t < 2.0)),
        Person("second", "red", _still(0.9, visible=lambda t: t >= 2.2)),
    ]
    observations, times, shots, truth = _scene(people, 4.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"first": {0}, "second": {1}}


def test_tracker_never_hands_a_track_to_someone_in_other_colours() -> None:
    # red and blue walk side by side and cross between two samples: by overlap alone the tracks swap
    red, blue = np.zeros(DESCRIPTOR_SIZE, np.float32), np.zeros(DESCRIPTOR_SIZE, np.float32)
    red[0], blue[30] = 1.0, 1.0
    before = FrameObservations(xyxy=[[0.40, 0.3, 0.52, 0.8], [0.50, 0.3, 0.62, 0.8]], confidence=[0.9, 0.9],
                               appearance=[red, blue])
    crossed = FrameObservations(xyxy=[[0.47, 0.3, 0.59, 0.8], [0.43, 0.3, 0.55, 0.8]], confidence=[0.9, 0.9],
                                appearance=[red, blue])
    colourless = [FrameObservations(xyxy=f.xyxy, confidence=f.confidence) for f in (before, crossed)]
    first, second = track_shot(colourless, CONFIG.tracking, 2.0)
    assert second[1] == first[0]  # overlap alone: blue takes red's track
    first, second = track_shot([before, crossed], CONFIG.tracking, 2.0)
    assert second[1] != first[0] and second[0] != first[1]


def test_same_shirt_seen_together_is_never_merged() -> None:
    people = [Person("a", "red", _still(0.3)), Person("b", "red", _still(0.7))]
    observations, times, shots, truth = _scene(people, 2.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert _identities(result, observations, truth) == {"a": {0}, "b": {1}}
    for frame in result:
        assert len(set(frame.tracker_id.tolist())) == len(frame)


def test_ids_are_zero_based_by_first_appearance_and_short_tracks_dropped() -> None:
    people = [
        Person("late", "yellow", _still(0.15, visible=lambda t: t >= 2.0)),
        Person("right", "blue", _still(0.8)),
        Person("left", "green", _still(0.45)),
        Person("blip", "red", _still(0.6, y=0.3, visible=lambda t: 1.0 <= t < 1.2)),  # 0.2 s < 0.3 s
    ]
    observations, times, shots, truth = _scene(people, 3.0)
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    ids = _identities(result, observations, truth)
    assert ids == {"left": {0}, "right": {1}, "late": {2}}


def test_small_walker_at_2_fps_is_one_person_a_lone_detection_none() -> None:
    """At 2 fps a small walker's boxes never overlap from one sampled frame to the next (0.06 per step,
    1.5 box widths): the tracker gives one-frame tracklets, stitched by colour and motion into one person
    followed for the gaps between them. A detection seen once is still no person."""
    fps = 2.0
    people = [
        Person("small", "red", _walk(0.1, 0.12, y=0.3), size=(0.04, 0.15)),
        Person("big", "blue", _still(0.7), size=(0.3, 0.9)),
        Person("blip", "yellow", _still(0.4, y=0.3, visible=lambda t: t == 1.0), size=(0.04, 0.15)),
    ]
    observations, times, shots, truth = _scene(people, 3.0, fps=fps)
    ids_per_frame = track_shot(observations, CONFIG.tracking, fps)
    small_rows = [ids[names.index("small")] for ids, names in zip(ids_per_frame, truth)]
    assert len(set(small_rows)) == len(small_rows)  # a new tracklet on every frame
    result = assign_person_ids(observations, times, shots, CONFIG.tracking, fps)
    assert _identities(result, observations, truth) == {"small": {0}, "big": {1}}


def test_a_track_taking_its_neighbours_box_in_other_colours_is_cut() -> None:
    """Two small people side by side at 2 fps (opencv_vtest's red jacket and black coat): the tracker
    follows box overlap onto the neighbour's box although the person in its own colours is in reach."""
    red, blue = np.zeros(DESCRIPTOR_SIZE, np.float32), np.zeros(DESCRIPTOR_SIZE, np.float32)
    red[:3], blue[1:4] = 1 / 3, 1 / 3  # overlapping histograms, still apart: Hellinger distance 0.58

    def frame(boxes, colours):
        return FrameObservations(xyxy=np.array(boxes, np.float32), confidence=np.full(len(boxes), 0.8, np.float32),
                                 appearance=np.stack(colours))

    first = frame([[0.48, 0.4, 0.52, 0.6], [0.55, 0.4, 0.59, 0.6]], [red, blue])
    swapped = frame([[0.44, 0.4, 0.48, 0.6], [0.50, 0.4, 0.54, 0.6]], [red, blue])
    rows, descriptors = [(0, 0), (1, 1)], np.stack([red, blue])
    assert competitor_breaks(rows, descriptors, [first, swapped], margin=0.1) == [1]
    # no cut when the person in the track's colours is out of reach, or nobody else is there
    far = frame([[0.10, 0.4, 0.14, 0.6], [0.50, 0.4, 0.54, 0.6]], [red, blue])
    assert competitor_breaks(rows, descriptors, [first, far], margin=0.1) == []
    assert competitor_breaks([(0, 0), (1, 0)], descriptors, [first, swapped[[1]]], margin=0.1) == []
    # nor when the track keeps its own colours
    assert competitor_breaks([(0, 0), (1, 0)], np.stack([red, red]), [first, swapped], margin=0.1) == []


def test_colours_are_unseen_only_where_another_box_covers_the_parts_they_are_read_from() -> None:
    """ultralytics' zidane.jpg: the pointing man's box runs along his outstretched arm over the man behind him;
    his own head, torso and legs regions stay clear of the other's box, so his colours count, while the man
    behind, whose torso the arm's box covers, has none (box against box, the first lost his colours too)."""
    from detectors.observation import LEFT_HIP, LEFT_SHOULDER, RIGHT_HIP, RIGHT_SHOULDER

    keypoints = np.full((2, 17, 3), np.nan, np.float32)
    keypoints[..., 2] = 0.0
    for person, (left, right) in enumerate([(0.22, 0.42), (0.66, 0.84)]):
        keypoints[person, [LEFT_SHOULDER, RIGHT_SHOULDER]] = [[left, 0.45, 0.9], [right, 0.45, 0.9]]
        keypoints[person, [LEFT_HIP, RIGHT_HIP]] = [[left + 0.02, 0.85, 0.9], [right - 0.02, 0.85, 0.9]]
    colours = np.full((2, DESCRIPTOR_SIZE), 1.0 / DESCRIPTOR_SIZE, np.float32)
    frame = FrameObservations(xyxy=np.array([[0.10, 0.28, 0.84, 0.99], [0.58, 0.05, 0.90, 0.99]], np.float32),
                              confidence=np.full(2, 0.9, np.float32), keypoints=keypoints, appearance=colours)
    assert _clean_appearance(frame, 0).sum() == pytest.approx(1.0)
    assert _clean_appearance(frame, 1).sum() == 0.0
    # side by side, boxes apart: both seen; one box over the other's torso: that one unseen
    apart = FrameObservations(xyxy=np.array([[0.10, 0.28, 0.50, 0.99], [0.58, 0.05, 0.90, 0.99]], np.float32),
                              confidence=np.full(2, 0.9, np.float32), keypoints=keypoints, appearance=colours)
    assert _clean_appearance(apart, 0).sum() == pytest.approx(1.0) and _clean_appearance(apart, 1).sum() == pytest.approx(1.0)


def test_low_sampling_rate_uses_track_buffer_in_seconds() -> None:
    config = CONFIG.replace(tracking={"track_buffer_seconds": 2.0})
    assert make_tracker(config.tracking, fps=2.0).max_frames_lost == 4
    assert make_tracker(config.tracking, fps=10.0).max_frames_lost == 20
    from ultralytics.trackers.bot_sort import BOTSORT

    botsort = make_tracker(config.replace(tracking={"tracker": "botsort"}).tracking, fps=2.0)
    assert isinstance(botsort, BOTSORT) and botsort.use_botsort_distance
    assert not make_tracker(config.tracking, fps=2.0).use_botsort_distance  # bytetrack: overlap + colour gate
    with pytest.raises(ValueError, match="unknown tracker"):
        make_tracker(config.replace(tracking={"tracker": "sort"}).tracking, fps=2.0)


@pytest.mark.parametrize("tracker", ["bytetrack", "botsort"])
def test_tracker_labels_every_row_from_the_first_frame(tracker: str) -> None:
    people = [Person("a", "red", _walk(0.2, 0.05)), Person("b", "blue", _still(0.7, visible=lambda t: t >= 0.5))]
    observations, times, _, _ = _scene(people, 2.0)
    config = CONFIG.replace(tracking={"tracker": tracker}).tracking
    ids = track_shot(observations, config, fps=FPS)
    assert all(len(i) == len(o) and (i >= 1).all() for i, o in zip(ids, observations))
    assert len({int(i[0]) for i in ids}) == 1  # "a" keeps one tracklet id
    assert ids[5].tolist()[1] not in {int(i[0]) for i in ids}  # "b" is born at 0.5 s with its own id


def test_bad_arguments_are_rejected() -> None:
    observations, times, shots, _ = _scene([Person("a", "red", _still(0.5))], 1.0)
    with pytest.raises(ValueError, match="times"):
        assign_person_ids(observations, times[:-1], shots, CONFIG.tracking, FPS)
    with pytest.raises(ValueError, match="increasing"):
        assign_person_ids(observations, times[::-1].copy(), shots, CONFIG.tracking, FPS)


def test_empty_and_personless_clips() -> None:
    assert assign_person_ids([], np.zeros(0), np.zeros(0, np.int32), CONFIG.tracking, FPS) == []
    nobody = [FrameObservations.empty() for _ in range(5)]
    result = assign_person_ids(nobody, np.arange(5) / FPS, np.zeros(5, np.int32), CONFIG.tracking, FPS)
    assert [len(r) for r in result] == [0] * 5


# --- appearance and motion gate ------------------------------------------------------------------


def test_appearance_descriptor_separates_shirt_colours() -> None:
    rng = np.random.default_rng(1)
    people = [Person(c, c, _still(x)) for c, x in zip(SHIRTS, (0.15, 0.38, 0.62, 0.85))]
    image, boxes, _ = _render(0.0, people, rng)
    descriptors = appearance_descriptors(image, np.array(boxes))
    assert descriptors.shape == (4, DESCRIPTOR_SIZE)
    np.testing.assert_allclose(descriptors.sum(axis=1), 1.0, rtol=1e-5)
    image2, boxes2, _ = _render(0.0, people, np.random.default_rng(2))
    distance = appearance_distance(descriptors, appearance_descriptors(image2, np.array(boxes2)))
    assert np.all(np.diag(distance) < 0.1)
    off_diagonal = distance[~np.eye(4, dtype=bool)]
    assert np.all(off_diagonal > 0.6)


def test_colours_are_compared_over_the_parts_both_sides_show() -> None:
    """The same person with and without the legs region (a close-up, a hip keypoint found in one frame only)
    has the same colours; other people stay apart; with every part on both sides the distance is the plain
    one of the whole descriptors."""
    rng = np.random.default_rng(1)
    people = [Person(c, c, _still(x)) for c, x in zip(SHIRTS, (0.15, 0.38, 0.62, 0.85))]
    image, boxes, _ = _render(0.0, people, rng)
    whole = appearance_descriptors(image, np.array(boxes))
    legless = whole.copy()
    legless[:, 2 * PART_SIZE:] = 0.0  # the legs part out of view: its share goes to the others
    legless /= legless.sum(axis=1, keepdims=True)
    distance = appearance_distance(whole, legless)
    assert np.all(np.diag(distance) < 1e-6)
    assert np.all(distance[~np.eye(4, dtype=bool)] > 0.6)
    units = np.sqrt(whole / whole.sum(axis=1, keepdims=True))
    plain = np.sqrt(np.clip(1.0 - units @ units.T, 0.0, 1.0))
    np.testing.assert_allclose(appearance_distance(whole, whole), plain, atol=1e-6)
    # another layout (not head / torso / legs) is compared whole
    assert appearance_distance(np.array([[1.0, 0.0]]), np.array([[0.5, 0.5]]))[0, 0] == pytest.approx(np.sqrt(1 - np.sqrt(0.5)))


def test_appearance_of_unseen_people_is_unknown() -> None:
    image = np.zeros((100, 100, 3), np.uint8)
    descriptors = appearance_descriptors(image, np.array([[0.5, 0.5, 0.51, 0.51], [1.2, 1.2, 1.5, 1.5]]))
    assert not descriptors.any()
    assert np.isnan(appearance_distance(descriptors, descriptors)).all()
    assert appearance_descriptors(image, np.zeros((0, 4))).shape == (0, DESCRIPTOR_SIZE)


def test_torso_comes_from_shoulders_and_hips_when_visible() -> None:
    keypoints = np.zeros((1, 17, 3), np.float32)
    keypoints[0, [5, 6, 11, 12]] = [[0.6, 0.3, 0.9], [0.4, 0.3, 0.9], [0.58, 0.7, 0.9], [0.42, 0.7, 0.9]]
    torso = torso_boxes(np.array([[0.2, 0.1, 0.8, 0.9]]), keypoints)[0]
    # between the shoulder points less a tenth of their span (0.42-0.58), widened to 0.3 of the box (0.18)
    np.testing.assert_allclose(torso, [0.41, 0.34, 0.59, 0.7], atol=1e-6)
    no_pose = torso_boxes(np.array([[0.2, 0.1, 0.8, 0.9]]), np.zeros((1, 17, 3), np.float32))[0]
    np.testing.assert_allclose(no_pose, [0.32, 0.26, 0.68, 0.58], atol=1e-6)


def test_a_head_close_up_with_the_shoulders_on_the_bottom_edge_has_no_torso_colours() -> None:
    """A close-up of a head: the pose model puts the shoulders on the frame's bottom edge (at or below the
    box's bottom). The torso is out of view, so the person has no colours at all; the box band below the
    head would read the head and the wall behind it as the clothes."""
    image = np.zeros((200, 200, 3), np.uint8)
    image[:, :, 1] = 180  # a green wall...
    image[20:170, 60:150] = (120, 80, 60)  # ...and a head filling the box's band
    box = np.array([[0.2, 0.0, 0.9, 0.98]])
    keypoints = np.zeros((1, 17, 3), np.float32)
    keypoints[0, [5, 6]] = [[0.7, 1.0, 0.7], [0.3, 0.98, 0.6]]
    torso = torso_boxes(box, keypoints)[0]
    assert torso[2] - torso[0] == 0 and torso[3] - torso[1] == 0
    assert not appearance_descriptors(image, box, keypoints).any()
    # the shoulders a little above the edge: the strip below them is the torso, read as usual
    keypoints[0, [5, 6]] = [[0.7, 0.85, 0.7], [0.3, 0.85, 0.6]]
    torso = torso_boxes(box, keypoints)[0]
    assert torso[1] > 0.85 and torso[3] == np.float32(0.98)
    assert appearance_descriptors(image, box, keypoints).any()


def test_a_side_view_torso_is_a_body_not_the_gap_between_overlapping_shoulders() -> None:
    """Shoulders 0.01 apart (seen side-on), hips not seen: the torso is 0.3 of the box wide around them and
    0.3 of its height long (not 1.2 shoulder widths), and a few-pixel strip below it barely counts as legs."""
    keypoints = np.zeros((1, 17, 3), np.float32)
    keypoints[0, [5, 6]] = [[0.505, 0.3, 0.9], [0.495, 0.3, 0.9]]
    box = np.array([[0.4, 0.1, 0.6, 0.9]])
    torso = torso_boxes(box, keypoints)[0]
    np.testing.assert_allclose(torso, [0.47, 0.324, 0.53, 0.54], atol=1e-6)
    red = np.zeros((200, 200, 3), np.uint8)
    red[:, :, 0] = 200
    strip = red.copy()
    strip[172:180, :, 2] = 200  # an 8-px magenta strip between the hips (0.86) and the box's bottom (0.9)
    hips = np.zeros((1, 17, 3), np.float32)
    hips[0, [5, 6, 11, 12]] = [[0.55, 0.3, 0.9], [0.45, 0.3, 0.9], [0.55, 0.86, 0.9], [0.45, 0.86, 0.9]]
    moved = appearance_distance(appearance_descriptors(red, box, hips), appearance_descriptors(strip, box, hips))[0, 0]
    assert 0.0 < float(moved) < 0.4  # 0.32; counted in full (0.4 of the descriptor) the strip moved it 0.63


def test_a_person_whose_parts_all_count_for_nothing_is_not_seen() -> None:
    """A person about 10 px wide: the torso band rounds to a 6-px crop (a histogram) but counts for nothing
    (_part_share), and so do head and legs. The descriptor is all zero (not seen), never 0 / 0 = NaN, which
    would poison every pooled colour it joined."""
    image = np.random.RandomState(0).randint(0, 255, (100, 100, 3), np.uint8)
    for width in (0.096, 0.1):
        descriptor = appearance_descriptors(image, np.array([[0.1, 0.1, 0.1 + width, 0.3]], np.float32))
        assert np.isfinite(descriptor).all() and not descriptor.any()
    # a person large enough keeps a descriptor summing to 1
    assert appearance_descriptors(image, np.array([[0.1, 0.1, 0.5, 0.9]], np.float32)).sum() == pytest.approx(1.0)


def _tracklet(times, centres, width=0.1):
    times = np.asarray(times, float)
    centres = np.asarray(centres, float)
    boxes = np.concatenate([centres - [width / 2, 0.2], centres + [width / 2, 0.2]], axis=1)
    return Tracklet(0, np.arange(len(times)), times, boxes, np.zeros(DESCRIPTOR_SIZE))


def test_motion_gate_extrapolates_velocity_over_the_gap() -> None:
    config = Config().tracking
    moving = _tracklet([0.0, 0.5, 1.0], [[0.1, 0.5], [0.2, 0.5], [0.3, 0.5]])  # 0.2 / s to the right
    ahead = _tracklet([2.0, 2.5], [[0.5, 0.5], [0.6, 0.5]])
    behind = _tracklet([2.0, 2.5], [[0.9, 0.5], [0.9, 0.5]])
    assert plausible_motion(moving, ahead, config)
    assert not plausible_motion(moving, behind, config)


def test_a_box_cut_short_keeps_its_persons_size_from_the_head() -> None:
    """tvhid_highfive_0018's background woman walks right behind a nearer man who hides more of her: her box
    shrinks 1.5x in 0.5 s while her head stays the size it was. Her size is read from her head, so neither the
    size gate nor the motion allowance (in person heights per second) takes her for someone else; a person whose
    head is half the size is still someone else."""
    config = Config().tracking

    def seen(t, x, box_height, head_height):
        box = np.array([[x - 0.04, 0.3, x + 0.04, 0.3 + box_height]])
        head = np.array([[x - 0.02, 0.3, x + 0.02, 0.3 + head_height]])
        return Tracklet(0, np.array([int(t * 2)]), np.array([t]), box, np.zeros(DESCRIPTOR_SIZE),
                        scales=person_scales(box, head))

    before = seen(2.0, 0.03, 0.171, 0.075)
    hidden_more = seen(2.52, 0.155, 0.113, 0.07)
    assert plausible_motion(before, hidden_more, config)
    # without heads (the box heights alone) the same sightings are two people
    assert not plausible_motion(Tracklet(0, before.frames, before.times, before.boxes, before.appearance_sum),
                                Tracklet(0, hidden_more.frames, hidden_more.times, hidden_more.boxes,
                                         hidden_more.appearance_sum), config)
    assert not plausible_motion(before, seen(2.52, 0.155, 0.113, 0.035), config)  # a head half the size
    # a whole body is its box; an unseen head leaves the box height
    np.testing.assert_allclose(person_scales(np.array([[0, 0.1, 0.1, 0.8]]), np.array([[0, 0.1, 0.05, 0.18]])), [0.7])
    np.testing.assert_allclose(person_scales(np.array([[0, 0.1, 0.1, 0.3]]), np.full((1, 4), np.nan)), [0.2])


def test_motion_alone_does_not_join_when_someone_else_was_seen_nearer_in_between() -> None:
    """opencv_vtest 62.5 s: a colourless sighting (behind another man) lies 0.18 from where a man left
    1 s before, but another person's track was 0.04 from it half a second before: ambiguous, no join."""
    left = _tracklet([61.5], [[0.98, 0.50]], width=0.04)
    seen = _tracklet([62.5], [[0.80, 0.51]], width=0.05)
    other = _tracklet([61.5, 62.0], [[0.77, 0.57], [0.78, 0.55]], width=0.05)
    for t in (left, other, seen):
        t.frames = np.array([int(round(x * 2)) for x in t.times])  # sampled-frame indices at 2 fps
    assert nearer_alternative(left, seen, [other], ratio=1.5)
    # nobody near, someone seen only after, or someone seen beside the sighting (an occluder): no veto
    far = _tracklet([61.5, 62.0], [[0.2, 0.5], [0.21, 0.5]])
    later = _tracklet([63.0], [[0.80, 0.51]])
    beside = _tracklet([62.0, 62.5], [[0.79, 0.52], [0.80, 0.52]])
    for t in (far, later, beside):
        t.frames = np.array([int(round(x * 2)) for x in t.times])
    assert not nearer_alternative(left, seen, [far], ratio=1.5)
    assert not nearer_alternative(left, seen, [later], ratio=1.5)
    assert not nearer_alternative(left, seen, [beside], ratio=1.5)
    # ... and the join itself: stitching keeps the colourless sighting away from the man who left
    from dataclasses import replace

    from tracking.stitching import stitch_tracklets

    other.appearance_sum = np.ones(DESCRIPTOR_SIZE)  # seen in colours, which the sighting has none of
    config = Config().tracking
    def together(groups):
        return any(any(t is left for t in g) and any(t is seen for t in g) for g in groups)

    assert not together(stitch_tracklets([left, seen, other], config))
    assert together(stitch_tracklets([left, seen, other], replace(config, stitch_unseen_ambiguity=0.0)))


def test_a_person_seen_beside_both_ends_is_no_alternative_for_a_motion_join() -> None:
    """yakhyo_classroom_group 1.5 -> 2.5 s: the curly-haired boy (colourless at the right edge) is last seen
    at 1.5 s and his body again at 2.5 s; the glasses boy's tracklet ends at 2.0 s between them, but his
    next tracklet is seen at 2.5 s, and he was seen at 1.5 s: he is neither sighting. Someone seen beside
    the later sighting only may still be the earlier one (opencv_vtest 13.5 -> 14.5 s: the striped man
    entering at the edge, then the woman in black leaving there while he walks on)."""
    def at(tracklet):
        tracklet.frames = np.array([int(round(x * 2)) for x in tracklet.times])
        return tracklet

    boy = at(_tracklet([1.0, 1.5], [[0.93, 0.50], [0.97, 0.50]], width=0.06))
    body = at(_tracklet([2.5], [[0.90, 0.36]], width=0.2))
    glasses = at(_tracklet([1.0, 1.5, 2.0], [[0.82, 0.62], [0.85, 0.62], [0.86, 0.62]], width=0.27))
    glasses_later = at(_tracklet([2.5, 3.0], [[0.88, 0.65], [0.89, 0.68]], width=0.24))
    assert nearer_alternative(boy, body, [glasses, glasses_later], ratio=1.5)  # tracklets alone: ambiguous
    person = set(glasses.frames.tolist()) | set(glasses_later.frames.tolist())
    frames = {id(glasses): person, id(glasses_later): person}
    assert not nearer_alternative(boy, body, [glasses, glasses_later], 1.5, frames)
    # seen beside the later sighting only: could be the earlier one
    person = set(glasses.frames.tolist()[-1:]) | set(glasses_later.frames.tolist())
    assert nearer_alternative(boy, body, [glasses, glasses_later], 1.5, {id(glasses): person, id(glasses_later): person})


def test_colours_a_pose_moved_join_where_the_tracker_would_have_followed_and_nobody_else_is_in_reach() -> None:
    """tvhid_highfive_0005: the woman cut by the right edge, hair and arm swinging, is missed for a sample;
    her two tracklets' colours are 0.49 apart (stitch_appearance_max 0.35), their boxes overlap (IoU 0.81).
    The tracker, had it seen her, would have followed her (overlap, colours within its 0.55 gate); so
    does stitching, unless someone else was seen in reach."""
    from dataclasses import replace

    from tracking.appearance import appearance_distance
    from tracking.stitching import stitch_tracklets, tracker_would_follow

    def colours(p):
        d = np.zeros(DESCRIPTOR_SIZE)
        d[:2] = [p, 1 - p]
        return d

    def at(tracklet, appearance):
        tracklet.frames = np.array([int(round(x * 2)) for x in tracklet.times])
        tracklet.appearance_sum = appearance
        return tracklet

    config = Config().tracking
    before = at(_tracklet([0.0, 0.5, 1.0], [[0.94, 0.54], [0.95, 0.54], [0.95, 0.52]]), colours(1.0))
    after = at(_tracklet([2.0, 2.5], [[0.95, 0.57], [0.96, 0.56]]), colours(0.5625))
    distance = float(appearance_distance(before.appearance_sum, after.appearance_sum)[0, 0])
    assert abs(distance - 0.5) < 1e-6
    assert tracker_would_follow(before, after, distance, config)
    assert len(stitch_tracklets([before, after], config)) == 1
    assert len(stitch_tracklets([before, after], replace(config, track_appearance_gate=0.4))) == 2
    # colours beyond the tracker's gate, boxes apart, or a gap the tracker does not bridge: no
    assert not tracker_would_follow(before, after, 0.6, config)
    moved = at(_tracklet([2.0, 2.5], [[0.70, 0.57], [0.71, 0.56]]), colours(0.5625))
    assert not tracker_would_follow(before, moved, distance, config)
    late = at(_tracklet([2.5, 3.0], [[0.95, 0.57], [0.96, 0.56]]), colours(0.5625))
    assert not tracker_would_follow(before, late, distance, config)
    # someone else seen in reach in between (not beside the later tracklet): colours and place do not decide
    passer = at(_tracklet([1.5], [[0.90, 0.55]]), colours(0.0))
    groups = stitch_tracklets([before, after, passer], config)
    assert not any(any(t is before for t in g) and any(t is after for t in g) for g in groups)


def test_motion_alone_does_not_join_a_colourless_box_suddenly_much_wider() -> None:
    """opencv_vtest 51.0 -> 51.5 s: the woman's own box (0.054 wide), then a colourless box around her
    and the red-jacket man (0.104)."""
    from dataclasses import replace

    from tracking.stitching import stitch_tracklets, unseen_widening

    config = Config().tracking
    woman = _tracklet([50.5, 51.0], [[0.90, 0.88], [0.87, 0.88]], width=0.054)
    woman.appearance_sum = np.ones(DESCRIPTOR_SIZE)
    pair = _tracklet([51.5], [[0.80, 0.88]], width=0.104)
    pair.frames = np.array([2])
    assert unseen_widening(woman, pair, config)
    assert len(stitch_tracklets([woman, pair], config)) == 2
    assert len(stitch_tracklets([woman, pair], replace(config, stitch_unseen_max_widening=10.0))) == 1
    # not when the wide box has colours (then colours decide), nor when it is only a little wider
    seen_pair = _tracklet([51.5], [[0.80, 0.88]], width=0.104)
    seen_pair.appearance_sum = np.ones(DESCRIPTOR_SIZE)
    assert not unseen_widening(woman, seen_pair, config)
    assert not unseen_widening(woman, _tracklet([51.5], [[0.80, 0.88]], width=0.07), config)
    # nor at the left or right frame edge, where people entering or leaving are cut by it
    entering = _tracklet([50.5], [[0.99, 0.88]], width=0.03)
    assert not unseen_widening(entering, pair, config)


def test_motion_alone_does_not_join_against_the_persons_own_motion_when_another_box_fits_it() -> None:
    """opencv_vtest 16.0-17.5 s at 2 fps: a man walking right and one walking left cross with overlapping
    boxes (no colours), each a chain of one-frame tracklets. "Stood still" joined the right-walker's 16.5 s
    box to the left-walker's 17.0 s box (0.014 away) while his own 17.0 s box fitted his motion (0.001 off)."""
    from dataclasses import replace

    from tracking.motion_rivals import motion_rival
    from tracking.stitching import stitch_tracklets

    def one(t, x, width=0.04):
        box = np.array([[x - width / 2, 0.37, x + width / 2, 0.52]])
        return Tracklet(0, np.array([int(round(t * 2))]), np.array([t]), box, np.zeros(DESCRIPTOR_SIZE))

    times = [16.0, 16.5, 17.0, 17.5]
    right = [one(t, x) for t, x in zip(times, [0.586, 0.600, 0.615, 0.627])]
    left = [one(t, x) for t, x in zip(times, [0.679, 0.630, 0.586, 0.536])]

    def mixed(groups):
        return any(any(t is r for t in g for r in right) and any(t is l for t in g for l in left) for g in groups)

    config = Config().tracking
    assert not mixed(stitch_tracklets(right + left, config))
    # without this rule the nearer-alternative test now keeps them apart too: the right-walker's own 17.0 s box,
    # seen beside hers, stands nearer to where he was heading (stitching._better_continuation)
    assert not mixed(stitch_tracklets(right + left, replace(config, stitch_motion_rival_margin=0.0)))
    # the rule itself: the right-walker's velocity (16.0 -> 16.5) puts him at his own 17.0 s box, not hers
    assert motion_rival(right[:2], [left[2]], right[1], left[2], [right[2], left[1]], 0.5)
    # one sighting has no velocity; a join that follows the motion has no rival; nobody else, no rival
    assert not motion_rival([right[1]], [left[2]], right[1], left[2], [right[2], left[1]], 0.5)
    assert not motion_rival(right[:2], [right[2]], right[1], right[2], [left[2], left[1]], 0.5)
    assert not motion_rival(right[:2], [left[2]], right[1], left[2], [], 0.5)


def test_a_walker_never_turns_up_behind_where_he_was_walking() -> None:
    """opencv_vtest 10.0-20.5 s at 2 fps: a man in a black coat walks right (x 0.47 -> 0.85 by 13.5 s) and
    out of the frame unseen; at 15.5 s a man in a leather jacket steps out from behind a sign at x 0.61, also
    walking right. Their dark clothes pool to near colours, and "stood still" (0.24 in 2 s) passed the
    motion gate: one id for both. Both walk right at about two box widths a second, so the second man is
    behind the first: a join needs two turns within the gap."""
    from tracking.motion_rivals import walked_back
    from tracking.stitching import stitch_tracklets

    def walker(times, xs, width=0.045):
        boxes = np.array([[x - width / 2, 0.37, x + width / 2, 0.52] for x in xs])
        colours = np.full(DESCRIPTOR_SIZE, 1.0 / DESCRIPTOR_SIZE) * len(times)  # the same dark clothes
        return Tracklet(0, np.round(np.asarray(times) * 2).astype(int), np.asarray(times, float), boxes, colours)

    config = Config().tracking
    coat = walker([12.0, 12.5, 13.0, 13.5], [0.682, 0.736, 0.799, 0.847])
    jacket = walker([15.5, 16.0, 16.5, 17.0], [0.605, 0.640, 0.664, 0.693])
    assert plausible_motion(coat, jacket, config)  # the motion gate alone lets it through
    assert walked_back([coat], [jacket], coat, jacket, config.stitch_motion_slack)
    assert len(stitch_tracklets([coat, jacket], config)) == 2
    # ahead of him along his way, the same man
    on = walker([15.5, 16.0, 16.5, 17.0], [1.02, 1.07, 1.12, 1.17])
    assert not walked_back([coat], [on], coat, on, config.stitch_motion_slack)
    # people turning round (the later one walks the other way) or standing are not judged by it
    back = walker([15.5, 16.0, 16.5, 17.0], [0.693, 0.664, 0.640, 0.605])
    assert not walked_back([coat], [back], coat, back, config.stitch_motion_slack)
    standing = walker([15.5, 16.0, 16.5, 17.0], [0.605, 0.607, 0.604, 0.606])
    assert not walked_back([coat], [standing], coat, standing, config.stitch_motion_slack)
    # one sighting says nothing about where anyone was going
    assert not walked_back([coat], [walker([15.5], [0.605])], coat, walker([15.5], [0.605]), config.stitch_motion_slack)


def test_a_sighting_without_a_head_is_sized_by_its_box_beside_one_sized_by_its_head() -> None:
    """tvhid_highfive_0018 at 5 fps: the background woman behind the near man, her box cut short (0.14-0.18 of
    the frame), is sized from her head (7.5 head heights, 0.39) at 1.2 s and has no head box at 1.8 s (0.175, her
    box). Two people of such sizes would not be one; measured alike (the boxes) they are. Where both sightings
    show a head, the sizes read from the heads decide as before."""
    config = Config().tracking

    def seen(t, box_height, head_height):
        box = np.array([[0.0, 0.33, 0.05, 0.33 + box_height]])
        head = np.array([[0.0, 0.33, 0.03, 0.33 + head_height]])
        return Tracklet(0, np.array([int(round(t * 5))]), np.array([t]), box, np.zeros(DESCRIPTOR_SIZE),
                        scales=person_scales(box, head), heads_seen=np.isfinite(head).all(axis=1))

    with_head, headless = seen(1.2, 0.144, 0.0515), seen(1.8, 0.175, np.nan)
    assert with_head.scale(0) > config.stitch_max_size_ratio * headless.scale(0)
    assert plausible_motion(with_head, headless, config)
    # both with heads, one head less than half the other's: two people, whatever their boxes
    assert not plausible_motion(with_head, seen(1.8, 0.175, 0.02), config)
    # without a head the boxes must still agree
    assert not plausible_motion(with_head, seen(1.8, 0.06, np.nan), config)


def test_someone_seen_at_the_edge_on_consecutive_samples_never_left_the_picture() -> None:
    """The same woman at 5 fps, cut by the left edge: walking out through it until 1.8 s, coming back in from
    2.0 s, no colours of her own (behind the near man). On consecutive samples she was in the picture
    throughout, so the rule for a leaver and a newcomer (a re-entry's colours) does not apply; with a sample
    between them where nobody was seen it does."""
    from tracking.motion_rivals import out_of_view_and_back
    from tracking.stitching import split_against_motion, stitch_tracklets, unseen_between

    config = Config().tracking

    def one(t, x):
        box = np.array([[max(x - 0.03, 0.0), 0.33, x + 0.03, 0.5]])
        return Tracklet(0, np.array([int(round(t * 5))]), np.array([t]), box, np.zeros(DESCRIPTOR_SIZE))

    leaving = [one(t, x) for t, x in zip([1.2, 1.4, 1.6, 1.8], [0.1, 0.07, 0.045, 0.02])]
    arriving = [one(t, x) for t, x in zip([2.0, 2.2, 2.4, 2.6], [0.02, 0.05, 0.08, 0.11])]
    assert out_of_view_and_back(leaving, arriving, leaving[-1], arriving[0], config.frame_edge_margin)
    assert not unseen_between(leaving[-1], arriving[0])
    assert len(stitch_tracklets(leaving + arriving, config)) == 1
    assert len(split_against_motion(leaving + arriving, config)) == 1
    # a sample in between where she was not seen: she may have left, and someone else come in
    later = [one(t, x) for t, x in zip([2.2, 2.4, 2.6, 2.8], [0.02, 0.05, 0.08, 0.11])]
    assert unseen_between(leaving[-1], later[0])
    assert len(stitch_tracklets(leaving + later, config)) == 2
    assert len(split_against_motion(leaving + later, config)) == 2


def test_walking_out_of_the_picture_and_someone_walking_in_is_a_reentry() -> None:
    """opencv_vtest 20.5 -> 22.0 s at 2 fps: a man in a leather jacket walks out at the right edge; 1.5 s
    later a man in a black coat walks in there, walking left. Both are chains of one-frame tracklets in dark
    clothes (near colours), and the greedy order joined the lone 20.5 s sighting (no velocity yet) to the
    newcomer. Out of view nothing followed him: only a re-entry's close colours may join them, and the check
    is made again on the whole stitched person."""
    from tracking.motion_rivals import out_of_view_and_back
    from tracking.stitching import split_against_motion, stitch_tracklets

    def one(t, x, width=0.05, colours=None):
        box = np.array([[x - width / 2, 0.42, min(x + width / 2, 1.0), 0.6]])
        seen = np.full(DESCRIPTOR_SIZE, 1.0 / DESCRIPTOR_SIZE) if colours is None else colours
        return Tracklet(0, np.array([int(round(t * 2))]), np.array([t]), box, seen.copy())

    config = Config().tracking
    jacket = np.full(DESCRIPTOR_SIZE, 1.0 / DESCRIPTOR_SIZE)
    coat = jacket * 0.8
    coat[0] += 0.2
    distance = float(appearance_distance(jacket[None], coat[None])[0, 0])
    assert config.stitch_reentry_appearance_max < distance < config.stitch_appearance_max  # 0.28, as measured
    leaving = [one(t, x, colours=jacket) for t, x in zip([19.5, 20.0, 20.5], [0.909, 0.942, 0.975])]
    arriving = [one(t, x, colours=coat) for t, x in zip([22.0, 22.5, 23.0, 23.5], [0.983, 0.935, 0.893, 0.849])]
    assert out_of_view_and_back(leaving, arriving, leaving[-1], arriving[0], config.frame_edge_margin)
    people = stitch_tracklets(leaving + arriving, config)
    assert sorted(len(p) for p in people) == [3, 4]
    # the audit alone: one stitched person who walked out and someone who walked in is cut there
    assert [len(p) for p in split_against_motion(leaving + arriving, config)] == [3, 4]
    # walking on inside the picture, or standing at the edge, is no exit
    staying = [one(t, x, colours=coat) for t, x in zip([22.0, 22.5, 23.0, 23.5], [0.975, 0.976, 0.974, 0.975])]
    assert not out_of_view_and_back(leaving, staying, leaving[-1], staying[0], config.frame_edge_margin)
    inside = [one(t, x, colours=jacket) for t, x in zip([18.0, 18.5, 19.0], [0.80, 0.84, 0.88])]
    # the same colours (a re-entry's) still join him back
    assert len(stitch_tracklets(leaving + [one(t, x, colours=jacket) for t, x in
                                           zip([22.0, 22.5, 23.0, 23.5], [0.983, 0.935, 0.893, 0.849])], config)) == 1
    assert not out_of_view_and_back(inside, arriving, inside[-1], arriving[0], config.frame_edge_margin)


def test_a_single_sample_in_someone_elses_colours_is_taken_out_of_a_track() -> None:
    """opencv_vtest 50.5 s: the black-coat man's track took the jeans man's box for one sample."""
    coat, jeans = np.zeros(DESCRIPTOR_SIZE, np.float32), np.zeros(DESCRIPTOR_SIZE, np.float32)
    coat[:3], jeans[2:5] = 1 / 3, 1 / 3  # Hellinger distance 0.67
    track = np.stack([coat, coat, jeans, coat, np.zeros(DESCRIPTOR_SIZE, np.float32), coat])
    assert odd_rows(track, 0.4) == [2]
    assert odd_rows(track, 0.0) == []  # off
    assert odd_rows(track[:3], 0.4) == []  # too few other rows to judge
    # two people's stretches (a quarter or more of the rows each) are not stray samples
    assert odd_rows(np.stack([coat, coat, coat, jeans, jeans, jeans]), 0.4) == []
    # unseen rows are never odd; a steady track has none
    assert odd_rows(np.stack([coat] * 5), 0.4) == []
    # it is dropped only when another track seen within a second has colours closer to it than its own:
    # a large person whose colours change as he turns keeps his odd sample
    from tracking.stitching import _closer_elsewhere

    times = np.arange(10) * 0.5
    rows = [(k, 0) for k in range(6)]
    jeans_track = (0, [(2, 1), (3, 1)], np.stack([jeans, jeans]))
    pieces = [(0, rows, track), jeans_track]
    assert _closer_elsewhere(2, 0, rows, track, pieces, times, 1.0)
    assert not _closer_elsewhere(2, 0, rows, track, [(0, rows, track)], times, 1.0)  # nobody else
    later = (0, [(9, 1)], np.stack([jeans]))  # seen 3.5 s later
    assert not _closer_elsewhere(2, 0, rows, track, [(0, rows, track), later], times, 1.0)
    other_shot = (1, [(2, 1)], np.stack([jeans]))
    assert not _closer_elsewhere(2, 0, rows, track, [(0, rows, track), other_shot], times, 1.0)


# --- gaze gap filling ----------------------------------------------------------------------------


def _gaze_track(measured: list[bool], shots=None, fps: float = 10.0):
    """One person in every frame, gaze measured where ``measured`` is True, turning steadily right."""
    observations = []
    for k, has_gaze in enumerate(measured):
        angle = 0.1 * k
        frame = FrameObservations(
            xyxy=[[0.4, 0.2, 0.6, 0.9]],
            confidence=[0.9],
            head_xyxy=[[0.45 + 0.01 * k, 0.2, 0.55 + 0.01 * k, 0.3]],
            tracker_id=[0],
        )
        if has_gaze:
            frame.gaze_dir[0] = [np.sin(angle), 0.0, np.cos(angle)]
            frame.gaze_origin[0] = [0.5 + 0.01 * k, 0.25]
            frame.gaze_conf[0] = 0.8
            frame.gaze_source[0] = "face_mesh"
        observations.append(frame)
    times = np.arange(len(measured)) / fps
    shots = np.zeros(len(measured), np.int32) if shots is None else np.asarray(shots, np.int32)
    return observations, times, shots


def test_short_gaze_gaps_are_interpolated() -> None:
    measured = [True] * 3 + [False] * 3 + [True] * 3  # 0.3 s gap at 10 fps
    observations, times, shots = _gaze_track(measured)
    filled = fill_gaze_gaps(observations, times, shots, Config().gaze)
    assert [bool(f[0]) for f in filled] == [not m for m in measured]
    for k in range(3, 6):
        frame = observations[k]
        np.testing.assert_allclose(frame.gaze_dir[0], [np.sin(0.1 * k), 0, np.cos(0.1 * k)], atol=2e-3)
        np.testing.assert_allclose(frame.gaze_origin[0], [0.5 + 0.01 * k, 0.25], atol=1e-6)
        assert frame.gaze_conf[0] == pytest.approx(0.8) and frame.gaze_source[0] == "face_mesh"


def test_the_eye_cue_directions_are_filled_and_smoothed_with_the_gaze() -> None:
    """A face whose eyes are too small to read keeps a second direction (the eyes read however small,
    gaze_eye_dir): gaps fill it and smoothing averages it as they do the gaze; without one it stays NaN."""
    measured = [True] * 3 + [False] * 3 + [True] * 3
    observations, times, shots = _gaze_track(measured)
    down = np.array([0.0, 0.5, np.sqrt(0.75)])
    for k, frame in enumerate(observations):
        if measured[k] and k != 8:  # the last frame has no eye-cue direction
            frame.gaze_eye_dir[0] = down
    fill_gaze_gaps(observations, times, shots, Config().gaze)
    np.testing.assert_allclose(observations[4].gaze_eye_dir[0], down, atol=1e-6)  # both ends: interpolated
    assert not np.isfinite(observations[8].gaze_eye_dir[0]).any()
    observations[1].gaze_eye_dir[0] = [0.0, -0.5, np.sqrt(0.75)]  # up instead of down: averaged away
    smooth_gaze_directions(observations, times, shots, half_window_s=0.1)
    assert observations[1].gaze_eye_dir[0][1] == pytest.approx(0.5 / np.sqrt(7.0), abs=1e-3)  # (down + up + down) / 3, normalised
    assert not np.isfinite(observations[8].gaze_eye_dir[0]).any()


def test_medium_gaze_gaps_carry_forward_with_decaying_confidence() -> None:
    measured = [True] * 2 + [False] * 7 + [True]  # 0.7 s gap: carried, not interpolated
    observations, times, shots = _gaze_track(measured)
    filled = fill_gaze_gaps(observations, times, shots, Config().gaze)
    assert all(f[0] for f in filled[2:9])
    confidences = [float(observations[k].gaze_conf[0]) for k in range(2, 9)]
    assert all(0 < c < 0.8 for c in confidences) and np.all(np.diff(confidences) < 0)
    for k in range(2, 9):  # the last measured direction, origin moving with the head
        np.testing.assert_allclose(observations[k].gaze_dir[0], observations[1].gaze_dir[0])
        np.testing.assert_allclose(observations[k].gaze_origin[0], [0.5 + 0.01 * k, 0.25], atol=1e-6)


def test_long_gaps_gaps_before_the_first_measurement_and_cuts_stay_empty() -> None:
    measured = [False] * 2 + [True] * 2 + [False] * 12 + [True] * 2 + [False] * 2 + [True]
    shots = [0] * 18 + [1] * 3  # the cut falls inside the last short gap
    observations, times, shot_ids = _gaze_track(measured, shots)
    filled = fill_gaze_gaps(observations, times, shot_ids, Config().gaze)
    flags = [bool(f[0]) for f in filled]
    assert flags[:2] == [False, False]  # nothing to carry yet
    assert not any(flags[4:16])  # 1.2 s > carry_max_seconds
    assert flags[18:20] == [False, False]  # first frames of a new shot: not bridged from the old one
    assert all(observations[k].gaze_conf[0] == 0 for k in (0, 1, *range(4, 16), 18, 19))


# --- gaze smoothing ------------------------------------------------------------------------------


def _pitch(direction: np.ndarray) -> float:
    return float(np.degrees(np.arcsin(direction[1])))


def test_gaze_smoothing_averages_jitter_over_three_frames_at_10_fps() -> None:
    observations, times, shots = _gaze_track([True] * 9)
    for k, frame in enumerate(observations):  # pitch jitters +-6 degrees around level, yaw fixed at 0
        pitch = np.radians(6.0 if k % 2 else -6.0)
        frame.gaze_dir[0] = [0.0, np.sin(pitch), np.cos(pitch)]
    changed = smooth_gaze_directions(observations, times, shots, half_window_s=0.1)
    assert changed == 9
    for frame in observations[1:-1]:  # (+6 - 6 + 6) / 3 = 2 degrees of pitch left, sign alternating
        assert abs(_pitch(frame.gaze_dir[0])) == pytest.approx(2.0, abs=0.05)
        assert np.linalg.norm(frame.gaze_dir[0]) == pytest.approx(1.0, abs=1e-6)


def test_gaze_smoothing_keeps_a_steady_turn_and_respects_cuts_sources_and_low_fps() -> None:
    observations, times, shots = _gaze_track([True] * 6 + [False] + [True] * 5, shots=[0] * 8 + [1] * 4)
    observations[10].gaze_source[0] = "keypoints"  # another source is never mixed in
    before = [frame.gaze_dir[0].copy() for frame in observations]
    smooth_gaze_directions(observations, times, shots, half_window_s=0.1)
    # a steady turn is symmetric inside the window: the middle frames keep their direction
    for k in (1, 2, 3, 4):
        np.testing.assert_allclose(observations[k].gaze_dir[0], before[k], atol=1e-3)
    assert observations[6].gaze_conf[0] == 0 and not np.isfinite(observations[6].gaze_dir[0]).any()
    # frame 7 (last of shot 0) averages only frame 7 (frame 6 unmeasured, frame 8 across the cut)
    np.testing.assert_allclose(observations[7].gaze_dir[0], before[7], atol=1e-6)
    # frame 9 averages frames 8 and 9 only: frame 10 is another source
    expected = before[8] + before[9]
    np.testing.assert_allclose(observations[9].gaze_dir[0], expected / np.linalg.norm(expected), atol=1e-6)
    np.testing.assert_allclose(observations[10].gaze_dir[0], before[10], atol=1e-6)

    slow, slow_times, slow_shots = _gaze_track([True] * 5, fps=2.0)  # frames 0.5 s apart: nothing to average
    assert smooth_gaze_directions(slow, slow_times, slow_shots, half_window_s=0.1) == 0


def test_across_a_cut_agreeing_faces_join_despite_far_colours_only_when_nobody_elses_colours_are_nearer() -> None:
    """mmaction2_hug_lab replayed darker and warmer after a cutaway: the left man's pooled colours moved 0.62
    (beyond stitch_face_appearance_max 0.6), everyone else's stay further from him (0.65-0.86); his face is
    0.37 from his own. A change of light moves everyone's colours: far colours contradict agreeing faces
    only when someone else's colours are nearer."""
    from tracking.cut_matching import _People, match_across_cut

    def colours(p):
        d = np.zeros(DESCRIPTOR_SIZE)
        d[:3] = p
        return d

    class Faces:  # pooled face descriptors of synthetic people, by the person's first tracklet
        def __init__(self, faces):
            self.faces = faces

        def __len__(self):
            return len(self.faces)

        def person(self, tracklets):
            return self.faces.get(id(tracklets[0]))

    def person(shot, x, appearance):
        t = _tracklet([0.0 + 4 * shot, 0.5 + 4 * shot, 1.0 + 4 * shot], [[x, 0.5]] * 3, width=0.12)
        t.shot_id, t.appearance_sum = shot, appearance
        return [t]

    config = Config().tracking
    # before: the left man (A) and the right man (B); after the cut, both under other light
    a, b = person(0, 0.4, colours([1.0, 0.0, 0.0])), person(0, 0.53, colours([0.0, 0.0, 1.0]))
    a2 = person(2, 0.4, colours([0.38, 0.62, 0.0]))  # Hellinger 0.62 from A, 0.98 from B: A's nearest
    b2 = person(2, 0.53, colours([0.0, 0.1, 0.9]))
    face_a, face_b = np.zeros(128), np.full(128, 0.06)  # 0.68 apart
    faces = Faces({id(a[0]): face_a, id(b[0]): face_b, id(a2[0]): face_a + 0.37 / np.sqrt(128),
                   id(b2[0]): face_b + 0.2 / np.sqrt(128)})
    pairs = match_across_cut(_People([a, b], faces), _People([a2, b2], faces), config)
    assert sorted(pairs) == [(0, 0), (1, 1)]
    # someone else's colours nearer A's than the replayed man's: the far colours contradict, no join
    c = person(0, 0.8, colours([0.38, 0.30, 0.32]))  # 0.44 from a2's colours (not close enough to join)
    faces.faces[id(c[0])] = np.full(128, -0.06)
    pairs = match_across_cut(_People([a, b, c], faces), _People([a2, b2], faces), config)
    assert (0, 0) not in pairs and (1, 1) in pairs


def test_across_a_cut_a_close_up_neither_stands_in_for_a_wide_shots_person_nor_takes_his_place() -> None:
    """tvhid_highfive_0005 cut wide / close-up on B / wide (benchmarks/bench_reverse_shots.py): B in the second
    wide shot is 0.30 from his colours in the first and stands where he stood. The close-up of B (not joined to
    the wide shot, its colours 0.51 from it) stands at about the same place, its box cut by the frame's bottom to
    about a wide shot's body height. Heights are the person's, from the head (twice the wide shot's): the close-up
    is not at the same place, and the assignment picks among pairs that evidence could decide, so the
    close-up (0.57 from the second wide shot: no join on its own) no longer takes B's place in it."""
    from tracking.cut_matching import _People, _place_distance, match_across_cut

    def person(shot, x, box_height, head_height, colours):
        times = np.array([0.0, 0.5, 1.0]) + 1.5 * shot
        box = np.tile([x - 0.1, 0.02, x + 0.1, 0.02 + box_height], (3, 1))
        head = np.tile([x - 0.03, 0.02, x + 0.03, 0.02 + head_height], (3, 1))
        appearance = np.zeros(DESCRIPTOR_SIZE)
        appearance[:3] = colours
        return [Tracklet(shot, np.arange(3) + 3 * shot, times, box, 3 * appearance, scales=person_scales(box, head))]

    config = Config().tracking
    a_wide = person(0, 0.39, 0.80, 0.10, [0.0, 0.0, 0.0])
    a_wide[0].appearance_sum[10] = 3.0  # other clothes
    b_wide = person(0, 0.77, 0.80, 0.10, [1.0, 0.0, 0.0])
    b_close = person(1, 0.66, 0.97, 0.20, [0.5503, 0.0, 0.4497])
    b_again = person(2, 0.70, 0.88, 0.10, [0.828, 0.172, 0.0])
    earlier, later = _People([a_wide, b_wide, b_close], None), _People([b_again], None)
    # the close-up's box is about the wide shot's height, the person in it twice as tall: not the same set-up
    assert _place_distance(earlier.places(2), later.places(0), config.cut_place_max_size_ratio) == np.inf
    assert _place_distance(earlier.places(1), later.places(0), config.cut_place_max_size_ratio) < 0.5
    assert match_across_cut(earlier, later, config) == [(1, 0)]
    # without the wide shot's B, nothing decides: the close-up does not take the id on its own
    assert match_across_cut(_People([a_wide, b_close], None), later, config) == []


def test_across_a_cut_a_short_shot_of_the_same_set_up_keeps_its_people() -> None:
    """tvhid_handshake_0001 cut close-up on A / wide / close-up on A (benchmarks/bench_reverse_shots.py): each
    close-up lasts 0.67 s, one or two samples at 2 fps. A person back at the place and size they had in the same
    set-up, in colours within stitch_appearance_max, is the same person however short either shot: place and size
    carry what pooling would (a person seen once, not joined, is dropped as an isolated detection). Colours alone
    still need both sides followed (stitch_reentry_min_seconds), and someone else's clothes at that place, or the
    same clothes elsewhere, still decide nothing."""
    from tracking.cut_matching import _People, match_across_cut

    def person(shot, x, colours, samples):
        times = 1.5 * shot + 0.5 * np.arange(samples)
        box = np.tile([x - 0.1, 0.1, x + 0.1, 0.9], (samples, 1))
        head = np.tile([x - 0.03, 0.1, x + 0.03, 0.2], (samples, 1))
        appearance = np.zeros(DESCRIPTOR_SIZE)
        appearance[:3] = colours
        return [Tracklet(shot, np.arange(samples) + 3 * shot, times, box, samples * appearance,
                         scales=person_scales(box, head))]

    config = Config().tracking
    a, b = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]
    a_moved = [0.9494, 0.0506, 0.0]  # 0.16 from a: a pose change, not a close enough match on colours alone
    assert appearance_distance(np.array(a + [0.0] * (DESCRIPTOR_SIZE - 3)),
                               np.array(a_moved + [0.0] * (DESCRIPTOR_SIZE - 3)))[0, 0] == pytest.approx(0.16, abs=0.01)
    earlier = _People([person(0, 0.3, a, 2), person(0, 0.7, b, 2)], None)
    # back on one sample, where and as tall as before
    assert match_across_cut(earlier, _People([person(2, 0.31, a_moved, 1)], None), config) == [(0, 0)]
    # the same clothes across the frame (where B stood): nothing decides
    assert match_across_cut(earlier, _People([person(2, 0.69, a_moved, 1)], None), config) == []
    # someone else's clothes at A's place: no join
    other = [0.0, 1.0, 0.0]
    assert match_across_cut(earlier, _People([person(2, 0.3, other, 1)], None), config) == []


def test_across_a_cut_a_return_to_an_earlier_set_up_keeps_its_people() -> None:
    """tvhid_handshake_0001 cut wide / close-up on A / wide (benchmarks/bench_reverse_shots.py): two men in dark
    suits in a dark room, everyone's colours 0.10-0.27 apart. Back in the wide shot each man stands where he
    stood, at his size, but the close-up's A (not joined across the first cut: nothing told him from B there) is
    as near in colours, and his place cannot be compared (twice the size): the rival test refused both men. The
    whole arrangement repeated is the same set-up, and settles them; one person alone is not, nor an
    arrangement the clothes contradict, nor one where no clothes compare."""
    from tracking.cut_matching import _People, match_across_cut

    def person(shot, x, colours, height=0.8, samples=2):
        times = 1.0 * shot + 0.4 * np.arange(samples)
        box = np.tile([x - 0.08, 0.1, x + 0.08, 0.1 + height], (samples, 1))
        head = np.tile([x - 0.03, 0.1, x + 0.03, 0.1 + height / 8], (samples, 1))
        appearance = np.zeros(DESCRIPTOR_SIZE)
        appearance[:3] = colours
        return [Tracklet(shot, np.arange(samples) + 2 * shot, times, box, samples * appearance,
                         scales=person_scales(box, head))]

    def distance(a, b):
        pad = [0.0] * (DESCRIPTOR_SIZE - 3)
        return appearance_distance(np.array(a + pad), np.array(b + pad))[0, 0]

    config = Config().tracking
    a, b = [0.9, 0.1, 0.0], [0.8, 0.0, 0.2]
    a_back, b_back = [0.9, 0.07, 0.03], [0.85, 0.0, 0.15]  # one sample each, 0.13 and 0.05 from their own
    a_close, b_close = [0.85, 0.1, 0.05], [0.85, 0.0, 0.15]  # the close-up's men: as near, sizes not comparable
    assert abs(distance(a, a_back) - distance(a_close, a_back)) < config.cut_colour_margin
    assert abs(distance(b, b_back) - distance(b_close, b_back)) < config.cut_colour_margin
    rows = [person(0, 0.35, a), person(0, 0.6, b), person(1, 0.3, a_close, 1.6), person(1, 0.7, b_close, 1.6)]
    later = [person(2, 0.36, a_back, samples=1), person(2, 0.58, b_back, samples=1)]
    assert sorted(match_across_cut(_People(rows, None), _People(later, None), config)) == [(0, 0), (1, 1)]
    # one man back alone: his place says nothing a close-up could not (no arrangement), nothing decides
    assert match_across_cut(_People(rows, None), _People(later[:1], None), config) == []
    # B's place taken by clothes that contradict: beyond stitch_face_appearance_max, or nearer A's than B's
    other = [0.0, 0.0, 1.0]
    assert distance(b, other) > config.stitch_face_appearance_max
    assert match_across_cut(_People(rows, None), _People([later[0], person(2, 0.58, other, samples=1)], None), config) == []
    like_a = [0.85, 0.1, 0.05]
    assert distance(a, like_a) < distance(b, like_a) < config.stitch_appearance_max
    assert (1, 1) not in match_across_cut(_People(rows, None), _People([later[0], person(2, 0.58, like_a, samples=1)], None), config)
    # B in A's arms, their boxes overlapping (no colours of his own: nothing contradicts), A's colours agreeing:
    # the set-up holds (mmaction2_hug_lab's last 1.5 s replayed after a cutaway); with nobody's colours, place
    # alone decides nothing
    unseen = [0.0, 0.0, 0.0]
    assert np.isnan(distance(b, unseen))
    assert sorted(match_across_cut(_People(rows, None), _People([later[0], person(2, 0.58, unseen, samples=1)], None),
                                   config)) == [(0, 0), (1, 1)]
    assert match_across_cut(_People(rows, None), _People([person(2, 0.36, unseen, samples=1),
                                                          person(2, 0.58, unseen, samples=1)], None), config) == []


def test_a_track_takes_the_weaker_detection_it_was_just_before_it_started() -> None:
    """A track starts only from a detection scored at least new_track_thresh (0.4); a person's detections are
    kept from person_conf (0.35). tvhid_handshake_0001's B, mid-handshake, scored 0.38 in the first frame of a
    re-encoded copy and lost that row. The tracker's own overlap and colour rules decide the reach back."""
    red, blue = np.zeros(DESCRIPTOR_SIZE, np.float32), np.zeros(DESCRIPTOR_SIZE, np.float32)
    red[0], blue[30] = 1.0, 1.0

    def frame(box, conf, colour, *extra):
        boxes, confs, colours = [box], [conf], [colour]
        for b, c, k in extra:
            boxes.append(b), confs.append(c), colours.append(k)
        return FrameObservations(xyxy=boxes, confidence=confs, appearance=colours)

    walk = [[0.30 + 0.02 * k, 0.2, 0.42 + 0.02 * k, 0.9] for k in range(4)]
    frames = [frame(walk[0], 0.37, red), frame(walk[1], 0.38, red), frame(walk[2], 0.8, red), frame(walk[3], 0.8, red)]
    ids = track_shot(frames, CONFIG.tracking, 2.0)
    assert [int(i[0]) for i in ids] == [ids[2][0]] * 4  # two weak first sightings join, back to the first
    # a weak detection elsewhere in the frame, or in other colours at the same place, stays without a track
    far = ([0.80, 0.2, 0.92, 0.9], 0.38, red)
    frames = [frame(walk[0], 0.37, blue, far), frame(walk[1], 0.8, red), frame(walk[2], 0.8, red)]
    ids = track_shot(frames, CONFIG.tracking, 2.0)
    assert ids[0].tolist() == [-1, -1] and ids[1][0] == ids[2][0] >= 1



def test_a_track_does_not_take_the_box_of_someone_it_meets() -> None:
    """opencv_vtest 48.0-50.0 s at 2 fps (the boxes as detected): a dark-haired man walks down-right and a
    bald man up-left, both on new tracks at 48.0 s; at 48.5 s one box covers the other. Without a velocity,
    box overlap alone handed each new track the other man's box: one id covered the dark-haired man at
    48.0 s and the bald man after. Their coats pool to colours 0.45 apart, as the two men's did: near
    enough for the tracker's colour gate, too far for stitching to join."""
    dark = [[0.752, 0.432, 0.798, 0.590], [0.794, 0.447, 0.827, 0.620], [0.799, 0.457, 0.845, 0.624],
            [0.797, 0.466, 0.845, 0.633], [0.799, 0.477, 0.834, 0.648]]
    bald = [[0.793, 0.466, 0.839, 0.671], [0.761, 0.448, 0.813, 0.648], [0.743, 0.434, 0.789, 0.626],
            [0.739, 0.423, 0.776, 0.619], [0.723, 0.414, 0.771, 0.572]]
    coat, jeans, trousers = 0, 1, 2  # histogram bins
    dark_colours, bald_colours = np.zeros(DESCRIPTOR_SIZE, np.float32), np.zeros(DESCRIPTOR_SIZE, np.float32)
    dark_colours[[coat, trousers]] = 0.8, 0.2
    bald_colours[[coat, jeans]] = 0.8, 0.2
    assert appearance_distance(dark_colours, bald_colours)[0, 0] == pytest.approx(0.45, abs=0.01)
    frames = [FrameObservations(xyxy=[d, b], confidence=[0.8, 0.8], appearance=[dark_colours, bald_colours])
              for d, b in zip(dark, bald)]
    ids = track_shot(frames, CONFIG.tracking, 2.0)
    assert ids[1].tolist() == ids[0].tolist()[::-1]  # the tracker itself swaps them
    people = assign_person_ids(frames, 48.0 + np.arange(len(frames)) / 2.0, np.zeros(len(frames), int), CONFIG.tracking, 2.0)
    assert [f.tracker_id.tolist() for f in people] == [[0, 1]] * len(frames)
    # the same crossing followed from 46.5 s: the dark-haired man's track has a velocity, yet the tracker's
    # prediction falls between the two boxes at 48.5 s and it takes the bald man's; his own box is nearer
    # where his last two moves lead
    dark_before = [[0.680, 0.377, 0.723, 0.518], [0.702, 0.394, 0.744, 0.546], [0.726, 0.409, 0.770, 0.562]]
    bald_before = [[0.912, 0.539, 0.979, 0.767], [0.873, 0.514, 0.931, 0.737], [0.827, 0.491, 0.891, 0.706]]
    frames = [FrameObservations(xyxy=[d, b], confidence=[0.8, 0.8], appearance=[dark_colours, bald_colours])
              for d, b in zip(dark_before + dark, bald_before + bald)]
    ids = track_shot(frames, CONFIG.tracking, 2.0)
    assert ids[3][0] != ids[4][0] and ids[4][1] == ids[3][0]  # the tracker itself hands his track over
    people = assign_person_ids(frames, 46.5 + np.arange(len(frames)) / 2.0, np.zeros(len(frames), int), CONFIG.tracking, 2.0)
    assert [f.tracker_id.tolist() for f in people] == [[0, 1]] * len(frames)
    # a seated crowd whose boxes overlap: a new track's first link barely moves, nobody else is as near
    still = [[0.30, 0.30, 0.50, 0.90], [0.42, 0.32, 0.62, 0.92]]
    frames = [FrameObservations(xyxy=still, confidence=[0.8, 0.8], appearance=[dark_colours, dark_colours])] * 3
    people = assign_person_ids(frames, np.arange(3) / 2.0, np.zeros(3, int), CONFIG.tracking, 2.0)
    assert [f.tracker_id.tolist() for f in people] == [[0, 1]] * 3


def test_a_fast_walker_at_2_fps_is_followed_by_his_own_motion_unless_someone_contests_it() -> None:
    """At 2 fps a walker's box moves more than its width between samples, so box overlap never follows him:
    each sample is a lone tracklet, and as the light changes along his way his colours drift beyond
    stitch_appearance_max from one sample to the next (opencv_vtest: 6 of 43 ids were such splits). The
    tracker's Kalman filter would have carried his box by his velocity: stitching now does, within the
    tracker's colour gate. Refused when someone seen beside the later box has colours closer to the
    earlier's: a woman hidden behind the man walking beside her, where her motion leads."""
    def colours(bin_):
        c = np.zeros(DESCRIPTOR_SIZE, np.float32)
        c[0], c[bin_] = 0.8, 0.2  # the same coat, a detail the light changes
        return c

    def box(x, y=0.5, w=0.04, h=0.2):
        return [x - w / 2, y - h / 2, x + w / 2, y + h / 2]

    drift = [colours(1), colours(1), colours(1), colours(2), colours(3), colours(4), colours(5)]
    assert appearance_distance(drift[3], drift[4])[0, 0] > CONFIG.tracking.stitch_appearance_max
    frames = [FrameObservations(xyxy=[box(0.2 + 0.07 * k)], confidence=[0.8], appearance=[drift[k]]) for k in range(7)]
    people = assign_person_ids(frames, np.arange(7) / 2.0, np.zeros(7, int), CONFIG.tracking, 2.0)
    assert [f.tracker_id.tolist() for f in people] == [[0]] * 7

    woman, man = colours(1), colours(2)
    frames = []
    for k in range(9):
        boxes, cols = [], []
        if k < 2:
            boxes.append(box(0.80 - 0.05 * k)), cols.append(woman)
        else:  # the man, where her motion leads; she is hidden behind him until 3.0 s, then beside him
            boxes.append(box(0.80 - 0.05 * k, y=0.52, w=0.05, h=0.22)), cols.append(man)
        if k >= 6:
            boxes.append(box(0.89 - 0.05 * k)), cols.append(woman)
        frames.append(FrameObservations(xyxy=boxes, confidence=[0.8] * len(boxes), appearance=cols))
    people = assign_person_ids(frames, np.arange(9) / 2.0, np.zeros(9, int), CONFIG.tracking, 2.0)
    assert people[0].tracker_id[0] != people[2].tracker_id[0]  # her id does not go on with the man
    assert len({int(f.tracker_id[0]) for f in people[2:]}) == 1


def _row_under_a_pan(pan: Callable[[float], float], n: int = 7, spacing: float = 0.2):
    """People in alike shirts standing in a row (scene x = 0.1 + k x ``spacing``) while the camera pans right by
    ``pan(t)`` of the frame width: in the picture each stands at scene x - pan(t), seen while wholly inside."""
    def at(x: float):
        return lambda t: (x - pan(t), 0.5) if 0.08 <= x - pan(t) <= 0.92 else None
    return [Person(f"p{k}", "blue", at(0.1 + spacing * k)) for k in range(n)]


def test_a_whip_pan_across_a_row_of_alike_people_keeps_each_their_id() -> None:
    """At 2 fps a whip pan moves the picture by one person's spacing between samples: each person's box lands
    where their neighbour's was, and box overlap alone hands every id on to the neighbour. With the camera's
    move (pipeline/camera_motion.py) taken out, each keeps their own id and no id covers two people."""
    fps = 2.0
    pan = lambda t: 0.4 * min(t, 1.0)  # noqa: E731 - 0.2 frame widths between samples, then still
    observations, times, shots, truth = _scene(_row_under_a_pan(pan), 3.0, fps=fps)
    moves = np.array([[-pan(t), 0.0] for t in times])  # the content moves left as the camera pans right
    config = Config().replace(sampling={"fps": fps}).tracking
    ids = _identities(assign_person_ids(observations, times, shots, config, fps, camera_moves=moves), observations, truth)
    assert all(len(v) == 1 for v in ids.values()), ids
    owners = [pid for v in ids.values() for pid in v]
    assert len(owners) == len(set(owners)), ids  # no id over two people
    assert len(ids) >= 5


def test_camera_moves_change_nothing_where_the_camera_stands_still() -> None:
    """All-zero camera moves are no moves: the same ids as without them."""
    people = [Person("left_to_right", "green", _walk(0.1, 0.2)), Person("right_to_left", "yellow", _walk(0.9, -0.2, y=0.55))]
    observations, times, shots, truth = _scene(people, 4.0)
    still = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS, camera_moves=np.zeros((len(times), 2)))
    plain = assign_person_ids(observations, times, shots, CONFIG.tracking, FPS)
    assert [r.tracker_id.tolist() for r in still] == [r.tracker_id.tolist() for r in plain]
    assert [r.xyxy.tolist() for r in still] == [r.xyxy.tolist() for r in plain]  # the picture's boxes come out
