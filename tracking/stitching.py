"""Identity over the whole video: join tracklets into people, then number people by first appearance.

A tracker keeps a person only while boxes overlap frame to frame; occlusions, missed detections, low
sampling rates and camera cuts break a person into several tracklets. Stitching joins them back:

- never two tracklets that share a frame (one person is in one place at a time);
- within a camera shot: similar torso colours AND a plausible move over the gap (the end of one
  tracklet, extrapolated with its velocity, lands near the start of the next); after a long gap
  (``stitch_reentry_seconds``: the person left or hid, and someone else may have arrived) the colours
  must agree more closely and the move stays bounded, unless the first left at a frame edge and the
  second arrived at one;
- faces (tracking/faces.py) that agree vouch for colours a pose change moved (however far: in a close-up
  the "torso" is a strip of shoulders and whatever arm enters the box) over a short gap, when no other
  face in the shot is as close; faces far apart veto a re-entry within a shot; they are described only
  where colours leave doubt;
- colours further apart than stitching's bound, but within the tracker's own association gate, where the
  tracker would have followed the box (a short gap, overlapping boxes) and nobody else was in reach
  (``tracker_would_follow``: a partly visible or turning person);
- greedy within each shot, most similar pair first, re-scoring merged groups by their pooled colours;
- then across cuts, one assignment per cut between the people seen before and the new shot's people
  (tracking/cut_matching.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from detectors.keypoints import box_intersection_matrix, box_iou
from detectors.observation import FrameObservations
from tracking.config import TrackingConfig
from tracking.appearance import appearance_distance, part_boxes
from tracking.cut_matching import join_across_cuts
from tracking.faces import FaceBank, face_distance
from tracking.motion_rivals import (EXTRAPOLATE_MAX_S, VELOCITY_WINDOW_S, frame_edge_directions, motion_rival,
                                    motion_at, out_of_view_and_back, walked_back)
from tracking.tracker import track_shot



@dataclass
class Tracklet:
    """One tracker id within one shot: the frames it covers and what it looked like."""

    shot_id: int
    frames: np.ndarray  # (K,) sampled-frame indices, increasing
    times: np.ndarray  # (K,) seconds
    boxes: np.ndarray  # (K, 4) normalised xyxy, the camera's move taken out (see assign_person_ids)
    appearance_sum: np.ndarray  # (D,) sum of the seen descriptors (each sums to 1)
    rows: list[tuple[int, int]] = field(default_factory=list)  # (frame position, row) in the input
    # (K, 2) the camera's move taken out of each box (boxes + this = where it was in the picture); None = none
    camera_moves: np.ndarray | None = None
    # (K,) how tall the person is, in frame heights (``person_scales``); None = the box heights
    scales: np.ndarray | None = None
    # (K,) whether a head box was seen on the row (its scale can come from the head); None = on every row
    heads_seen: np.ndarray | None = None

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    def centre(self, k: int) -> np.ndarray:
        """Centre of box ``k``, the camera's move taken out."""
        return (self.boxes[k, :2] + self.boxes[k, 2:]) / 2

    def picture_boxes(self) -> np.ndarray:
        """(K, 4) the boxes where they were in the picture (frame edges are there, not in the camera-fixed frame)."""
        if self.camera_moves is None:
            return self.boxes
        return self.boxes + np.tile(self.camera_moves, 2)

    def picture_box(self, k: int) -> np.ndarray:
        return self.picture_boxes()[k]

    def scale(self, k: int) -> float:
        """How tall the person of row ``k`` is, in frame heights: the box height, or more when the box is cut
        short (``person_scales``)."""
        if self.scales is None:
            return self.box_height(k)
        return float(self.scales[k])

    def box_height(self, k: int) -> float:
        return float(self.boxes[k, 3] - self.boxes[k, 1])

    def head_seen(self, k: int) -> bool:
        return True if self.heads_seen is None else bool(self.heads_seen[k])

    def end_velocity(self) -> np.ndarray:
        """Centre velocity (normalised units per second) over the last second of the tracklet."""
        recent = np.flatnonzero(self.times >= self.end - VELOCITY_WINDOW_S)
        first = recent[0]
        span = self.end - float(self.times[first])
        if span <= 0:
            return np.zeros(2)
        return (self.centre(-1) - self.centre(first)) / span

    def start_velocity(self) -> np.ndarray:
        early = np.flatnonzero(self.times <= self.start + VELOCITY_WINDOW_S)
        last = early[-1]
        span = float(self.times[last]) - self.start
        if span <= 0:
            return np.zeros(2)
        return (self.centre(last) - self.centre(0)) / span


def plausible_motion(earlier: Tracklet, later: Tracklet, config: TrackingConfig) -> bool:
    """Whether ``later`` can be where ``earlier`` went, within one shot: the start of ``later`` must
    lie near ``earlier``'s end, either where it stopped or where its velocity carries it (and the
    same backwards), allowing ``stitch_motion_max`` per second of gap (at most ``stitch_motion_max_heights``
    person heights per second, ``Tracklet.scale``) on top of a size-based slack."""
    gap = max(later.start - earlier.end, 0.0)
    coast = min(gap, EXTRAPOLATE_MAX_S)
    end, start = earlier.centre(-1), later.centre(0)
    jump = min(
        float(np.linalg.norm(start - end)),  # stood still
        float(np.linalg.norm(start - (end + earlier.end_velocity() * coast))),  # kept moving
        float(np.linalg.norm((start - later.start_velocity() * coast) - end)),  # came from there
    )
    widths = [earlier.boxes[-1, 2] - earlier.boxes[-1, 0], later.boxes[0, 2] - later.boxes[0, 0]]
    heights = [earlier.scale(-1), later.scale(0)]
    if not _alike(heights, config.stitch_max_size_ratio):
        # a sighting without a head box has only its box's height, which a box cut short (someone half hidden)
        # understates beside a size read from the head: compare the two boxes as they are then (5 fps,
        # tvhid_highfive_0018's woman behind the near man: boxes 0.14 and 0.18 of the frame, 7.5 head heights
        # 0.39 on one side and no head on the other)
        boxes = [earlier.box_height(-1), later.box_height(0)]
        if (earlier.head_seen(-1) and later.head_seen(0)) or not _alike(boxes, config.stitch_max_size_ratio):
            return False  # people do not grow or shrink that much between two sightings
        heights = boxes
    speed = min(config.stitch_motion_max, config.stitch_motion_max_heights * min(heights))
    allowed = config.stitch_motion_slack * float(max(widths)) + speed * min(gap, config.stitch_reentry_seconds)
    return jump <= allowed


def unseen_between(previous: Tracklet, current: Tracklet) -> bool:
    """Whether a sampled frame lies between ``previous``'s last sighting and ``current``'s first: someone seen on
    two consecutive samples, at the frame edge on both, was never out of the picture (5 fps,
    tvhid_highfive_0018's woman cut by the left edge at 1.8 and 2.0 s, taken for a leaver and a newcomer)."""
    return int(current.frames[0]) - int(previous.frames[-1]) > 1


def _alike(heights: list[float], max_ratio: float) -> bool:
    return max(heights) <= max_ratio * max(min(heights), 1e-6)


def at_frame_edge(box: np.ndarray, margin: float) -> bool:
    """Whether a normalised xyxy box touches an edge people leave the picture through
    (``frame_edge_directions``)."""
    return bool(frame_edge_directions(box, margin))


def plausible_reentry(earlier: Tracklet, later: Tracklet, config: TrackingConfig) -> bool:
    """Within a shot, whether ``later`` can be ``earlier`` come back: a short gap needs a plausible move;
    a long one a bounded move, or leaving at a frame edge and coming back at one."""
    if plausible_motion(earlier, later, config):
        return True
    long_gap = later.start - earlier.end > config.stitch_reentry_seconds
    margin = config.frame_edge_margin
    return long_gap and at_frame_edge(earlier.picture_box(-1), margin) and at_frame_edge(later.picture_box(0), margin)


@dataclass
class _Group:
    """Tracklets believed to be one person."""

    members: list[Tracklet]
    frames: set[int]
    appearance_sum: np.ndarray

    @property
    def start(self) -> float:
        return min(t.start for t in self.members)


def nearer_alternative(previous: Tracklet, current: Tracklet, others: list[Tracklet], ratio: float,
                       person_frames: dict[int, set[int]] | None = None, heading: np.ndarray | None = None) -> bool:
    """Whether another tracklet, seen between ``previous``'s end and ``current``'s start (ends included)
    and never at ``current``'s frames, has a sighting within ``ratio`` times the move from ``previous``'s
    last box to ``current``'s first of either of them: someone else could as well be the one seen, so
    motion alone does not say who it is. One seen beside ``current`` counts when it is the better
    continuation of ``previous`` (``_better_continuation``; ``heading``: where ``previous``'s person was
    heading at ``current``'s start, ``heading_at``). ``person_frames`` (by ``id`` of a tracklet of
    ``others``): the frames of the person the tracklet is already joined into; a person seen beside both ``previous``'s
    last sighting and ``current``'s first is neither of them (yakhyo_classroom_group 1.5 -> 2.5 s: the
    glasses boy's tracklet ends at 2.0 s near where the curly-haired boy's body reappears at 2.5 s, and
    the glasses boy is seen beside both)."""
    end, start = previous.centre(-1), current.centre(0)
    reach = ratio * float(np.linalg.norm(start - end))
    current_frames = set(current.frames.tolist())
    ends = {int(previous.frames[-1]), int(current.frames[0])}
    for other in others:
        if other.end < previous.end - 1e-6 or other.start > current.start + 1e-6:
            continue
        if current_frames & set(other.frames.tolist()):
            # seen beside it: not the same person, but maybe the one ``previous`` became
            if _better_continuation(previous, current, other, person_frames, heading):
                return True
            continue
        if person_frames is not None and ends <= person_frames.get(id(other), set()):
            continue  # its person is seen beside both ends: neither of them
        for k in np.flatnonzero((other.times >= previous.end - 1e-6) & (other.times <= current.start + 1e-6)):
            centre = other.centre(int(k))
            if min(np.linalg.norm(centre - start), np.linalg.norm(centre - end)) < reach:
                return True
    return False


def heading_at(members: list[Tracklet], previous: Tracklet, at: float) -> np.ndarray:
    """Where the person of ``members`` (``previous`` their last tracklet before a gap) is expected at time
    ``at``: their last place moved on by their velocity over the last second (at most EXTRAPOLATE_MAX_S of it),
    or their last place when they have none."""
    motion = motion_at(members, previous.end, True)
    if motion is None:
        return previous.centre(-1)
    velocity, centre, _ = motion
    return centre + velocity * min(max(at - previous.end, 0.0), EXTRAPOLATE_MAX_S)


def _better_continuation(previous: Tracklet, current: Tracklet, other: Tracklet,
                         person_frames: dict[int, set[int]] | None, heading: np.ndarray | None = None) -> bool:
    """Whether ``other``, seen beside ``current`` where it starts, stands nearer there to where ``previous``'s
    person was heading (``heading``; default their last place) than ``current`` does, and is not seen beside
    ``previous``: the one ``previous`` walked on as, as far as motion can tell. A whip pan's first frame
    showed a boy as a sliver at the picture's edge; the next sample showed him whole and, beside him, the
    sliver of the boy behind, which motion alone joined to the first sliver as well (yakhyo_classroom_group
    panned, benchmarks/README.md "Camera pans")."""
    frames = person_frames.get(id(other), set()) if person_frames is not None else set(other.frames.tolist())
    at = np.flatnonzero(np.abs(other.times - current.start) < 1e-6)
    if int(previous.frames[-1]) in frames or not len(at):
        return False
    end = previous.centre(-1) if heading is None else heading
    return bool(np.linalg.norm(other.centre(int(at[0])) - end) < np.linalg.norm(current.centre(0) - end))


def unseen_widening(previous: Tracklet, current: Tracklet, config: TrackingConfig) -> bool:
    """Whether one of the two boxes meeting across a gap (``previous``'s last, ``current``'s first) is more
    than ``stitch_unseen_max_widening`` times as wide as the other and its tracklet has no colours: a box
    around this person and a neighbour with no box of their own. Boxes at the left or right frame edge
    (people entering or leaving, cut by the edge) are exempt."""
    boxes = (previous.boxes[-1], current.boxes[0])
    margin = config.frame_edge_margin
    if any(box[0] <= margin or box[2] >= 1.0 - margin for box in (previous.picture_box(-1), current.picture_box(0))):
        return False
    widths = [float(box[2] - box[0]) for box in boxes]
    wide = int(widths[1] > widths[0])
    tracklet = (previous, current)[wide]
    return (widths[wide] > config.stitch_unseen_max_widening * max(widths[1 - wide], 1e-6)
            and not tracklet.appearance_sum.any())


def tracker_would_follow(previous: Tracklet, current: Tracklet, distance: float, config: TrackingConfig,
                         earlier: list[Tracklet] | None = None, later: list[Tracklet] | None = None,
                         contested: Callable[[], bool] | None = None) -> bool:
    """Whether the tracker itself would have carried ``previous`` on to ``current`` had it not missed (or
    cut) the person in between: a gap it bridges (at most ``track_gap_split_seconds``), boxes that overlap
    as its association needs (IoU at least 1 - ``match_thresh``) and pooled colours within its association
    gate (``track_appearance_gate``, not stitching's closer ``stitch_appearance_max``). A partly visible or
    turning person's colours move that much between samples (tvhid_highfive_0005's woman cut by the right
    edge, hair and arm swinging: 0.49 between her own tracklets, IoU 0.81 and 0.87; tvhid_highfive_0018's
    green-scrubs man turning to the camera: 0.50, IoU 0.65). Stitching asks this only together with its
    rival tests (nobody else seen in reach, no other box fitting either side's motion better).
    With the two sides' tracklets (``earlier``, ``later``), the overlap is also taken after moving a box by
    its side's own velocity over the gap, as the tracker's Kalman filter would have: at 2 fps a walker's
    box moves most of its width between samples, so each sample of him is a lone tracklet and box overlap
    alone never follows him (opencv_vtest: 6 of its 43 ids were such splits). Such a motion-carried join
    is refused when ``contested()`` (``colour_rival``)."""
    gap = current.start - previous.end
    if not (0 < gap <= config.track_gap_split_seconds + 1e-6 and distance <= config.track_appearance_gate):
        return False
    last, first = previous.boxes[-1], current.boxes[0]
    if box_iou(last, first) >= 1.0 - config.match_thresh:
        return True
    if earlier is None or later is None:
        return False
    for members, at, forward, box, other in ((earlier, previous.end, True, last, first),
                                             (later, current.start, False, first, last)):
        motion = motion_at(members, at, forward)
        if motion is not None:
            shift = motion[0] * (gap if forward else -gap)
            if box_iou(box + np.concatenate([shift, shift]), other) >= 1.0 - config.match_thresh:
                return contested is None or not contested()
    return False


def _can_join(a: _Group, b: _Group, distance: float, config: TrackingConfig,
              others: list[Tracklet] | None = None, faces=None, face_rival=None,
              person_frames: dict[int, set[int]] | None = None) -> bool:
    """The motion and gap gates between the time-adjacent tracklets of two groups of one shot
    (``others``: every tracklet of neither group, for the ambiguity test of joins on motion alone;
    ``faces()``: the distance of the two groups' pooled faces, NaN when either has none, asked only where
    it decides; ``face_rival(d)``: whether another face of the shot is within d + stitch_face_margin of
    either group's; ``person_frames``: the frames of the group each tracklet of ``others`` belongs to)."""
    if a.frames & b.frames:
        return False
    face = (lambda: float("nan")) if faces is None else faces
    ordered = sorted([(t, 0) for t in a.members] + [(t, 1) for t in b.members], key=lambda m: m[0].start)
    # each group's tracklets in time order (the sides whose motion the rules below read)
    sides = ([t for t, side in ordered if side == 0], [t for t, side in ordered if side == 1])
    for (previous, side_p), (current, side_c) in zip(ordered, ordered[1:]):
        if side_p == side_c:
            continue
        earlier, later = sides[side_p], sides[side_c]
        gap = current.start - previous.end
        if gap > config.stitch_max_gap_seconds:
            return False
        if previous.shot_id != current.shot_id:
            return False  # across a cut: tracking/cut_matching.py decides
        if not plausible_reentry(previous, current, config):
            return False
        if gap <= config.stitch_reentry_seconds + 1e-6 and walked_back(earlier, later, previous, current,
                                                                       config.stitch_motion_slack):
            return False  # seen walking the same way on both sides, but turned up behind: someone else
        if np.isnan(distance) and gap > config.stitch_unseen_max_gap_seconds + 1e-6:
            return False  # nothing but motion vouches, and only over a short gap
        if np.isnan(distance) and config.stitch_unseen_ambiguity > 0 and others is not None and nearer_alternative(
                previous, current, others, config.stitch_unseen_ambiguity, person_frames,
                heading_at(earlier, previous, current.start)):
            return False  # ...and only when nobody else was seen nearer in between
        if np.isnan(distance) and unseen_widening(previous, current, config):
            return False  # ...nor onto a box suddenly much wider that has no colours: it may hold two
        if np.isnan(distance) and others is not None and motion_rival(
                earlier, later, previous, current, others, config.stitch_motion_rival_margin):
            return False  # ...nor against either side's own motion when another box fits it better
        if gap > config.stitch_reentry_seconds and not (
            distance <= config.stitch_reentry_appearance_max  # NaN fails too
            and min(previous.end - previous.start, current.end - current.start) >= config.stitch_reentry_min_seconds - 1e-6
        ):
            return False  # someone else may have arrived: only closely pooled colours vouch
        if (unseen_between(previous, current) and out_of_view_and_back(earlier, later, previous, current,
                                                                       config.frame_edge_margin)
                and not reentry_colours(distance, earlier, later, config)):
            return False  # walked out of the picture, someone walked in: the same, as after a long gap
        if distance > config.stitch_appearance_max and not (
                gap <= config.track_gap_split_seconds + 1e-6 and face_rival is not None
                and face() <= config.stitch_face_match and not face_rival(face())) and not (
                others is not None and tracker_would_follow(
                    previous, current, distance, config, earlier, later,
                    lambda: colour_rival((a, b)[side_p].appearance_sum, distance, (a, b)[side_c].frames, others,
                                         current.start, config.stitch_reentry_seconds))
                and not nearer_alternative(previous, current, others, config.stitch_unseen_ambiguity, person_frames,
                                           heading_at(earlier, previous, current.start))
                and not motion_rival(earlier, later, previous, current, others, config.stitch_motion_rival_margin)):
            return False  # colours apart, unless faces that agree vouch for a pose change, or the tracker's
            # own rules would have followed the box and nobody else was in reach
        if gap > config.stitch_reentry_seconds and face() > config.stitch_face_veto:
            return False  # a re-entry with another face
    return True


def colour_rival(earlier_colours: np.ndarray, distance: float, later_frames: set[int], others: list[Tracklet],
                 start: float, reach_s: float) -> bool:
    """Whether a join is contested: another tracklet, seen beside the later group (in one of its frames) within
    ``reach_s`` after ``start``, has colours closer to the earlier group's than the later group's are
    (``distance``). Two people walking side by side move alike, and the one hidden behind the other at the
    join shows up again beside them (opencv_vtest 51.0 -> 52.0 s: a woman walking beside a man in a red jacket,
    hidden behind him at 52.0 s; her own later tracklets are 0.29 from her, his 0.42)."""
    for other in others:
        if not other.appearance_sum.any() or other.start > start + reach_s or other.end < start:
            continue
        if not set(other.frames.tolist()) & later_frames:
            continue
        if float(appearance_distance(other.appearance_sum, earlier_colours)[0, 0]) < distance:
            return True
    return False


def _face_rival(groups: list[_Group], group_face, i: int, j: int, reach: float) -> bool:
    """Whether another group of the shot of groups i and j has a face within ``reach`` of either's."""
    shot = groups[i].members[0].shot_id
    for k, other in enumerate(groups):
        if k in (i, j) or other.members[0].shot_id != shot:
            continue
        for own in (i, j):
            if face_distance(group_face(groups[own]), group_face(other)) <= reach:  # NaN: no face, no rival
                return True
    return False


def stitch_tracklets(tracklets: list[Tracklet], config: TrackingConfig,
                     faces: FaceBank | None = None) -> list[list[Tracklet]]:
    """Group tracklets into people (see module doc). Returns groups, each a list of tracklets.
    ``faces``: chips of the observations' faces (None: colours and motion only)."""
    groups = [_Group([t], set(t.frames.tolist()), t.appearance_sum.astype(np.float64)) for t in tracklets]
    shot_of = {id(t): t.shot_id for t in tracklets}
    # colours beyond stitch_appearance_max join only where the tracker would have followed (tracker_would_follow)
    colour_bound = max(config.stitch_appearance_max, config.track_appearance_gate)
    if faces is not None and len(faces):
        # within a shot, over a short gap, faces that agree with no rival decide however far the colours
        # moved: a close-up's "torso" is a strip of shoulders and whatever arm enters it (_can_join asks)
        colour_bound = np.inf

    def group_face(group: _Group):
        return faces.person(group.members)
    while len(groups) > 1:
        distances = appearance_distance(
            np.stack([g.appearance_sum for g in groups]), np.stack([g.appearance_sum for g in groups])
        )
        # Unseen appearance (NaN) may still join within a shot on motion alone, ranked last.
        ranked = np.where(np.isnan(distances), config.stitch_appearance_max, distances)
        np.fill_diagonal(ranked, np.inf)
        ranked[ranked > colour_bound] = np.inf
        shots = np.array([shot_of[id(g.members[0])] for g in groups])
        ranked[shots[:, None] != shots[None, :]] = np.inf  # within a shot here; across cuts below
        upper = np.triu_indices(len(groups), k=1)
        order = np.argsort(ranked[upper], kind="stable")
        merged = False
        for k in order:
            if not np.isfinite(ranked[upper][k]):
                break
            i, j = int(upper[0][k]), int(upper[1][k])
            others = person_frames = None
            if np.isnan(distances[i, j]) or distances[i, j] > config.stitch_appearance_max:
                members = {id(t) for t in groups[i].members + groups[j].members}
                others = [t for t in tracklets if id(t) not in members]
                person_frames = {id(t): g.frames for g in groups for t in g.members}
            face = None
            # faces are described only when _can_join asks: where colours leave doubt (a looped clip's every
            # cut would otherwise cost a description per tracklet)
            if faces is not None and len(faces):
                pair = (groups[i], groups[j])
                face = lambda pair=pair: face_distance(group_face(pair[0]), group_face(pair[1]))  # noqa: E731
            rival = None
            if face is not None:
                rival = lambda d, i=i, j=j: _face_rival(groups, group_face, i, j, d + config.stitch_face_margin)  # noqa: E731
            if _can_join(groups[i], groups[j], float(distances[i, j]), config, others, face, rival, person_frames):
                groups[i] = _Group(
                    groups[i].members + groups[j].members,
                    groups[i].frames | groups[j].frames,
                    groups[i].appearance_sum + groups[j].appearance_sum,
                )
                del groups[j]
                merged = True
                break
        if not merged:
            break
    pieces = [piece for g in groups for piece in split_against_motion(g.members, config)]
    people = join_across_cuts(pieces, config, faces)
    return [sorted(p, key=lambda t: t.start) for p in people]


def reentry_colours(distance: float, earlier: list[Tracklet], later: list[Tracklet], config: TrackingConfig) -> bool:
    """Whether pooled colours ``distance`` apart vouch for someone who was out of view: as close as a
    re-entry's (NaN: not seen, no) and both sides followed long enough to pool them."""
    return (distance <= config.stitch_reentry_appearance_max
            and min(followed_seconds(earlier, config), followed_seconds(later, config))
            >= config.stitch_reentry_min_seconds - 1e-6)


def split_against_motion(members: list[Tracklet], config: TrackingConfig) -> list[list[Tracklet]]:
    """One stitched person, cut wherever the whole of it contradicts a join the greedy order made while
    one side was a lone sighting without a velocity: within a short gap, turning up behind where both sides
    were walking (``walked_back``); walking out of the picture and someone walking in, without the colours
    a re-entry needs (``out_of_view_and_back``)."""
    members = sorted(members, key=lambda t: t.start)
    pieces = [[members[0]]]
    for previous, current in zip(members, members[1:]):
        gap = current.start - previous.end
        if previous.shot_id == current.shot_id and 0 < gap <= config.stitch_reentry_seconds + 1e-6:
            before = pieces[-1]
            after = [m for m in members if m.start >= current.start]
            if walked_back(before, after, previous, current, config.stitch_motion_slack):
                pieces.append([current])
                continue
            if unseen_between(previous, current) and out_of_view_and_back(before, after, previous, current,
                                                                          config.frame_edge_margin):
                pooled = appearance_distance(sum(m.appearance_sum for m in before), sum(m.appearance_sum for m in after))
                if not reentry_colours(float(pooled[0, 0]), before, after, config):
                    pieces.append([current])
                    continue
        pieces[-1].append(current)
    return pieces


def build_tracklets(
    observations: list[FrameObservations], times: np.ndarray, shot_ids: np.ndarray, config: TrackingConfig, fps: float,
    camera_moves: np.ndarray | None = None,
) -> list[Tracklet]:
    """Run a fresh tracker per shot and collect its tracklets (rows the tracker left unassigned are
    not part of any tracklet). ``camera_moves`` (N, 2): the camera's move already taken out of each frame's
    positions (kept with the tracklets for their frame-edge tests)."""
    tracklets: list[Tracklet] = []
    pieces: list[tuple[int, list[tuple[int, int]], np.ndarray]] = []  # (shot, rows, clean descriptors)
    for shot in np.unique(shot_ids):
        positions = np.flatnonzero(shot_ids == shot)
        ids_per_frame = track_shot([observations[p] for p in positions], config, fps)
        by_id: dict[int, list[tuple[int, int]]] = {}
        for position, ids in zip(positions, ids_per_frame):
            for row, track_id in enumerate(ids):
                if track_id >= 0:
                    by_id.setdefault(int(track_id), []).append((int(position), row))
        for track_id in sorted(by_id):
            # The tracker re-finds a lost track by box overlap alone; split at longer gaps so that
            # stitching, which also checks colours, decides whether it is the same person.
            rows = by_id[track_id]
            breaks = [k for k in range(1, len(rows))
                      if times[rows[k][0]] - times[rows[k - 1][0]] > config.track_gap_split_seconds + 1e-6]
            if config.stitch_unseen_ambiguity > 0:
                breaks = sorted(set(breaks) | set(guessed_links(rows, observations, times, config.stitch_unseen_ambiguity)))
            for part in np.split(np.arange(len(rows)), breaks):
                part_rows = [rows[k] for k in part]
                # the tracker follows boxes, not people: cut where the colours say someone else took over
                descriptors = np.stack([_clean_appearance(observations[p], r) for p, r in part_rows])
                breaks = sorted(set(appearance_breaks(descriptors, config.track_split_appearance))
                                | set(competitor_breaks(part_rows, descriptors, observations, config.track_split_competitor_margin)))
                for piece in np.split(np.arange(len(part_rows)), breaks):
                    pieces.append((int(shot), [part_rows[k] for k in piece], descriptors[piece]))
    # a single sample of someone else's box (odd colours in its tracklet that another tracklet seen
    # within track_gap_split_seconds shares more closely) cannot be attributed: it is dropped (left to
    # stitching, it pulled other people's lone rows into wrong groups)
    for shot, piece_rows, descriptors in pieces:
        odd = [k for k in odd_rows(descriptors, config.track_odd_row_appearance)
               if _closer_elsewhere(k, shot, piece_rows, descriptors, pieces, times, config.track_gap_split_seconds)]
        kept = np.array([k for k in range(len(piece_rows)) if k not in odd], int)
        tracklets.append(_make_tracklet(shot, [piece_rows[k] for k in kept], observations, times, descriptors[kept],
                                        camera_moves))
    return tracklets


def _closer_elsewhere(k: int, shot: int, rows: list[tuple[int, int]], descriptors: np.ndarray,
                      pieces: list[tuple[int, list[tuple[int, int]], np.ndarray]], times: np.ndarray, reach_s: float) -> bool:
    """Whether row ``k`` of a tracklet piece is closer in colours to the pooled colours of another piece
    of its shot, seen within ``reach_s`` of it, than to the rest of its own piece."""
    own = descriptors.astype(np.float64).sum(axis=0) - descriptors[k]
    distance = float(appearance_distance(descriptors[k], own)[0, 0])
    t = times[rows[k][0]]
    for other_shot, other_rows, other_descriptors in pieces:
        if other_rows is rows or other_shot != shot or not other_descriptors.any():
            continue
        if min(abs(times[p] - t) for p, _ in other_rows) > reach_s + 1e-6:
            continue
        if float(appearance_distance(descriptors[k], other_descriptors.sum(axis=0))[0, 0]) < distance:
            return True
    return False


_OVERLAP_CONTAMINATES = 0.2  # a box this much covered by another's sees two people's colours


def _covering(frame: FrameObservations, row: int) -> list[int]:
    """The other rows whose boxes cover more than _OVERLAP_CONTAMINATES of the row's box."""
    box = frame.xyxy[row]
    area = max(float((box[2] - box[0]) * (box[3] - box[1])), 1e-9)
    cover = box_intersection_matrix(frame.xyxy, box)[:, 0] / area
    return [j for j in range(len(frame)) if j != row and cover[j] > _OVERLAP_CONTAMINATES]


def guessed_links(rows: list[tuple[int, int]], observations: list[FrameObservations], times: np.ndarray,
                  ratio: float) -> list[int]:
    """Positions in a track where the tracker's link was a guess: the box it took is covered by another
    (colours unreadable), and that other box lies within ``ratio`` times as far from where the track was
    expected as the box taken (stitch_unseen_ambiguity, as ``nearer_alternative``). Two people met there and
    box overlap chose between them. Expected: a new track's first box (it has no velocity: opencv_vtest
    48.0 -> 48.5 s, a new track on one walker took the other's box where they passed); later, the last
    place moved on by the mean of the last two moves. A track's second link is not judged: one move of a
    pose box's jitter is no velocity (a seated girl's box centre went 0.44 -> 0.57 -> 0.39). Stitching,
    which reads both sides' motion, decides instead."""
    centres = [_box_centre(observations[p].xyxy[r]) for p, r in rows]
    at = [float(times[p]) for p, _ in rows]
    guesses = []
    for k in range(1, len(rows)):
        if k == 2 or (k > 2 and not at[k - 3] < at[k - 2] < at[k - 1]):
            continue
        frame = observations[rows[k][0]]
        covering = _covering(frame, rows[k][1])
        if not covering:
            continue
        expected = centres[0]
        if k > 2:
            velocity = ((centres[k - 1] - centres[k - 2]) / (at[k - 1] - at[k - 2])
                        + (centres[k - 2] - centres[k - 3]) / (at[k - 2] - at[k - 3])) / 2
            expected = centres[k - 1] + velocity * (at[k] - at[k - 1])
        reach = ratio * float(np.linalg.norm(centres[k] - expected))
        if any(np.linalg.norm(_box_centre(frame.xyxy[j]) - expected) < reach for j in covering):
            guesses.append(k)
    return guesses


def _box_centre(box: np.ndarray) -> np.ndarray:
    return (np.asarray(box[:2], np.float64) + np.asarray(box[2:], np.float64)) / 2


def _colours_covered(frame: FrameObservations, row: int) -> float:
    """The share of the regions the row's colours are read from (head, torso and legs: appearance.part_boxes)
    that other boxes cover. A box's corners hold no one (an arm stretched out widens it): only what covers the
    measured regions mixes in another person's colours."""
    keypoints = frame.keypoints[row:row + 1] if len(frame.keypoints) else None
    parts = np.nan_to_num(part_boxes(frame.xyxy[row:row + 1], keypoints)[0].astype(np.float64))
    areas = np.clip(parts[:, 2] - parts[:, 0], 0, None) * np.clip(parts[:, 3] - parts[:, 1], 0, None)
    others = np.delete(frame.xyxy, row, axis=0)
    if not len(others) or areas.sum() <= 0:
        return 0.0
    covered = np.minimum(box_intersection_matrix(parts, others).sum(axis=1), areas)
    return float(covered.sum() / areas.sum())


def _clean_appearance(frame: FrameObservations, row: int) -> np.ndarray:
    """The row's descriptor, or zeros (unseen) when other boxes cover part of where it is read: then its
    colours mix two people and say nothing about a hand-over."""
    if _colours_covered(frame, row) > _OVERLAP_CONTAMINATES:
        return np.zeros_like(frame.appearance[row])
    return frame.appearance[row]


_ODD_ROW_MIN_OTHERS = 3  # a row is judged odd only against at least this many other seen rows


def odd_rows(descriptors: np.ndarray, max_distance: float) -> list[int]:
    """Rows of a tracklet (K, D) whose colours are further than ``max_distance`` from the pooled colours
    of all its other seen rows: a single sample where the tracker took someone else's box (an occluder's,
    or a new track opened on one person and handed to the one in front). Unseen rows are never odd, and
    none are when more than a quarter of the seen rows would be; ``max_distance`` <= 0 = off."""
    if max_distance <= 0 or not descriptors.shape[1]:
        return []
    seen = [k for k in range(len(descriptors)) if descriptors[k].sum() > 0]
    if len(seen) < _ODD_ROW_MIN_OTHERS + 1:
        return []
    total = descriptors[seen].astype(np.float64).sum(axis=0)
    odd = [k for k in seen if float(appearance_distance(descriptors[k], total - descriptors[k])[0, 0]) > max_distance]
    # more than a few odd rows: two people's stretches (appearance_breaks' business), not stray samples
    return odd if len(odd) <= len(seen) // (_ODD_ROW_MIN_OTHERS + 1) else []


def appearance_breaks(descriptors: np.ndarray, max_distance: float) -> list[int]:
    """Positions where a tracklet's descriptors (K, D) change for good: the descriptor there and the next
    seen one are both further than ``max_distance`` from the mean of those since the last break (one odd
    detection, e.g. blur or an arm across the torso, does not cut). Unseen (all-zero) rows are skipped."""
    seen = [k for k in range(len(descriptors)) if descriptors[k].sum() > 0] if descriptors.shape[1] else []
    breaks: list[int] = []
    total = None
    for position, k in enumerate(seen):
        if total is not None and position + 1 < len(seen):
            following = descriptors[[k, seen[position + 1]]]
            if np.all(appearance_distance(following, total[None])[:, 0] > max_distance):
                breaks.append(k)
                total = None
        total = descriptors[k].astype(np.float64) if total is None else total + descriptors[k]
    return breaks


_COMPETITOR_REACH = 1.5  # another box this many (previous) box widths from the track's last box could be its person
_COMPETITOR_SIZE_RATIO = 1.5  # ...when their heights differ by at most this factor


def competitor_breaks(rows: list[tuple[int, int]], descriptors: np.ndarray, observations: list[FrameObservations],
                      margin: float) -> list[int]:
    """Positions where the tracker took a box while another box in reach had colours closer (by more
    than ``margin``) to the tracklet's colours so far: two people side by side whose boxes traded places
    between samples (box overlap alone cannot tell them apart). Unseen colours never cut."""
    breaks: list[int] = []
    total = None
    for k, (position, row) in enumerate(rows):
        frame = observations[position]
        if k and total is not None and descriptors[k].any():
            previous = observations[rows[k - 1][0]].xyxy[rows[k - 1][1]]
            width, height = previous[2] - previous[0], previous[3] - previous[1]
            centre = (previous[:2] + previous[2:]) / 2
            others = [j for j in range(len(frame)) if j != row]
            near = [j for j in others
                    if np.linalg.norm((frame.xyxy[j, :2] + frame.xyxy[j, 2:]) / 2 - centre) <= _COMPETITOR_REACH * width
                    and max(frame.xyxy[j, 3] - frame.xyxy[j, 1], height) <= _COMPETITOR_SIZE_RATIO * min(frame.xyxy[j, 3] - frame.xyxy[j, 1], height)]
            seen = [_clean_appearance(frame, j) for j in near]
            seen = [d for d in seen if d.any()]
            if seen:
                taken = float(appearance_distance(descriptors[k], total)[0, 0])
                closest = float(np.nanmin(appearance_distance(np.stack(seen), total)[:, 0]))
                if closest + margin < taken:
                    breaks.append(k)
                    total = None
        if descriptors[k].any():
            total = descriptors[k].astype(np.float64) if total is None else total + descriptors[k]
    return breaks


# a person is about this many head heights tall (adults 7-8; young children 5-6, made taller by it on both sides
# of a gap alike): a box cut short by the frame's bottom or by a nearer person in front still has the person's
# size in its head. 6 left opencv_vtest's red-jacket man, half hidden behind a woman, under the size gate
HEADS_PER_PERSON = 7.5


def person_scales(boxes: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """(K,) how tall each person is, in frame heights: their box height, or ``HEADS_PER_PERSON`` head heights
    where that is more (a box cut short: its height shrinks as more of the person is hidden, the head's does not).
    ``boxes``, ``heads``: (K, 4) normalised xyxy; a NaN head leaves the box height."""
    heights = boxes[:, 3] - boxes[:, 1]
    return np.fmax(heights, HEADS_PER_PERSON * (heads[:, 3] - heads[:, 1]))


def _make_tracklet(
    shot: int, rows: list[tuple[int, int]], observations: list[FrameObservations], times: np.ndarray,
    descriptors: np.ndarray, camera_moves: np.ndarray | None = None,
) -> Tracklet:
    frames = np.array([p for p, _ in rows])
    boxes = np.stack([observations[p].xyxy[r] for p, r in rows])
    heads = np.stack([observations[p].head_xyxy[r] for p, r in rows]).astype(np.float64)
    appearance = np.sum([observations[p].appearance[r] for p, r in rows], axis=0)
    if not descriptors.any():
        # every sighting overlapped by another box (a small person behind a large one): its colours
        # are mostly the other person's, so it has none of its own (stitching goes by motion alone)
        appearance = np.zeros_like(appearance)
    return Tracklet(shot, frames, times[frames].astype(np.float64), boxes, appearance, rows,
                    None if camera_moves is None else camera_moves[frames], person_scales(boxes, heads),
                    np.isfinite(heads).all(axis=1))


def followed_seconds(group: list[Tracklet], config: TrackingConfig) -> float:
    """How long a person was followed: the summed spans of their tracklets plus the gaps stitching
    bridged that the tracker itself would have (up to ``track_gap_split_seconds``): a small person whose
    boxes never overlap from one sampled frame to the next is a chain of one-frame tracklets. An
    isolated one-frame detection (at any sampling rate) never makes a person on its own."""
    ordered = sorted(group, key=lambda t: t.start)
    gaps = [later.start - earlier.end for earlier, later in zip(ordered, ordered[1:])]
    return (sum(t.end - t.start for t in ordered)
            + sum(g for g in gaps if 0 < g <= config.track_gap_split_seconds + 1e-6))


def _sampling_fps(times: np.ndarray, fallback: float) -> float:
    if len(times) < 2:
        return fallback
    step = float(np.median(np.diff(times)))
    return 1.0 / step if step > 0 else fallback


def assign_person_ids(
    observations: list[FrameObservations], times: np.ndarray, shot_ids: np.ndarray, config: TrackingConfig,
    fps: float, faces: FaceBank | None = None, camera_moves: np.ndarray | None = None,
) -> list[FrameObservations]:
    """Track, stitch and number people for a whole clip (``faces``: chips for re-identification).

    ``camera_moves`` (N, 2), normalised (pipeline.camera_motion): how far the picture's content had moved
    at each frame, relative to its shot's first frame. Tracking and stitching then compare positions with
    the camera's move taken out (a pan carries standing people across the picture, and box overlap
    would follow the frame instead of them); frame-edge tests still look at the picture.

    Returns the observations with ``tracker_id`` = person_id (0-based, in order of first appearance,
    ties left to right), with the rows of people followed for less than ``min_track_seconds`` (summed
    tracklet spans) and rows no track claimed removed. ``times`` and ``shot_ids`` give each frame's time and camera shot;
    ``fps`` is the nominal sampling rate (used when the clip has a single frame).
    """
    times = np.asarray(times, np.float64)
    shot_ids = np.asarray(shot_ids)
    if not (len(observations) == len(times) == len(shot_ids)):
        raise ValueError(
            f"assign_person_ids: {len(observations)} frames but {len(times)} times and {len(shot_ids)} shot ids"
        )
    if len(times) > 1 and np.any(np.diff(times) <= 0):
        raise ValueError("assign_person_ids: times must be strictly increasing")
    widths = {o.appearance.shape[1] for o in observations if len(o)}
    if len(widths) > 1:
        raise ValueError(f"assign_person_ids: appearance descriptors of different widths {sorted(widths)}")
    fps = _sampling_fps(times, fps)
    scene = observations
    if camera_moves is not None:
        camera_moves = np.asarray(camera_moves, np.float64).reshape(len(observations), 2)
        if camera_moves.any():
            scene = [frame.translated(-dx, -dy) for frame, (dx, dy) in zip(observations, camera_moves)]
        else:
            camera_moves = None
    groups = stitch_tracklets(build_tracklets(scene, times, shot_ids, config, fps, camera_moves), config, faces)

    kept = [g for g in groups if followed_seconds(g, config) >= config.min_track_seconds - 1e-6]

    def first_sighting(group: list[Tracklet]) -> tuple[int, float]:
        first = min(group, key=lambda t: t.frames[0])
        return int(first.frames[0]), float(first.centre(0)[0])

    kept.sort(key=first_sighting)
    person_of_row: dict[tuple[int, int], int] = {}
    for person_id, group in enumerate(kept):
        for tracklet in group:
            for key in tracklet.rows:
                person_of_row[key] = person_id

    result = []
    for position, frame in enumerate(observations):
        ids = np.array([person_of_row.get((position, row), -1) for row in range(len(frame))], np.int32)
        keep = ids >= 0
        # (FrameObservations cannot select zero rows of a non-empty appearance array: reshape(0, -1))
        selected = frame[keep] if keep.any() else FrameObservations.empty()
        selected.tracker_id = ids[keep]
        result.append(selected)
    return result
