"""Events on the perception engineers' tracks of the shared clips (DESIGN.md §10, issues #3 and #10): every
table keeps the rules of a consistent events table, and what the clips show (media README, truth/) holds."""
from __future__ import annotations

import os
from contextlib import closing

import pytest

from pipeline.config import Config
from pipeline.consistency import check_events_table
from pipeline.runner import derive_events
from pipeline.storage import OutputStore
from tests.shared_media import SHARED_CLIPS

pytestmark = pytest.mark.slow

POINTING_CLIPS = ("deepoint_lamp1.mp4", "deepoint_pointing_up.mov")
# the default rate on every clip; 10 fps on the clips with interactions
RUNS = [(2.0, SHARED_CLIPS + POINTING_CLIPS), (10.0, SHARED_CLIPS)]


@pytest.fixture(scope="module")
def real_events(media_dir, default_truth_run):
    """(fps, clip id) -> (events as the runner derives them, with the probed duration; that duration). At the
    default rate they are the session's default run's events tables (every clip here is annotated)."""
    from pipeline import perception
    from pipeline.clip import ClipSpec

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    out = {}
    store = OutputStore(str(default_truth_run))
    for fps, clips in RUNS:
        if fps == Config().sampling.fps:
            for name in clips:
                video_id = name.split(".")[0]
                out[(fps, video_id)] = (store.read_video_table("events", video_id),
                                        store.read_status(video_id)["duration_s"])
            continue
        config = Config().replace(sampling={"fps": fps})
        with closing(perception.PerceptionWorker(config)) as worker:
            for name in clips:
                result = worker(ClipSpec(video_id=name.split(".")[0], uri=str(media_dir / name)))
                duration = result.info.duration_s
                out[(fps, name.split(".")[0])] = (derive_events(result.tracks, result.objects, config, duration),
                                                  duration)
    return out


def _rows(table, event_type):
    return [r for r in table.to_pylist() if r["event_type"] == event_type]


def test_every_shared_clip_keeps_the_rules(real_events):
    broken = {key: check_events_table(events, duration, Config().events) for key, (events, duration) in real_events.items()}
    assert not any(broken.values()), {key: lines for key, lines in broken.items() if lines}


@pytest.mark.parametrize("fps", [2.0, 10.0])
def test_kitchen_joint_attention_on_the_avocado_without_eye_contact(real_events, fps):
    """Person 0 watches the avocado in person 1's hands (truth/intervals.csv: 0-0.12, 0.93-1.15 and
    1.8 s to the end, 1.9 s in all) while person 1 looks at it too; nobody makes eye contact."""
    events, duration = real_events[(fps, "atd_kitchen")]
    joint = [r for r in _rows(events, "joint_attention") if {0, 1} <= set(r["persons_involved"])]
    assert joint, "no joint attention of persons 0 and 1"
    assert all(r["target_person_id"] == 1 and r["target_label"] == "hands" for r in joint)
    assert sum(r["end_time"] - r["start_time"] for r in joint) >= 0.5 * 1.9
    assert not _rows(events, "mutual_gaze") and not _rows(events, "gaze_aversion")


@pytest.mark.parametrize("fps", [2.0, 10.0])
def test_highfive_contact_only_while_both_are_there(real_events, fps):
    """highfive_0018: the right person leaves at about 2.1 s; any eye contact or aversion of the two
    ends by then (the truth cannot confirm contact: the left man's eyes are never visible). B is last seen
    on the 2 fps sample at 2.0 s and gone at 2.5 s: an event ends halfway, at 2.25 s."""
    events, _ = real_events[(fps, "tvhid_highfive_0018")]
    for r in _rows(events, "mutual_gaze") + _rows(events, "gaze_aversion"):
        assert r["end_time"] <= 2.3, r


def test_no_pointing_in_the_interaction_clips(real_events):
    for (fps, name), (events, _) in real_events.items():
        if name.startswith("tvhid") or name == "atd_kitchen":
            assert not _rows(events, "pointing"), (fps, name)
