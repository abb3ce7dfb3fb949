"""Blind baselines that never see the video must stay near chance (<= 35 %) on the mcq items of a
synthetic corpus of >= 500 items: always the longest option, always the corpus' most frequent letter,
the option sharing most words with the question."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from pipeline.config import QAConfig
from qa_gen import generate_qa
from test_qa_synthetic import scene_tables

WORD = re.compile(r"[a-z0-9.']+")


def _body(option: str) -> str:
    return option[3:]


def longest_option(item: dict) -> int:
    lengths = [len(_body(o)) for o in item["options"]]
    return lengths.index(max(lengths))


def most_word_overlap(item: dict) -> int:
    question = set(WORD.findall(item["question"].lower()))
    overlaps = [len(question & set(WORD.findall(_body(o).lower()))) for o in item["options"]]
    return overlaps.index(max(overlaps))


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    items: list[dict] = []
    seed = 0
    while len(items) < 600:
        events, tracks, duration = scene_tables(1000 + seed, n_people=2 + seed % 4)
        qa, _ = generate_qa(events, tracks, QAConfig(formats=("mcq",)), seed=7, clip_duration=duration)
        items += qa.to_pylist()
        seed += 1
    return items


def test_blind_baselines_near_chance(corpus):
    n = len(corpus)
    assert n >= 500
    truth = ["ABCD".index(item["answer"]) for item in corpus]
    longest = sum(longest_option(item) == t for item, t in zip(corpus, truth)) / n
    top_letter, top_count = Counter(item["answer"] for item in corpus).most_common(1)[0]
    frequent = top_count / n
    overlap = sum(most_word_overlap(item) == t for item, t in zip(corpus, truth)) / n
    print(f"\nblind baselines over {n} mcq items: longest option {longest:.3f}, "
          f"most frequent letter ({top_letter}) {frequent:.3f}, most word overlap {overlap:.3f}")
    assert longest <= 0.35
    assert frequent <= 0.35
    assert overlap <= 0.35


def test_no_category_is_answerable_blind_by_length(corpus):
    """Per category, the longest-option baseline stays well below certainty (a template whose correct
    option is always the longest would be learnt without the video). C2/C3 sit highest: in these scenes
    the true answer is often "nobody responds", and the option naming everyone left out is the longest."""
    by_category: dict[str, list[bool]] = {}
    for item in corpus:
        by_category.setdefault(item["category"], []).append(longest_option(item) == "ABCD".index(item["answer"]))
    rates = {cat: sum(v) / len(v) for cat, v in sorted(by_category.items()) if len(v) >= 20}
    print("longest-option accuracy by category:", {k: round(v, 2) for k, v in rates.items()})
    assert all(rate <= 0.7 for rate in rates.values()), rates


def test_no_category_has_a_dominant_answer(corpus):
    """Per category, always giving the category's most common answer text (a prior a blind model learns,
    e.g. "1" to every "how many times") is right at most half the time."""
    by_category: dict[str, Counter] = {}
    for item in corpus:
        by_category.setdefault(item["category"], Counter())[item["answer_text"]] += 1
    shares = {cat: counts.most_common(1)[0][1] / sum(counts.values())
              for cat, counts in sorted(by_category.items()) if sum(counts.values()) >= 20}
    print("most common answer's share by category:", {k: round(v, 2) for k, v in shares.items()})
    assert shares and all(share <= 0.5 for share in shares.values()), shares
