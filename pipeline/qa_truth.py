"""Does a QA item's key agree with the by-eye truth? Each item is read as a person checking it would:
the people, times and targets its question and keyed answer name (not the events it was made from),
judged with pipeline.accuracy.Judge. Items the truth cannot decide are ``uncheckable``; an item whose
premise (a cited event) the truth contradicts disagrees even when its own claim cannot be checked.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

from pipeline.accuracy import EDGE_S, RIGHT, UNCHECKABLE, WRONG, ClipRun, Judge, Verdict, event_target
from pipeline.consistency import question_times
from pipeline.truth import GESTURE_INTERVAL_KINDS
from qa_gen.wording import GAZE_TYPE_PHRASES, GESTURE_TYPE_PHRASES

# A duration in a key agrees with the truth when within one QA time step (questions print 0.5 s steps).
DURATION_TOLERANCE_S = 0.5

_PERSON = re.compile(r"Person (\d+)")
_GAZE_TYPE_OF = {v.lower(): k for k, v in GAZE_TYPE_PHRASES.items()}
_GESTURE_TYPE_OF = {v.lower(): k for k, v in GESTURE_TYPE_PHRASES.items()}
_COUNT_KINDS = {"point": "pointing", "reach out": "reaching", "show something": "showing",
                "hand something over": "giving"}
_GESTURE_VERBS = {"points at": "pointing", "reaches toward": "reaching", "shows something to": "showing",
                  "shows": "showing", "hands something to": "giving", "hands over": "giving"}
_SECONDS = r"(\d+(?:\.\d+)?) seconds"


@dataclass
class QAScore:
    by_category: dict = field(default_factory=lambda: defaultdict(Counter))  # category -> Counter(status)
    details: list = field(default_factory=list)

    def add(self, other: "QAScore") -> None:
        for k, c in other.by_category.items():
            self.by_category[k].update(c)
        self.details += other.details

    def totals(self) -> Counter:
        total = Counter()
        for c in self.by_category.values():
            total.update(c)
        return total

    def agreement(self, category: Optional[str] = None) -> float:
        c = self.totals() if category is None else self.by_category.get(category, Counter())
        decided = c[RIGHT] + c[WRONG]
        return c[RIGHT] / decided if decided else math.nan


class ItemReader:
    """Reads one QA item's names, window and key into truth terms (labels, typed targets, run times)."""

    def __init__(self, judge: Judge, run: ClipRun, row: dict) -> None:
        self.judge = judge
        self.run = run
        self.row = row
        self.offset = float(row.get("unit_start") or 0.0)
        self.question = row["question"]
        self.key = row["answer_text"].strip()
        times = question_times(self.question)
        if len(times) >= 2:
            self.window = (times[0] + self.offset, times[1] + self.offset)
        else:
            a, b = row["time_range"]
            self.window = (float(a) + self.offset, float(b) + self.offset)
        by_id = {e.event_id: e for e in run.events}
        self.sources = [by_id[i] for i in (row.get("source_event_ids") or []) if i in by_id]

    def label(self, pid: int | str) -> Optional[str]:
        return self.judge.match.label(int(pid))

    def persons(self, text: str) -> list[Optional[str]]:
        return [self.label(p) for p in _PERSON.findall(text)]

    def target(self, phrase: str, viewer: Optional[str] = None) -> Optional[str]:
        """A target phrase of qa_gen.wording.target_phrase in typed form."""
        phrase = phrase.strip().rstrip("?.").strip()
        if phrase == "their own hands":
            return f"hands:{viewer}" if viewer else None
        m = re.fullmatch(r"Person (\d+)'s hands", phrase)
        if m:
            return f"hands:{self.label(m.group(1)) or '#' + m.group(1)}"
        m = re.fullmatch(r"Person (\d+)", phrase)
        if m:
            return f"person:{self.label(m.group(1)) or '#' + m.group(1)}"
        if phrase == "the camera":
            return "camera"
        if phrase == "something unidentified":
            return "elsewhere"
        if phrase == "the same spot":
            return "location"
        if phrase.startswith("the "):
            return "object"
        return None

    def source(self, *types: str):
        return next((e for e in self.sources if e.event_type in types), None)

    def premise(self, every: bool = False) -> Optional[Verdict]:
        """WRONG when the truth contradicts the event the item is anchored on (its first cited event; the
        others may be distractors' events), or with ``every`` any cited gaze or gesture event."""
        for e in (self.sources if every else self.sources[:1]):
            if e.source == "cross":
                continue
            v = self.judge.event(e)
            if v.status == WRONG:
                return Verdict(WRONG, f"cited {e.event_type} {e.event_id} is false: {v.reason}")
        return None


def _statement(reader: ItemReader, text: str, window: tuple[float, float]) -> Optional[Verdict]:
    """Judge one sentence or option of the forms qa_gen.wording / qa_gen.context.Claim produce; None when
    the form is not recognised."""
    j = reader.judge
    text = text.strip().rstrip(".")
    span = re.search(r" from " + _SECONDS.replace(" seconds", "") + r" to " + _SECONDS + "$", text)
    a, b = window
    if span:
        a, b = float(span.group(1)) + reader.offset, float(span.group(2)) + reader.offset
        text = text[: span.start()]
    if m := re.fullmatch(r"(.+) make eye contact(?: during a gesture)?", text):
        people = reader.persons(m.group(1))
        return j.mutual_claim(people[0], people[1], a, b) if len(people) == 2 else None
    if m := re.fullmatch(r"(Person \d+) makes eye contact with (Person \d+)", text):
        return j.mutual_claim(*reader.persons(m.group(1) + m.group(2)), a, b)
    if m := re.fullmatch(r"(.+) look at (.+) together", text):
        return j.joint_claim(reader.persons(m.group(1)), reader.target(m.group(2)), a, b)
    if m := re.fullmatch(r"(.+) all turn to (.+?)(?: at once| at " + _SECONDS + ")", text):
        end = float(m.group(3)) + reader.offset if m.group(3) else b
        return j.joint_claim(reader.persons(m.group(1)), reader.target(m.group(2)), end - EDGE_S, end + EDGE_S)
    if m := re.fullmatch(r"(Person \d+) follows (Person \d+)'s gaze(?: to (.+?))?(?: at " + _SECONDS + r", .*)?", text):
        follower, leader = reader.label(_PERSON.search(m.group(1)).group(1)), reader.label(_PERSON.search(m.group(2)).group(1))
        target = reader.target(m.group(3)) if m.group(3) else None
        if target is None:
            src = reader.source("gaze_following")
            target = event_target(src.target, j.match.label) if src else None
        if m.group(4):  # "at b seconds, lag after ...": the follower's onset at b
            onset = float(m.group(4)) + reader.offset
            lag = re.search(r", (\d+(?:\.\d+)?) seconds after", text)
            a, b = onset - (float(lag.group(1)) if lag else 1.0), onset
        return j.following_claim(leader, follower, target, a, b)
    if m := re.fullmatch(r"(Person \d+) breaks eye contact with (Person \d+)(?: at " + _SECONDS + r" while .*)?", text):
        actor, other = reader.persons(m.group(1) + " " + m.group(2))
        t0 = float(m.group(3)) + reader.offset if m.group(3) else a
        return j.aversion_claim(actor, other, t0, max(b, t0))
    if m := re.fullmatch(r"(Person \d+) suddenly changes gaze direction(?: at " + _SECONDS + ")?", text):
        t0 = float(m.group(2)) + reader.offset if m.group(2) else None
        return j.shift_claim(reader.persons(m.group(1))[0], t0 if t0 is not None else a, t0 if t0 is not None else b)
    if m := re.fullmatch(r"(Person \d+) looks at (.+?) at " + _SECONDS + r"(?:, .*)?", text):
        viewer, t0 = reader.persons(m.group(1))[0], float(m.group(3)) + reader.offset
        return j.gaze_at_claim(viewer, reader.target(m.group(2), viewer), t0, t0 + 2 * EDGE_S)
    if m := re.fullmatch(r"(Person \d+) looks at (.+)", text):
        viewer = reader.persons(m.group(1))[0]
        return j.gaze_at_claim(viewer, reader.target(m.group(2), viewer), a, b)
    for verb, kind in _GESTURE_VERBS.items():
        if m := re.fullmatch(r"(Person \d+) " + verb + r" (.+)", text):
            actor = reader.persons(m.group(1))[0]
            return j.gesture_claim(kind, actor, reader.target(m.group(2), actor), a, b)
    return None


def _combine(verdicts: list[Optional[Verdict]]) -> Verdict:
    known = [v for v in verdicts if v is not None]
    if any(v.status == WRONG for v in known):
        return next(v for v in known if v.status == WRONG)
    if known and all(v.status == RIGHT for v in known):
        return Verdict(RIGHT, "; ".join(v.reason for v in known))
    return Verdict(UNCHECKABLE, "; ".join(v.reason for v in known if v.status != RIGHT) or "statement not checkable")


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip()) if s]


def judge_item(reader: ItemReader) -> Verdict:
    j, q, key = reader.judge, reader.question, reader.key
    a, b = reader.window
    template = reader.row.get("template") or reader.row["category"]
    asked = reader.persons(q)

    if template == "T1.target":
        viewer = asked[0] if asked else None
        return j.gaze_at_claim(viewer, reader.target(key, viewer), a, b)
    if template == "T1.who":
        m = re.search(r"look(?:ing|s)? at (.+?)(?: (?:between|from) \d|\?)", q)
        target = reader.target(m.group(1)) if m else None
        if key.startswith("Nobody"):
            verdicts = [j.gaze_at_claim(lab, target, a, b) for lab in j.truth.labels]
            return Verdict(WRONG, "someone looks at it") if any(v.status == RIGHT for v in verdicts) else \
                Verdict(UNCHECKABLE, "nobody: not decided")
        who = reader.persons(key)
        v = j.gaze_at_claim(who[0] if who else None, target, a, b)
        if v.status == RIGHT:
            also = [lab for lab in j.truth.labels if lab != who[0] and j.gaze_at_claim(lab, target, a, b).status == RIGHT]
            if also:
                return Verdict(WRONG, f"{', '.join(also)} look(s) at it too")
        return v
    if template == "T2.type":
        kind = _GAZE_TYPE_OF.get(key.lower())
        people = asked
        if kind == "mutual_gaze" and len(people) == 2:
            return j.mutual_claim(people[0], people[1], a, b)
        if kind == "joint_attention":
            # the question names everyone the event names, the person looked at included: the attenders
            # are the cited event's
            src = reader.source("joint_attention")
            if src is None:
                return Verdict(UNCHECKABLE, "no cited shared-attention event")
            return j.joint_claim([reader.label(p) for p in src.persons], event_target(src.target, j.match.label), a, b)
        if kind == "gaze_following":
            src = reader.source("gaze_following")
            if src is None:
                return Verdict(UNCHECKABLE, "no cited following event")
            return j.following_claim(reader.label(src.leader), reader.label(src.follower),
                                     event_target(src.target, j.match.label), a, b)
        if kind == "gaze_aversion":
            src = reader.source("gaze_aversion")
            if src is None or src.actor is None:
                return Verdict(UNCHECKABLE, "no cited aversion event")
            other = [p for p in src.persons if p != src.actor]
            t0 = src.start if a - EDGE_S <= src.start <= b else a
            return j.aversion_claim(reader.label(src.actor), reader.label(other[0]) if other else None, t0, b)
        if kind == "sudden_gaze_shift" and people:
            return j.shift_claim(people[0], a, b)
        if kind == "attention_capture":
            return j.joint_claim(people, None, max(a, b - 2 * EDGE_S), b)
        return Verdict(UNCHECKABLE, f"T2 key {key!r} not read")
    if template == "T3.duration":
        return _duration(reader, "mutual_gaze", asked[:2], key)
    if template in ("T4.pair",):
        if key.startswith("No two"):
            return reader.premise() or Verdict(UNCHECKABLE, "'no pair' not decided")
        pair = reader.persons(key)
        return j.mutual_claim(pair[0], pair[1], a, b) if len(pair) == 2 else Verdict(UNCHECKABLE, "pair not read")
    if template == "T4.when":
        m = re.fullmatch(r"Between (\S+) and (\S+) seconds", key)
        if not m or len(asked) != 2:
            return Verdict(UNCHECKABLE, "window not read")
        return j.mutual_claim(asked[0], asked[1], float(m.group(1)) + reader.offset, float(m.group(2)) + reader.offset)
    if template == "T5.first":
        src = reader.source("gaze_following")
        m = re.search(r"looks? at (.+?) first|the first to look at (.+?)\?", q)
        target = reader.target((m.group(1) or m.group(2))) if m else None
        who = reader.persons(key)
        if src is None or len(who) != 1 or " and " in key or key.startswith(("Nobody", "Neither")):
            return reader.premise() or Verdict(UNCHECKABLE, "key not a single leader")
        return j.following_claim(who[0], reader.label(src.follower if reader.label(src.leader) == who[0] else src.leader),
                                 target, a, b)
    if template == "T5.leads":
        m = re.fullmatch(r"(Person \d+) leads (Person \d+)'s gaze", key)
        src = reader.source("gaze_following")
        if not m or src is None:
            return reader.premise() or Verdict(UNCHECKABLE, "key not read")
        leader, follower = reader.persons(m.group(1) + " " + m.group(2))
        return j.following_claim(leader, follower, event_target(src.target, j.match.label), a, b)
    if template in ("G1.target",):
        kind = reader.source(*GESTURE_INTERVAL_KINDS)
        actor = asked[0] if asked else None
        return j.gesture_claim(kind.event_type if kind else "pointing", actor, reader.target(key, actor), a, b)
    if template == "G1.who":
        src = reader.source(*GESTURE_INTERVAL_KINDS)
        who = reader.persons(key)
        if src is None or len(who) != 1 or key.startswith("Nobody"):
            return reader.premise() or Verdict(UNCHECKABLE, "key not a single person")
        return j.gesture_claim(src.event_type, who[0], event_target(src.target, j.match.label), a, b)
    if template == "G2.type":
        kind = _GESTURE_TYPE_OF.get(key.lower())
        return j.gesture_claim(kind, asked[0] if asked else None, None, a, b) if kind else Verdict(UNCHECKABLE, "key not read")
    if template == "G3.duration":
        src = reader.source(*GESTURE_INTERVAL_KINDS)
        return _duration(reader, src.event_type if src else "pointing", asked[:1], key)
    if template == "G4.count":
        m = re.search(r"does Person \d+ (.+?) in the clip\?|how often does Person \d+ (.+?)\?", q)
        kind = _COUNT_KINDS.get((m.group(1) or m.group(2)).strip()) if m else None
        if kind is None or not asked or not key.isdigit():
            return Verdict(UNCHECKABLE, "count question not read")
        if asked[0] is None:
            return Verdict(UNCHECKABLE, "the person matches no annotated person")
        n = sum(1 for iv in j.truth.intervals_of(kind) if iv.persons and iv.persons[0] == asked[0])
        status = RIGHT if n == int(key) else WRONG
        return Verdict(status, f"the truth has {n} {kind} interval(s) of {asked[0]}, key {key}")
    if template == "G4.most":
        counts = Counter(iv.persons[0] for k in GESTURE_INTERVAL_KINDS for iv in j.truth.intervals_of(k) if iv.persons)
        ranked = counts.most_common()
        who = reader.persons(key)
        if len(who) == 1 and who[0] is not None:
            top = ranked[0][1] if ranked else 0
            ok = counts.get(who[0], 0) == top and top > 0 and sum(1 for _, n in ranked if n == top) == 1
            return Verdict(RIGHT if ok else WRONG, f"gesture intervals per person: {dict(counts)}")
        return Verdict(UNCHECKABLE, "key not a single person")
    if template in ("T3.first", "G3.first"):
        # the key must happen when its event says; the order against the options is not checked
        anchor = _key_event(reader)
        if anchor is None:
            return Verdict(UNCHECKABLE, "no cited event for the key")
        v = j.event(anchor)
        return v if v.status != RIGHT else Verdict(RIGHT, f"the key's event happens ({v.reason}); order not checked")
    if template == "C2.who":
        return _c2_who(reader)
    if template == "C2.when":
        return _c2_when(reader)
    if template == "G6.reciprocal":
        return _g6_reciprocal(reader)
    # open-ended items and the remaining templates: every statement of the key that can be read
    every = template[:1] == "C"
    statements = _sentences(key)
    verdicts = [_statement(reader, s, reader.window) for s in statements]
    if all(v is None for v in verdicts):
        return reader.premise(every) or Verdict(UNCHECKABLE, f"{template}: the truth does not decide this key")
    combined = _combine(verdicts)
    if combined.status != WRONG and (p := reader.premise(every)) is not None:
        return p
    return combined


def _gesture_window(reader: ItemReader) -> Optional[tuple[float, float]]:
    """The gesture's '(a to b seconds)' or 'from a to b seconds' of a cross-modal question."""
    m = re.search(r"\(?(?:from )?(\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) seconds\)?", reader.question)
    return None if m is None else (float(m.group(1)) + reader.offset, float(m.group(2)) + reader.offset)


def _c2_who(reader: ItemReader) -> Verdict:
    """'While X gestures (a to b), who makes eye contact with X?' keyed with who does and who does not."""
    window, asked = _gesture_window(reader), _PERSON.findall(reader.question)
    if window is None or not asked:
        return Verdict(UNCHECKABLE, "C2 question not read")
    x = reader.label(asked[0])
    key = reader.key
    said_in, said_out = key, ""
    if ", not " in key:
        said_in, said_out = key.split(", not ", 1)
    elif key.startswith(("Not ", "Neither ", "None of ")):
        said_in, said_out = "", key
    verdicts = [reader.judge.mutual_some(x, reader.label(p), *window) for p in _PERSON.findall(said_in)]
    verdicts += [_negate(reader.judge.mutual_some(x, reader.label(p), *window)) for p in _PERSON.findall(said_out)]
    return reader.premise(every=True) or _combine(verdicts)


def _negate(v: Verdict) -> Verdict:
    flipped = {RIGHT: WRONG, WRONG: RIGHT}.get(v.status, v.status)
    return Verdict(flipped, f"not: {v.reason}", v.by)


def _c2_when(reader: ItemReader) -> Verdict:
    """When, relative to X's gesture at Y, Y and X make eye contact: during / only before / only after /
    not within w seconds."""
    window, asked = _gesture_window(reader), _PERSON.findall(reader.question)
    if window is None or len(set(asked)) < 2:
        return Verdict(UNCHECKABLE, "C2 question not read")
    x, y = reader.label(asked[0]), reader.label(asked[1])
    w_said = re.search(r"(\d+(?:\.\d+)?) seconds", reader.key)
    w = float(w_said.group(1)) if w_said else 3.0
    a, b = window
    j = reader.judge
    during, before, after = j.mutual_some(x, y, a, b), j.mutual_some(x, y, a - w, a), j.mutual_some(x, y, b, b + w)
    key = reader.key.lower()
    if key.startswith("during"):
        claim = during
    elif "before" in key:
        claim = _combine([before, _negate(during)])
    elif "after" in key:
        claim = _combine([after, _negate(during)])
    else:
        claim = _combine([_negate(during), _negate(before), _negate(after)])
    return reader.premise(every=True) or claim


def _g6_reciprocal(reader: ItemReader) -> Verdict:
    """'A gestures at B at t: does B gesture back within w seconds?' keyed 'Yes, B <kind> back ...' / 'No'."""
    asked = _PERSON.findall(reader.question)
    at = re.search(r"at (\d+(?:\.\d+)?) seconds", reader.question)
    within = re.search(r"within (\d+(?:\.\d+)?) seconds", reader.question)
    if len(asked) < 2 or at is None or within is None:
        return Verdict(UNCHECKABLE, "G6 question not read")
    if (p := reader.premise()) is not None:
        return p
    a_lab, b_lab = reader.label(asked[0]), reader.label(asked[1])
    if a_lab is None or b_lab is None:
        return Verdict(UNCHECKABLE, "a person of the question matches no annotated person")
    truth = reader.judge.truth
    t0 = float(at.group(1)) + reader.offset
    own = [truth.interval_run_times(iv) for k in GESTURE_INTERVAL_KINDS for iv in truth.intervals_of(k)
           if iv.persons and iv.persons[0] == a_lab and truth.interval_run_times(iv)[1] >= t0 - EDGE_S]
    end = min((e for s_, e in own if s_ <= t0 + EDGE_S), default=t0) + float(within.group(1))
    replies = [k for k in GESTURE_INTERVAL_KINDS for iv in truth.intervals_of(k)
               if iv.persons and iv.persons[0] == b_lab and (len(iv.persons) < 2 or iv.persons[1] == a_lab)
               and t0 < truth.interval_run_times(iv)[0] <= end + EDGE_S]
    if reader.key.startswith("No"):
        return Verdict(WRONG if replies else RIGHT, f"{b_lab}'s annotated gestures back: {replies or 'none'}")
    kind = next((k for verb, k in _GESTURE_VERBS.items() if f" {verb.split()[0]} " in f" {reader.key} "), None)
    ok = kind in replies if kind else bool(replies)
    return Verdict(RIGHT if ok else WRONG, f"{b_lab}'s annotated gestures back: {replies or 'none'}")


_KEY_TYPES = (("eye contact with", "mutual_gaze"), ("the same thing as", "joint_attention"),
              ("follows", "gaze_following"), ("breaks eye contact", "gaze_aversion"))


def _key_event(reader: ItemReader):
    """The earliest cited event a 'which comes first' key describes (its kind and people)."""
    kinds = [k for phrase, k in _KEY_TYPES if phrase in reader.key]
    for verb, k in _GESTURE_VERBS.items():
        if f" {verb} " in f" {reader.key} ":
            kinds.append(k)
    ids = {int(p) for p in _PERSON.findall(reader.key)}
    fitting = [e for e in reader.sources if e.event_type in kinds[:1] and ids <= (set(e.persons) | {
        p for p in (e.actor, e.leader, e.follower) if p is not None} | ({e.target.person_id} if e.target else set()))]
    return min(fitting, key=lambda e: e.start, default=None)


def _duration(reader: ItemReader, kind: str, people: list, key: str) -> Verdict:
    """'For how long ...' keyed 'N seconds', asked from the start time the question names."""
    m = re.fullmatch(_SECONDS, key)
    starts = [t + reader.offset for t in question_times(reader.question)]
    if not m or not starts or any(p is None for p in people) or not people:
        return Verdict(UNCHECKABLE, "duration item not read")
    said, start = float(m.group(1)), starts[0]
    j = reader.judge
    for iv in j.truth.intervals_of(kind):
        if kind in GESTURE_INTERVAL_KINDS:
            if not iv.persons or iv.persons[0] != people[0]:
                continue
        elif set(iv.persons) != set(people):
            continue
        ia, ib = j.truth.interval_run_times(iv)
        if ia - DURATION_TOLERANCE_S <= start <= ib:
            ok = abs((ib - ia) - said) <= DURATION_TOLERANCE_S and abs(ia - start) <= DURATION_TOLERANCE_S
            return Verdict(RIGHT if ok else WRONG, f"annotated {kind} {ia:.2f}-{ib:.2f} s, key {said} s from {start} s",
                           "interval")
    if kind == "mutual_gaze" and len(people) == 2:
        v = j.mutual_claim(people[0], people[1], start, start + said, use_intervals=False)
        if v.status == WRONG:
            return v
        return Verdict(UNCHECKABLE, "no annotated interval to time it")
    return Verdict(WRONG, f"no annotated {kind} of {'+'.join(people)} starts near {start} s", "interval")


def score_qa(judge: Judge, run: ClipRun) -> QAScore:
    score = QAScore()
    for row in run.qa.to_pylist():
        verdict = judge_item(ItemReader(judge, run, row))
        score.by_category[row["category"]][verdict.status] += 1
        score.details.append((run.video_id, row["qa_id"], row.get("template") or row["category"], row["question"],
                              row["answer_text"], verdict.status, verdict.reason))
    return score
