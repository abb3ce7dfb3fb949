"""generate_qa: one video's events (+ tracks for who is present when) -> validated QA table."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Optional, Sequence

import pyarrow as pa

from qa_gen.config import QAConfig
from pipeline.schema import QA_SCHEMA, empty_table, table_from_rows
from qa_gen.assemble import build_row, named_persons, unit_qa_id
from qa_gen.balance import balance_answer_classes
from qa_gen.candidate import Candidate
from qa_gen.categories import CATEGORIES, FORMATS
from qa_gen.context import VideoContext, stable_hash
from qa_gen.events_view import Presence, clip_to, clip_to_shots, read_events
from qa_gen.looks import LookGeometry
from qa_gen.templates_cross import CROSS_FAMILIES
from qa_gen.templates_gaze import GAZE_FAMILIES
from qa_gen.templates_gesture import GESTURE_FAMILIES
from qa_gen.units import Activity, Shot, Unit, plan_units, shots_from_tracks, unit_rows, unit_view
from qa_gen.validate import ValidationContext, drop_conflicting_keys, drop_near_duplicates, validate_item

FAMILIES = GAZE_FAMILIES + GESTURE_FAMILIES + CROSS_FAMILIES


def _video_id(events: pa.Table, tracks: pa.Table) -> Optional[str]:
    ids = set()
    for table in (events, tracks):
        if table is not None and table.num_rows and "video_id" in table.column_names:
            column = table.column("video_id")
            if pa.types.is_dictionary(column.type):
                column = column.cast(column.type.value_type)
            ids.update(column.unique().to_pylist())
    if len(ids) > 1:
        raise ValueError(f"generate_qa takes one video at a time, got video_ids {sorted(ids)}")
    return ids.pop() if ids else None


def _observed_duration(events: pa.Table, tracks: Optional[pa.Table]) -> float:
    """How long a clip is when nobody said: up to its last tracks row or event end."""
    ends = [0.0]
    for table, column in ((tracks, "t"), (events, "end_time")):
        if table is not None and table.num_rows:
            ends.append(float(pa.compute.max(table.column(column)).as_py()))
    return max(ends)


def build_context(events: pa.Table, tracks: Optional[pa.Table], config: QAConfig, seed: int,
                  clip_duration: Optional[float] = None, aspect: Optional[float] = None,
                  objects: Optional[pa.Table] = None) -> Optional[VideoContext]:
    """The VideoContext templates read, or None for a video with no events (``aspect``: the frame's
    width / height, for reading the tracks' gaze directions; None: they are not read; ``objects``: the
    objects table (OBJECTS_SCHEMA), which places the objects looked at; None: objects cannot be placed)."""
    video_id = _video_id(events, tracks)
    if video_id is None or events.num_rows == 0:
        return None
    parsed = read_events(events)
    step = config.time_step_seconds
    has_tracks = tracks is not None and tracks.num_rows > 0
    if clip_duration is None:
        clip_duration = _observed_duration(events, tracks)
    if clip_duration <= 0:
        raise ValueError(f"video {video_id!r}: clip duration must be positive, got {clip_duration}")
    parsed = clip_to(parsed, clip_duration)
    presence = (Presence.from_tracks(tracks, tolerance=step) if has_tracks
                else Presence.from_events(parsed, clip_duration, step))
    parsed = clip_to_shots(parsed, presence)
    return VideoContext(video_id=video_id, events=parsed, presence=presence, duration=float(clip_duration),
                        step=step, seed=int(seed), reciprocal_window=config.reciprocal_window_seconds,
                        response_window=config.response_window_seconds,
                        min_evidence=config.min_evidence_seconds,
                        looks=LookGeometry(tracks, aspect, objects) if has_tracks and aspect else None,
                        who_margin_deg=config.who_margin_deg)


def candidates_of(ctx: VideoContext) -> list[Candidate]:
    out: list[Candidate] = []
    for family in FAMILIES:
        out.extend(family(ctx))
    # no false option names someone who may be a person the item already names, under another id: a man the
    # tracker lost for a moment and found again as a new id (issue 23: Person 1, Person 4 for a second, then
    # Person 1 again) would be a wrong option ("Person 4") whose answer is that same man
    for candidate in out:
        candidate.distractors = [d for d in candidate.distractors
                                 if not any(ctx.may_be_one_of(q, candidate.persons)
                                            for q in named_persons([d]) - set(candidate.persons))]
    return out


def _formats_for(category: str, config: QAConfig) -> tuple[str, ...]:
    if not config.formats:
        return (CATEGORIES[category].default_format,)
    unknown = set(config.formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"qa.formats has unknown format(s) {sorted(unknown)}; known: {list(FORMATS)}")
    return tuple(config.formats)


def _cap_per_category(rows: list[dict], limit: int, seed: int) -> list[dict]:
    """At most ``limit`` items per (category, format), taking question forms in turn so a category's
    items are not all of one form; which items is fixed by (seed, qa_id)."""
    groups: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        groups[(row["category"], row["format"])][row["template"]].append(row)
    kept = []
    for key in sorted(groups):
        queues = [sorted(v, key=lambda r: stable_hash(seed, r["qa_id"])) for _, v in sorted(groups[key].items())]
        taken = 0
        while taken < limit and any(queues):
            for queue in queues:
                if queue and taken < limit:
                    kept.append(queue.pop(0))
                    taken += 1
    return kept


def plan_video_units(events: pa.Table, tracks: Optional[pa.Table], config: QAConfig,
                     clip_duration: Optional[float] = None, shots: Optional[Sequence[Shot]] = None) -> list[Unit]:
    """The QA units of one video (see generate_qa for the arguments)."""
    duration = clip_duration if clip_duration is not None else _observed_duration(events, tracks)
    if shots is None:
        shots = shots_from_tracks(tracks, duration)
    return plan_units(shots, config.unit_min_seconds, config.unit_max_seconds, config.time_step_seconds,
                      Activity.of(events, tracks))


def generate_qa(events: pa.Table, tracks: pa.Table, config: QAConfig, seed: int,
                clip_duration: float | None = None,
                shots: Optional[Sequence[Shot]] = None, aspect: Optional[float] = None,
                objects: Optional[pa.Table] = None) -> tuple[pa.Table, dict[str, int]]:
    """QA items for ONE video (QA_SCHEMA), generated unit by unit (qa_gen/units.py), and how many
    candidate items were dropped, by reason. ``shots``: the video's camera shots (from every sampled
    frame); when not given they are read off the tracks' shot_id. Each item names its unit and counts
    its times from the unit start; an item citing an event that crosses a unit boundary is dropped.
    ``aspect``, ``objects``: see ``build_context``."""
    if events.num_rows == 0:
        return empty_table(QA_SCHEMA), {}
    units = plan_video_units(events, tracks, config, clip_duration, shots)
    tables, drops = [], Counter()
    for unit in units:
        unit_events, unit_tracks, crossing = unit_view(events, tracks, unit, config.time_step_seconds / 2,
                                                       last=unit is units[-1])
        qa, unit_drops = generate_clip_qa(unit_events, unit_tracks, config, seed, unit.duration, aspect,
                                          unit_rows(objects, unit, last=unit is units[-1]))
        drops.update(unit_drops)
        if crossing and qa.num_rows:
            cites = [bool(crossing & set(ids)) for ids in qa.column("source_event_ids").to_pylist()]
            if any(cites):
                drops["crosses_unit_boundary"] += sum(cites)
                qa = qa.filter(pa.array([not c for c in cites]))
        n = qa.num_rows
        ids = [unit_qa_id(q, unit.start) for q in qa.column("qa_id").to_pylist()]
        qa = qa.set_column(qa.schema.get_field_index("qa_id"), QA_SCHEMA.field("qa_id"), pa.array(ids, pa.string()))
        for name, value, kind in (("unit_id", unit.unit_id, pa.int32()), ("unit_start", unit.start, pa.float64()),
                                  ("unit_end", unit.end, pa.float64())):
            qa = qa.set_column(qa.schema.get_field_index(name), QA_SCHEMA.field(name), pa.array([value] * n, kind))
        tables.append(qa)
    if not tables:
        return empty_table(QA_SCHEMA), dict(sorted(drops.items()))
    return pa.concat_tables(tables), dict(sorted(drops.items()))


def generate_clip_qa(events: pa.Table, tracks: pa.Table, config: QAConfig, seed: int,
                     clip_duration: float | None = None, aspect: Optional[float] = None,
                     objects: Optional[pa.Table] = None) -> tuple[pa.Table, dict[str, int]]:
    """QA items for ONE clip (a unit, with times from its start) and the drops by reason.

    Deterministic for (seed, video, inputs) and independent of other videos. Answer letters are dealt
    round-robin over the video's mcq items in an order fixed by (seed, qa_id), from an offset fixed by
    (seed, video_id): every video is balanced to within one item per letter, so a corpus is too.
    """
    ctx = build_context(events, tracks, config, seed, clip_duration, aspect, objects)
    drops: Counter = Counter()
    if ctx is None:
        return empty_table(QA_SCHEMA), {}
    check = ValidationContext(ctx.presence, ctx.duration, frozenset(ctx.by_id))

    staged: list[tuple[dict, Candidate]] = []
    seen_ids: set[str] = set()
    for candidate in candidates_of(ctx):
        for fmt in _formats_for(candidate.category, config):
            if fmt == "mcq" and len(candidate.distractors) < 3:
                drops["too_few_distractors"] += 1
                continue
            row = build_row(ctx, candidate, fmt, letter_index=0)
            if row["qa_id"] in seen_ids:
                drops["duplicate_id"] += 1
                continue
            reason = validate_item(row, check)
            if reason is not None:
                drops[reason] += 1
                continue
            seen_ids.add(row["qa_id"])
            staged.append((row, candidate))

    rows, n_conflict = drop_conflicting_keys([r for r, _ in staged])
    if n_conflict:
        drops["same_question_other_answer"] += n_conflict
    rows, n_dup = drop_near_duplicates(rows, config.near_duplicate_threshold)
    if n_dup:
        drops["near_duplicate"] += n_dup
    by_id = {r["qa_id"]: c for r, c in staged}
    rows, n_unbalanced = balance_answer_classes(rows, {q: c.answer_class for q, c in by_id.items()}, seed)
    if n_unbalanced:
        drops["answer_class_balance"] += n_unbalanced
    rows = _cap_per_category(rows, config.max_items_per_category, seed)

    # Deal letters over the kept mcq items, then rebuild those items with their final letter.
    mcq = sorted((r for r in rows if r["format"] == "mcq"), key=lambda r: stable_hash(seed, r["qa_id"], "letter"))
    offset = stable_hash(seed, ctx.video_id, "letters") % 4
    letter_of = {r["qa_id"]: (offset + i) % 4 for i, r in enumerate(mcq)}
    final = []
    for row in rows:
        if row["format"] == "mcq":
            row = build_row(ctx, by_id[row["qa_id"]], "mcq", letter_of[row["qa_id"]])
            reason = validate_item(row, check)
            if reason is not None:  # cannot happen for a letter change; counted rather than hidden
                drops[reason] += 1
                continue
        final.append(row)
    final.sort(key=lambda r: (r["category"], r["format"], r["time_range"][0], r["qa_id"]))
    return table_from_rows(final, QA_SCHEMA), dict(sorted(drops.items()))
