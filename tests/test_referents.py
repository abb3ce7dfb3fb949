"""The class-agnostic pointed-at object finder (detectors/referents.py), carrying its boxes over a short
time (tracking/objects.carry_objects) and the gaze-onto-referent rule (events.geometry.gaze_on_pointed_objects).

Real frames use the pointing rays perception measured on them (2 fps, default config) and the boxes of
what is really there, read off the frames by eye."""
from __future__ import annotations

from contextlib import closing

import numpy as np
import pytest

from detectors.config import ReferentConfig
from detectors.objects import FrameObjects
from detectors.observation import FrameObservations
from detectors.referents import REFERENT_LABEL, find_referents, referents_in_frames
from events import geometry
from pipeline.video import iter_frames
from tracking.objects import carry_objects

CONFIG = ReferentConfig()


def _frame_at(media_dir, name: str, t: float) -> np.ndarray:
    for frame in iter_frames(str(media_dir / name), 2.0, 960):
        if abs(frame.t - t) < 0.02:
            return frame.image
    raise AssertionError(f"{name}: no sampled frame at {t} s")


def _inside(box, region) -> bool:
    """The box's centre lies in region (x1, y1, x2, y2)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return region[0] <= cx <= region[2] and region[1] <= cy <= region[3]


# (clip, t, fingertip, direction, person box, where the thing pointed at is: read off the frame)
POINTED_AT = [
    # the pink table lamp on the left: shade x 0.045-0.155, y 0.35-0.57, stem and base down to 0.69
    ("deepoint_lamp1.mp4", 1.0, (0.203, 0.497), (-1.0, 0.017), (0.225, 0.005, 0.709, 0.989), (0.04, 0.34, 0.16, 0.70)),
    ("deepoint_lamp1.mp4", 1.5, (0.19, 0.434), (-0.999, -0.05), (0.203, 0.007, 0.709, 0.989), (0.04, 0.34, 0.16, 0.70)),
    # the pink lamp on the glass desk: shade x 0.135-0.215, y 0.40-0.55
    ("deepoint_pointing_up.mov", 1.0, (0.287, 0.462), (-0.999, -0.046), (0.277, 0.11, 0.777, 0.997), (0.13, 0.39, 0.23, 0.62)),
    # the LED desk lamp's glowing head (x 0.065-0.145, y 0.51-0.60), beyond the grey backpack the finger is over
    ("deepoint_pointing_folding.mp4", 2.0, (0.28, 0.531), (-0.971, 0.24), (0.287, 0.006, 0.924, 0.99), (0.06, 0.50, 0.15, 0.64)),
]


@pytest.mark.parametrize("clip, t, origin, direction, person, thing", POINTED_AT)
def test_finds_the_lamp_pointed_at(media_dir, clip, t, origin, direction, person, thing) -> None:
    found = find_referents(_frame_at(media_dir, clip, t), np.array([origin]), np.array([direction]),
                           np.array([person]), CONFIG)
    assert len(found) == 1 and found.label[0] == REFERENT_LABEL
    box = found.xyxy[0]
    assert _inside(box, thing), box
    # the box is the thing, not a sliver of it nor the table it stands on
    assert 0.03 < box[2] - box[0] < 0.15 and 0.05 < box[3] - box[1] < 0.35, box
    assert 0.5 <= found.confidence[0] <= 1.0


def test_nothing_when_the_arm_is_still_rising_below_the_lamp(media_dir) -> None:
    # pointing_long at 0 s: the ray runs down past the air conditioner to the floor and table legs
    found = find_referents(_frame_at(media_dir, "deepoint_pointing_long.mov", 0.0), np.array([[0.318, 0.624]]),
                           np.array([[-0.97, 0.243]]), np.array([[0.313, 0.006, 0.763, 0.996]]), CONFIG)
    assert len(found) == 0


def test_no_search_on_frames_where_nobody_points(media_dir) -> None:
    image = _frame_at(media_dir, "deepoint_lamp1.mp4", 1.0)
    people = FrameObservations(np.array([[0.225, 0.005, 0.709, 0.989]]), np.array([0.9]))  # no pointing ray
    assert [len(f) for f in referents_in_frames([image], [people], CONFIG)] == [0]


def _noisy_background(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(150, 4, (360, 640, 3)), 0, 255).astype(np.uint8)


def test_nothing_on_a_flat_image() -> None:
    found = find_referents(_noisy_background(), np.array([[0.6, 0.5]]), np.array([[-1.0, 0.0]]), np.zeros((0, 4)), CONFIG)
    assert len(found) == 0


def test_a_coloured_block_on_the_ray_is_found_with_its_box() -> None:
    image = _noisy_background()
    image[160:200, 100:150] = (200, 40, 40)  # red block: x 100-150, y 160-200 of 640 x 360
    found = find_referents(image, np.array([[0.6, 0.5]]), np.array([[-1.0, 0.0]]), np.zeros((0, 4)), CONFIG)
    assert len(found) == 1
    np.testing.assert_allclose(found.xyxy[0], [100 / 640, 160 / 360, 150 / 640, 200 / 360], atol=0.01)


def test_a_block_off_the_ray_or_on_a_person_is_not_found() -> None:
    image = _noisy_background()
    image[60:100, 100:150] = (200, 40, 40)  # above the ray
    assert len(find_referents(image, np.array([[0.6, 0.5]]), np.array([[-1.0, 0.0]]), np.zeros((0, 4)), CONFIG)) == 0
    image = _noisy_background()
    image[160:200, 100:150] = (200, 40, 40)  # on the ray, but someone stands there
    person = np.array([[0.1, 0.2, 0.3, 0.9]])
    assert len(find_referents(image, np.array([[0.6, 0.5]]), np.array([[-1.0, 0.0]]), person, CONFIG)) == 0


def test_referents_are_carried_within_a_shot_and_a_short_time() -> None:
    lamp = FrameObjects(np.array([[0.1, 0.4, 0.15, 0.55]]), np.array([0.9]), np.array([REFERENT_LABEL], dtype=object))
    frames = [FrameObjects.empty(), FrameObjects.empty(), lamp, FrameObjects.empty(), FrameObjects.empty(), FrameObjects.empty()]
    times = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    shots = np.array([0, 0, 0, 0, 1, 1])  # a cut at 2.0 s
    carried = carry_objects(frames, times, shots, 0.5)
    assert [len(f) for f in carried] == [0, 1, 1, 1, 0, 0]


def _gaze_rule(gaze_dir, point_code, heads=np.zeros((0, 4)), head_owner=np.zeros(0), *, max_angle=25.0):
    """One person at frame 0 looking from (0.55, 0.13); the referent box (0.05-0.15, 0.37-0.56)."""
    return geometry.gaze_on_pointed_objects(
        np.array([0.0]), np.array([0]), np.array([0]), np.array([0]), np.array([geometry.GAZE_ELSEWHERE]),
        np.array([-1]), np.array([[0.55, 0.13]]), np.array([gaze_dir], float), np.array([point_code]), np.array([7]),
        heads, head_owner, np.zeros(len(heads)), np.array([[0.05, 0.37, 0.15, 0.56]]), np.array([7]), np.array([0]),
        aspect=16 / 9, max_angle_deg=max_angle, hold_seconds=0.5,
    )


def test_gaze_counts_on_the_pointed_at_object_only_with_both_cues() -> None:
    level_left = (-0.94, 0.0, -0.34)  # lamp1's measured look: level, to the left, passing above the lamp
    code, target = _gaze_rule(level_left, geometry.POINT_OBJECT)
    assert (code[0], target[0]) == (geometry.GAZE_OBJECT, 7)
    # not pointing at it: the gaze alone is not evidence of the lamp
    code, target = _gaze_rule(level_left, geometry.POINT_ELSEWHERE)
    assert code[0] == geometry.GAZE_ELSEWHERE and target[0] == -1
    # looking the other way
    code, _ = _gaze_rule((0.94, 0.0, -0.34), geometry.POINT_OBJECT)
    assert code[0] == geometry.GAZE_ELSEWHERE
    # another person's head nearer the ray is the better fit
    code, _ = _gaze_rule(level_left, geometry.POINT_OBJECT, np.array([[0.25, 0.08, 0.32, 0.2]]), np.array([1]))
    assert code[0] == geometry.GAZE_ELSEWHERE
    # the rule off
    code, _ = _gaze_rule(level_left, geometry.POINT_OBJECT, max_angle=0.0)
    assert code[0] == geometry.GAZE_ELSEWHERE


@pytest.fixture(scope="module")
def worker_2fps():
    from pipeline.config import Config
    from pipeline.perception import PerceptionWorker

    with closing(PerceptionWorker(Config().replace(sampling={"fps": 2.0}))) as worker:
        yield worker


def test_perception_writes_the_lamp_and_the_look_at_it(worker_2fps, media_dir) -> None:
    from pipeline.clip import ClipSpec

    result = worker_2fps(ClipSpec(video_id="deepoint_lamp1", uri=str(media_dir / "deepoint_lamp1.mp4")))
    objects = result.objects.to_pylist()
    assert objects and {o["label"] for o in objects} == {REFERENT_LABEL} and {o["object_id"] for o in objects} == {0}
    assert all(_inside(o["bbox"], (0.04, 0.34, 0.16, 0.70)) for o in objects)
    rows = {round(r["t"], 2): r for r in result.tracks.to_pylist()}
    for t in (1.0, 1.5):  # pointing at the lamp and looking at it (truth: object:lamp)
        assert (rows[t]["point_target_type"], rows[t]["point_target_id"]) == ("object", 0)
        assert (rows[t]["gaze_target_type"], rows[t]["gaze_target_id"]) == ("object", 0)
    assert rows[0.0]["gaze_target_type"] != "object"  # before the point: no referent yet


def test_perception_finds_no_object_where_nobody_points(worker_2fps, media_dir) -> None:
    from pipeline.clip import ClipSpec

    result = worker_2fps(ClipSpec(video_id="highfive", uri=str(media_dir / "tvhid_highfive_0005.avi")))
    assert result.objects is None
