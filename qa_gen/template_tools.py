"""Helpers shared by the template families: wrong-but-near durations, person subsets, "which first"."""
from __future__ import annotations

import itertools
import random
from typing import Optional, Sequence

from qa_gen.wording import fmt_seconds, person, persons_list, snap

NORMS = {
    "mutual_gaze": "Sustained eye contact is how two people signal mutual engagement.",
    "gaze_following": "People look where a partner looks, so a shared gaze target passes from one person to another.",
    "joint_attention": "Looking at the same thing together is the basis of shared attention.",
    "attention_capture": "A sudden event in the scene draws everyone's eyes at once.",
    "gaze_aversion": "Looking away from a partner's gaze ends the eye contact.",
    "pointing": "Pointing directs the attention of others toward its target.",
    "giving": "Holding an object out to someone invites them to take it.",
    "showing": "Holding an object up to someone invites them to look at it.",
    "reaching": "Reaching toward something signals the intent to touch or take it.",
}


def near_durations(d: float, step: float, rng: random.Random, minimum: float,
                   maximum: float) -> Optional[list[str]]:
    """Three wrong durations near ``d`` within [minimum, maximum] (the clip's length: a longer one is
    ruled out without watching). They are a quarter of ``d`` (at least one second) away from it and
    from each other, or half a second when the clip is too short for that, so none is also right within
    measurement error. The correct value's rank among the four is random, so neither the longest nor the
    middle value gives it away. None when three such values do not fit."""
    d = snap(d, step)
    for delta in (max(1.0, snap(0.25 * d, step)), 1.0, step):
        values = [d + k * delta for k in range(-3, 4) if k != 0 and minimum <= d + k * delta <= maximum + 1e-9]
        if len(values) < 3:
            continue
        below = [v for v in values if v < d]
        above = [v for v in values if v > d]
        n_below = rng.randint(max(0, 3 - len(above)), min(3, len(below)))
        chosen = sorted(below, reverse=True)[:n_below] + sorted(above)[: 3 - n_below]
        texts = [fmt_seconds(v, step) for v in chosen]
        if len(set(texts) | {fmt_seconds(d, step)}) == 4:
            return texts
    return None


def subset_text(people: Sequence[int], candidates: Sequence[int]) -> str:
    """A subset of ``candidates`` named together with who is left out ('Person 1, not Person 2',
    'Both Person 1 and Person 2', 'Neither Person 1 nor Person 2'), so every option of a question has
    about the same length and "nobody" is not the odd one out."""
    inside = sorted(set(people))
    outside = sorted(set(candidates) - set(inside))
    if not inside:
        if len(outside) == 1:
            return f"Not {persons_list(outside)}"
        if len(outside) == 2:
            return f"Neither {person(outside[0])} nor {person(outside[1])}"
        return f"None of {persons_list(outside)}"
    if not outside:
        if len(inside) == 1:
            return persons_list(inside)
        return ("Both " if len(inside) == 2 else "All of ") + persons_list(inside)
    left_out = persons_list(outside).replace(" and ", " or ")
    return f"{persons_list(inside)}, not {left_out}"


def subset_options(candidates: Sequence[int], truth: Sequence[int], rng: random.Random) -> Optional[list[str]]:
    """Three false non-empty person subsets (size <= 2) of ``candidates``, the same size as the truth
    first; None when fewer exist (two candidates). Callers ask only when someone did it (an absence of
    detections is the weakest evidence), so "nobody" would never be the answer and is not offered."""
    truth_key = tuple(sorted(truth))
    subsets = [tuple(sorted(c)) for r in (1, 2) for c in itertools.combinations(candidates, r)]
    false = [s for s in subsets if s != truth_key]
    rng.shuffle(false)
    false.sort(key=lambda s: len(s) != len(truth_key))  # same size as the truth first: size is no tell
    if len(false) < 3:
        return None
    return [subset_text(s, candidates) for s in false[:3]]


def first_of(occurrences: dict[str, float], min_gap: float) -> Optional[str]:
    """The description whose first occurrence leads every other by at least ``min_gap`` seconds."""
    if len(occurrences) < 2:
        return None
    ordered = sorted(occurrences.items(), key=lambda kv: kv[1])
    if ordered[1][1] - ordered[0][1] < min_gap:
        return None
    return ordered[0][0]
