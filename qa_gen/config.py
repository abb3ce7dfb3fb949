"""Settings of QA generation.

Part of the one configuration (pipeline/config.py assembles every section into ``Config``; users set these
under the section name in ``--config`` YAML). Times are in seconds, never frames, so results do not change
with the sampling rate."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QAConfig:
    formats: tuple[str, ...] = ()  # () = each category's default format; ("mcq",) = all mcq
    max_items_per_category: int = 6  # per clip
    near_duplicate_threshold: float = 0.9  # question similarity above which the later item is dropped
    time_step_seconds: float = 0.5  # times printed in questions are rounded to this
    reciprocal_window_seconds: float = 3.0  # G6: a gesture back within this long after the first one ends
    response_window_seconds: float = 3.0  # C3/T5: how long after a gesture or gaze a response counts
    # no item rests on an event shorter than this, nor on two events that contradict each other for this
    # long (one person on two targets, eye contact during its own breaking off); also the margin at the
    # clip's ends within which an event's start or end was not observed (no "how long" about it)
    min_evidence_seconds: float = 0.25
    # an item that names the one person looking at something (T1 "who") needs every other person present
    # seen looking at least this far from it (degrees; the camera cone plus the widest read uncertainty,
    # 12 + 15) at every sampled frame of its window: a look the events stage missed leaves no event, so
    # the absence of other looks is not evidence (qa_gen/looks.py)
    who_margin_deg: float = 27.0
    # QA units (qa_gen/units.py): GRASP-style clips of whole shots; question times count from the unit start
    unit_min_seconds: float = 45.0
    unit_max_seconds: float = 120.0

    def __post_init__(self) -> None:
        if not 0 < self.unit_min_seconds <= self.unit_max_seconds:
            raise ValueError(f"qa.unit_min_seconds ({self.unit_min_seconds}) and qa.unit_max_seconds "
                             f"({self.unit_max_seconds}) must satisfy 0 < min <= max")


@dataclass(frozen=True)
class ScoreConfig:
    """Settings of `socialtrace score` (qa_gen/scoring.py). Not part of a run's ``Config``: scoring reads
    finished tables and never changes them, so these must not change a run's config hash."""

    time_tolerance_seconds: float = 0.5  # a stated time within this of the reference's counts (one 2 fps step)
    blind_folds: int = 5  # cross-validation folds (over videos) for the blind text-only guessers
