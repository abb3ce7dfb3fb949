"""The one phrasing of events: names, times at the sampling step, targets, one clause and one factual
sentence per event. QA questions, answers and evidence steps, `socialtrace inspect`, render captions and
the timeline legend all take their words from here, so an event reads the same everywhere.

Questions say "eye contact", never "mutual_gaze"; people are "Person N" as drawn in exported videos.
Nothing here hedges: every sentence states what the events table records. ASCII only (OpenCV draws the
captions and has no Unicode).
"""
from __future__ import annotations

import math
import random
from typing import Iterable, Mapping, Optional, Sequence

from qa_gen.events_view import Event, Target, event_from_row

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
        # a ray that hits nothing we detect: often a thing in view that no detector found, so never
        # "off screen"
        return "something unidentified"
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
    # a detector's class name ("the cup"), or the referent finder's generic "object" ("the object")
    return f"the {target.label}"


GESTURE_VERBS = {"pointing": "points at", "reaching": "reaches toward", "showing": "shows something to",
                 "giving": "hands something to"}
GESTURE_GERUNDS = {"pointing": "pointing at", "reaching": "reaching toward", "showing": "showing something to",
                   "giving": "handing something to"}


def partner_of(event: Event) -> Optional[int]:
    """The other party of a two-person gaze event: for gaze_aversion the one who keeps looking (the
    event's target person), else the first listed person who is not the actor."""
    if event.target is not None and event.target.kind == "person" and event.target.person_id != event.actor:
        return event.target.person_id
    others = [p for p in event.persons if p != event.actor]
    return others[0] if others else None


def clause(kind: str, actor: Optional[int] = None, other: Optional[int] = None, group: Iterable[int] = (),
           target: Optional[Target] = None) -> str:
    """The one present-tense phrasing of who does what, without times: "Person 0 points at the cup".
    ``actor``: gazer / gesturer / leader / the one breaking eye contact; ``other``: partner or follower;
    ``group``: everyone of a group event."""
    if kind == "mutual_gaze":
        return f"{persons_list(group)} make eye contact"
    if kind == "joint_attention":
        return f"{persons_list(group)} look at {target_phrase(target)} together"
    if kind == "gaze_following":
        if target is None:
            return f"{person(other)} follows {person(actor)}'s gaze"
        return f"{person(other)} follows {person(actor)}'s gaze to {target_phrase(target)}"
    if kind == "attention_capture":
        return f"{persons_list(group)} all turn to {target_phrase(target)} at once"
    if kind == "sudden_gaze_shift":
        return f"{person(actor)} suddenly changes gaze direction"
    if kind == "gaze_aversion":
        return f"{person(actor)} breaks eye contact with {person(other) if other is not None else 'their partner'}"
    if kind == "gaze_at":
        return f"{person(actor)} looks at {target_phrase(target, actor)}"
    if kind in GESTURE_VERBS:
        verb = GESTURE_VERBS[kind]
        if target is not None and target.kind == "object" and kind in ("showing", "giving"):
            verb = {"showing": "shows", "giving": "hands over"}[kind]
        return f"{person(actor)} {verb} {target_phrase(target, actor)}"
    if kind == "gaze_follows_gesture":
        return f"{person(other)} looks at {target_phrase(target)} after {person(actor)} gestures at it"
    if kind == "eye_contact_during_gesture":
        return f"{persons_list(group)} make eye contact during a gesture"
    if kind == "gaze_gesture_alignment":
        return f"{person(actor)} looks at what they gesture at"
    if kind in ("co_occur", "adjacent"):
        when = "at the same time" if kind == "co_occur" else "one after the other"
        return f"{persons_list(group)} {'look and gesture' if len(list(group)) != 1 else 'looks and gestures'} {when}"
    raise ValueError(f"no wording for event kind {kind!r}")


def event_roles(event: Event) -> dict:
    """The clause arguments of one event (see ``clause``)."""
    k = event.event_type
    if k == "gaze_following" or k == "gaze_follows_gesture":
        leader = event.leader if event.leader is not None else (event.persons[0] if event.persons else None)
        follower = event.follower if event.follower is not None else (event.persons[-1] if event.persons else None)
        return {"actor": leader, "other": follower, "target": event.target}
    if k == "gaze_aversion":
        return {"actor": event.actor, "other": partner_of(event)}
    if k in ("mutual_gaze", "joint_attention", "attention_capture", "eye_contact_during_gesture", "co_occur", "adjacent"):
        return {"group": event.persons, "target": None if k == "mutual_gaze" else event.target}
    return {"actor": event.actor, "target": event.target}


def event_clause(event: Event) -> str:
    """``clause`` of one event; an event type without wording is named by its people."""
    try:
        return clause(event.event_type, **event_roles(event))
    except ValueError:
        return f"{persons_list(event.persons)} take part in an interaction"


def describe_row(row: Mapping) -> str:
    """``event_clause`` of one events-table row (a dict): for inspect and render captions."""
    return event_clause(event_from_row(row))


# English names of event types, for legends and headings
EVENT_TYPE_NAMES = {"gaze_at": "looking at", "mutual_gaze": "eye contact", "joint_attention": "shared attention",
                    "gaze_following": "gaze following", "attention_capture": "attention capture",
                    "sudden_gaze_shift": "sudden gaze shift", "gaze_aversion": "breaking eye contact",
                    "pointing": "pointing", "reaching": "reaching", "showing": "showing", "giving": "giving",
                    "co_occur": "gaze and gesture together", "adjacent": "gaze and gesture in turn",
                    "gaze_follows_gesture": "looking where someone gestures",
                    "eye_contact_during_gesture": "eye contact during a gesture",
                    "gaze_gesture_alignment": "looking where one gestures"}


def event_type_name(kind: str) -> str:
    return EVENT_TYPE_NAMES.get(kind, kind.replace("_", " "))


def gesture_clause(event: Event) -> str:
    """'Person 0 points at the cup' (present tense, no time)."""
    return event_clause(event)


def event_sentence(event: Event, step: float, window: Optional[tuple[float, float]] = None) -> str:
    """One factual sentence with person ids and times, for open-ended answers, evidence steps and
    captions: the event's clause, then when (an instant for onsets, a span for states, told inside the
    event at the sampling step). With ``window``,
    a state is told only for its part inside the window (an answer about 2.5-3.0 s says nothing about
    0.0-2.5 s)."""
    start, end = event.start, event.end
    if window is not None:
        start, end = max(start, window[0]), min(end, window[1])
    # a span is told at the step-aligned instants inside it, as questions ask about it: plain rounding
    # printed a state that runs to the end of a 3.37 s clip as lasting "to 3.5 seconds"
    a, b = (fmt_time(t, step) for t in inner_window(start, end, step))
    et = event.event_type
    text = event_clause(event)
    if et == "gaze_following":
        lag = event.lag if event.lag is not None else 0.0
        return (f"{text} at {fmt_time(event.end, step)} seconds, {fmt_time(lag, step)} seconds after "
                f"{person(event_roles(event)['actor'])} looks there.")
    if et in ("attention_capture", "sudden_gaze_shift", "gaze_follows_gesture"):
        return f"{text} at {fmt_time(event.start, step)} seconds."
    if et == "gaze_aversion":
        other = event_roles(event)["other"]
        return (f"{text} at {fmt_time(event.start, step)} seconds while "
                f"{person(other) if other is not None else 'their partner'} keeps looking.")
    return f"{text} from {a} to {b} seconds."


def instant_of(event: Event) -> Optional[float]:
    """The moment an onset-type event is told at (see ``event_sentence``); None for states."""
    if event.event_type == "gaze_following":
        return event.end
    if event.event_type in ("attention_capture", "sudden_gaze_shift", "gaze_follows_gesture", "gaze_aversion"):
        return event.start
    return None


def choose(rng: random.Random, phrasings: Sequence[str], **values) -> str:
    """Pick one phrasing of a question family (seeded) and fill it in."""
    return rng.choice(list(phrasings)).format(**values)
