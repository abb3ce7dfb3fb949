"""Support of an event: in how many of its frames the cue was seen, and how confidently.

Confidence of an interval = fraction of its frames where the cue was seen x mean confidence (gaze_conf,
point_conf) on those frames; computed for all intervals of a detector at once (Numba kernel
``interval_support``) rather than per event."""
from __future__ import annotations

import numpy as np

from events import kernels


def pooled_support(
    seen: np.ndarray,
    conf: np.ndarray,
    seen_row: np.ndarray,
    conf_row: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    event: np.ndarray | None = None,
    n_events: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames where a cue was seen, summed confidence there and frames in all, for many intervals.

    ``seen`` (R, F) bool, ``conf`` (W, F) float64. Entry i is one row of one interval: frames
    ``starts[i]..ends[i]`` of ``seen[seen_row[i]]`` weighted by ``conf[conf_row[i]]``. Without ``event``
    every entry is its own interval; with it, the entries of each event (0..n_events-1) are pooled, as
    when several people's looks make up one event. Returns (seen counts, confidence sums, sizes)."""
    counts, sums = kernels.interval_support(seen, conf, seen_row, conf_row, starts, ends)
    size = ends - starts + 1
    if event is None:
        return counts, sums, size
    pooled = np.zeros(n_events, np.int64), np.zeros(n_events, np.float64), np.zeros(n_events, np.int64)
    for total, part in zip(pooled, (counts, sums, size)):
        np.add.at(total, event, part)
    return pooled


def support_confidence(counts: np.ndarray, sums: np.ndarray, size: np.ndarray) -> list[float]:
    """Confidence = fraction of the frames where the cue was seen x mean confidence on those frames
    (0 where it was never seen), from :func:`pooled_support`."""
    out = np.zeros(len(counts), np.float64)
    seen = counts > 0
    out[seen] = (counts[seen] / size[seen]) * (sums[seen] / counts[seen])
    return out.tolist()


def interval_confidence(seen: np.ndarray, conf: np.ndarray, seen_rows, conf_rows, start: int, end: int) -> float:
    """:func:`support_confidence` of one interval pooled over several rows (the people involved)."""
    seen_rows = np.asarray(seen_rows, np.int64).reshape(-1)
    n = len(seen_rows)
    counts, sums, size = pooled_support(
        seen, conf, seen_rows, np.asarray(conf_rows, np.int64).reshape(-1), np.full(n, start, np.int64),
        np.full(n, end, np.int64), np.zeros(n, np.int64), 1,
    )
    return support_confidence(counts, sums, size)[0]
