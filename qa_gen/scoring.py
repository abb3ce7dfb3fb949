"""Metrics of `socialtrace score`: how well a model's answers match QA items (pure functions, no I/O).

- multiple choice: the chosen option parsed from free model output the way GRASP's evaluation does
  (eval/eval_social_qa.py: extract_answer: <answer> tags, \\boxed{}, "Answer:", "X)" / "X."), made
  stricter where GRASP guesses (its first-character fallback reads "Both ..." as B) and extended to the
  option text itself; accuracy = pred == key, as GRASP's eval/metric_report.py counts it.
- Social Grounding Reward: GRASP's compute_grounding_score (socialmllm/train/reasoning/trainer.py):
  persons named inside <gaze>/<gesture> spans against the item's grounding events, persons already named
  in the question left out; 0.7 x mean per-event recall + 0.3 x mean per-modality precision.
- open-ended: cosine similarity of sentence embeddings (all-MiniLM-L6-v2 when installed), recall of the
  "Person N" names and of the times the reference states.
- reasoning traces: step-level similarity (each reference step against its best-matching predicted
  step, in the spirit of Social Genome's trace metrics) and agreement of modality tags on matched steps.
- reference rows: chance (1 / number of options) and the best blind text-only guesser, cross-validated
  over videos so no item is answered by a guesser trained on it.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

LETTERS = "ABCDEFGH"
# the metrics an item can carry, in report order; a metric an item does not have is None
METRICS = ("accuracy", "chance", "blind_accuracy", "sgr", "semantic_similarity", "person_recall",
           "time_recall", "step_similarity", "modality_agreement")

Embed = Callable[[Sequence[str]], np.ndarray]  # texts -> unit-norm row vectors

# --- multiple choice --------------------------------------------------------------------------------

_THINK_END = "</think>"
_ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.S | re.I)
_BOXED = re.compile(r"\\boxed\{\s*([^}]*?)\s*\}")
_LATEX_TEXT = re.compile(r"\\text(?:bf)?\{([^}]*)\}")
_MARKUP = re.compile(r"\*\*|__|`|^#+\s*|\$", re.M)
# lead-ins models put before the letter: "Answer:", "The correct answer is", "Final answer -", "I choose"
_LEAD = re.compile(r"^\s*(?:(?:so\s*,?\s*)?(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answer\s*(?:is|would be|:)?"
                   r"|i\s+(?:choose|pick|select|would choose|would pick)|my\s+(?:final\s+)?(?:answer|choice)\s+is"
                   r"|option|choice)\s*[:\-]?\s*", re.I)
_OPTION_PREFIX = re.compile(r"^\s*[\(\[]?[A-Ha-h][\)\].:]\s*")
_WORDS = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def _letter_index(letter: str, n_options: int) -> Optional[int]:
    index = LETTERS.find(letter.upper())
    return index if 0 <= index < n_options else None


def _normal(text: str) -> str:
    """Lower case, words only: option text compared without case, punctuation or spacing."""
    return " ".join(_WORDS.findall(text.lower()))


def option_body(option: str) -> str:
    """ "B) Person 2" -> "Person 2"."""
    return _OPTION_PREFIX.sub("", option, count=1).strip()


def _by_option_text(text: str, options: Sequence[str]) -> Optional[int]:
    said = _normal(text)
    bodies = [_normal(option_body(o)) for o in options]
    if said in bodies and bodies.count(said) == 1:
        return bodies.index(said)
    # a sentence that contains exactly one option's text (an option contained in a longer contained
    # option, "Person 1" in "Person 1 and Person 2", yields to the longer one)
    contained = [i for i, b in enumerate(bodies) if b and re.search(rf"(?<![a-z0-9]){re.escape(b)}(?![a-z0-9])", said)]
    contained = [i for i in contained if not any(j != i and bodies[i] in bodies[j] for j in contained)]
    return contained[0] if len(contained) == 1 else None


def _parse_plain(text: str, options: Sequence[str]) -> Optional[int]:
    n = len(options)
    text = _MARKUP.sub("", text).strip()
    for _ in range(3):  # "Answer: The answer is B"
        stripped = _LEAD.sub("", text, count=1).strip()
        if stripped == text:
            break
        text = stripped
    if not text:
        return None
    # a bare letter: "B", "b", "(B)", "[B]", "B)", "B.", "B:"
    m = re.fullmatch(r"[\(\[]?([A-Ha-h])[\)\]]?[.:]?", text)
    if m:
        return _letter_index(m.group(1), n)
    # a letter with its delimiter, then the option text or a reason: "B) Person 2", "(b) ...", "B. ...", "B - ..."
    m = re.match(r"[\(\[]?([A-H])(?:[\)\].:,]|\s+-)\s*\S", text) or re.match(r"[\(\[]?([a-h])[\)\]]\s*\S", text)
    if m:
        return _letter_index(m.group(1), n)
    # "... the answer is C.", "... option (D) ..."
    found = {x.upper() for x in re.findall(r"\b(?i:answer|option|choice)\s*(?i:is|would be|:)?\s*[\(\[]?"
                                           r"([A-H]|[a-h](?=[\)\].,;:]|$))(?![A-Za-z0-9'])", text)}
    if len(found) == 1:
        return _letter_index(found.pop(), n)
    by_text = _by_option_text(text, options)
    if by_text is not None:
        return by_text
    # GRASP's own rule: an "X)" or "X." anywhere, here only when exactly one letter is written that way
    found = set(re.findall(r"(?<![A-Za-z0-9])[\(\[]?([A-H])(?:\)|\](?!\()|\.(?![0-9A-Za-z]))", text))
    if len(found) == 1:
        return _letter_index(found.pop(), n)
    # a leading letter then a reason, "B because ...", when no other standalone letter competes with it
    # (not "A person ...": there "A" is the article)
    m = re.match(r"([A-H])(?=$|[,;]|\s+(?:(?:because|since|as)\b|[-–]))", text)
    if m and set(re.findall(r"\b([A-H])\b", text)) == {m.group(1)}:
        return _letter_index(m.group(1), n)
    return None


def parse_choice(output, options: Sequence[str]) -> Optional[int]:
    """The option index a model's free-text ``output`` chooses among ``options`` ("A) ..." strings or
    bare option texts), or None when it names no single option."""
    if output is None or not options:
        return None
    text = str(output).strip()
    if _THINK_END in text:
        text = text.rsplit(_THINK_END, 1)[1]
    text = _LATEX_TEXT.sub(r"\1", text)  # \boxed{\text{B}} -> \boxed{B}
    for pattern in (_ANSWER_TAG, _BOXED):
        m = pattern.search(text)
        if m:
            inner = _parse_plain(m.group(1), options)
            if inner is not None:
                return inner
    return _parse_plain(text, options)


# --- Social Grounding Reward -----------------------------------------------------------------------

_GAZE_SPAN = re.compile(r"<gaze>(.*?)</gaze>", re.S | re.I)
_GESTURE_SPAN = re.compile(r"<gesture>(.*?)</gesture>", re.S | re.I)
_GRASP_PERSON = re.compile(r"(?:Person\s+|\bP)(\d+)")  # GRASP's pattern: "Person 2" or "P2"
SGR_RECALL_WEIGHT = 0.7  # GRASP's weights (the definition of the reward, not a tuning knob)
SGR_PRECISION_WEIGHT = 0.3


def grasp_persons(text: str) -> set[int]:
    return {int(m) for m in _GRASP_PERSON.findall(text or "")}


def social_grounding_reward(reasoning: str, grounding: Sequence[dict], question: str = "") -> Optional[float]:
    """GRASP's Social Grounding Reward of one answer, in [0, 1]. None when the item has nothing to ground:
    no grounding events, or every person in them is already named in the question (GRASP scores those
    0 for every answer, which in an evaluation is no information about the model, so they are left out
    of the mean and counted)."""
    q_persons = grasp_persons(question)
    events = [(e.get("source"), set(e.get("persons") or []) - q_persons) for e in grounding or []]
    events = [(source, persons) for source, persons in events if persons]
    if not events:
        return None
    text = reasoning or ""
    gaze_text = " ".join(_GAZE_SPAN.findall(text))
    gesture_text = " ".join(_GESTURE_SPAN.findall(text))
    if not gaze_text.strip() and not gesture_text.strip():
        return 0.0
    named = {"gaze": grasp_persons(gaze_text) - q_persons, "gesture": grasp_persons(gesture_text) - q_persons}
    truth = {"gaze": set(), "gesture": set()}
    for source, persons in events:
        truth["gaze" if source == "gaze" else "gesture"].update(persons)
    recall = float(np.mean([len(named["gaze" if s == "gaze" else "gesture"] & p) / len(p) for s, p in events]))
    precisions = [len(named[m] & truth[m]) / len(named[m]) for m in ("gaze", "gesture") if named[m] and truth[m]]
    precision = float(np.mean(precisions)) if precisions else 0.0
    return SGR_RECALL_WEIGHT * recall + SGR_PRECISION_WEIGHT * precision


# --- open-ended -----------------------------------------------------------------------------------

_PERSON_NAME = re.compile(r"\bPerson\s+(\d+)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)")
_SECONDS_AFTER = re.compile(r"^\s*(?:s\b|secs?\b|seconds?\b|to\b|and\b|-|–)", re.I)


def persons_named(text: str) -> set[int]:
    return {int(m) for m in _PERSON_NAME.findall(text or "")}


def times_stated(text: str, strict: bool = True) -> list[float]:
    """Times in ``text``: numbers not naming a person. ``strict`` (for references) keeps only decimals
    ("23.0", as socialtrace prints times) and numbers followed by seconds or a range word, so counts
    ("2 times") are not mistaken for times; model answers are read loosely ("23 s" and "23" count)."""
    out = []
    text = text or ""
    for m in _NUMBER.finditer(text):
        if re.search(r"Person\s*$", text[: m.start()], re.I):
            continue
        if strict and "." not in m.group(1) and not _SECONDS_AFTER.match(text[m.end():]):
            continue
        out.append(float(m.group(1)))
    return out


def person_recall(reference: str, answer: str) -> Optional[float]:
    wanted = persons_named(reference)
    if not wanted:
        return None
    return len(wanted & persons_named(answer)) / len(wanted)


def time_recall(reference: str, answer: str, tolerance: float) -> Optional[float]:
    wanted = times_stated(reference, strict=True)
    if not wanted:
        return None
    said = np.array(times_stated(answer, strict=False), dtype=float)
    if said.size == 0:
        return 0.0
    return float(np.mean([bool(np.any(np.abs(said - t) <= tolerance + 1e-9)) for t in wanted]))


# --- reasoning traces ----------------------------------------------------------------------------

_TAG = re.compile(r"</?(?:gaze|gesture|think|answer)>", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z<])|\n+")


@dataclass
class Step:
    text: str
    modality: Optional[str] = None  # only when the model gives structured steps


def reasoning_steps(reasoning) -> list[Step]:
    """A model's reasoning as steps: a list (of strings or {"text", "modality"} dicts) is taken as given;
    free text is split at sentence ends and line breaks."""
    if reasoning is None:
        return []
    if isinstance(reasoning, str):
        parts = [_TAG.sub("", p).strip() for p in _SENTENCE_END.split(reasoning)]
        return [Step(p) for p in parts if p]
    steps = []
    for part in reasoning:
        if isinstance(part, dict):
            text = _TAG.sub("", str(part.get("text") or "")).strip()
            if text:
                steps.append(Step(text, part.get("modality")))
        elif part is not None and str(part).strip():
            steps.append(Step(_TAG.sub("", str(part)).strip()))
    return steps


def reasoning_text(reasoning) -> str:
    """The reasoning as one text (the spans GRASP's reward reads keep their tags)."""
    if reasoning is None:
        return ""
    if isinstance(reasoning, str):
        return reasoning
    return "\n".join(str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in reasoning if p is not None)


def trace_scores(reference: Sequence[dict], predicted: Sequence[Step], ref_vectors: np.ndarray,
                 pred_vectors: np.ndarray) -> tuple[float, Optional[float]]:
    """(step similarity, modality agreement) of a predicted trace against the reference trace: each
    reference step is matched to its most similar predicted step; similarity is the mean of those best
    cosines, agreement the share of matches whose modality tag equals the reference's (None when the
    prediction carries no modality tags)."""
    sims = ref_vectors @ pred_vectors.T
    best = sims.argmax(axis=1)
    similarity = float(np.clip(sims.max(axis=1), 0.0, 1.0).mean())
    if not any(s.modality for s in predicted):
        return similarity, None
    agree = [predicted[j].modality == step.get("modality") for step, j in zip(reference, best)]
    return similarity, float(np.mean(agree))


# --- per-item scoring -----------------------------------------------------------------------------

@dataclass
class ItemScore:
    qa_id: str
    category: str
    difficulty: str
    format: str
    values: dict = field(default_factory=dict)  # metric -> float (absent = does not apply)
    unparseable: bool = False


def is_mcq(item: dict) -> bool:
    return bool(item.get("options"))


def score_items(items: Sequence[dict], predictions: dict[str, dict], *, embed: Optional[Embed],
                time_tolerance: float) -> list[ItemScore]:
    """Score every item that has a prediction ({"answer", "reasoning"?}). ``embed`` None = semantic
    metrics unavailable (left out, not zero)."""
    scores: list[ItemScore] = []
    open_pairs: list[tuple[ItemScore, str, str]] = []
    traces: list[tuple[ItemScore, list[dict], list[Step]]] = []
    for item in items:
        pred = predictions.get(item["qa_id"])
        if pred is None:
            continue
        fmt = "mcq" if is_mcq(item) else "open_ended"
        s = ItemScore(item["qa_id"], item.get("category") or "?", item.get("difficulty") or "?", fmt)
        answer = str(pred["answer"])
        reasoning = pred.get("reasoning")
        if fmt == "mcq":
            options = item["options"]
            chosen = parse_choice(answer, options)
            key = _letter_index(str(item["answer"]).strip()[:1], len(options))
            s.unparseable = chosen is None
            s.values["accuracy"] = float(chosen is not None and chosen == key)
            s.values["chance"] = 1.0 / len(options)
        else:
            reference = item.get("answer_text") or item.get("answer") or ""
            for name, value in (("person_recall", person_recall(reference, answer)),
                                ("time_recall", time_recall(reference, answer, time_tolerance))):
                if value is not None:
                    s.values[name] = value
            open_pairs.append((s, reference, answer))
        if reasoning is not None:
            sgr = social_grounding_reward(reasoning_text(reasoning), item.get("grounding") or [],
                                          item.get("question") or "")
            if sgr is not None:
                s.values["sgr"] = sgr
            ref_trace = [t for t in item.get("reasoning_trace") or [] if (t.get("text") or "").strip()]
            steps = reasoning_steps(reasoning)
            if ref_trace and steps:
                traces.append((s, ref_trace, steps))
        scores.append(s)
    if embed is not None:
        _add_semantic(open_pairs, traces, embed)
    return scores


def _add_semantic(open_pairs, traces, embed: Embed) -> None:
    texts: list[str] = []
    for _, reference, answer in open_pairs:
        texts += [reference, answer]
    for _, ref_trace, steps in traces:
        texts += [t["text"] for t in ref_trace] + [st.text for st in steps]
    if not texts:
        return
    vectors = iter(np.asarray(embed(texts), dtype=np.float32))
    for s, _, _ in open_pairs:
        a, b = next(vectors), next(vectors)
        s.values["semantic_similarity"] = float(np.clip(a @ b, 0.0, 1.0))
    for s, ref_trace, steps in traces:
        ref = np.stack([next(vectors) for _ in ref_trace])
        pred = np.stack([next(vectors) for _ in steps])
        similarity, agreement = trace_scores(ref_trace, steps, ref, pred)
        s.values["step_similarity"] = similarity
        if agreement is not None:
            s.values["modality_agreement"] = agreement


# --- blind text-only reference ------------------------------------------------------------------

BLIND_HIDDEN = ("answer", "answer_text", "grounding", "reasoning_trace", "source_event_ids", "persons")


@dataclass
class BlindResult:
    name: str  # the best guesser
    correct: dict[str, bool]  # qa_id -> whether it answered right (scored mcq items)
    accuracies: dict[str, float]  # every guesser's cross-validated accuracy
    method: str


def _folds(items: Sequence[dict], n_folds: int) -> tuple[list[int], str]:
    """A fold per item: whole videos per fold when there are >= 2 videos, else items (one video)."""
    videos = sorted({str(it.get("video_id")) for it in items})
    if len(videos) >= 2:
        k = min(n_folds, len(videos))
        # videos spread over folds by a stable hash of their id, so folds do not follow name order
        order = sorted(videos, key=lambda v: (zlib.crc32(v.encode()), v))
        fold_of = {v: i % k for i, v in enumerate(order)}
        return [fold_of[str(it.get("video_id"))] for it in items], f"{k}-fold cross-validation over {len(videos)} videos"
    k = min(n_folds, len(items))
    return [i % k for i in range(len(items))], (f"{k}-fold cross-validation over items (one video only, so "
                                                "train and test share a video)")


def blind_baseline(all_items: Sequence[dict], scored_ids: Iterable[str], fit_guessers, n_folds: int) -> Optional[BlindResult]:
    """Cross-validated blind guessers: for each fold, ``fit_guessers`` learns from the mcq items of the
    other folds (all of the QA table's items, scored or not) and answers the fold's scored items, which
    it sees without their answer, grounding or trace. The best guesser is the one with the highest
    accuracy over all scored items. None when fewer than two mcq items or folds exist."""
    mcq = [it for it in all_items if is_mcq(it)]
    scored = set(scored_ids)
    if len(mcq) < 2 or not scored & {it["qa_id"] for it in mcq}:
        return None
    fold, method = _folds(mcq, n_folds)
    k = max(fold) + 1
    if k < 2:
        return None
    correct: dict[str, dict[str, bool]] = {}
    for f in range(k):
        train = [it for it, g in zip(mcq, fold) if g != f]
        test = [it for it, g in zip(mcq, fold) if g == f and it["qa_id"] in scored]
        if not test:
            continue
        for guesser in fit_guessers(train):
            answers = correct.setdefault(guesser.name, {})
            for it in test:
                blind = {key: value for key, value in it.items() if key not in BLIND_HIDDEN}
                key = _letter_index(str(it["answer"]).strip()[:1], len(it["options"]))
                answers[it["qa_id"]] = int(guesser.predict(blind)) == key
    if not correct:
        return None
    accuracies = {name: float(np.mean(list(v.values()))) for name, v in correct.items()}
    best = max(sorted(accuracies), key=lambda name: accuracies[name])
    return BlindResult(best, correct[best], accuracies, method)


# --- aggregation ----------------------------------------------------------------------------------

def summarize(scores: Sequence[ItemScore]) -> dict:
    """Mean of every metric over the items that have it, with the item counts: {metric: value,
    "n_<metric>": count, "n_items", "n_mcq", "n_open_ended", "unparseable"}."""
    out: dict = {"n_items": len(scores), "n_mcq": sum(s.format == "mcq" for s in scores),
                 "n_open_ended": sum(s.format != "mcq" for s in scores),
                 "unparseable": sum(s.unparseable for s in scores)}
    for metric in METRICS:
        values = [s.values[metric] for s in scores if metric in s.values]
        out[metric] = float(np.mean(values)) if values else None
        out[f"n_{metric}"] = len(values)
    return out


def breakdown(scores: Sequence[ItemScore], key: Callable[[ItemScore], str]) -> dict[str, dict]:
    groups: dict[str, list[ItemScore]] = {}
    for s in scores:
        groups.setdefault(key(s), []).append(s)
    return {name: summarize(members) for name, members in groups.items()}
