"""The accuracy harness (pipeline/truth.py, accuracy.py, qa_truth.py, consistency.py, scoring.py):
known-answer tests on a hand-built toy clip, bad input, and floors on the real pipeline's figures on the
shared annotated clips."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from detectors.config import GazeConfig
from pipeline.accuracy import (RIGHT, UNCHECKABLE, WRONG, ClipRun, Judge, head_centre, match_persons, score_events,
                               score_gaze)
from pipeline.consistency import check_events_table, check_tables
from pipeline.qa_truth import score_qa
from pipeline.schema import EVENTS_SCHEMA, QA_SCHEMA, TRACKS_SCHEMA, table_from_rows
from pipeline.truth_scores import score_output, totals
from pipeline.storage import OutputStore
from pipeline.truth import ClipTruth, GroundTruth, TruthError, TruthInterval, TruthRow, truth_set_of
from qa_gen.events_view import read_events

# --- a toy clip: A (left) and B (right), annotated every 0.5 s -------------------------------------
#   t     A          B
#   0.0   person:B   person:A
#   0.5   person:B   unsure
#   1.0   person:B   hands:B
#   1.5   hands:B    hands:B     A points at a lamp 1.5-2.0
#   2.0   hands:B    hands:B
TOY_GAZE = {"A": ["person:B", "person:B", "person:B", "hands:B", "hands:B"],
            "B": ["person:A", "unsure", "hands:B", "hands:B", "hands:B"]}
TOY_HEAD = {"A": (0.30, 0.20), "B": (0.70, 0.20)}
TIMES = [0.0, 0.5, 1.0, 1.5, 2.0]


def write_truth(directory: Path, first_pts: float = 0.0, extra_rows: str = "", intervals: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "persons.csv").write_text("clip,person,description\ntoy.mp4,A,left\ntoy.mp4,B,right\n")
    frames = ["clip,t,decoded_frame_index,frame_pts_s,index_over_fps_s"]
    rows = ["clip,t,person,head_x,head_y,gaze,pointing_at,gesture,note"]
    for i, t in enumerate(TIMES):
        frames.append(f"toy.mp4,{t:.2f},{i * 2},{t + first_pts:.3f},{t:.3f}")
        for label in "AB":
            pointing = "object:lamp" if label == "A" and t >= 1.5 else ""
            rows.append(f"toy.mp4,{t:.2f},{label},{TOY_HEAD[label][0]},{TOY_HEAD[label][1]},{TOY_GAZE[label][i]},"
                        f"{pointing},{'pointing' if pointing else ''},")
    (directory / "frames_map.csv").write_text("\n".join(frames) + "\n")
    (directory / "truth.csv").write_text("\n".join(rows) + "\n" + extra_rows)
    if intervals is None:
        intervals = ("clip,kind,persons,start,end,note\n"
                     "toy.mp4,mutual_gaze,A+B,0.00,0.90,\n"
                     "toy.mp4,joint_attention,A+B,1.40,2.00,\n"
                     "toy.mp4,pointing,A,1.50,2.00,\n")
    (directory / "intervals.csv").write_text(intervals)
    return directory


def track_row(t: float, pid: int, head: tuple[float, float], kind: str, target: int | None, *, frame: int,
              native_fps: float = 4.0, t0: float = 0.0, hands=None, point=None, ray=None) -> dict:
    x, y = head
    return {"video_id": "toy", "frame_idx": frame, "native_frame_idx": int(round((t - t0) * native_fps)), "t": t,
            "shot_id": 0, "person_id": pid, "det_conf": 0.9, "bbox": [x - 0.1, y - 0.05, x + 0.1, y + 0.6],
            "head_bbox": [x - 0.04, y - 0.05, x + 0.04, y + 0.05], "gaze_conf": 0.8, "gaze_target_type": kind,
            "gaze_target_id": target, "pointing": False, "point_conf": 0.0, "hand_bboxes": hands, "gaze_point": point,
            "gaze_origin": None if ray is None else [x, y], "gaze_dir": ray}


# predicted gaze per sampled frame: person 0 is A, person 1 is B
PRED = {0: [("person", 1), ("person", 1), ("person", 1), ("hands", 1), ("camera", None)],
        1: [("person", 0), ("person", 0), ("hands", 1), ("hands", 1), ("unknown", None)]}


def toy_tracks(t0: float = 0.0, heads=None) -> pa.Table:
    heads = heads or {0: TOY_HEAD["A"], 1: TOY_HEAD["B"]}
    rows = []
    for f, t in enumerate(TIMES):
        for pid in (0, 1):
            kind, target = PRED[pid][f]
            head = heads[pid](f) if callable(heads[pid]) else heads[pid]
            rows.append(track_row(t + t0, pid, head, kind, target, frame=f, t0=t0))
    return table_from_rows(rows, TRACKS_SCHEMA)


def event(eid: int, kind: str, start: float, end: float, persons, **roles) -> dict:
    source = "gesture" if kind in ("pointing", "giving", "showing", "reaching") else "gaze"
    row = {"video_id": "toy", "event_id": eid, "source": source, "event_type": kind, "start_time": start,
           "end_time": end, "start_frame": int(start * 2), "end_frame": int(end * 2), "persons_involved": list(persons),
           "confidence": 0.9, "parent_event_ids": [], "details": json.dumps(roles.pop("details", {}))}
    row.update(roles)
    return row


def hands_of(pid: int) -> dict:
    return {"target_type": "person", "target_person_id": pid, "target_label": "hands"}


TOY_EVENTS = [
    event(0, "mutual_gaze", 0.0, 1.0, [0, 1]),                                       # right (interval)
    event(1, "mutual_gaze", 1.0, 2.0, [0, 1]),                                       # wrong (not annotated then)
    event(2, "joint_attention", 1.5, 2.0, [0, 1], **hands_of(1)),                    # right
    event(3, "joint_attention", 0.0, 0.5, [0, 1], target_type="none", target_label="camera"),  # wrong: camera
    event(4, "gaze_following", 1.0, 1.5, [0, 1], leader_id=1, follower_id=0, initiator_id=1, **hands_of(1)),  # right
    event(5, "gaze_following", 1.0, 1.5, [0, 1], leader_id=0, follower_id=1, initiator_id=0, **hands_of(1)),  # own hands
    event(6, "gaze_at", 0.0, 1.0, [0, 1], initiator_id=0, target_type="person", target_person_id=1),  # right
    event(7, "gaze_aversion", 1.0, 1.5, [0, 1], initiator_id=0, target_type="person", target_person_id=1),  # wrong
    event(8, "sudden_gaze_shift", 0.5, 1.0, [1], initiator_id=1),                    # uncheckable (B unsure at 0.5)
    event(9, "pointing", 1.5, 2.0, [0], initiator_id=0, target_type="none"),        # right
    event(10, "pointing", 1.5, 2.0, [1], initiator_id=1, target_type="none"),       # wrong: B never points
]


def qa_row(qid: str, category: str, template: str, question: str, key: str, time_range=(0.0, 2.0), sources=()) -> dict:
    return {"qa_id": qid, "video_id": "toy", "category": category, "category_name": category, "difficulty": "easy",
            "format": "mcq", "question": question, "options": [], "answer": "A", "answer_text": key,
            "time_range": list(time_range), "source_event_ids": list(sources), "persons": [], "grounding": [],
            "reasoning_trace": [], "template": template}


TOY_QA = [
    qa_row("t1_right", "T1", "T1.target", "Who or what is Person 0 looking at between 0.0 and 1.0 seconds?", "Person 1"),
    qa_row("t1_wrong", "T1", "T1.target", "Between 1.5 and 2.0 seconds, what does Person 0 look at?", "the camera"),
    qa_row("t4_right", "T4", "T4.pair", "Which two people make eye contact between 0.0 and 1.0 seconds?",
           "Person 0 and Person 1"),
    qa_row("t3_right", "T3", "T3.duration", "Person 0 and Person 1 make eye contact at 0.0 seconds. For how long do "
           "they hold it?", "1.0 seconds"),
    qa_row("t3_wrong", "T3", "T3.duration", "How long do Person 0 and Person 1 keep eye contact, starting at 0.0 "
           "seconds?", "2.0 seconds"),
    qa_row("g4_right", "G4", "G4.count", "In the whole clip, how often does Person 0 point?", "1"),
    qa_row("g4_wrong", "G4", "G4.count", "How many times does Person 1 point in the clip?", "1"),
    qa_row("t6_wrong", "T6", "T6.group", "Describe the group's attention pattern between 0.0 and 2.0 seconds.",
           "Person 0 and Person 1 make eye contact from 0.0 to 1.0 seconds. Person 1 follows Person 0's gaze to "
           "Person 1's hands at 1.5 seconds, 0.5 seconds after Person 0 looks there."),
    qa_row("t2_unsure", "T2", "T2.type", "Which best describes Person 1's gaze between 0.5 and 1.0 seconds?",
           "A sudden change of gaze direction", sources=[8]),
]


@pytest.fixture
def toy_truth(tmp_path):
    return GroundTruth.load(write_truth(tmp_path / "truth")).clip("toy")


def toy_run(tracks=None, events=TOY_EVENTS, qa=TOY_QA, duration=2.2, unit_start=None) -> ClipRun:
    events_table = table_from_rows(events, EVENTS_SCHEMA)
    qa_table = table_from_rows(qa, QA_SCHEMA)
    if unit_start is not None:
        qa_table = qa_table.append_column("unit_start", pa.array(unit_start, pa.float64()))
    return ClipRun(video_id="toy", duration=duration, native_fps=4.0, fps=2.0,
                   tracks=toy_tracks() if tracks is None else tracks, events_table=events_table,
                   events=read_events(events_table), qa=qa_table)


# --- loading and bad input ---------------------------------------------------------------------

def test_shared_truth_loads(media_dir):
    truth = GroundTruth.load(media_dir / "truth")
    assert len(truth.clips) == 11 and "opencv_vtest" not in truth.clips
    rows = {v: len(truth.clip(v).rows) for v in truth.video_ids()}
    assert sum(rows[v] for v in truth.video_ids("development")) == 151
    assert sum(rows[v] for v in truth.video_ids("validation")) == 94
    assert truth.clip("mmaction2_hug_lab").labels == ("A", "B")
    assert truth.clip("tvhid_highfive_0018").first_pts == pytest.approx(0.08)
    assert truth.clip("tvhid_handshake_0001").first_pts == pytest.approx(0.125, abs=1e-3)
    assert truth.clip("atd_kitchen").labels == ("A", "B")
    # object:lamp is typed as any object (no object detector runs by default)
    assert {r.gaze for r in truth.clip("deepoint_lamp1").rows} == {"unsure", "object"}


@pytest.mark.parametrize("missing", ["persons.csv", "truth.csv", "intervals.csv", "frames_map.csv"])
def test_missing_truth_file_is_named(tmp_path, missing):
    directory = write_truth(tmp_path / "truth")
    (directory / missing).unlink()
    with pytest.raises(TruthError, match=missing):
        GroundTruth.load(directory)


def test_missing_truth_folder(tmp_path):
    with pytest.raises(TruthError, match="not found"):
        GroundTruth.load(tmp_path / "nowhere")


def test_unknown_clip_names_the_annotated_ones(tmp_path):
    truth = GroundTruth.load(write_truth(tmp_path / "truth"))
    with pytest.raises(TruthError, match=r"no ground truth for clip 'other'.*annotated: toy"):
        truth.clip("other")


def test_bad_truth_values_name_the_line(tmp_path):
    directory = write_truth(tmp_path / "truth", extra_rows="toy.mp4,2.50,A,0.3,0.2,sideways,,,\n")
    with pytest.raises(TruthError, match=r"truth.csv line 12: gaze 'sideways'"):
        GroundTruth.load(directory)
    directory = write_truth(tmp_path / "t2", extra_rows="toy.mp4,2.50,Z,0.3,0.2,camera,,,\n")
    with pytest.raises(TruthError, match="person 'Z' is not in persons.csv"):
        GroundTruth.load(directory)
    directory = write_truth(tmp_path / "t3", extra_rows="toy.mp4,abc,A,0.3,0.2,camera,,,\n")
    with pytest.raises(TruthError, match="'abc' is not a number"):
        GroundTruth.load(directory)


def test_output_folder_errors(tmp_path, toy_truth):
    truth = GroundTruth.load(write_truth(tmp_path / "truth"))
    with pytest.raises(Exception, match="not a socialtrace output folder"):
        score_output(tmp_path / "empty", truth)
    store = OutputStore(str(tmp_path / "out"))
    store.write_json(store.path("run.json"), {"config": {"sampling": {"fps": 2.0}}})
    with pytest.raises(TruthError, match="no clip 'toy'"):
        score_output(store.uri, truth)
    store.write_json(store.status_file("toy"), {"video_id": "toy", "status": "failed", "error": "boom"})
    with pytest.raises(TruthError, match="did not finish.*boom"):
        score_output(store.uri, truth)


def test_scores_a_written_output_folder(tmp_path):
    truth = GroundTruth.load(write_truth(tmp_path / "truth"))
    store = OutputStore(str(tmp_path / "out"))
    store.write_json(store.path("run.json"), {"config": {"sampling": {"fps": 2.0}}})
    run = toy_run()
    for name, table in (("tracks", run.tracks), ("events", run.events_table), ("qa", run.qa)):
        store.write_table(name, "toy", table)
    store.write_json(store.status_file("toy"), {"video_id": "toy", "status": "ok", "duration_s": 2.2,
                                                "native_fps": 4.0, "wall_s": 1.0})
    [score] = score_output(store.uri, truth)
    assert (score.gaze.correct, score.gaze.rows) == (7, 9)
    overall = totals([score])
    assert overall.tracking_coverage == 1.0 and overall.merges == 0 and overall.splits == 0


# --- person matching ---------------------------------------------------------------------------

def test_matching_maps_ids_by_head_position(toy_truth):
    # predicted ids swapped relative to the toy (1 on the left); a third, far-away person matches nobody
    tracks = toy_tracks(heads={0: TOY_HEAD["B"], 1: TOY_HEAD["A"]})
    extra = table_from_rows([track_row(t, 7, (0.5, 0.9), "elsewhere", None, frame=f) for f, t in enumerate(TIMES)],
                            TRACKS_SCHEMA)
    match = match_persons(toy_truth, toy_run(tracks=pa.concat_tables([tracks, extra])))
    assert match.label_of == {0: "B", 1: "A"}
    assert match.per_label["A"]["tracked_share"] == 1.0 and match.per_label["A"]["predicted_ids"] == [1]
    assert match.merges == {} and match.unmatched_ids == [7] and match.splits == {}


def test_matching_reports_a_person_followed_under_two_ids(toy_truth):
    # A is predicted 0 for three frames, then predicted 5 (an id switch); B is 1 throughout
    tracks = toy_tracks(heads={0: lambda f: TOY_HEAD["A"] if f < 3 else (0.5, 0.95), 1: TOY_HEAD["B"]})
    switched = table_from_rows([track_row(t, 5, TOY_HEAD["A"], "elsewhere", None, frame=f)
                                for f, t in enumerate(TIMES) if f >= 3], TRACKS_SCHEMA)
    match = match_persons(toy_truth, toy_run(tracks=pa.concat_tables([tracks, switched])))
    assert match.splits == {"A": [0, 5]} and match.merges == {}


def test_matching_reports_identity_merge_and_untracked_rows(toy_truth):
    # predicted 0 sits on A for three frames, then on B (where predicted 1 was lost)
    def head0(f):
        return TOY_HEAD["A"] if f < 3 else TOY_HEAD["B"]
    tracks = toy_tracks(heads={0: head0, 1: (0.70, 0.95)})  # 1 is too far from every annotated head
    match = match_persons(toy_truth, toy_run(tracks=tracks))
    assert match.merges == {0: {"A": 3, "B": 2}}
    assert match.label_of == {0: "A"}
    assert match.per_label["B"]["tracked"] == 2 and match.per_label["B"]["identity_ok"] == 0
    assert match.per_label["A"]["identity_ok"] == 3 and match.per_label["A"]["tracked_share"] == pytest.approx(3 / 5)


def test_matching_accepts_a_displaced_head_box_only_inside_the_body_box(toy_truth):
    # predicted 0's head box sits 0.15 right of A's annotated head (on the ear of someone seen from behind)
    shifted = (TOY_HEAD["A"][0] + 0.15, TOY_HEAD["A"][1])
    tracks = toy_tracks(heads={0: shifted, 1: TOY_HEAD["B"]})
    match = match_persons(toy_truth, toy_run(tracks=tracks))
    assert match.label_of == {1: "B"}  # its body box (0.35-0.55) does not hold A's head (0.30)
    rows = tracks.to_pylist()
    for row in rows:
        if row["person_id"] == 0:
            row["bbox"] = [0.25, 0.15, 0.55, 0.8]  # now it does
    match = match_persons(toy_truth, toy_run(tracks=table_from_rows(rows, TRACKS_SCHEMA)))
    assert match.label_of == {0: "A", 1: "B"} and match.per_label["A"]["tracked_share"] == 1.0


@pytest.mark.parametrize("run_t0", [0.08, 0.0])
def test_late_first_frame_aligns_whichever_zero_the_run_uses(tmp_path, run_t0):
    # the first decoded frame has pts 0.08 (as in tvhid_highfive_0018); the run may count from pts or frame 0
    truth = GroundTruth.load(write_truth(tmp_path / "truth", first_pts=0.08)).clip("toy")
    match = match_persons(truth, toy_run(tracks=toy_tracks(t0=run_t0)))
    assert truth.to_run_time(0.08 + 1.0) == pytest.approx(run_t0 + 1.0)
    assert all(p is not None for p in match.row_match.values())
    assert score_gaze(truth, match).correct == 7


# --- (a) gaze ----------------------------------------------------------------------------------

def test_gaze_accuracy_known_answer(toy_truth):
    score = score_gaze(toy_truth, match_persons(toy_truth, toy_run()))
    # 9 definite rows (B unsure at 0.5); A wrong at 2.0 (camera), B unknown at 2.0
    assert (score.rows, score.correct, score.covered) == (9, 7, 8)
    assert score.accuracy == pytest.approx(7 / 9) and score.coverage == pytest.approx(8 / 9)
    assert score.confusion[("hands(other)", "camera")] == 1
    assert score.confusion[("hands(own)", "unknown")] == 1
    assert score.confusion[("person", "person")] == 4


def test_untracked_and_wrong_person_count_as_wrong(toy_truth):
    # B is never tracked: B's rows are untracked, and A's "looks at predicted person 1" names nobody known
    tracks = toy_tracks().filter(pa.compute.equal(toy_tracks().column("person_id"), 0))
    score = score_gaze(toy_truth, match_persons(toy_truth, toy_run(tracks=tracks)))
    assert (score.rows, score.correct, score.covered) == (9, 0, 5)
    assert score.confusion[("hands(own)", "untracked")] == 3
    assert score.confusion[("person", "person wrong person")] == 3


# --- (b) events --------------------------------------------------------------------------------

def test_event_verdicts_known_answer(toy_truth):
    run = toy_run()
    score = score_events(toy_truth, run, match_persons(toy_truth, run))
    verdicts = {d[1]: d[6] for d in score.details}
    assert verdicts == {0: RIGHT, 1: WRONG, 2: RIGHT, 3: WRONG, 4: RIGHT, 5: WRONG, 6: RIGHT, 7: WRONG,
                        8: UNCHECKABLE, 9: RIGHT, 10: WRONG}
    assert score.precision("mutual_gaze") == 0.5 and score.precision("gaze_aversion") == 0.0
    assert score.verdicts["sudden_gaze_shift"] == {UNCHECKABLE: 1}
    assert score.recall_of("mutual_gaze") == 1.0 and score.recall_of("pointing") == 1.0
    assert score.recall_of("joint_attention") == 1.0


def test_recall_misses_intervals_with_wrong_people(toy_truth):
    run = toy_run(events=[event(0, "pointing", 1.5, 2.0, [1], initiator_id=1, target_type="none")])
    score = score_events(toy_truth, run, match_persons(toy_truth, run))
    assert score.recall["pointing"] == [0, 1] and score.recall["mutual_gaze"] == [0, 1]


def test_long_event_over_a_short_interval_is_wrong(toy_truth):
    judge = Judge(toy_truth, match_persons(toy_truth, toy_run()))
    assert judge.mutual_claim("A", "B", 0.0, 0.5).status == RIGHT
    assert judge.mutual_claim("A", "B", 0.0, 2.0).status == WRONG  # the interval is 0-0.9 s
    assert judge.gaze_at_claim("A", "person:B", 0.0, 1.0).status == RIGHT
    assert judge.gaze_at_claim("B", "person:A", 0.4, 0.6).status == UNCHECKABLE  # B unsure at 0.5
    assert judge.gaze_at_claim(None, "camera", 0.0, 1.0).status == UNCHECKABLE  # unmatched person


def test_a_window_whose_inner_instants_are_unsure_is_judged_at_its_ends(toy_truth):
    """A checker reads the whole asked window before calling an item uncheckable: B is unsure at 0.5 s,
    the middle of 0.5-1.0 s, and looks at his hands at 1.0 s."""
    judge = Judge(toy_truth, match_persons(toy_truth, toy_run()))
    assert judge.gaze_at_claim("B", "hands:B", 0.5, 1.0).status == RIGHT
    assert judge.gaze_at_claim("B", "person:A", 0.5, 1.0).status == WRONG
    assert judge.mutual_claim("A", "B", 0.5, 1.0, use_intervals=False).status == WRONG  # B on his hands at 1.0
    # inner instants that decide are not overruled by the ends: A looks at B at 0.5-1.0, not at 1.5
    assert judge.gaze_at_claim("A", "person:B", 0.0, 1.5).status == RIGHT


# --- (c) QA ------------------------------------------------------------------------------------

def test_qa_agreement_known_answer(toy_truth):
    run = toy_run()
    score = score_qa(Judge(toy_truth, match_persons(toy_truth, run)), run)
    verdicts = {d[1]: d[5] for d in score.details}
    assert verdicts == {"t1_right": RIGHT, "t1_wrong": WRONG, "t4_right": RIGHT, "t3_right": RIGHT,
                        "t3_wrong": WRONG, "g4_right": RIGHT, "g4_wrong": WRONG, "t6_wrong": WRONG,
                        "t2_unsure": UNCHECKABLE}
    assert score.agreement() == pytest.approx(4 / 8)
    assert score.by_category["T2"] == {UNCHECKABLE: 1}


def test_qa_times_count_from_the_unit_start(toy_truth):
    item = qa_row("unit", "T1", "T1.target", "Who or what is Person 0 looking at between 0.0 and 0.5 seconds?",
                  "Person 1's hands", time_range=(0.0, 0.5))
    for unit_start, expected in ((1.5, RIGHT), (0.0, WRONG)):
        run = toy_run(qa=[item], unit_start=[unit_start])
        score = score_qa(Judge(toy_truth, match_persons(toy_truth, run)), run)
        assert score.details[0][5] == expected


def _scene_truth(scene, tracks) -> ClipTruth:
    """What a by-eye annotator would write for a synthetic scene (tests/test_qa_synthetic.py): every
    person's gaze every 0.5 s, eye-contact and shared-attention intervals, and the gestures."""
    from tests.test_qa_synthetic import STEP, events_table

    def label(p):
        return chr(65 + p)

    def typed(t):
        if t is None:
            return "elsewhere"
        return f"{t[0]}:{label(t[1])}" if t[0] in ("person", "hands") else ("object" if t[0] == "object" else "camera")

    heads = {(r["frame_idx"], r["person_id"]): head_centre(r) for r in tracks.to_pylist()}
    rows = []
    for f in range(scene.n_frames):
        for p in range(scene.n_people):
            if scene.present[p][f]:
                aim = [g[2] for g in scene.gestures if g[0] == p and g[1] == "pointing" and g[3] <= f <= g[4]]
                rows.append(TruthRow(f * STEP, f * STEP, label(p), heads[(f, p)], typed(scene.gaze[p][f]),
                                     typed(aim[0]) if aim else "", "pointing" if aim else ""))
    intervals = [TruthInterval(e["event_type"], tuple(label(p) for p in e["persons_involved"]), e["start_time"],
                               e["end_time"]) for e in events_table(scene).to_pylist()
                 if e["event_type"] in ("mutual_gaze", "joint_attention")]
    intervals += [TruthInterval(kind, (label(actor),) + ((label(target[1]),) if target[0] in ("person", "hands") else ()),
                                f0 * STEP, (f1 + 1) * STEP) for actor, kind, target, f0, f1 in scene.gestures]
    return ClipTruth(f"{scene.video_id}.mp4", tuple(label(p) for p in range(scene.n_people)), rows, intervals)


def test_qa_of_synthetic_scenes_agrees_with_their_truth():
    """QA generated (qa_gen) from scenes whose events follow from a known truth: the harness reads every
    template but C1's order and finds the keys true. The scenes' own event rules are looser than the
    harness in a few places (a shared focus whose members change, one-frame eye contact), hence < 100 %."""
    from tests.test_qa_synthetic import ASPECT, events_table, random_scene, tracks_table

    from qa_gen import generate_qa
    from qa_gen.config import QAConfig

    verdicts = {}
    for seed in range(6):
        scene = random_scene(seed)
        # the truth types objects without their name (no object detector runs by default): one object
        one = lambda t: ("object", "cup") if t is not None and t[0] == "object" else t  # noqa: E731
        scene.gaze = [[one(t) for t in row] for row in scene.gaze]
        scene.gestures = [(a, k, one(t), f0, f1) for a, k, t, f0, f1 in scene.gestures]
        events, tracks = events_table(scene), tracks_table(scene)
        qa, _ = generate_qa(events, tracks, QAConfig(), seed=0, clip_duration=scene.duration, aspect=ASPECT)
        run = ClipRun(scene.video_id, scene.duration, 30.0, 2.0, tracks, events, read_events(events), qa)
        truth = _scene_truth(scene, tracks)
        for d in score_qa(Judge(truth, match_persons(truth, run)), run).details:
            verdicts.setdefault(d[2], []).append(d[5])
    decided = [v for vs in verdicts.values() for v in vs if v != UNCHECKABLE]
    assert decided.count(RIGHT) / len(decided) >= 0.93, {k: Counter(v) for k, v in verdicts.items()}
    for template, vs in verdicts.items():
        if template != "C1.order":
            assert vs.count(UNCHECKABLE) <= len(vs) // 2, (template, Counter(vs))
    assert len(verdicts) >= 20


# --- consistency -------------------------------------------------------------------------------

def _consistent_tables():
    hands = [[0.60, 0.60, 0.80, 0.80]]
    # B looks straight down (the ray passes through the hand box below the head at x 0.70)
    rows = [track_row(t, 1, TOY_HEAD["B"], "hands", 1, frame=f, hands=hands, point=[0.7, 0.7], ray=[0.0, 1.0, 0.0])
            for f, t in enumerate(TIMES)]
    rows += [track_row(t, 0, TOY_HEAD["A"], "hands", 1, frame=f) for f, t in enumerate(TIMES)]
    # joint attention ends when person 0 turns to the camera (a pair's shared focus holds throughout)
    events = [event(0, "joint_attention", 0.0, 1.0, [0, 1], **hands_of(1)),
              event(1, "mutual_gaze", 0.0, 0.5, [0, 1]), event(2, "gaze_aversion", 0.5, 1.0, [0, 1], initiator_id=0),
              event(3, "gaze_at", 0.0, 1.0, [0], initiator_id=0, **hands_of(1)),
              event(4, "gaze_at", 1.0, 2.0, [0], initiator_id=0, target_type="none", target_label="camera")]
    qa = [qa_row("a", "T1", "T1.target", "Who or what is Person 0 looking at between 0.0 and 2.0 seconds?", "x")]
    return table_from_rows(rows, TRACKS_SCHEMA), table_from_rows(events, EVENTS_SCHEMA), table_from_rows(qa, QA_SCHEMA)


def test_consistent_tables_have_no_violations():
    tracks, events, qa = _consistent_tables()
    assert check_tables(tracks, events, qa, duration=2.2, aspect=16 / 9) == []
    assert check_tables(tracks, events, qa, duration=2.2) == []  # no aspect: the landing point is checked


def test_each_consistency_rule_is_reported():
    tracks, events, qa = _consistent_tables()
    bad_tracks = pa.concat_tables([tracks, table_from_rows(
        [track_row(0.0, 1, TOY_HEAD["B"], "camera", None, frame=0),                      # second row at frame 0
         track_row(2.5, 0, TOY_HEAD["A"], "hands", 0, frame=5, hands=[[0.1, 0.1, 0.2, 0.2]], point=[0.5, 0.5]),
         # a level ray passing 0.4 above a hand box (29 degrees off it) whose landing point was placed on the box
         track_row(2.5, 1, TOY_HEAD["B"], "hands", 1, frame=5, hands=[[0.3, 0.6, 0.5, 0.7]], point=[0.5, 0.6],
                   ray=[-1.0, 0.0, 0.0])],
        TRACKS_SCHEMA)])
    bad_events = table_from_rows([
        event(0, "gaze_at", 0.0, 1.0, [0], initiator_id=0, **hands_of(1)),
        event(1, "gaze_at", 0.5, 1.5, [0], initiator_id=0, target_type="none", target_label="camera"),  # overlaps 0
        event(2, "mutual_gaze", 0.0, 1.0, [0, 1]), event(3, "gaze_aversion", 0.5, 1.5, [0, 1], initiator_id=1),
        event(4, "gaze_at", 2.0, 2.5, [1], initiator_id=1, **hands_of(1)),                 # past the 2.2 s clip
        event(5, "gaze_following", 0.0, 0.5, [0, 1], leader_id=0, follower_id=1, **hands_of(1)),  # own hands
        event(6, "gaze_following", 0.0, 0.5, [0, 1], leader_id=1, follower_id=0, **hands_of(1)),  # already looking
        event(7, "joint_attention", 0.0, 1.0, [0, 1], target_type="none", target_label="camera"),
        event(8, "joint_attention", 0.0, 1.0, [0, 5], **hands_of(1)),                      # 1 also looks, unlisted
    ], EVENTS_SCHEMA)
    bad_qa = table_from_rows([
        qa_row("a", "T2", "T2.type", "From 1.0 to 2.5 seconds, what happens?", "Eye contact", time_range=(1.0, 2.5)),
        qa_row("b", "T2", "T2.type", "Same question?", "Eye contact"),
        qa_row("c", "T2", "T2.type", "Same question?", "Breaking off eye contact")], QA_SCHEMA)
    problems = check_tables(bad_tracks, bad_events, bad_qa, duration=2.2, aspect=16 / 9)
    text = "\n".join(problems)
    assert "Person 1 has 2 rows (gaze targets) at sampled frame 0" in text
    assert "Person 0 looks at their own hands at 2.50 s but the gaze misses every hand box" in text
    assert "Person 1 looks at their own hands at 2.50 s but the gaze misses every hand box" in text
    assert "Person 0 looks at two targets at once: gaze_at 0" in text
    # the association's own reach is no violation: the same level ray passing 0.15 above a box within the cone
    near = table_from_rows([track_row(2.5, 1, TOY_HEAD["B"], "hands", 1, frame=5, hands=[[0.3, 0.3, 0.5, 0.4]],
                                      point=[0.5, 0.3], ray=[-1.0, 0.0, 0.0])], TRACKS_SCHEMA)
    assert check_tables(near, events.slice(0, 0), qa.slice(0, 0), duration=2.2, aspect=16 / 9) == []
    # a read that passes beside the box, which lies within the read's uncertainty: such a row takes its firm
    # neighbours' target when one of its turned reads names it (events.geometry.settle_ambiguous_targets)
    grazing = table_from_rows([track_row(2.5, 1, TOY_HEAD["B"], "hands", 1, frame=5, hands=[[0.2, 0.2, 0.24, 0.23]],
                                         point=[0.24, 0.2], ray=[-0.8, 0.0, -0.6])], TRACKS_SCHEMA)
    assert check_tables(grazing, events.slice(0, 0), qa.slice(0, 0), duration=2.2, aspect=16 / 9) == []
    assert check_tables(grazing, events.slice(0, 0), qa.slice(0, 0), duration=2.2, aspect=16 / 9,
                        gaze=GazeConfig(target_uncertainty_deg=0.0)) != []
    assert "eye contact 2 (0.00-1.00 s) overlaps gaze_aversion 3" in text
    assert "gaze_at 4 spans 2.00-2.50 s, outside the clip [0, 2.20] s" in text
    assert "gaze_following 5 (0.00-0.50 s): Person 1 'follows' onto their own hands" in text
    assert "gaze_following 6 (0.00-0.50 s): the follower (Person 0) already looks at the target" in text
    assert "joint_attention 7 (0.00-1.00 s) is on 'camera'" in text
    assert "joint_attention 8 (0.00-1.00 s): Person 1 also look(s) at the target at its first frame" in text
    assert "qa: a (T2) time_range 1.00-2.50 s is outside the clip" in text
    assert "qa: a (T2) asks about 2.50 s, past the clip end" in text
    assert "'Same question?' has 2 different keys" in text
    assert len(problems) == 13



def test_each_events_table_rule_is_reported():
    """The rules an events table states on its own (what the tests check on every table they detect)."""
    face, cup = {"target_type": "person"}, {"target_type": "object", "target_label": "cup",
                                            "details": {"target_type": "object", "target_id": 0}}
    camera = {"target_type": "none", "target_label": "camera"}
    rows = [
        event(0, "gaze_at", 0.0, 2.0, [0], initiator_id=0, target_person_id=1, **face),
        event(1, "gaze_at", 1.0, 3.0, [0], initiator_id=0, target_person_id=1, **face),  # overlaps 0, same target
        event(2, "mutual_gaze", 0.0, 2.0, [0, 1]),
        event(3, "mutual_gaze", 1.0, 2.0, [0, 2]),                                       # Person 0 with 1 and 2
        event(4, "gaze_aversion", 5.0, 6.0, [1, 2], initiator_id=1),                     # no contact of 1 and 2
        event(5, "gaze_following", 3.0, 4.0, [0, 1], leader_id=0, follower_id=1, lag_seconds=1.0, **camera),
        event(6, "gaze_following", 3.0, 4.0, [0, 2], leader_id=0, follower_id=2, lag_seconds=5.0, **hands_of(1)),
        event(7, "gaze_following", 6.0, 7.0, [3, 4], leader_id=3, follower_id=4, lag_seconds=1.0, target_person_id=5,
              details={"leader_onset_time": 6.0}, **face),                              # 4 already on 5 (event 8)
        event(8, "gaze_at", 5.5, 7.0, [4], initiator_id=4, target_person_id=5, **face),
        event(9, "joint_attention", 8.0, 9.0, [3], **hands_of(5)),                       # one person
        event(10, "joint_attention", 8.0, 9.0, [3, 4], details={"joined_later": [4]}, **hands_of(5)),
        event(11, "joint_attention", 0.0, 2.0, [0, 1], **cup),                           # 0 looks at 1's face
        event(12, "joint_attention", 5.5, 7.0, [3, 6], target_person_id=5, **face),      # 4 looks too, unlisted
        event(13, "attention_capture", 3.0, 4.0, [0, 1, 2], **camera),
        event(14, "attention_capture", 3.0, 4.0, [0], **hands_of(1)),                    # 1 of 3 people
        event(15, "gaze_follows_gesture", 4.0, 5.0, [0, 1], leader_id=0, follower_id=1,
              details={"target": ["person", 1]}),                                        # the pointed-at person
        event(16, "pointing", 2.0, 3.0, [0], initiator_id=0, target_type="none"),
        event(17, "gaze_gesture_alignment", 2.5, 3.5, [0], initiator_id=0, parent_event_ids=[16]),
        event(18, "co_occur", 0.0, 9.0, [0], parent_event_ids=[99]),
        event(19, "co_occur", 0.0, 9.0, [0], parent_event_ids=[1]),
        event(20, "gaze_following", 8.0, 9.0, [1, 2], leader_id=2, follower_id=1, lag_seconds=1.0, **hands_of(1)),
    ]
    problems = check_events_table(table_from_rows(rows, EVENTS_SCHEMA), 10.0)
    text = "\n".join(problems)
    assert "Person 0 has two gaze_at events on one target at once: gaze_at 0 (0.00-2.00 s) and 1" in text
    assert "eye contact 3 (1.00-2.00 s) overlaps eye contact 2" in text
    assert "gaze_aversion 4 (5.00-6.00 s) breaks no reported eye contact" in text
    assert "gaze_following 5 (3.00-4.00 s) follows onto camera" in text
    assert "gaze_following 6 (3.00-4.00 s): lag 5.0 s outside [0.5, 2.0] s" in text
    assert "gaze_following 7 (6.00-7.00 s): the follower (Person 4) already looks at the target" in text
    assert "joint_attention 9 (8.00-9.00 s) lists fewer than two people" in text
    assert "joint_attention 10 (8.00-9.00 s) lists fewer than two people, or a member also as joined later" in text
    assert "joint_attention 11 (0.00-2.00 s): Person 0 looks at something else meanwhile (gaze_at 0)" in text
    assert "joint_attention 12 (5.50-7.00 s): Person 4 attends at its first frame (gaze_at 8)" in text
    assert "attention_capture 13 (3.00-4.00 s) by camera of 3 people" in text
    assert "attention_capture 14 (3.00-4.00 s) by hands of 1 people" in text
    assert "gaze_follows_gesture 15 (4.00-5.00 s): the gesturer, or the gesture's target person" in text
    assert "gaze_gesture_alignment 17 (2.50-3.50 s) lies outside its parent 16" in text
    assert "co_occur 18 (0.00-9.00 s) cites a missing parent 99" in text
    assert "co_occur 19 (0.00-9.00 s) cites rule-breaking parent 1" in text
    assert "gaze_following 20 (8.00-9.00 s): Person 1 'follows' onto their own hands" in text
    assert len(problems) == 17
    # the same table without the broken events keeps every rule
    good = [r for r in rows if r["event_id"] in (0, 2, 8, 16)]
    assert check_events_table(table_from_rows(good, EVENTS_SCHEMA), 10.0) == []

# --- the real pipeline on the shared clips (slow) ----------------------------------------------

# Floors just below what the default settings measure (benchmarks/README.md), per set of the truth (DESIGN.md
# §10): the first 8 clips are developed against, the 3 added later validate. Raise them as quality improves.
# Precision comes first (issue 10): every event type the first set decides is held to 0.9 and QA agreement to
# 0.9, while recall of shared attention may stay low: a look must be seen on two samples
# (events.min_look_samples), so at 2 fps the kitchen's 0.2 s glances are not reported. Gaze: 0.929 (52 of 56
# rows) measured on AMD EPYC; the floor (49 rows) leaves 3 rows for another CPU's numerics. The validation
# set's floors are a few rows below what it measures (issue 22: gaze 0.528 = 28 of 53 rows at the start, 0.868
# = 46 of 53 now, the floor 43 rows; QA 11 of 12, the floor 0.8: its wrong item asks about
# yakhyo_classroom_group's misread look, see benchmarks/README.md "Issue 22").
FLOORS = {
    "development": {"gaze_accuracy": 0.875, "tracking_coverage": 0.93, "qa_agreement": 0.9, "pointing_recall": 1.0,
                    "pointing_precision": 1.0, "joint_attention_recall": 0.3, "mutual_gaze_recall": 1.0},
    "validation": {"gaze_accuracy": 0.8, "tracking_coverage": 0.93, "qa_agreement": 0.8,
                   "mutual_gaze_recall": 1.0},
}
PRECISION_FLOOR = {"development": 0.9}  # per event type, over the events the truth decides


@pytest.fixture(scope="module")
def shared_scores(media_dir, default_truth_run):
    """The default run of `socialtrace run` over every annotated clip, scored against the truth."""
    return score_output(default_truth_run, GroundTruth.load(media_dir / "truth"))


def test_shared_truth_sets_are_apart(media_dir):
    truth = GroundTruth.load(media_dir / "truth")
    development, validation = truth.video_ids("development"), truth.video_ids("validation")
    assert len(development) == 8 and len(validation) == 3 and not set(development) & set(validation)
    assert sorted(development + validation) == truth.video_ids()
    with pytest.raises(TruthError, match="unknown truth set 'test'"):
        truth.video_ids("test")


@pytest.mark.slow
@pytest.mark.parametrize("truth_set", ["development", "validation"])
def test_accuracy_floors_on_shared_clips(shared_scores, truth_set):
    scores = [s for s in shared_scores if truth_set_of(s.video_id) == truth_set]
    t = totals(scores)
    floors = FLOORS[truth_set]
    measured = {"gaze_accuracy": t.gaze.accuracy, "tracking_coverage": t.tracking_coverage,
                "qa_agreement": t.qa.agreement(), "pointing_recall": t.events.recall_of("pointing"),
                "pointing_precision": t.events.precision("pointing"),
                "joint_attention_recall": t.events.recall_of("joint_attention"),
                "mutual_gaze_recall": t.events.recall_of("mutual_gaze")}
    below = {k: round(measured[k], 3) for k in floors if not measured[k] >= floors[k]}
    assert not below, f"{truth_set}: below the floors {floors}: {below} (all: {measured})"
    qa = t.qa.totals()
    assert qa[RIGHT] + qa[WRONG] >= (8 if truth_set == "development" else 4), f"too few checkable QA items: {qa}"
    assert t.merges == 0
    assert t.splits == 0  # no annotated person followed under two ids (issue 23: no id switches)
    if truth_set == "development":
        decided = {kind: t.events.precision(kind) for kind in t.events.verdicts
                   if t.events.verdicts[kind].get(RIGHT, 0) + t.events.verdicts[kind].get(WRONG, 0) > 0}
        imprecise = {kind: round(p, 3) for kind, p in decided.items() if p < PRECISION_FLOOR[truth_set]}
        assert not imprecise, f"event precision below {PRECISION_FLOOR}: {imprecise} (all: {decided})"
        assert {"gaze_at", "mutual_gaze", "joint_attention", "pointing"} <= set(decided)
        assert t.gaze.rows >= 50
        # the kitchen's two people are always found, each under one id
        kitchen = next(s for s in scores if s.video_id == "atd_kitchen")
        assert all(v["identity_ok"] == v["rows"] for v in kitchen.match.per_label.values())
        # the blurred background woman of tvhid_highfive_0018, her legs hidden behind the bald man, keeps one id
        # from 1.0 to 2.52 s though her box is 1.5x shorter at the end (person scale from the head: stitching's
        # person_scales); the sixth instant, 0.75 s, falls on the 0.52 s sample, before she walks into view
        woman = next(s for s in scores if s.video_id == "tvhid_highfive_0018").match.per_label["C"]
        assert woman["tracked"] >= 5 and woman["identity_ok"] == woman["tracked"], woman
    else:
        assert t.gaze.rows >= 45


@pytest.mark.slow
def test_consistency_on_shared_clips(shared_scores):
    problems = [f"{s.video_id}: {p}" for s in shared_scores for p in s.consistency]
    assert problems == [], "\n".join(problems)
