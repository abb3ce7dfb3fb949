"""Rules the written tables of one clip must satisfy whatever the footage (issue 10, part 2): a list of
human-readable violations, empty when the clip is consistent.

- one gaze target per person per sampled frame, and no overlapping gaze_at events of one person with
  different targets;
- eye contact (mutual_gaze) and gaze_aversion of the same pair never overlap in time;
- every event, every QA time_range and every time a question names lies inside [0, clip duration]
  (no tolerance: a time past the end names something nobody can see);
- gaze_following: the leader looks first at a target that is not the follower's own face or hands, and
  the follower is not already looking at it when the leader starts;
- joint_attention only on a person, hands or an object (not the camera, elsewhere or a bare spot), with
  everyone looking at that target at its first frame listed in persons_involved;
- "own hands" gaze only where the gaze lands on one of the person's own detected hand boxes;
- no two QA items of the clip with the same question and different keys.
"""
from __future__ import annotations

import itertools
import re
from collections import defaultdict
from typing import Optional

import pyarrow as pa

from qa_gen.events_view import Event, people_of, read_events

# Gaze "lands on" a hand box when the landing point is inside the box widened by this much (normalised
# units; the margin GRASP allows around a face box).
HAND_BOX_MARGIN = 0.02
_EPS = 1e-6
# times a question names: "between 1.0 and 2.5 seconds", "from 1.0 to 2.5 seconds", "at 1.0 seconds"
_QUESTION_TIMES = re.compile(r"(?:between|from) (\d+(?:\.\d+)?) (?:and|to) (\d+(?:\.\d+)?) seconds|\bat (\d+(?:\.\d+)?) seconds", re.IGNORECASE)


def _overlap(a: Event, b: Event) -> bool:
    return a.start < b.end - _EPS and b.start < a.end - _EPS


def _span(e: Event) -> str:
    return f"{e.start:.2f}-{e.end:.2f} s"


def _target_key(e: Event) -> Optional[tuple]:
    return None if e.target is None else e.target.key


def question_times(question: str) -> list[float]:
    """Every instant a question names (window bounds and 'at' times)."""
    out = []
    for m in _QUESTION_TIMES.finditer(question):
        out += [float(v) for v in m.groups() if v is not None]
    return out


def check_tracks(tracks: pa.Table) -> list[str]:
    problems = []
    rows = tracks.select([c for c in ("frame_idx", "t", "person_id", "gaze_target_type", "gaze_target_id",
                                      "gaze_point", "hand_bboxes") if c in tracks.column_names]).to_pylist()
    seen: dict[tuple[int, int], int] = defaultdict(int)
    for r in rows:
        seen[(r["frame_idx"], r["person_id"])] += 1
    for (frame, pid), n in sorted(seen.items()):
        if n > 1:
            problems.append(f"tracks: Person {pid} has {n} rows (gaze targets) at sampled frame {frame}")
    for r in rows:
        if r["gaze_target_type"] != "hands" or r["gaze_target_id"] != r["person_id"]:
            continue
        point = r.get("gaze_point")
        boxes = [b for b in (r.get("hand_bboxes") or []) if b is not None]
        on_hand = point is not None and any(
            b[0] - HAND_BOX_MARGIN <= point[0] <= b[2] + HAND_BOX_MARGIN
            and b[1] - HAND_BOX_MARGIN <= point[1] <= b[3] + HAND_BOX_MARGIN for b in boxes)
        if not on_hand:
            where = "no hand box detected" if not boxes else "the gaze lands outside every hand box"
            problems.append(f"tracks: Person {r['person_id']} looks at their own hands at {r['t']:.2f} s but {where}")
    return problems


def check_events(events: list[Event], tracks: pa.Table, duration: float) -> list[str]:
    problems = []
    for e in events:
        if e.start < -_EPS or e.end > duration + _EPS or e.end < e.start:
            problems.append(f"events: {e.event_type} {e.event_id} spans {_span(e)}, outside the clip [0, {duration:.2f}] s")
    gaze_at = [e for e in events if e.event_type == "gaze_at"]
    for a, b in itertools.combinations(gaze_at, 2):
        if a.actor == b.actor and _target_key(a) != _target_key(b) and _overlap(a, b):
            problems.append(f"events: Person {a.actor} looks at two targets at once: gaze_at {a.event_id} ({_span(a)}) "
                            f"and {b.event_id} ({_span(b)})")
    contacts = [e for e in events if e.event_type == "mutual_gaze"]
    for av in (e for e in events if e.event_type == "gaze_aversion"):
        for mg in contacts:
            if people_of(av) >= set(mg.persons) and _overlap(av, mg):
                problems.append(f"events: eye contact {mg.event_id} ({_span(mg)}) overlaps gaze_aversion {av.event_id} "
                                f"({_span(av)}) of the same pair")
    looks = _looks(tracks)
    for e in events:
        if e.event_type == "gaze_following":
            problems += _check_following(e, looks)
        elif e.event_type == "joint_attention":
            problems += _check_joint(e, looks)
    return problems


def _looks(tracks: pa.Table) -> dict[int, list[tuple[float, Optional[tuple]]]]:
    """person -> [(t, target key)] in time order; keys as qa_gen's Target.key (kind, person_id, label)."""
    out: dict[int, list] = defaultdict(list)
    cols = tracks.select(["t", "person_id", "gaze_target_type", "gaze_target_id"]).to_pylist()
    for r in cols:
        kind, tid = r["gaze_target_type"], r["gaze_target_id"]
        key = (kind, int(tid), "") if kind in ("person", "hands") and tid is not None else (kind, -1, "")
        out[int(r["person_id"])].append((float(r["t"]), key))
    for v in out.values():
        v.sort(key=lambda x: x[0])
    return out


def _check_following(e: Event, looks) -> list[str]:
    name = f"events: gaze_following {e.event_id} ({_span(e)})"
    if e.leader is None or e.follower is None or e.target is None:
        return [f"{name} lacks a leader, follower or target"]
    if e.target.kind in ("person", "hands") and e.target.person_id == e.follower:
        return [f"{name}: Person {e.follower} 'follows' onto their own {'face' if e.target.kind == 'person' else 'hands'}"]
    if e.leader == e.follower:
        return [f"{name}: leader and follower are the same person"]
    key = e.target.key
    lead_on = [t for t, k in looks.get(e.leader, []) if k == key and t <= e.end + _EPS]
    if not lead_on:
        return [f"{name}: the leader (Person {e.leader}) never looks at the target before the follower"]
    lead_start = _run_start(looks.get(e.leader, []), key, lead_on[-1])
    foll = looks.get(e.follower, [])
    already = [t for t, k in foll if k == key and abs(t - lead_start) <= _EPS]
    if already:
        return [f"{name}: the follower (Person {e.follower}) already looks at the target when the leader starts "
                f"({lead_start:.2f} s)"]
    return []


def _run_start(seq: list[tuple[float, tuple]], key: tuple, t_in: float) -> float:
    """Start of the run of ``key`` that contains time ``t_in``."""
    start = t_in
    for t, k in reversed([x for x in seq if x[0] <= t_in + _EPS]):
        if k != key:
            break
        start = t
    return start


def _check_joint(e: Event, looks) -> list[str]:
    name = f"events: joint_attention {e.event_id} ({_span(e)})"
    if e.target is None or e.target.kind not in ("person", "hands", "object"):
        what = "no target" if e.target is None else f"'{e.target.kind}'"
        return [f"{name} is on {what}: shared attention needs a person, hands or an object"]
    if len(set(e.persons)) < 2:
        return [f"{name} lists fewer than two people"]
    if e.target.kind == "object":
        return []  # object ids of tracks and labels of events are not comparable here
    key = e.target.key
    missing = []
    for pid, seq in looks.items():
        if pid in e.persons:
            continue
        first = [k for t, k in seq if abs(t - e.start) <= _EPS]
        if first and first[0] == key:
            missing.append(pid)
    if missing:
        return [f"{name}: Person {', '.join(map(str, missing))} also look(s) at the target at its first frame "
                f"but is not in persons_involved {list(e.persons)}"]
    return []


def check_qa(qa: pa.Table, duration: float) -> list[str]:
    problems = []
    rows = qa.to_pylist()
    keys: dict[str, set] = defaultdict(set)
    for r in rows:
        offset = float(r.get("unit_start") or 0.0)
        a, b = (float(v) + offset for v in r["time_range"])
        if a < -_EPS or b > duration + _EPS or b < a:
            problems.append(f"qa: {r['qa_id']} ({r['category']}) time_range {a:.2f}-{b:.2f} s is outside the clip "
                            f"[0, {duration:.2f}] s")
        late = [t + offset for t in question_times(r["question"]) if t + offset > duration + _EPS]
        if late:
            problems.append(f"qa: {r['qa_id']} ({r['category']}) asks about {max(late):.2f} s, past the clip end "
                            f"{duration:.2f} s: {r['question']!r}")
        keys[r["question"]].add(r["answer_text"])
    for question, answers in keys.items():
        if len(answers) > 1:
            problems.append(f"qa: the question {question!r} has {len(answers)} different keys: {sorted(answers)}")
    return problems


def check_tables(tracks: pa.Table, events: pa.Table, qa: pa.Table, duration: float) -> list[str]:
    """Every violation of the rules above in one clip's tables."""
    parsed = read_events(events)
    return check_tracks(tracks) + check_events(parsed, tracks, duration) + check_qa(qa, duration)


def check_clip(run) -> list[str]:
    """``check_tables`` of a pipeline.accuracy.ClipRun."""
    return check_tables(run.tracks, run.events_table, run.qa, run.duration)
