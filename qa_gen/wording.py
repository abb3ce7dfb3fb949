"""Natural wording: names, times at the sampling step, targets, and one factual sentence per event.

Questions say "eye contact", never "mutual_gaze"; people are "Person N" as drawn in exported videos.
Nothing here hedges: every sentence states what the events table records.
"""
from __future__ import annotations

import math
import random
from typing import Iterable, Optional, Sequence

from qa_gen.events_view import Event, Target

# Noun phrases for gaze event types, used as T2 options (same grammatical form, similar length).
GAZE_TYPE_PHRASES = {
    "mutual_gaze": "Eye contact",
    "joint_attention": "Shared attention on one thing",
    "gaze_following": "Following another person's gaze",
    "attention_capture": "Everyone shifting gaze together",
    "sudden_gaze_shift": "A sudden change of gaze direction",
    "gaze_aversion": "Breaking off eye contact",
}

GESTURE_TYPE_PHRASES = {"pointing": "Pointing", "giving": "Giving", "showing": "Showing", "reaching": "Reaching"}


def snap(t: float, step: float) -> float:
    """Round a time to the sampling step (0.5 s at 2 fps)."""
    return round(round(t / step) * step, 6)


def fmt_time(t: float, step: float) -> str:
    """'2.0', '4.5': a time at the sampling step with one decimal."""
    value = snap(t, step)
    return f"{value:.1f}" if step >= 0.1 else f"{value:.2f}"


def fmt_seconds(d: float, step: float) -> str:
    return f"{fmt_time(d, step)} seconds"


def inner_window(start: float, end: float, step: float) -> tuple[float, float]:
    """The largest step-aligned window inside [start, end] (so every printed instant is inside the
    event); falls back to plain rounding when the event is shorter than one step."""
    a = math.ceil(start / step - 1e-9) * step
    b = math.floor(end / step + 1e-9) * step
    if b - a < step - 1e-9:
        a, b = snap(start, step), snap(end, step)
        if b <= a:
            b = a + step
    return round(a, 6), round(b, 6)


def person(pid: int) -> str:
    return f"Person {int(pid)}"


def persons_list(pids: Iterable[int]) -> str:
    """'Person 0', 'Person 0 and Person 1', 'Person 0, Person 1 and Person 2'."""
    names = [person(p) for p in sorted(pids)]
    if not names:
        return "nobody"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def target_phrase(target: Optional[Target], viewer: Optional[int] = None) -> str:
    """How a gaze or gesture target is named in questions and options; ``viewer`` is the person whose
    gaze or gesture it is (their own hands are "their own hands")."""
    if target is None:
        return "something off screen"
    if target.kind == "person":
        return person(target.person_id)
    if target.kind == "hands":
        if viewer is not None and target.person_id == viewer:
            return "their own hands"
        return f"{person(target.person_id)}'s hands"
    if target.kind == "camera":
        return "the camera"
    if target.kind == "location":
        return "the same spot"
    return f"the {target.label}"


GESTURE_VERBS = {"pointing": "points at", "reaching": "reaches toward", "showing": "shows something to",
                 "giving": "hands something to"}
GESTURE_GERUNDS = {"pointing": "pointing at", "reaching": "reaching toward", "showing": "showing something to",
                   "giving": "handing something to"}


def gesture_clause(event: Event) -> str:
    """'Person 0 points at the cup' (present tense, no time)."""
    verb = GESTURE_VERBS.get(event.event_type, "gestures toward")
    if event.target is not None and event.target.kind == "object" and event.event_type in ("showing", "giving"):
        verb = {"showing": "shows", "giving": "hands over"}[event.event_type]
    return f"{person(event.actor)} {verb} {target_phrase(event.target, event.actor)}"


def event_sentence(event: Event, step: float) -> str:
    """One factual sentence with person ids and times, for open-ended answers and evidence steps."""
    a, b = fmt_time(event.start, step), fmt_time(event.end, step)
    span = f"from {a} to {b} seconds"
    et = event.event_type
    if et == "gaze_at":
        return f"{person(event.actor)} looks at {target_phrase(event.target, event.actor)} {span}."
    if et == "mutual_gaze":
        return f"{persons_list(event.persons)} make eye contact {span}."
    if et == "joint_attention":
        return f"{persons_list(event.persons)} look at {target_phrase(event.target)} together {span}."
    if et == "gaze_following":
        lag = event.lag if event.lag is not None else 0.0
        return (f"{person(event.follower)} follows {person(event.leader)}'s gaze to "
                f"{target_phrase(event.target)} at {b} seconds, {fmt_time(lag, step)} seconds after "
                f"{person(event.leader)} looks there.")
    if et == "attention_capture":
        return f"{persons_list(event.persons)} all turn to {target_phrase(event.target)} at {a} seconds."
    if et == "sudden_gaze_shift":
        return f"{person(event.actor)} suddenly changes gaze direction at {a} seconds."
    if et == "gaze_aversion":
        other = [p for p in event.persons if p != event.actor]
        other_name = persons_list(other) if other else "their partner"
        return (f"{person(event.actor)} breaks eye contact with {other_name} at {a} seconds while "
                f"{other_name} keeps looking.")
    if et in GESTURE_VERBS:
        return f"{gesture_clause(event)} {span}."
    if et == "gaze_follows_gesture":
        return (f"{person(event.follower if event.follower is not None else event.persons[-1])} looks at "
                f"{target_phrase(event.target)} at {a} seconds, after {person(event.leader if event.leader is not None else event.persons[0])} gestures at it.")
    if et == "eye_contact_during_gesture":
        return f"{persons_list(event.persons)} make eye contact during a gesture {span}."
    if et == "gaze_gesture_alignment":
        return f"{person(event.actor)} looks at what they gesture at {span}."
    return f"{persons_list(event.persons)} take part in an interaction {span}."


def choose(rng: random.Random, phrasings: Sequence[str], **values) -> str:
    """Pick one phrasing of a question family (seeded) and fill it in."""
    return rng.choice(list(phrasings)).format(**values)
