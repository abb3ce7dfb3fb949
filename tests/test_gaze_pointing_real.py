"""Pointing and gaze targets of the real pipeline on the shared clips, against the by-eye truth (issue 11
parts 3-4, issue 10 part 2): a pointing event on every annotated pointing interval with the pointer, none
where nobody points, per-frame pointing precision, and the gaze rows the evidence rules must get right
(or at least not wrong)."""
from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as ds
import pytest

from pipeline.truth_scores import named_gaze, score_output, totals
from pipeline.truth import GroundTruth

pytestmark = pytest.mark.slow

POINTING_CLIPS = ("deepoint_lamp1", "deepoint_pointing_folding", "deepoint_pointing_long", "deepoint_pointing_up")
NOBODY_POINTS = ("tvhid_highfive_0005", "tvhid_highfive_0018", "tvhid_handshake_0001", "atd_kitchen")


@pytest.fixture(scope="module")
def shared_run(media_dir, default_truth_run):
    """The default (2 fps) `socialtrace run` over every annotated clip, and its scores."""
    truth = GroundTruth.load(media_dir / "truth")
    out = default_truth_run
    return out, {s.video_id: s for s in score_output(out, truth)}, truth


def _table(out: Path, kind: str, video_id: str) -> list[dict]:
    return ds.dataset(out / kind / f"video_id={video_id}", format="parquet").to_table().to_pylist()


def test_a_pointing_event_on_every_annotated_interval_with_the_pointer(shared_run):
    _, scores, _ = shared_run
    t = totals(scores[v] for v in POINTING_CLIPS)
    # recall counts an interval only when an event of the same person (matched by head position) overlaps it
    assert t.events.recall_of("pointing") == 1.0
    # the one event the harness judges wrong is deepoint_pointing_folding's last frame (the finger is still
    # out at the clip end, the annotation stops 0.03 s before it) written as 3.0-3.5 s by the events stage
    assert t.events.precision("pointing") >= 0.75


def test_no_pointing_where_nobody_points(shared_run):
    out, _, _ = shared_run
    for video_id in NOBODY_POINTS:
        assert not [e for e in _table(out, "events", video_id) if e["event_type"] == "pointing"], video_id
        assert not [r for r in _table(out, "tracks", video_id) if r["pointing"]], video_id


def test_pointing_frames_against_the_annotated_intervals(shared_run):
    """Frame-level precision / recall of "someone points" against the truth's pointing intervals."""
    _, scores, _ = shared_run
    tp, fp, fn = (sum(values) for values in zip(*(scores[v].pointing_frames for v in POINTING_CLIPS)))
    assert tp / (tp + fp) >= 0.9, (tp, fp, fn)
    assert tp / (tp + fn) >= 0.5, (tp, fp, fn)


def _gaze_rows(scores, video_id: str) -> dict[tuple[float, str], tuple[str, str]]:
    """(run time, label) -> (truth, predicted) for the clip's definite gaze rows."""
    return {(t, label): (truth, predicted) for t, label, truth, predicted in scores[video_id].gaze.details}


def _at(rows, t: float, label: str) -> tuple[str, str]:
    key = min((k for k in rows if k[1] == label), key=lambda k: abs(k[0] - t))
    assert abs(key[0] - t) < 0.15, key
    return rows[key]


def test_clearest_gaze_rows(shared_run):
    _, scores, _ = shared_run
    # tvhid_highfive_0018 (run times count from its first frame, pts 0.08 s): B's irises turn to A; A, seen
    # from behind, faces B squarely
    rows = _gaze_rows(scores, "tvhid_highfive_0018")
    for t, label in ((0.0, "B"), (0.16, "B"), (0.0, "A"), (0.16, "A"), (1.68, "A"), (1.92, "A")):
        truth, predicted = _at(rows, t, label)
        assert predicted == truth, (t, label, truth, predicted)
    # tvhid_highfive_0005: the two men face each other at the start. A is never wrong: right wherever the
    # pose model sees his face, unknown at 0.5 s, where it reads his profile as the back of a head (nose
    # score 0.28: a head seen from behind names no target); B (3/4 view, laughing: narrowed lids) reads
    # "elsewhere" at 0.25 s with the mesh head pose, and "A's hands" at 0.75 s
    rows = _gaze_rows(scores, "tvhid_highfive_0005")
    right = sum(truth == predicted for truth, predicted in rows.values())
    assert right >= len(rows) - 3, rows
    of_a = [predicted for (t, label), (truth, predicted) in rows.items() if label == "A"]
    assert set(of_a) <= {"person:B", "unknown"} and of_a.count("person:B") >= len(of_a) - 1, rows
    # atd_kitchen: A watches the avocado in B's hands at the end (from 1.8 s; at 2.0-2.25 s the
    # stability vote still holds his turn from the camera as unknown)
    rows = _gaze_rows(scores, "atd_kitchen")
    for t in (2.5, 3.0, 3.23):
        truth, predicted = _at(rows, t, "A")
        assert predicted == truth == "hands:B", (t, predicted)
    # B looks down at the avocado in his own hands the whole clip (3/4 view: the head pose from the face
    # mesh's own landmarks keeps his ray on his hands; the generic-face solvePnP read 8 of 14)
    b_rows = [v for (t, label), v in rows.items() if label == "B"]
    assert sum(predicted == truth == "hands:B" for truth, predicted in b_rows) >= len(b_rows) - 3, b_rows
    # tvhid_handshake_0001: B (dark, eyes about 7 pixels wide: head pose alone) looks level at A from 0.5 s
    rows = _gaze_rows(scores, "tvhid_handshake_0001")
    right = sum(truth == predicted for truth, predicted in rows.values())
    assert right >= len(rows) - 2, rows  # 6 of 7 measured


def test_no_own_hands_without_evidence(shared_run):
    """The issue's cases: A talks into the camera (atd_kitchen 0.5 s) and B looks at A (handshake 2.0 s);
    a ray ending low on one's own body is not "own hands"."""
    _, scores, _ = shared_run
    assert _at(_gaze_rows(scores, "atd_kitchen"), 0.5, "A")[1] != "hands:A"
    assert _at(_gaze_rows(scores, "tvhid_handshake_0001"), 2.0, "B")[1] != "hands:B"
    for score in scores.values():
        assert not [p for p in score.consistency if "own hands" in p and "misses every hand box" in p], score.video_id


def test_named_gaze_targets_are_mostly_right(shared_run):
    """Precision before recall: of the rows where the run names a target (person, hands, object, camera),
    few are wrong."""
    _, scores, _ = shared_run
    right, named = (sum(values) for values in zip(*(named_gaze(s.gaze) for s in scores.values())))
    assert right / named >= 0.9, (right, named)  # 38 of 40 at the default 2 fps (mesh head pose)


@pytest.fixture(scope="module")
def zidane_run(tmp_path_factory):
    """ultralytics' zidane.jpg (in its wheel; nobody tuned on it) held for 2 s, run as a user runs it: the
    man on the left shouts and points to the right, past the man standing behind him, who looks out of
    the picture."""
    from tests.shared_media import run_socialtrace
    from tests.video_edits import ultralytics_still, write_edit

    folder = tmp_path_factory.mktemp("zidane")
    write_edit(folder / "zidane.mp4", [[ultralytics_still("zidane")] * 50], 25.0)
    run_socialtrace([str(folder / "zidane.mp4")], folder / "out")
    return folder / "out"


def test_a_point_past_the_man_it_passes_in_front_of_names_nobody(zidane_run):
    """The fingertip reaches the right edge of the second man's box (inside or just past it, with the
    encoding) and points on out of the picture: nothing may say the pointer points at him, nor that he looks
    at him (his look, read from the body with no elevation, passes below the other's face; the face mesh,
    found on one side of the mirror only, reads it 22 degrees down)."""
    tracks = _table(zidane_run, "tracks", "zidane")
    pointer = {r["person_id"] for r in tracks if r["pointing"]}
    assert len(pointer) == 1  # Zidane, and only he, points: on every sample
    pointer = pointer.pop()
    assert sum(r["pointing"] for r in tracks if r["person_id"] == pointer) == sum(r["person_id"] == pointer for r in tracks)
    assert all(r["point_target_type"] != "person" for r in tracks if r["pointing"])
    assert all(r["gaze_target_type"] != "person" for r in tracks if r["person_id"] == pointer)
    events = _table(zidane_run, "events", "zidane")
    assert [(e["event_type"], e["persons_involved"]) for e in events if e["event_type"] == "pointing"] == [("pointing", [pointer])]
    assert not [e for e in events if e["event_type"] == "gaze_at" and e["persons_involved"] == [pointer]]
    for item in _table(zidane_run, "qa", "zidane"):
        assert f"Person {pointer} points at" not in item["question"] + item["answer"], item


def test_arms_crossed_far_off_are_no_pointing(tmp_path):
    """ultralytics' zidane.jpg for 1.5 s, then bus.jpg letterboxed into the same 1280x720 (people about two thirds
    of the frame tall) for 1.5 s: the bus's bearded man stands with his arms crossed, and his hand folded on his
    chest was read as an index pointing back along his forearm (in this encoding of the frames). Only the man
    in the first shot points."""
    from tests.shared_media import run_socialtrace
    from tests.video_edits import letterboxed, ultralytics_still, write_edit

    frame = letterboxed(ultralytics_still("bus"), (1280, 720))
    write_edit(tmp_path / "bus.mp4", [[ultralytics_still("zidane")] * 38, [frame] * 38], 25.0)
    run_socialtrace([str(tmp_path / "bus.mp4")], tmp_path / "out")
    tracks = [r for r in _table(tmp_path / "out", "tracks", "bus") if r["shot_id"] == 1]
    assert len({r["person_id"] for r in tracks}) >= 3
    assert not [r for r in tracks if r["pointing"]]
    events = _table(tmp_path / "out", "events", "bus")
    assert [e["shot_id"] for e in events if e["event_type"] == "pointing"] == [0]
