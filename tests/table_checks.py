"""Comparing output tables in tests: the same rows, where NaN equals NaN (missing boxes are NaN-filled);
and running the same inputs through both executors to compare them."""
from __future__ import annotations

import math

import pyarrow as pa

from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.storage import OutputStore

SORT_KEYS = {"tracks": ["video_id", "frame_idx", "person_id"], "events": ["video_id", "event_id"],
             "qa": ["video_id", "qa_id"]}


def same_values(a, b) -> bool:
    """Equality of nested Python values where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    return a == b


def assert_tables_equal(actual: pa.Table, expected: pa.Table, name: str) -> None:
    assert actual.schema == expected.schema, name
    assert actual.num_rows == expected.num_rows, f"{name}: {actual.num_rows} rows, expected {expected.num_rows}"
    for column in expected.column_names:
        assert same_values(actual.column(column).to_pylist(), expected.column(column).to_pylist()), \
            f"{name}.{column} differs"


def sorted_table(store: OutputStore, name: str) -> pa.Table:
    """A whole output table in a canonical row order."""
    return store.read_table(name).sort_by([(k, "ascending") for k in SORT_KEYS[name]])


def run_both_executors(videos: list[InputVideo], config: Config, make_dir) -> dict[str, tuple[OutputStore, list[dict]]]:
    """``videos`` through the local executor and the Ray executor (on the running Ray instance), each
    into a fresh folder from ``make_dir(name)``, manifests built: executor -> (store, statuses)."""
    from pipeline import runner
    from pipeline.ray_runner import iter_ray

    outs = {}
    for executor in ("local", "ray"):
        out = make_dir(f"out_{executor}")
        store = OutputStore(str(out))
        if executor == "local":
            statuses = list(runner.iter_local(videos, config, store))
        else:
            statuses = list(iter_ray(videos, config, str(out)))
        runner.build_manifest(store)
        outs[executor] = (store, statuses)
    return outs
