"""`socialtrace export OUT --format frame-labels` on a real run of the annotated shared clips (pointing clips,
a three-person clip, a group of seven): one row per tracks row, every label agrees with the tracks and events tables, and
the file loads in pandas, DuckDB and Hugging Face datasets."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.frame_labels import split_of
from pipeline.schema import FRAME_LABEL_SPLITS, FRAME_LABELS_SCHEMA
from pipeline.storage import OutputStore


@pytest.fixture(scope="module")
def exported(default_truth_run, tmp_path_factory) -> tuple[Path, Path]:
    """The session's default run of the annotated clips (read-only), exported as a user exports it."""
    out = default_truth_run
    dest = tmp_path_factory.mktemp("frame_labels") / "labels"
    exe = shutil.which("socialtrace") or str(Path(sys.executable).with_name("socialtrace"))
    done = subprocess.run([exe, "export", str(out), "--format", "frame-labels", "-o", str(dest)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out, dest


def _tables(out: Path):
    store = OutputStore(str(out))
    return store.read_table("tracks").to_pylist(), store.read_table("events").to_pylist()


def test_one_row_per_sampled_frame_and_person_present(exported):
    out, dest = exported
    labels = pq.read_table(dest / "frame_labels.parquet")
    assert labels.schema.equals(FRAME_LABELS_SCHEMA)
    tracks, _ = _tables(out)
    assert labels.num_rows == len(tracks) > 0
    by_key = {(r["video_id"], r["sampled_frame_idx"], r["person_id"]): r for r in labels.to_pylist()}
    assert len(by_key) == labels.num_rows
    for row in tracks:
        label = by_key[(row["video_id"], row["frame_idx"], row["person_id"])]
        assert label["frame_idx"] == row["native_frame_idx"] and label["t"] == row["t"]
        assert label["bbox"] == row["bbox"] and label["head_bbox"] == row["head_bbox"]
        assert (label["gaze_target_type"], label["gaze_target_id"]) == (row["gaze_target_type"], row["gaze_target_id"])
    assert {r["video_id"] for r in tracks} == {s["video_id"] for s in OutputStore(str(out)).iter_statuses()}


def test_labels_agree_with_the_events(exported):
    out, dest = exported
    labels = pq.read_table(dest / "frame_labels.parquet").to_pylist()
    _, events = _tables(out)

    def covered(row, etype, who):
        return any(e["video_id"] == row["video_id"] and e["event_type"] == etype
                   and e["start_frame"] <= row["sampled_frame_idx"] <= e["end_frame"] and who(e, row["person_id"])
                   for e in events)

    member = lambda e, p: p in e["persons_involved"]  # noqa: E731
    for row in labels:
        unknown_gaze = row["gaze_target_type"] == "unknown"
        eye = covered(row, "mutual_gaze", member)
        assert row["in_eye_contact"] is (True if eye else (None if unknown_gaze else False)), row
        shared_from_start = covered(row, "joint_attention", member)
        if shared_from_start:
            assert row["in_shared_attention"] is True, row
        elif row["in_shared_attention"] is not None:
            joined = covered(row, "joint_attention",
                             lambda e, p: p in json.loads(e["details"]).get("joined_later", []))
            assert row["in_shared_attention"] is joined, row
        else:
            assert unknown_gaze
        points = covered(row, "pointing", lambda e, p: e["initiator_id"] == p)
        assert (row["pointing"] is True) == points, row
        assert (row["pointing_target_type"] is None) == (not points)
    assert any(r["pointing"] for r in labels), "the pointing clip should give pointing frames"
    assert any(r["in_eye_contact"] is False for r in labels)
    # a frame the tracks saw pointing but no event confirms is not called pointing either way
    tracks, _ = _tables(out)
    seen = {(r["video_id"], r["frame_idx"], r["person_id"]): r["pointing"] for r in tracks}
    for row in labels:
        if row["pointing"] is False:
            assert not seen[(row["video_id"], row["sampled_frame_idx"], row["person_id"])]


def test_split_is_per_video_and_deterministic(exported):
    _, dest = exported
    labels = pq.read_table(dest / "frame_labels.parquet").to_pylist()
    splits = {}
    for row in labels:
        assert row["split"] in FRAME_LABEL_SPLITS
        assert splits.setdefault(row["video_id"], row["split"]) == row["split"]
    assert all(split_of(v) == s for v, s in splits.items())
    assert split_of("atd_kitchen") == split_of("atd_kitchen")
    assert {split_of(f"video_{i}") for i in range(200)} == set(FRAME_LABEL_SPLITS)


def test_readme_and_loaders(exported):
    _, dest = exported
    readme = (dest / "README.md").read_text()
    for name in FRAME_LABELS_SCHEMA.names:
        assert f"| {name} |" in readme, name
    assert "Class balance" in readme and "in_eye_contact:" in readme
    assert not list(dest.glob(".*tmp*")), "temporary files left behind"
    path = str(dest / "frame_labels.parquet")
    n = pq.read_metadata(path).num_rows
    import pandas as pd

    frame = pd.read_parquet(path)
    assert len(frame) == n and set(frame.columns) == set(FRAME_LABELS_SCHEMA.names)
    assert duckdb.sql(f"select count(*) from read_parquet('{path}')").fetchall()[0][0] == n
    assert duckdb.sql(f"select count(*) from read_parquet('{path}') where in_eye_contact is null "
                      "and gaze_target_type <> 'unknown'").fetchall()[0][0] == 0
    import datasets

    ds = datasets.load_dataset("parquet", data_files=path, split="train",
                               cache_dir=str(dest.parent / "hf_cache"))
    assert ds.num_rows == n and set(FRAME_LABELS_SCHEMA.names) <= set(ds.column_names)
