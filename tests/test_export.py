"""Exports from a small OUT dir built here on a real shared clip (atd_kitchen, with tracks written from
its ground-truth head boxes): GRASP-Bench folders that GRASP's loader reads and whose H.264 videos show
every person's box and "Person N" label; LLaVA-Video conversations; the qa parquet in HF datasets."""
from __future__ import annotations

import csv
import glob
import json
import os
import re
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pytest

from pipeline.annotate import PersonAnnotator, person_color, person_label
from pipeline.config import Config, QAConfig
from pipeline.schema import EVENTS_SCHEMA, TRACKS_SCHEMA, table_from_rows
from pipeline.storage import OutputStore
from pipeline.video import iter_frames
from pipeline.export import export
from qa_gen import generate_qa

VIDEO_ID = "atd_kitchen"
FPS = 2.0
W, H = 1280, 720


def _kitchen_tracks(media_dir: Path) -> pa.Table:
    """Tracks at 2 fps from the clip's ground-truth head boxes (person 0 left, person 1 right); the
    person box is the head box widened and extended down to the counter."""
    heads: dict[tuple[int, int], list[float]] = {}
    with open(media_dir / "atd_kitchen_heads.csv") as f:
        for row in csv.DictReader(f):
            heads[(int(row["frame"]), int(row["person"]))] = [float(row[k]) for k in ("x1", "y1", "x2", "y2")]
    rows = []
    for k in range(7):  # 3.4 s at 2 fps: t = 0.0 .. 3.0
        native = int(round(k / FPS * 30))
        for pid in (0, 1):
            x1, y1, x2, y2 = heads[(native, pid)]
            w, h = x2 - x1, y2 - y1
            box = [max(0.0, x1 - 0.6 * w) / W, y1 / H, min(W, x2 + 0.6 * w) / W, min(H, y2 + 3.0 * h) / H]
            rows.append({"video_id": VIDEO_ID, "frame_idx": k, "native_frame_idx": native, "t": k / FPS,
                         "shot_id": 0, "person_id": pid, "det_conf": 0.9, "bbox": box,
                         "head_bbox": [x1 / W, y1 / H, x2 / W, y2 / H], "gaze_conf": 0.8,
                         "gaze_target_type": "hands", "gaze_target_id": 1, "pointing": False, "point_conf": 0.0})
    return table_from_rows(rows, TRACKS_SCHEMA)


def _kitchen_events() -> pa.Table:
    """What the media README says happens: both watch the avocado in Person 1's hands the whole time."""
    def event(i, etype, persons, **kw):
        return {"video_id": VIDEO_ID, "event_id": i, "source": "gaze", "event_type": etype, "start_time": 0.0,
                "end_time": 3.5, "start_frame": 0, "end_frame": 6, "shot_id": 0, "persons_involved": persons,
                "confidence": 0.8, "parent_event_ids": [], "target_type": "person", "target_person_id": 1,
                "target_label": "hands", "details": json.dumps({"target_type": "hands", "target_id": 1}), **kw}
    rows = [event(0, "gaze_at", [0], initiator_id=0), event(1, "gaze_at", [1], initiator_id=1),
            event(2, "joint_attention", [0, 1])]
    return table_from_rows(rows, EVENTS_SCHEMA)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory, media_dir) -> str:
    out = tmp_path_factory.mktemp("out")
    store = OutputStore(str(out))
    tracks, events = _kitchen_tracks(media_dir), _kitchen_events()
    qa, drops = generate_qa(events, tracks, QAConfig(formats=("mcq", "open_ended")), seed=0, clip_duration=3.4)
    assert qa.num_rows >= 2, drops
    store.write_table("tracks", VIDEO_ID, tracks)
    store.write_table("events", VIDEO_ID, events)
    store.write_table("qa", VIDEO_ID, qa)
    store.write_json(store.path("run.json"), {"config": Config().replace(sampling={"fps": FPS}).to_dict()})
    store.write_json(store.status_file(VIDEO_ID), {"video_id": VIDEO_ID, "status": "ok",
                                                   "uri": str(media_dir / "atd_kitchen.mp4")})
    return str(out)


def load_eval_data_like_grasp(path: str) -> list[dict]:
    """GRASP eval/eval_social_qa.py's reading contract: every json/*.json in sorted order holds
    {"clip_file", "qa"}; the item is the "qa" dict plus video_path = <path>/video/<clip_file>."""
    items = []
    for fp in sorted(glob.glob(os.path.join(path, "json", "*.json"))):
        with open(fp) as f:
            data = json.load(f)
        qa = data["qa"]
        qa["video_path"] = os.path.join(path, "video", data["clip_file"])
        items.append(qa)
    return items


def _decoded(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        return [f.to_ndarray(format="rgb24") for f in container.decode(stream)]


def _assert_labels_drawn(exported: list[np.ndarray], media_dir: Path) -> None:
    """Every person's box and "Person N" label patch, in their colour, where the tracks put them."""
    source = [f.image for f in iter_frames(str(media_dir / "atd_kitchen.mp4"), FPS, Config().sampling.max_side)]
    assert len(exported) == len(source) == 7  # one frame per sampled frame: the 2 fps GRASP's loader assumes
    assert exported[0].shape == source[0].shape

    tracks = _kitchen_tracks(media_dir).to_pylist()
    h, w = source[0].shape[:2]
    for k in (0, 3, 6):
        for row in (r for r in tracks if r["frame_idx"] == k):
            colour = np.array(person_color(row["person_id"]), dtype=float)
            x1, y1, x2, y2 = (int(v) for v in np.array(row["bbox"]) * [w, h, w, h])
            # the label sits just above the box's top-left corner (below the top edge when the box touches
            # the top of the frame): a filled patch of the person's colour with white text
            lx1, ly1, lx2, ly2 = PersonAnnotator(w, h).label_box(person_label(row["person_id"]), (x1, y1, x2, y2))
            assert ly1 == y1 - (ly2 - ly1) or (ly1 == y1 and y1 < ly2 - ly1)
            region = (slice(ly1, ly2), slice(lx1, lx2))

            def share(img):
                return float((np.abs(img[region].astype(float) - colour).max(axis=-1) < 40).mean())

            assert share(exported[k]) > 0.5 and share(source[k]) < 0.1, (k, row["person_id"], share(exported[k]), share(source[k]))
            # the box outline: the left edge column is in the person's colour over most of its height
            edge = exported[k][y1 + 5 : y2 - 5, max(0, x1 - 1) : x1 + 2]
            assert float((np.abs(edge.astype(float) - colour).max(axis=-1) < 50).mean()) > 0.5


def test_grasp_bench_export_reads_like_grasp_and_shows_labels(out_dir, media_dir, tmp_path):
    dest = tmp_path / "bench"
    summary = export(out_dir, "grasp-bench", str(dest), videos={VIDEO_ID: str(media_dir / "atd_kitchen.mp4")})
    assert summary["items"] >= 2 and summary["videos"] == 1 and summary["clips"] == 1
    items = load_eval_data_like_grasp(str(dest))
    assert len(items) == summary["items"]
    qa = {r["qa_id"]: r for r in OutputStore(out_dir).read_table("qa").to_pylist()}
    for item in items:
        assert os.path.exists(item["video_path"])
        assert item["video_path"].endswith(f"video/{VIDEO_ID}_unit000.mp4")  # a 3.4 s video is one unit
        assert (item["unit_id"], item["unit_start"]) == (0, 0.0) and item["unit_end"] == pytest.approx(3.4)
        assert item["category"] in {"T1", "T2", "T3", "T4", "T5", "T6"} and item["difficulty"] in ("easy", "medium", "hard")
        if item["options"]:  # GRASP: "\n".join(options) in the prompt; pred letter == item["answer"]
            assert [o[:3] for o in item["options"]] == ["A) ", "B) ", "C) ", "D) "]
            assert item["answer"] in "ABCD"
            assert item["options"]["ABCD".index(item["answer"])][3:] == item["answer_text"]
        else:
            assert item["answer"] == item["answer_text"] and len(item["answer_text"]) > 20
        # the evidence a Social Grounding Reward and a trace metric need, in GRASP's shape
        row = qa[item["qa_id"]]
        assert item["grounding"] and item["grounding"] == [{"source": g["source"], "persons": g["persons"]}
                                                           for g in row["grounding"]]
        for g in item["grounding"]:
            assert g["source"] in ("gaze", "gesture") and g["persons"] and set(g["persons"]) <= {0, 1}
        assert [s["text"] for s in item["reasoning_trace"]] == [s["text"] for s in row["reasoning_trace"]]
        assert all(set(s) == {"text", "modality", "external_knowledge", "event_id"} for s in item["reasoning_trace"])
    _assert_labels_drawn(_decoded(items[0]["video_path"]), media_dir)


def test_llava_video_export(out_dir, media_dir, tmp_path):
    uri = str(media_dir / "atd_kitchen.mp4")
    summary = export(out_dir, "llava-video", str(tmp_path / "llava"), videos={VIDEO_ID: uri})
    data = json.loads(Path(summary["file"]).read_text())
    assert isinstance(data, list) and len(data) == summary["items"] >= 2
    formats = set()
    clips = set()
    for item in data:
        assert set(item) >= {"id", "video", "conversations"}
        # the labelled unit clip grasp-bench uses, relative to the JSON's folder; not the raw source video
        assert item["video"] == f"video/{VIDEO_ID}_unit000.mp4" and item["unit_id"] == 0
        clips.add(item["video"])
        human, gpt = item["conversations"]
        assert human["from"] == "human" and human["value"].startswith("<video>\n")
        assert gpt["from"] == "gpt" and gpt["value"]
        formats.add(item["format"])
        if item["format"] == "mcq":
            assert re.search(r"^A\) .+\nB\) .+\nC\) .+\nD\) .+$", human["value"], re.MULTILINE)
            assert re.match(r"^[ABCD]\. ", gpt["value"])
    assert formats == {"mcq", "open_ended"}
    assert summary["clips"] == len(clips) == 1
    exported = _decoded(Path(summary["file"]).parent / clips.pop())
    _assert_labels_drawn(exported, media_dir)


def test_qa_parquet_loads_with_hf_datasets(out_dir):
    import datasets

    files = sorted(glob.glob(os.path.join(out_dir, "qa", "*", "*.parquet")))
    ds = datasets.load_dataset("parquet", data_files=files, split="train")
    assert ds.num_rows == OutputStore(out_dir).read_table("qa").num_rows
    row = ds[0]
    assert set(row) >= {"qa_id", "category", "question", "options", "answer", "grounding", "reasoning_trace"}
    assert isinstance(row["reasoning_trace"], list) and "external_knowledge" in row["reasoning_trace"][0]


def test_export_bad_input_is_named(out_dir, tmp_path):
    with pytest.raises(ValueError, match="unknown export format"):
        export(out_dir, "coco", str(tmp_path / "x"), videos={})
    with pytest.raises(KeyError, match=VIDEO_ID):
        export(out_dir, "llava-video", str(tmp_path / "x"), videos={})
    with pytest.raises(FileNotFoundError, match="no QA table"):
        export(str(tmp_path / "empty"), "grasp-bench", str(tmp_path / "y"), videos={})


def test_reexport_is_idempotent_and_drops_what_no_longer_exists(out_dir, media_dir, tmp_path):
    dest = tmp_path / "bench"
    videos = {VIDEO_ID: str(media_dir / "atd_kitchen.mp4")}
    first = export(out_dir, "grasp-bench", str(dest), videos=videos)
    before = {p.name: p.read_text() for p in (dest / "json").glob("*.json")}
    (dest / "json" / f"{VIDEO_ID}__{'0' * 16}.json").write_text("{}")  # an item of an earlier QA table
    (dest / "video" / f"{VIDEO_ID}_unit007.mp4").write_bytes(b"old")  # a unit that no longer exists
    (dest / "json" / "notes.json").write_text("{}")  # not the export's: kept
    again = export(out_dir, "grasp-bench", str(dest), videos=videos)
    assert again == first
    assert {p.name: p.read_text() for p in (dest / "json").glob("*.json") if p.name != "notes.json"} == before
    assert (dest / "json" / "notes.json").exists()
    assert sorted(p.name for p in (dest / "video").iterdir()) == [f"{VIDEO_ID}_unit000.mp4"]
