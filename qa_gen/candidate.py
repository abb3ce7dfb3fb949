"""A question before it is formatted: the correct answer, false options, and the evidence it rests on."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from qa_gen.events_view import Event


@dataclass
class Candidate:
    category: str
    template: str  # the question form, e.g. "T1.target"; part of the qa_id
    question: str  # multiple-choice wording
    correct: str  # the correct option text
    distractors: list[str]  # false options, best first; three are used
    explanation: list[str]  # 2-4 factual sentences: the open-ended answer
    events: list[Event]  # the events the answer follows from
    persons: list[int]  # every person the item names
    time_range: tuple[float, float]
    open_question: Optional[str] = None  # open-ended wording when it differs from ``question``
    norms: list[tuple[str, int]] = field(default_factory=list)  # (social-norm step, event_id)
    key: str = ""  # what else tells this question apart from others citing the same events (its subject)
    answer_class: str = ""  # the kind of answer (e.g. "eye contact", "nobody"): balanced per template and clip

    @property
    def source_event_ids(self) -> list[int]:
        return sorted({e.event_id for e in self.events})


def pick_distractors(rng: random.Random, preferred: Sequence[str], pool: Iterable[str], correct: str,
                     n: int = 3) -> list[str]:
    """Up to ``n`` distinct false options: ``preferred`` first (in order), then a seeded sample of
    ``pool``. Anything equal to the correct option (case-insensitively) is dropped."""
    seen = {correct.strip().lower()}
    chosen: list[str] = []
    for option in preferred:
        if option.strip().lower() not in seen and len(chosen) < n:
            seen.add(option.strip().lower())
            chosen.append(option)
    rest = sorted({o for o in pool if o.strip().lower() not in seen})
    rng.shuffle(rest)
    for option in rest:
        if len(chosen) >= n:
            break
        if option.strip().lower() not in seen:
            seen.add(option.strip().lower())
            chosen.append(option)
    return chosen
