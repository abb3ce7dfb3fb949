"""`socialtrace render` and the timeline, on the real atd_kitchen clip with tracks built from its
ground-truth head boxes (known positions, so drawn pixels can be checked), plus failed / empty clips."""
from __future__ import annotations

import csv

import av
import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from pipeline import runner, schema
from pipeline.annotate import person_color
from pipeline.cli import app
from pipeline.config import Config
from pipeline.render import (GAZE_TARGET_COLORS, RenderError, TrackIndex, active_events, caption_lines,
                             max_overlap, render_video)
from pipeline.storage import OutputStore
from pipeline.timeline import build_timeline, draw_timeline, write_timeline
from pipeline.video import iter_frames, probe

FPS = 2.0
GAZE_POINT = (0.62, 0.75)  # where both people look: the avocado in Person 1's hands


def _event(event_id, source, kind, start, end, persons, **extra) -> dict:
    row = {"video_id": "atd_kitchen", "event_id": event_id, "source": source, "event_type": kind,
           "start_time": start, "end_time": end, "start_frame": int(start * FPS), "end_frame": int(end * FPS),
           "persons_involved": persons, "confidence": 0.8, "parent_event_ids": [], "details": "{}"}
    row.update(extra)
    return row


def _status(video_id: str, uri: str, **extra) -> dict:
    info = probe(uri)
    status = {"video_id": video_id, "uri": uri, "status": "ok", "error": None, "duration_s": info.duration_s,
              "native_fps": info.native_fps, "width": info.width, "height": info.height, "rotation": 0,
              "n_frames": len(list(iter_frames(uri, FPS, 64, sample_end=True))), "backend": "ground truth"}
    status.update(extra)
    return status


@pytest.fixture(scope="module")
def out(tmp_path_factory, media_dir) -> str:
    """atd_kitchen with both people from the ground-truth head boxes, looking at the avocado; Person 0
    points at Person 1 at 1.5 s. Also a failed clip, a clip with nobody tracked, a clip whose video moved."""
    root = str(tmp_path_factory.mktemp("render") / "out")
    store = OutputStore(root)
    uri = str(media_dir / "atd_kitchen.mp4")
    heads = {(int(r["frame"]), int(r["person"])): [float(r[k]) for k in ("x1", "y1", "x2", "y2")]
             for r in csv.DictReader(open(media_dir / "atd_kitchen_heads.csv"))}
    rows = []
    for frame in iter_frames(uri, FPS, 64, sample_end=True):  # the frames perception samples
        for person_id in (0, 1):
            x1, y1, x2, y2 = heads[(frame.native_frame_idx, person_id)]
            head = [x1 / 1280, y1 / 720, x2 / 1280, y2 / 720]
            width = head[2] - head[0]
            points = person_id == 0 and frame.frame_idx == 3
            rows.append({
                "video_id": "atd_kitchen", "frame_idx": frame.frame_idx, "native_frame_idx": frame.native_frame_idx,
                "t": frame.t, "shot_id": 0, "person_id": person_id, "det_conf": 0.9,
                "bbox": [max(0.0, head[0] - width), head[1], min(1.0, head[2] + width), 0.98], "head_bbox": head,
                "gaze_origin": [(head[0] + head[2]) / 2, (head[1] + head[3]) / 2], "gaze_point": list(GAZE_POINT),
                "gaze_source": "face_mesh", "gaze_conf": 0.8, "gaze_target_type": "hands", "gaze_target_id": 1,
                "pointing": points, "point_conf": 0.9 if points else 0.0, "point_dir": [1.0, 0.0] if points else None,
                "point_origin": [0.45, 0.55] if points else None, "point_target_type": "person" if points else None,
                "point_target_id": 1 if points else None})
    last = rows[-1]["t"] + 1 / FPS  # end_time is one step after the last frame (events/__init__.py)
    events = [
        _event(0, "gaze", "gaze_at", 0.0, last, [0, 1], initiator_id=0, target_type="person", target_person_id=1,
               target_label="hands"),
        _event(1, "gaze", "gaze_at", 0.0, last, [1], initiator_id=1, target_type="object", target_label="avocado"),
        _event(2, "gaze", "joint_attention", 0.0, last, [0, 1], target_type="object", target_label="avocado"),
        _event(3, "gesture", "pointing", 1.5, 1.5, [0, 1], initiator_id=0, target_type="person", target_person_id=1),
    ]
    qa = [{"qa_id": f"q{i}", "video_id": "atd_kitchen", "category": code, "category_name": code, "difficulty": "easy",
           "format": "mcq", "question": "?", "options": ["A) a", "B) b", "C) c", "D) d"], "answer": "A",
           "answer_text": "a", "time_range": list(span), "source_event_ids": [0], "persons": [0], "grounding": [],
           "reasoning_trace": []} for i, (code, span) in enumerate([("T1", (0.0, 3.0)), ("G1", (1.0, 2.0)),
                                                                     ("T2", (0.5, 1.0)), ("C1", (2.5, 3.0))])]
    store.write_table("tracks", "atd_kitchen", schema.table_from_rows(rows, schema.TRACKS_SCHEMA))
    store.write_table("events", "atd_kitchen", schema.table_from_rows(events, schema.EVENTS_SCHEMA))
    store.write_table("qa", "atd_kitchen", schema.table_from_rows(qa, schema.QA_SCHEMA))
    store.write_json(store.status_file("atd_kitchen"), _status("atd_kitchen", uri))

    handshake = str(media_dir / "tvhid_handshake_0001.avi")
    for table in ("tracks", "events", "qa"):
        store.write_table(table, "nobody", schema.empty_table(schema.TABLES[table]))
    store.write_json(store.status_file("nobody"), _status("nobody", handshake))
    store.write_json(store.status_file("moved"), {**_status("moved", handshake), "uri": "/nowhere/moved.mp4"})
    store.write_table("tracks", "moved", schema.empty_table(schema.TRACKS_SCHEMA))
    store.write_json(store.status_file("broken"), {"video_id": "broken", "uri": "/videos/broken.mp4",
                                                   "status": "failed", "error": "/videos/broken.mp4: empty file (0 bytes)"})
    runner.write_run_record(store, Config().replace(sampling={"fps": FPS}), runner.build_manifest(store), {})
    return root


def _decode(path) -> tuple[str, str, list[np.ndarray], float]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
        return stream.codec_context.name, stream.codec_context.pix_fmt, frames, float(stream.average_rate)


def _near(pixels: np.ndarray, rgb, tolerance: float = 45.0) -> bool:
    return bool(np.abs(pixels.reshape(-1, 3).astype(float).mean(axis=0) - np.asarray(rgb, float)).max() < tolerance)


def test_render_one_frame_per_sampled_frame_with_people_drawn(out, tmp_path):
    result = render_video(out, "atd_kitchen", tmp_path / "kitchen.mp4")
    codec, pix_fmt, frames, rate = _decode(result.path)
    assert (codec, pix_fmt) == ("h264", "yuv420p")
    assert len(frames) == result.n_frames == 8  # 3.37 s sampled at 2 fps, and its last frame (3.33 s)
    assert rate == FPS and result.n_people == 2
    height, width = frames[0].shape[:2]
    assert (width, height) == (result.width, result.height) and width % 2 == 0 and height % 2 == 0
    assert width == 1280 and height > 720  # the picture plus the caption strip below it

    tracks = OutputStore(out).read_video_table("tracks", "atd_kitchen").to_pylist()
    first = {r["person_id"]: r for r in tracks if r["frame_idx"] == 0}
    for person_id, row in first.items():
        x1, y1, x2, _ = (np.asarray(row["bbox"]) * [1280, 720, 1280, 720]).astype(int)
        # the box's top edge is drawn in the person's colour (video is BGR-correct end to end)
        y_edge = max(y1, 2)
        assert _near(frames[0][y_edge - 1:y_edge + 2, (x1 + x2) // 2 - 20:(x1 + x2) // 2 + 20], person_color(person_id))
    gx, gy = int(GAZE_POINT[0] * 1280), int(GAZE_POINT[1] * 720)
    assert _near(frames[0][gy - 2:gy + 3, gx - 2:gx + 3], GAZE_TARGET_COLORS["hands"])  # the gaze points' dot
    assert _near(frames[0][-4:, -40:], (24, 24, 24), 12)  # caption strip background

    def green(frame):  # pixels of the pointing ray's colour around where it starts
        x, y = int(0.45 * 1280), int(0.55 * 720)
        patch = frame[y - 12:y + 12, x:x + 40].astype(int)
        return int(((patch[..., 1] > 190) & (patch[..., 0] < 140) & (patch[..., 2] < 140)).sum())
    assert green(frames[3]) > 20 and green(frames[0]) == 0  # Person 0 points only in sample 3


def test_render_native_fps_draws_every_source_frame(out, tmp_path):
    result = render_video(out, "atd_kitchen", tmp_path / "native.mp4", native_fps=True, max_side=640)
    codec, _, frames, rate = _decode(result.path)
    assert codec == "h264" and len(frames) == result.n_frames == 101 and rate == pytest.approx(30.0)
    assert frames[0].shape[1] == 640
    # a native frame between samples carries the nearest sample's overlay: the gaze dot is there
    gx, gy = int(GAZE_POINT[0] * 640), int(GAZE_POINT[1] * 360)
    assert _near(frames[50][gy - 1:gy + 2, gx - 1:gx + 2], GAZE_TARGET_COLORS["hands"])


def test_track_index_uses_nearest_sample_within_half_a_step():
    tracks = pa.Table.from_pylist([{"frame_idx": 0, "t": 0.0, "person_id": 1}, {"frame_idx": 0, "t": 0.0, "person_id": 0},
                                   {"frame_idx": 2, "t": 1.0, "person_id": 0}])
    index = TrackIndex(tracks, fps=2.0)
    assert [r["person_id"] for r in index.rows_at(0.0)] == [0, 1]
    assert [r["person_id"] for r in index.rows_at(0.2)] == [0, 1]
    assert index.rows_at(0.5) == []  # sample 1 had nobody: nothing is drawn, not a neighbour's boxes
    assert index.rows_at(0.8) == index.rows_at(1.1) == [{"frame_idx": 2, "t": 1.0, "person_id": 0}]
    assert index.rows_at(1.3) == []
    assert TrackIndex(tracks.slice(0, 0), 2.0).rows_at(0.0) == []


def test_captions_list_active_events_interactions_first():
    events = [_event(0, "gaze", "gaze_at", 0.0, 3.0, [0], initiator_id=0, target_type="object", target_label="cup"),
              _event(1, "gaze", "mutual_gaze", 1.0, 2.0, [0, 1]),
              _event(2, "gesture", "pointing", 2.5, 2.5, [1], initiator_id=1)]
    assert [e["event_id"] for e in active_events(events, 1.5, 0.25)] == [1, 0]
    assert [e["event_id"] for e in active_events(events, 2.6, 0.25)] == [2, 0]
    assert active_events(events, 3.3, 0.25) == []
    assert caption_lines(active_events(events, 1.5, 0.25)) == ["Person 0 and Person 1 make eye contact",
                                                               "Person 0 looks at the cup"]
    assert caption_lines([events[0]] * 7, limit=3) == ["Person 0 looks at the cup"] * 2 + ["+5 more"]
    assert max_overlap(events, 0.25) == 2 and max_overlap([], 0.25) == 0


def test_an_event_cut_short_still_shows_on_its_last_sampled_frame():
    """tvhid_highfive_0018 at 2 fps: eye contact ends at 2.25 s, halfway to the first sample without B
    (last seen on the sample at 2.0 s); tvhid_handshake_0001's events end at the clip's end, 0.08 s after
    its last sample. Both must show on that last sample, and not on the next."""
    samples = {0: 0.0, 1: 0.5, 2: 1.0, 3: 1.5, 4: 2.0, 5: 2.5}
    cut = dict(_event(0, "gaze", "mutual_gaze", 0.0, 2.25, [0, 1]), start_frame=0, end_frame=4)
    at_clip_end = dict(_event(1, "gaze", "gaze_at", 1.0, 2.085, [0], initiator_id=0, target_type="person",
                              target_person_id=1), start_frame=2, end_frame=4)
    for t, shown in ((2.0, [0, 1]), (2.05, [0, 1]), (2.2, [0]), (2.26, []), (2.5, [])):
        assert [e["event_id"] for e in active_events([cut, at_clip_end], t, 0.25, samples.get)] == shown, t
    # a whole-step event reads as before: up to half a step past its last sample
    whole = dict(_event(2, "gaze", "mutual_gaze", 0.0, 1.5, [0, 1]), start_frame=0, end_frame=2)
    assert active_events([whole], 1.2, 0.25, samples.get) and not active_events([whole], 1.25, 0.25, samples.get)
    assert max_overlap([cut, at_clip_end, whole], 0.25, samples.get) == 3


def test_failed_missing_and_empty_clips_get_clear_messages(out, tmp_path):
    with pytest.raises(RenderError, match="broken: the run did not finish this clip .*empty file"):
        render_video(out, "broken", tmp_path / "b.mp4")
    with pytest.raises(RenderError, match="no clip 'absent'"):
        render_video(out, "absent", tmp_path / "a.mp4")
    with pytest.raises(RenderError, match="moved.*/nowhere/moved.mp4: file not found"):
        render_video(out, "moved", tmp_path / "m.mp4")
    assert not (tmp_path / "m.mp4").exists() and not list(tmp_path.glob(".*partial*"))
    with pytest.raises(RenderError, match="not a socialtrace output folder"):
        render_video(str(tmp_path), "atd_kitchen", tmp_path / "k.mp4")
    with pytest.raises(RenderError, match="must be an .mp4"):
        render_video(out, "atd_kitchen", tmp_path / "k.avi")

    result = render_video(out, "nobody", tmp_path / "nobody.mp4")
    assert result.n_people == 0 and "no people were tracked" in result.message
    _, _, frames, _ = _decode(result.path)
    # tvhid_handshake_0001: 2.0 s from its first frame (pts 0.125) to its last, at 2 fps and its last frame,
    # drawn without overlays
    assert len(frames) == result.n_frames == 5

    cli = CliRunner()
    failed = cli.invoke(app, ["render", out, "--video", "broken", "-o", str(tmp_path / "b.mp4")])
    assert failed.exit_code == 2 and "did not finish this clip" in failed.output
    empty = cli.invoke(app, ["render", out, "--video", "nobody", "-o", str(tmp_path / "n.mp4")])
    assert empty.exit_code == 0 and "no people were tracked" in empty.output


def test_timeline_segments_and_picture(out, tmp_path):
    store = OutputStore(out)
    data = build_timeline(store.read_video_table("tracks", "atd_kitchen"), store.read_video_table("events", "atd_kitchen"),
                          store.read_video_table("qa", "atd_kitchen"), FPS, duration=3.37)
    assert data.person_ids == [0, 1]
    assert [(s.person_id, s.label, s.color) for s in data.gaze] == [
        (0, "-> Person 1's hands", person_color(1)), (1, "-> the avocado", GAZE_TARGET_COLORS["object"])]
    assert [(b.event_type, b.person_ids) for b in data.bands] == [("joint_attention", (0, 1))]
    pointing = data.gestures[0]
    assert (pointing.person_id, pointing.label, pointing.start) == (0, "pointing", 1.5) and pointing.end > 1.5
    # tracked to the clip's end: the last frame (3.33 s) stands for the time up to it, not a step past it
    assert [(s.person_id, s.start, s.end) for s in data.presence] == [(0, 0.0, 3.37), (1, 0.0, 3.37)]
    lanes: dict[int, list] = {}
    for tick in data.qa:  # ticks in one lane never overlap
        lanes.setdefault(tick.lane, []).append((tick.start, tick.end))
    for spans in lanes.values():
        spans.sort()
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    assert sorted(t.category for t in data.qa) == ["C1", "G1", "T1", "T2"]

    path = write_timeline(out, "atd_kitchen", tmp_path / "timeline.png")
    import matplotlib.image as mpimg

    image = (mpimg.imread(path)[..., :3] * 255).astype(int)
    assert image.shape[1] > 1000
    # the joint-attention band and the hatched gaze of Person 0 (Person 1's colour) are in the picture
    assert (np.abs(image - np.asarray(person_color(1))).max(axis=2) < 40).sum() > 500
    with pytest.raises(RenderError, match="did not finish"):
        write_timeline(out, "broken", tmp_path / "x.png")
    empty = draw_timeline(build_timeline(schema.empty_table(schema.TRACKS_SCHEMA), None, None, FPS), tmp_path / "e.png")
    assert mpimg.imread(empty).shape[0] > 100


@pytest.mark.slow
def test_real_run_renders_and_timelines_show_the_interactions(tmp_path_factory, media_dir):
    """Real models on the shared clips: the kitchen's shared attention and the high-five's looks at each
    other reach the timeline; render writes one frame per sampled frame (or per native frame)."""
    tmp = tmp_path_factory.mktemp("real")
    real = str(tmp / "out")
    cli = CliRunner()
    result = cli.invoke(app, ["run", str(media_dir / "atd_kitchen.mp4"), str(media_dir / "tvhid_highfive_0018.avi"),
                              "-o", real, "--fps", "2", "--executor", "local"])
    assert result.exit_code == 0, result.output
    store = OutputStore(real)
    for video_id in ("atd_kitchen", "tvhid_highfive_0018"):
        movie, picture = tmp / f"{video_id}.mp4", tmp / f"{video_id}.png"
        result = cli.invoke(app, ["render", real, "--video", video_id, "-o", str(movie), "--timeline", str(picture)])
        assert result.exit_code == 0, result.output
        codec, pix_fmt, frames, _ = _decode(movie)
        assert (codec, pix_fmt) == ("h264", "yuv420p")
        assert len(frames) == store.read_status(video_id)["n_frames"]
        data = build_timeline(store.read_video_table("tracks", video_id), store.read_video_table("events", video_id),
                              store.read_video_table("qa", video_id), FPS)
        if video_id == "atd_kitchen":  # shared attention on Person 1's hands links the two rows
            assert any(b.event_type == "joint_attention" and set(b.person_ids) >= {0, 1} and b.end - b.start >= 0.5
                       for b in data.bands), data.bands
        else:  # the two men look at each other: each row shows a look at the other
            assert any(g.person_id == 0 and g.label == "-> Person 1" and g.end - g.start >= 2.0 for g in data.gaze), data.gaze
            # B watches A's face while A's hand is up beside it (truth.csv): the timeline must never show
            # that as a look at A's hands (gaze.hands_at_face_margin); at 2 fps B's reads between the
            # looks at A (the camera at 0.5 s, the meeting hands at 1.5 s) keep his look unreported
            assert not any(g.person_id == 1 and "hands" in g.label for g in data.gaze), data.gaze
        assert picture.stat().st_size > 10_000
    native = render_video(real, "tvhid_highfive_0018", tmp / "native.mp4", native_fps=True)
    assert len(_decode(native.path)[2]) == native.n_frames == 67
