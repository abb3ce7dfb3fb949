"""Gaze question families T1-T6 (DESIGN.md §6). Each family yields Candidates whose correct option is
read off the cited events and whose distractors are checked false against every event of the video."""
from __future__ import annotations

import itertools
from typing import Iterator, Optional

from qa_gen.candidate import Candidate, pick_distractors
from qa_gen.context import Claim, VideoContext, claim_of, contradicts
from qa_gen.events_view import Target, people_of
from qa_gen.template_tools import NORMS, near_durations
from qa_gen.wording import (GAZE_TYPE_PHRASES, choose, event_sentence, fmt_seconds, fmt_time, inner_window,
                            instant_of, person, persons_list, target_phrase)


def _window(ctx: VideoContext, e) -> tuple[float, float, str, str]:
    a, b = inner_window(e.start, e.end, ctx.step)
    return a, b, fmt_time(a, ctx.step), fmt_time(b, ctx.step)


def _target_pool(ctx: VideoContext, a: float, b: float, viewer: int) -> list[Target]:
    """False options for where ``viewer`` looks during [a, b], drawn from what could be true in this
    clip: the faces and hands of the people present and every target someone looks at in the clip (so
    "the camera" or "their own hands" is offered only where someone does look there, and no option is
    one that is never an answer)."""
    present = ctx.presence.present_in(a, b, exclude=[viewer])
    pool = {Target("person", p) for p in present} | {Target("hands", p) for p in present}
    for e in ctx.of_type("gaze_at"):
        t = e.target
        if t is None or t.kind == "location":
            continue
        if t.kind == "hands" and t.person_id == e.actor:
            t = Target("hands", viewer)  # someone looks at their own hands: so could the viewer
        elif t.kind == "hands" and t.person_id == viewer:
            continue  # another person looks at the viewer's hands: not a look at one's own hands
        if t.person_id >= 0 and t.person_id not in present and not (t.kind == "hands" and t.person_id == viewer):
            continue
        if t.kind == "person" and t.person_id == viewer:
            continue
        pool.add(t)
    return sorted(pool)


def target_class(target: Optional[Target], viewer: Optional[int]) -> str:
    """The answer class of a target option: face, hands, own hands, object, camera."""
    if target is None:
        return "elsewhere"
    if target.kind == "hands" and target.person_id == viewer:
        return "own hands"
    return target.kind


def t1_gaze_target(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type("gaze_at"):
        if e.target is None or e.actor is None or e.duration < ctx.step:
            continue
        a, b, sa, sb = _window(ctx, e)
        rng = ctx.rng("T1.target", e.key)
        seen = ctx.looked_at(e.actor, a, b)
        correct = target_phrase(e.target, e.actor)
        # one false option of each kind (face, hands, own hands, object, camera) before a second of any
        # kind, the key's own kind included: otherwise, where several people are present, the key is the
        # one option of its kind among three of another ("Person 2" among three people's hands) and a
        # model picks it without watching
        by_kind: dict[str, list[str]] = {}
        named = sorted({e.actor} | ({e.target.person_id} if e.target.person_id >= 0 else set()))
        for t in _target_pool(ctx, a, b, e.actor):
            # an option the look is measured near all along is no false option (a look between the lens and a
            # face, read "camera" on some samples and "Person 0" on others), nor one that may be the viewer or
            # the one looked at under another id (candidates_of)
            if t.key not in seen and not ctx.may_be_on(e.actor, t, a, b) and not (
                    t.person_id >= 0 and t.person_id not in named and ctx.may_be_one_of(t.person_id, named)):
                by_kind.setdefault(target_class(t, e.actor), []).append(target_phrase(t, e.actor))
        by_kind = {k: [p for p in v if p != correct] for k, v in by_kind.items()}
        kinds = sorted(k for k, v in by_kind.items() if v)
        rng.shuffle(kinds)
        firsts = [rng.choice(by_kind[k]) for k in kinds]
        distractors = pick_distractors(rng, firsts, [p for v in by_kind.values() for p in v], correct)
        if len(distractors) < 3:  # few people: one's own hands and the camera are always there to look at
            fillers = [target_phrase(t, e.actor) for t in (Target("hands", e.actor), Target("camera"))
                       if t.key not in seen and not ctx.may_be_on(e.actor, t, a, b)]
            distractors += pick_distractors(rng, fillers, [], correct, 3 - len(distractors))
            distractors = list(dict.fromkeys(distractors))
        q = choose(rng, ["Who or what is {p} looking at between {a} and {b} seconds?",
                         "Between {a} and {b} seconds, what does {p} look at?",
                         "Where is {p}'s gaze directed from {a} to {b} seconds?"],
                   p=person(e.actor), a=sa, b=sb)
        yield Candidate("T1", "T1.target", q, correct, distractors,
                        [event_sentence(e, ctx.step),
                         f"That is {fmt_seconds(e.duration, ctx.step)} of looking at {correct}, the whole "
                         f"interval from {sa} to {sb} seconds."], [e], named, (a, b),
                        answer_class=target_class(e.target, e.actor))

    for e in ctx.of_type("gaze_at"):
        if e.target is None or e.actor is None or e.duration < ctx.step:
            continue
        a, b, sa, sb = _window(ctx, e)
        others = ctx.presence.present_in(a, b, exclude=[e.actor, e.target.person_id])
        lookers = [p for p in others if e.target.key in ctx.looked_at(p, a, b)]
        if lookers or len(others) < 3:
            continue  # several people look at it (no single answer), or too few people for real options
        if not ctx.seen_looking_away(others, e.target, a, b):
            continue  # someone else may look at it too, unrecorded: "the one" is not verified
        rng = ctx.rng("T1.who", e.key)
        correct = person(e.actor)
        distractors = pick_distractors(rng, [], [person(p) for p in others], correct)
        q = choose(rng, ["Who is looking at {t} between {a} and {b} seconds?",
                         "From {a} to {b} seconds, who looks at {t}?"],
                   t=target_phrase(e.target), a=sa, b=sb)
        named = sorted({e.actor} | ({e.target.person_id} if e.target.person_id >= 0 else set()))
        yield Candidate("T1", "T1.who", q, correct, distractors,
                        [f"{correct} is the one looking at {target_phrase(e.target)} between {sa} and {sb} seconds.",
                         event_sentence(e, ctx.step)], [e], named, (a, b))


T2_TYPES = ("mutual_gaze", "joint_attention", "gaze_following", "gaze_aversion")  # what a pair can do


def _pair_of(e) -> Optional[list[int]]:
    """The two people of a pair gaze event (leader and follower for following), else None."""
    if e.event_type == "gaze_following":
        people = {e.leader, e.follower} - {None}
    else:
        people = set(e.persons)
    return sorted(people) if len(people) == 2 else None


def _also_fits(ctx: VideoContext, o, e, people: list[int], a: float, b: float) -> bool:
    """Does event ``o`` give a second description of what ``people`` do in [a, b]? The shared attention
    that a gaze following ends in (same pair and target, from the follower's turn) does not: it is the
    following's result, not another interaction."""
    if o.event_type == e.event_type or not set(people) & people_of(o) or not ctx.inside(o, a, b):
        return False
    if (e.event_type == "gaze_following" and o.event_type == "joint_attention" and set(people) <= set(o.persons)
            and o.target is not None and e.target is not None and o.target.key == e.target.key
            and o.start >= e.end - ctx.step - 1e-6):
        return False
    return True


def t2_gaze_event_type(ctx: VideoContext) -> Iterator[Candidate]:
    """Asked of pairs only, with the four pair interactions as options: a single person's gaze has one
    possible kind (a sudden shift) and a group of three has others, so the number of people named would
    give the answer away."""
    for e in ctx.of_type(*T2_TYPES):
        people = _pair_of(e)
        if people is None:
            continue
        a, b, sa, sb = _window(ctx, e)
        if any(_also_fits(ctx, o, e, people, a, b) for o in ctx.overlapping(a, b, T2_TYPES) if o is not e):
            continue  # another interaction of these people in the window: two descriptions would fit
        rng = ctx.rng("T2.type", e.key)
        correct = GAZE_TYPE_PHRASES[e.event_type]
        distractors = [GAZE_TYPE_PHRASES[t] for t in T2_TYPES if t != e.event_type]
        q = choose(rng, ["Which gaze interaction takes place between {ps} from {a} to {b} seconds?",
                         "From {a} to {b} seconds, what best describes the way {ps} look?",
                         "What kind of gaze behaviour do {ps} show between {a} and {b} seconds?"],
                   ps=persons_list(people), a=sa, b=sb)
        norm = [(NORMS[e.event_type], e.event_id)] if e.event_type in NORMS else []
        yield Candidate("T2", "T2.type", q, correct, distractors,
                        [event_sentence(e, ctx.step),
                         f"This is an instance of {correct.lower()}."], [e], people, (a, b), norms=norm,
                        answer_class=e.event_type)


def t3_temporal(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type("mutual_gaze"):
        if len(e.persons) != 2 or e.duration < 1.0 or not ctx.seen_whole(e):
            continue
        rng = ctx.rng("T3.duration", e.key)
        same_pair = [o for o in ctx.of_type("mutual_gaze") if o is not e and set(o.persons) == set(e.persons)
                     and abs(o.start - e.start) < 2.0]
        wrong = near_durations(e.duration, ctx.step, rng, minimum=ctx.step, maximum=ctx.duration)
        if same_pair or wrong is None:
            continue
        sa = fmt_time(e.start, ctx.step)
        q = choose(rng, ["How long do {ps} keep eye contact, starting at {a} seconds?",
                         "{ps} make eye contact at {a} seconds. For how long do they hold it?"],
                   ps=persons_list(e.persons), a=sa)
        correct = fmt_seconds(e.duration, ctx.step)
        yield Candidate("T3", "T3.duration", q, correct, wrong,
                        [event_sentence(e, ctx.step), f"The eye contact lasts {correct}."],
                        [e], sorted(e.persons), (e.start, e.end), norms=[(NORMS["mutual_gaze"], e.event_id)])

    # "Which of a pair's gaze events comes first" is not asked: whatever the options, one kind was nearly
    # always the answer (eye contact on real clips, two people happening to look at the same thing on
    # synthetic ones), and breaking off eye contact can never be first, so the question taught a prior.


def t4_mutual_gaze(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type("mutual_gaze"):
        if len(e.persons) != 2:
            continue
        a, b, sa, sb = _window(ctx, e)
        rng = ctx.rng("T4.pair", e.key)
        present = ctx.presence.present_in(a, b)
        true_pairs = {frozenset(o.persons) for o in ctx.overlapping(a, b, ("mutual_gaze",))}
        if len(true_pairs) > 1:
            continue
        # a pair is a false option only when one of them is seen looking away from the other: where neither
        # look is read, they may be in eye contact unrecorded, and the question would have two answers
        false_pairs = [persons_list(p) for p in itertools.combinations(present, 2)
                       if frozenset(p) not in true_pairs and not ctx.face_to_face(*p, a, b)
                       and ctx.seen_apart(*p, a, b)]
        correct = persons_list(e.persons)
        distractors = pick_distractors(rng, [], false_pairs, correct)  # pairs only: a "nobody" is never right
        q = choose(rng, ["Which two people make eye contact between {a} and {b} seconds?",
                         "Between {a} and {b} seconds, who holds eye contact with whom?"], a=sa, b=sb)
        yield Candidate("T4", "T4.pair", q, correct, distractors,
                        [event_sentence(e, ctx.step), f"No other pair makes eye contact in that interval."],
                        [e], sorted(set(e.persons)), (a, b), norms=[(NORMS["mutual_gaze"], e.event_id)])

    for e in ctx.of_type("mutual_gaze"):
        if len(e.persons) != 2:
            continue
        a, b, sa, sb = _window(ctx, e)
        length = b - a
        rng = ctx.rng("T4.when", e.key)
        pair_gaze = [o for o in ctx.of_type("mutual_gaze") if set(o.persons) == set(e.persons)]
        starts = []
        k = 0.0
        while k + length <= ctx.duration + 1e-9:
            clear = all(not o.overlaps(k - 0.5, k + length + 0.5) for o in pair_gaze)
            clear = clear and not ctx.face_to_face(*e.persons, k, k + length)
            clear = clear and ctx.seen_apart(*e.persons, k, k + length)  # "not making eye contact" seen
            if clear and all(ctx.presence.present(p, k, k + length) for p in e.persons):
                starts.append(k)
            k += ctx.step
        rng.shuffle(starts)
        picked: list[float] = []
        for k in starts:  # windows that do not overlap each other, so no two options are near-duplicates
            if len(picked) < 3 and all(abs(k - j) >= length for j in picked):
                picked.append(k)
        wrong = [f"Between {fmt_time(k, ctx.step)} and {fmt_time(k + length, ctx.step)} seconds" for k in sorted(picked)]
        correct = f"Between {sa} and {sb} seconds"
        distractors = wrong
        q = choose(rng, ["When do {ps} make eye contact?", "At what time do {ps} look each other in the eye?"],
                   ps=persons_list(e.persons))
        yield Candidate("T4", "T4.when", q, correct, distractors,
                        [event_sentence(e, ctx.step),
                         "At the other times listed they are not making eye contact."],
                        pair_gaze, sorted(set(e.persons)), (0.0, max(b, ctx.duration)), key=f"anchor={e.key}")


def t5_following(ctx: VideoContext) -> Iterator[Candidate]:
    for e in ctx.of_type("gaze_following"):
        if e.leader is None or e.follower is None or e.target is None:
            continue
        a, b = inner_window(e.start, e.end, ctx.step)
        sa, sb = fmt_time(a, ctx.step), fmt_time(b, ctx.step)
        lead, follow, tgt = e.leader, e.follower, target_phrase(e.target)
        if e.target.person_id in (lead, follow):
            continue  # "who looks first at Person 0's hands" answered by Person 0 is not following anyone
        norm = [(NORMS["gaze_following"], e.event_id)]
        facts = [event_sentence(e, ctx.step),
                 f"{person(lead)} looks at {tgt} first and {person(follow)} turns to it afterwards."]
        # who looks first
        rng = ctx.rng("T5.first", e.key)
        bystanders = ctx.presence.present_in(a, b, exclude=[lead, follow, e.target.person_id])
        others = [p for p in bystanders if e.target.key not in ctx.looked_at(p, a - ctx.response_window, b)]
        correct = person(lead)
        distractors = pick_distractors(rng, [person(follow)], [person(p) for p in others], correct)
        # "first" holds only if no bystander looked at it unrecorded: each is seen looking away (as T1 "who")
        if len(distractors) == 3 and ctx.seen_looking_away(bystanders, e.target, a, b):
            # only people as options: a filler ("nobody") would never be the answer
            q = choose(rng, ["Who looks at {t} first, between {a} and {b} seconds?",
                             "Between {a} and {b} seconds, who is the first to look at {t}?"], t=tgt, a=sa, b=sb)
            yield Candidate("T5", "T5.first", q, correct, distractors, facts, [e], sorted({lead, follow}), (a, b),
                            norms=norm)
        # who leads whose gaze
        rng = ctx.rng("T5.leads", e.key)
        pool = []
        for x, y in itertools.permutations(ctx.presence.present_in(a, b), 2):
            if (x, y) != (lead, follow) and not ctx.holds(Claim("gaze_following", actor=x, other=y), a, b):
                pool.append(f"{person(x)} leads {person(y)}'s gaze")
        correct = f"{person(lead)} leads {person(follow)}'s gaze"
        swapped = f"{person(follow)} leads {person(lead)}'s gaze"
        preferred = [swapped] if swapped in pool else []
        distractors = pick_distractors(rng, preferred, pool, correct)
        if len(distractors) < 3:
            distractors += pick_distractors(rng, [f"Neither, they look at {tgt} at the same moment"], [],
                                            correct, 3 - len(distractors))
        q = choose(rng, ["Between {a} and {b} seconds, whose gaze leads whose?",
                         "Who leads whom in where they look between {a} and {b} seconds?"], a=sa, b=sb)
        yield Candidate("T5", "T5.leads", q, correct, distractors, facts, [e], sorted({lead, follow}), (a, b),
                        norms=norm)


GROUP_TYPES = ("attention_capture", "joint_attention", "gaze_following", "mutual_gaze", "gaze_aversion")


def t6_group_attention(ctx: VideoContext) -> Iterator[Candidate]:
    """The group's attention over one window. The open answer tells only what happens inside the window
    (states cut to it), in time order, and leaves out any event that contradicts one already told (one
    person looking at two things at once, eye contact told together with its breaking off)."""
    for e in ctx.of_type("attention_capture", "joint_attention", "gaze_following"):
        if e.event_type == "joint_attention" and len(e.persons) < 2:
            continue
        claim = claim_of(e)
        if claim is None:
            continue
        a, b = inner_window(e.start, e.end, ctx.step)
        sa, sb = fmt_time(a, ctx.step), fmt_time(b, ctx.step)
        rng = ctx.rng("T6.group", e.key)
        related = sorted((o for o in ctx.overlapping(a, b, GROUP_TYPES)
                          if o is not e and ctx.trusted(o) and ctx.inside(o, a, b)),
                         key=lambda o: (o.start, o.event_id))
        cited = [e]
        for o in related:
            if len(cited) < 3 and not any(contradicts(o, c, ctx.step) for c in cited):
                cited.append(o)
        present = ctx.presence.present_in(a, b)
        active = set().union(*(people_of(o) for o in [e] + related))
        idle = [p for p in present if p not in active]
        # "takes no part" is a claim about where someone looks: only of those seen looking away from the
        # target all the while (a teacher whose eyes cannot be read may be watching the same child)
        away = [p for p in idle if e.target is not None and ctx.seen_looking_away([p], e.target, a, b)]
        told = sorted(cited, key=lambda o: (instant_of(o) if instant_of(o) is not None else max(o.start, a), o.event_id))
        sentences = [event_sentence(o, ctx.step, (a, b)) for o in told]
        if away:
            sentences.append(f"{persons_list(away)} take{'s' if len(away) == 1 else ''} no part in it.")
        elif not idle and len(sentences) < 2:
            sentences.append(f"Everyone present ({persons_list(present)}) takes part.")
        correct = claim.text()
        group = frozenset(e.persons) if e.event_type != "gaze_following" else frozenset({e.leader, e.follower})
        # false options of the same kind as the truth, with one fact changed (target, a member, or who
        # leads), so the kind of statement does not give the answer away
        swapped = []
        others_targets = [t for t in [Target("person", p) for p in present] + ctx.object_targets
                          if e.target is not None and t.key != e.target.key and t.person_id not in group]
        for t in others_targets:
            c = Claim(claim.kind, actor=claim.actor, other=claim.other, group=claim.group, target=t)
            if not ctx.holds(c, a, b):
                swapped.append(c.text())
        for out_p, in_p in itertools.product(sorted(group), [p for p in present if p not in group]):
            if claim.kind in ("joint_attention", "attention_capture"):
                c = Claim(claim.kind, group=(group - {out_p}) | {in_p}, target=claim.target)
            else:
                c = Claim(claim.kind, actor=claim.actor if out_p != claim.actor else in_p,
                          other=claim.other if out_p != claim.other else in_p, target=claim.target)
            if not ctx.holds(c, a, b):
                swapped.append(c.text())
        if e.event_type == "gaze_following":
            c = Claim("gaze_following", actor=e.follower, other=e.leader, target=e.target)
            if not ctx.holds(c, a, b):
                swapped.append(c.text())
        distractors = pick_distractors(rng, [], swapped, correct)
        q = choose(rng, ["Which statement describes the group's attention between {a} and {b} seconds?",
                         "Between {a} and {b} seconds, what happens to where the group is looking?"], a=sa, b=sb)
        open_q = choose(rng, ["Describe the group's attention pattern between {a} and {b} seconds.",
                              "How does the group's attention develop between {a} and {b} seconds?"], a=sa, b=sb)
        norm = [(NORMS[e.event_type], e.event_id)] if e.event_type in NORMS else []
        yield Candidate("T6", "T6.group", q, correct, distractors, sentences[:4], cited,
                        sorted(set().union(*(people_of(o) for o in cited)) | set(away)), (a, b),
                        open_question=open_q, norms=norm, key=f"anchor={e.key}", answer_class=e.event_type)


GAZE_FAMILIES = (t1_gaze_target, t2_gaze_event_type, t3_temporal, t4_mutual_gaze, t5_following, t6_group_attention)
