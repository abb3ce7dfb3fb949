"""Gesture question families G1-G6 (DESIGN.md §6)."""
from __future__ import annotations

import itertools
from collections import Counter
from typing import Iterator

from qa_gen.candidate import Candidate, pick_distractors
from qa_gen.context import GESTURE_TYPES, Claim, VideoContext
from qa_gen.events_view import Target
from qa_gen.template_tools import NORMS, first_of, near_durations
from qa_gen.wording import (GESTURE_GERUNDS, GESTURE_TYPE_PHRASES, GESTURE_VERBS, choose, event_sentence,
                            fmt_seconds, fmt_time, gesture_clause, inner_window, person,
                            target_phrase)

BASE_VERBS = {"pointing": "point at", "reaching": "reach toward", "showing": "show something to",
              "giving": "hand something to"}
COUNT_VERBS = {"pointing": "point", "reaching": "reach out", "showing": "show something", "giving": "hand something over"}


def _named(e) -> list[int]:
    return sorted({e.actor} | ({e.target.person_id} if e.target is not None and e.target.person_id >= 0 else set()))


def _norm(e) -> list[tuple[str, int]]:
    return [(NORMS[e.event_type], e.event_id)] if e.event_type in NORMS else []


def g1_recognition(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type(*GESTURE_TYPES):
        if e.actor is None or e.target is None:
            continue
        a, b = inner_window(e.start, e.end, ctx.step)
        sa, sb = fmt_time(a, ctx.step), fmt_time(b, ctx.step)
        # what / whom does X point or reach at: asked of these two only, whose targets are people and
        # things alike (one hands or shows something to a person, so there the verb gives the kind away);
        # the options are two people and two things where the scene has them, so the kind of the answer
        # is not given away either
        if e.event_type in ("pointing", "reaching"):
            rng = ctx.rng("G1.target", e.key)
            aimed = ctx.gestured_at(e.actor, a, b)
            present = ctx.presence.present_in(a, b, exclude=[e.actor])
            faces = [Target("person", p) for p in present] + sorted(
                {o.target for o in ctx.of_type(*GESTURE_TYPES) if o.target is not None and o.target.kind == "hands"
                 and o.target.person_id in present})
            things = sorted({t for t in ctx.object_targets} | {o.target for o in ctx.of_type(*GESTURE_TYPES)
                                                               if o.target is not None and o.target.kind == "object"})
            same, other = (faces, things) if e.target.kind in ("person", "hands") else (things, faces)
            same = [target_phrase(t, e.actor) for t in same if t.key not in aimed]
            other = [target_phrase(t, e.actor) for t in other if t.key not in aimed]
            correct = target_phrase(e.target, e.actor)
            distractors = pick_distractors(rng, [], same, correct, 1) + pick_distractors(rng, [], other, correct, 2)
            distractors += pick_distractors(rng, [], [t for t in same + other if t not in distractors], correct,
                                            3 - len(distractors))
            if len(distractors) == 3:
                q = choose(rng, ["Whom or what does {p} {verb} between {a} and {b} seconds?",
                                 "Between {a} and {b} seconds, what is the target when {p} {verbs}?"],
                           p=person(e.actor), verb=BASE_VERBS[e.event_type],
                           verbs=GESTURE_VERBS[e.event_type].split()[0], a=sa, b=sb)
                yield Candidate("G1", "G1.target", q, correct, distractors,
                                [event_sentence(e, ctx.step), f"The target of the gesture is {correct}."],
                                [e], _named(e), (a, b), norms=_norm(e), answer_class=e.target.kind)
        # who gestures at T
        rng = ctx.rng("G1.who", e.key)
        others = ctx.presence.present_in(a, b, exclude=[e.actor, e.target.person_id])
        if len(others) < 3 or any(e.target.key in ctx.gestured_at(p, a, b) for p in others):
            continue  # too few people for options that are all people, or no single answer
        correct = person(e.actor)
        distractors = pick_distractors(rng, [], [person(p) for p in others], correct)
        verb = GESTURE_VERBS[e.event_type]
        q = choose(rng, ["Who {verb} {t} between {a} and {b} seconds?",
                         "Between {a} and {b} seconds, which person {verb} {t}?"],
                   verb=verb, t=target_phrase(e.target), a=sa, b=sb)
        yield Candidate("G1", "G1.who", q, correct, distractors,
                        [event_sentence(e, ctx.step), f"No one else {verb} {target_phrase(e.target)} then."],
                        [e], _named(e), (a, b), norms=_norm(e))


def g2_type(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type(*GESTURE_TYPES):
        if e.actor is None or e.target is None:
            continue
        a, b = inner_window(e.start, e.end, ctx.step)
        # the options are the four gesture kinds, the same set in every item (so the set never hints at the
        # key); each false one must truly not happen: no other kind by this person in the window or one
        # sample beside it (a pointing that begins at the window's last instant is seen there)
        kinds = {o.event_type for o in ctx.overlapping(a - ctx.step, b + ctx.step, GESTURE_TYPES)
                 if o.actor == e.actor}
        if kinds != {e.event_type}:
            continue  # two gesture types at once or back to back: the question would have two answers
        rng = ctx.rng("G2.type", e.key)
        correct = GESTURE_TYPE_PHRASES[e.event_type]
        distractors = [GESTURE_TYPE_PHRASES[k] for k in GESTURE_TYPES if k != e.event_type]
        # the target is not named: what one points at or hands over would narrow the kind down
        q = choose(rng, ["What kind of gesture does {p} make between {a} and {b} seconds?",
                         "Between {a} and {b} seconds, which gesture does {p} make?"],
                   p=person(e.actor), a=fmt_time(a, ctx.step), b=fmt_time(b, ctx.step))
        yield Candidate("G2", "G2.type", q, correct, distractors,
                        [event_sentence(e, ctx.step), f"The gesture is {correct.lower()}."],
                        [e], _named(e), (a, b), norms=_norm(e), answer_class=e.event_type)


def g3_temporal(ctx: VideoContext) -> Iterator[Candidate]:
    gestures = [e for e in ctx.of_type(*GESTURE_TYPES) if e.actor is not None and e.target is not None]
    firsts: dict[str, float] = {}
    first_event = {}
    for e in gestures:
        text = gesture_clause(e)
        if text not in firsts:
            firsts[text], first_event[text] = e.start, e
    winner = first_of(firsts, min_gap=1.0)
    if winner is not None:
        rng = ctx.rng("G3.first")
        never = []
        split = {p for e in gestures for p in _named(e) if ctx.split_over_ids(p, gestures)}
        for e in gestures:  # swapped roles and other gesture kinds that never happen
            if split & set(_named(e)):
                continue  # ...to these ids: under another id the same people may make them
            for kind in GESTURE_TYPES:
                c = Claim(kind, actor=e.actor, target=e.target)
                if not ctx.holds(c, 0.0, ctx.duration + 1):
                    never.append(c.text())
            if e.target.kind == "person":
                c = Claim(e.event_type, actor=e.target.person_id, target=Target("person", e.actor))
                if not ctx.holds(c, 0.0, ctx.duration + 1):
                    never.append(c.text())
        real = [t for t in firsts if t != winner]
        rng.shuffle(real)
        distractors = pick_distractors(rng, real[:2], never, winner)
        used = [first_event[t] for t in [winner] + [d for d in distractors if d in first_event]]
        q = choose(rng, ["Which of these gestures happens first?", "Which gesture comes first in the clip?"])
        yield Candidate("G3", "G3.first", q, winner, distractors,
                        [event_sentence(u, ctx.step) for u in sorted(used, key=lambda u: u.start)][:4], used,
                        sorted({p for u in used for p in _named(u)}),
                        (min(u.start for u in used), max(u.end for u in used)))
    for e in gestures:
        if e.duration < 0.5 or not ctx.seen_whole(e):
            continue
        rng = ctx.rng("G3.duration", e.key)
        wrong = near_durations(e.duration, ctx.step, rng, minimum=ctx.step, maximum=ctx.duration)
        same = [o for o in gestures if o is not e and gesture_clause(o) == gesture_clause(e) and abs(o.start - e.start) < 2]
        if wrong is None or same:
            continue
        q = choose(rng, ["How long does {p} {verb} {t}, starting at {a} seconds?",
                         "{p} starts {gerund} {t} at {a} seconds. How long does the gesture last?"],
                   p=person(e.actor), verb=BASE_VERBS[e.event_type], gerund=GESTURE_GERUNDS[e.event_type],
                   t=target_phrase(e.target, e.actor), a=fmt_time(e.start, ctx.step))
        correct = fmt_seconds(e.duration, ctx.step)
        yield Candidate("G3", "G3.duration", q, correct, wrong,
                        [event_sentence(e, ctx.step), f"The gesture lasts {correct}."], [e], _named(e),
                        (e.start, e.end))


COUNT_QUESTIONS = ("How many times does {p} {verb} in the clip?", "In the whole clip, how often does {p} {verb}?")


def _times(n: int) -> str:
    """Counts as bare numbers: "Once" / "4 times" would make the short answers stand out."""
    return str(n)


def _count_distractors(rng, n: int) -> list[str]:
    """Three wrong counts: four consecutive counts around ``n`` (none below 0), with ``n`` at a place
    drawn at random, so neither the option set nor the key's place in it tells the answer (a fixed
    "n-1, n+1, n+2" makes the key the second smallest, and "1" an option of nearly every item)."""
    start = rng.choice([s for s in range(n - 3, n + 1) if s >= 0])
    return [_times(k) for k in range(start, start + 4) if k != n]


def _maybe_under_another_id(ctx: VideoContext, pid: int, gestures: list) -> set[str]:
    """The gesture kinds made by someone who may be ``pid`` under another id (never seen with them: a person
    the tracker lost across a cut and found again as a new id). A count of ``pid``'s gestures of such a kind may
    miss some of theirs: a man pointing through a close-up, a wide shot and a close-up again, under three ids,
    is not a man who points 0 times in the clip (bench_reverse_shots, deepoint_pointing_up close-up / wide /
    close-up)."""
    return {e.event_type for e in gestures if e.actor != pid and ctx.may_be_one_of(pid, [e.actor])}


def g4_frequency(ctx: VideoContext) -> Iterator[Candidate]:
    gestures = [e for e in ctx.of_type(*GESTURE_TYPES) if e.actor is not None]
    counts = Counter(e.actor for e in gestures)
    people = ctx.presence.persons
    maybe_theirs = {p: _maybe_under_another_id(ctx, p, gestures) for p in set(people) | set(counts)}
    if gestures and len(people) >= 2:
        ranked = counts.most_common()
        top, n_top = ranked[0]
        second = ranked[1][1] if len(ranked) > 1 else 0
        # nobody else reaches the top count even with every id that may be them under another one added
        at_most = {p: counts[p] + sum(counts[q] for q in counts if q != p and ctx.may_be_one_of(p, [q]))
                   for p in people if p != top}
        if n_top >= second + 1 and all(n < n_top for n in at_most.values()):
            rng = ctx.rng("G4.most")
            correct = person(top)
            pool = [person(p) for p in people if p != top]
            preferred = [person(ranked[1][0])] if len(ranked) > 1 else []
            distractors = pick_distractors(rng, preferred, pool, correct, 2)
            distractors += ["They all gesture equally often" if len(people) > 2 else "Both gesture equally often"]
            if len(distractors) < 3:
                distractors.append("Nobody gestures")
            q = choose(rng, ["Who gestures most often in the clip?", "Which person makes the most gestures in the clip?"])
            facts = [f"{person(p)} makes {n} gesture{'s' if n != 1 else ''}." for p, n in ranked[:3]]
            yield Candidate("G4", "G4.most", q, correct, distractors[:3],
                            ([f"{person(top)} makes {n_top} gestures, more than anyone else."] + facts)[:4],
                            list(gestures), sorted(counts),
                            (0.0, ctx.duration))
    for pid, kind in sorted({(e.actor, e.event_type) for e in gestures}):
        if kind in maybe_theirs[pid]:
            continue
        mine = [e for e in gestures if e.actor == pid and e.event_type == kind]
        n = len(mine)
        rng = ctx.rng("G4.count", pid, kind)
        distractors = _count_distractors(rng, n)
        q = choose(rng, COUNT_QUESTIONS,
                   p=person(pid), verb=COUNT_VERBS[kind])
        yield Candidate("G4", "G4.count", q, _times(n), distractors,
                        [f"{person(pid)} makes {n} {kind} gesture{'s' if n != 1 else ''}."]
                        + [event_sentence(e, ctx.step) for e in mine][:3], mine, [pid], (0.0, ctx.duration),
                        key=f"person={pid},kind={kind}")
    # "0" items: a gesture someone makes, asked of a person who never makes it. Without them the answer
    # to "how many times" is nearly always 1, which a blind model learns; the cited events are the others'
    # gestures of that kind, so the count of the asked person's among them (0) is checkable.
    done = {(e.actor, e.event_type) for e in gestures}
    for pid in people:
        kinds = sorted({kind for _, kind in done} - {kind for actor, kind in done if actor == pid}
                       - maybe_theirs[pid])
        if not kinds:
            continue
        rng = ctx.rng("G4.none", pid)
        kind = rng.choice(kinds)
        others = [e for e in gestures if e.event_type == kind]
        q = choose(rng, COUNT_QUESTIONS,
                   p=person(pid), verb=COUNT_VERBS[kind])
        distractors = _count_distractors(rng, 0)
        yield Candidate("G4", "G4.count", q, _times(0), distractors,
                        [f"{person(pid)} makes no {kind} gesture."]
                        + [event_sentence(e, ctx.step) for e in others][:3], others, [pid], (0.0, ctx.duration),
                        key=f"person={pid},kind={kind}")


def g5_chains(ctx: VideoContext) -> Iterator[Candidate]:
    gestures = [e for e in ctx.of_type(*GESTURE_TYPES) if e.actor is not None and e.target is not None]
    for pid in sorted({p for e in gestures for p in _named(e)}):
        if ctx.split_over_ids(pid, gestures):
            continue  # the gestures of pid's other id would be missing from "the gestures involving pid"
        chain = [e for e in gestures if pid in _named(e)]
        chain.sort(key=lambda e: e.start)
        distinct = []
        for e in chain:
            if all(gesture_clause(e) != gesture_clause(d) for d in distinct) and \
                    (not distinct or e.start - distinct[-1].start >= 1.0):
                distinct.append(e)
        if len(distinct) < 2:
            continue
        steps = distinct[:3]
        rng = ctx.rng("G5.chain", pid)
        clauses = [gesture_clause(e) for e in steps]
        correct = _sequence(clauses)
        orders = [_sequence(list(p)) for p in itertools.permutations(clauses) if list(p) != clauses]
        swapped = []
        for i, e in enumerate(steps):
            if e.target.kind == "person":
                c = Claim(e.event_type, actor=e.target.person_id, target=Target("person", e.actor))
                if not ctx.holds(c, 0.0, ctx.duration + 1):
                    swapped.append(_sequence(clauses[:i] + [c.text()] + clauses[i + 1:]))
        distractors = pick_distractors(rng, orders[:1] + swapped[:1], orders + swapped, correct)
        q = choose(rng, ["In what order do the gestures involving {p} happen?",
                         "Which sequence of gestures involving {p} takes place?"], p=person(pid))
        open_q = choose(rng, ["Describe the chain of gestures involving {p}.",
                              "What gestures involve {p}, and in what order?"], p=person(pid))
        span = (min(e.start for e in steps), max(e.end for e in steps))
        yield Candidate("G5", "G5.chain", q, correct, distractors,
                        [event_sentence(e, ctx.step) for e in steps]
                        + ([f"In all, {person(pid)} takes part in {len(steps)} gestures."] if len(chain) == len(steps) else []),
                        steps, sorted({p for e in steps for p in _named(e)}), span, open_question=open_q,
                        key=f"person={pid}")


def _sequence(clauses: list[str]) -> str:
    if len(clauses) == 2:
        return f"First {clauses[0]}, then {clauses[1]}"
    return f"First {clauses[0]}, then {clauses[1]}, then {clauses[2]}"


RECIPROCAL_OPTIONS = {"pointing": "points back at", "reaching": "reaches back toward", "showing": "shows something back to",
                      "giving": "hands something back to"}


def g6_reciprocal(ctx: VideoContext) -> Iterator[Candidate]:
    """A gestures at B and B gestures back: which gesture? Asked only when B does answer (the question
    says so), with the four gesture kinds as options: "no reply" would be the answer to most gestures and
    a prior a model learns without watching."""
    for e in ctx.of_type(*GESTURE_TYPES):
        if e.actor is None or e.target is None or e.target.kind not in ("person", "hands"):
            continue
        a_id, b_id = e.actor, e.target.person_id
        w = ctx.reciprocal_window
        replies = [o for o in ctx.of_type(*GESTURE_TYPES) if o.actor == b_id and o.target is not None
                   and o.target.person_id == a_id and e.start < o.start <= e.end + w]
        earlier = [o for o in ctx.of_type(*GESTURE_TYPES) if o.actor == b_id and o.target is not None
                   and o.target.person_id == a_id and o.overlaps(e.start - w, e.start + 1e-6)]
        if earlier or not replies:
            continue  # B was already gesturing at A ("back" is ambiguous), or B does not answer
        kinds = {o.event_type for o in replies}
        if len(kinds) > 1:
            continue
        rng = ctx.rng("G6.reciprocal", e.key)
        reply = min(replies, key=lambda o: o.start)
        options = {k: f"{person(b_id)} {RECIPROCAL_OPTIONS[k]} {person(a_id)}" for k in GESTURE_TYPES}
        correct = options[reply.event_type]
        distractors = [v for k, v in options.items() if k != reply.event_type]
        q = choose(rng, ["{a} {verb} {b} at {t} seconds, and {b} gestures back within {w} seconds. How?",
                         "After {a} {verb} {b} at {t} seconds, {b} answers with a gesture within {w} seconds. "
                         "Which one?"],
                   a=person(a_id), b=person(b_id), verb=GESTURE_VERBS[e.event_type], t=fmt_time(e.start, ctx.step),
                   w=fmt_time(w, ctx.step))
        yield Candidate("G6", "G6.reciprocal", q, correct, distractors,
                        [event_sentence(e, ctx.step), event_sentence(reply, ctx.step)], [e, reply],
                        sorted({a_id, b_id}), (e.start, min(ctx.duration, max(reply.end, e.end))),
                        norms=_norm(e), answer_class=reply.event_type)


GESTURE_FAMILIES = (g1_recognition, g2_type, g3_temporal, g4_frequency, g5_chains, g6_reciprocal)
