"""People across camera cuts, as one assignment per cut rather than greedy pairwise gates.

After stitching within each shot (tracking/stitching.py), the people of every shot, taken in order, are
matched to the people seen before it: rows are the people of the earlier shots, columns the people of
the new one. Whoever is on screen after a cut may be someone else (a cutaway, a reverse shot), so the
new shot's people take an old id only on evidence:

- torso colours pooled over each person (Bhattacharyya; 0.15 apart or less: the same clothes);
- faces pooled over each person (dlib descriptors, tracking/faces.py; one person's pooled faces
  <= 0.41 apart on the shared clips, two people's >= 0.41), described only for the people colours
  leave open;
- place and size on screen (a cut back to the same camera set-up shows people where they were, at the size
  they were: the person's height, from the head where a close-up cuts the box), which only supports the
  colours, never joins alone.

A return to an earlier shot's camera set-up settles its people first: when every person of the new shot
(two or more) stands, one to one, where one of that earlier shot's people stood, at their size, and clothes
and faces do not contradict it, the whole arrangement repeated says what one person at a place cannot
(``_same_arrangement``).

The Hungarian assignment on the pooled cost, among the pairs one kind of evidence could decide, picks one
old person per new person and the other way round (two people of one shot are never one person, and
neither are two people of an earlier shot that share a frame: the rows are whole people already). A pair
is decided by close colours, agreeing faces, or colours within the within-shot bound at the same place and
size, when nothing contradicts it (faces beyond the veto, or colours far apart unless the faces are
sure), and only when every rival in its row and column is told apart from it: by faces first, then colours,
then place, the first of these that differs by its margin (and is near enough to mean something)
decides, and must favour the pair (none differing: refused); faces that are sure (<= cut_face_sure)
outrank a rival whose face was never seen. A lost id is better than one id over two people. A change
of light between shots moves everyone's colours alike, so colour bounds are loose and the rival test
does the work.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np
from scipy.optimize import linear_sum_assignment

from tracking.appearance import appearance_distance
from tracking.config import TrackingConfig
from tracking.faces import FaceBank, face_distance

if TYPE_CHECKING:
    from tracking.stitching import Tracklet

_NO = 1e6  # cost of a pair with nothing to compare (Hungarian needs finite entries)


class _People:
    """Pooled evidence of a list of people (each a list of tracklets), computed once."""

    def __init__(self, people: list[list["Tracklet"]], faces: Optional[FaceBank]):
        self.people = people
        self.colours = np.stack([np.sum([t.appearance_sum for t in p], axis=0).astype(np.float64) for p in people])
        self._faces = faces
        self._face: dict[int, Optional[np.ndarray]] = {}
        self._places: dict[int, list[tuple[np.ndarray, float]]] = {}

    def face(self, k: int) -> Optional[np.ndarray]:
        """The mean of the person's tracklets' pooled faces (described on first use), None without one."""
        if self._faces is None or not len(self._faces):
            return None
        if k not in self._face:
            self._face[k] = self._faces.person(self.people[k])
        return self._face[k]

    def followed(self, k: int) -> float:
        return float(sum(t.end - t.start for t in self.people[k]))

    def shots(self, k: int) -> list[int]:
        """The shots the person was seen in, in order (``places`` follows it)."""
        return sorted({t.shot_id for t in self.people[k]})

    def places(self, k: int) -> list[tuple[np.ndarray, float]]:
        """Median box (normalised xyxy, in the picture) and median height (``Tracklet.scale``, in frame
        heights) of the person in each shot they were seen in (computed on first use: every pair of a cut asks)."""
        if k not in self._places:
            places = []
            for shot in self.shots(k):
                members = [t for t in self.people[k] if t.shot_id == shot]
                box = np.median(np.concatenate([t.picture_boxes() for t in members]), axis=0)
                places.append((box, float(np.median([t.scale(i) for t in members for i in range(len(t.times))]))))
            self._places[k] = places
        return self._places[k]


def _place_distance(earlier: list[tuple[np.ndarray, float]], later: list[tuple[np.ndarray, float]],
                    max_size_ratio: float) -> float:
    """How far apart two people stand, in box widths (the wider of the two), over their closest pair of
    shots; inf when their heights differ by more than ``max_size_ratio`` there. Heights are the person's
    (``Tracklet.scale``: from the head where the box is cut short), not the box's: a close-up's box is cut
    by the frame's bottom edge to about the height a wide shot's whole body has, at twice the head size."""
    best = np.inf
    for a, ha in earlier:
        for b, hb in later:
            if max(ha, hb) > max_size_ratio * max(min(ha, hb), 1e-6):
                continue
            width = max(a[2] - a[0], b[2] - b[0], 1e-6)
            best = min(best, float(np.linalg.norm((a[:2] + a[2:]) / 2 - (b[:2] + b[2:]) / 2) / width))
    return best


class Cue:
    """One kind of evidence between rows and columns: distances (NaN: not measured), the margin that
    tells two of them apart, the bound beyond which a distance says only "someone else" (two such say
    nothing about which is nearer), and the distance at or below which the pair is sure enough that a
    rival this cue cannot measure is no rival."""

    def __init__(self, distance: np.ndarray, margin: float, informative: float = np.inf, sure: float = -1.0,
                 identity: bool = True):
        self.distance, self.margin, self.informative, self.sure = distance, margin, informative, sure
        self.identity = identity  # faces and colours say who someone is; place only where


def _told_apart(cues: list[Cue], pair: tuple[int, int], rival: tuple[int, int]) -> bool:
    """Whether ``pair`` is closer than ``rival`` by the first cue, strongest first, that tells the two
    apart (measured for both, at least its margin between them, the nearer within its informative bound);
    False when that cue favours the rival or none tells them apart."""
    for cue in cues:
        a, b = cue.distance[pair], cue.distance[rival]
        if a <= cue.sure and np.isnan(b):
            return True  # e.g. faces 0.13 apart against someone whose face was never seen
        if np.isnan(a) or np.isnan(b) or abs(a - b) < cue.margin or min(a, b) > cue.informative:
            continue
        return bool(a < b)
    return False


def _has_rival(cues: list[Cue], i: int, j: int, pairs: dict[int, int], settled: frozenset = frozenset()) -> bool:
    """Whether another entry of row i or column j is about as close as (i, j): not told apart by the
    cues (``_told_apart``). No rival: an entry with no identity cue measured (neither face nor colours:
    it cannot be told apart from anyone, nor joined), or one whose row or column has its own match in
    ``pairs`` (row -> column) that is told apart from it or already ``settled`` (the other person is better
    explained)."""
    n, m = cues[0].distance.shape
    unmeasured = np.all([np.isnan(c.distance) for c in cues if c.identity], axis=0)
    column_of = pairs
    row_of = {col: row for row, col in pairs.items()}
    for rival in [(k, j) for k in range(n) if k != i] + [(i, k) for k in range(m) if k != j]:
        if unmeasured[rival] or _told_apart(cues, (i, j), rival):
            continue
        r, c = rival
        own = (r, column_of[r]) if r != i and r in column_of else (row_of[c], c) if c != j and c in row_of else None
        if own is not None and own != (i, j) and (own in settled or _told_apart(cues, own, rival)):
            continue
        return True
    return False


def match_across_cut(rows: _People, cols: _People, config: TrackingConfig) -> list[tuple[int, int]]:
    """Pairs (row, column): the earlier person each of the new shot's people is, where the evidence
    decides (module doc)."""
    n, m = len(rows.people), len(cols.people)
    if not n or not m:
        return []
    colour = appearance_distance(rows.colours, cols.colours)  # NaN: not seen
    followed = np.array([[min(rows.followed(i), cols.followed(j)) >= config.stitch_reentry_min_seconds - 1e-6
                          for j in range(m)] for i in range(n)])
    close_colour = followed & (colour <= config.stitch_reentry_appearance_max)  # NaN compares False

    # 1. pairs that close colours settle (each other's only close match by a margin): no face needed (a
    #    looped clip's every cut would otherwise cost a description per person)
    by_colour = np.where(np.isnan(colour), 1.0, colour)
    candidates = {int(i): int(j) for i, j in zip(*linear_sum_assignment(by_colour)) if close_colour[i, j]}
    pairs: list[tuple[int, int]] = []
    for i, j in candidates.items():
        if not _has_rival([Cue(colour, config.cut_colour_margin)], i, j, candidates):
            pairs.append((i, j))
    open_rows = [i for i in range(n) if i not in {p[0] for p in pairs}]
    open_cols = [j for j in range(m) if j not in {p[1] for p in pairs}]
    if not open_rows or not open_cols:
        return pairs

    # 2. the rest on pooled evidence: faces (described now), colours, place
    face = np.full((n, m), np.nan)
    for j in open_cols:
        if cols.face(j) is None:
            continue
        for i in range(n):  # every row: a face rival may be someone already settled in step 1
            face[i, j] = face_distance(rows.face(i), cols.face(j))
    place = np.array([[_place_distance(rows.places(i), cols.places(j), config.cut_place_max_size_ratio)
                       for j in range(m)] for i in range(n)])
    # place only supports colours (module doc): where no colours compare, it does not pick the pair either (a
    # close-up's body box can stand where someone else stood in the wide shot)
    terms = np.stack([face / config.stitch_face_match,
                      colour / config.stitch_face_appearance_max,
                      np.where(np.isnan(colour), np.nan, np.minimum(place / config.cut_place_max_widths, 2.0))])
    identity = ~np.isnan(face) | ~np.isnan(colour)
    measured = (~np.isnan(terms)).sum(axis=0)
    cost = np.where(identity, np.nansum(terms, axis=0) / np.maximum(measured, 1), _NO)
    sub = cost[np.ix_(open_rows, open_cols)]
    # faces further apart than a match say only "someone else" (dlib descriptors of small or turned faces
    # scatter 0.5-0.8 from everyone), places further than the bound likewise
    cues = [Cue(face, config.stitch_face_margin, config.stitch_face_match, config.cut_face_sure),
            Cue(colour, config.cut_colour_margin),
            Cue(np.where(np.isinf(place), np.nan, place), config.cut_place_margin, config.cut_place_max_widths,
                identity=False)]
    # a return to an earlier set-up settles its people (unless close colours already paired them otherwise)
    arrangement = _same_arrangement(rows, cols, colour, face, config)
    if all((i, j) in pairs or (i in open_rows and j in open_cols) for i, j in arrangement):
        pairs += [p for p in arrangement if p not in pairs]
    settled = frozenset(pairs)
    decided = dict(pairs)
    # colours far apart contradict agreeing faces only when someone else's are nearer: a change of light
    # moves everyone's colours (mmaction2_hug_lab replayed darker and warmer: the left man's pooled colours
    # 0.62 from his own, 0.65-0.86 from everyone else; his face 0.37 from his own)
    with np.errstate(invalid="ignore"):
        nearest = ((colour <= np.nanmin(np.where(np.isnan(colour), np.inf, colour), axis=0, keepdims=True))
                   & (colour <= np.nanmin(np.where(np.isnan(colour), np.inf, colour), axis=1, keepdims=True)))
    # the assignment picks among the pairs one kind of evidence could decide: a cheaper pair that none could
    # (a wide shot's person against the close-up standing where he stood, its colours 0.57 away) must not take
    # a person from the pair that clothes and place do decide (the same man back in the wide shot, 0.30 away)
    f, c, p = face, colour, place
    with np.errstate(invalid="ignore"):
        faces_agree = (f <= config.stitch_face_match) & (
            (c <= config.stitch_face_appearance_max) | np.isnan(c) | (f <= config.cut_face_sure) | nearest)
        # however short either shot: place and size carry what pooling over 0.5 s would (a close-up of 0.67 s
        # between two wide shots left its man one sample, dropped as an isolated detection when not joined)
        colours_here = ((c <= config.stitch_appearance_max) & (p <= config.cut_place_max_widths)
                        & ~(f > config.stitch_face_veto))
    decidable = (faces_agree | colours_here)[np.ix_(open_rows, open_cols)]
    for a, b in zip(*linear_sum_assignment(np.where(decidable, sub, _NO))):
        if decidable[a, b]:
            decided[open_rows[a]] = open_cols[b]
    for i, j in decided.items():
        if (i, j) not in pairs and not _has_rival(cues, i, j, decided, settled):
            pairs.append((i, j))
    return pairs


def _same_arrangement(rows: _People, cols: _People, colour: np.ndarray, face: np.ndarray,
                      config: TrackingConfig) -> list[tuple[int, int]]:
    """Pairs from a return to an earlier shot's camera set-up: the new shot's people (two or more), one to
    one, each where one of that shot's people stood, at their size, each the only one of that shot's people
    there whose clothes and face do not contradict (below), and only one earlier shot so matched. One person at a place may be anyone framed alike; a
    whole arrangement repeated is the same set-up, and a close-up's person seen elsewhere is then no rival.
    Clothes and faces must not contradict it: colours within stitch_face_appearance_max (a cut moves light
    and pose: tvhid_highfive_0005's woman cut by the frame's edge 0.35 from her own, pyscenedetect's B 0.41),
    each pair's the nearest in its row and column, and no face beyond the veto. A person without colours
    (boxes overlapping throughout: an embrace) contradicts nothing, but some pair's colours must compare."""
    m = len(cols.people)
    if m < 2:
        return []
    found: set[tuple[tuple[int, int], ...]] = set()
    for shot in sorted({s for i in range(len(rows.people)) for s in rows.shots(i)}):
        members = [i for i in range(len(rows.people)) if shot in rows.shots(i)]
        if len(members) < m:
            continue
        near = np.zeros((len(members), m), bool)
        for a, i in enumerate(members):
            where = rows.places(i)[rows.shots(i).index(shot)]
            for j in range(m):
                distance = _place_distance([where], cols.places(j), config.cut_place_max_size_ratio)
                near[a, j] = (distance <= config.cut_place_max_widths and not colour[i, j] > config.stitch_face_appearance_max
                              and not face[i, j] > config.stitch_face_veto)
        if not (np.all(near.sum(axis=0) == 1) and np.all(near.sum(axis=1) <= 1)):
            continue
        # and the clothes agree with the places: each pair's colours the nearest in its row and column
        among = colour[members]
        compared = [(a, j) for a, j in zip(*np.nonzero(near)) if not np.isnan(among[a, j])]
        if compared and all(among[a, j] <= np.nanmin(among[:, j]) and among[a, j] <= np.nanmin(among[a]) for a, j in compared):
            found.add(tuple((members[a], int(j)) for a, j in zip(*np.nonzero(near))))
    return list(found.pop()) if len(found) == 1 else []


def join_across_cuts(people: list[list["Tracklet"]], config: TrackingConfig,
                     faces: Optional[FaceBank] = None) -> list[list["Tracklet"]]:
    """People stitched within their shots -> people across the whole clip: shot by shot, each new shot's
    people are matched to those seen before (``match_across_cut``); those not matched stay new people."""
    shot_of = [min(t.shot_id for t in p) for p in people]
    joined: list[list["Tracklet"]] = []
    for shot in sorted(set(shot_of)):
        new = [p for p, s in zip(people, shot_of) if s == shot]
        start = min(t.start for p in new for t in p)
        # people gone longer than stitch_max_gap_seconds are not looked for
        candidates = [k for k, p in enumerate(joined) if start - max(t.end for t in p) <= config.stitch_max_gap_seconds]
        pairs = []
        if candidates:
            pairs = match_across_cut(_People([joined[k] for k in candidates], faces), _People(new, faces), config)
        matched = {j: candidates[i] for i, j in pairs}
        for j, person in enumerate(new):
            if j in matched:
                joined[matched[j]] = joined[matched[j]] + person
            else:
                joined.append(person)
    return joined
