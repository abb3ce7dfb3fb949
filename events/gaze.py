"""Gaze events from per-frame gaze targets: gaze_at, mutual_gaze, gaze_aversion, joint_attention,
gaze_following, attention_capture and sudden_gaze_shift (DESIGN.md §5, thresholds in EventConfig)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from events import kernels
from events.arrays import GAZE_TARGET_TYPES, TrackArrays
from events.records import Event, span
from events.targets import CAMERA, OBJECT, PERSON, TARGET_CODES, UNKNOWN, target_columns
from pipeline.config import EventConfig


@dataclass
class GazeRelations:
    """Dense gaze relations of one video: the targets people look at and who looks at which, per frame."""

    target_kind: np.ndarray  # (T,) gaze target type code of each target
    target_id: np.ndarray  # (T,) person_id / object_id (-1 for the camera)
    raw: np.ndarray  # (P, T, F) bool, as in the tracks
    looking: np.ndarray  # (P, T, F) bool, smoothed (short gaps bridged, blips dropped)

    def index(self, kind: int, target_id: int) -> int:
        """Target row of (kind, id), -1 when nobody ever looks at it."""
        hit = np.nonzero((self.target_kind == kind) & (self.target_id == target_id))[0]
        return int(hit[0]) if len(hit) else -1

    def kind_name(self, k: int) -> str:
        return GAZE_TARGET_TYPES[int(self.target_kind[k])]


def gaze_relations(arrays: TrackArrays, config: EventConfig) -> GazeRelations:
    """People x targets x frames occupancy from the tracks' gaze_target_type / gaze_target_id."""
    kind, tid = arrays.gaze_type, arrays.gaze_id
    names_a_thing = np.isin(kind, TARGET_CODES) & ((tid >= 0) | (kind == CAMERA)) & arrays.present
    tid = np.where(kind == CAMERA, -1, tid)
    key = kind * (int(tid.max(initial=0)) + 2) + (tid + 1)
    unique_keys, first = np.unique(key[names_a_thing], return_index=True)
    target_kind = kind[names_a_thing][first]
    target_id = tid[names_a_thing][first]
    target_index = np.full(kind.shape, -1, np.int64)
    target_index[names_a_thing] = np.searchsorted(unique_keys, key[names_a_thing])
    raw = kernels.target_occupancy(target_index, len(unique_keys))
    n_people, n_targets, n_frames = raw.shape
    looking = kernels.smooth_runs(
        raw.reshape(n_people * n_targets, n_frames), arrays.segment,
        arrays.frames(config.smoothing_gap_seconds), arrays.min_frames(config.smoothing_blip_seconds),
    ).reshape(raw.shape)
    return GazeRelations(target_kind=target_kind, target_id=target_id, raw=raw, looking=looking)


def _mean(values: np.ndarray, start: int, end: int) -> float:
    part = values[start : end + 1]
    return float(part.mean()) if len(part) else 0.0


def _support_conf(raw_rows: np.ndarray, conf: np.ndarray, start: int, end: int) -> float:
    """Confidence of an interval = fraction of its frames where the cue was seen x mean confidence there.
    ``raw_rows`` (k, F) bool for the k people involved, ``conf`` (k, F)."""
    seen = raw_rows[:, start : end + 1]
    if seen.size == 0 or not seen.any():
        return 0.0
    return float(seen.mean() * conf[:, start : end + 1][seen].mean())


def _target_details(relations: GazeRelations, k: int) -> dict:
    kind = relations.kind_name(k)
    target_id = int(relations.target_id[k])
    return {"target_type": kind, "target_id": None if kind == "camera" else target_id}


def _target_fields(arrays: TrackArrays, relations: GazeRelations, k: int) -> dict:
    kind = relations.kind_name(k)
    return target_columns(arrays, kind, None if kind == "camera" else int(relations.target_id[k]))


def detect_gaze_at(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """One event per stable (person, target) interval of at least min_gaze_at_seconds."""
    n_people, n_targets, n_frames = relations.looking.shape
    rows, starts, ends = kernels.extract_runs(relations.looking.reshape(-1, n_frames), arrays.segment)
    keep = ends - starts + 1 >= arrays.min_frames(config.min_gaze_at_seconds)
    events = []
    for row, s, e in zip(rows[keep], starts[keep], ends[keep]):
        p, k = divmod(int(row), n_targets)
        pid = int(arrays.person_ids[p])
        t0, t1 = span(arrays, s, e)
        details = _target_details(relations, k)
        details["support"] = round(float(relations.raw[p, k, s : e + 1].mean()), 4)
        events.append(Event(
            source="gaze", event_type="gaze_at", start=int(s), end=int(e), start_time=t0, end_time=t1,
            persons=(pid,), initiator=pid,
            confidence=_support_conf(relations.raw[p, k][None], arrays.gaze_conf[p][None], s, e),
            details=details, **_target_fields(arrays, relations, k),
        ))
    return events


def _pair_looks(arrays: TrackArrays, relations: GazeRelations, matrix: np.ndarray):
    """(i, j, i-looks-at-j's-face row, j-looks-at-i's-face row) for every pair with both rows present."""
    for i in range(arrays.n_people):
        for j in range(i + 1, arrays.n_people):
            ki = relations.index(PERSON, int(arrays.person_ids[j]))
            kj = relations.index(PERSON, int(arrays.person_ids[i]))
            if ki >= 0 and kj >= 0:
                yield i, j, matrix[i, ki], matrix[j, kj]


def detect_mutual_gaze(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """A on B's face and B on A's face at once; gaps up to mutual_gaze_merge_gap_seconds merged."""
    pairs, masks, raws = [], [], []
    for (i, j, ij, ji), (_, _, rij, rji) in zip(
        _pair_looks(arrays, relations, relations.looking), _pair_looks(arrays, relations, relations.raw)
    ):
        pairs.append((i, j))
        masks.append(ij & ji)
        raws.append(rij & rji)
    if not pairs:
        return []
    min_len = arrays.min_frames(config.min_mutual_gaze_seconds)
    merged = kernels.smooth_runs(
        np.array(masks), arrays.segment, arrays.frames(config.mutual_gaze_merge_gap_seconds), min_len
    )
    # the long merge gap must not bridge a stretch where one of the pair is out of view
    there = kernels.smooth_runs(arrays.present, arrays.segment, arrays.frames(config.smoothing_gap_seconds), 1)
    both_there = np.array([there[i] & there[j] for i, j in pairs])
    merged = kernels.smooth_runs(merged & both_there, arrays.segment, 0, min_len)
    rows, starts, ends = kernels.extract_runs(merged, arrays.segment)
    events = []
    for row, s, e in zip(rows, starts, ends):
        i, j = pairs[row]
        ids = (int(arrays.person_ids[i]), int(arrays.person_ids[j]))
        # who started looking first: the earlier onset of the two looks that make up the contact
        ki = relations.index(PERSON, ids[1])
        kj = relations.index(PERSON, ids[0])
        onset_i = _run_start(relations.looking[i, ki], arrays.segment, s)
        onset_j = _run_start(relations.looking[j, kj], arrays.segment, s)
        first = None
        if onset_i != onset_j and min(onset_i, onset_j) > 0 and arrays.segment[min(onset_i, onset_j) - 1] == arrays.segment[s]:
            first = ids[0] if onset_i < onset_j else ids[1]
        t0, t1 = span(arrays, s, e)
        conf = _support_conf(np.array([raws[row], raws[row]]), arrays.gaze_conf[[i, j]], s, e)
        events.append(Event(
            source="gaze", event_type="mutual_gaze", start=int(s), end=int(e), start_time=t0, end_time=t1,
            persons=ids, initiator=first, target_type="person", confidence=conf,
            details={"first_looker": first, "support": round(float(raws[row][s : e + 1].mean()), 4)},
        ))
    return events


def _run_start(mask: np.ndarray, segment: np.ndarray, frame: int) -> int:
    """First frame of the True run of ``mask`` that contains or follows ``frame`` (within its segment)."""
    f = frame
    while f < len(mask) - 1 and not mask[f] and segment[f + 1] == segment[frame]:
        f += 1
    while f > 0 and mask[f - 1] and segment[f - 1] == segment[f]:
        f -= 1
    return f


def detect_gaze_aversion(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """Eye contact of at least aversion_min_contact_seconds ends because one partner looks away while the
    other keeps looking for at least aversion_min_hold_seconds."""
    min_contact = arrays.min_frames(config.aversion_min_contact_seconds)
    min_hold = arrays.min_frames(config.aversion_min_hold_seconds)
    events = []
    for i, j, ij, ji in _pair_looks(arrays, relations, relations.looking):
        contact = ij & ji
        _, starts, ends = kernels.extract_runs(contact[None], arrays.segment)
        for s, e in zip(starts, ends):
            b = e + 1  # first frame after the contact
            if e - s + 1 < min_contact or b >= arrays.n_frames or arrays.segment[b] != arrays.segment[e]:
                continue
            if ij[b] == ji[b]:
                continue  # both looked away together (or the contact only paused)
            averter, holder = (i, j) if not ij[b] else (j, i)
            holding = ji if holder == j else ij
            h = b
            while h + 1 < arrays.n_frames and holding[h + 1] and arrays.segment[h + 1] == arrays.segment[b]:
                h += 1
            # the averter must still be there, looking somewhere known: leaving the frame is not aversion
            if h - b + 1 < min_hold or not arrays.present[averter, b] or arrays.gaze_type[averter, b] == UNKNOWN:
                continue
            averter_id, holder_id = int(arrays.person_ids[averter]), int(arrays.person_ids[holder])
            t0, t1 = span(arrays, b, h)
            new_kind = GAZE_TARGET_TYPES[int(arrays.gaze_type[averter, b])]
            new_id = int(arrays.gaze_id[averter, b])
            events.append(Event(
                source="gaze", event_type="gaze_aversion", start=int(b), end=int(h), start_time=t0, end_time=t1,
                persons=tuple(sorted((averter_id, holder_id))), initiator=averter_id, target_type="person",
                target_person=holder_id,
                confidence=_support_conf(
                    relations.raw[[holder], relations.index(PERSON, averter_id)], arrays.gaze_conf[[holder]], b, h
                ),
                details={
                    "averter_id": averter_id, "holder_id": holder_id,
                    "contact_start_time": float(arrays.times[s]), "contact_seconds": round(span(arrays, s, e)[1] - float(arrays.times[s]), 4),
                    "averted_to_type": new_kind, "averted_to_id": new_id if new_id >= 0 else None,
                },
            ))
    return events


def detect_joint_attention(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """Two or more people on the same target, or (no target box) gaze points converging on one place."""
    events = []
    n_people, n_targets, n_frames = relations.looking.shape
    min_len = arrays.min_frames(config.min_joint_attention_seconds)
    gap, blip = arrays.frames(config.smoothing_gap_seconds), arrays.min_frames(config.smoothing_blip_seconds)
    if n_targets:
        shared = kernels.smooth_runs(relations.looking.sum(axis=0) >= 2, arrays.segment, gap, blip)
        rows, starts, ends = kernels.extract_runs(shared, arrays.segment)
        for k, s, e in zip(rows, starts, ends):
            if e - s + 1 < min_len:
                continue
            lookers = relations.looking[:, k, s : e + 1]
            at_start = np.nonzero(lookers[:, 0])[0]
            if len(at_start) < 2:  # the group formed inside a bridged gap: take who looks most of the time
                at_start = np.nonzero(lookers.mean(axis=1) >= 0.5)[0]
            if len(at_start) < 2:
                continue
            joined = [int(arrays.person_ids[p]) for p in np.nonzero(lookers.any(axis=1))[0] if p not in at_start]
            ids = tuple(int(arrays.person_ids[p]) for p in at_start)
            t0, t1 = span(arrays, int(s), int(e))
            details = _target_details(relations, int(k))
            details["joined_later"] = joined
            events.append(Event(
                source="gaze", event_type="joint_attention", start=int(s), end=int(e), start_time=t0, end_time=t1,
                persons=ids, confidence=_support_conf(relations.raw[at_start, k], arrays.gaze_conf[at_start], s, e),
                details=details, **_target_fields(arrays, relations, int(k)),
            ))
    events = _merge_moving_focus(arrays, events, gap)
    events += _location_joint_attention(arrays, config, min_len, gap, blip)
    return events


def _merge_moving_focus(arrays: TrackArrays, events: list[Event], gap: int) -> list[Event]:
    """The same group whose shared focus moves together (e.g. from one person's hands to the other's
    while they work on one thing) stays in joint attention: consecutive events of the same people, at
    most ``gap`` frames apart within a shot, become one whose target is the one held longest; every
    focus is listed in details["targets"]."""
    merged: list[Event] = []
    for ev in sorted(events, key=lambda e: (e.persons, e.start)):
        ev.details["targets"] = [{"target_type": ev.details["target_type"], "target_id": ev.details["target_id"],
                                  "start_time": ev.start_time, "end_time": ev.end_time}]
        last = merged[-1] if merged else None
        if (last is not None and last.persons == ev.persons and ev.start - last.end - 1 <= gap
                and arrays.segment[ev.start] == arrays.segment[last.end]):
            targets = last.details["targets"] + ev.details["targets"]
            longest = max((last, ev), key=lambda e: e.details.get("_held", e.end - e.start + 1))
            held = max(last.details.get("_held", last.end - last.start + 1), ev.end - ev.start + 1)
            weight_last, weight_new = last.end - last.start + 1, ev.end - ev.start + 1
            details = {k: v for k, v in longest.details.items() if k != "targets"}
            details.update(targets=targets, _held=held,
                           joined_later=sorted(set(last.details["joined_later"]) | set(ev.details["joined_later"])))
            fields = {k: getattr(longest, k) for k in ("target_type", "target_person", "target_label")}
            confidence = (last.confidence * weight_last + ev.confidence * weight_new) / (weight_last + weight_new)
            merged[-1] = Event(source="gaze", event_type="joint_attention", start=last.start, end=max(last.end, ev.end),
                               start_time=last.start_time, end_time=max(last.end_time, ev.end_time),
                               persons=last.persons, confidence=confidence, details=details, **fields)
        else:
            merged.append(ev)
    for ev in merged:
        ev.details.pop("_held", None)
    return merged


def _location_joint_attention(arrays: TrackArrays, config: EventConfig, min_len: int, gap: int, blip: int) -> list[Event]:
    """Pairs whose gaze hits no target box yet lands on one place: GRASP's convergence score
    exp(-3 x median distance to centroid); for two points the median distance is half their distance."""
    if arrays.n_people < 2:
        return []
    valid = (
        arrays.present & (arrays.gaze_type == GAZE_TARGET_TYPES.index("elsewhere"))
        & ~np.isnan(arrays.gaze_point).any(-1) & (arrays.gaze_conf > 0)
    )
    max_distance = 2.0 * -np.log(config.joint_attention_location_min_score) / 3.0
    raw = kernels.pairwise_convergence(arrays.gaze_point, valid, max_distance)
    smooth = kernels.smooth_runs(raw, arrays.segment, gap, blip)
    rows, starts, ends = kernels.extract_runs(smooth, arrays.segment)
    first, second = np.triu_indices(arrays.n_people, k=1)
    events = []
    for row, s, e in zip(rows, starts, ends):
        if e - s + 1 < min_len:
            continue
        pair = [int(first[row]), int(second[row])]
        points = arrays.gaze_point[pair][:, s : e + 1][:, raw[row, s : e + 1]].reshape(-1, 2)
        centre = points.mean(axis=0) if len(points) else np.array([np.nan, np.nan])
        t0, t1 = span(arrays, int(s), int(e))
        events.append(Event(
            source="gaze", event_type="joint_attention", start=int(s), end=int(e), start_time=t0, end_time=t1,
            persons=tuple(int(arrays.person_ids[p]) for p in pair),
            confidence=_support_conf(np.array([raw[row], raw[row]]), arrays.gaze_conf[pair], s, e),
            details={"target_type": "location", "target_id": None,
                     "location": [round(float(c), 4) for c in centre], "joined_later": []},
            **target_columns(arrays, "location", None),
        ))
    return events


@dataclass
class Onsets:
    """Moments a person starts a stable look at a target they were not looking at, with a known gaze just
    before (a person entering the frame or a shot starting is not a shift). Sorted by target then frame."""

    target: np.ndarray
    frame: np.ndarray
    person: np.ndarray
    end: np.ndarray  # last frame of the look


def gaze_onsets(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> Onsets:
    n_people, n_targets, n_frames = relations.looking.shape
    rows, starts, ends = kernels.extract_runs(relations.looking.reshape(-1, n_frames), arrays.segment)
    person, target = np.divmod(rows, max(n_targets, 1))
    before = np.maximum(starts - 1, 0)
    ok = (
        (starts > 0)
        & (arrays.segment[before] == arrays.segment[starts])
        & arrays.present[person, before]
        & (arrays.gaze_type[person, before] != UNKNOWN)
        & (ends - starts + 1 >= arrays.min_frames(config.min_gaze_at_seconds))
    )
    order = np.lexsort((person[ok], starts[ok], target[ok]))
    return Onsets(target=target[ok][order], frame=starts[ok][order], person=person[ok][order], end=ends[ok][order])


def detect_gaze_following(arrays: TrackArrays, relations: GazeRelations, onsets: Onsets, config: EventConfig) -> list[Event]:
    """Leader starts looking at a target; a follower who was not looking at it turns to it
    following_min_lag_seconds..following_max_lag_seconds later while the leader still looks."""
    leader = kernels.match_following(
        onsets.target, onsets.frame, onsets.person, relations.looking, arrays.times, arrays.segment,
        config.following_min_lag_seconds, config.following_max_lag_seconds,
    )
    events = []
    for i in np.nonzero(leader >= 0)[0]:
        j = int(leader[i])
        k = int(onsets.target[i])
        lp, fp = int(onsets.person[j]), int(onsets.person[i])
        s, e = int(onsets.frame[j]), int(onsets.frame[i])
        lead_id, follow_id = int(arrays.person_ids[lp]), int(arrays.person_ids[fp])
        lag = float(arrays.times[e] - arrays.times[s])
        t0, t1 = float(arrays.times[s]), float(arrays.times[e])  # from one onset to the other
        conf = 0.5 * (
            _support_conf(relations.raw[[lp], k], arrays.gaze_conf[[lp]], s, e)
            + _support_conf(relations.raw[[fp], k], arrays.gaze_conf[[fp]], e, int(onsets.end[i]))
        )
        details = _target_details(relations, k)
        details.update({"leader_onset_time": float(arrays.times[s]), "follower_onset_time": float(arrays.times[e])})
        events.append(Event(
            source="gaze", event_type="gaze_following", start=s, end=e, start_time=t0, end_time=t1,
            persons=tuple(sorted((lead_id, follow_id))), initiator=lead_id, leader=lead_id, follower=follow_id,
            lag=lag, confidence=conf, details=details, **_target_fields(arrays, relations, k),
        ))
    return events


def detect_attention_capture(arrays: TrackArrays, relations: GazeRelations, onsets: Onsets, config: EventConfig) -> list[Event]:
    """At least capture_min_people people shift onto the same new target within capture_window_seconds."""
    n = len(onsets.frame)
    need = config.capture_min_people
    if n < need:
        return []
    onset_time = arrays.times[onsets.frame]
    # sortable key: target first, then time; the window never crosses into the next target
    stride = float(arrays.times[-1] - arrays.times[0]) + config.capture_window_seconds + 1.0
    key = onsets.target * stride + (onset_time - arrays.times[0])
    window_end = np.searchsorted(key, key + config.capture_window_seconds + 1e-9, side="right")
    candidates = np.nonzero(window_end - np.arange(n) >= need)[0]
    events = []
    next_free = 0
    for i in candidates:
        if i < next_free:
            continue
        members = np.arange(i, window_end[i])
        members = members[arrays.segment[onsets.frame[members]] == arrays.segment[onsets.frame[i]]]
        people, first = np.unique(onsets.person[members], return_index=True)
        if len(people) < need:
            continue
        members = members[np.sort(first)]
        next_free = int(window_end[i])
        k = int(onsets.target[i])
        s = int(onsets.frame[members].min())
        e = max(int(onsets.end[members].min()), int(onsets.frame[members].max()))
        shifts = []
        for m in members:
            p, f = int(onsets.person[m]), int(onsets.frame[m])
            was = GAZE_TARGET_TYPES[int(arrays.gaze_type[p, f - 1])]
            was_id = int(arrays.gaze_id[p, f - 1])
            shifts.append({"person_id": int(arrays.person_ids[p]), "time": float(arrays.times[f]),
                           "from_target_type": was, "from_target_id": was_id if was_id >= 0 else None})
        t0, t1 = span(arrays, s, e)
        idx = onsets.person[members]
        details = _target_details(relations, k)
        details.update({"shifts": shifts, "spread_seconds": round(float(onset_time[members].max() - onset_time[members].min()), 4)})
        events.append(Event(
            source="gaze", event_type="attention_capture", start=s, end=e, start_time=t0, end_time=t1,
            persons=tuple(sorted(int(arrays.person_ids[p]) for p in idx)),
            confidence=_support_conf(relations.raw[idx, k], arrays.gaze_conf[idx], s, e),
            details=details, **_target_fields(arrays, relations, k),
        ))
    return events


def head_relative_gaze(arrays: TrackArrays) -> tuple[np.ndarray, np.ndarray]:
    """Gaze point minus head centre (camera motion cancels), and where it is defined."""
    centre = 0.5 * (arrays.head_box[..., :2] + arrays.head_box[..., 2:])
    relative = arrays.gaze_point - centre
    valid = arrays.present & ~np.isnan(relative).any(-1) & (arrays.gaze_type != UNKNOWN)
    return np.where(valid[..., None], relative, 0.0), valid


def detect_sudden_gaze_shift(arrays: TrackArrays, config: EventConfig) -> list[Event]:
    """The head-relative gaze moves faster than shift_min_speed, covering at least shift_min_speed x
    shift_min_seconds of the frame within shift_max_seconds. The event is centred on the movement and
    lasts at least shift_min_seconds."""
    relative, valid = head_relative_gaze(arrays)
    speed = kernels.gaze_speed(relative, valid, arrays.times, arrays.segment)
    moving = np.nan_to_num(speed, nan=0.0) > config.shift_min_speed
    rows, starts, ends = kernels.extract_runs(moving, arrays.segment)
    min_amplitude = config.shift_min_speed * config.shift_min_seconds
    frame_numbers = np.arange(arrays.n_frames)
    segment_first = np.full(int(arrays.segment.max(initial=0)) + 1, arrays.n_frames)
    np.minimum.at(segment_first, arrays.segment, frame_numbers)
    segment_last = np.zeros_like(segment_first)
    np.maximum.at(segment_last, arrays.segment, frame_numbers)
    events = []
    for p, a, b in zip(rows, starts, ends):
        p, before, b = int(p), int(a) - 1, int(b)  # the movement goes from frame a-1 to frame b
        amplitude = float(np.hypot(*(relative[p, b] - relative[p, before])))
        duration = float(arrays.times[b] - arrays.times[before])
        if amplitude < min_amplitude or duration > config.shift_max_seconds:
            continue
        centre = 0.5 * (arrays.times[before] + arrays.times[b])
        half = 0.5 * max(duration, config.shift_min_seconds)
        seg_first, seg_last = segment_first[arrays.segment[b]], segment_last[arrays.segment[b]]
        t0 = max(centre - half, float(arrays.times[seg_first]))
        t1 = min(centre + half, float(arrays.times[seg_last]) + 1.0 / arrays.fps)
        s = int(np.clip(np.searchsorted(arrays.times, t0 - 1e-9), seg_first, seg_last))
        e = int(np.clip(np.searchsorted(arrays.times, t1 - 1e-9) - 1, s, seg_last))
        pid = int(arrays.person_ids[p])
        from_kind, to_kind = GAZE_TARGET_TYPES[int(arrays.gaze_type[p, before])], GAZE_TARGET_TYPES[int(arrays.gaze_type[p, b])]
        from_id, to_id = int(arrays.gaze_id[p, before]), int(arrays.gaze_id[p, b])
        mean_speed = amplitude / duration if duration > 0 else 0.0
        conf = _mean(arrays.gaze_conf[p], before, b) * min(1.0, mean_speed / (2.0 * config.shift_min_speed))
        events.append(Event(
            source="gaze", event_type="sudden_gaze_shift", start=s, end=e, start_time=t0, end_time=t1,
            persons=(pid,), initiator=pid, confidence=conf, target_type="none",
            details={
                "from_target_type": from_kind, "from_target_id": from_id if from_id >= 0 else None,
                "to_target_type": to_kind, "to_target_id": to_id if to_id >= 0 else None,
                "amplitude": round(amplitude, 4), "movement_seconds": round(duration, 4),
                "mean_speed": round(mean_speed, 4),
            },
        ))
    return events


def detect_gaze_events(arrays: TrackArrays, config: EventConfig) -> tuple[list[Event], GazeRelations]:
    """All gaze events of one video, and the relations they were computed from (cross-modal reuse)."""
    relations = gaze_relations(arrays, config)
    onsets = gaze_onsets(arrays, relations, config)
    events = detect_gaze_at(arrays, relations, config)
    events += detect_mutual_gaze(arrays, relations, config)
    events += detect_gaze_aversion(arrays, relations, config)
    events += detect_joint_attention(arrays, relations, config)
    events += detect_gaze_following(arrays, relations, onsets, config)
    events += detect_attention_capture(arrays, relations, onsets, config)
    events += detect_sudden_gaze_shift(arrays, config)
    return events, relations
