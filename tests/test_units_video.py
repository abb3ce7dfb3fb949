"""QA units on real footage.

A "film" built here by concatenating the shared clips (looped, so it is long enough for two units; the
cuts between clips are real): the shot detector finds its shots, tracks of the kitchen segments come from
that clip's ground-truth head boxes, events are written for them, and QA + both exports run through
the product code. Checked: units within the bounds and made of whole shots, one labelled clip per unit
decoded from the film once, each clip starting at its unit's start, item times that point at the
kitchen in their clip, inspect listing the units. Then opencv_vtest.avi (79 s, one shot) through
`socialtrace run` at 1 fps with tight bounds, so its one long shot is split at quiet points.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import av
import cv2
import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline import runner
from pipeline.annotate import person_color
from pipeline.cli import app
from pipeline.config import Config
from pipeline.export import export
from pipeline.schema import EVENTS_SCHEMA, TRACKS_SCHEMA, table_from_rows
from pipeline.storage import OutputStore
from pipeline.summary import summarize_video
from pipeline.video import assign_shots, iter_frames
from pipeline.video_writer import H264Writer
from qa_gen.corpus_balance import balance_corpus
from qa_gen.units import shots_from_frames
from tests.shared_media import SHARED_CLIPS

FILM_FPS = 10.0  # the built film's frame rate: enough for 2 fps sampling, cheap to encode
SIZE = (320, 180)
FPS = 2.0
LOOPS = 12  # 12 x 11.4 s of clips = 137 s: more than one unit's maximum
VIDEO_ID = "film"


def _build_film(media_dir: Path, path: Path) -> list[tuple[str, float, float]]:
    """Concatenate the shared clips LOOPS times (resized to SIZE, FILM_FPS); returns (clip, start, end)
    of every segment in film time."""
    segments = []
    n = 0
    with H264Writer(path, SIZE[0], SIZE[1], FILM_FPS) as writer:
        for _ in range(LOOPS):
            for name in SHARED_CLIPS:
                start = n / FILM_FPS
                for frame in iter_frames(str(media_dir / name), FILM_FPS, 1280):
                    image = cv2.resize(frame.image, SIZE, interpolation=cv2.INTER_AREA)
                    writer.write(np.ascontiguousarray(image[..., ::-1]))
                    n += 1
                segments.append((name, start, n / FILM_FPS))
    return segments


def _kitchen_heads(media_dir: Path) -> dict[tuple[int, int], list[float]]:
    heads = {}
    with open(media_dir / "atd_kitchen_heads.csv") as f:
        for row in csv.DictReader(f):
            heads[(int(row["frame"]), int(row["person"]))] = [float(row[k]) for k in ("x1", "y1", "x2", "y2")]
    return heads


def _person_box(head: list[float]) -> list[float]:
    """The kitchen head box (1280x720 pixels) widened and extended down to the counter, normalised."""
    x1, y1, x2, y2 = head
    w, h = x2 - x1, y2 - y1
    return [max(0.0, x1 - 0.6 * w) / 1280, y1 / 720, min(1280.0, x2 + 0.6 * w) / 1280, min(720.0, y2 + 3.0 * h) / 720]


def _tables(media_dir: Path, segments, times: np.ndarray, shot_ids: np.ndarray) -> tuple[pa.Table, pa.Table]:
    """Tracks for every sampled frame inside a kitchen segment (two people, ground-truth heads) and, per
    kitchen segment, what the media README says happens there: both watch the avocado in Person 1's
    hands (gaze_at x2 + joint_attention)."""
    heads = _kitchen_heads(media_dir)
    rows, events = [], []
    for name, start, end in segments:
        if name != "atd_kitchen.mp4":
            continue
        inside = np.flatnonzero((times >= start - 1e-6) & (times < end - 1e-6))
        for k in inside:
            native = min(100, int(round((times[k] - start) * 30)))
            for pid in (0, 1):
                head = heads[(native, pid)]
                rows.append({"video_id": VIDEO_ID, "frame_idx": int(k), "native_frame_idx": int(k), "t": float(times[k]),
                             "shot_id": int(shot_ids[k]), "person_id": pid, "det_conf": 0.9, "bbox": _person_box(head),
                             "head_bbox": [head[0] / 1280, head[1] / 720, head[2] / 1280, head[3] / 720],
                             "gaze_conf": 0.8, "gaze_target_type": "hands", "gaze_target_id": 1, "pointing": False,
                             "point_conf": 0.0})
        a, b = float(times[inside[0]]), float(times[inside[-1]]) + 1 / FPS
        base = {"video_id": VIDEO_ID, "source": "gaze", "start_time": a, "end_time": b, "start_frame": int(inside[0]),
                "end_frame": int(inside[-1]), "shot_id": int(shot_ids[inside[0]]), "confidence": 0.8,
                "parent_event_ids": [], "target_type": "person", "target_person_id": 1, "target_label": "hands",
                "details": json.dumps({"target_type": "hands", "target_id": 1})}
        first = len(events)
        events += [{**base, "event_id": first, "event_type": "gaze_at", "persons_involved": [0], "initiator_id": 0},
                   {**base, "event_id": first + 1, "event_type": "gaze_at", "persons_involved": [1], "initiator_id": 1},
                   {**base, "event_id": first + 2, "event_type": "joint_attention", "persons_involved": [0, 1]}]
    return table_from_rows(rows, TRACKS_SCHEMA), table_from_rows(events, EVENTS_SCHEMA)


@pytest.fixture(scope="module")
def film(tmp_path_factory, media_dir):
    root = tmp_path_factory.mktemp("film")
    path = root / "film.mp4"
    segments = _build_film(media_dir, path)
    frames = list(iter_frames(str(path), FPS, Config().sampling.max_side))
    times = np.array([f.t for f in frames])
    sampling = Config().sampling
    shot_ids = assign_shots([f.image for f in frames], FPS, sampling.scene_threshold, sampling.scene_min_seconds)
    duration = segments[-1][2]
    shots = shots_from_frames(times, shot_ids, duration)
    tracks, events = _tables(media_dir, segments, times, shot_ids)

    out = root / "out"
    store = OutputStore(str(out))
    config = Config().replace(sampling={"fps": FPS}, qa={"formats": ("mcq", "open_ended")})
    qa, drops, units = runner.derive_qa(events, tracks, config, duration, shots)
    store.write_table("tracks", VIDEO_ID, tracks)
    store.write_table("events", VIDEO_ID, events)
    store.write_table("qa", VIDEO_ID, qa)
    store.write_json(store.path("run.json"), {"config": config.to_dict()})
    store.write_json(store.status_file(VIDEO_ID), {
        "video_id": VIDEO_ID, "status": "ok", "uri": str(path), "duration_s": duration, "n_frames": len(frames),
        "n_events": events.num_rows, "n_qa": qa.num_rows, "qa_dropped": drops,
        "shots": runner.shots_record(shots), "units": units})
    return {"path": path, "segments": segments, "frames": frames, "shots": shots, "units": units, "qa": qa,
            "out": str(out), "root": root}


def test_the_films_cuts_are_found_and_units_are_runs_of_whole_shots(film):
    boundaries = [start for _, start, _ in film["segments"][1:]]
    starts = [s.start for s in film["shots"][1:]]
    # cuts are found at clip boundaries (the first sampled frame after one) and nowhere else; at 2 fps
    # a missed cut between these 2-3 s clips only makes a longer shot
    found = [b for b in boundaries if any(0 <= s - b < 1 / FPS + 1e-6 for s in starts)]
    assert len(found) >= 0.7 * len(boundaries), (len(found), len(boundaries))
    assert all(any(0 <= s - b < 1 / FPS + 1e-6 for b in boundaries) for s in starts)

    units = film["units"]
    assert len(units) >= 2
    config = Config().qa
    shot_starts = {0.0} | set(starts)
    duration = film["segments"][-1][2]
    for unit in units:
        assert config.unit_min_seconds <= unit["end"] - unit["start"] <= config.unit_max_seconds
        assert unit["start"] in shot_starts and (unit["end"] in shot_starts or unit["end"] == duration)
    assert sum(u["n_qa"] for u in units) == film["qa"].num_rows
    assert sum(u["n_events"] for u in units) == 3 * LOOPS
    assert {u for u in film["qa"].column("unit_id").to_pylist()} == {u["unit_id"] for u in units}


def _mad(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(float) - b.astype(float)).mean())


def _exported_items(film) -> list[dict]:
    """The film's QA as exports write it: answer classes balanced across the output folder
    (qa_gen/corpus_balance.py, the run's seed)."""
    kept, _ = balance_corpus(film["qa"].to_pylist(), Config().seed)
    return kept


def _decode(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def test_grasp_bench_writes_one_labelled_clip_per_unit_starting_at_the_unit(film):
    # the kitchen is shown twice, so two units ask the same questions at the same unit times: their ids differ
    # (one json file per item, none overwritten)
    ids = OutputStore(film["out"]).read_video_table("qa", VIDEO_ID).column("qa_id").to_pylist()
    assert len(ids) == len(set(ids)) > 0
    dest = film["root"] / "bench"
    summary = export(film["out"], "grasp-bench", str(dest), videos={VIDEO_ID: str(film["path"])})
    units = {u["unit_id"]: u for u in film["units"]}
    assert summary["clips"] == len(units) and summary["items"] == len(_exported_items(film))
    frames = film["frames"]
    kitchen = [(s, e) for name, s, e in film["segments"] if name == "atd_kitchen.mp4"]
    docs = [json.loads(p.read_text()) for p in sorted((dest / "json").glob("*.json"))]
    assert len(docs) == summary["items"]
    clips = {}
    for unit_id, unit in units.items():
        clip = _decode(dest / "video" / f"{VIDEO_ID}_unit{unit_id:03d}.mp4")
        expected = [f for f in frames if unit["start"] - 1e-6 <= f.t < unit["end"] - 1e-6]
        assert len(clip) == len(expected)
        # the clip's first frame is the film's sampled frame at the unit start, not a neighbour
        first = int(round(unit["start"] * FPS))
        diffs = sorted(_mad(clip[0], frames[k].image) for k in (first - 1, first, first + 1) if 0 <= k < len(frames))
        assert _mad(clip[0], frames[first].image) == diffs[0] < min(10.0, 0.5 * diffs[1]), diffs
        clips[unit_id] = clip
    for doc in docs:
        item = doc["qa"]
        clip = clips[item["unit_id"]]
        assert doc["clip_file"] == f"{VIDEO_ID}_unit{item['unit_id']:03d}.mp4"
        a, b = item["time_range"]
        assert 0 <= a < b <= item["unit_end"] - item["unit_start"] + 1e-6
        # the asked window is a kitchen segment of the film, and the clip shows it at the item's times
        video_a = item["unit_start"] + a
        assert any(s - 1e-6 <= video_a < e for s, e in kitchen), item
        k = int(round(a * FPS))
        assert _mad(clip[k], frames[int(round(video_a * FPS))].image) < 10.0
        # with the labels: Person 0's colour around its box's top-left corner
        assert item["grounding"] and all(g["source"] == "gaze" for g in item["grounding"])
        assert all(step["text"] for step in item["reasoning_trace"])
    # the labels are where the tracks put them (first kitchen frame of the first unit with items)
    tracks = OutputStore(film["out"]).read_video_table("tracks", VIDEO_ID).to_pylist()
    row = min((r for r in tracks if r["person_id"] == 0), key=lambda r: r["t"])
    unit = next(u for u in units.values() if u["start"] <= row["t"] < u["end"])
    image = clips[unit["unit_id"]][int(round((row["t"] - unit["start"]) * FPS))]
    h, w = image.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in np.array(row["bbox"]) * [w, h, w, h])
    edge = image[y1 + 3: y2 - 3, max(0, x1 - 1): x1 + 2]
    assert float((np.abs(edge.astype(float) - person_color(0)).max(axis=-1) < 60).mean()) > 0.5


def test_llava_video_points_at_the_same_unit_clips(film):
    summary = export(film["out"], "llava-video", str(film["root"] / "llava"), videos={VIDEO_ID: str(film["path"])})
    data = json.loads(Path(summary["file"]).read_text())
    assert len(data) == len(_exported_items(film)) and summary["clips"] == len(film["units"])
    for item in data:
        assert item["video"] == f"video/{VIDEO_ID}_unit{item['unit_id']:03d}.mp4"
        assert (Path(summary["file"]).parent / item["video"]).is_file()


def test_inspect_lists_units_with_their_shots_and_counts(film):
    summary = summarize_video(film["out"], VIDEO_ID)
    units = summary["units"]
    assert [u["unit_id"] for u in units] == [u["unit_id"] for u in film["units"]]
    for unit, planned in zip(units, film["units"]):
        assert unit["n_shots"] == len(planned["shot_ids"]) and unit["n_qa"] == planned["n_qa"]
    assert summary["n_shots"] == len(film["shots"])


def test_a_long_single_shot_video_is_split_at_quiet_points(tmp_path, media_dir):
    """opencv_vtest.avi: 79 s from one static camera. With units of 20-40 s its one shot must be split."""
    out = tmp_path / "out"
    config = tmp_path / "config.yaml"
    config.write_text("qa:\n  unit_min_seconds: 20\n  unit_max_seconds: 40\n")
    result = CliRunner().invoke(app, ["run", str(media_dir / "opencv_vtest.avi"), "-o", str(out), "--executor", "local",
                                      "--fps", "0.5", "--config", str(config)])
    assert result.exit_code == 0, result.output
    status = OutputStore(str(out)).read_status("opencv_vtest")
    assert status["status"] == "ok"
    assert len(status["shots"]) == 1 and status["shots"][0]["end"] == pytest.approx(79.4, abs=0.2)
    units = status["units"]
    assert len(units) >= 2 and all(20 <= u["end"] - u["start"] <= 40 for u in units)
    assert all(u["shot_ids"] == [0] for u in units)
    # its walkers' heads are 8-12 px: too small to show where they look, so no gaze, no event, no item
    # (tests/test_units.py cuts busy shots where no event is in progress, on synthetic events)
    assert OutputStore(str(out)).read_video_table("events", "opencv_vtest").num_rows == 0
    assert OutputStore(str(out)).read_video_table("qa", "opencv_vtest").num_rows == 0


def test_the_timeline_puts_items_back_in_video_time(film):
    from pipeline.timeline import build_timeline

    store = OutputStore(film["out"])
    data = build_timeline(store.read_video_table("tracks", VIDEO_ID), store.read_video_table("events", VIDEO_ID),
                          store.read_video_table("qa", VIDEO_ID), FPS)
    kitchen = [(s, e) for name, s, e in film["segments"] if name == "atd_kitchen.mp4"]
    assert len(data.qa) == film["qa"].num_rows
    assert max(tick.start for tick in data.qa) > film["units"][1]["start"]  # unit 1's items are late in the film
    for tick in data.qa:
        assert any(s - 1e-6 <= tick.start < e for s, e in kitchen), tick
