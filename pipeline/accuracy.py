"""Score a socialtrace output folder against the by-eye ground truth (pipeline/truth.py).

Per clip: which predicted person is which annotated person (head position at the annotated instants),
(a) per-row typed gaze-target accuracy, (b) precision of every judged event and recall of annotated
intervals; (c), QA agreement, is pipeline/qa_truth.py, and pipeline/truth_scores.py puts them together for an
output folder (benchmarks/bench_accuracy.py prints it).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import numpy as np
import pyarrow as pa
from scipy.optimize import linear_sum_assignment

from detectors.config import GazeConfig
from pipeline.config import Config
from pipeline.picture import window_of
from pipeline.storage import OutputStore
from pipeline.summary import sampling_fps
from pipeline.truth import UNSURE, ClipTruth, TruthError, target_kind
from qa_gen.events_view import Event, Target, people_of, read_events

# Matching: an annotated head and a predicted one are the same person when their centres are this close
# (normalised frame units) on the sampled frame nearest the annotated instant, itself this close in time;
# or up to the wider distance when the annotated head lies inside the predicted person's box (a head box
# placed on the ear of someone seen from behind is still that person).
MATCH_MAX_DISTANCE = 0.12
MATCH_MAX_DISTANCE_INSIDE_BOX = 0.2
MATCH_MAX_DT_S = 0.3
# The truth is by eye (+-0.2 s) on a 0.25 s grid and events start and end on sampled frames: a judged
# window loses this much at each end before its annotated instants are read.
EDGE_S = 0.25
# A claim over a window holds when at least this share of the instants that decide it support it (a
# short look-away inside a long eye contact does not make the event wrong; more than a quarter does).
SUPPORT_SHARE = 0.75
# An event matches an annotated interval when this share of it lies inside the interval widened by
# EDGE_S at each end.
INTERVAL_SHARE = 0.75
# A gaze following's leader may have turned this long before the event's window starts.
FOLLOW_LOOKBACK_S = 1.0

RIGHT, WRONG, UNCHECKABLE = "right", "wrong", "uncheckable"
RECALL_KINDS = ("mutual_gaze", "joint_attention", "pointing")
NOT_SHARED = ("camera", "elsewhere")  # looking into the lens or off screen is not shared attention


@dataclass(frozen=True)
class Verdict:
    status: str  # right | wrong | uncheckable
    reason: str = ""
    by: str = ""  # interval | rows


# --- one clip of an output folder ---------------------------------------------------------------

@dataclass(frozen=True)
class PredictedRow:
    person_id: int
    t: float
    native_idx: int
    head: Optional[tuple[float, float]]
    box: Optional[tuple[float, float, float, float]]
    gaze_type: str
    gaze_id: Optional[int]
    hand_boxes: tuple = ()
    gaze_point: Optional[tuple[float, float]] = None


@dataclass
class ClipRun:
    """One clip's written tables, read back from an output folder."""

    video_id: str
    duration: float
    native_fps: float
    fps: float  # sampling rate of the run
    tracks: pa.Table
    events_table: pa.Table
    events: list[Event]
    qa: pa.Table
    wall_s: Optional[float] = None
    aspect: Optional[float] = None  # displayed width / height
    gaze: Optional[GazeConfig] = None  # the run's gaze settings (run.json), None when not recorded
    # the picture inside black bars or a fill the clip was read in (status "picture", pipeline/picture.py);
    # None: neither
    picture: Optional[tuple[float, float, float, float]] = None

    @property
    def step(self) -> float:
        return 1.0 / self.fps

    def frames(self) -> list[tuple[float, list[PredictedRow]]]:
        """Sampled frames (time, rows) in time order."""
        by_t: dict[float, list[PredictedRow]] = defaultdict(list)
        for r in predicted_rows(self.tracks):
            by_t[r.t].append(r)
        return sorted(by_t.items())


def head_centre(row: dict) -> Optional[tuple[float, float]]:
    """Centre of the head box, else the top of the body box (a head is about a tenth of a standing body's
    height below its top)."""
    hb = row.get("head_bbox")
    if hb is not None and len(hb) == 4 and all(v is not None for v in hb):
        return (float(hb[0] + hb[2]) / 2, float(hb[1] + hb[3]) / 2)
    bb = row.get("bbox")
    if bb is not None and len(bb) == 4:
        return (float(bb[0] + bb[2]) / 2, float(bb[1]) + 0.1 * float(bb[3] - bb[1]))
    return None


def predicted_rows(tracks: pa.Table) -> list[PredictedRow]:
    out = []
    for row in tracks.to_pylist():
        gp = row.get("gaze_point")
        out.append(PredictedRow(
            person_id=int(row["person_id"]), t=float(row["t"]), native_idx=int(row.get("native_frame_idx") or 0),
            head=head_centre(row), box=None if row.get("bbox") is None else tuple(float(v) for v in row["bbox"]),
            gaze_type=row.get("gaze_target_type") or "unknown",
            gaze_id=None if row.get("gaze_target_id") is None else int(row["gaze_target_id"]),
            hand_boxes=tuple(tuple(float(v) for v in box) for box in (row.get("hand_bboxes") or []) if box is not None),
            gaze_point=None if gp is None or len(gp) < 2 else (float(gp[0]), float(gp[1]))))
    return out


def load_clip_run(store: OutputStore, video_id: str) -> ClipRun:
    """The tables of one clip that finished ok; TruthError naming the clip and the reason otherwise."""
    status = store.read_status(video_id)
    if status is None:
        known = sorted(s["video_id"] for s in store.iter_statuses())
        raise TruthError(f"{store.uri}: no clip {video_id!r} in this output (clips: {', '.join(known) or 'none'})")
    if status.get("status") != "ok":
        raise TruthError(f"{video_id}: the run did not finish this clip (status {status.get('status')}: "
                         f"{status.get('error') or 'no reason recorded'})")
    tables = {}
    for name in ("tracks", "events", "qa"):
        table = store.read_video_table(name, video_id)
        if table is None:
            raise TruthError(f"{store.partition_file(name, video_id)}: missing {name} table of a clip whose status is ok")
        tables[name] = table
    duration = status.get("duration_s")
    if not duration or duration <= 0:
        raise TruthError(f"{store.status_file(video_id)}: no positive duration_s for {video_id}")
    return ClipRun(video_id=video_id, duration=float(duration), native_fps=float(status.get("native_fps") or 0.0),
                   fps=sampling_fps(store), tracks=tables["tracks"], events_table=tables["events"],
                   events=read_events(tables["events"]), qa=tables["qa"], wall_s=status.get("wall_s"),
                   aspect=status["width"] / status["height"] if status.get("width") and status.get("height") else None,
                   gaze=_run_gaze_config(store), picture=window_of(status))


def _run_gaze_config(store: OutputStore) -> Optional[GazeConfig]:
    record = store.read_json(store.path("run.json"))
    return Config.from_dict(record["config"]).gaze if record and "config" in record else None


# --- person matching ----------------------------------------------------------------------------

@dataclass
class PersonMatch:
    """Annotated rows matched to predicted rows, and predicted ids mapped to labels by majority."""

    row_match: dict[tuple[str, float], Optional[PredictedRow]]  # (label, truth pts) -> predicted row
    label_of: dict[int, str]
    votes: dict[int, Counter]  # predicted id -> labels it was matched to
    per_label: dict[str, dict]
    unmatched_ids: list[int] = field(default_factory=list)  # predicted people no annotated row matched

    @property
    def merges(self) -> dict[int, dict[str, int]]:
        """Predicted ids matched to two or more annotated people (identity merges)."""
        return {pid: dict(c) for pid, c in self.votes.items() if len(c) > 1}

    @property
    def splits(self) -> dict[str, list[int]]:
        """Annotated people matched by two or more predicted ids (one person, several ids: an id switch)."""
        return {label: v["predicted_ids"] for label, v in self.per_label.items() if len(v["predicted_ids"]) > 1}

    def label(self, pid: Optional[int]) -> Optional[str]:
        return None if pid is None else self.label_of.get(int(pid))


def run_zero(run: ClipRun) -> float:
    """The run's time of decoded frame 0, from its sampled frames (median of t - index / native fps)."""
    if run.tracks.num_rows == 0 or run.native_fps <= 0:
        return math.nan
    t = np.asarray(run.tracks.column("t").to_numpy(zero_copy_only=False), dtype=float)
    idx = np.asarray(run.tracks.column("native_frame_idx").to_numpy(zero_copy_only=False), dtype=float)
    return float(np.median(t - idx / run.native_fps))


_UNMATCHABLE = 1e6


def _match_cost(head: tuple[float, float], pred: PredictedRow) -> float:
    """Head-centre distance when the pair may match, else a cost the assignment never accepts."""
    d = math.dist(head, pred.head)
    if d <= MATCH_MAX_DISTANCE:
        return d
    box = pred.box
    inside = box is not None and box[0] <= head[0] <= box[2] and box[1] <= head[1] <= box[3]
    return d if inside and d <= MATCH_MAX_DISTANCE_INSIDE_BOX else _UNMATCHABLE


def match_persons(truth: ClipTruth, run: ClipRun) -> PersonMatch:
    zero = run_zero(run)
    truth.align(truth.first_pts if math.isnan(zero) else zero)
    frames = run.frames()
    frame_times = np.array([t for t, _ in frames])
    by_instant: dict[float, list] = defaultdict(list)
    for r in truth.rows:
        by_instant[r.pts].append(r)
    row_match: dict[tuple[str, float], Optional[PredictedRow]] = {}
    for pts, rows in by_instant.items():
        for r in rows:
            row_match[(r.person, pts)] = None
        if not len(frame_times):
            continue
        t = truth.to_run_time(pts)
        i = int(np.argmin(np.abs(frame_times - t)))
        if abs(frame_times[i] - t) > MATCH_MAX_DT_S:
            continue
        preds = [p for p in frames[i][1] if p.head is not None]
        if not preds:
            continue
        cost = np.array([[_match_cost(r.head, p) for p in preds] for r in rows])
        for ri, pi in zip(*linear_sum_assignment(cost)):
            if cost[ri, pi] < _UNMATCHABLE:
                row_match[(rows[ri].person, pts)] = preds[pi]
    votes: dict[int, Counter] = defaultdict(Counter)
    for (label, _), p in row_match.items():
        if p is not None:
            votes[p.person_id][label] += 1
    label_of = {pid: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for pid, c in votes.items()}
    per_label = {}
    for label in truth.labels:
        keys = [k for k in row_match if k[0] == label]
        matched = [row_match[k] for k in keys if row_match[k] is not None]
        per_label[label] = {
            "rows": len(keys),
            "tracked": len(matched),
            "tracked_share": len(matched) / len(keys) if keys else math.nan,
            "identity_ok": sum(1 for p in matched if label_of.get(p.person_id) == label),
            "predicted_ids": sorted({p.person_id for p in matched}),
        }
    seen = {r.person_id for _, rows in frames for r in rows}
    return PersonMatch(row_match, label_of, dict(votes), per_label, sorted(seen - set(label_of)))


# --- (a) per-row gaze targets -------------------------------------------------------------------

def predicted_target(row: PredictedRow, label_of: dict[int, str]) -> str:
    """A predicted row's gaze target in the truth's typed form (unmapped people as ``#<id>``)."""
    kind = row.gaze_type
    if kind in ("person", "hands"):
        if row.gaze_id is None:
            return f"{kind}:?"
        return f"{kind}:{label_of.get(row.gaze_id, f'#{row.gaze_id}')}"
    return kind


def _confusion_kind(typed: str, viewer: str) -> str:
    kind = target_kind(typed)
    if kind == "hands":
        return "hands(own)" if typed == f"hands:{viewer}" else "hands(other)"
    return kind


@dataclass
class GazeScore:
    rows: int = 0  # annotated rows with a definite gaze
    correct: int = 0
    covered: int = 0  # tracked and predicted something other than unknown
    confusion: Counter = field(default_factory=Counter)  # (truth kind, predicted kind) -> rows
    details: list = field(default_factory=list)  # (t, label, truth, predicted)

    @property
    def accuracy(self) -> float:
        return self.correct / self.rows if self.rows else math.nan

    @property
    def coverage(self) -> float:
        return self.covered / self.rows if self.rows else math.nan

    def add(self, other: "GazeScore") -> None:
        self.rows += other.rows
        self.correct += other.correct
        self.covered += other.covered
        self.confusion.update(other.confusion)
        self.details += other.details


def score_gaze(truth: ClipTruth, match: PersonMatch) -> GazeScore:
    score = GazeScore()
    for r in truth.rows:
        if not r.definite:
            continue
        score.rows += 1
        pred = match.row_match.get((r.person, r.pts))
        truth_kind = _confusion_kind(r.gaze, r.person)
        if pred is None:
            predicted, pred_kind = "untracked", "untracked"
        else:
            predicted = predicted_target(pred, match.label_of)
            pred_kind = _confusion_kind(predicted, r.person)
            if pred_kind == truth_kind and predicted != r.gaze:
                pred_kind += " wrong person"
            if predicted != "unknown":
                score.covered += 1
        if predicted == r.gaze:
            score.correct += 1
        score.confusion[(truth_kind, pred_kind)] += 1
        score.details.append((round(truth.to_run_time(r.pts), 3), r.person, r.gaze, predicted))
    return score


# --- (b) events ---------------------------------------------------------------------------------

def event_target(target: Optional[Target], label: Callable[[Optional[int]], Optional[str]]) -> Optional[str]:
    """An event's target in the truth's typed form; ``location`` for a spot that holds nothing."""
    if target is None:
        return None
    if target.kind in ("person", "hands"):
        return f"{target.kind}:{label(target.person_id) or f'#{target.person_id}'}"
    if target.kind == "object":
        return "object"
    return target.kind  # camera | location


class Judge:
    """Decides claims about one clip against its truth: each ``*_claim`` method takes annotated labels,
    a typed target and a window on the run's clock and returns a Verdict."""

    def __init__(self, truth: ClipTruth, match: PersonMatch) -> None:
        self.truth = truth
        self.match = match

    # -- instants --
    def checked_instants(self, a: float, b: float) -> list[float]:
        """Annotated instants that decide a claim over [a, b]: the window less EDGE_S at each end, or the
        instants of the window nearest its middle when that leaves none."""
        if b - a >= 2 * EDGE_S:
            found = self.truth.instants(a + EDGE_S, b - EDGE_S)
            if found:
                return found
        mid = (a + b) / 2
        # events end where the next sampled frame starts: an instant at ``b`` belongs to what follows
        inside = [t for t in self.truth.instants(a, b) if t < b - 1e-6 or a == b]
        inside = inside or [t for t in self.truth.times() if abs(t - mid) <= EDGE_S / 2 + 1e-6]
        if not inside:
            return []
        nearest = min(abs(t - mid) for t in inside)
        return [t for t in inside if abs(t - mid) <= nearest + 1e-6]

    def window_instants(self, a: float, b: float) -> list[float]:
        """Every annotated instant of [a, b], ends included: what a person checking a claim over that
        window reads when its inner instants (``checked_instants``) are all unsure."""
        return self.truth.instants(a - 1e-6, b + 1e-6)

    def _rows(self, a: float, b: float, decide: Callable[[float], int], what: str) -> Verdict:
        """A claim over [a, b] judged instant by instant: ``decide(t)`` is +1 (supports), -1 (contradicts)
        or 0 (undecided). The inner instants decide; when none of them does, the window's ends do (a
        checker reads the whole asked window before calling an item uncheckable)."""
        for instants in (self.checked_instants(a, b), self.window_instants(a, b)):
            votes = [decide(t) for t in instants]
            support, contra = votes.count(1), votes.count(-1)
            if support + contra:
                break
        return self._share(support, contra, what)

    def gaze(self, label: str, t: float) -> Optional[str]:
        return self.truth.gaze_at(label, t)

    @staticmethod
    def _share(support: int, contra: int, what: str) -> Verdict:
        if support + contra == 0:
            return Verdict(UNCHECKABLE, f"{what}: only unsure truth rows in the window", "rows")
        share = support / (support + contra)
        status = RIGHT if share >= SUPPORT_SHARE else WRONG
        return Verdict(status, f"{what}: {support} of {support + contra} annotated instants agree", "rows")

    def _unknown(self, labels: Iterable[Optional[str]]) -> Optional[Verdict]:
        if any(lab is None for lab in labels):
            return Verdict(UNCHECKABLE, "a person of the claim matches no annotated person")
        return None

    # -- gaze claims --
    def gaze_at_claim(self, label: Optional[str], target: Optional[str], a: float, b: float) -> Verdict:
        if (v := self._unknown([label])) is not None:
            return v
        if target is None or target == "location":
            return Verdict(UNCHECKABLE, "no nameable target")
        def decide(t: float) -> int:
            g = self.gaze(label, t)
            return 0 if g == UNSURE else 1 if g == target else -1  # -1: looks elsewhere, or not in view

        return self._rows(a, b, decide, f"{label} looks at {target}")

    def mutual_claim(self, l1: Optional[str], l2: Optional[str], a: float, b: float,
                     use_intervals: bool = True) -> Verdict:
        if (v := self._unknown([l1, l2])) is not None:
            return v
        if l1 == l2:
            return Verdict(WRONG, "eye contact of a person with themself")
        if use_intervals and (v := self._annotated("mutual_gaze", {l1, l2}, a, b)) is not None:
            return v
        def decide(t: float) -> int:
            g1, g2 = self.gaze(l1, t), self.gaze(l2, t)
            if (g1 != UNSURE and g1 != f"person:{l2}") or (g2 != UNSURE and g2 != f"person:{l1}"):
                return -1
            return 1 if g1 != UNSURE and g2 != UNSURE else 0

        return self._rows(a, b, decide, f"{l1} and {l2} look at each other")

    def mutual_some(self, l1: Optional[str], l2: Optional[str], a: float, b: float) -> Verdict:
        """Eye contact at some moment of [a, b] (not throughout): an annotated interval overlapping it, or
        an instant both look at each other; WRONG when the truth rules it out at every instant."""
        if (v := self._unknown([l1, l2])) is not None:
            return v
        mine = [self.truth.interval_run_times(iv) for iv in self.truth.intervals_of("mutual_gaze")
                if set(iv.persons) == {l1, l2}]
        if any(ia < b and a < ib for ia, ib in mine):
            return Verdict(RIGHT, f"an annotated eye contact of {l1} and {l2} overlaps {a:.2f}-{b:.2f} s", "interval")
        if mine:
            return Verdict(WRONG, f"no annotated eye contact of {l1} and {l2} in {a:.2f}-{b:.2f} s", "interval")
        instants = [t for t in self.truth.instants(a, b) if t < b - 1e-6]
        states = []
        for t in instants:
            g1, g2 = self.gaze(l1, t), self.gaze(l2, t)
            if g1 == f"person:{l2}" and g2 == f"person:{l1}":
                return Verdict(RIGHT, f"{l1} and {l2} look at each other at {t:.2f} s", "rows")
            states.append((g1 != UNSURE and g1 != f"person:{l2}") or (g2 != UNSURE and g2 != f"person:{l1}"))
        if states and all(states):
            return Verdict(WRONG, f"{l1} and {l2} never look at each other in {a:.2f}-{b:.2f} s", "rows")
        return Verdict(UNCHECKABLE, "eye contact unsure in the window", "rows")

    def joint_claim(self, labels: list[Optional[str]], target: Optional[str], a: float, b: float) -> Verdict:
        if (v := self._unknown(labels)) is not None:
            return v
        if len(set(labels)) < 2:
            return Verdict(WRONG, "shared attention needs two different people")
        if target in NOT_SHARED:
            return Verdict(WRONG, f"{target} is not something in the scene to share attention on")
        def decide(t: float) -> int:
            gazes = [self.gaze(lab, t) for lab in labels]
            known = [g for g in gazes if g != UNSURE]
            if target in (None, "location"):
                bad = any(g is None or target_kind(g) in NOT_SHARED for g in known) or len(set(known)) > 1
            else:
                bad = any(g != target for g in known)
            return -1 if bad else 1 if len(known) == len(gazes) else 0

        rows = self._rows(a, b, decide, f"{'+'.join(labels)} all look at {target or 'one thing'}")
        interval = self._annotated("joint_attention", set(labels), a, b)
        if interval is not None and (interval.status == WRONG or rows.status != WRONG):
            return interval
        return rows

    def following_claim(self, leader: Optional[str], follower: Optional[str], target: Optional[str],
                        a: float, b: float) -> Verdict:
        """The leader is on ``target`` before the follower, who was not on it and then is."""
        if (v := self._unknown([leader, follower])) is not None:
            return v
        if target is None or target == "location":
            return Verdict(UNCHECKABLE, "no nameable target")
        if target in (f"person:{follower}", f"hands:{follower}"):
            return Verdict(WRONG, "the follower 'follows' onto their own body or hands")
        if leader == follower:
            return Verdict(WRONG, "a person following their own gaze")
        # the leader may have turned a while before the follower: look back this far for the leader
        instants = self.truth.instants(a - FOLLOW_LOOKBACK_S, b + EDGE_S)
        foll = [(t, g) for t in instants if (g := self.gaze(follower, t)) != UNSURE]
        lead = [(t, g) for t in instants if (g := self.gaze(leader, t)) != UNSURE]
        if not foll or not lead:
            return Verdict(UNCHECKABLE, "leader or follower only unsure in the window", "rows")
        # the follower's turn to the target: on it at t, off it at their previous definite instant
        onset = next((t for (t0, g0), (t, g) in zip(foll, foll[1:]) if g == target and g0 != target
                      and t >= a - EDGE_S), None)
        if onset is None:
            on = [t for t, g in foll if g == target and t >= a - EDGE_S]
            if not on:
                return Verdict(WRONG, f"{follower} is never on {target} in the window", "rows")
            if foll[0][1] == target:
                return Verdict(WRONG, f"{follower} is already on {target} at {foll[0][0]:.2f} s", "rows")
            return Verdict(UNCHECKABLE, f"{follower}'s turn to {target} is unsure", "rows")
        before = [(t, g) for t, g in lead if t < onset]
        if not before:
            return Verdict(UNCHECKABLE, f"{leader} unsure before {follower} turns", "rows")
        if before[-1][1] != target:
            return Verdict(WRONG, f"{leader} is not on {target} just before {follower} turns to it at {onset:.2f} s",
                           "rows")
        t_lead = before[-1][0]
        for t, g in reversed(before):
            if g != target:
                break
            t_lead = t
        at_lead = [g for t, g in foll if t <= t_lead + 1e-6]
        if at_lead and at_lead[-1] == target:
            return Verdict(WRONG, f"{follower} already looks at {target} when {leader} does ({t_lead:.2f} s)", "rows")
        return Verdict(RIGHT, f"{leader} on {target} from {t_lead:.2f} s, {follower} turns to it at {onset:.2f} s",
                       "rows")

    def aversion_claim(self, actor: Optional[str], other: Optional[str], at: float, end: float) -> Verdict:
        """Eye contact of the pair just before ``at``, then the actor looks away while the other keeps
        looking."""
        if (v := self._unknown([actor, other])) is not None:
            return v
        before = self.truth.instants(at - 1.0, at + EDGE_S / 2)
        after = self.truth.instants(at, max(end, at + 2 * EDGE_S) + EDGE_S)
        contact = no_contact = 0
        for t in before:
            g1, g2 = self.gaze(actor, t), self.gaze(other, t)
            if (g1 != UNSURE and g1 != f"person:{other}") or (g2 != UNSURE and g2 != f"person:{actor}"):
                no_contact += 1
            elif g1 != UNSURE and g2 != UNSURE:
                contact += 1
        broken = kept = 0
        for t in after:
            g1, g2 = self.gaze(actor, t), self.gaze(other, t)
            if g1 == f"person:{other}" or (g2 is not None and g2 != UNSURE and g2 != f"person:{actor}"):
                kept += 1  # the actor still looks, or the other does not: no aversion at t
            elif g1 not in (None, UNSURE) and g2 == f"person:{actor}":
                broken += 1
        if contact == 0 and no_contact > 0:
            return Verdict(WRONG, f"no eye contact of {actor} and {other} before {at:.2f} s", "rows")
        if broken == 0 and kept > 0:
            return Verdict(WRONG, f"{actor} does not look away from {other} while {other} keeps looking", "rows")
        if contact and broken:
            return Verdict(RIGHT, "eye contact, then one looks away", "rows")
        return Verdict(UNCHECKABLE, "eye contact or the look-away is unsure", "rows")

    def shift_claim(self, actor: Optional[str], a: float, b: float) -> Verdict:
        if (v := self._unknown([actor])) is not None:
            return v
        seen = [(t, self.gaze(actor, t)) for t in self.truth.instants(a - EDGE_S, b + EDGE_S)]
        seen = [(t, g) for t, g in seen if g not in (None, UNSURE)]
        known = [g for _, g in seen]
        if len(set(known)) >= 2:
            return Verdict(RIGHT, f"{actor}'s target changes ({' -> '.join(dict.fromkeys(known))})", "rows")
        # "no change" needs definite rows on both sides of the window
        if seen and seen[0][0] <= a + 1e-6 and seen[-1][0] >= b - 1e-6:
            return Verdict(WRONG, f"{actor} stays on {known[0]} from {seen[0][0]:.2f} to {seen[-1][0]:.2f} s", "rows")
        return Verdict(UNCHECKABLE, "no definite rows on both sides of the window", "rows")

    # -- gestures --
    def gesture_claim(self, kind: str, actor: Optional[str], target: Optional[str], a: float, b: float) -> Verdict:
        if (v := self._unknown([actor])) is not None:
            return v
        if not self.interval_match(kind, {actor}, a, b, gesturer=actor):
            return Verdict(WRONG, f"no annotated {kind} by {actor} there", "interval")
        if kind == "pointing" and target is not None and target_kind(target) in ("person", "hands", "object"):
            aimed = [r.pointing_at for r in self.truth.rows if r.person == actor and r.pointing_at
                     and a - EDGE_S <= self.truth.to_run_time(r.pts) <= b + EDGE_S]
            if aimed and sum(1 for x in aimed if x == target) / len(aimed) < SUPPORT_SHARE:
                return Verdict(WRONG, f"{actor} points at {Counter(aimed).most_common(1)[0][0]}, not {target}", "interval")
        return Verdict(RIGHT, f"matches an annotated {kind} interval", "interval")

    # -- intervals --
    def _annotated(self, kind: str, labels: set, a: float, b: float) -> Optional[Verdict]:
        """Where the truth annotates ``kind`` intervals for these people, a claim must match one of them
        (the annotator listed where it happens); None when it annotates none for them."""
        mine = [iv for iv in self.truth.intervals_of(kind) if set(iv.persons) == labels]
        if not mine:
            return None
        if self.interval_match(kind, labels, a, b):
            return Verdict(RIGHT, f"matches an annotated {kind} interval", "interval")
        spans = ", ".join(f"{x:.2f}-{y:.2f}" for x, y in (self.truth.interval_run_times(iv) for iv in mine))
        return Verdict(WRONG, f"{a:.2f}-{b:.2f} s is not one of the annotated {kind} intervals ({spans} s)", "interval")

    def interval_match(self, kind: str, labels: set, a: float, b: float, gesturer: Optional[str] = None) -> bool:
        for iv in self.truth.intervals_of(kind):
            if gesturer is not None:
                if not iv.persons or iv.persons[0] != gesturer:
                    continue
            elif set(iv.persons) != labels:
                continue
            ia, ib = self.truth.interval_run_times(iv)
            ia, ib = ia - EDGE_S, ib + EDGE_S
            if b - a <= 1e-9:
                if ia <= a <= ib:
                    return True
                continue
            inside = max(0.0, min(b, ib) - max(a, ia))
            if inside / (b - a) >= INTERVAL_SHARE:
                return True
        return False

    # -- events --
    def event(self, e: Event) -> Verdict:
        lab = self.match.label
        target = event_target(e.target, lab)
        kind = e.event_type
        if kind == "gaze_at":
            return self.gaze_at_claim(lab(e.actor), target, e.start, e.end)
        if kind == "mutual_gaze":
            people = sorted(set(e.persons))
            if len(people) != 2:
                return Verdict(WRONG, f"eye contact of {len(people)} people")
            return self.mutual_claim(lab(people[0]), lab(people[1]), e.start, e.end)
        if kind in ("joint_attention", "attention_capture"):
            a = e.start if kind == "joint_attention" else max(e.start, e.end - 2 * EDGE_S)
            return self.joint_claim([lab(p) for p in sorted(set(e.persons))], target, a, e.end)
        if kind == "gaze_following":
            return self.following_claim(lab(e.leader), lab(e.follower), target, e.start, e.end)
        if kind == "gaze_aversion":
            others = [p for p in e.persons if p != e.actor]
            if e.target is not None and e.target.kind == "person":
                others = [e.target.person_id]
            if e.actor is None or not others:
                return Verdict(UNCHECKABLE, "aversion without two roles")
            return self.aversion_claim(lab(e.actor), lab(others[0]), e.start, e.end)
        if kind == "sudden_gaze_shift":
            return self.shift_claim(lab(e.actor), e.start, e.end)
        if kind in ("pointing", "giving", "showing", "reaching"):
            return self.gesture_claim(kind, lab(e.actor), target, e.start, e.end)
        return Verdict(UNCHECKABLE, f"{kind} is not judged against the truth")


@dataclass
class EventScore:
    verdicts: dict = field(default_factory=lambda: defaultdict(Counter))  # type -> Counter(status)
    recall: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # kind -> [found, annotated]
    details: list = field(default_factory=list)

    def add(self, other: "EventScore") -> None:
        for k, c in other.verdicts.items():
            self.verdicts[k].update(c)
        for k, (found, total) in other.recall.items():
            self.recall[k][0] += found
            self.recall[k][1] += total
        self.details += other.details

    def precision(self, kind: str) -> float:
        c = self.verdicts.get(kind, Counter())
        decided = c[RIGHT] + c[WRONG]
        return c[RIGHT] / decided if decided else math.nan

    def recall_of(self, kind: str) -> float:
        found, total = self.recall.get(kind, (0, 0))
        return found / total if total else math.nan


def score_events(truth: ClipTruth, run: ClipRun, match: PersonMatch) -> EventScore:
    judge = Judge(truth, match)
    score = EventScore()
    for e in run.events:
        if e.source == "cross":
            continue  # pairings of gaze and gesture events, each judged on its own
        v = judge.event(e)
        score.verdicts[e.event_type][v.status] += 1
        score.details.append((run.video_id, e.event_id, e.event_type, round(e.start, 2), round(e.end, 2),
                              sorted(people_of(e)), v.status, v.reason))
    for kind in RECALL_KINDS:
        for iv in truth.intervals_of(kind):
            ia, ib = truth.interval_run_times(iv)
            found = False
            for e in run.events:
                if e.event_type != kind or not e.overlaps(ia - 1e-6, ib + 1e-6) and not (ia == ib and e.start <= ia <= e.end):
                    continue
                if kind == "pointing":
                    found = found or match.label(e.actor) == iv.persons[0]
                else:
                    found = found or {match.label(p) for p in e.persons} == set(iv.persons)
            score.recall[kind][0] += int(found)
            score.recall[kind][1] += 1
    return score
