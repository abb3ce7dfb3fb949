"""Gaze events from per-frame gaze targets: gaze_at, mutual_gaze, gaze_aversion, joint_attention,
gaze_following, attention_capture and sudden_gaze_shift (DESIGN.md §5, thresholds in EventConfig)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from events import kernels
from events.arrays import GAZE_CODE, GAZE_TARGET_TYPES, TrackArrays
from events.records import Event, round_many, span, spans
from events.support import interval_confidence, pooled_support, support_confidence
from events.targets import (CAMERA, ELSEWHERE, HANDS, OBJECT, PERSON, SCENE_TARGET_CODES, TARGET_CODES, UNKNOWN,
                            target_columns)
from events.config import EventConfig


@dataclass
class GazeRelations:
    """Dense gaze relations of one video: the targets people look at and who looks at which, per frame."""

    target_kind: np.ndarray  # (T,) gaze target type code of each target
    target_id: np.ndarray  # (T,) person_id / object_id (-1 for the camera)
    raw: np.ndarray  # (P, T, F) bool, as in the tracks
    looking: np.ndarray  # (P, T, F) bool, smoothed (short gaps bridged, blips dropped); one target per (P, F)
    runs: tuple[np.ndarray, np.ndarray, np.ndarray]  # runs of looking: (person * T + target, first, last frame)

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
    # smoothing works on each person's one target per frame, so a bridged gap never gives a frame a second
    # target: a gap is bridged only over frames with no target (blinks, misses, flickers dropped as blips).
    # A frame whose ray hits nothing ("elsewhere") is seen looking away: it takes part in the smoothing as
    # a label of its own, so only a blip of it is bridged (atd_kitchen at 2 fps: A's looks into the camera
    # at 0.5 s and 1.5 s were joined over his look down at 1.0 s into one look at the camera)
    away = n_targets
    labels = np.where((kind == ELSEWHERE) & arrays.present & (target_index < 0), away, target_index)
    smoothed = kernels.smooth_labels(
        labels, arrays.segment, arrays.frames(config.smoothing_gap_seconds),
        arrays.min_frames(config.smoothing_blip_seconds),
    )
    smoothed[smoothed == away] = -1
    looking = kernels.target_occupancy(smoothed, n_targets)
    runs = kernels.extract_runs(looking.reshape(n_people * n_targets, n_frames), arrays.segment)
    return GazeRelations(target_kind=target_kind, target_id=target_id, raw=raw, looking=looking, runs=runs)


def _target_details(relations: GazeRelations, k: int) -> dict:
    kind = relations.kind_name(k)
    target_id = int(relations.target_id[k])
    return {"target_type": kind, "target_id": None if kind == "camera" else target_id}


def _target_fields(arrays: TrackArrays, relations: GazeRelations, k: int) -> dict:
    kind = relations.kind_name(k)
    return target_columns(arrays, kind, None if kind == "camera" else int(relations.target_id[k]))


def detect_gaze_at(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """One event per stable (person, target) interval of at least min_gaze_at_seconds and min_look_samples."""
    n_people, n_targets, n_frames = relations.looking.shape
    rows, starts, ends = relations.runs
    keep = ends - starts + 1 >= arrays.min_frames(config.min_gaze_at_seconds, config.min_look_samples)
    rows, starts, ends = rows[keep], starts[keep], ends[keep]
    people, targets = np.divmod(rows, max(n_targets, 1))
    counts, sums, size = pooled_support(relations.raw.reshape(-1, n_frames), arrays.gaze_conf, rows, people, starts, ends)
    support = round_many(counts / size, 4)
    confidence = support_confidence(counts, sums, size)
    details = [_target_details(relations, k) for k in range(n_targets)]
    fields = [_target_fields(arrays, relations, k) for k in range(n_targets)]
    # the look ends when the looker or the person looked at (face or hands) leaves
    everyone = arrays.person_ids[None, :]
    looked_at = np.isin(relations.target_kind[targets], (PERSON, HANDS)) & (relations.target_id[targets] >= 0)
    involved = (np.arange(arrays.n_people)[None, :] == people[:, None]) | (
        looked_at[:, None] & (everyone == relations.target_id[targets][:, None]))
    t0s, t1s = spans(arrays, starts, ends, involved)
    pids = arrays.person_ids[people].tolist()
    events = []
    for n, (k, s, e) in enumerate(zip(targets.tolist(), starts.tolist(), ends.tolist())):
        events.append(Event(
            source="gaze", event_type="gaze_at", start=s, end=e, start_time=t0s[n], end_time=t1s[n],
            persons=(pids[n],), initiator=pids[n], confidence=confidence[n],
            details={**details[k], "support": support[n], "onset_seen": _onset_seen(arrays, relations, people[n], k, s)},
            **fields[k],
        ))
    return events


def _onset_seen(arrays: TrackArrays, relations: GazeRelations, person: int, k: int, start: int) -> bool:
    """Was the look's beginning observed: on the sample before it, in the same shot, were both the looker
    and the target in view? A look that opens the clip or a shot, or begins as its target appears (an
    object found only once someone points at it, a person walking in), may have begun earlier: its
    onset must not be compared with another event's."""
    before = start - 1
    if before < 0 or arrays.shot_id[before] != arrays.shot_id[start] or not arrays.present[person, before]:
        return False
    kind, target_id = relations.kind_name(k), int(relations.target_id[k])
    earlier_code, earlier_id = arrays.gaze_type[person, before], arrays.gaze_id[person, before]
    if earlier_code in (-1, UNKNOWN):
        return False  # where they looked just before is not known
    if earlier_code == GAZE_CODE[kind] and (kind == "camera" or earlier_id == target_id):
        return False  # already on the target then: the look began before the event's first sample
    if kind in ("person", "hands"):
        where = np.flatnonzero(arrays.person_ids == target_id)
        return bool(len(where) and arrays.present[where[0], before])
    if kind == "object":
        where = np.flatnonzero(arrays.object_ids == target_id)
        return bool(len(where) and np.isfinite(arrays.object_boxes[where[0], before]).all())
    return True


def _face_look_rows(arrays: TrackArrays, relations: GazeRelations) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair i < j (people indices) in which each can look at the other's face: (i, j, row of i looking
    at j's face, row of j looking at i's face), rows of the (P * T, F) flattened relations."""
    n_targets = relations.looking.shape[1]
    face = np.full(arrays.n_people, -1, np.int64)  # target row of each person's face
    is_face = relations.target_kind == PERSON
    face_of = np.searchsorted(arrays.person_ids, relations.target_id[is_face])
    found = face_of < arrays.n_people
    found[found] = arrays.person_ids[face_of[found]] == relations.target_id[is_face][found]
    face[face_of[found]] = np.nonzero(is_face)[0][found]
    i, j = np.triu_indices(arrays.n_people, k=1)
    both = (face[j] >= 0) & (face[i] >= 0)
    i, j = i[both], j[both]
    return i, j, i * n_targets + face[j], j * n_targets + face[i]


@dataclass
class Breaks:
    """Where eye contact of a pair breaks into an aversion: one partner looks away (somewhere known) while
    the other keeps looking. Arrays over the breaks; ``pair`` indexes the rows of _face_look_rows."""

    pair: np.ndarray
    contact_end: np.ndarray  # last frame of the unbroken contact before the break
    start: np.ndarray  # first frame of the aversion (the frame after the contact)
    end: np.ndarray  # last frame: the holder stops looking, or the averter looks back, whichever first
    averter: np.ndarray  # people indices
    holder: np.ndarray
    holding: np.ndarray  # row (of the flattened relations) of the holder's look at the averter's face


def _contact_breaks(arrays: TrackArrays, relations: GazeRelations, contact: np.ndarray, ij: np.ndarray,
                    ji: np.ndarray, first_person: np.ndarray, second_person: np.ndarray, config: EventConfig) -> Breaks:
    """Every break of an unbroken contact of at least aversion_min_contact_seconds after which one partner
    looks away for at least aversion_min_hold_seconds while the other keeps looking at them. The aversion
    ends when the holder stops looking or the averter looks back (the contact resumes), so an aversion
    and the contact before or after it never overlap."""
    n_frames, segment = arrays.n_frames, arrays.segment
    looking = relations.looking.reshape(-1, n_frames)
    pair, s, e = kernels.extract_runs(contact, segment)
    b = e + 1
    bb = np.minimum(b, n_frames - 1)
    ij_b, ji_b = looking[ij[pair], bb], looking[ji[pair], bb]
    # a long enough contact that one of them broke (both looking away together, or a pause, is no aversion)
    # the contact must be seen on min_look_samples instants too: one 2 fps sample is no held contact
    held = arrays.min_frames(config.aversion_min_contact_seconds, config.min_look_samples)
    ok = (e - s + 1 >= held) & (b < n_frames)
    ok &= (segment[bb] == segment[e]) & (ij_b != ji_b)
    pair, e, b, i_averts = pair[ok], e[ok], b[ok], ~ij_b[ok]
    averter = np.where(i_averts, first_person[pair], second_person[pair])
    holder = np.where(i_averts, second_person[pair], first_person[pair])
    holding = np.where(i_averts, ji[pair], ij[pair])  # the holder's look at the averter's face
    returning = np.where(i_averts, ij[pair], ji[pair])  # the averter's look back at the holder's face
    _, h = kernels.run_bounds(looking, segment, holding, b)
    back, _ = kernels.run_bounds(looking, segment, returning, b)
    looks_back = looking[returning, back] & (back > b)
    h = np.where(looks_back, np.minimum(h, back - 1), h)
    # the averter must still be there, looking somewhere known: leaving the frame is not aversion
    ok = (h - b + 1 >= arrays.min_frames(config.aversion_min_hold_seconds)) & arrays.present[averter, b]
    ok &= arrays.gaze_type[averter, b] != UNKNOWN
    return Breaks(pair=pair[ok], contact_end=e[ok], start=b[ok], end=h[ok], averter=averter[ok], holder=holder[ok],
                  holding=holding[ok])


def _seen_elsewhere(arrays: TrackArrays, people: np.ndarray, at_partner: np.ndarray) -> np.ndarray:
    """(pairs, F) bool: ``people`` (one per pair row) have a known gaze target other than their partner's
    face (``at_partner`` = their raw look at it)."""
    kind = arrays.gaze_type[people]
    return (kind >= 0) & (kind != UNKNOWN) & ~at_partner


def detect_eye_contact(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """mutual_gaze (A on B's face and B on A's face at once; gaps up to mutual_gaze_merge_gap_seconds
    merged) and gaze_aversion (one partner breaks a reported eye contact while the other keeps looking).

    An aversion ends the contact: the merge never bridges a gap that begins with an aversion, so the
    contact before it is one mutual_gaze event, the aversion starts where that event ends, and a contact
    that resumes after the averter looks back is a new event. An aversion needs the contact it breaks to
    be a reported mutual_gaze event (a break of a contact too short to report breaks nothing). Nor does
    the merge bridge a gap in which one of the pair makes eye contact with a third person (a person is in
    one eye contact at a time) or is seen looking at anything but the partner's face: the merge bridges
    frames whose gaze is unknown, never contrary evidence."""
    first_person, second_person, ij, ji = _face_look_rows(arrays, relations)
    if not len(ij):
        return []
    segment = arrays.segment
    looking = relations.looking.reshape(-1, arrays.n_frames)
    # at least one of the pair read from the face: two heads facing each other in profile read as mutual
    # from body keypoints (yaw only) whatever the eyes do (tvhid_highfive_0005 at 2.0 s: both look up at
    # the hands meeting overhead)
    kp_only = arrays.gaze_from_keypoints
    contact = looking[ij] & looking[ji] & ~(kp_only[first_person] & kp_only[second_person])
    breaks = _contact_breaks(arrays, relations, contact, ij, ji, first_person, second_person, config)
    min_len = arrays.min_frames(config.min_mutual_gaze_seconds)
    merged = kernels.smooth_runs(contact, segment, arrays.frames(config.mutual_gaze_merge_gap_seconds), 1)
    # a bridged gap is undone whole when it begins with an aversion or when one of the pair makes eye
    # contact with someone else in it (one eye contact per person at a time)
    barrier = np.zeros_like(contact)
    barrier[breaks.pair, breaks.start] = True
    contacts_of = np.zeros((arrays.n_people, arrays.n_frames), np.int64)
    np.add.at(contacts_of, first_person, contact)
    np.add.at(contacts_of, second_person, contact)
    barrier |= (contacts_of[first_person] - contact > 0) | (contacts_of[second_person] - contact > 0)
    # nor a gap in which one of them is seen looking at something else (a known target that is not the
    # partner's face): only frames whose gaze is unknown may be bridged
    raw = relations.raw.reshape(-1, arrays.n_frames)
    barrier |= _seen_elsewhere(arrays, first_person, raw[ij]) | _seen_elsewhere(arrays, second_person, raw[ji])
    gap_rows, gap_starts, gap_ends = kernels.extract_runs(merged & ~contact, segment)
    blocked, _ = kernels.interval_support(barrier, np.zeros((1, arrays.n_frames)), gap_rows,
                                          np.zeros(len(gap_rows), np.int64), gap_starts, gap_ends)
    for row, s, e in zip(gap_rows[blocked > 0].tolist(), gap_starts[blocked > 0].tolist(), gap_ends[blocked > 0].tolist()):
        merged[row, s : e + 1] = False
    # the long merge gap must not bridge a stretch where one of the pair is out of view
    there = kernels.smooth_runs(arrays.present, segment, arrays.frames(config.smoothing_gap_seconds), 1)
    merged = kernels.smooth_runs(merged & there[first_person] & there[second_person], segment, 0, min_len)
    events = _mutual_gaze_events(arrays, relations, merged, first_person, second_person, ij, ji)
    events += _aversion_events(arrays, relations, merged, breaks)
    return events


def _mutual_gaze_events(arrays: TrackArrays, relations: GazeRelations, merged: np.ndarray, first_person: np.ndarray,
                        second_person: np.ndarray, ij: np.ndarray, ji: np.ndarray) -> list[Event]:
    rows, starts, ends = kernels.extract_runs(merged, arrays.segment)
    looking = relations.looking.reshape(-1, arrays.n_frames)
    raw = relations.raw.reshape(-1, arrays.n_frames)
    # the contact is seen where both look: the pair's raw row, weighted by each one's gaze confidence
    both_raw = raw[ij] & raw[ji]
    pair_people = np.stack([first_person, second_person], axis=1)
    counts, sums, size = pooled_support(
        both_raw, arrays.gaze_conf, np.repeat(rows, 2), pair_people[rows].ravel(), np.repeat(starts, 2),
        np.repeat(ends, 2), np.repeat(np.arange(len(rows)), 2), len(rows),
    )
    confidence = support_confidence(counts, sums, size)
    support = round_many(counts / size, 4)
    # who started looking first: the earlier onset of the two looks that make up the contact
    onset_i, _ = kernels.run_bounds(looking, arrays.segment, ij[rows], starts)
    onset_j, _ = kernels.run_bounds(looking, arrays.segment, ji[rows], starts)
    earlier = np.minimum(onset_i, onset_j)
    known = (onset_i != onset_j) & (earlier > 0) & (arrays.segment[np.maximum(earlier - 1, 0)] == arrays.segment[starts])
    first = np.where(onset_i < onset_j, arrays.person_ids[first_person[rows]], arrays.person_ids[second_person[rows]])
    firsts = [f if k else None for f, k in zip(first.tolist(), known.tolist())]
    ids_i, ids_j = arrays.person_ids[first_person[rows]].tolist(), arrays.person_ids[second_person[rows]].tolist()
    t0s, t1s = spans(arrays, starts, ends, _pair_rows(arrays.n_people, first_person[rows], second_person[rows]))
    events = []
    for n, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        events.append(Event(
            source="gaze", event_type="mutual_gaze", start=s, end=e, start_time=t0s[n], end_time=t1s[n],
            persons=(ids_i[n], ids_j[n]), initiator=firsts[n], target_type="person", confidence=confidence[n],
            details={"first_looker": firsts[n], "support": support[n]},
        ))
    return events


def _pair_rows(n_people: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(N, n_people) bool: each row marks its two people (person indices ``first`` and ``second``, (N,))."""
    everyone = np.arange(n_people)[None, :]
    return (everyone == np.asarray(first)[:, None]) | (everyone == np.asarray(second)[:, None])


def new_state_confirmed(arrays: TrackArrays, rows: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """(N,) bool: person ``rows[n]`` is seen on at least two sampled frames of the shot from ``frames[n]`` (the
    first frame showing a new gaze state) on. Mid-shot, a state seen on one frame between others is a flicker
    (events.geometry.stable_targets removes it); on a person's last frame in the shot (the clip or shot ends,
    they leave the picture) nothing after it can tell a change from a flicker, and a breaking off or a sudden
    shift resting on it came and went with a re-encode or a mirror of the clip (deepoint_lamp1's last frame read
    his own hands in the clip, "elsewhere" in its mirrored copy: 4 degrees apart)."""
    rows, frames = np.asarray(rows, np.int64), np.asarray(frames, np.int64)
    seen_before = np.concatenate([np.zeros((arrays.n_people, 1), np.int64), np.cumsum(arrays.present, axis=1)], axis=1)
    shot_last = segment_bounds(arrays)[1][arrays.segment[frames]]
    return seen_before[rows, shot_last + 1] - seen_before[rows, frames] >= 2


def _aversion_events(arrays: TrackArrays, relations: GazeRelations, merged: np.ndarray, breaks: Breaks) -> list[Event]:
    """gaze_aversion events of the breaks that end a reported eye contact (``merged``: the pairs' final
    mutual_gaze frames); the contact's start and length in details are those of that mutual_gaze event."""
    # a breaking off is reported when it ends a reported contact and the look-away is seen on two frames
    reported = merged[breaks.pair, breaks.contact_end] & new_state_confirmed(arrays, breaks.averter, breaks.start)
    pair, e, b, h = breaks.pair[reported], breaks.contact_end[reported], breaks.start[reported], breaks.end[reported]
    averter, holder, holding = breaks.averter[reported], breaks.holder[reported], breaks.holding[reported]
    s, _ = kernels.run_bounds(merged, arrays.segment, pair, e)
    confidence = support_confidence(*pooled_support(
        relations.raw.reshape(-1, arrays.n_frames), arrays.gaze_conf, holding, holder, b, h))
    contact_seconds = round_many(arrays.end_times[e] - arrays.times[s], 4)
    contact_start = arrays.times[s].tolist()
    averter_ids, holder_ids = arrays.person_ids[averter].tolist(), arrays.person_ids[holder].tolist()
    new_kinds, new_ids = arrays.gaze_type[averter, b].tolist(), arrays.gaze_id[averter, b].tolist()
    # the aversion ends halfway to a sample where the averter or the holder has gone
    t0s, t1s = spans(arrays, b, h, _pair_rows(arrays.n_people, averter, holder))
    events = []
    for n, (start, end) in enumerate(zip(b.tolist(), h.tolist())):
        averter_id, holder_id, new_id = averter_ids[n], holder_ids[n], new_ids[n]
        events.append(Event(
            source="gaze", event_type="gaze_aversion", start=start, end=end, start_time=t0s[n], end_time=t1s[n],
            persons=tuple(sorted((averter_id, holder_id))), initiator=averter_id, target_type="person",
            target_person=holder_id, confidence=confidence[n],
            details={
                "averter_id": averter_id, "holder_id": holder_id, "contact_start_time": contact_start[n],
                "contact_seconds": contact_seconds[n], "averted_to_type": GAZE_TARGET_TYPES[new_kinds[n]],
                "averted_to_id": new_id if new_id >= 0 else None,
            },
        ))
    return events


def sustained_looks(relations: GazeRelations, min_frames: int) -> np.ndarray:
    """(P, T, F) bool: ``relations.looking`` restricted to looks lasting at least ``min_frames`` frames."""
    n_people, n_targets, n_frames = relations.looking.shape
    out = np.zeros(n_people * n_targets * n_frames, bool).reshape(n_people * n_targets, n_frames)
    rows, starts, ends = relations.runs
    for row, start, end in zip(*(np.asarray(a).tolist() for a in (rows, starts, ends))):
        if end - start + 1 >= min_frames:
            out[row, start:end + 1] = True
    return out.reshape(n_people, n_targets, n_frames)


def detect_joint_attention(arrays: TrackArrays, relations: GazeRelations, config: EventConfig) -> list[Event]:
    """Two or more people on the same thing in the scene: a person, someone's hands, an object. The camera
    and gaze that hits nothing are never shared attention (people looking into the lens attend to the
    viewer, not to each other's focus; points that hit nothing are ray projections). persons_involved =
    everyone looking at the event's first frame. Each frame of the event has two or more people on it, each
    in a look long enough to be reported on its own (min_gaze_at_seconds, min_look_samples)."""
    n_people, n_targets, n_frames = relations.looking.shape
    in_scene = np.nonzero(np.isin(relations.target_kind, SCENE_TARGET_CODES))[0]
    if not len(in_scene):
        return []
    min_len = arrays.min_frames(config.min_joint_attention_seconds, config.min_look_samples)
    # a member's look is a look in its own right (as long as a reported gaze_at): a glance on one sample that
    # happens to land on the group's focus does not make its owner share it
    looking = sustained_looks(relations, arrays.min_frames(config.min_gaze_at_seconds, config.min_look_samples))
    # frames where two or more look (each person's looks are already smoothed): not bridged again, so the
    # shared focus never covers a frame where a member's one gaze target is something else
    shared = looking[:, in_scene].sum(axis=0) >= 2
    rows, starts, ends = kernels.extract_runs(shared, arrays.segment)
    keep = ends - starts + 1 >= min_len
    targets, starts, ends = in_scene[rows[keep]], starts[keep], ends[keep]
    # per candidate event and person: looking at its first frame, and frames looking within it
    everyone = np.arange(n_people)
    group = looking[:, targets, starts].T  # (N, P)
    looked, _ = kernels.interval_support(
        looking.reshape(-1, n_frames), arrays.gaze_conf, (everyone[None, :] * n_targets + targets[:, None]).ravel(),
        np.tile(everyone, len(targets)), np.repeat(starts, n_people), np.repeat(ends, n_people),
    )
    looked = looked.reshape(-1, n_people)
    event, people = np.nonzero(group)
    k_of = targets[event]
    counts, sums, size = pooled_support(
        relations.raw.reshape(-1, n_frames), arrays.gaze_conf, people * n_targets + k_of, people,
        starts[event], ends[event], event, len(targets),
    )
    confidence = support_confidence(counts, sums, size)
    t0s, t1s = spans(arrays, starts, ends, group)
    events = []
    for n, (k, s, e) in enumerate(zip(targets.tolist(), starts.tolist(), ends.tolist())):
        details = _target_details(relations, k)
        details["joined_later"] = arrays.person_ids[(looked[n] > 0) & ~group[n]].tolist()
        events.append(Event(
            source="gaze", event_type="joint_attention", start=s, end=e, start_time=t0s[n], end_time=t1s[n],
            persons=tuple(arrays.person_ids[group[n]].tolist()), confidence=confidence[n], details=details,
            **_target_fields(arrays, relations, k),
        ))
    # only a focus that moves without a break stays one event: a stretch in which the group shares nothing
    # (each on their own target) is no joint attention, however short
    return _merge_moving_focus(arrays, events, 0)


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
    rows, starts, ends = relations.runs
    person, target = np.divmod(rows, max(n_targets, 1))
    before = np.maximum(starts - 1, 0)
    ok = (
        (starts > 0)
        & (arrays.segment[before] == arrays.segment[starts])
        & arrays.present[person, before]
        & (arrays.gaze_type[person, before] != UNKNOWN)
        & (ends - starts + 1 >= arrays.min_frames(config.min_gaze_at_seconds, config.min_look_samples))
    )
    order = np.lexsort((person[ok], starts[ok], target[ok]))
    return Onsets(target=target[ok][order], frame=starts[ok][order], person=person[ok][order], end=ends[ok][order])


def detect_gaze_following(arrays: TrackArrays, relations: GazeRelations, onsets: Onsets, config: EventConfig) -> list[Event]:
    """Leader starts looking at a thing in the scene (a person, hands, an object); a follower turns to it
    following_min_lag_seconds..following_max_lag_seconds later while the leader still looks. The follower
    must not have looked at it from following_unseen_before_seconds before the leader's onset until their
    own (returning to a target is not following), and the target is never the follower's own face or
    hands (someone looking at their own hands after another does is not following that gaze)."""
    leader = kernels.match_following(
        onsets.target, onsets.frame, onsets.person, relations.looking, arrays.times, arrays.segment,
        config.following_min_lag_seconds, config.following_max_lag_seconds,
    )
    follower = np.nonzero(leader >= 0)[0]
    k = onsets.target[follower]
    fp = onsets.person[follower]
    in_scene = np.isin(relations.target_kind[k], SCENE_TARGET_CODES)
    owned = relations.target_kind[k] != OBJECT  # person and hands targets carry their owner's person_id
    own = owned & (arrays.person_ids[fp] == relations.target_id[k])
    follower = follower[in_scene & ~own]
    first = leader[follower]
    k = onsets.target[follower]
    lp, fp = onsets.person[first], onsets.person[follower]
    s, e = onsets.frame[first], onsets.frame[follower]
    # the follower did not look at the target shortly before the leader's onset (within the shot) nor since
    seen_from = np.maximum(s - arrays.frames(config.following_unseen_before_seconds), segment_first_frames(arrays)[s])
    looked, _ = kernels.interval_support(relations.looking.reshape(-1, arrays.n_frames), arrays.gaze_conf,
                                         fp * relations.looking.shape[1] + k, fp, seen_from, e - 1)
    fresh = looked == 0
    follower, first, k, lp, fp, s, e = (v[fresh] for v in (follower, first, k, lp, fp, s, e))
    # support of the leader's look up to the follower's onset, and of the follower's look
    n_targets, raw = relations.raw.shape[1], relations.raw.reshape(-1, arrays.n_frames)
    lead_conf = support_confidence(*pooled_support(raw, arrays.gaze_conf, lp * n_targets + k, lp, s, e))
    follow_conf = support_confidence(*pooled_support(raw, arrays.gaze_conf, fp * n_targets + k, fp, e, onsets.end[follower]))
    t0s, t1s = arrays.times[s].tolist(), arrays.times[e].tolist()  # from one onset to the other
    lags = (arrays.times[e] - arrays.times[s]).tolist()
    lead_ids, follow_ids = arrays.person_ids[lp].tolist(), arrays.person_ids[fp].tolist()
    events = []
    for n, (target, start, end) in enumerate(zip(k.tolist(), s.tolist(), e.tolist())):
        lead_id, follow_id = lead_ids[n], follow_ids[n]
        details = _target_details(relations, target)
        details.update({"leader_onset_time": t0s[n], "follower_onset_time": t1s[n]})
        events.append(Event(
            source="gaze", event_type="gaze_following", start=start, end=end, start_time=t0s[n], end_time=t1s[n],
            persons=tuple(sorted((lead_id, follow_id))), initiator=lead_id, leader=lead_id, follower=follow_id,
            lag=lags[n], confidence=0.5 * (lead_conf[n] + follow_conf[n]), details=details,
            **_target_fields(arrays, relations, target),
        ))
    return events


def detect_attention_capture(arrays: TrackArrays, relations: GazeRelations, onsets: Onsets, config: EventConfig) -> list[Event]:
    """At least capture_min_people people shift onto the same new thing in the scene within
    capture_window_seconds (several people turning to the camera is no capture by someone in the scene)."""
    in_scene = np.isin(relations.target_kind[onsets.target], SCENE_TARGET_CODES)  # not turning to the lens
    onsets = Onsets(**{name: getattr(onsets, name)[in_scene] for name in ("target", "frame", "person", "end")})
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
            confidence=interval_confidence(relations.raw.reshape(-1, arrays.n_frames), arrays.gaze_conf,
                                     idx * relations.raw.shape[1] + k, idx, s, e),
            details=details, **_target_fields(arrays, relations, k),
        ))
    return events


def segment_bounds(arrays: TrackArrays) -> tuple[np.ndarray, np.ndarray]:
    """First and last frame of every segment (shot), indexed by segment label."""
    frame_numbers = np.arange(arrays.n_frames)
    segment_first = np.full(int(arrays.segment.max(initial=0)) + 1, arrays.n_frames)
    np.minimum.at(segment_first, arrays.segment, frame_numbers)
    segment_last = np.zeros_like(segment_first)
    np.maximum.at(segment_last, arrays.segment, frame_numbers)
    return segment_first, segment_last


def segment_first_frames(arrays: TrackArrays) -> np.ndarray:
    """(F,) the first frame of each frame's segment."""
    return segment_bounds(arrays)[0][arrays.segment]


def head_relative_gaze(arrays: TrackArrays) -> tuple[np.ndarray, np.ndarray]:
    """Gaze point minus head centre (camera motion cancels), and where it is defined."""
    centre = 0.5 * (arrays.head_box[..., :2] + arrays.head_box[..., 2:])
    relative = arrays.gaze_point - centre
    valid = arrays.present & ~np.isnan(relative).any(-1) & (arrays.gaze_type != UNKNOWN)
    return np.where(valid[..., None], relative, 0.0), valid


def detect_sudden_gaze_shift(arrays: TrackArrays, config: EventConfig) -> list[Event]:
    """The head-relative gaze moves faster than shift_min_speed, covering at least shift_min_speed x
    shift_min_seconds of the frame within shift_max_seconds, from one target to another (not across the
    same person, hands or object), its direction turning at least shift_min_turn_deg, read from the face at both
    ends (not from body keypoints). The event is centred on the movement and lasts at least shift_min_seconds."""
    relative, valid = head_relative_gaze(arrays)
    moving = kernels.gaze_moving(relative, valid, arrays.times, arrays.segment, config.shift_min_speed)
    rows, starts, ends = kernels.extract_runs(moving, arrays.segment)
    min_amplitude = config.shift_min_speed * config.shift_min_seconds
    segment_first, segment_last = segment_bounds(arrays)
    # the movement of run (p, a..b) goes from frame a-1 to frame b
    p, before, b = rows, starts - 1, ends
    amplitude = np.hypot(*(relative[p, b] - relative[p, before]).T)
    duration = arrays.times[b] - arrays.times[before]
    # a gaze point that sweeps across the same person, hands or object (the target moved, or the look
    # crossed a face) is no shift of attention
    same_target = ((arrays.gaze_type[p, before] == arrays.gaze_type[p, b]) & (arrays.gaze_id[p, before] >= 0)
                   & (arrays.gaze_id[p, before] == arrays.gaze_id[p, b]))
    # the direction must turn too (a point can jump between boxes on a few degrees); no direction (NaN) never
    # compares true, so no direction, no shift
    turned = (arrays.gaze_dir[p, before] * arrays.gaze_dir[p, b]).sum(-1) <= np.cos(np.radians(config.shift_min_turn_deg))
    # both ends read from the face: a read from body keypoints has no elevation and a yaw that jumps between a
    # few values as an ear or an eye comes into view, so a move to or from one is the estimator changing, not
    # the look (yakhyo_classroom_group's C bowing her head at 3.5 s: face mesh, then keypoints "at B")
    from_face = ~arrays.gaze_from_keypoints[p, before] & ~arrays.gaze_from_keypoints[p, b]
    keep = (~(amplitude < min_amplitude) & ~(duration > config.shift_max_seconds) & ~same_target & turned
            & from_face & new_state_confirmed(arrays, p, b))
    p, before, b, amplitude, duration = p[keep], before[keep], b[keep], amplitude[keep], duration[keep]
    centre = 0.5 * (arrays.times[before] + arrays.times[b])
    half = 0.5 * np.maximum(duration, config.shift_min_seconds)
    seg_first, seg_last = segment_first[arrays.segment[b]], segment_last[arrays.segment[b]]
    t0 = np.maximum(centre - half, arrays.times[seg_first])
    t1 = np.minimum(centre + half, arrays.end_times[seg_last])
    s = np.clip(np.searchsorted(arrays.times, t0 - 1e-9), seg_first, seg_last)
    e = np.clip(np.searchsorted(arrays.times, t1 - 1e-9) - 1, s, seg_last)
    moving_frames = duration > 0
    mean_speed = np.zeros(len(p))
    mean_speed[moving_frames] = amplitude[moving_frames] / duration[moving_frames]
    # mean gaze confidence over the movement's frames (every frame counts)
    every_frame = np.ones((1, arrays.n_frames), bool)
    counts, sums = kernels.interval_support(every_frame, arrays.gaze_conf, np.zeros(len(p), np.int64), p, before, b)
    conf = (sums / counts) * np.minimum(1.0, mean_speed / (2.0 * config.shift_min_speed))
    pids = arrays.person_ids[p].tolist()
    amplitude, duration, mean_speed = (round_many(v, 4) for v in (amplitude, duration, mean_speed))
    from_kind, to_kind = arrays.gaze_type[p, before].tolist(), arrays.gaze_type[p, b].tolist()
    from_id, to_id = arrays.gaze_id[p, before].tolist(), arrays.gaze_id[p, b].tolist()
    events = []
    for n, (start, end, t_start, t_end) in enumerate(zip(s.tolist(), e.tolist(), t0.tolist(), t1.tolist())):
        events.append(Event(
            source="gaze", event_type="sudden_gaze_shift", start=start, end=end, start_time=t_start, end_time=t_end,
            persons=(pids[n],), initiator=pids[n], confidence=float(conf[n]), target_type="none",
            details={
                "from_target_type": GAZE_TARGET_TYPES[from_kind[n]], "from_target_id": from_id[n] if from_id[n] >= 0 else None,
                "to_target_type": GAZE_TARGET_TYPES[to_kind[n]], "to_target_id": to_id[n] if to_id[n] >= 0 else None,
                "amplitude": amplitude[n], "movement_seconds": duration[n], "mean_speed": mean_speed[n],
            },
        ))
    return events


def detect_gaze_events(arrays: TrackArrays, config: EventConfig) -> tuple[list[Event], GazeRelations]:
    """All gaze events of one video, and the relations they were computed from (cross-modal reuse)."""
    relations = gaze_relations(arrays, config)
    onsets = gaze_onsets(arrays, relations, config)
    events = detect_gaze_at(arrays, relations, config)
    events += detect_eye_contact(arrays, relations, config)
    events += detect_joint_attention(arrays, relations, config)
    events += detect_gaze_following(arrays, relations, onsets, config)
    events += detect_attention_capture(arrays, relations, onsets, config)
    events += detect_sudden_gaze_shift(arrays, config)
    return events, relations
