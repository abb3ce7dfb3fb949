"""Candidate -> QA row (QA_SCHEMA): options with letters, ids, grounding and the evidence trace."""
from __future__ import annotations

import hashlib
import random
import re
from typing import Sequence

from qa_gen.candidate import Candidate
from qa_gen.categories import CATEGORIES
from qa_gen.context import VideoContext, stable_hash
from qa_gen.events_view import Event, people_of
from qa_gen.wording import event_sentence

LETTERS = "ABCD"
PERSON_NAME = re.compile(r"\bPerson (\d+)\b")


def qa_id_of(video_id: str, candidate: Candidate, fmt: str) -> str:
    """Stable id: the video, category, question form, format and what the cited events say. The seed (which
    only changes wording and option order) is left out, so ids survive a re-seed; the events' row numbers are
    left out too, so an item keeps its id (and its place in the per-category sample) when events it does not
    cite come or go (a changed setting, a rule that drops one)."""
    key = "|".join([video_id, candidate.category, candidate.template, fmt,
                    ";".join(sorted({e.key for e in candidate.events})),
                    ",".join(str(p) for p in candidate.persons), candidate.key])
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def unit_qa_id(qa_id: str, unit_start: float) -> str:
    """The id of an item of the unit that starts ``unit_start`` seconds into the video. Units count times from
    their own start, so a scene shown twice (a clip, a cutaway, the clip again) asks the same questions in two
    units; where each unit lies keeps their ids apart. The first unit (from 0 s) keeps the clip's own ids, so a
    video in one unit has exactly the items and ids of whole-clip generation."""
    if unit_start <= 0.0:
        return qa_id
    return hashlib.sha1(f"{qa_id}|unit@{unit_start:.3f}".encode()).hexdigest()[:16]


def named_persons(texts: Sequence[str]) -> set[int]:
    """Every N in "Person N" across ``texts``."""
    return {int(m) for text in texts for m in PERSON_NAME.findall(text)}


def _grounding(ctx: VideoContext, events: Sequence[Event]) -> list[dict]:
    """[{"source": "gaze"|"gesture", "persons": [...]}] per cited modality event; cross-modal events
    contribute their gaze and gesture parents."""
    out: list[dict] = []
    # candidates may collect their events from sets: order them so the row never depends on hashing
    for e in sorted(events, key=lambda e: (e.start, e.event_id)):
        parts = [ctx.by_id[p] for p in sorted(e.parents) if p in ctx.by_id] if e.source == "cross" else [e]
        for part in parts:
            if part.source not in ("gaze", "gesture"):
                continue
            entry = {"source": part.source, "persons": sorted(people_of(part))}
            if entry not in out:
                out.append(entry)
    return out


def _trace(ctx: VideoContext, candidate: Candidate, answer_text: str, fmt: str) -> list[dict]:
    steps = []
    for e in sorted(candidate.events, key=lambda e: (e.start, e.event_id)):
        if e.source == "cross":
            continue  # its parents carry the observable evidence
        steps.append({"text": event_sentence(e, ctx.step), "modality": "visual", "external_knowledge": False,
                      "event_id": e.event_id})
    for e in sorted(candidate.events, key=lambda e: (e.start, e.event_id)):
        if e.source == "cross":
            for p in sorted(e.parents):
                if p in ctx.by_id and all(s["event_id"] != p for s in steps):
                    steps.append({"text": event_sentence(ctx.by_id[p], ctx.step), "modality": "visual",
                                  "external_knowledge": False, "event_id": p})
    steps = steps[:6]
    for text, event_id in candidate.norms[:1]:
        steps.append({"text": text, "modality": "social_norm", "external_knowledge": True, "event_id": event_id})
    if fmt == "mcq":  # tie the evidence to the chosen option (an open answer is the evidence itself)
        steps.append({"text": f"So the answer is: {answer_text}", "modality": "visual",
                      "external_knowledge": False, "event_id": candidate.events[0].event_id})
    return steps


def build_row(ctx: VideoContext, candidate: Candidate, fmt: str, letter_index: int) -> dict:
    """One QA row. For mcq the correct option goes to ``letter_index``; the false ones fill the other
    letters in an order fixed by (seed, qa_id)."""
    category = CATEGORIES[candidate.category]
    qa_id = qa_id_of(ctx.video_id, candidate, fmt)
    a, b = candidate.time_range
    time_range = [round(max(0.0, a), 6), round(min(ctx.duration, b), 6)]
    if fmt == "mcq":
        wrong = list(candidate.distractors[:3])
        random.Random(stable_hash(ctx.seed, qa_id, "order")).shuffle(wrong)
        bodies = wrong[:letter_index] + [candidate.correct] + wrong[letter_index:]
        options = [f"{LETTERS[i]}) {body}" for i, body in enumerate(bodies)]
        question, answer, answer_text = candidate.question, LETTERS[letter_index], candidate.correct
    else:
        options = []
        question = candidate.open_question or candidate.question
        answer = answer_text = " ".join(candidate.explanation[:4])
    trace = _trace(ctx, candidate, answer_text, fmt)
    texts = [question, answer_text] + options + [step["text"] for step in trace]
    persons = sorted(set(candidate.persons) | named_persons(texts))
    return {
        "qa_id": qa_id,
        "video_id": ctx.video_id,
        "category": category.code,
        "category_name": category.name,
        "difficulty": category.difficulty,
        "format": fmt,
        "question": question,
        "options": options,
        "answer": answer,
        "answer_text": answer_text,
        "time_range": time_range,
        "source_event_ids": candidate.source_event_ids,
        "persons": persons,
        "grounding": _grounding(ctx, candidate.events),
        "reasoning_trace": trace,
        "template": candidate.template,
    }
