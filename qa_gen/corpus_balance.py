"""Answer classes balanced across a whole corpus (every video of an output folder), not only per clip.

Per-clip balancing (qa_gen/balance.py) cannot remove a prior the whole corpus shares: when nearly every
clip's "which gesture" answer is Pointing and nearly every count is 1, a model that learnt this on other
clips scores without watching. Within a category, no option text may be the key of more items than its
share: the number of items offering it over the number of options (a text offered in every item may
be the key of a quarter of them). While some text is over its share, an item keyed with the text most
over it (the majority class) is dropped; which one is fixed by (seed, qa_id). Nothing is ever reworded:
an item is kept as it is or dropped.

A text that names a person counts as its shape ("Person 2's hands" is "Person N's hands"): which person is
meant can only be seen in the video, but "a person" against "their own hands" or "the camera" is a class a
corpus can be skewed towards (real people mostly look at each other), and a guesser that always picks the
option naming a person would score without watching. (Per clip, qa_gen/balance.py balances the kinds of
answer too; the blind baselines check what is left.)

The answer letters of a video that lost items are dealt again over its remaining mcq items (the same
round-robin as generate_clip_qa), so each video stays letter-balanced to within one item per letter.
Balancing a balanced corpus changes nothing.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Iterable, Optional

from qa_gen.context import stable_hash

LETTERS = "ABCD"
_PERSON = re.compile(r"\bPerson \d+\b")


def option_body(option: str) -> str:
    return option[3:] if len(option) > 2 and option[1:3] == ") " else option


def answer_form(text: str) -> Optional[str]:
    """The balance class of an option: its text, with every person named "Person N" (which person is meant
    can only be seen in the video, but "a person" against "their own hands" or "the camera" is a class)."""
    return _PERSON.sub("Person N", text.strip())


def _balanced(row: dict) -> bool:
    return row.get("format") == "mcq" and len(row.get("options") or []) == len(LETTERS) and row.get("answer") in LETTERS


def over_share(rows: Iterable[dict]) -> dict[str, dict[str, int]]:
    """{category: {form: keyed - share}} for every form keyed more often than its share (empty: balanced)."""
    keyed: dict[str, Counter] = defaultdict(Counter)
    offered: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        if _balanced(row):
            keyed[row["category"]][answer_form(row["answer_text"])] += 1
            offered[row["category"]].update(answer_form(option_body(o)) for o in row["options"])
    for counts in list(keyed.values()) + list(offered.values()):
        counts.pop(None, None)
    out: dict[str, dict[str, int]] = {}
    for category, counts in keyed.items():
        excess = {f: k - _share(offered[category][f]) for f, k in counts.items()}
        excess = {f: v for f, v in excess.items() if v > 0}
        if excess:
            out[category] = excess
    return out


def _share(n_offered: int) -> int:
    return max(1, math.ceil(n_offered / len(LETTERS)))


def balance_corpus(rows: list[dict], seed: int) -> tuple[list[dict], dict[str, int]]:
    """(kept rows in their order with letters re-dealt where a video lost items, dropped per category)."""
    by_category: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if _balanced(row):
            by_category[row["category"]].append(row)
    dropped: set[str] = set()
    dropped_per_category: Counter = Counter()
    for category, items in sorted(by_category.items()):
        forms = {r["qa_id"]: [answer_form(option_body(o)) for o in r["options"]] for r in items}
        keyed = Counter(answer_form(r["answer_text"]) for r in items)
        offered = Counter(f for r in items for f in forms[r["qa_id"]])
        queues: dict[str, list[dict]] = defaultdict(list)
        for r in sorted(items, key=lambda r: stable_hash(seed, r["qa_id"], "corpus")):
            queues[answer_form(r["answer_text"])].append(r)
        while True:
            excess = {f: k - _share(offered[f]) for f, k in keyed.items() if k and f is not None}
            # the form most over its share first (the majority class), then the more common, then by name
            worst = max(excess, key=lambda f: (excess[f], keyed[f], f), default=None)
            if worst is None or excess[worst] <= 0:
                break
            row = queues[worst].pop(0)
            dropped.add(row["qa_id"])
            dropped_per_category[category] += 1
            keyed[worst] -= 1
            offered.subtract(forms[row["qa_id"]])
    if not dropped:
        return list(rows), {}
    touched = {r["video_id"] for r in rows if r["qa_id"] in dropped}
    kept = [r for r in rows if r["qa_id"] not in dropped]
    letters = deal_letters([r for r in kept if r["video_id"] in touched and _balanced(r)], seed)
    kept = [reletter(r, letters[r["qa_id"]]) if r["qa_id"] in letters else r for r in kept]
    return kept, dict(sorted(dropped_per_category.items()))


def deal_letters(rows: list[dict], seed: int) -> dict[str, int]:
    """qa_id -> letter index, dealt round-robin per video over its mcq items in an order fixed by
    (seed, qa_id), from an offset fixed by (seed, video_id) (as generate_clip_qa deals a clip's)."""
    by_video: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_video[row["video_id"]].append(row)
    out: dict[str, int] = {}
    for video_id, items in by_video.items():
        items = sorted(items, key=lambda r: stable_hash(seed, r["qa_id"], "letter"))
        offset = stable_hash(seed, video_id, "letters") % len(LETTERS)
        out.update({r["qa_id"]: (offset + i) % len(LETTERS) for i, r in enumerate(items)})
    return out


def reletter(row: dict, letter_index: int) -> dict:
    """The same item with its correct option moved to ``letter_index``; the wrong options keep their
    order (what build_row gives for that letter)."""
    bodies = [option_body(o) for o in row["options"]]
    correct = bodies.pop(LETTERS.index(row["answer"]))
    bodies.insert(letter_index, correct)
    return {**row, "options": [f"{LETTERS[i]}) {b}" for i, b in enumerate(bodies)], "answer": LETTERS[letter_index]}
