"""Long videos as overlapping segments with one person_id space per video (issue #5).

Planning and merging run on synthetic inputs with known answers; the real-model tests perceive the shared
clips (and videos written from them with PyAV) in segments and compare with whole-video runs and ground truth.
"""
from __future__ import annotations

import math
import re
from contextlib import closing
from pathlib import Path

import av
import cv2
import motmetrics as mm
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import schema
from pipeline.clip import ClipSpec, PerceptionResult, VideoInfo
from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.segments import SegmentError, check_segment_config, merge_segments, perceive_video, plan_segments
from pipeline.storage import OutputStore
from tests.table_checks import assert_tables_equal, run_both_executors, sorted_table
from tests.test_perception import _head_boxes, _iou_distance
from tracking.appearance import DESCRIPTOR_SIZE



# --- planning ------------------------------------------------------------------------------------

def _config(fps: float = 2.0, max_clip: float = 120.0, overlap: float = 2.0) -> Config:
    return Config().replace(sampling={"fps": fps, "max_clip_seconds": max_clip, "segment_overlap_seconds": overlap})


def test_short_or_unknown_videos_are_one_whole_clip():
    config = _config()
    whole = [ClipSpec(video_id="v", uri="v.mp4")]
    assert plan_segments("v", "v.mp4", 30.0, config) == whole
    assert plan_segments("v", "v.mp4", 120.0, config) == whole  # exactly the limit is not split
    assert plan_segments("v", "v.mp4", None, config) == whole
    assert plan_segments("v", "v.mp4", math.nan, config) == whole


def test_a_long_video_is_split_into_equal_overlapping_segments():
    specs = plan_segments("v", "v.mp4", 300.0, _config())
    assert [(s.start_s, s.end_s, s.keep_from_s, s.segment_index) for s in specs] == [
        (0.0, 100.0, 0.0, 0), (98.0, 200.0, 100.0, 1), (198.0, None, 200.0, 2)]
    assert {(s.video_id, s.uri) for s in specs} == {("v", "v.mp4")}


@settings(max_examples=300, deadline=None)
@given(duration=st.floats(0.5, 20000.0), fps=st.sampled_from([0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 29.97]),
       max_clip=st.floats(10.0, 300.0), overlap_fraction=st.floats(0.0, 0.49))
def test_segment_plans_cover_the_video_on_the_sampling_grid(duration, fps, max_clip, overlap_fraction):
    overlap = 2 / fps + overlap_fraction * (max_clip / 2 - 2 / fps)
    if not 2 / fps <= overlap < max_clip / 2:
        return
    specs = plan_segments("v", "v.mp4", duration, _config(fps, max_clip, overlap))
    if duration <= max_clip or len(specs) == 1:
        # whole: no longer than the limit, or over it by less than a sampling step (its instants fit one)
        assert len(specs) == 1 and specs[0].end_s is None
        assert duration <= max_clip or math.ceil(duration * fps - 1e-6) <= math.floor(max_clip * fps + 1e-9)
        return
    on_grid = lambda seconds: abs(seconds * fps - round(seconds * fps)) < 1e-6  # noqa: E731
    bounds = [s.keep_from_s for s in specs]
    assert bounds[0] == 0 and all(b < c for b, c in zip(bounds, bounds[1:]))
    assert specs[-1].end_s is None and bounds[-1] < duration  # the last one is open-ended, not empty
    lengths = [c - b for b, c in zip(bounds, bounds[1:])]
    assert all(length <= max_clip + 1e-9 for length in lengths)
    assert max(lengths) - min(lengths) <= 1 / fps + 1e-9  # equal up to one sampling step
    assert duration - bounds[-1] <= max(lengths) + 1e-9
    for index, spec in enumerate(specs):
        assert spec.segment_index == index and all(on_grid(x) for x in (spec.start_s, spec.keep_from_s))
        if spec.end_s is not None:  # no gap: each ends where the next one's kept part begins
            assert spec.end_s == specs[index + 1].keep_from_s
        expected_start = 0.0 if index == 0 else spec.keep_from_s - math.ceil(overlap * fps - 1e-9) / fps
        assert spec.start_s == pytest.approx(expected_start)
        assert index == 0 or spec.keep_from_s - spec.start_s >= overlap - 1e-9  # decodes the whole overlap


@pytest.mark.parametrize("sampling, message", [
    ({"segment_overlap_seconds": 60.0}, r"segment_overlap_seconds \(60 s\) must be less than half of sampling.max_clip_seconds \(120 s\)"),
    ({"segment_overlap_seconds": 0.5}, r"must cover at least two sampled frames: >= 2 / sampling.fps = 1 s"),
    ({"fps": 0.0}, r"sampling.fps must be positive"),
])
def test_bad_segment_config_is_rejected_with_the_reason(sampling, message):
    config = Config().replace(sampling=sampling)
    with pytest.raises(ValueError, match=message):
        check_segment_config(config.sampling)
    with pytest.raises(ValueError, match=message):
        plan_segments("v", "v.mp4", 500.0, config)
    if sampling.get("fps", 1) > 0:  # a video that needs no split never trips on it
        assert len(plan_segments("v", "v.mp4", 10.0, config)) == 1


# --- merging (synthetic segments with known answers) ---------------------------------------------

FPS = 2.0
INFO = VideoInfo(uri="v.mp4", duration_s=12.0, native_fps=30.0, width=1280, height=720, rotation=0,
                 n_native_frames=360, codec="h264")


def _colour(bin_index: int, noise: float = 0.0) -> list[float]:
    descriptor = np.full(DESCRIPTOR_SIZE, noise, np.float32)
    descriptor[bin_index] = 1.0
    return (descriptor / descriptor.sum()).tolist()


RED, GREEN, BLUE, GREY = _colour(0), _colour(16, 0.002), _colour(32), _colour(50)


def _box(centre_x: float, width: float = 0.2) -> list[float]:
    return [centre_x - width / 2, 0.2, centre_x + width / 2, 0.9]


def _truth() -> dict[str, dict]:
    """The video (24 frames at 2 fps, 12 s): who is where in which frame, their colours, whom they look at.

    A crosses both boundaries (4 s, 8 s), drifting right; B is seen until 2.5 s, leaves, and comes back at
    5.5 s in another place (same green shirt); D is only in frames 6-7 (3.0-3.5 s), the first segment's
    kept part and the second's overlap; C (blue) appears after the cut at 9.0 s. A looks at B's face while
    both are there in the second segment; C looks at A's hands; A points at object 7 in frame 20."""
    return {
        "A": {"frames": range(0, 24), "x": lambda f: 0.2 + 0.005 * f, "colour": RED},
        "B": {"frames": [*range(0, 6), *range(11, 24)], "x": lambda f: 0.7 if f < 6 else 0.55, "colour": GREEN},
        "D": {"frames": range(6, 8), "x": lambda f: 0.9, "colour": GREY},
        "C": {"frames": range(18, 24), "x": lambda f: 0.4, "colour": BLUE},
    }


def _segment(index: int, start_frame: int, keep_from: int, end_frame: int | None, local_ids: dict[str, int],
             shot_change_at: int | None = None, n_segments: int = 3) -> PerceptionResult:
    """What perception would hand back for one segment of the ``_truth`` video: local frame numbers and
    times from the segment start, the segment's own (permuted) person ids and shot ids."""
    end = end_frame if end_frame is not None else 24
    frames = list(range(start_frame, end))
    shots = [int(shot_change_at is not None and f >= shot_change_at) for f in frames]
    truth = _truth()
    rows = []
    for local_frame, video_frame in enumerate(frames):
        present = {name: person for name, person in truth.items() if video_frame in person["frames"]}
        for name, person in present.items():
            row = {
                "video_id": "v", "frame_idx": local_frame, "native_frame_idx": video_frame * 15,
                "t": local_frame / FPS, "shot_id": shots[local_frame], "person_id": local_ids[name],
                "det_conf": 0.9, "bbox": _box(person["x"](video_frame)), "gaze_conf": 0.8,
                "gaze_target_type": "elsewhere", "pointing": False, "point_conf": 0.0,
            }
            if name == "A" and "B" in present and 11 <= video_frame <= 15:
                row.update(gaze_target_type="person", gaze_target_id=local_ids["B"])
            if name == "C" and "A" in present:
                row.update(gaze_target_type="hands", gaze_target_id=local_ids["A"])
            if name == "A" and video_frame == 20:
                row.update(pointing=True, point_conf=0.9, point_target_type="object", point_target_id=7)
            rows.append(row)
    rows.sort(key=lambda r: (r["frame_idx"], r["person_id"]))
    seen = {name: [f for f in frames if f in truth[name]["frames"]] for name in local_ids}
    identities = schema.table_from_rows(
        [{"person_id": local_ids[name], "appearance": truth[name]["colour"], "n_frames": len(seen[name])}
         for name in local_ids if seen[name]], schema.IDENTITIES_SCHEMA)
    frames_table = schema.table_from_rows(
        [{"frame_idx": k, "t": k / FPS, "native_frame_idx": f * 15, "shot_id": shots[k]} for k, f in enumerate(frames)],
        schema.SAMPLED_FRAMES_SCHEMA)
    clip = ClipSpec(video_id="v", uri="v.mp4", start_s=start_frame / FPS,
                    end_s=None if end_frame is None else end_frame / FPS, segment_index=index, keep_from_s=keep_from / FPS)
    return PerceptionResult(clip=clip, info=INFO, tracks=schema.table_from_rows(rows, schema.TRACKS_SCHEMA),
                            objects=None, n_frames=len(frames), timings={"detect": 1.0, "total": 2.0},
                            backend="synthetic", frames=frames_table, identities=identities, n_segments=1)


def _three_segments() -> list[PerceptionResult]:
    # 12 s at 2 fps, max 4 s, overlap 1 s: keep [0, 4), [4, 8), [8, end); decode from 0, 3 s, 7 s
    return [
        _segment(0, 0, 0, 8, {"A": 0, "B": 1, "D": 2, "C": 3}),
        _segment(1, 6, 8, 16, {"B": 0, "D": 1, "A": 2, "C": 3}),  # ids permuted on purpose
        _segment(2, 14, 16, None, {"C": 0, "A": 1, "B": 2, "D": 3}, shot_change_at=18),
    ]


def _merge_config() -> Config:
    return _config(fps=FPS, max_clip=4.0, overlap=1.0)


def test_synthetic_plan_matches_the_segments_used_below():
    specs = plan_segments("v", "v.mp4", 12.0, _merge_config())
    assert [(s.start_s, s.end_s, s.keep_from_s) for s in specs] == [
        (r.clip.start_s, r.clip.end_s, r.clip.keep_from_s) for r in _three_segments()]


def test_merge_gives_one_video_with_one_person_id_space():
    merged = merge_segments(_three_segments(), _merge_config())
    tracks = merged.tracks
    assert tracks.schema.equals(schema.TRACKS_SCHEMA)
    df = tracks.to_pandas()
    keys = list(zip(df.frame_idx, df.person_id))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    # every frame exactly once, numbered over the video, timed from its start
    assert merged.n_frames == 24 and merged.n_segments == 3
    assert merged.frames.column("frame_idx").to_pylist() == list(range(24))
    assert merged.frames.column("t").to_pylist() == [f / FPS for f in range(24)]
    assert (df.t == df.frame_idx / FPS).all() and (df.native_frame_idx == df.frame_idx * 15).all()
    # ids by first appearance, ties left to right: A (left) 0, B 1, D 2, C 3; B keeps its id after leaving
    expected = {0: _truth()["A"]["frames"], 1: _truth()["B"]["frames"], 2: _truth()["D"]["frames"],
                3: _truth()["C"]["frames"]}
    for person, frames in expected.items():
        assert df[df.person_id == person].frame_idx.tolist() == list(frames), person
    # shots: no cut at 4 s or 8 s; the third segment's cut at 9 s continues the video's numbering
    assert df.groupby("frame_idx").shot_id.first().tolist() == [0] * 18 + [1] * 6
    assert merged.frames.column("shot_id").to_pylist() == [0] * 18 + [1] * 6
    # targets follow the people: A looks at B's face, C at A's hands, A's object target is untouched
    a_looks = df[(df.person_id == 0) & (df.gaze_target_type == "person")]
    assert a_looks.frame_idx.tolist() == list(range(11, 16)) and set(a_looks.gaze_target_id) == {1}
    c_looks = df[df.person_id == 3]
    assert set(c_looks.gaze_target_type) == {"hands"} and set(c_looks.gaze_target_id) == {0}
    pointing = df[df.pointing]
    assert pointing[["frame_idx", "person_id", "point_target_type", "point_target_id"]].values.tolist() == [
        [20, 0, "object", 7]]
    # the video's identities, timings summed, the whole video's clip and probe
    assert merged.identities.column("person_id").to_pylist() == [0, 1, 2, 3]
    assert merged.identities.column("n_frames").to_pylist() == [24, 19, 2, 6]
    assert merged.timings == {"detect": 3.0, "total": 6.0}
    assert merged.clip == ClipSpec(video_id="v", uri="v.mp4") and merged.info == INFO


def test_merge_does_not_depend_on_the_order_results_arrive_in():
    segments = _three_segments()
    in_order = merge_segments(segments, _merge_config()).tracks
    assert in_order.equals(merge_segments(segments[::-1], _merge_config()).tracks)


def test_a_cut_exactly_at_a_boundary_starts_a_new_shot():
    # the second segment's own shot ids change between its last overlap frame (7) and its first kept one (8)
    segments = _three_segments()
    segments[1] = _segment(1, 6, 8, 16, {"B": 0, "D": 1, "A": 2, "C": 3}, shot_change_at=8)
    shots = merge_segments(segments, _merge_config()).frames.column("shot_id").to_pylist()
    assert shots == [0] * 8 + [1] * 10 + [2] * 6


def test_someone_new_in_other_colours_after_a_boundary_gets_a_new_id():
    # B comes back at 5.5 s in blue instead of green: not the same person
    segments = _three_segments()
    identities = segments[1].identities.to_pylist()
    for row in identities:
        if row["person_id"] == 0:  # B's local id in segment 1
            row["appearance"] = BLUE
    segments[1].identities = schema.table_from_rows(identities, schema.IDENTITIES_SCHEMA)
    df = merge_segments(segments, _merge_config()).tracks.to_pandas()
    assert df[df.person_id == 1].frame_idx.tolist() == list(range(0, 6))  # the first B ends at 2.5 s
    newcomer = df[df.frame_idx == 11].sort_values("person_id").person_id.tolist()
    assert newcomer == [0, 3]  # A, and the newcomer numbered after D (2) by first appearance
    assert df.person_id.nunique() == 5  # A, B, D, the newcomer, C (C is blue too, but seen with the newcomer)


def _with_heads(result: PerceptionResult, local_b: int, short_from: int | None = None) -> PerceptionResult:
    """``result`` with a head box (0.1 tall) on every row, and B's box (local id ``local_b``) cut short at the
    bottom, to 0.35 tall, from video frame ``short_from`` on (hidden behind something in front)."""
    rows = result.tracks.to_pylist()
    for row in rows:
        x0, y0, x1, _ = row["bbox"]
        row["head_bbox"] = [(x0 + x1) / 2 - 0.04, y0, (x0 + x1) / 2 + 0.04, y0 + 0.1]
        if short_from is not None and row["person_id"] == local_b and row["native_frame_idx"] // 15 >= short_from:
            row["bbox"] = [x0, y0, x1, y0 + 0.35]
    result.tracks = schema.table_from_rows(rows, schema.TRACKS_SCHEMA)
    return result


def test_someone_back_after_a_boundary_half_hidden_keeps_the_id_by_the_size_of_the_head():
    """B leaves at 2.5 s and is back at 5.5 s, in the next segment, with the lower half of the body hidden:
    the box is half as tall, the head the same. The hand-over measures people as stitching does (box, or 7.5
    head heights: tracking.stitching.person_scales), so B keeps the id; with no head boxes the size gate
    makes a new person of the half-hidden box."""
    def merged(heads: bool):
        segments = _three_segments()
        if heads:
            segments = [_with_heads(r, local_b) for r, local_b in zip(segments, (1, 0, 2))]
            segments[1] = _with_heads(segments[1], 0, short_from=11)
        else:
            segments[1] = _with_heads(segments[1], 0, short_from=11)
            rows = segments[1].tracks.to_pylist()
            for row in rows:
                row["head_bbox"] = None
            segments[1].tracks = schema.table_from_rows(rows, schema.TRACKS_SCHEMA)
        return merge_segments(segments, _merge_config()).tracks.to_pandas()

    df = merged(heads=True)
    assert df[df.person_id == 1].frame_idx.tolist() == list(_truth()["B"]["frames"])
    assert df.person_id.nunique() == 4
    df = merged(heads=False)
    assert df[df.person_id == 1].frame_idx.tolist() == list(range(0, 6))
    assert df.person_id.nunique() == 5


def test_merge_rejects_mixed_or_incomplete_segments():
    segments = _three_segments()
    with pytest.raises(ValueError, match="segment indices"):
        merge_segments(segments[1:], _merge_config())
    other = _segment(1, 6, 8, 16, {"B": 0, "D": 1, "A": 2, "C": 3})
    other.clip = ClipSpec(video_id="w", uri="w.mp4", start_s=3.0, end_s=8.0, segment_index=1, keep_from_s=4.0)
    with pytest.raises(ValueError, match="segments of different videos"):
        merge_segments([segments[0], other, segments[2]], _merge_config())
    segments[2].frames = None
    with pytest.raises(ValueError, match=r"v.mp4: merging segments: segment\(s\) \[2\] carry no frames table"):
        merge_segments(segments, _merge_config())
    whole = _segment(0, 0, 0, None, {"A": 0, "B": 1, "D": 2, "C": 3})
    assert merge_segments([whole], _merge_config()) is whole  # a video perceived whole is left as it is


# --- real clips ------------------------------------------------------------------------------------

def _letterbox(image: np.ndarray, width: int, height: int) -> np.ndarray:
    scale = min(width / image.shape[1], height / image.shape[0])
    size = (int(round(image.shape[1] * scale)), int(round(image.shape[0] * scale)))
    out = np.zeros((height, width, 3), np.uint8)
    y, x = (height - size[1]) // 2, (width - size[0]) // 2
    out[y:y + size[1], x:x + size[0]] = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return out


def write_video(path: Path, sources: list[Path], width: int = 640, height: int = 360, fps: int = 30) -> Path:
    """Every frame of ``sources`` one after another, letterboxed to one size, as H.264 with its header
    first (so a truncated copy still opens and says how long it should be)."""
    with av.open(str(path), "w", options={"movflags": "faststart"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "20", "preset": "veryfast"}
        for source in sources:
            with av.open(str(source)) as reader:
                for frame in reader.decode(video=0):
                    image = _letterbox(frame.to_ndarray(format="rgb24"), width, height)
                    for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                        container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


KITCHEN_CONFIG = _config(fps=10.0, max_clip=1.5, overlap=0.5)


@pytest.fixture(scope="module")
def kitchen_runs(media_dir):
    """atd_kitchen (3.4 s) at 10 fps perceived whole and in 1.5 s segments by one worker."""
    from pipeline.perception import PerceptionWorker

    uri = str(media_dir / "atd_kitchen.mp4")
    with closing(PerceptionWorker(KITCHEN_CONFIG)) as worker:
        return worker(ClipSpec(video_id="atd_kitchen", uri=uri)), perceive_video("atd_kitchen", uri, worker, KITCHEN_CONFIG)


@pytest.mark.slow
def test_kitchen_in_segments_keeps_two_identities(kitchen_runs, media_dir):
    whole, segmented = kitchen_runs
    assert segmented.n_segments == 3 and segmented.n_frames == whole.n_frames == 34
    assert segmented.tracks.schema.equals(schema.TRACKS_SCHEMA)
    df = segmented.tracks.to_pandas()
    assert set(df.person_id) == {0, 1}
    # the same sampled frames at the same times as the whole run
    assert segmented.frames.column("t").to_pylist() == pytest.approx(whole.frames.column("t").to_pylist(), abs=1e-9)
    assert segmented.frames.column("native_frame_idx").to_pylist() == whole.frames.column("native_frame_idx").to_pylist()

    truth = pd.read_csv(media_dir / "atd_kitchen_heads.csv")
    scale = np.array([1280, 720, 1280, 720])
    accumulator = mm.MOTAccumulator(auto_id=True)
    for frame_idx in range(segmented.n_frames):
        rows = df[df.frame_idx == frame_idx]
        gt = truth[truth.frame == int(rows["native_frame_idx"].iloc[0])] if len(rows) else truth.iloc[:0]
        distance = _iou_distance(gt[["x1", "y1", "x2", "y2"]].to_numpy(float), _head_boxes(rows) * scale, max_distance=0.7)
        accumulator.update(gt["person"].tolist(), rows["person_id"].tolist(), distance)
    summary = mm.metrics.create().compute(accumulator, metrics=["idf1", "num_switches"], name="segments")
    idf1, switches = float(summary["idf1"].iloc[0]), int(summary["num_switches"].iloc[0])
    assert switches == 0 and idf1 >= 0.95, f"IDF1 {idf1:.3f}, {switches} switches"


@pytest.mark.slow
def test_people_who_come_back_in_a_later_segment_keep_their_ids(media_dir, tmp_path):
    """kitchen, then the high-five clip, then the kitchen again, in 2.5 s segments at 4 fps: the kitchen
    people of the last part are matched by colours to those of the first part (no segment holds both)."""
    from pipeline.perception import PerceptionWorker

    kitchen, highfive = media_dir / "atd_kitchen.mp4", media_dir / "tvhid_highfive_0018.avi"
    uri = str(write_video(tmp_path / "reunion.mp4", [kitchen, highfive, kitchen]))
    config = _config(fps=4.0, max_clip=2.5, overlap=1.0)
    with closing(PerceptionWorker(config)) as worker:
        result = perceive_video("reunion", uri, worker, config)
    # 36 samples at 4 fps and the video's last frame, over half a step after them (iter_frames' sample_end)
    assert result.n_segments == 4 and result.n_frames == 37
    df = result.tracks.to_pandas()
    part = np.digitize(df.t, [101 / 30, 168 / 30])  # 101 kitchen frames, then 67 high-five frames, at 30 fps
    first, middle, last = (df[part == k] for k in range(3))

    def left_to_right(rows: pd.DataFrame) -> list[int]:
        """The people of a part, ordered by where they stand (those seen in at least half its frames)."""
        frames = rows.frame_idx.nunique()
        steady = rows.groupby("person_id").filter(lambda g: len(g) >= frames / 2)
        centre = steady.bbox.map(lambda b: (b[0] + b[2]) / 2)
        return centre.groupby(steady.person_id).mean().sort_values().index.tolist()

    assert left_to_right(first) == [0, 1]
    assert left_to_right(last) == [0, 1]  # the same two people, the same sides, the same ids
    highfive_people = left_to_right(middle)
    assert len(highfive_people) == 2 and not set(highfive_people) & {0, 1}
    shots = result.frames.to_pandas().groupby(np.digitize(result.frames.column("t").to_numpy(), [101 / 30, 168 / 30]))
    assert [sorted(set(g.shot_id)) for _, g in shots] == [[0], [1], [2]]  # both cuts found, across boundaries


# --- executors -------------------------------------------------------------------------------------

SEGMENTED_CONFIG = _config(fps=4.0, max_clip=1.5, overlap=0.5).replace(run={"workers": 2})


def _truncated_copy(media_dir: Path, directory: Path) -> Path:
    """atd_kitchen re-encoded with its header first, cut at 80 % of its bytes: it opens, says 3.37 s,
    and its frames stop at about 2.4 s, inside the last of its three segments."""
    whole = write_video(directory / "kitchen_whole.mp4", [media_dir / "atd_kitchen.mp4"])
    data = whole.read_bytes()
    truncated = directory / "kitchen_cut.mp4"
    truncated.write_bytes(data[: int(len(data) * 0.8)])
    whole.unlink()
    return truncated


@pytest.fixture(scope="module")
def executor_runs(media_dir, ray_instance, tmp_path_factory):
    """A long (segmented) video and a truncated one through both executors."""
    corpus = tmp_path_factory.mktemp("segments_corpus")
    videos = [InputVideo("atd_kitchen", str(media_dir / "atd_kitchen.mp4")),
              InputVideo("kitchen_cut", str(_truncated_copy(media_dir, corpus)))]
    runs = run_both_executors(videos, SEGMENTED_CONFIG, tmp_path_factory.mktemp)
    return videos, {executor: (store, {s["video_id"]: s for s in statuses}) for executor, (store, statuses) in runs.items()}


@pytest.mark.slow
def test_ray_and_local_executors_merge_segments_into_equal_tables(executor_runs):
    _, outs = executor_runs
    (local, local_statuses), (ray_store, ray_statuses) = outs["local"], outs["ray"]
    for statuses in (local_statuses, ray_statuses):
        assert statuses["atd_kitchen"]["status"] == "ok", statuses["atd_kitchen"].get("error")
        assert statuses["atd_kitchen"]["n_segments"] == 3 and statuses["atd_kitchen"]["n_frames"] == 14
    for name in ("tracks", "events", "qa"):
        assert_tables_equal(sorted_table(ray_store, name), sorted_table(local, name), name)
    tracks = sorted_table(ray_store, "tracks")
    assert set(tracks.column("person_id").to_pylist()) == {0, 1}
    assert tracks.column("frame_idx").to_pylist()[-1] == 13  # one video, its frames numbered 0..13
    manifests = [_manifest(store) for store in (local, ray_store)]
    assert manifests[0].equals(manifests[1])
    assert manifests[0].column("n_segments").to_pylist() == [3, None]


def _manifest(store: OutputStore):
    import pyarrow.parquet as pq

    return pq.read_table(store.path("manifest.parquet")).drop_columns(["wall_s"]).sort_by("video_id")


@pytest.mark.slow
def test_a_failing_segment_fails_its_video_with_the_segment_named(executor_runs):
    videos, outs = executor_runs
    uri = videos[1].uri
    for executor, (store, statuses) in outs.items():
        status = statuses["kitchen_cut"]
        assert status["status"] == "failed", executor
        assert re.fullmatch(re.escape(f"{uri}: segment 3 of 3 [2.00, end) s: truncated: frames end at ") + r"2\.\d\d"
                            + re.escape(" s but the header declares 3.37 s"), status["error"]), (executor, status["error"])
        assert store.read_status("kitchen_cut")["status"] == "failed"
        for table in ("tracks", "events", "qa"):  # nothing partial is left
            assert store.read_video_table(table, "kitchen_cut") is None


def test_segment_errors_name_the_file_the_segment_and_the_reason():
    spec = ClipSpec(video_id="v", uri="/data/v.mp4", start_s=58.0, end_s=120.0, segment_index=1, keep_from_s=60.0)
    error = SegmentError(spec, 3, RuntimeError("CUDA out of memory"))
    assert str(error) == "/data/v.mp4: segment 2 of 3 [58.00, 120.00) s: RuntimeError: CUDA out of memory"
