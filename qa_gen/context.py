"""What question templates may ask about one video: its events, who is present when, and truth checks
used to keep every distractor false."""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from qa_gen.events_view import Event, Presence, Target, people_of
from qa_gen.wording import GESTURE_VERBS, person, persons_list, target_phrase

GESTURE_TYPES = ("pointing", "reaching", "showing", "giving")


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
        k = self.kind
        if k == "mutual_gaze":
            return f"{persons_list(self.group)} make eye contact"
        if k == "joint_attention":
            return f"{persons_list(self.group)} look at {target_phrase(self.target)} together"
        if k == "gaze_following":
            if self.target is None:
                return f"{person(self.other)} follows {person(self.actor)}'s gaze"
            return f"{person(self.other)} follows {person(self.actor)}'s gaze to {target_phrase(self.target)}"
        if k == "attention_capture":
            return f"{persons_list(self.group)} all turn to {target_phrase(self.target)} at once"
        if k == "sudden_gaze_shift":
            return f"{person(self.actor)} suddenly changes gaze direction"
        if k == "gaze_aversion":
            return f"{person(self.actor)} breaks eye contact with {person(self.other)}"
        if k == "gaze_at":
            return f"{person(self.actor)} looks at {target_phrase(self.target, self.actor)}"
        if k in GESTURE_VERBS:
            return f"{person(self.actor)} {GESTURE_VERBS[k]} {target_phrase(self.target, self.actor)}"
        raise ValueError(f"no wording for claim kind {k!r}")


def claim_of(event: Event) -> Optional[Claim]:
    """The claim an event makes true."""
    k = event.event_type
    if k in ("mutual_gaze", "joint_attention", "attention_capture"):
        return Claim(k, group=frozenset(event.persons), target=event.target if k != "mutual_gaze" else None)
    if k == "gaze_following" and event.leader is not None and event.follower is not None:
        return Claim(k, actor=event.leader, other=event.follower, target=event.target)
    if k == "gaze_aversion" and event.actor is not None:
        others = [p for p in event.persons if p != event.actor]
        if event.target is not None and event.target.kind == "person":
            others = [event.target.person_id]
        return Claim(k, actor=event.actor, other=others[0] if others else None)
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
    by_id: dict[int, Event] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {e.event_id: e for e in self.events}

    def rng(self, *parts: object) -> random.Random:
        """A generator seeded by (seed, video, parts): the same item always gets the same wording."""
        return random.Random(stable_hash(self.seed, self.video_id, *parts))

    def of_type(self, *types: str) -> list[Event]:
        return [e for e in self.events if e.event_type in types]

    def overlapping(self, a: float, b: float, types: Sequence[str] = ()) -> list[Event]:
        return [e for e in self.events if e.overlaps(a, b) and (not types or e.event_type in types)]

    @property
    def object_targets(self) -> list[Target]:
        return sorted({e.target for e in self.events if e.target is not None and e.target.kind == "object"})

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
