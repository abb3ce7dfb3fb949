"""Counts in messages: "1 event", "2 events", "1 QA item" (never "1 events")."""
from __future__ import annotations

IRREGULAR = {"person": "people"}


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, the noun in the plural unless ``count`` is 1 ("1 video", "3 videos",
    "2 people"); the last word is the one made plural ("2 QA items")."""
    if count == 1:
        return f"{count} {noun}"
    head, _, last = noun.rpartition(" ")
    many = IRREGULAR.get(last) or (last[:-1] + "ies" if last.endswith("y") and last[-2:-1] not in "aeiou"
                                   else last + "es" if last.endswith(("s", "x", "ch", "sh")) else last + "s")
    return f"{count} {head + ' ' if head else ''}{many}"
