"""Bridging short gaps in each person's measured gaze (GRASP's rule, in seconds instead of frames).

A face is missed for a frame or two when someone blinks, turns or is briefly occluded; events should
not break there. Per person and per camera shot, a gap in the measured gaze (frames where the person
is present but no gaze was measured) is:

- interpolated when it lasts at most ``interpolate_max_seconds`` and is measured on both sides;
- otherwise carried forward from the last measurement, with confidence decaying linearly with the
  time since it, when it lasts at most ``carry_max_seconds``;
- left empty when longer, when nothing was measured before it, or across a cut (never bridged).

Filled frames are marked so events that need measured gaze (mutual gaze) can skip them.
"""
from __future__ import annotations

import numpy as np

from detectors.observation import FrameObservations
from detectors.config import GazeConfig
from detectors.gaze import weighted_unit_mean

_EPS_S = 1e-6


def fill_gaze_gaps(
    observations: list[FrameObservations], times: np.ndarray, shot_ids: np.ndarray, config: GazeConfig
) -> list[np.ndarray]:
    """Fill gaze gaps in place (``gaze_dir``, ``gaze_origin``, ``gaze_conf``, ``gaze_source``) of
    observations whose ``tracker_id`` holds person ids. Returns per frame an (N,) bool array, True
    for rows whose gaze was filled rather than measured."""
    times = np.asarray(times, np.float64)
    shot_ids = np.asarray(shot_ids)
    filled = [np.zeros(len(o), bool) for o in observations]
    period = float(np.median(np.diff(times))) if len(times) > 1 else 0.0

    # where each person appears: person -> list of (frame position, row)
    sightings: dict[int, list[tuple[int, int]]] = {}
    for position, frame in enumerate(observations):
        for row, person in enumerate(frame.tracker_id):
            sightings.setdefault(int(person), []).append((position, row))

    for rows in sightings.values():
        shots = np.array([shot_ids[p] for p, _ in rows])
        for shot in np.unique(shots):
            in_shot = [rows[k] for k in np.flatnonzero(shots == shot)]
            _fill_person_shot(observations, times, in_shot, period, config, filled)
    return filled


def _measured(frame: FrameObservations, row: int) -> bool:
    return bool(frame.gaze_conf[row] > 0 and np.all(np.isfinite(frame.gaze_dir[row])))


def _fill_person_shot(
    observations: list[FrameObservations],
    times: np.ndarray,
    rows: list[tuple[int, int]],
    period: float,
    config: GazeConfig,
    filled: list[np.ndarray],
) -> None:
    measured = np.array([_measured(observations[p], r) for p, r in rows])
    k = 0
    while k < len(rows):
        if measured[k]:
            k += 1
            continue
        gap_start = k
        while k < len(rows) and not measured[k]:
            k += 1
        gap_end = k  # exclusive; rows[gap_end] is the next measurement, if any
        if gap_start == 0:
            continue  # nothing measured before: nothing to carry
        before = rows[gap_start - 1]
        after = rows[gap_end] if gap_end < len(rows) else None
        t_before = times[before[0]]
        # time without a measurement: up to the next one, or to the end of this sighting run
        t_until = times[after[0]] if after is not None else times[rows[gap_end - 1][0]] + period
        unmeasured = t_until - t_before - period
        if after is not None and unmeasured <= config.interpolate_max_seconds + _EPS_S:
            for position, row in rows[gap_start:gap_end]:
                weight = (times[position] - t_before) / (t_until - t_before)
                _interpolate(observations, before, after, (position, row), weight)
                filled[position][row] = True
        elif unmeasured <= config.carry_max_seconds + _EPS_S:
            for position, row in rows[gap_start:gap_end]:
                decay = 1.0 - (times[position] - t_before) / (config.carry_max_seconds + period + _EPS_S)
                _carry(observations, before, (position, row), max(decay, 0.0))
                filled[position][row] = True


def _head_centre(frame: FrameObservations, row: int) -> np.ndarray:
    head = frame.head_xyxy[row]
    return (head[:2] + head[2:]) / 2


def _interpolate(observations, before, after, target, weight: float) -> None:
    (pb, rb), (pa, ra), (pt, rt) = before, after, target
    a, b, out = observations[pb], observations[pa], observations[pt]
    blend = (1 - weight, weight)
    direction = weighted_unit_mean(blend, a.gaze_dir[rb], b.gaze_dir[ra])
    out.gaze_dir[rt] = direction if direction is not None else a.gaze_dir[rb]
    out.gaze_origin[rt] = (1 - weight) * a.gaze_origin[rb] + weight * b.gaze_origin[ra]
    out.gaze_conf[rt] = min(a.gaze_conf[rb], b.gaze_conf[ra])
    out.gaze_eye_cues[rt] = min(a.gaze_eye_cues[rb], b.gaze_eye_cues[ra])
    eye_direction = weighted_unit_mean(blend, a.gaze_eye_dir[rb], b.gaze_eye_dir[ra])  # None unless both have one
    out.gaze_eye_dir[rt] = eye_direction if eye_direction is not None else np.nan
    out.gaze_source[rt] = a.gaze_source[rb]


def _carry(observations, before, target, decay: float) -> None:
    (pb, rb), (pt, rt) = before, target
    a, out = observations[pb], observations[pt]
    out.gaze_dir[rt] = a.gaze_dir[rb]
    # the eyes move with the head: shift the origin by the head's displacement when both are known
    shift = _head_centre(out, rt) - _head_centre(a, rb)
    out.gaze_origin[rt] = a.gaze_origin[rb] + (shift if np.all(np.isfinite(shift)) else 0.0)
    out.gaze_conf[rt] = a.gaze_conf[rb] * decay
    out.gaze_eye_cues[rt] = a.gaze_eye_cues[rb]
    out.gaze_eye_dir[rt] = a.gaze_eye_dir[rb]
    out.gaze_source[rt] = a.gaze_source[rb]
