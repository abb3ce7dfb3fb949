"""The blind-baseline gate (issue 10 part 5): text-only guessers fitted on the items of some synthetic
scenes and scored on held-out scenes must stay near chance in every category with enough items. A
category above the bound has a wording or answer-prior tell a model could learn without the video."""
from __future__ import annotations

import random

import pytest

from qa_gen import generate_qa
from qa_gen.blind_baselines import answer_index, blind_baseline_table, fit_guessers, format_table, is_scorable
from qa_gen.config import QAConfig
from tests.test_qa_synthetic import ASPECT, scene_tables

N_SCENES = 96
N_TRAIN = 48
MIN_ITEMS = 50  # categories with fewer held-out items are too noisy to gate
BOUND = 0.35  # 4 options: chance is 0.25


@pytest.fixture(scope="module")
def corpus() -> list[list[dict]]:
    """mcq items per scene, every category asked in multiple-choice form."""
    scenes = []
    for k in range(N_SCENES):
        events, tracks, duration = scene_tables(3000 + k, n_people=2 + k % 4)
        qa, _ = generate_qa(events, tracks, QAConfig(formats=("mcq",)), seed=k, clip_duration=duration, aspect=ASPECT)
        scenes.append(qa.to_pylist())
    return scenes


def test_blind_guessers_stay_near_chance(corpus):
    train = [item for scene in corpus[:N_TRAIN] for item in scene]
    test = [item for scene in corpus[N_TRAIN:] for item in scene]
    table = blind_baseline_table(train, test)
    text = format_table(table)
    print(f"\nblind baselines: fitted on {len(train)} items of {N_TRAIN} scenes, scored on {len(test)} items of "
          f"{N_SCENES - N_TRAIN} held-out scenes\n{text}")
    gated = {c: row for c, row in table.items() if row["n"] >= MIN_ITEMS}
    assert len(gated) >= 10, f"too few categories with {MIN_ITEMS}+ held-out items to gate:\n{text}"
    over = {c: max(v for k, v in row.items() if k != "n") for c, row in gated.items()}
    over = {c: v for c, v in over.items() if v > BOUND}
    assert not over, f"categories answerable without the video (best guesser > {BOUND}): {over}\n{text}"


def _planted(n: int, seed: int, tell: str) -> list[dict]:
    """Items whose correct option carries a tell: the word "zebra", or being the longest option."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        words = ["cup", "book", "phone", "lamp", "door", "chair"]
        bodies = [" ".join(rng.sample(words, 2)) for _ in range(4)]
        k = rng.randrange(4)
        if tell == "word":
            bodies[k] += " zebra"
        else:
            bodies[k] = bodies[k] + " and a much longer tail"
        items.append({"question": f"Question {i}?", "options": [f"{'ABCD'[j]}) {b}" for j, b in enumerate(bodies)],
                      "answer": "ABCD"[k], "category": "X1", "format": "mcq", "template": "X1.t"})
    return items


@pytest.mark.parametrize("tell, guesser", [("word", "bow_logistic"), ("long", "longest_option"),
                                           ("long", "bow_logistic")])
def test_guessers_find_a_planted_tell(tell, guesser):
    """The gate means something only if the guessers do find tells when there are some."""
    table = blind_baseline_table(_planted(300, 1, tell), _planted(200, 2, tell))
    assert table["X1"][guesser] >= 0.9, table


def test_template_majority_learns_a_constant_answer():
    train = _planted(100, 3, "word")
    for item in train:  # the same answer text every time, at varying letters
        k = answer_index(item)
        item["options"][k] = f"{item['options'][k][:3]}always this"
    test = [dict(item) for item in train[:50]]
    by_name = {g.name: g for g in fit_guessers(train)}
    right = sum(by_name["template_majority"].predict(it) == answer_index(it) for it in test if is_scorable(it))
    assert right == 50
