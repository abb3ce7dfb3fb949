"""Invariance to the camera (DESIGN.md §10, issue 22 item 6): a mirrored and a half-resolution copy of shared clips
must give the same people, the same gaze targets and the same events as the original.

Four short clips, two-person and group scenes, from the session's default run of the truth clips, and one
`socialtrace run` (local executor, default settings) over their edits (tests/camera_edits.py, built in tmp);
pipeline/camera_invariance.py compares each edit's tables with the original's. The issue's targets: mirror >= 0.9 of (frame, person) rows with the same gaze target
and every event found again; half resolution >= 0.85 and >= 0.8 of events.

GAP: today's code is below those targets; the floors below are set a few rows under what it measures (2 fps).
Since every model reads each image as it is and mirrored (detectors/mirror.py): mirror 77/94 rows = 0.82,
events 21/23 (before: 69/95 = 0.726, 20/25); half 58/92 = 0.63, events 10/23 (before: 68/95 = 0.716, 18/25).
Since time counts from a clip's first frame in every container (tvhid_highfive_0018.avi's first frame has pts
0.08 s, its MP4 edits 0: the 2 fps grid had fallen on other frames of the copies) and the edits are encoded
with one thread (several encoded the same frames differently from run to run, by a few rows either way):
mirror 78/92 = 0.85, events 22/24; half 66/92 = 0.72, events 15/24, the same on three runs.
The half-resolution floors went down with that change: the truth rows rose on both sets and the mirror rows
by 0.1, while yakhyo_classroom_group's half-resolution copy, whose eyes are 5-8 px wide, lost 9 rows and most
of its events (single looks of 0.5 s that flip with 15-20 degrees of gaze). Most half-resolution disagreements come
from the eye cues fading below gaze.eye_cue_min_pixels (an eye 10-12 px wide at full size is 6-8 px at half, so
the lid cue of a down-look drops and the look reads 15-22 degrees higher: hands -> camera / unknown)
(benchmarks/README.md, "Camera invariance", "Decisions that weigh their margin" and "Every model reads the
image mirrored too"). Raise the floors toward the targets as the gaze work lands.
The edits are now lossless (x264 crf 0): at crf 16 x264 encoded the same frames differently on two of four runs
even with one thread, so the figures still moved between runs. Lossless, on every run: mirror 78/91 = 0.857,
events 23/24; half 69/92 = 0.75, events 15/24. For scale, the same clips merely decoded and encoded again
losslessly (benchmarks/bench_invariance.py's "reencode": the colour conversions' +-1 grey level is all that
changes) agree on 80/91 rows: most of what the mirror still changes is that noise, not the mirror.
With gaze.unread_eyes_uncertainty_deg (a head read whose unread eyes could be on another person names nobody):
half 68/92 = 0.74, events 14/24; the mirror unchanged. With a torso seen from behind needing sure face points
and tracks reaching back to their weaker first sightings: mirror 80/93 = 0.86, 23/24; half 70/92 = 0.76, 14/24.
2026-11-27 (bench_invariance, these four clips): mirror 91/100 = 0.91, events 19/21; half 76/100 = 0.76,
events 14/21, since no breaking off or sudden shift rests on a person's last frame alone (such events came and
went with the edit; the floor on the mirror's events is one event under 19/21).
2026-11-27, later: mirror 93/100 = 0.93, events 20/21 (the mirrored hug no longer gives one face to both men,
test_no_face_is_read_for_two_people); half unchanged. Floors: mirror rows 0.9 (the target), events 0.9.
Then no sudden gaze shift to or from a read of body keypoints (yakhyo's C bowing her head): mirror 94/101 = 0.93,
events 20/20, the target; half 77/101 = 0.76, events 13/20. The mirror's events floor is one event under, 0.95.
A digital zoom too (tests/camera_edits.ZOOM: the centre 80 % of the frame enlarged to the full size, scored on
the people, targets and events it keeps in view): 60/69 = 0.87 of rows, events 14/16; floors two rows and one
event under, 0.83 and 0.8.
With a smile's raised lower lids no longer read as a look down (gaze.smile_mouth_width): mirror 97/101 = 0.96,
events 21/21; half 80/101 = 0.79, events 14/21; zoom 59/69 = 0.86, events 14/16. The half floor on rows rises to
0.76, three rows under.
With the eyes of a face too small to read them choosing among the people the head's range holds
(pipeline.perception.associate_targets; benchmarks/README.md, "Small eyes choose, the head bounds"): half
90/101 = 0.89, events 17/21 = 0.81; mirror and zoom unchanged. The half floors are now the issue's targets
(0.85, 0.8), and the mirror's are its targets too (0.9, every event: 97/101, 21/21 measured); the zoom's
(0.9, every event) remain a GAP.
Black bars around the picture (tests/camera_edits.BARS: letterbox and pillarbox at once; pipeline/picture.py reads
the picture alone), on three of the four clips (CLIPS_OF[BARS]): 82/89 = 0.92 of rows, events 16/17 (with the hug too,
94/101 and 20/21; before the picture was read alone, a pillarbox alone kept 40 of 59 of yakhyo's rows). The rest
is yakhyo's A, cut by the picture's bottom edge at 2.5-3.5 s: the scaler mixes 2-3 px of the bar into the
picture's edge (mean 4.6 grey levels there, 0.09 inside), and her borderline look at the lens (0.30-0.45
confidence) turns 7 degrees. Floor: rows 0.9, events one under, 0.9; the target is the mirror's.
A blurred fill beside the picture (tests/camera_edits.FILL), on tvhid_highfive_0018 (FILL's CLIPS_OF): 14/14 rows,
3/3 events (bench_invariance over the 11 truth clips: 160/174, 38/39; before the fill was cut off, 122/185 and
26/39, its blurred copies of the people being people of their own). Floor: the mirror's.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline import runner
from pipeline.camera_invariance import InvarianceScore, RowComparison, compare_outputs, compare_runs, overall
from pipeline.accuracy import load_clip_run
from pipeline.consistency import check_clip
from pipeline.inputs import sanitise_id
from pipeline.picture import find_picture
from pipeline.runner import read_run_config, rederive_clip
from pipeline.storage import OutputStore
from pipeline.video import iter_frames
from tests.camera_edits import BARS, EDITS, FILL, ZOOM, ZOOM_WINDOW, make_edit, shown_part
from tests.shared_media import run_socialtrace

pytestmark = pytest.mark.slow

# two-person (a high five, a kitchen, a hug) and group (seven children) scenes, 2.6-4 s each
CLIPS = ("tvhid_highfive_0018.avi", "atd_kitchen.mp4", "mmaction2_hug_lab.mp4", "yakhyo_classroom_group.mp4")

# the edits these tests build: the two, a digital zoom (scored on what it keeps in view), black bars and a
# blurred fill beside the picture (a phone video posted in a wider frame)
TEST_EDITS = (*EDITS, ZOOM, BARS, FILL)
# black bars around all but the 1080p hug (its lossless 2496x1296 copy alone cost the suite ~15 s); the fill, whose
# blurred copies of the people were people of their own, on the high five alone (the window code is the bars')
CLIPS_OF = {BARS: ("tvhid_highfive_0018.avi", "atd_kitchen.mp4", "yakhyo_classroom_group.mp4"),
            FILL: ("tvhid_highfive_0018.avi",)}
# the acceptance targets (a zoom keeps what it shows, bars and fills add nothing: the mirror's)
TARGET = {"mirror": (0.9, 1.0), "half": (0.85, 0.8), ZOOM: (0.9, 1.0), BARS: (0.9, 1.0),
          FILL: (0.9, 1.0)}  # (rows agreeing, events found again)
# what today's code holds (see the module doc): rows agreeing, events found again (shares), pooled over CLIPS
FLOOR = {"mirror": (0.9, 1.0), "half": (0.85, 0.8), ZOOM: (0.83, 0.8), BARS: (0.9, 0.9), FILL: (0.9, 1.0)}
# the same people: a (frame, person) row of either run has a counterpart in the other
PEOPLE_MATCHED_FLOOR = 0.9


@pytest.fixture(scope="module")
def invariance_run(media_dir, default_truth_run, tmp_path_factory) -> dict:
    """The four clips' edits, run once: {"original": the session's default run of the truth clips (these four
    among them), "out": the edits' run, "edits": {(clip, edit): path}, "edit_s", "run_s"}."""
    work = tmp_path_factory.mktemp("camera_invariance")
    started = time.perf_counter()
    edits = {(clip, edit): make_edit(edit, media_dir / clip, work / "edits") for clip in CLIPS for edit in TEST_EDITS
             if clip in CLIPS_OF.get(edit, CLIPS)}
    built = time.perf_counter()
    run_socialtrace([str(p) for p in edits.values()], work / "out")
    return {"original": default_truth_run, "out": work / "out", "edits": edits, "edit_s": built - started,
            "run_s": time.perf_counter() - built}


def _tables(store: OutputStore, video_id: str):
    return store.read_video_table("tracks", video_id), store.read_video_table("events", video_id)


@pytest.fixture(scope="module")
def scores(invariance_run) -> list[InvarianceScore]:
    original, edited = OutputStore(str(invariance_run["original"])), OutputStore(str(invariance_run["out"]))
    out = []
    for (clip, edit), path in invariance_run["edits"].items():
        out.append(compare_outputs(original, sanitise_id(Path(clip).stem), edited, sanitise_id(path.stem), edit,
                                   window=shown_part(edit)))
    return out


def _report(scores: list[InvarianceScore], edit: str) -> str:
    lines = [f"{s.video_id}: rows {s.n_agree}/{s.n_rows} ({s.n_contradictions} contradictions, {s.n_abstentions} "
             f"abstentions), events {len(s.events_found)}/{s.events_original}; "
             + "; ".join(f"frame {r.frame_idx} person {r.original_id}: {r.why}" for r in s.disagreements()[:4])
             for s in scores if s.edit == edit]
    return "\n".join(lines)


def test_edits_sample_the_same_instants_and_pictures(media_dir, invariance_run):
    """The edits are what they say: the run samples as many frames at the same instants, the AVI's too (its
    first frame carries pts 0.08 s, its MP4 edit's 0: time counts from the first frame in both), and each
    sampled frame is the original's mirrored, halved or its centre enlarged (mean absolute difference a few grey
    levels: re-encoding and interpolation only). Inside black bars or a blurred fill the picture is found where
    the edit put it (to the pixel) and read as the original: the same size, the same pixels."""
    for (clip, edit), path in invariance_run["edits"].items():
        original = list(iter_frames(str(media_dir / clip), 2.0, 960))
        picture = find_picture(str(path))
        if edit in (BARS, FILL):
            x0, y0, x1, y1 = shown_part(edit)
            expected = (-x0 / (x1 - x0), -y0 / (y1 - y0), (1 - x0) / (x1 - x0), (1 - y0) / (y1 - y0))
            np.testing.assert_allclose(picture, expected, atol=2 / 480, err_msg=f"{clip}: picture {picture}")
        else:
            assert picture is None, (clip, edit, picture)
        edited = list(iter_frames(str(path), 2.0, 960, window=picture))
        assert len(edited) == len(original), (clip, edit)
        assert max(abs(a.t - b.t) for a, b in zip(original, edited)) <= 0.002, (clip, edit)
        assert [a.native_frame_idx for a in original] == [b.native_frame_idx for b in edited], (clip, edit)
        for a, b in zip(original, edited):
            image, reference = (b.image[:, ::-1] if edit == "mirror" else b.image), a.image
            if edit == ZOOM:  # the original's centre, enlarged as the edit did
                h, w = reference.shape[:2]
                x0, y0, x1, y1 = ZOOM_WINDOW
                reference = cv2.resize(reference[round(y0 * h):round(y1 * h), round(x0 * w):round(x1 * w)], (w, h),
                                       interpolation=cv2.INTER_LINEAR)
            if edit in (BARS, FILL):
                assert image.shape == reference.shape, (clip, image.shape, reference.shape)
            if image.shape != reference.shape:
                image = cv2.resize(image, (reference.shape[1], reference.shape[0]), interpolation=cv2.INTER_LINEAR)
            assert np.abs(reference.astype(np.int16) - image).mean() < 6.0, (clip, edit, a.frame_idx)


def test_comparison_of_a_run_with_itself_and_its_mirrored_tables(invariance_run):
    """The comparison's own check on real tables: a run against itself, and against its tracks with every x
    mirrored (head and body boxes), agrees on every row and finds every event."""
    import pyarrow as pa

    store = OutputStore(str(invariance_run["original"]))
    for clip in CLIPS:
        tracks, events = _tables(store, sanitise_id(Path(clip).stem))
        same = compare_runs(clip, "same", tracks, events, tracks, events, mirrored=False, step_s=0.5)
        assert same.agreement == 1.0 and not same.events_missed and not same.events_extra, clip

        def mirror(boxes):
            return [None if b is None else [1 - b[2], b[1], 1 - b[0], b[3]] for b in boxes.to_pylist()]

        flipped = tracks
        for column in ("bbox", "head_bbox"):
            i = tracks.column_names.index(column)
            boxes = pa.array(mirror(tracks.column(column)), tracks.schema.field(column).type)
            flipped = flipped.set_column(i, column, boxes)
        mirrored = compare_runs(clip, "mirror", tracks, events, flipped, events, mirrored=True, step_s=0.5)
        assert mirrored.agreement == 1.0 and len(mirrored.events_found) == mirrored.events_original, clip
        assert mirrored.id_map == {p: p for p in set(tracks.column("person_id").to_pylist())}, clip


def test_disagreements_are_split_into_contradictions_abstentions_and_unmatched_people():
    """A disagreement is a contradiction only when both sides name a definite target (elsewhere and the camera
    included); one side unknown is an abstention; a person on one side only is unmatched. Agreement is unchanged."""
    def row(kind, target=None):
        return {"gaze_target_type": kind, "gaze_target_id": target}

    cases = [((row("person", 1), row("person", 1), True), "agrees"),
             ((row("unknown"), row("unknown"), True), "agrees"),
             ((row("hands", 0), row("elsewhere"), False), "contradiction"),
             ((row("camera"), row("person", 2), False), "contradiction"),
             ((row("person", 1), row("person", 2), False), "contradiction"),
             ((row("person", 1), row("unknown"), False), "abstention"),
             ((row(None), row("camera"), False), "abstention"),
             ((row("camera"), None, False), "unmatched"),
             ((None, row("camera"), False), "unmatched")]
    rows = [RowComparison(0, 0.0, 0, 0, a, b, agrees) for (a, b, agrees), _ in cases]
    assert [r.kind for r in rows] == [kind for _, kind in cases]
    score = InvarianceScore("clip", "mirror", rows, 0, [], [], [])
    pooled = overall([score])
    assert (pooled["agree"], pooled["contradictions"], pooled["abstentions"], pooled["unmatched"]) == (2, 3, 2, 2)
    assert pooled["agree"] + pooled["contradictions"] + pooled["abstentions"] + pooled["unmatched"] == pooled["rows"]


def test_no_face_is_read_for_two_people(invariance_run):
    """In no sampled frame of the clips and their edits do two people hold one face-mesh read (eye midpoints
    within a few pixels): in the mirrored hug at 2.5 s a face detection straddling both heads gave the man in
    profile the frontal man's face, and so his look (detectors.refine.PersonRefiner.settle_shared_faces)."""
    original, edited = OutputStore(str(invariance_run["original"])), OutputStore(str(invariance_run["out"]))
    videos = ([(original, Path(clip).stem) for clip in CLIPS]
              + [(edited, p.stem) for p in invariance_run["edits"].values()])
    checked = 0
    for store, video_id in videos:
        tracks = store.read_video_table("tracks", sanitise_id(video_id)).to_pylist()
        by_frame: dict[int, list] = {}
        for row in tracks:
            if row["gaze_source"] == "face_mesh":
                by_frame.setdefault(row["frame_idx"], []).append(row)
        for frame_idx, rows in by_frame.items():
            for k, a in enumerate(rows):
                for b in rows[k + 1:]:
                    checked += 1
                    apart = np.hypot(*np.subtract(a["gaze_origin"], b["gaze_origin"]))
                    assert apart > 0.005, (video_id, frame_idx, a["person_id"], b["person_id"])
    assert checked > 100  # the group and two-person scenes give many pairs of faces read in one frame


def test_the_same_people_come_out(scores):
    for edit in TEST_EDITS:
        rows = [s for s in scores if s.edit == edit]
        matched = sum(s.n_matched for s in rows) / sum(s.n_rows for s in rows)
        assert matched >= PEOPLE_MATCHED_FLOOR, f"{edit}: {matched:.3f} of rows matched\n" + _report(scores, edit)


@pytest.mark.parametrize("edit", TEST_EDITS)
def test_gaze_targets_and_events_hold_under_the_edit(scores, edit):
    """Pooled over the clips: the share of (frame, person) rows whose gaze target the edit reproduces and the
    share of the original's events it finds again, against today's floor (the issue's target is higher: GAP
    in the module doc)."""
    pooled = overall([s for s in scores if s.edit == edit])
    rows_floor, events_floor = FLOOR[edit]
    assert pooled["agreement"] >= rows_floor, (
        f"{edit}: gaze targets agree on {pooled['agree']}/{pooled['rows']} = {pooled['agreement']:.3f} "
        f"< {rows_floor} (target {TARGET[edit][0]})\n" + _report(scores, edit))
    assert pooled["events_found_share"] >= events_floor, (
        f"{edit}: events found again {pooled['events_found']}/{pooled['events']} < {events_floor:.3f} "
        f"(target {TARGET[edit][1]})\n" + _report(scores, edit))



def _track_rows(people: list[tuple[int, tuple[float, float], str, int | None, tuple[float, float] | None]],
                frames: int = 2):
    """A tracks table: per frame, each (person_id, head centre, gaze target type, target id, gaze point)."""
    import pyarrow as pa

    rows = []
    for f in range(frames):
        for pid, (x, y), kind, target, point in people:
            rows.append({"frame_idx": f, "t": 0.5 * f, "person_id": pid,
                         "head_bbox": [x - 0.03, y - 0.04, x + 0.03, y + 0.04],
                         "bbox": [x - 0.08, y - 0.06, x + 0.08, y + 0.5],
                         "gaze_target_type": kind, "gaze_target_id": target, "gaze_source": "face_mesh",
                         "gaze_conf": 0.6, "gaze_dir": [0.0, 0.0, -1.0], "gaze_point": None if point is None else list(point)})
    return pa.Table.from_pylist(rows)


def _events(rows: list[dict]):
    import pyarrow as pa
    from pipeline.schema import EVENTS_SCHEMA

    base = {"video_id": "v", "source": "gaze", "start_frame": 0, "end_frame": 1, "shot_id": 0, "initiator_id": None,
            "target_type": None, "target_person_id": None, "target_label": None, "leader_id": None,
            "follower_id": None, "lag_seconds": None, "confidence": 0.8, "parent_event_ids": [], "details": "{}"}
    return pa.Table.from_pylist([{**base, "event_id": k, **r} for k, r in enumerate(rows)], schema=EVENTS_SCHEMA)


def test_people_are_matched_within_reach_before_the_assignment_shortens_far_pairs():
    """A person one run alone has (at the frame's edge) must not pull the assignment: the close pair stays
    matched even where pairing both people crosswise gives a shorter total (0.25 + 0.54 < 0.01 + 0.80)."""
    from pipeline.camera_invariance import match_people

    original = _track_rows([(0, (0.40, 0.3), "camera", None, None), (1, (0.95, 0.3), "camera", None, None)], frames=1)
    edited = _track_rows([(0, (0.41, 0.3), "camera", None, None), (1, (0.15, 0.3), "camera", None, None)], frames=1)
    assert match_people(original, edited, mirrored=False) == {0: {0: 0}}


def test_a_zoom_is_compared_on_the_people_and_events_it_keeps_in_view():
    """A digital zoom into the frame's centre (tests/camera_edits.ZOOM_WINDOW) shows the people inside the window,
    enlarged: they are matched by mapping the zoomed frame back onto the window and must keep their targets; a
    person outside it, one looking at something outside it, and their events count on neither side."""
    x0, y0, x1, y1 = ZOOM_WINDOW

    def zoomed(x, y):
        return ((x - x0) / (x1 - x0), (y - y0) / (y1 - y0))

    original = _track_rows([
        (0, (0.40, 0.35), "person", 1, (0.62, 0.35)),  # looks at 1: both in view
        (1, (0.62, 0.35), "person", 0, (0.40, 0.35)),
        (2, (0.97, 0.30), "elsewhere", None, None),  # outside the window
        (3, (0.30, 0.40), "hands", 2, (0.95, 0.6)),  # in view, looking at 2's hands outside it
    ])
    edited = _track_rows([
        (5, zoomed(0.40, 0.35), "person", 6, zoomed(0.62, 0.35)),
        (6, zoomed(0.62, 0.35), "person", 5, zoomed(0.40, 0.35)),
        (7, zoomed(0.30, 0.40), "elsewhere", None, None),
    ])
    events = _events([
        {"event_type": "mutual_gaze", "start_time": 0.0, "end_time": 1.0, "persons_involved": [0, 1]},
        {"event_type": "gaze_at", "start_time": 0.0, "end_time": 1.0, "persons_involved": [3],
         "target_type": "person", "target_person_id": 2, "target_label": "hands"},  # events/targets.py's encoding
    ])
    edited_events = _events([{"event_type": "mutual_gaze", "start_time": 0.0, "end_time": 1.0,
                              "persons_involved": [5, 6]}])
    score = compare_runs("v", "zoom", original, events, edited, edited_events, mirrored=False, step_s=0.5,
                         window=ZOOM_WINDOW)
    assert score.n_rows == 4 and score.agreement == 1.0  # persons 0 and 1 on two frames
    assert score.id_map == {0: 5, 1: 6, 3: 7}
    assert score.events_original == 1 and len(score.events_found) == 1 and not score.events_extra
    # compared as if nothing were cut away, the person outside the view and the look at him disagree
    plain = compare_runs("v", "zoom", original, events, edited, edited_events, mirrored=False, step_s=0.5)
    assert plain.n_rows == 8 and plain.agreement <= 0.75 and plain.events_original == 2


@pytest.mark.slow
def test_a_clip_given_black_bars_is_read_inside_them_and_its_tables_land_on_the_frame(invariance_run, monkeypatch):
    """tvhid_highfive_0018 inside black bars on all four sides: the run finds the picture where the edit put it,
    records it in the status and the manifest, writes every box inside it (frame coordinates), and gives the
    same people, targets and events as the clip without bars; events and QA recomputed from the stored tables
    are those the run gave."""
    barred = sanitise_id(invariance_run["edits"][("tvhid_highfive_0018.avi", BARS)].stem)
    out, original = invariance_run["out"], invariance_run["original"]  # the edits' run, the truth clips' run
    x0, y0, x1, y1 = shown_part(BARS)
    expected = (-x0 / (x1 - x0), -y0 / (y1 - y0), (1 - x0) / (x1 - x0), (1 - y0) / (y1 - y0))
    status = json.loads((out / "status" / f"{barred}.json").read_text())
    assert status["picture"] == pytest.approx(expected, abs=2 / 416)
    manifest = pq.read_table(out / "manifest.parquet").to_pylist()
    pictures = {row["video_id"]: row["picture"] for row in manifest}
    assert pictures[barred] == pytest.approx(expected, abs=2 / 416)
    assert json.loads((original / "status" / "tvhid_highfive_0018.json").read_text())["picture"] is None
    plain = pq.read_table(original / "tracks" / "video_id=tvhid_highfive_0018").to_pylist()
    barred_rows = pq.read_table(out / "tracks" / f"video_id={barred}").to_pylist()
    assert len(barred_rows) == len(plain)
    px0, py0, px1, py1 = status["picture"]
    for row in barred_rows:
        box = row["bbox"]
        assert px0 - 1e-3 <= box[0] and box[2] <= px1 + 1e-3 and py0 - 1e-3 <= box[1] and box[3] <= py1 + 1e-3
    # the same people at the same places of the picture, looking at the same targets
    shrink = np.array([px1 - px0, py1 - py0] * 2)
    for a, b in zip(sorted(plain, key=lambda r: (r["frame_idx"], r["bbox"][0])),
                    sorted(barred_rows, key=lambda r: (r["frame_idx"], r["bbox"][0]))):
        # (a few hundredths: the detector's boxes move that much between two encodings of the same frames)
        assert np.allclose((np.array(b["bbox"]) - [px0, py0, px0, py0]) / shrink, a["bbox"], atol=0.05)
        assert a["gaze_target_type"] == b["gaze_target_type"]
    events = pq.read_table(out / "events" / f"video_id={barred}").drop_columns(["video_id"])
    qa = pq.read_table(out / "qa" / f"video_id={barred}").drop_columns(["video_id"])
    plain_events = pq.read_table(original / "events" / "video_id=tvhid_highfive_0018").drop_columns(["video_id"])
    assert events.column("event_type").to_pylist() == plain_events.column("event_type").to_pylist()
    # events and QA again from the stored (frame-coordinate) tables, as `socialtrace events` redoes them before it
    # balances the folder's answers: the picture's coordinates and aspect again, the same tables
    store = OutputStore(str(out))
    seen = []
    real_derive_events = runner.derive_events
    monkeypatch.setattr(runner, "derive_events", lambda tracks, *a: seen.append(tracks) or real_derive_events(tracks, *a))
    rederive_clip(store, status, read_run_config(store), "events", "events")
    stored = pq.read_table(out / "tracks" / f"video_id={barred}")
    boxes = np.array(seen[0].column("bbox").to_pylist())
    assert np.allclose(boxes, (np.array(stored.column("bbox").to_pylist()) - [px0, py0, px0, py0]) / shrink, atol=1e-5)
    assert pq.read_table(out / "events" / f"video_id={barred}").drop_columns(["video_id"]).equals(events)
    assert pq.read_table(out / "qa" / f"video_id={barred}").drop_columns(["video_id"]).equals(qa)
    assert qa.num_rows > 0
    # `socialtrace inspect` says so
    inspect = subprocess.run([str(Path(sys.executable).with_name("socialtrace")), "inspect", str(out), "--video", barred],
                             capture_output=True, text=True, timeout=120)
    words = " ".join(inspect.stdout.split())  # the header line may wrap (the clip's path is long)
    assert inspect.returncode == 0 and "(picture 544x416 inside bars or fill)" in words, inspect.stdout[:800]
    # and the tables hold together where they were made: the consistency rules find nothing
    assert check_clip(load_clip_run(store, barred)) == []
