"""Motion rivals: a join on motion alone is refused where another box fits the person's own motion better.

At a low sampling rate (2 fps) walkers' boxes rarely overlap from one sample to the next, so a person is a
chain of one-frame tracklets that stitching joins on motion; where two people cross, their boxes overlap and
their colours are unreadable (stitching._clean_appearance), so motion alone decides. A one-frame tracklet has
no velocity of its own, and "stood still" then fits the crosser's box as well as the person's own next box
(opencv_vtest 16.5 -> 17.0 s: a man walking right joined to a man walking left 0.014 away). The group the
tracklet already belongs to does have a velocity: extrapolated over the gap it says where the person went.
When another sighting lands nearer that prediction (by more than a margin in box widths) than the candidate
does, the candidate contradicts the person's motion and someone else fits it: motion does not vouch. The
test runs both ways (the later group's velocity, extrapolated backwards, must fit the earlier box too).

Walking back: a person seen walking one way before a short gap and the same way after it cannot turn up
behind where they were: that needs two turns within the gap. Whatever the colours say (two people in dark
coats), such a join is refused (opencv_vtest 13.5 -> 15.5 s: a man in a black coat walking right out of the
frame at x 0.85, a man in a leather jacket stepping out from behind a sign at 0.61, also walking right).

Out of view and back: a person seen walking out of the picture at a frame edge, and someone walking in at an
edge after a gap, are joined only as a re-entry (closely pooled colours), however short the gap: while out of
view nothing followed the person, and whoever walks in may be someone else (opencv_vtest 20.5 -> 22.0 s: a
man in a leather jacket leaves at the right edge, a man in a black coat walks in there 1.5 s later). Someone
seen at the edge on two consecutive samples was never out of view (stitching.unseen_between): no re-entry.
"""
from __future__ import annotations

import numpy as np

# a group moves when its centre covers at least this many of its box widths per second: a standing person's
# box centre jitters by about 0.15 widths from sample to sample (opencv_vtest at 2 fps), so a velocity over
# two samples half a second apart reads up to about 0.6 widths per second without any motion
MOVING_WIDTHS_PER_S = 1.0
# stitching's too: a velocity is measured over the sightings of the last second before a gap (a tracklet's,
# or here a whole group's) and carried at most this far into it
VELOCITY_WINDOW_S = 1.0
EXTRAPOLATE_MAX_S = 1.0


def _sightings(members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times (K,), centres (K, 2) and box widths (K,) of a group's tracklets, in time order."""
    times = np.concatenate([m.times for m in members])
    boxes = np.concatenate([m.boxes for m in members])
    order = np.argsort(times, kind="stable")
    boxes = boxes[order]
    return times[order], (boxes[:, :2] + boxes[:, 2:]) / 2, boxes[:, 2] - boxes[:, 0]


def _velocity(times: np.ndarray, centres: np.ndarray, at: float, forward: bool) -> np.ndarray | None:
    """Centre velocity over the sightings within a second before ``at`` (``forward``) or after it; None when
    they span no time (a single sighting says nothing about where the person was going)."""
    if forward:
        near = np.flatnonzero((times <= at + 1e-6) & (times >= at - VELOCITY_WINDOW_S - 1e-6))
    else:
        near = np.flatnonzero((times >= at - 1e-6) & (times <= at + VELOCITY_WINDOW_S + 1e-6))
    if len(near) < 2 or times[near[-1]] - times[near[0]] <= 0:
        return None
    return (centres[near[-1]] - centres[near[0]]) / (times[near[-1]] - times[near[0]])


def motion_at(members, at: float, forward: bool) -> tuple[np.ndarray, np.ndarray, float] | None:
    """A group's motion at time ``at`` (its last sighting before a gap, ``forward``, or its first after one):
    (velocity over the second before / after, centre and box width of the sighting nearest ``at``); None
    without a velocity."""
    times, centres, widths = _sightings(members)
    velocity = _velocity(times, centres, at, forward)
    if velocity is None:
        return None
    k = int(np.argmin(np.abs(times - at)))
    return velocity, centres[k], float(widths[k])


def _sides(earlier_members, later_members, previous, current) -> tuple[list, list]:
    """The earlier group's tracklets up to ``previous`` and the later group's from ``current`` on: the two
    sides of the gap whose motion is read."""
    return ([m for m in earlier_members if m.start <= previous.end + 1e-6],
            [m for m in later_members if m.end >= current.start - 1e-6])


def _rival_fits_better(from_members, at: float, target: np.ndarray, target_t: float, forward: bool,
                       others, margin: float) -> bool:
    motion = motion_at(from_members, at, forward)
    if motion is None:
        return False
    velocity, origin, width = motion

    def predicted(t: float) -> np.ndarray:
        return origin + velocity * float(np.clip(t - at, -EXTRAPOLATE_MAX_S, EXTRAPOLATE_MAX_S))

    own_error = float(np.linalg.norm(target - predicted(target_t)))
    low, high = (at, target_t) if forward else (target_t, at)
    for other in others:
        inside = np.flatnonzero((other.times > low + 1e-6) & (other.times < high - 1e-6)
                                | (np.abs(other.times - target_t) <= 1e-6))
        for j in inside:
            centre = (other.boxes[j, :2] + other.boxes[j, 2:]) / 2
            if float(np.linalg.norm(centre - predicted(float(other.times[j])))) + margin * width < own_error:
                return True
    return False


def motion_rival(earlier_members, later_members, previous, current, others, margin: float) -> bool:
    """Whether joining ``previous`` (a tracklet of the earlier group ``earlier_members``) to ``current`` (of
    ``later_members``) contradicts either group's own motion while another tracklet of ``others`` (neither
    group's) has a sighting, in the gap or at the candidate's frame, nearer the extrapolated position by more
    than ``margin`` of the predicting group's box width. ``margin`` <= 0: off."""
    if margin <= 0:
        return False
    before, after = _sides(earlier_members, later_members, previous, current)
    return (_rival_fits_better(before, previous.end, current.centre(0), current.start, True, others, margin)
            or _rival_fits_better(after, current.start, previous.centre(-1), previous.end, False, others, margin))


def walked_back(earlier_members, later_members, previous, current, slack: float) -> bool:
    """Whether joining ``previous`` (of the earlier group ``earlier_members``) to ``current`` (of
    ``later_members``) puts the person behind where they were: both groups move
    (``MOVING_WIDTHS_PER_S``) and the later start lies more than ``slack`` box widths behind the earlier
    end along each group's direction of travel."""
    before, after = _sides(earlier_members, later_members, previous, current)
    width = float(max(previous.boxes[-1, 2] - previous.boxes[-1, 0], current.boxes[0, 2] - current.boxes[0, 0]))
    step = current.centre(0) - previous.centre(-1)
    for members, at, forward in ((before, previous.end, True), (after, current.start, False)):
        motion = motion_at(members, at, forward)
        if motion is None:
            return False
        velocity, _, own_width = motion
        speed = float(np.linalg.norm(velocity))
        if speed < MOVING_WIDTHS_PER_S * own_width:
            return False
        if float(step @ velocity) / speed >= -slack * width:
            return False
    return True


def frame_edge_directions(box: np.ndarray, margin: float) -> list[np.ndarray]:
    """Outward unit directions of the frame edges a normalised xyxy box touches (within ``margin``): left,
    right and bottom, where people leave the picture (the top edge cuts heads of people still in view)."""
    out = []
    if box[0] <= margin:
        out.append(np.array([-1.0, 0.0]))
    if box[2] >= 1.0 - margin:
        out.append(np.array([1.0, 0.0]))
    if box[3] >= 1.0 - margin:
        out.append(np.array([0.0, 1.0]))
    return out


def out_of_view_and_back(earlier_members, later_members, previous, current, margin: float) -> bool:
    """Whether ``previous`` (of the earlier group) walks out of the picture and ``current`` (of the later
    group) walks into it: the one's last box touches a frame edge (within ``margin``) with its group moving
    out through it, the other's first box touches an edge with its group moving in (each at least
    ``MOVING_WIDTHS_PER_S``)."""
    before, after = _sides(earlier_members, later_members, previous, current)
    for members, box, at, forward, sign in ((before, previous.picture_box(-1), previous.end, True, 1.0),
                                            (after, current.picture_box(0), current.start, False, -1.0)):
        edges = frame_edge_directions(box, margin)
        if not edges:
            return False
        motion = motion_at(members, at, forward)
        if motion is None:
            return False
        velocity, _, own_width = motion
        # leaving: moving out through the edge; arriving: moving in from it (velocity against the outward side)
        if not any(sign * float(velocity @ edge) >= MOVING_WIDTHS_PER_S * own_width for edge in edges):
            return False
    return True

