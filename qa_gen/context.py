"""What question templates may ask about one video: its events, who is present when, and truth checks
used to keep every distractor false."""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from qa_gen.events_view import Event, Presence, Target, people_of
from qa_gen.looks import LookGeometry
from qa_gen.wording import clause, instant_of, partner_of

GESTURE_TYPES = ("pointing", "reaching", "showing", "giving")
CHANGE_TYPES = ("gaze_aversion", "sudden_gaze_shift")  # events that claim a gaze changed


def stable_hash(*parts: object) -> int:
    """A hash that is the same in every process and Python version (unlike hash())."""
    blob = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


@dataclass(frozen=True)
class Claim:
    """A statement about who does what (no times): the unit of options that describe behaviour.
    ``actor``: gazer / gesturer / leader / the one breaking eye contact; ``other``: partner or follower."""

    kind: str
    actor: Optional[int] = None
    other: Optional[int] = None
    group: frozenset = frozenset()
    target: Optional[Target] = None

    def text(self) -> str:
        return clause(self.kind, self.actor, self.other, self.group, self.target)


def claim_of(event: Event) -> Optional[Claim]:
    """The claim an event makes true."""
    k = event.event_type
    if k in ("mutual_gaze", "joint_attention", "attention_capture"):
        return Claim(k, group=frozenset(event.persons), target=event.target if k != "mutual_gaze" else None)
    if k == "gaze_following" and event.leader is not None and event.follower is not None:
        return Claim(k, actor=event.leader, other=event.follower, target=event.target)
    if k == "gaze_aversion" and event.actor is not None:
        return Claim(k, actor=event.actor, other=partner_of(event))
    if k in ("sudden_gaze_shift",) and event.actor is not None:
        return Claim(k, actor=event.actor)
    if k in ("gaze_at",) + GESTURE_TYPES and event.actor is not None and event.target is not None:
        return Claim(k, actor=event.actor, target=event.target)
    return None


@dataclass
class VideoContext:
    """One video's events plus the queries templates need."""

    video_id: str
    events: list[Event]
    presence: Presence
    duration: float
    step: float
    seed: int
    reciprocal_window: float = 3.0
    response_window: float = 3.0
    min_evidence: float = 0.25  # QAConfig.min_evidence_seconds
    looks: Optional[LookGeometry] = None  # gaze directions by person and frame (None: not known)
    who_margin_deg: float = 27.0  # QAConfig.who_margin_deg
    by_id: dict[int, Event] = field(init=False)
    gaze_at_of: dict[int, list[Event]] = field(init=False)  # each person's own gaze_at events

    conflicted: frozenset = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {e.event_id: e for e in self.events}
        self.gaze_at_of = {}
        for e in self.events:
            if e.event_type == "gaze_at" and e.target is not None:
                self.gaze_at_of.setdefault(e.actor, []).append(e)
        gaze = [e for e in self.events if looks_of(e) or e.event_type in ("mutual_gaze", "gaze_aversion")]
        self.conflicted = frozenset(e.event_id for i, e in enumerate(gaze) for o in gaze[:i] + gaze[i + 1:]
                                    if contradicts(e, o, self.min_evidence))

    def unconfirmed_change(self, e: Event) -> bool:
        """Is ``e`` a change of gaze (a breaking off, a sudden shift) whose new state its person shows on one
        sampled frame only, the last of theirs in the shot? Mid-shot, a gaze state seen on one frame between
        others is a flicker the events stage removes (events.geometry.stable_targets); on a person's last
        frame (the clip or shot ends, or they leave the picture) nothing after it can tell a change from a
        flicker (tvhid_highfive_0018: B "breaks off" eye contact on his last frame before he walks out). The
        events stage makes no such event any more (events.gaze.new_state_confirmed); this guards events tables
        written before it, which ``socialtrace qa`` may be given."""
        if e.event_type not in CHANGE_TYPES or e.actor is None:
            return False
        # from the frame that first shows the new state: the look-away itself; the shift's landing frame
        # (the shift runs from the frame before the movement to the frame after it)
        new_state = e.start if e.event_type == "gaze_aversion" else (e.start + e.end) / 2
        return self.presence.samples_from(e.actor, new_state) < 2

    def rng(self, *parts: object) -> random.Random:
        """A generator seeded by (seed, video, parts): the same item always gets the same wording."""
        return random.Random(stable_hash(self.seed, self.video_id, *parts))

    def may_be_one_of(self, pid: int, persons: Iterable[int]) -> bool:
        """Whether ``pid`` may be one of ``persons`` under another id: never seen on one sampled frame with them
        (a person the tracker lost for a moment and found again as a new id)."""
        return any(pid != p and not self.presence.ever_together(pid, p) for p in persons)

    def split_over_ids(self, pid: int, events: Iterable[Event]) -> bool:
        """Whether someone who may be ``pid`` under another id (``may_be_one_of``) takes part in one of ``events``:
        then what those events say of ``pid`` over the whole clip (a count, an order, a role) may miss what the
        same person did under the other id."""
        return any(p != pid and self.may_be_one_of(pid, [p]) for e in events for p in people_of(e))

    def of_type(self, *types: str) -> list[Event]:
        """Events of these types that questions may be anchored on (see ``trusted``)."""
        return [e for e in self.events if e.event_type in types and self.trusted(e)]

    def trusted(self, e: Event) -> bool:
        """May an item rest on ``e``? Not when it lasts less than ``min_evidence``, nor when another
        event contradicts it (one person on two targets at once, eye contact during its own breaking off):
        where the events stage disagrees with itself, at least one of the two is wrong. Gaze following is asked about only when each person's own look at the target is recorded too
        (the leader's when it begins, the follower's when they turn) and the target is not a part of
        either of them: a following event without that support would make a false item."""
        if e.duration < self.min_evidence or e.event_id in self.conflicted:
            return False  # seen for less than a sample, or contradicted by another event: no item rests on it
        if self.unconfirmed_change(e):
            return False
        if e.event_type != "gaze_following":
            return True
        if e.leader is None or e.follower is None or e.target is None or e.target.person_id in (e.leader, e.follower):
            return False
        key = e.target.key
        return (key in self.looked_at_directly(e.leader, e.start, e.start + self.min_evidence)
                and key in self.looked_at_directly(e.follower, e.end - self.min_evidence, e.end + self.min_evidence))

    def looked_at_directly(self, pid: int, a: float, b: float) -> set[tuple]:
        """Target keys of ``pid``'s own gaze_at events overlapping [a, b]."""
        return {e.target.key for e in self.gaze_at_of.get(pid, ()) if e.overlaps(a, b)}

    def seen_looking_away(self, people: Iterable[int], target: Target, a: float, b: float) -> bool:
        """Is each of ``people`` seen looking clearly away from ``target`` (``who_margin_deg``) at every
        sampled frame of [a, b]? Never without gaze directions."""
        return self.looks is not None and not any(
            self.looks.may_look_at(p, target, a, b, self.who_margin_deg, self.step / 2) for p in people)

    def may_be_on(self, p: int, target: Target, a: float, b: float) -> bool:
        """Is ``p``'s gaze measured within ``who_margin_deg`` of ``target`` at every sampled frame of [a, b]:
        could the look be on it all along (no false option about where ``p`` looks)?"""
        return self.looks is not None and self.looks.near_throughout(p, target, a, b, self.who_margin_deg, self.step / 2)

    def seen_apart(self, p: int, q: int, a: float, b: float) -> bool:
        """Is ``p`` or ``q`` seen looking away from the other at every sampled frame of [a, b]: no eye contact
        between them there? Never without gaze directions."""
        return (self.seen_looking_away([p], Target("person", q), a, b)
                or self.seen_looking_away([q], Target("person", p), a, b))

    def face_to_face(self, p: int, q: int, a: float, b: float) -> bool:
        """Are ``p`` and ``q`` each recorded looking at the other during [a, b]? Eye contact there cannot be
        ruled out (the looks may be too thin or too uncertain to report it), so no item says there is none."""
        return (Target("person", q).key in self.looked_at_directly(p, a, b)
                and Target("person", p).key in self.looked_at_directly(q, a, b))

    def overlapping(self, a: float, b: float, types: Sequence[str] = ()) -> list[Event]:
        return [e for e in self.events if e.overlaps(a, b) and (not types or e.event_type in types)]

    @property
    def object_targets(self) -> list[Target]:
        return sorted({e.target for e in self.events if e.target is not None and e.target.kind == "object"})

    def shot_span(self, t: float) -> tuple[float, float]:
        """The camera shot that holds time ``t``: from its first sampled frame to its last one when a cut
        follows (the cut lies somewhere after it), else to the clip's end; the clip's start and end for a
        clip of one shot."""
        cuts = self.presence.cuts
        start = max([0.0] + [c for c in cuts if c <= t + 1e-6])
        later = [c for c in cuts if c > t + 1e-6]
        return start, (self.presence.shot_end_before(later[0]) if later else self.duration)

    def seen_whole(self, e: Event) -> bool:
        """Was the event's start and end both observed? One that starts at its shot's first sample (the
        clip's start, or a cut) or runs to the shot's last may have begun before or gone on after what the
        camera shows: its length is unknown."""
        start, end = self.shot_span(e.start)
        return e.start >= start + self.min_evidence and e.end <= end - self.min_evidence

    def onset_seen(self, e: Event) -> bool:
        """Was the event's beginning observed? Not when it starts at its shot's first sample (the clip's
        start or a cut), nor (a look) when the events stage found no sample just before it showing the
        looker and the target: an order of onsets told from such an event would be a guess."""
        return e.start >= self.shot_span(e.start)[0] + self.min_evidence and e.onset_recorded

    # --- truth checks ---------------------------------------------------------------------------

    def looked_at(self, pid: int, a: float, b: float) -> set[tuple]:
        """Target keys ``pid`` looks at during [a, b] according to any gaze event."""
        keys: set[tuple] = set()
        for e in self.overlapping(a, b):
            if e.event_type == "gaze_at" and e.actor == pid and e.target is not None:
                keys.add(e.target.key)
            elif e.event_type == "mutual_gaze" and pid in e.persons:
                keys.update(Target("person", o).key for o in e.persons if o != pid)
            elif e.event_type in ("joint_attention", "attention_capture", "gaze_following") and e.target is not None:
                if pid in people_of(e):
                    keys.add(e.target.key)
        return keys

    def inside(self, e: Event, a: float, b: float) -> bool:
        """Does ``e`` belong to the window [a, b]: its told instant lies in it, or (a state) it covers at
        least one sampling step of it (all of it when the window is shorter)."""
        t = instant_of(e)
        if t is not None:
            return a - 1e-6 <= t <= b + 1e-6
        return min(e.end, b) - max(e.start, a) >= min(self.step, b - a) - 1e-6

    def gestured_at(self, pid: int, a: float, b: float) -> set[tuple]:
        return {e.target.key for e in self.overlapping(a, b, GESTURE_TYPES) if e.actor == pid and e.target}

    def holds(self, claim: Claim, a: float, b: float) -> bool:
        """Does some event overlapping [a, b] make ``claim`` true (or a stronger version of it)?"""
        for e in self.overlapping(a, b):
            if _supports(e, claim, self):
                return True
        return False

    def involved_in(self, kind: str, persons: Iterable[int], a: float, b: float) -> bool:
        people = set(persons)
        return any(people & people_of(e) for e in self.overlapping(a, b, (kind,)))


def looks_of(e: Event) -> list[tuple[int, tuple]]:
    """(person, target key) pairs an event says hold throughout it: who looks at what."""
    if e.event_type == "mutual_gaze":
        return [(p, Target("person", o).key) for p in e.persons for o in e.persons if o != p][: len(e.persons)]
    if e.event_type in ("joint_attention", "attention_capture", "gaze_at") and e.target is not None:
        return [(p, e.target.key) for p in e.persons]
    return []


def contradicts(x: Event, y: Event, min_overlap: float) -> bool:
    """Do two events put one person's gaze on two different things at once (for at least
    ``min_overlap`` seconds), or tell eye contact and its breaking off for the same time?"""
    if min(x.end, y.end) - max(x.start, y.start) < min_overlap:
        return False
    kinds = {x.event_type, y.event_type}
    if kinds == {"mutual_gaze", "gaze_aversion"} and set(x.persons) == set(y.persons):
        return True
    looks_y = dict(looks_of(y))
    return any(p in looks_y and looks_y[p] != key for p, key in looks_of(x))


def _supports(e: Event, c: Claim, ctx: VideoContext) -> bool:
    k = c.kind
    if k == "gaze_at":
        if c.target is None:
            return False
        return c.target.key in ctx.looked_at(c.actor, e.start, e.end) if c.actor in people_of(e) else False
    if e.event_type != k:
        return False
    if k == "mutual_gaze":
        return c.group <= set(e.persons)
    if k in ("joint_attention", "attention_capture"):
        same_target = c.target is None or e.target is None or c.target.key == e.target.key
        return c.group <= set(e.persons) and same_target
    if k == "gaze_following":
        return e.leader == c.actor and e.follower == c.other
    if k == "gaze_aversion":
        claim = claim_of(e)
        return claim is not None and claim.actor == c.actor and (c.other is None or claim.other == c.other)
    if k == "sudden_gaze_shift":
        return e.actor == c.actor
    if k in GESTURE_TYPES:
        return e.actor == c.actor and (c.target is None or (e.target is not None and e.target.key == c.target.key))
    return False
