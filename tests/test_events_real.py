"""Events on the perception engineers' tracks of the shared clips (DESIGN.md §10, issue #3 acceptance)."""
from __future__ import annotations

import os

import pytest

from events import detect_events
from pipeline.config import Config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_events(media_dir):
    """Tracks at 10 fps from the real pipeline, and their events, per clip."""
    perception = pytest.importorskip("pipeline.perception")
    from pipeline.clip import ClipSpec

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    config = Config().replace(sampling={"fps": 10.0})
    worker = perception.PerceptionWorker(config)
    out = {}
    for name in ("atd_kitchen.mp4", "tvhid_highfive_0018.avi"):
        result = worker(ClipSpec(video_id=name.split(".")[0], uri=str(media_dir / name)))
        out[name.split(".")[0]] = detect_events(result.tracks, config.events, result.objects)
    return out


def _rows(table, event_type):
    return [r for r in table.to_pylist() if r["event_type"] == event_type]


def test_kitchen_joint_attention_without_eye_contact(real_events):
    events = real_events["atd_kitchen"]
    joint = [r for r in _rows(events, "joint_attention") if {0, 1} <= set(r["persons_involved"])]
    assert joint, "no joint attention of persons 0 and 1"
    assert max(r["end_time"] - r["start_time"] for r in joint) >= 0.5 * 3.4  # most of the 3.4 s clip
    assert all(r["end_time"] - r["start_time"] <= 0.5 for r in _rows(events, "mutual_gaze"))


def test_highfive_mutual_gaze(real_events):
    events = real_events["tvhid_highfive_0018"]
    covered = [max(0.0, min(r["end_time"], 1.9) - max(r["start_time"], 0.0)) for r in _rows(events, "mutual_gaze")
               if set(r["persons_involved"]) == {0, 1}]
    assert covered and max(covered) >= 0.5 * 1.9


def test_no_pointing_in_shared_clips(real_events):
    for name, events in real_events.items():
        assert not _rows(events, "pointing"), name
