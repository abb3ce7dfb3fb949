"""Text-only guessers: how well can a multiple-choice item be answered without the video?

A QA corpus is only useful for training or evaluation if its answers cannot be read off the text: a
wording tell (the key is always the longest option, one option is never right, a template always has
the same answer) lets a model score without watching. These guessers are fitted on some items and scored
on others; `socialtrace score` prints them as a reference row and the test gate keeps each category near
chance (4 options: 25 %).

Public API:
    fit_guessers(train_items) -> list[Guesser]
    Guesser.name, Guesser.predict(item) -> option index 0..3, Guesser.credit(item) -> expected accuracy (ties
    between the best options count as a random pick among them)
    blind_baseline_table(train_items, test_items) -> {category: {guesser name: accuracy, "n": count}}
    leave_one_video_out(items) -> the same table, each video scored by guessers fitted on the others

Items are QA table rows as dicts (``question``, ``options`` as "A) ..." strings, ``answer`` letter,
``category``, ``format``, and ``template`` when present).
"""
from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from typing import Iterable, Sequence

import numpy as np

LETTERS = "ABCD"
_WORD = re.compile(r"[a-z]+|\d+(?:\.\d+)?")
_PERSON = re.compile(r"\bperson \d+\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PERSON_ID = re.compile(r"\bPerson (\d+)\b")


def _body(option: str) -> str:
    """An option without its "A) " prefix."""
    return option[3:] if len(option) > 2 and option[1:3] == ") " else option


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shape(text: str) -> str:
    """An option with people and numbers abstracted: "Person 2 leads Person 0's gaze" -> "person N leads
    person N's gaze", so a prior on an answer's form is learnt across clips with different people."""
    return _NUMBER.sub("#", _PERSON.sub("person N", text.lower().strip()))


def _template(item: dict) -> str:
    return str(item.get("template") or item.get("category") or "")


def is_scorable(item: dict) -> bool:
    """A multiple-choice item with four options and a letter answer."""
    return (item.get("format", "mcq") == "mcq" and len(item.get("options") or []) == 4
            and item.get("answer") in tuple(LETTERS))


def answer_index(item: dict) -> int:
    return LETTERS.index(item["answer"])


class Guesser:
    """Chooses an option from the item's text alone."""

    name: str = "guesser"

    def scores(self, item: dict) -> Sequence[float]:  # pragma: no cover - every guesser overrides it
        """One score per option; the highest is the guess."""
        raise NotImplementedError

    def predict(self, item: dict) -> int:
        return _argmax(self.scores(item), item)

    def credit(self, item: dict) -> float:
        """Expected accuracy on ``item`` when a tie between the best options is broken at random: a guesser
        that cannot tell the options apart scores chance (1/4), whatever letter the key happens to have."""
        values = np.asarray(self.scores(item), dtype=float)
        best = np.flatnonzero(values >= values.max() - 1e-12)
        return float(answer_index(item) in best) / len(best)


def _argmax(scores: Sequence[float], item: dict) -> int:
    """The index of the largest score; ties are broken by a hash of the question, the same in every run
    (always taking the first would measure how letters fall in one template, not the text)."""
    values = np.asarray(scores, dtype=float)
    best = np.flatnonzero(values >= values.max() - 1e-12)
    if len(best) == 1:
        return int(best[0])
    return int(best[zlib.crc32(str(item.get("question", "")).encode()) % len(best)])


class LongestOption(Guesser):
    name = "longest_option"

    def scores(self, item: dict) -> Sequence[float]:
        return [len(_body(o)) for o in item["options"]]


class WordOverlap(Guesser):
    """The option sharing the most words with the question."""

    name = "word_overlap"

    def scores(self, item: dict) -> Sequence[float]:
        question = set(_words(item["question"]))
        return [len(question & set(_words(_body(o)))) for o in item["options"]]


class TemplateMajority(Guesser):
    """Per template, the answer seen most often in training (by its shape, people and numbers
    abstracted); among options never seen as an answer, the one least often offered as a wrong option."""

    name = "template_majority"

    def __init__(self, train_items: Iterable[dict]) -> None:
        self.right: dict[str, Counter] = defaultdict(Counter)
        self.offered: dict[str, Counter] = defaultdict(Counter)
        for item in train_items:
            template = _template(item)
            for i, option in enumerate(item["options"]):
                shape = _shape(_body(option))
                self.offered[template][shape] += 1
                if i == answer_index(item):
                    self.right[template][shape] += 1

    def scores(self, item: dict) -> Sequence[float]:
        template = _template(item)
        right, offered = self.right.get(template, Counter()), self.offered.get(template, Counter())
        scores = []
        for option in item["options"]:
            shape = _shape(_body(option))
            # correct count first; the right-rate (smoothed) breaks ties between shapes seen equally often
            scores.append(right[shape] + (right[shape] + 1) / (offered[shape] + 4))
        return scores


class BagOfWordsLogistic(Guesser):
    """Conditional logistic regression (softmax over the four options) on hashed bag-of-words features
    of each option: its words and word pairs, the same crossed with the template, its words crossed with
    the question's words, and how many of its words the question shares. Fitted by full-batch gradient
    descent with L2 regularisation; deterministic."""

    name = "bow_logistic"

    def __init__(self, train_items: Sequence[dict], dim: int = 1 << 18, epochs: int = 60,
                 learning_rate: float = 0.5, l2: float = 1e-4) -> None:
        self.dim = dim
        self.weights = np.zeros(dim, dtype=np.float64)
        items = [it for it in train_items if is_scorable(it)]
        if not items:
            return
        rows, cols = [], []
        for r, item in enumerate(items):
            for i, option in enumerate(item["options"]):
                for f in self._features(item, option):
                    rows.append(4 * r + i)
                    cols.append(f)
        from scipy.sparse import csr_matrix  # scipy is a declared dependency
        data = np.ones(len(rows), dtype=np.float64)
        x = csr_matrix((data, (rows, cols)), shape=(4 * len(items), dim))
        x.sum_duplicates()
        target = np.zeros((len(items), 4))
        target[np.arange(len(items)), [answer_index(it) for it in items]] = 1.0
        # Adam on the mean negative log-likelihood: converges in few passes on these small corpora
        m = np.zeros(dim)
        v = np.zeros(dim)
        for step in range(1, epochs + 1):
            scores = (x @ self.weights).reshape(-1, 4)
            scores -= scores.max(axis=1, keepdims=True)
            prob = np.exp(scores)
            prob /= prob.sum(axis=1, keepdims=True)
            grad = x.T @ ((prob - target).reshape(-1)) / len(items) + l2 * self.weights
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad * grad
            m_hat = m / (1 - 0.9 ** step)
            v_hat = v / (1 - 0.999 ** step)
            self.weights -= learning_rate * 0.1 * m_hat / (np.sqrt(v_hat) + 1e-8)

    def _hash(self, feature: str) -> int:
        return zlib.crc32(feature.encode()) % self.dim

    def _features(self, item: dict, option: str) -> list[int]:
        template = _template(item)
        words = _words(_shape(_body(option)))
        question = set(_words(_shape(item["question"])))
        feats = ["bias|" + template, "len|" + str(min(len(words), 12)),
                 "tlen|" + template + "|" + str(min(len(words), 12)),
                 "overlap|" + str(min(len(question & set(words)), 6))]
        grams = words + [a + "_" + b for a, b in zip(words, words[1:])]
        feats += ["w|" + g for g in grams]
        feats += ["t|" + template + "|" + g for g in grams]
        feats += ["q|" + q + "|" + w for q in question for w in set(words)]
        feats.append("shape|" + template + "|" + _shape(_body(option)))
        # people named in both the question and the option (people are abstracted above)
        named = set(_PERSON_ID.findall(item["question"]))
        in_option = _PERSON_ID.findall(_body(option))
        feats.append("pq|" + template + "|" + str(min(sum(p in named for p in in_option), 3)) + "|"
                     + str(min(len(in_option), 3)))
        return [self._hash(f) for f in feats]

    def scores(self, item: dict) -> Sequence[float]:
        return [float(self.weights[self._features(item, o)].sum()) for o in item["options"]]


def fit_guessers(train_items: list[dict]) -> list[Guesser]:
    """Every text-only guesser, fitted on the multiple-choice items of ``train_items``."""
    mcq = [it for it in train_items if is_scorable(it)]
    return [BagOfWordsLogistic(mcq), LongestOption(), WordOverlap(), TemplateMajority(mcq)]


def blind_baseline_table(train_items: list[dict], test_items: list[dict]) -> dict[str, dict[str, float]]:
    """{category: {guesser name: accuracy on the held-out mcq items, ..., "n": their number}}, guessers
    fitted on ``train_items``. Categories with no held-out mcq item are absent."""
    guessers = fit_guessers(train_items)
    by_category: dict[str, list[dict]] = defaultdict(list)
    for item in test_items:
        if is_scorable(item):
            by_category[str(item.get("category"))].append(item)
    table: dict[str, dict[str, float]] = {}
    for category in sorted(by_category):
        items = by_category[category]
        row: dict[str, float] = {}
        for guesser in guessers:
            right = sum(guesser.credit(it) for it in items)
            row[guesser.name] = right / len(items)
        row["n"] = float(len(items))
        table[category] = row
    return table


def format_table(table: dict[str, dict[str, float]]) -> str:
    """The table as aligned text, one category a line, the best guesser last."""
    names = sorted({k for row in table.values() for k in row if k != "n"})
    lines = [f"{'cat':<5}{'n':>6} " + " ".join(f"{n:>18}" for n in names) + f"{'best':>8}"]
    for category, row in table.items():
        best = max(row[n] for n in names)
        lines.append(f"{category:<5}{int(row['n']):>6} " + " ".join(f"{row[n]:>18.3f}" for n in names)
                     + f"{best:>8.3f}")
    return "\n".join(lines)


def leave_one_video_out(items: list[dict], max_folds: int = 12) -> dict[str, dict[str, float]]:
    """The blind baselines across videos: the guessers are fitted on the other videos' items and scored
    on each held-out video's; per category, accuracy over all the held-out items. A prior the whole
    corpus shares (an answer common in every video) shows here, which a split of one video's items
    cannot show. With more than ``max_folds`` videos, videos are held out in ``max_folds`` groups
    (fixed by a hash of the video id) to bound the fitting time. Same layout as blind_baseline_table."""
    by_video: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        if is_scorable(item):
            by_video[str(item.get("video_id"))].append(item)
    folds: dict[int, list[str]] = defaultdict(list)
    for k, video in enumerate(sorted(by_video)):
        fold = k if len(by_video) <= max_folds else zlib.crc32(video.encode()) % max_folds
        folds[fold].append(video)
    right: dict[str, Counter] = defaultdict(Counter)
    count: Counter = Counter()
    for held in folds.values():
        train = [it for v, its in by_video.items() if v not in held for it in its]
        guessers = fit_guessers(train)
        for item in (it for v in held for it in by_video[v]):
            category = str(item.get("category"))
            count[category] += 1
            for guesser in guessers:
                right[category][guesser.name] += guesser.credit(item)
    names = [g.name for g in fit_guessers([])]
    return {c: {**{n: right[c][n] / count[c] for n in names}, "n": float(count[c])} for c in sorted(count)}
