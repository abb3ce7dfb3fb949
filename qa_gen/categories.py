"""The 16 GRASP categories (DESIGN.md §6): code, name, difficulty tier and default format."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    code: str
    name: str
    difficulty: str  # easy | medium | hard: the category's tier
    default_format: str  # mcq | open_ended


CATEGORIES: dict[str, Category] = {
    c.code: c
    for c in (
        Category("T1", "Gaze Target Identification", "easy", "mcq"),
        Category("T2", "Gaze Event Classification", "easy", "mcq"),
        Category("T3", "Temporal Gaze Reasoning", "medium", "mcq"),
        Category("T4", "Mutual Gaze Recognition", "medium", "mcq"),
        Category("T5", "Gaze Following & Social Influence", "hard", "mcq"),
        Category("T6", "Group Attention Dynamics", "hard", "open_ended"),
        Category("G1", "Gesture Recognition", "easy", "mcq"),
        Category("G2", "Gesture Type", "easy", "mcq"),
        Category("G3", "Gesture Temporal Reasoning", "medium", "mcq"),
        Category("G4", "Gesture Frequency & Distribution", "medium", "mcq"),
        Category("G5", "Gesture Sequence Chains", "hard", "open_ended"),
        Category("G6", "Reciprocal Gesture Patterns", "hard", "mcq"),
        Category("C1", "Gaze-Gesture Temporal Alignment", "medium", "mcq"),
        Category("C2", "Eye Contact During Interaction", "medium", "mcq"),
        Category("C3", "Gaze Response to Gesture", "hard", "open_ended"),
        Category("C4", "Cross-Modal Person Dynamics", "hard", "open_ended"),
    )
}

FORMATS = ("mcq", "open_ended")
