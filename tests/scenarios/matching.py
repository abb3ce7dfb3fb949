"""Comparing detected events with a scenario's ground truth: temporal IoU and one-to-one matching by
type, persons and roles."""
from __future__ import annotations

import pyarrow as pa

from tests.scenarios.truth import TruthEvent



def temporal_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def _roles_agree(truth: TruthEvent, row: dict) -> bool:
    if tuple(row["persons_involved"]) != tuple(truth.persons):
        return False
    for mine, theirs in ((truth.initiator, "initiator_id"), (truth.leader, "leader_id"),
                         (truth.follower, "follower_id"), (truth.target_person, "target_person_id")):
        if mine is not None and row[theirs] != mine:
            return False
    return True


def match_events(truth: list[TruthEvent], events: pa.Table, event_types, min_iou: float = 0.7):
    """Pair truth events with detected rows of the same type, persons and roles at temporal IoU >= min_iou.
    Returns (missed truth events, unexpected detected rows) restricted to ``event_types``."""
    rows = [r for r in events.to_pylist() if r["event_type"] in event_types]
    used = set()
    missed = []
    for ev in (e for e in truth if e.event_type in event_types):
        best, best_iou = None, min_iou
        for i, r in enumerate(rows):
            if i in used or r["event_type"] != ev.event_type or not _roles_agree(ev, r):
                continue
            iou = temporal_iou((ev.start, ev.end), (r["start_time"], r["end_time"]))
            if iou >= best_iou:
                best, best_iou = i, iou
        if best is None:
            missed.append(ev)
        else:
            used.add(best)
    unexpected = [r for i, r in enumerate(rows) if i not in used]
    return missed, unexpected
