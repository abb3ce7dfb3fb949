"""Comparing output tables in tests (pipeline.table_diff says what differs), and running the same inputs through both executors to compare them."""
from __future__ import annotations

import pyarrow as pa

from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.storage import OutputStore
from pipeline.table_diff import table_differences

SORT_KEYS = {"tracks": ["video_id", "frame_idx", "person_id"], "events": ["video_id", "event_id"],
             "qa": ["video_id", "qa_id"]}


def assert_tables_equal(actual: pa.Table, expected: pa.Table, name: str) -> None:
    differences = table_differences(actual, expected)
    assert not differences, f"{name}: " + "; ".join(differences)


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
