"""Checks every item must pass before it is kept (DESIGN.md §6, issue #4): four distinct lettered
options with one correct, letter and answer_text agree, named people present in the item's time range,
time range inside the clip, cited events exist, no hedging, no internal event names."""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Iterable, Optional

from qa_gen.categories import CATEGORIES, FORMATS
from qa_gen.events_view import Presence

LETTERS = "ABCD"
HEDGE_WORDS = ("likely", "unlikely", "suggests", "suggest", "seems", "seem", "probably", "because", "implies",
               "imply", "perhaps", "possibly", "maybe", "apparently", "might")
_HEDGE = re.compile(r"\b(" + "|".join(HEDGE_WORDS) + r")\b", re.IGNORECASE)
_SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")  # mutual_gaze, gaze_following: internal names, not English
_PERSON = re.compile(r"\bPerson (\d+)\b")
_EPS_S = 1e-6  # float slack only
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


@dataclass
class ValidationContext:
    """What an item is checked against: who is present when, the clip length, the cited events."""

    presence: Presence
    duration: float
    event_ids: frozenset


def _texts(item: dict) -> list[str]:
    texts = [item.get("question", ""), item.get("answer_text", "")] + list(item.get("options") or [])
    texts += [step.get("text", "") for step in item.get("reasoning_trace") or []]
    return texts


def validate_item(item: dict, context: ValidationContext) -> Optional[str]:
    """None when ``item`` (a QA_SCHEMA row dict) may be kept, else the reason it is rejected."""
    category = CATEGORIES.get(item.get("category"))
    if category is None:
        return "unknown_category"
    if item.get("difficulty") != category.difficulty or item.get("category_name") != category.name:
        return "wrong_difficulty"
    fmt = item.get("format")
    if fmt not in FORMATS:
        return "unknown_format"
    if not item.get("question", "").strip():
        return "empty_question"
    options = list(item.get("options") or [])
    if fmt == "mcq":
        if len(options) != 4:
            return "options_not_four"
        if any(not opt.startswith(f"{LETTERS[i]}) ") for i, opt in enumerate(options)):
            return "bad_option_prefix"
        bodies = [opt[3:].strip() for opt in options]
        if any(not body for body in bodies):
            return "empty_option"
        if len({body.lower() for body in bodies}) != 4:
            return "options_not_distinct"
        answer = item.get("answer")
        if answer not in LETTERS:
            return "answer_not_a_letter"
        if bodies[LETTERS.index(answer)] != item.get("answer_text"):
            return "answer_text_mismatch"
        if sum(body.lower() == str(item.get("answer_text", "")).lower() for body in bodies) != 1:
            return "not_exactly_one_correct"
    else:
        if options:
            return "open_ended_with_options"
        if item.get("answer") != item.get("answer_text"):
            return "answer_text_mismatch"
        n_sentences = len(_SENTENCE_END.findall(item.get("answer_text", "")))
        if not 2 <= n_sentences <= 4:
            return "open_answer_not_2_to_4_sentences"
    time_range = item.get("time_range") or []
    if len(time_range) != 2:
        return "bad_time_range"
    a, b = float(time_range[0]), float(time_range[1])
    # no slack at the clip end: a window rounded up past it ("3.0 to 3.5 s" of a 3.37 s clip) asks about
    # video that does not exist
    if not (0.0 <= a < b <= context.duration + _EPS_S):
        return "time_range_outside_clip"
    if any(t > context.duration + _EPS_S for t in told_times(item.get("question", ""))):
        return "time_outside_clip"
    cited = list(item.get("source_event_ids") or [])
    if not cited or any(int(i) not in context.event_ids for i in cited):
        return "unknown_source_event"
    texts = _texts(item)
    if any(_HEDGE.search(text) for text in texts):
        return "hedging_word"
    if any(_SNAKE.search(text) for text in texts):
        return "internal_event_name"
    named = {int(m) for text in texts for m in _PERSON.findall(text)}
    if not named <= set(item.get("persons") or []):
        return "person_not_listed"
    if any(not context.presence.present(p, a, b) for p in named):
        return "person_absent"
    return None


_TOLD_TIME = re.compile(r"(?:\b(?:between|from|at)\s|\()(\d+(?:\.\d+)?)(?:\s(?:and|to)\s(\d+(?:\.\d+)?))?\s+seconds",
                        re.IGNORECASE)


def told_times(text: str) -> list[float]:
    """Clip times a question names ("between 1.0 and 2.5 seconds", "at 3.0 seconds"), not durations."""
    return [float(v) for m in _TOLD_TIME.finditer(text) for v in m.groups() if v is not None]


def _normalise(question: str) -> str:
    """Lower case, single spaces, times rounded to whole seconds (2.0 and 2.5 ask the same thing)."""
    text = re.sub(r"\d+\.\d+", lambda m: str(int(float(m.group()))), question.lower())
    return re.sub(r"\s+", " ", text).strip()


def drop_conflicting_keys(items: Iterable[dict]) -> tuple[list[dict], int]:
    """Drop every item whose question (same format, case and spacing aside) another item of the clip
    asks with a different answer: the events gave two readings of one moment, and neither is kept.
    Returns (kept, number dropped)."""
    items = list(items)
    answers: dict[tuple, set] = {}
    for item in items:
        key = (item["format"], re.sub(r"\s+", " ", item["question"].lower()).strip())
        answers.setdefault(key, set()).add(item["answer_text"].lower())
    kept = [it for it in items
            if len(answers[(it["format"], re.sub(r"\s+", " ", it["question"].lower()).strip())]) == 1]
    return kept, len(items) - len(kept)


def _overlap(a: list, b: list) -> bool:
    return float(a[0]) < float(b[1]) and float(b[0]) < float(a[1])


def drop_near_duplicates(items: Iterable[dict], threshold: float) -> tuple[list[dict], int]:
    """Keep the first of items that ask the same thing twice: same category, format, answer and people,
    overlapping time ranges, and questions at least ``threshold`` similar (times compared to the
    second). Items of one template about different events or people are not duplicates, however alike
    their wording. Returns (kept, number dropped)."""
    kept: list[dict] = []
    dropped = 0
    for item in items:
        q = _normalise(item["question"])
        duplicate = False
        for other in kept:
            if (other["format"], other["category"], other["answer_text"].lower(), list(other["persons"])) != (
                item["format"], item["category"], item["answer_text"].lower(), list(item["persons"])
            ):
                continue
            if not _overlap(other["time_range"], item["time_range"]):
                continue
            if SequenceMatcher(None, q, _normalise(other["question"])).ratio() >= threshold:
                duplicate = True
                break
        if duplicate:
            dropped += 1
        else:
            kept.append(item)
    return kept, dropped
