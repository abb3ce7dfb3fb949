"""A face whose eyes are too small to read gives only the head's direction (gaze.unread_eyes_uncertainty_deg):
where the eyes' usual range around it holds another person than the one the head points at, the row names
nobody. The situation of yakhyo_classroom_group's B at half resolution: her head points level at D beside her,
her eyes (7 px, unread) look down at A in front of her, and the row said D, a wrong "who looks at D" item."""
from __future__ import annotations

import numpy as np

from detectors.observation import FrameObservations
from events.geometry import GAZE_ELSEWHERE, GAZE_HANDS, GAZE_PERSON, GAZE_CAMERA, names_another_person
from pipeline.config import Config
from pipeline.perception import associate_targets


def _frame(eye_cues: float) -> FrameObservations:
    """The looker (id 0) near the middle, her head turned toward D (id 1) at her height on the right and
    toward the camera; A (id 2) stands nearer, her head a little lower: the look turned down by 15 degrees
    of the head's own pitch reaches A, turned by 8 (the read's own uncertainty) it does not."""
    toward_d = np.array([0.8, 0.0, -0.8]) / np.hypot(0.8, 0.8)
    return FrameObservations(
        xyxy=[[0.40, 0.40, 0.50, 0.95], [0.72, 0.40, 0.82, 0.95], [0.64, 0.51, 0.74, 0.98]],
        confidence=[0.9, 0.9, 0.9],
        head_xyxy=[[0.42, 0.40, 0.48, 0.50], [0.74, 0.40, 0.80, 0.50], [0.66, 0.51, 0.72, 0.61]],
        gaze_origin=[[0.45, 0.45], [np.nan, np.nan], [np.nan, np.nan]],
        gaze_dir=[toward_d, [np.nan] * 3, [np.nan] * 3],
        gaze_conf=[0.8, 0.0, 0.0], gaze_source=["face_mesh", "", ""], gaze_eye_cues=[eye_cues, 0.0, 0.0],
        tracker_id=[0, 1, 2],
    )


def _looker_targets(eye_cues: float, config: Config) -> list[tuple[str, int | None]]:
    frames = [_frame(eye_cues) for _ in range(3)]
    targets = associate_targets(frames, 1.0, config, times=np.array([0.0, 0.5, 1.0]), shot_ids=np.zeros(3, int))
    return [(t.gaze_type[0], t.gaze_id[0]) for t in targets]


def test_a_head_read_with_another_person_in_the_eyes_range_names_nobody():
    config = Config()
    assert _looker_targets(1.0, config) == [("person", 1)] * 3  # eyes read: the look is where it points
    assert _looker_targets(0.0, config) == [("unknown", None)] * 3  # head alone: D or A, nobody can say
    off = config.replace(gaze={"unread_eyes_uncertainty_deg": 0.0})
    assert _looker_targets(0.0, off) == [("person", 1)] * 3


def test_another_person_is_another_id_not_the_same_persons_hands():
    # rows: person 1 read, alternatives (K=2, R=6)
    code = np.array([GAZE_PERSON, GAZE_PERSON, GAZE_HANDS, GAZE_ELSEWHERE, GAZE_PERSON, GAZE_PERSON])
    ids = np.array([1, 1, 1, -1, 1, 1])
    alt_code = np.array([[GAZE_PERSON, GAZE_HANDS, GAZE_PERSON, GAZE_PERSON, GAZE_CAMERA, GAZE_HANDS],
                         [GAZE_PERSON, GAZE_PERSON, GAZE_HANDS, GAZE_PERSON, GAZE_ELSEWHERE, GAZE_PERSON]])
    alt_id = np.array([[2, 1, 1, 2, -1, 3],
                       [1, 1, 1, 2, -1, 1]])
    assert names_another_person(code, ids, alt_code, alt_id).tolist() == [True, False, False, False, False, True]


def _bowed_head(eye_cues: float) -> FrameObservations:
    """One person (id 0) facing the camera, head bowed 30 degrees over her own hands held at her waist, on the
    ray's image line (pyscenedetect_archive_two_women at half size: the women's eyes, 5-6 px, go unread)."""
    bowed = np.array([0.0, np.sin(np.radians(30.0)), -np.cos(np.radians(30.0))])
    return FrameObservations(
        xyxy=[[0.40, 0.20, 0.60, 0.95]], confidence=[0.9], head_xyxy=[[0.46, 0.20, 0.54, 0.32]],
        gaze_origin=[[0.50, 0.26]], gaze_dir=[bowed], gaze_conf=[0.8], gaze_source=["face_mesh"],
        gaze_eye_cues=[eye_cues], tracker_id=[0],
        hand_xyxy=[[[0.44, 0.62, 0.49, 0.68], [0.51, 0.62, 0.56, 0.68]]],
    )


def test_a_bowed_head_with_unread_eyes_is_not_said_to_look_past_its_own_hands():
    """Eyes read, a look 30 degrees down is level enough to pass over one's hands (own hands need 40): it
    lands elsewhere. Eyes unread, the eyes may look up to 15 degrees further down, onto the hands, and the ray
    crosses them: her own hands."""
    def targets(eye_cues: float, config: Config) -> list[str]:
        frames = [_bowed_head(eye_cues) for _ in range(3)]
        found = associate_targets(frames, 1.0, config, times=np.array([0.0, 0.5, 1.0]), shot_ids=np.zeros(3, int))
        return [t.gaze_type[0] for t in found]
    config = Config()
    assert targets(1.0, config) == ["elsewhere"] * 3
    assert targets(0.0, config) == ["hands"] * 3  # her own (the only hands there)
    assert targets(0.0, config.replace(gaze={"unread_eyes_uncertainty_deg": 0.0})) == ["elsewhere"] * 3


def _looker_with_eyes_frames(eye_dir, with_a: bool = True) -> list[FrameObservations]:
    """Three frames of ``_frame``'s looker with unread eyes (cues 0) whose read, taken however small, points
    along ``eye_dir``; ``with_a`` False removes A, leaving D alone in the head's range."""
    frames = []
    for _ in range(3):
        frame = _frame(0.0)
        frame.gaze_eye_dir[0] = np.asarray(eye_dir, np.float32) / np.linalg.norm(eye_dir)
        frames.append(frame if with_a else frame[[0, 1]])
    return frames


def _looker_with_eyes(eye_dir, with_a: bool = True) -> list[tuple[str, int | None]]:
    frames = _looker_with_eyes_frames(eye_dir, with_a)
    targets = associate_targets(frames, 1.0, Config(), times=np.array([0.0, 0.5, 1.0]), shot_ids=np.zeros(3, int))
    return [(t.gaze_type[0], t.gaze_id[0]) for t in targets]


def test_the_eyes_read_however_small_choose_among_the_people_the_heads_range_holds():
    """Head toward D with A within the eyes' range (above: nobody). The eyes, a few pixels wide, still tell
    down from level: down onto A names A, level names D; turned to the lens, outside the head's range, they
    choose nothing and the row stays unknown."""
    toward_a = [0.24, 0.11, -0.24]  # from the looker's eyes to A's head centre, 24 degrees below D's line
    assert _looker_with_eyes(toward_a) == [("person", 2)] * 3
    assert _looker_with_eyes([0.8, 0.0, -0.8]) == [("person", 1)] * 3
    assert _looker_with_eyes([0.0, 0.0, -1.0]) == [("unknown", None)] * 3
    # nothing else in the eyes' range: the head names D and eyes this weak never overrule it
    assert _looker_with_eyes(toward_a, with_a=False) == [("person", 1)] * 3


def test_the_recorded_direction_is_the_one_that_named_the_target():
    frames = _looker_with_eyes_frames([0.24, 0.11, -0.24])
    targets = associate_targets(frames, 1.0, Config(), times=np.array([0.0, 0.5, 1.0]), shot_ids=np.zeros(3, int))
    for target, frame in zip(targets, frames):
        np.testing.assert_allclose(target.gaze_dir[0], frame.gaze_eye_dir[0])  # the eyes chose A
        assert np.isnan(target.gaze_dir[1:]).all()  # D and A have no gaze of their own


def _facing_camera(head_pitch: float, eye_pitch: float) -> FrameObservations:
    """One person high in the frame, eyes unread (cues 0), the head pitched ``head_pitch`` degrees down (12: into
    the lens from up there) and the eyes, read however small, ``eye_pitch`` (negative: up)."""
    def pitched(degrees):
        return [0.0, np.sin(np.radians(degrees)), -np.cos(np.radians(degrees))]
    return FrameObservations(
        xyxy=[[0.40, 0.20, 0.60, 0.95]], confidence=[0.9], head_xyxy=[[0.46, 0.20, 0.54, 0.32]],
        gaze_origin=[[0.50, 0.26]], gaze_dir=[pitched(head_pitch)], gaze_conf=[0.8], gaze_source=["face_mesh"],
        gaze_eye_cues=[0.0], gaze_eye_dir=[pitched(eye_pitch)], tracker_id=[0],
    )


def test_a_new_look_is_told_from_a_flicker_by_the_eyes_too():
    """Looks alternating every 0.5 s between the lens and above it: the head turns 12 degrees, too little to be a
    new look (gaze.target_turn_keep_deg, 20) and the samples between are unknown; the eyes, read however small,
    turn 42 degrees, and each look is kept."""
    def targets(eye_pitches):
        frames = [_facing_camera((12.0, 0.0)[i % 2], eye_pitches[i % 2]) for i in range(5)]
        found = associate_targets(frames, 1.0, Config(), times=np.arange(5) * 0.5, shot_ids=np.zeros(5, int))
        return [t.gaze_type[0] for t in found]
    assert targets((12.0, 0.0)) == ["camera", "unknown", "unknown", "unknown", "camera"]
    assert targets((12.0, -30.0)) == ["camera", "elsewhere", "camera", "elsewhere", "camera"]
