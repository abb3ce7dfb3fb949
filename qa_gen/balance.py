"""Answer classes balanced per template within a clip.

Balancing answer letters is not enough: when a template's answer is nearly always of one kind ("not within
3 seconds", "nobody", eye contact), a model learns that prior instead of watching. Each candidate names its
answer class; within one clip no class of a template keeps more items than its rarest class present, so
a clip whose events all give the same kind of answer contributes one such item.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Mapping

from qa_gen.context import stable_hash


def balance_answer_classes(rows: list[dict], answer_class: Mapping[str, str], seed: int) -> tuple[list[dict], int]:
    """(kept rows in their order, number dropped). ``answer_class``: qa_id -> class ("" = not balanced).
    Which items of an over-represented class are kept is fixed by (seed, qa_id)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        cls = answer_class.get(row["qa_id"], "")
        if cls:
            groups[(row["template"], row["format"])].append(row)
    dropped: set[str] = set()
    for items in groups.values():
        by_class: dict[str, list[dict]] = defaultdict(list)
        for row in items:
            by_class[answer_class[row["qa_id"]]].append(row)
        cap = min(len(v) for v in by_class.values())
        for members in by_class.values():
            ordered = sorted(members, key=lambda r: stable_hash(seed, r["qa_id"], "balance"))
            dropped.update(r["qa_id"] for r in ordered[cap:])
    return [r for r in rows if r["qa_id"] not in dropped], len(dropped)
