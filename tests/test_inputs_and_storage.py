"""Input discovery, video ids and the atomic output store."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import schema
from pipeline.inputs import InputError, assign_video_ids, expand_inputs, sanitise_id
from pipeline.storage import TEMP_MARK, OutputStore


def _touch(path, data=b"x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_directories_globs_and_manifests(tmp_path):
    a = _touch(tmp_path / "corpus" / "a.mp4")
    b = _touch(tmp_path / "corpus" / "sub" / "b.MKV")
    _touch(tmp_path / "corpus" / "notes.md")
    assert expand_inputs([str(tmp_path / "corpus")]) == [str(a), str(b)]
    assert expand_inputs([str(tmp_path / "corpus" / "*.mp4")]) == [str(a)]
    (tmp_path / "list.txt").write_text(f"# comment\ncorpus/a.mp4\n{b}\n")
    assert expand_inputs([str(tmp_path / "list.txt")]) == [str(a), str(b)]
    (tmp_path / "list.csv").write_text(f"uri,label\ncorpus/a.mp4,x\n")
    assert expand_inputs([str(tmp_path / "list.csv")]) == [str(a)]
    pq.write_table(pa.table({"path": [str(b)]}), tmp_path / "list.parquet")
    assert expand_inputs([str(tmp_path / "list.parquet")]) == [str(b)]
    # the same file twice is one input
    assert expand_inputs([str(a), str(tmp_path / "corpus" / "a.mp4")]) == [str(a)]


def test_bad_arguments_name_what_is_wrong(tmp_path):
    with pytest.raises(InputError, match="missing.mp4: no such file"):
        expand_inputs([str(tmp_path / "missing.mp4")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no video files"):
        expand_inputs([str(tmp_path / "empty")])
    with pytest.raises(InputError, match="matches no files"):
        expand_inputs([str(tmp_path / "*.webm")])
    (tmp_path / "bad.csv").write_text("name\nx\n")
    with pytest.raises(InputError, match="bad.csv: CSV manifest needs a header"):
        expand_inputs([str(tmp_path / "bad.csv")])


def test_video_ids_are_sanitised_stems_with_hash_only_on_collision():
    videos = assign_video_ids(["/d1/clip one.mp4", "/d2/clip one.mp4", "/d3/other.avi"])
    ids = [v.video_id for v in videos]
    assert ids[2] == "other"
    assert ids[0].startswith("clip_one-") and ids[1].startswith("clip_one-") and ids[0] != ids[1]
    assert sanitise_id("../weird name!") == "weird_name"
    assert sanitise_id("...") == "video"


def _tracks_rows(video_id, n):
    return [{"video_id": video_id, "frame_idx": i, "native_frame_idx": i * 3, "t": i * 0.5, "shot_id": 0,
             "person_id": 0, "det_conf": 0.9, "bbox": [0.1, 0.1, 0.5, 0.9], "gaze_conf": 0.0,
             "gaze_target_type": "unknown", "pointing": False, "point_conf": 0.0} for i in range(n)]


def test_store_round_trips_hive_partitions_atomically(tmp_path):
    store = OutputStore(str(tmp_path / "out"))
    for video_id, n in (("0001", 3), ("b", 2)):
        store.write_table("tracks", video_id, schema.table_from_rows(_tracks_rows(video_id, n), schema.TRACKS_SCHEMA))
    files = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == ["tracks/video_id=0001/part-0.parquet", "tracks/video_id=b/part-0.parquet"]
    whole = store.read_table("tracks")
    assert whole.schema == schema.TRACKS_SCHEMA
    # "0001" stays a string id, not the integer 1
    assert sorted(set(whole.column("video_id").to_pylist())) == ["0001", "b"]
    one = store.read_video_table("tracks", "0001")
    assert one.num_rows == 3 and one.column("native_frame_idx").to_pylist() == [0, 3, 6]
    assert store.read_video_table("events", "0001") is None
    assert store.read_table("qa").num_rows == 0

    # a temporary left by a killed writer is ignored by readers and swept
    orphan = tmp_path / "out" / "tracks" / "video_id=b" / f"part-0.parquet{TEMP_MARK}dead"
    orphan.write_bytes(b"half a file")
    assert store.read_table("tracks").num_rows == 5
    assert store.sweep_temporaries() == 1 and not orphan.exists()

    store.delete_video("b")
    assert not (tmp_path / "out" / "tracks" / "video_id=b").exists()
    assert store.read_table("tracks").num_rows == 3


def test_status_files_are_written_whole_and_listed(tmp_path):
    store = OutputStore(str(tmp_path / "out"))
    store.write_json(store.status_file("a"), {"video_id": "a", "status": "ok"})
    store.write_json(store.status_file("b"), {"video_id": "b", "status": "failed", "error": "b.mp4: zero bytes"})
    assert [s["video_id"] for s in store.iter_statuses()] == ["a", "b"]
    assert store.read_status("missing") is None
    leftovers = [p for p in (tmp_path / "out").rglob("*") if TEMP_MARK in p.name]
    assert leftovers == []
    assert sorted(os.listdir(tmp_path / "out" / "status")) == ["a.json", "b.json"]


# --- video ids stay with their file in an output folder (issue 12, item 1) ----------------------

def test_a_known_file_keeps_its_id_and_a_new_file_never_takes_a_taken_id():
    # run 1 into a fresh folder: colA's clip is alone, it gets its stem
    first = assign_video_ids(["/colA/clip.mp4"])
    assert [v.video_id for v in first] == ["clip"]
    known = {v.video_id: v.uri for v in first}
    # run 2: a different file with the same stem gets a distinct id, derived from its own URI only
    second = assign_video_ids(["/colB/clip.avi"], known)
    assert second[0].video_id.startswith("clip-") and second[0].video_id != "clip"
    assert second[0].video_id == assign_video_ids(["/colB/clip.avi"], {"clip": "/elsewhere/clip.mkv"})[0].video_id
    known.update({v.video_id: v.uri for v in second})
    # run 3: both together, in either order: each keeps the id it has in the folder
    for order in (["/colA/clip.mp4", "/colB/clip.avi"], ["/colB/clip.avi", "/colA/clip.mp4"]):
        ids = {v.uri: v.video_id for v in assign_video_ids(order, known)}
        assert ids == {"/colA/clip.mp4": "clip", "/colB/clip.avi": second[0].video_id}
    # a fresh folder given both at once: neither gets the bare stem, so neither depends on the other
    fresh = assign_video_ids(["/colA/clip.mp4", "/colB/clip.avi"])
    assert "clip" not in {v.video_id for v in fresh} and len({v.video_id for v in fresh}) == 2


def test_an_id_that_would_mix_two_videos_is_refused_naming_both():
    from pipeline.inputs import hashed_id

    taken = {hashed_id("/colB/clip.avi"): "/colC/other.mp4", "clip": "/colA/clip.mp4"}
    with pytest.raises(InputError, match=r"/colB/clip.avi: .* already names /colC/other.mp4"):
        assign_video_ids(["/colB/clip.avi"], taken)


# --- partitions every reader accepts (issue 12, item 2) -------------------------------------------

def test_empty_partitions_have_no_row_group_and_files_carry_their_video_id(tmp_path):
    import datasets

    store = OutputStore(str(tmp_path / "out"))
    store.write_table("tracks", "0001", schema.table_from_rows(_tracks_rows("0001", 3), schema.TRACKS_SCHEMA))
    store.write_table("tracks", "empty", schema.empty_table(schema.TRACKS_SCHEMA))
    empty_file = tmp_path / "out" / "tracks" / "video_id=empty" / "part-0.parquet"
    assert pq.ParquetFile(empty_file).metadata.num_row_groups == 0
    assert pq.read_schema(empty_file).field("video_id").type == pa.string()
    loaded = datasets.load_dataset("parquet", data_files=str(tmp_path / "out" / "tracks" / "*" / "*.parquet"),
                                   split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 3 and loaded["video_id"] == ["0001"] * 3
    assert store.read_table("tracks").num_rows == 3
    assert store.read_video_table("tracks", "empty").num_rows == 0
