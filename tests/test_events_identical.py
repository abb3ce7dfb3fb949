"""The events table for fixed inputs is exactly the one the first (unoptimised) version of the stage
produced: the speed work (vectorised array conversion, batched confidences, new kernels) changed no
result. Expected checksums were computed with commit b28473a's events package on the same inputs."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_tracks import random_tracks  # noqa: E402
from test_events_scenarios import SCENARIOS  # noqa: E402

from events import detect_events  # noqa: E402
from events.records import round_many  # noqa: E402
from pipeline.config import EventConfig  # noqa: E402

# the events columns of the first version; columns added to the schema later do not change the checksum
COLUMNS = [
    "video_id", "event_id", "source", "event_type", "start_time", "end_time", "start_frame", "end_frame", "shot_id",
    "persons_involved", "initiator_id", "target_type", "target_person_id", "target_label", "leader_id",
    "follower_id", "lag_seconds", "confidence", "parent_event_ids", "details",
]

# random_tracks(n_people, n_frames, fps, seed[, n_shots]) -> (events, sha256 of the table)
RANDOM_TRACKS = {
    (4, 600, 10.0, 0): (200, "9e173f85802f4c502cad6942bc4ab7b8bd3a7a2bdc60b1676fdff23dc4d2e72a"),
    (6, 1500, 10.0, 7, 4): (621, "f59699bb2fc81c29dd2d7eb1e9ccd6e1350cf09d62bdd4b1ec8003cfd333c2b2"),
    (3, 900, 5.0, 3, 2): (412, "2f7d2e9a236444573ac28e3b31274fcbc52fbcf4c8c794f6568677fade37efe8"),
}
# scenario (with objects: reaching, showing, giving) at an fps -> (events, sha256)
SCENARIO_TABLES = {
    ("conversation", 10.0): (25, "42c8e5b30e871cc6476f86aa63b07709457e3c5b0cee1a726979136e27812f70"),
    ("conversation", 5.0): (25, "e631251075f15440b5b0bf0b2f6b89bec50dc632d2b5d50efe6eb8fae8b38512"),
    ("group_turn", 10.0): (14, "b577cdb490d2554546ec4d28d7677364c3de741d7da3de510dc8c0066e009976"),
    ("group_turn", 5.0): (14, "943c67e01fab4f29a79eab2eae27f7d04ed35cce832eec5fba193713c7325e0d"),
    ("objects_and_arms", 10.0): (26, "e7c885e9ff2dafda0a78c245a587d844d5ba5512b2dba2fd8ce65d0cc892731d"),
    ("objects_and_arms", 5.0): (26, "72e660221e762be77ed7b9157cd5b1908f6b4b8d238c2c909b95cd655c83d9eb"),
}


def table_checksum(table: pa.Table) -> str:
    """sha256 of the table's rows as canonical JSON (floats by repr, so any changed bit shows)."""
    rows = table.select(COLUMNS).to_pylist()
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("args", sorted(RANDOM_TRACKS))
def test_random_tracks_events_unchanged(args):
    events = detect_events(random_tracks(*args), EventConfig())
    n_events, expected = RANDOM_TRACKS[args]
    assert events.num_rows == n_events
    assert table_checksum(events) == expected, f"events of random_tracks{args} changed: {table_checksum(events)}"


@pytest.mark.parametrize("name, fps", sorted(SCENARIO_TABLES))
def test_scenario_events_unchanged(name, fps):
    scenario = SCENARIOS[name]()
    events = detect_events(scenario.tracks(fps), EventConfig(), scenario.objects(fps))
    n_events, expected = SCENARIO_TABLES[(name, fps)]
    assert events.num_rows == n_events
    assert table_checksum(events) == expected, f"events of {name} at {fps} fps changed: {table_checksum(events)}"


def test_sliced_and_chunked_tracks_give_the_same_events():
    """The vectorised list-column reading honours slice offsets and chunking."""
    tracks = random_tracks(4, 600, 10.0, 0)
    padded = pa.concat_tables([tracks.slice(0, 5), tracks]).combine_chunks()
    sliced = padded.slice(5)  # the same rows, as arrays with an offset into their buffers
    assert sliced.column("keypoints").chunk(0).offset == 5
    chunked = pa.concat_tables([tracks.slice(0, 1000), tracks.slice(1000)])
    expected = RANDOM_TRACKS[(4, 600, 10.0, 0)][1]
    for variant in (sliced, chunked):
        assert table_checksum(detect_events(variant, EventConfig())) == expected


def test_round_many_is_python_round():
    """The vectorised rounding used for sort keys and details equals round() bit for bit, ties included."""
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.random(20_000) * 4000, np.arange(3000) / 10.0, np.arange(3000) / 30.0,
        (np.arange(-500, 500) + 0.5) / 1e4, (np.arange(500) + 0.5) / 1e9, rng.normal(0, 1e-8, 500),
        [0.0, -0.0, 1e300, -1e300, np.inf, -np.inf, 5e-324, 2.0**52, 1.00005, 0.00015, 2.675, 0.125],
    ])
    for digits in (4, 9):
        expected = [round(v, digits) for v in values.tolist()]
        got = round_many(values, digits)
        assert [repr(v) for v in got] == [repr(v) for v in expected]
