"""Cross-modal question families C1-C4 (DESIGN.md §6): how gaze and gesture line up in time and who
responds to whom."""
from __future__ import annotations

from typing import Iterator, Optional

from qa_gen.candidate import Candidate
from qa_gen.context import GESTURE_TYPES, Claim, VideoContext, claim_of
from qa_gen.events_view import Event, Target, people_of
from qa_gen.template_tools import NORMS, subset_options, subset_text
from qa_gen.wording import (GESTURE_GERUNDS, GESTURE_VERBS, choose, event_sentence, fmt_seconds, fmt_time,
                            gesture_clause, inner_window, person, persons_list, snap, target_phrase)

GAZE_TYPES = ("gaze_at", "mutual_gaze", "joint_attention", "gaze_following", "gaze_aversion", "sudden_gaze_shift",
              "attention_capture")


def _split_parents(ctx: VideoContext, e: Event) -> Optional[tuple[Event, Event]]:
    """(gaze event, gesture event) a cross event pairs, or None when its parents are not one of each."""
    parents = [ctx.by_id[p] for p in e.parents if p in ctx.by_id]
    gaze = [p for p in parents if p.source == "gaze"]
    gesture = [p for p in parents if p.source == "gesture"]
    if len(gaze) != 1 or len(gesture) != 1:
        return None
    return gaze[0], gesture[0]


def c1_alignment(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type("co_occur", "adjacent", "gaze_gesture_alignment", "gaze_follows_gesture"):
        pair = _split_parents(ctx, e)
        if pair is None:
            continue
        gaze, gesture = pair
        gaze_claim = claim_of(gaze)
        if gaze_claim is None or gesture.actor is None or gesture.target is None:
            continue
        if not (ctx.onset_seen(gaze) and ctx.onset_seen(gesture)):
            continue  # which began first is not in the video
        lead = gesture.start - gaze.start  # > 0: the gaze starts first
        if 0.25 <= abs(lead) < 1.0:
            continue  # too close to call at the sampling step
        rng = ctx.rng("C1.order", e.key)
        d = snap(abs(lead), ctx.step)
        wrong_d = d + max(1.0, snap(d, ctx.step))
        gaze_first = lambda x: f"The gaze, about {fmt_seconds(x, ctx.step)} earlier"
        gesture_first = lambda x: f"The gesture, about {fmt_seconds(x, ctx.step)} earlier"
        same = "Both start at the same moment"
        order = "same" if abs(lead) < 0.25 else "gaze" if lead > 0 else "gesture"
        if abs(lead) < 0.25:
            correct = same
            distractors = [gaze_first(1.5), gesture_first(1.5), rng.choice([gaze_first, gesture_first])(3.0)]
        elif lead > 0:
            correct = gaze_first(d)
            distractors = [gesture_first(d), same, gaze_first(wrong_d)]
        else:
            correct = gesture_first(d)
            distractors = [gaze_first(d), same, gesture_first(wrong_d)]
        q = choose(rng, ["Which starts first: {gz} or {gs}?",
                         "Which comes first, the gaze ({gz}) or the gesture ({gs})?"],
                   gz=gaze_claim.text(), gs=gesture_clause(gesture))
        facts = [event_sentence(gaze, ctx.step), event_sentence(gesture, ctx.step)]
        yield Candidate("C1", "C1.order", q, correct, distractors, facts, [e, gaze, gesture],
                        sorted(people_of(gaze) | people_of(gesture)),
                        (min(gaze.start, gesture.start), max(gaze.end, gesture.end)), answer_class=order)


def c2_eye_contact(ctx: VideoContext) -> Iterator[Candidate]:
    """While X gestures, who makes eye contact with X. Asked only when someone does, and each eye contact
    either covers a sampling step of the gesture or does not touch it (a graze would make the answer
    uncertain). "When" and "nobody" forms are not asked: their answer was nearly always "not within the
    window" / "nobody", a prior learnt without watching, resting on missing detections."""
    for g in ctx.of_type(*GESTURE_TYPES):
        if g.actor is None or g.target is None:
            continue
        x = g.actor
        a, b = inner_window(g.start, g.end, ctx.step)
        sa, sb = fmt_time(a, ctx.step), fmt_time(b, ctx.step)
        clause = f"{person(x)} is {GESTURE_GERUNDS[g.event_type]} {target_phrase(g.target, x)}"
        others = ctx.presence.present_in(a, b, exclude=[x])
        touching = [m for m in ctx.overlapping(a, b, ("mutual_gaze",)) if x in m.persons]
        contacts = [m for m in touching if ctx.inside(m, a, b)]
        if len(contacts) != len(touching) or not contacts:
            continue
        truth = sorted({p for m in contacts for p in m.persons} - {x})
        # the options name who does and who does not: only people seen apart from X are said not to
        others = [p for p in others if p in truth or ctx.seen_apart(x, p, a, b)]
        rng = ctx.rng("C2.who", g.key)
        wrong = subset_options(others, truth, rng)
        if wrong is None or len(truth) > 2:
            continue
        q = choose(rng, ["While {c} ({a} to {b} seconds), who makes eye contact with {x}?",
                         "From {a} to {b} seconds {c}. Who holds eye contact with {x} meanwhile?"],
                   c=clause, a=sa, b=sb, x=person(x))
        facts = [event_sentence(g, ctx.step, (a, b))] + [event_sentence(m, ctx.step, (a, b)) for m in contacts][:2]
        yield Candidate("C2", "C2.who", q, subset_text(truth, others), wrong, facts, [g] + contacts,
                        sorted({x} | set(truth) | ({g.target.person_id} - {-1})), (a, b),
                        norms=[(NORMS["mutual_gaze"], m.event_id) for m in contacts[:1]],
                        answer_class=str(len(truth)))


def c3_gaze_response(ctx: VideoContext) -> Iterator[Candidate]:
    w = ctx.response_window
    for g in ctx.of_type(*GESTURE_TYPES):
        if g.actor is None or g.target is None:
            continue
        x, tgt = g.actor, g.target
        if ctx.shot_span(g.start)[1] < min(ctx.duration, g.start + w) - 1e-6:
            continue  # a cut comes within the response window: what follows it is another view
        lo, hi = g.start, min(ctx.shot_span(g.start)[1], g.end + w)
        others = ctx.presence.present_in(lo, hi, exclude=[x, tgt.person_id])
        if not others:
            continue
        responders: dict[int, Event] = {}
        ambiguous = False
        for p in others:
            if tgt.key in ctx.looked_at(p, g.start - w, g.start - 1e-6):
                ambiguous = True  # already looking there: no response can be read off
                break
            # p's own looks at the target (gaze_at), or the events stage's own pairing of this gesture
            # with p's look (gaze_follows_gesture, p as the follower)
            looks = [o for o in ctx.of_type("gaze_at", "gaze_follows_gesture")
                     if o.target is not None and o.target.key == tgt.key and g.start <= _onset(o) <= min(g.start + w, hi)
                     and ((o.event_type == "gaze_at" and o.actor == p)
                          or (o.event_type == "gaze_follows_gesture" and o.follower == p and g.event_id in o.parents))]
            if looks:
                responders[p] = min(looks, key=_onset)
        if ambiguous:
            continue
        rng = ctx.rng("C3.response", g.key)
        sa = fmt_time(g.start, ctx.step)
        ws = fmt_time(w, ctx.step)
        facts = [event_sentence(g, ctx.step)]
        for p, o in sorted(responders.items()):
            delay = snap(_onset(o) - g.start, ctx.step)
            when = "as the gesture begins" if delay < ctx.step else \
                f"{fmt_time(delay, ctx.step)} seconds after the gesture begins"
            facts.append(f"{person(p)} looks at {target_phrase(tgt)} at {fmt_time(_onset(o), ctx.step)} seconds, {when}.")
        # "does not look at it" must be seen, not inferred from a missing event: the item names only the
        # responders and those seen looking away from the target throughout the window
        others = [p for p in others if p in responders or ctx.seen_looking_away([p], tgt, g.start, hi)]
        if not others:
            continue
        quiet = [p for p in others if p not in responders]
        if quiet:
            facts.append(f"{persons_list(quiet)} {'does' if len(quiet) == 1 else 'do'} not look at "
                         f"{target_phrase(tgt)} within {ws} seconds.")
        facts = facts[:4]
        cited = [g] + [responders[p] for p in sorted(responders)]
        open_q = choose(rng, ["How does the group's gaze change after {x} {v} {t} at {a} seconds?",
                              "After {x} {v} {t} at {a} seconds, how do the others respond with their gaze?"],
                        x=person(x), v=GESTURE_VERBS[g.event_type], t=target_phrase(tgt), a=sa)
        norm = [(NORMS[g.event_type], g.event_id)] if g.event_type in NORMS else []
        truth = sorted(responders)
        wrong = subset_options(others, truth, rng) if truth else None
        if wrong is not None:
            q = choose(rng, ["After {x} {v} {t} at {a} seconds, who looks at {t} within {w} seconds?",
                             "{x} {v} {t} at {a} seconds. Who turns their gaze to {t} in the next {w} seconds?"],
                       x=person(x), v=GESTURE_VERBS[g.event_type], t=target_phrase(tgt), a=sa, w=ws)
            correct, distractors = subset_text(truth, others), wrong
        else:  # open-ended only: a multiple-choice form would be keyed "nobody" or have too few options
            correct, distractors, q = facts[0], [], open_q
        yield Candidate("C3", "C3.response", q, correct, distractors, facts, cited,
                        sorted({x} | set(others) | ({tgt.person_id} - {-1})), (g.start, hi),
                        open_question=open_q, norms=norm, answer_class=str(len(responders)))


def _onset(look: Event) -> float:
    """When a look begins: a gaze_at's start; for gaze_follows_gesture (whose interval starts with the
    gesture) the gesture's start plus the recorded lag."""
    if look.event_type == "gaze_follows_gesture" and look.lag is not None:
        return look.start + look.lag
    return look.start


def c4_person_dynamics(ctx: VideoContext) -> Iterator[Candidate]:
    """One true statement about Person X's gaze and one about their gestures, joined. The false options
    cross the true parts with one false part of the same kind each ((G, S'), (G', S), (G', S')), so every
    part appears in exactly two options and the true option is not the one sharing most with the others."""
    span = (0.0, ctx.duration + 1.0)
    gaze_types = ("mutual_gaze", "gaze_following", "gaze_aversion", "joint_attention")
    gaze_events, gesture_events = ctx.of_type(*gaze_types), ctx.of_type(*GESTURE_TYPES)
    for x in ctx.presence.persons:
        if ctx.split_over_ids(x, gaze_events + gesture_events):
            continue  # a role over the whole clip ("in all, X makes N gestures") of one id of a split person
        gaze = [e for e in gaze_events if x in _members(e) and claim_of(e) is not None]
        gest = [e for e in gesture_events if x in people_of(e) and e.actor is not None and e.target]
        if not gaze or not gest:
            continue
        rng = ctx.rng("C4.role", x)
        g1, s1 = rng.choice(gaze), rng.choice(gest)
        gaze_claim, gest_claim = claim_of(g1), claim_of(s1)
        present = ctx.presence.persons
        false_gaze = [c for c in _same_kind_alternatives(ctx, gaze_claim, x, present) if not ctx.holds(c, *span)]
        false_gest = [c for c in _same_kind_alternatives(ctx, gest_claim, x, present) if not ctx.holds(c, *span)]
        if not false_gaze or not false_gest:
            continue
        # the false part closest in length to the true one, so the longest option is not a tell
        g2 = min(false_gaze, key=lambda c: (abs(len(c.text()) - len(gaze_claim.text())), rng.random()))
        s2 = min(false_gest, key=lambda c: (abs(len(c.text()) - len(gest_claim.text())), rng.random()))
        joined = lambda g, s: _capital(f"{g.text()}, and {s.text()}")
        correct = joined(gaze_claim, gest_claim)
        distractors = [joined(gaze_claim, s2), joined(g2, gest_claim), joined(g2, s2)]
        led = [e for e in ctx.of_type("gaze_following") if e.leader == x]
        followed = [e for e in ctx.of_type("gaze_following") if e.follower == x]
        made = [e for e in ctx.of_type(*GESTURE_TYPES) if e.actor == x]
        received = [e for e in ctx.of_type(*GESTURE_TYPES) if e.actor != x and e.target and e.target.person_id == x]
        facts = [event_sentence(g1, ctx.step), event_sentence(s1, ctx.step),
                 f"In all {person(x)} makes {_count(len(made), 'gesture')} and receives "
                 f"{_count(len(received), 'gesture')} from others."]
        if led or followed:
            facts.append(f"Others follow {person(x)}'s gaze {_count(len(led), 'time')}, and {person(x)} "
                         f"follows someone else's gaze {_count(len(followed), 'time')}.")
        q = choose(rng, ["Which statement about {x}'s part in the interaction is true?",
                         "Across gaze and gestures, which of these describes {x}?"], x=person(x))
        open_q = choose(rng, ["Describe {x}'s role across gaze and gesture in the clip.",
                              "What part does {x} play in the interaction, in gaze and in gestures?"], x=person(x))
        cited = sorted({g1, s1} | set(led) | set(followed) | set(made) | set(received), key=lambda e: e.start)
        yield Candidate("C4", "C4.role", q, correct, distractors, facts, cited,
                        sorted({x} | people_of(g1) | people_of(s1)), (0.0, ctx.duration), open_question=open_q,
                        key=f"person={x}", answer_class=g1.event_type)


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


def _members(e: Event) -> set[int]:
    """The people who act in a gaze event (not the person looked at)."""
    if e.event_type == "gaze_following":
        return {e.leader, e.follower} - {None}
    return set(e.persons)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _same_kind_alternatives(ctx: VideoContext, claim: Claim, x: int, present: list[int]) -> list[Claim]:
    """Claims of the same kind as ``claim`` that still name ``x``, with one role or the target changed
    (to be checked false by the caller)."""
    k = claim.kind
    out: list[Claim] = []
    others = [p for p in present if p != x]
    if k in GESTURE_TYPES:
        if claim.target is not None and claim.target.person_id >= 0 and claim.actor == x:
            out.append(Claim(k, actor=claim.target.person_id, target=Target("person", x)))
        targets = {Target("person", p) for p in present} | set(ctx.object_targets)
        for t in sorted(targets):
            if claim.target is None or t.key != claim.target.key:
                if claim.actor == x and t.person_id != x:
                    out.append(Claim(k, actor=x, target=t))
                elif claim.actor != x and t.person_id != claim.actor and t.person_id >= 0:
                    out.append(Claim(k, actor=claim.actor, target=Target("person", x)) if t.person_id == x
                               else Claim(k, actor=t.person_id, target=Target("person", x)))
    elif k in ("gaze_following", "gaze_aversion"):
        out.append(Claim(k, actor=claim.other, other=claim.actor, target=claim.target))
        partner = claim.other if claim.actor == x else claim.actor
        for p in others:
            if p != partner:
                out.append(Claim(k, actor=x if claim.actor == x else p, other=p if claim.actor == x else x,
                                 target=claim.target))
    elif k == "mutual_gaze":
        out += [Claim(k, group=frozenset({x, p})) for p in others if p not in claim.group]
    elif k == "joint_attention":
        for t in sorted({Target("person", p) for p in present} | set(ctx.object_targets)):
            if claim.target is not None and t.key != claim.target.key and t.person_id not in claim.group:
                out.append(Claim(k, group=claim.group, target=t))
        for p in others:
            if p not in claim.group and (claim.target is None or p != claim.target.person_id):
                partner = sorted(claim.group - {x})
                if partner:
                    out.append(Claim(k, group=frozenset(claim.group - {partner[0]}) | {p}, target=claim.target))
    return [c for c in out if c != claim]


CROSS_FAMILIES = (c1_alignment, c2_eye_contact, c3_gaze_response, c4_person_dynamics)
