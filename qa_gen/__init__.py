"""socialtrace: qa_gen. Events -> question-answer pairs in the 16 GRASP categories (DESIGN.md §6),
correct by construction and validated before they are kept, and the items of the GRASP-Bench /
LLaVA-Video exports (qa_gen/export.py; the files and clips are pipeline/export.py's).

Public API: ``generate_qa`` (one video), ``validate_item``.
"""
from qa_gen.categories import CATEGORIES
from qa_gen.generate import generate_qa
from qa_gen.validate import ValidationContext, validate_item

__all__ = ["CATEGORIES", "generate_qa", "validate_item", "ValidationContext"]
