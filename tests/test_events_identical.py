"""The events table for fixed inputs (random tracks, the synthetic scenarios) equals a stored expectation:
speed work must change no result, and a change of result must be intended. Expectations live in
tests/data/events_expected/*.parquet; after an intended change of the stage's output, regenerate them with

    EVENTS_EXPECTED_UPDATE=1 python -m pytest tests/test_events_identical.py

and review the change (the failure message lists the differing rows). Times and confidences are compared
to a tolerance (float rounding may move a last bit); everything else exactly."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from events import detect_events
from events.records import round_many
from pipeline.config import EventConfig
from tests.scenarios import random_tracks
from tests.test_events_scenarios import SCENARIOS

EXPECTED_DIR = Path(__file__).resolve().parent / "data" / "events_expected"
UPDATE = os.environ.get("EVENTS_EXPECTED_UPDATE") == "1"
FLOAT_COLUMNS = {"start_time": 1e-9, "end_time": 1e-9, "lag_seconds": 1e-6, "confidence": 1e-6}
MAX_LISTED = 8

# random_tracks(n_people, n_frames, fps, seed[, n_shots])
RANDOM_TRACKS = [(4, 600, 10.0, 0), (6, 1500, 10.0, 7, 4), (3, 900, 5.0, 3, 2)]
# scenario (with objects: reaching, showing, giving) at an fps
SCENARIO_TABLES = [(name, fps) for name in ("conversation", "group_turn", "objects_and_arms") for fps in (10.0, 5.0)]


def _close(a, b, tolerance: float) -> bool:
    """Nested values equal, floats within ``tolerance`` (relative to their size), NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, (float, int)) or isinstance(b, float) and isinstance(a, (float, int)):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    return a == b


def table_differences(actual: pa.Table, expected: pa.Table) -> list[str]:
    """Readable differences between two events tables: row counts, then (row, column, got, expected)."""
    if actual.num_rows != expected.num_rows:
        types = lambda t: sorted(t.column("event_type").to_pylist())  # noqa: E731
        extra = [x for x in set(types(actual)) | set(types(expected)) if types(actual).count(x) != types(expected).count(x)]
        counts = {x: (types(actual).count(x), types(expected).count(x)) for x in sorted(extra)}
        return [f"{actual.num_rows} rows, expected {expected.num_rows}; (got, expected) by type: {counts}"]
    out = []
    got_rows, want_rows = actual.to_pylist(), expected.to_pylist()
    for n, (got, want) in enumerate(zip(got_rows, want_rows)):
        for column in expected.column_names:
            g, w = got.get(column), want[column]
            if column == "details":
                g, w = json.loads(g), json.loads(w)
            if not _close(g, w, FLOAT_COLUMNS.get(column, 1e-9)):
                out.append(f"row {n} ({want['event_type']}) {column}: got {g!r}, expected {w!r}")
    return out


def check_against_expected(events: pa.Table, name: str) -> None:
    path = EXPECTED_DIR / f"{name}.parquet"
    if UPDATE:
        EXPECTED_DIR.mkdir(parents=True, exist_ok=True)
        pq.write_table(events, path, compression="zstd")
        return
    assert path.exists(), f"no stored expectation {path}: run with EVENTS_EXPECTED_UPDATE=1 to create it"
    differences = table_differences(events, pq.read_table(path))
    listed = "\n  ".join(differences[:MAX_LISTED])
    more = f"\n  ... and {len(differences) - MAX_LISTED} more" if len(differences) > MAX_LISTED else ""
    assert not differences, (f"events of {name} differ from {path.name} (regenerate with EVENTS_EXPECTED_UPDATE=1 "
                             f"if the change is intended):\n  {listed}{more}")


def _random_name(args: tuple) -> str:
    return "random_" + "_".join(str(a) for a in args)


@pytest.mark.parametrize("args", RANDOM_TRACKS)
def test_random_tracks_events_unchanged(args):
    check_against_expected(detect_events(random_tracks(*args), EventConfig()), _random_name(args))


@pytest.mark.parametrize("name, fps", SCENARIO_TABLES)
def test_scenario_events_unchanged(name, fps):
    scenario = SCENARIOS[name]()
    events = detect_events(scenario.tracks(fps), EventConfig(), scenario.objects(fps), clip_duration=scenario.duration)
    check_against_expected(events, f"{name}_{fps:g}fps")


def test_differences_are_reported_readably():
    events = detect_events(random_tracks(*RANDOM_TRACKS[0]), EventConfig())
    moved = events.set_column(events.schema.get_field_index("end_time"), "end_time",
                              pa.array(events.column("end_time").to_numpy() + np.where(np.arange(events.num_rows) == 3, 0.01, 0.0)))
    assert table_differences(events, events) == []
    assert table_differences(moved, events) == [
        f"row 3 ({events.column('event_type')[3].as_py()}) end_time: got {moved.column('end_time')[3].as_py()!r}, "
        f"expected {events.column('end_time')[3].as_py()!r}"]
    assert "rows, expected" in table_differences(events.slice(1), events)[0]


def test_sliced_and_chunked_tracks_give_the_same_events():
    """The vectorised list-column reading honours slice offsets and chunking."""
    tracks = random_tracks(*RANDOM_TRACKS[0])
    expected = detect_events(tracks, EventConfig())
    padded = pa.concat_tables([tracks.slice(0, 5), tracks]).combine_chunks()
    sliced = padded.slice(5)  # the same rows, as arrays with an offset into their buffers
    assert sliced.column("keypoints").chunk(0).offset == 5
    chunked = pa.concat_tables([tracks.slice(0, 1000), tracks.slice(1000)])
    for variant in (sliced, chunked):
        assert detect_events(variant, EventConfig()).equals(expected)


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
