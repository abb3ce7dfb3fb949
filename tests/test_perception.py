"""Perception end to end with the real models on the shared clips (issue #2 acceptance).

Each clip runs once per session (module-scoped fixtures) at 10 fps with the default detector.
"""
from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Iterator

import motmetrics as mm
import numpy as np
import pandas as pd
import pytest

from pipeline import schema
from pipeline.clip import ClipSpec
from pipeline.config import Config
from detectors.keypoints import box_iou_matrix as box_iou
from pipeline.perception import PerceptionWorker
from pipeline.video import VideoError

pytestmark = pytest.mark.slow

FPS = 10.0


@pytest.fixture(scope="module")
def worker() -> Iterator[PerceptionWorker]:
    with closing(PerceptionWorker(Config().replace(sampling={"fps": FPS}))) as worker:
        yield worker


def _run(worker: PerceptionWorker, media_dir: Path, name: str):
    return worker(ClipSpec(video_id=Path(name).stem, uri=str(media_dir / name)))


@pytest.fixture(scope="module")
def kitchen(worker, media_dir):
    return _run(worker, media_dir, "atd_kitchen.mp4")


@pytest.fixture(scope="module")
def highfive(worker, media_dir):
    return _run(worker, media_dir, "tvhid_highfive_0018.avi")


@pytest.fixture(scope="module")
def handshake(worker, media_dir):
    return _run(worker, media_dir, "tvhid_handshake_0001.avi")


@pytest.fixture(scope="module")
def highfive_jump(worker, media_dir):
    return _run(worker, media_dir, "tvhid_highfive_0005.avi")


def _frame(tracks) -> pd.DataFrame:
    return tracks.to_pandas()


def _iou_distance(a: np.ndarray, b: np.ndarray, max_distance: float) -> np.ndarray:
    """1 - IoU between xyxy boxes, NaN beyond ``max_distance`` (motmetrics' convention for no match)."""
    distance = 1.0 - box_iou(a, b)
    distance[~(distance <= max_distance)] = np.nan
    return distance


def _head_boxes(rows: pd.DataFrame) -> np.ndarray:
    """Our head box per row, falling back to the top of the body box (a head-sized square)."""
    boxes = []
    for head, body in zip(rows["head_bbox"], rows["bbox"]):
        if head is not None:
            boxes.append(np.asarray(head, float))
        else:
            x1, y1, x2, _ = body
            boxes.append(np.array([x1, y1, x2, y1 + (x2 - x1) * 16 / 9]))
    return np.array(boxes).reshape(-1, 4)


# --- the table contract -------------------------------------------------------------------------


@pytest.mark.parametrize("clip", ["kitchen", "highfive"])
def test_tracks_table_contract(request, clip: str) -> None:
    result = request.getfixturevalue(clip)
    tracks = result.tracks
    assert tracks.schema.equals(schema.TRACKS_SCHEMA)
    schema.check_values(tracks, "gaze_target_type", schema.GAZE_TARGET_TYPES)
    schema.check_values(tracks, "point_target_type", schema.POINT_TARGET_TYPES)
    schema.check_values(tracks, "gaze_source", schema.GAZE_SOURCES)
    df = _frame(tracks)
    assert set(df["video_id"]) == {result.clip.video_id}
    keys = list(zip(df["frame_idx"], df["person_id"]))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # sorted, one row per person and frame
    assert df["frame_idx"].between(0, result.n_frames - 1).all()
    per_frame_t = df.groupby("frame_idx")["t"].first()
    assert (np.diff(per_frame_t.to_numpy()) > 0).all()
    boxes = np.stack(df["bbox"].to_numpy())
    assert (boxes >= 0).all() and (boxes <= 1).all() and (boxes[:, 2:] > boxes[:, :2]).all()
    assert sorted(df["person_id"].unique()) == list(range(df["person_id"].nunique()))  # 0-based, no holes
    first_seen = df.groupby("person_id")["frame_idx"].min().to_numpy()
    assert (np.diff(first_seen) >= 0).all()  # numbered by first appearance
    assert result.backend and result.objects is None
    for stage in ("decode", "detect", "track", "gaze", "total"):
        assert result.timings[stage] >= 0
    assert result.timings["total"] >= result.timings["detect"]


# --- atd_kitchen: two people, fixed identities, both watching person 1's hands --------------------


def test_kitchen_exactly_two_people_in_nearly_every_frame(kitchen) -> None:
    df = _frame(kitchen.tracks)
    assert kitchen.n_frames == 34  # 3.37 s at 10 fps
    ids_per_frame = df.groupby("frame_idx")["person_id"].apply(frozenset).reindex(range(kitchen.n_frames))
    exactly_two = np.mean([ids == frozenset({0, 1}) for ids in ids_per_frame])
    assert exactly_two >= 0.9, f"only {exactly_two:.0%} of frames show exactly persons 0 and 1"
    left = df[df.person_id == 0]["bbox"].map(lambda b: (b[0] + b[2]) / 2)
    right = df[df.person_id == 1]["bbox"].map(lambda b: (b[0] + b[2]) / 2)
    assert left.max() < right.min()  # person 0 = left, person 1 = right, never swapped


def test_kitchen_identity_against_ground_truth_heads(kitchen, media_dir: Path) -> None:
    df = _frame(kitchen.tracks)
    truth = pd.read_csv(media_dir / "atd_kitchen_heads.csv")
    scale = np.array([1280, 720, 1280, 720])
    accumulator = mm.MOTAccumulator(auto_id=True)
    for frame_idx in range(kitchen.n_frames):
        rows = df[df.frame_idx == frame_idx]
        native = int(rows["native_frame_idx"].iloc[0]) if len(rows) else int(round(frame_idx * 30 / FPS))
        gt = truth[truth.frame == native]
        ours = _head_boxes(rows) * scale
        # Face-mesh head boxes hug the face while the annotation spans the whole head (hair), so a
        # match needs IoU >= 0.3 rather than 0.5.
        distance = _iou_distance(gt[["x1", "y1", "x2", "y2"]].to_numpy(float), ours, max_distance=0.7)
        accumulator.update(gt["person"].tolist(), rows["person_id"].tolist(), distance)
    summary = mm.metrics.create().compute(accumulator, metrics=["idf1", "num_switches"], name="kitchen")
    idf1, switches = float(summary["idf1"].iloc[0]), int(summary["num_switches"].iloc[0])
    assert switches == 0
    assert idf1 >= 0.95, f"IDF1 {idf1:.3f}"


def test_kitchen_both_watch_the_hands_of_person_1(kitchen) -> None:
    """Person 1 watches the avocado in his own hands all clip; person 0 watches them about 56 % of the clip
    and talks into the camera at 0.13-0.9 s and 1.43-1.7 s (truth/NOTES.md)."""
    df = _frame(kitchen.tracks)
    for person, floor in ((0, 0.45), (1, 0.85)):  # measured 0.50 and 0.91 at 10 fps (mesh head pose)
        rows = df[df.person_id == person]
        on_hands = ((rows.gaze_target_type == "hands") & (rows.gaze_target_id == 1)).mean()
        at_face = (rows.gaze_target_type == "person").mean()
        assert on_hands > floor, f"person {person} looks at person 1's hands in only {on_hands:.0%} of frames"
        assert at_face < on_hands
    # "camera" only while person 0 talks into it (to within the truth's +-0.2 s)
    camera_t = df[(df.person_id == 0) & (df.gaze_target_type == "camera")]["t"]
    assert (camera_t.between(0.0, 1.1) | camera_t.between(1.23, 1.9)).all(), sorted(camera_t)


def test_kitchen_nobody_points(kitchen) -> None:
    df = _frame(kitchen.tracks)
    pointing_frames = df[df.pointing]["frame_idx"].nunique()
    assert pointing_frames <= 0.05 * kitchen.n_frames


# --- tvhid_highfive_0018: two people face each other, then the right one leaves ----------------


def test_highfive_both_people_tracked_with_stable_ids(highfive) -> None:
    df = _frame(highfive.tracks)
    before_exit = df[df.t < 2.0]
    frames = before_exit["frame_idx"].nunique()
    first = df[df.frame_idx == df.frame_idx.min()]
    centre_x = first["bbox"].map(lambda b: (b[0] + b[2]) / 2)
    left_id = int(first["person_id"].to_numpy()[np.argmin(centre_x.to_numpy())])
    right_id = int(first["person_id"].to_numpy()[np.argmax(centre_x.to_numpy())])
    assert (left_id, right_id) == (0, 1)
    for person in (0, 1):
        seen = before_exit[before_exit.person_id == person]["frame_idx"].nunique()
        assert seen >= 0.85 * frames, f"person {person} tracked in {seen} of {frames} frames before 2.0 s"
    # the ids never swap sides while both are there
    both = before_exit.pivot_table(index="frame_idx", columns="person_id", values="bbox", aggfunc="first")
    both = both[[0, 1]].dropna()
    assert all((a[0] + a[2]) / 2 < (b[0] + b[2]) / 2 for a, b in zip(both[0], both[1]))


def test_highfive_they_look_at_each_other(highfive) -> None:
    df = _frame(highfive.tracks)
    early = df[df.t < 1.9]
    for person, other in ((0, 1), (1, 0)):
        rows = early[early.person_id == person]
        at_other = ((rows.gaze_target_type == "person") & (rows.gaze_target_id == other)).mean()
        assert at_other > 0.5, f"person {person} looks at person {other} in only {at_other:.0%} of frames"


def test_highfive_is_not_pointing(highfive) -> None:
    df = _frame(highfive.tracks)
    assert not df.pointing.any()


# --- every annotated person, one identity each (shared truth, truth/truth.csv) -------------------


def _match_truth(result, media_dir: Path, clip: str) -> tuple[dict[str, float], dict[int, set[str]]]:
    """Per annotated person the share of their annotated instants at which a tracked person's head
    (head box centre, else the top of the body box) lies within 0.12 of theirs, or their annotated head
    lies in the top 40 % of the tracked body box (a person seen from behind, whose head keypoints are
    guesses: the accuracy harness's rule), one-to-one per instant; and the annotated people each person
    id was matched to."""
    from scipy.optimize import linear_sum_assignment

    truth = pd.read_csv(media_dir / "truth" / "truth.csv")
    truth = truth[truth["clip"] == clip]
    df = _frame(result.tracks)
    times = np.sort(df.t.unique())
    matched = dict.fromkeys(truth.person.unique(), 0)
    labels: dict[int, set[str]] = {}
    for t, group in truth.groupby("t"):
        k = int(np.argmin(np.abs(times - t)))
        if abs(times[k] - t) > 0.3:
            continue
        rows = df[df.t == times[k]]
        heads = np.array([((h[0] + h[2]) / 2, (h[1] + h[3]) / 2) if h is not None else ((b[0] + b[2]) / 2, b[1] + 0.08 * (b[3] - b[1]))
                          for h, b in zip(rows.head_bbox, rows.bbox)]).reshape(-1, 2)
        annotated = group[["head_x", "head_y"]].to_numpy(float)
        distance = np.linalg.norm(annotated[:, None] - heads[None], axis=2)
        bodies = np.stack(rows.bbox.to_numpy()).reshape(-1, 4)
        in_top = ((annotated[:, None, 0] >= bodies[None, :, 0]) & (annotated[:, None, 0] <= bodies[None, :, 2])
                  & (annotated[:, None, 1] >= bodies[None, :, 1])
                  & (annotated[:, None, 1] <= bodies[None, :, 1] + 0.4 * (bodies[None, :, 3] - bodies[None, :, 1])))
        distance[(distance > 0.12) & ~in_top] = 1e6
        for i, j in zip(*linear_sum_assignment(distance)):
            if distance[i, j] < 1e6:
                matched[group.person.iloc[i]] += 1
                labels.setdefault(int(rows.person_id.iloc[j]), set()).add(group.person.iloc[i])
    counts = truth.person.value_counts()
    return {p: matched[p] / counts[p] for p in matched}, labels


@pytest.mark.parametrize("clip, fixture, people", [
    ("tvhid_handshake_0001.avi", "handshake", ("A", "B")),  # A: back to the camera, face never visible
    ("tvhid_highfive_0005.avi", "highfive_jump", ("A", "B", "C")),  # fast motion, blur, arms crossed overhead
    ("tvhid_highfive_0018.avi", "highfive", ("A", "B")),
])
def test_annotated_people_tracked_and_never_merged(request, media_dir: Path, clip, fixture, people) -> None:
    share, labels = _match_truth(request.getfixturevalue(fixture), media_dir, clip)
    for person in people:
        assert share[person] >= 0.9, f"{clip}: person {person} tracked at {share[person]:.0%} of annotated instants"
    merged = {pid: names for pid, names in labels.items() if len(names) > 1}
    assert not merged, f"{clip}: ids matched to several annotated people: {merged}"


# --- segments and bad input ---------------------------------------------------------------------


def test_clip_segment_is_timed_from_its_start(worker, media_dir: Path) -> None:
    result = worker(ClipSpec(video_id="seg", uri=str(media_dir / "atd_kitchen.mp4"), start_s=1.0, end_s=2.0))
    df = _frame(result.tracks)
    assert result.n_frames == 10
    assert df["t"].min() == pytest.approx(0.0, abs=1e-3) and df["t"].max() < 1.0
    assert df["native_frame_idx"].min() == 30
    assert set(df["person_id"]) >= {0, 1}


def test_bad_video_raises_video_error(worker, tmp_path: Path) -> None:
    text = tmp_path / "notes.mp4"
    text.write_text("not a video\n")
    with pytest.raises(VideoError, match=f"^{text}: "):
        worker(ClipSpec(video_id="notes", uri=str(text)))


def test_small_blurred_background_woman_tracked_at_2_fps(media_dir: Path) -> None:
    """tvhid_highfive_0018's background woman C (about 70 px tall, blurred, behind the left man) at the
    default 2 fps: tracked at 4 of her 6 annotated instants, as one id of her own. The 2 fps samples fall
    0.12-0.16 s from two of them (pts 0.60 and 2.60: time counts from the first frame, pts 0.08), where the
    pose model misses her; at 4 fps 5 of 6 (benchmarks/README.md). Counted from pts 0 (samples at pts 0.52
    and 2.52) it was 5 of 6 at 2 fps."""
    with closing(PerceptionWorker(Config().replace(sampling={"fps": 2.0}))) as worker:
        result = _run(worker, media_dir, "tvhid_highfive_0018.avi")
    share, labels = _match_truth(result, media_dir, "tvhid_highfive_0018.avi")
    assert share["C"] >= 4 / 6 - 1e-9 and share["A"] >= 0.9, share
    assert not {pid: names for pid, names in labels.items() if len(names) > 1}, labels
    assert len(set(_frame(result.tracks).person_id)) == 3  # the two men and her, nobody else
