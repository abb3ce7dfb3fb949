"""Rules the written tables of one clip must satisfy whatever the footage (issue 10, part 2): a list of
human-readable violations, empty when the clip is consistent. The tests check every events table they
make with the same functions (``check_events_table``), so the product and the tests share one reading.

- one gaze target per person per sampled frame, and no overlapping gaze_at events of one person;
- eye contact (mutual_gaze) with one person at a time; mutual_gaze and gaze_aversion of the same pair
  never overlap in time, and an aversion breaks a reported eye contact that ends when it starts;
- every event, every QA time_range and every time a question names lies inside [0, clip duration]
  (no tolerance: a time past the end names something nobody can see);
- gaze_following onto a person, hands or an object that is not the follower's own face or hands, by a
  leader other than the follower who looks first, with a lag within the configured bounds, the follower
  not already looking at it when the leader starts (a row with no read inside the leader's look does not
  restart it, as the events bridge it);
- joint_attention only on a person, hands or an object (not the camera, elsewhere or a bare spot), of at
  least two people (none also listed as joined later), with everyone looking at that target at its first
  frame listed in persons_involved (a look as the events define one: long enough to be reported, not a
  one-sample glance); a pair's shared focus holds throughout (neither looks elsewhere);
- attention_capture only by a person, hands or an object, of at least capture_min_people people;
- gaze_follows_gesture never names the gesturer, or the person the gesture is aimed at, as the follower;
  eye_contact_during_gesture and gaze_gesture_alignment lie inside their parents; no event cites a
  missing or rule-breaking parent;
- "own hands" gaze only where the gaze ray reaches one of the person's own detected hand boxes by the
  association's evidence rule (events.geometry.gaze_reaches_boxes: within the cone, passing within
  gaze.target_max_miss half-diagonals; not a box merely somewhere below the eyes), as read or turned within
  gaze.target_uncertainty_deg (the reads a marginal row is settled by);
- no two QA items of the clip with the same question and different keys;
- no event runs across a camera cut unless every one of its people is seen on both sides of it (in the
  event's time before the cut and after it): otherwise the event joins one shot's person to whoever is
  on screen in the next (check_cuts; the cut is the tracks' shot_start_t, or the first sampled frame of
  the new shot for tracks written without it).
"""
from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import defaultdict
from typing import Optional

import numpy as np
import pyarrow as pa

from detectors.config import GazeConfig
from events.config import EventConfig
from events.geometry import gaze_reaches_boxes, turned_directions
from qa_gen.events_view import Event, people_of, read_events

# Gaze "lands on" a hand box when the landing point is inside the box widened by this much (normalised
# units; the margin GRASP allows around a face box).
HAND_BOX_MARGIN = 0.02
_EPS = 1e-6
SCENE_KINDS = ("person", "hands", "object")  # what shared attention, following and capture can be on
# times a question names: "between 1.0 and 2.5 seconds", "from 1.0 to 2.5 seconds", "at 1.0 seconds"
_QUESTION_TIMES = re.compile(r"(?:between|from) (\d+(?:\.\d+)?) (?:and|to) (\d+(?:\.\d+)?) seconds|\bat (\d+(?:\.\d+)?) seconds", re.IGNORECASE)


def _overlap(a: Event, b: Event) -> bool:
    return a.start < b.end - _EPS and b.start < a.end - _EPS


def _span(e: Event) -> str:
    return f"{e.start:.2f}-{e.end:.2f} s"


def question_times(question: str) -> list[float]:
    """Every instant a question names (window bounds and 'at' times)."""
    out = []
    for m in _QUESTION_TIMES.finditer(question):
        out += [float(v) for v in m.groups() if v is not None]
    return out


def _lands_on_hand(row: dict, boxes: list, aspect: Optional[float], gaze: GazeConfig) -> bool:
    origin, direction = row.get("gaze_origin"), row.get("gaze_dir")
    if aspect and origin is not None and direction is not None and len(direction) == 3 and boxes:
        # the ray as read, or turned within its uncertainty: a row whose read grazes the box edge takes the
        # target of its firm neighbours when one of those turned reads names it (settle_ambiguous_targets)
        reads = [np.asarray(direction, np.float64)]
        if gaze.target_uncertainty_deg > 0:
            reads += list(turned_directions(reads[0][None], gaze.target_uncertainty_deg)[:, 0])
        return any(gaze_reaches_boxes(origin, read, boxes, aspect=aspect, max_miss=gaze.target_max_miss,
                                      cone_half_angle_deg=gaze.cone_half_angle_deg).any() for read in reads)
    point = row.get("gaze_point")  # no ray recorded: where the gaze was placed must be on a hand
    return point is not None and any(b[0] - HAND_BOX_MARGIN <= point[0] <= b[2] + HAND_BOX_MARGIN
                                     and b[1] - HAND_BOX_MARGIN <= point[1] <= b[3] + HAND_BOX_MARGIN
                                     for b in boxes)


def check_tracks(tracks: pa.Table, aspect: Optional[float] = None, gaze: Optional[GazeConfig] = None) -> list[str]:
    """``aspect`` (frame width / height) lets "own hands" be checked on the gaze ray itself, with the run's
    ``gaze`` settings (defaults if None); without it only the recorded landing point is."""
    gaze = gaze or GazeConfig()
    problems = []
    rows = tracks.select([c for c in ("frame_idx", "t", "person_id", "gaze_target_type", "gaze_target_id",
                                      "gaze_point", "gaze_origin", "gaze_dir", "hand_bboxes")
                          if c in tracks.column_names]).to_pylist()
    seen: dict[tuple[int, int], int] = defaultdict(int)
    for r in rows:
        seen[(r["frame_idx"], r["person_id"])] += 1
    for (frame, pid), n in sorted(seen.items()):
        if n > 1:
            problems.append(f"tracks: Person {pid} has {n} rows (gaze targets) at sampled frame {frame}")
    for r in rows:
        if r["gaze_target_type"] != "hands" or r["gaze_target_id"] != r["person_id"]:
            continue
        boxes = [b for b in (r.get("hand_bboxes") or []) if b is not None]
        if not _lands_on_hand(r, boxes, aspect, gaze):
            where = "no hand box detected" if not boxes else "the gaze misses every hand box"
            problems.append(f"tracks: Person {r['person_id']} looks at their own hands at {r['t']:.2f} s but {where}")
    return problems


def check_events(events: list[Event], duration: float, tracks: Optional[pa.Table] = None,
                 config: Optional[EventConfig] = None) -> list[str]:
    """The rules on events (module docstring), at most one line per broken event (its first broken rule),
    plus any event citing a missing or rule-breaking parent. Without ``tracks`` only the rules the events
    table states on its own are checked; ``config`` bounds the gaze_following lag (defaults if None)."""
    config = config or EventConfig()
    bad: dict[int, str] = {}
    by_type: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_type[e.event_type].append(e)

    def flag(e: Event, why: str) -> None:
        bad.setdefault(e.event_id, why)

    for e in events:
        if e.start < -_EPS or e.end > duration + _EPS or e.end < e.start:
            flag(e, f"events: {e.event_type} {e.event_id} spans {_span(e)}, outside the clip [0, {duration:.2f}] s")
    looks = by_type["gaze_at"]
    for a, b in itertools.combinations(looks, 2):
        if a.actor == b.actor and _overlap(a, b):
            what = "looks at two targets at once" if _focus(a) != _focus(b) else "has two gaze_at events on one target at once"
            flag(b, f"events: Person {a.actor} {what}: gaze_at {a.event_id} ({_span(a)}) and {b.event_id} ({_span(b)})")
    contacts = by_type["mutual_gaze"]
    for a, b in itertools.combinations(contacts, 2):
        if set(a.persons) & set(b.persons) and _overlap(a, b):
            flag(b, f"events: eye contact {b.event_id} ({_span(b)}) overlaps eye contact {a.event_id} ({_span(a)}) "
                    f"of Person {sorted(set(a.persons) & set(b.persons))[0]}: eye contact with two people at once")
    for av in by_type["gaze_aversion"]:
        for mg in contacts:
            if people_of(av) >= set(mg.persons) and _overlap(av, mg):
                flag(av, f"events: eye contact {mg.event_id} ({_span(mg)}) overlaps gaze_aversion {av.event_id} "
                         f"({_span(av)}) of the same pair")
        # the contact it breaks is a reported mutual_gaze of the pair (the one starting at
        # contact_start_time, when recorded) that ends by the time the aversion starts
        started = av.details.get("contact_start_time")
        if not any(set(mg.persons) == set(av.persons) and mg.end <= av.start + _EPS
                   and (started is None or abs(mg.start - started) < _EPS) for mg in contacts):
            flag(av, f"events: gaze_aversion {av.event_id} ({_span(av)}) breaks no reported eye contact")
    track_looks = _looks(tracks) if tracks is not None else None
    track_times = _keys_by_time(track_looks) if track_looks is not None else None
    for e in by_type["gaze_following"]:
        for why in _check_following(e, track_looks, config) + _following_rules(e, looks, config):
            flag(e, why)
    for e in by_type["joint_attention"]:
        for why in _check_joint(e, track_times, config) + _joint_rules(e, looks):
            flag(e, why)
    for e in by_type["attention_capture"]:
        if _focus(e)[0] not in SCENE_KINDS or len(e.persons) < config.capture_min_people:
            flag(e, f"events: attention_capture {e.event_id} ({_span(e)}) by {_focus(e)[0]} of {len(e.persons)} "
                    f"people (needs a person, hands or an object and {config.capture_min_people} people)")
    for e in by_type["gaze_follows_gesture"]:
        target = e.details.get("target")
        if e.follower == e.leader or (target and target[0] == "person" and target[1] == e.follower):
            flag(e, f"events: gaze_follows_gesture {e.event_id} ({_span(e)}): the gesturer, or the gesture's target "
                    f"person, counted as following the gesture")
    by_id = {e.event_id: e for e in events}
    for e in by_type["eye_contact_during_gesture"] + by_type["gaze_gesture_alignment"]:
        for p in e.parents:
            parent = by_id.get(p)
            if parent and not (parent.start - _EPS <= e.start and e.end <= parent.end + _EPS):
                flag(e, f"events: {e.event_type} {e.event_id} ({_span(e)}) lies outside its parent {p} ({_span(parent)})")
    if tracks is not None:
        for e, why in check_cuts(events, tracks):
            flag(e, why)
    # an event must not cite a missing or rule-breaking parent (in id order: a chain of citations propagates)
    for e in sorted(events, key=lambda x: x.event_id):
        for p in e.parents:
            if p not in by_id:
                flag(e, f"events: {e.event_type} {e.event_id} ({_span(e)}) cites a missing parent {p}")
            elif p in bad:
                flag(e, f"events: {e.event_type} {e.event_id} ({_span(e)}) cites rule-breaking parent {p}")
    return [bad[k] for k in sorted(bad)]


def cut_times(tracks: pa.Table) -> list[float]:
    """Times of the camera cuts of a tracks table: each shot's start after the first."""
    cols = ["t", "shot_id"] + (["shot_start_t"] if "shot_start_t" in tracks.column_names else [])
    first: dict[int, float] = {}
    for r in tracks.select(cols).to_pylist():
        start = r.get("shot_start_t")
        start = r["t"] if start is None else start
        first[r["shot_id"]] = min(first.get(r["shot_id"], math.inf), start)
    return sorted(t for shot, t in first.items() if shot != min(first))


def check_cuts(events: list[Event], tracks: pa.Table) -> list[tuple[Event, str]]:
    """(event, why) of each event that runs across a cut with one of its people not seen on one side of it
    (module doc)."""
    cuts = cut_times(tracks)
    if not cuts:
        return []
    seen: dict[int, list[float]] = defaultdict(list)
    for r in tracks.select(["t", "person_id"]).to_pylist():
        seen[r["person_id"]].append(r["t"])
    problems = []
    for e in events:
        for cut in cuts:
            if not (e.start < cut - _EPS and e.end > cut + _EPS):
                continue
            missing = [p for p in sorted(people_of(e))
                       if not (any(e.start - _EPS <= t < cut - _EPS for t in seen.get(p, ()))
                               and any(cut - _EPS <= t < e.end - _EPS for t in seen.get(p, ())))]
            if missing:
                problems.append((e, f"events: {e.event_type} {e.event_id} ({_span(e)}) runs across the cut at "
                                    f"{cut:.2f} s but Person {missing[0]} is not seen on both sides of it"))
                break
    return problems


def check_events_table(events: pa.Table, duration: float, config: Optional[EventConfig] = None,
                       tracks: Optional[pa.Table] = None) -> list[str]:
    """``check_events`` of one video's events table as written."""
    return check_events(read_events(events), duration, tracks, config)


def _focus(e: Event) -> tuple:
    """What an event is directed at, as the events stage keys it: (kind, id) from ``details`` (where object
    ids are), else from the target columns."""
    if isinstance(e.details.get("target_type"), str):
        return e.details["target_type"], e.details.get("target_id")
    if e.target is None:
        return None, None
    return e.target.kind, e.target.person_id if e.target.kind in ("person", "hands") else (e.target.label or None)


def _following_rules(e: Event, looks: list[Event], config: EventConfig) -> list[str]:
    """gaze_following as the events table states it: onto a scene thing, a lag within the configured
    bounds, and the follower not already looking at the target (a gaze_at) when the leader starts."""
    name = f"events: gaze_following {e.event_id} ({_span(e)})"
    focus = _focus(e)
    if focus[0] not in SCENE_KINDS:
        return [f"{name} follows onto {focus[0]}: following needs a person, hands or an object"]
    if e.lag is None or not config.following_min_lag_seconds - _EPS <= e.lag <= config.following_max_lag_seconds + _EPS:
        return [f"{name}: lag {e.lag} s outside [{config.following_min_lag_seconds}, "
                f"{config.following_max_lag_seconds}] s"]
    onset = e.details.get("leader_onset_time")
    already = [look for look in looks if onset is not None and look.actor == e.follower and _focus(look) == focus
               and look.start <= onset + _EPS < look.end]
    if already:
        return [f"{name}: the follower (Person {e.follower}) already looks at the target when the leader starts "
                f"(gaze_at {already[0].event_id})"]
    return []


def _joint_rules(e: Event, looks: list[Event]) -> list[str]:
    """joint_attention as the events table states it: nobody listed twice; a pair's shared focus holds
    throughout (neither has a gaze_at elsewhere meanwhile); whoever has a gaze_at on the target at its first
    frame is involved."""
    name = f"events: joint_attention {e.event_id} ({_span(e)})"
    if e.target is None or _focus(e)[0] not in SCENE_KINDS:
        what = "no target" if e.target is None else f"'{e.target.kind}'"
        return [f"{name} is on {what}: shared attention needs a person, hands or an object"]
    later = set(e.details.get("joined_later", []))
    if len(set(e.persons)) < 2 or later & set(e.persons):
        return [f"{name} lists fewer than two people, or a member also as joined later"]
    focus = _focus(e)
    foci = {(f["target_type"], f["target_id"]) for f in e.details.get("targets", [])} | {focus}
    for look in looks:
        if (len(set(e.persons) | later) == 2 and look.actor in e.persons and _overlap(look, e)
                and _focus(look) not in foci):
            return [f"{name}: Person {look.actor} looks at something else meanwhile (gaze_at {look.event_id})"]
        if _focus(look) == focus and look.start <= e.start + _EPS < look.end and look.actor not in e.persons:
            return [f"{name}: Person {look.actor} attends at its first frame (gaze_at {look.event_id}) but is not "
                    f"in persons_involved {list(e.persons)}"]
    return []


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


def _check_following(e: Event, looks: Optional[dict], config: EventConfig) -> list[str]:
    name = f"events: gaze_following {e.event_id} ({_span(e)})"
    if e.leader is None or e.follower is None or e.target is None:
        return [f"{name} lacks a leader, follower or target"]
    if e.target.kind in ("person", "hands") and e.target.person_id == e.follower:
        return [f"{name}: Person {e.follower} 'follows' onto their own {'face' if e.target.kind == 'person' else 'hands'}"]
    if e.leader == e.follower:
        return [f"{name}: leader and follower are the same person"]
    if looks is None:
        return []  # no tracks: _following_rules checks the events table alone
    key = e.target.key
    lead_on = [t for t, k in looks.get(e.leader, []) if k == key and t <= e.end + _EPS]
    if not lead_on:
        return [f"{name}: the leader (Person {e.leader}) never looks at the target before the follower"]
    lead_start = _run_start(looks.get(e.leader, []), key, lead_on[-1], config.smoothing_gap_seconds)
    foll = looks.get(e.follower, [])
    already = [t for t, k in foll if k == key and abs(t - lead_start) <= _EPS]
    if already:
        return [f"{name}: the follower (Person {e.follower}) already looks at the target when the leader starts "
                f"({lead_start:.2f} s)"]
    return []


def _run_start(seq: list[tuple[float, tuple]], key: tuple, t_in: float, max_gap: float) -> float:
    """Start of the run of ``key`` that contains time ``t_in``. Rows with no read ("unknown") within
    ``max_gap`` seconds do not break it: the events bridge such a gap within a look (smoothing_gap_seconds)."""
    start = t_in
    for t, k in reversed([x for x in seq if x[0] <= t_in + _EPS]):
        if k[0] == "unknown" and start - t <= max_gap + _EPS:
            continue
        if k != key:
            break
        start = t
    return start


def _check_joint(e: Event, by_time: Optional[dict], config: EventConfig) -> list[str]:
    """Nobody whose rows show a look at the target at the event's first frame is left out. A look is what the
    events call one (events/gaze.py detect_joint_attention): rows on the target lasting a reportable gaze_at
    (min_look_samples rows covering min_gaze_at_seconds); a glance on one sample is nobody's attention.
    ``by_time``: _keys_by_time of the tracks."""
    name = f"events: joint_attention {e.event_id} ({_span(e)})"
    if by_time is None or e.target is None or e.target.kind not in ("person", "hands"):
        return []  # the kind is _joint_rules' to check; object ids of tracks and labels of events are not comparable
    key, step = e.target.key, by_time["step"]
    missing = []
    for pid, (times, keys) in by_time["people"].items():
        i = bisect.bisect_left(times, e.start - _EPS)
        if pid in e.persons or i == len(times) or abs(times[i] - e.start) > _EPS or key not in keys[i]:
            continue
        # the run of times on the target around it, without a gap where the person was not seen
        first = last = i
        while first > 0 and key in keys[first - 1] and times[first] - times[first - 1] <= 1.5 * step:
            first -= 1
        while last + 1 < len(times) and key in keys[last + 1] and times[last + 1] - times[last] <= 1.5 * step:
            last += 1
        rows = last - first + 1
        if rows >= config.min_look_samples and rows * step >= config.min_gaze_at_seconds - _EPS:
            missing.append(pid)
    if missing:
        return [f"{name}: Person {', '.join(map(str, missing))} also look(s) at the target at its first frame "
                f"but is not in persons_involved {list(e.persons)}"]
    return []


def _keys_by_time(looks: dict) -> dict:
    """_looks regrouped: person -> (their times in order, the set of target keys at each: a time may hold two
    rows, flagged on their own), and the seconds between sampled frames (the median gap between times)."""
    people = {}
    for pid, seq in looks.items():
        keys_at: dict[float, set] = defaultdict(set)
        for t, k in seq:
            keys_at[t].add(k)
        times = sorted(keys_at)
        people[pid] = (times, [keys_at[t] for t in times])
    all_times = np.unique([t for times, _ in people.values() for t in times])
    step = float(np.median(np.diff(all_times))) if len(all_times) > 1 else 0.0
    return {"people": people, "step": step}


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


def check_tables(tracks: pa.Table, events: pa.Table, qa: pa.Table, duration: float,
                 aspect: Optional[float] = None, config: Optional[EventConfig] = None,
                 gaze: Optional[GazeConfig] = None) -> list[str]:
    """Every violation of the rules above in one clip's tables (``aspect``: frame width / height;
    ``config`` / ``gaze``: the run's events and gaze settings, defaults if None)."""
    return (check_tracks(tracks, aspect, gaze) + check_events_table(events, duration, config, tracks)
            + check_qa(qa, duration))


def check_clip(run) -> list[str]:
    """``check_tables`` of a pipeline.accuracy.ClipRun, in the picture its clip was read in (inside black bars or a fill:
    pipeline/picture.py), where its events and QA were made."""
    from pipeline.picture import TRACK_COORDINATES, picture_aspect, to_picture

    aspect = picture_aspect(run.aspect, 1.0, run.picture) if run.aspect else None
    return check_tables(to_picture(run.tracks, run.picture, TRACK_COORDINATES), run.events_table, run.qa, run.duration,
                        aspect, gaze=run.gaze)
