"""One person_id space for a long video perceived as overlapping segments.

Each segment is tracked and stitched on its own (tracking.stitching), so its person ids are local. The
segments of a video are handed to an ``IdentityLedger`` in order; it keeps the video-level identities
found so far and maps each segment's local ids onto them:

1. Overlap hand-off: consecutive segments share a stretch of video (``segment_overlap_seconds``), so
   the same people are seen in the same frames by both. A local id takes over the video-level identity
   whose boxes it overlaps best, by IoU averaged over the shared frames in which either of the two is
   seen (a frame where only one of them is seen counts 0), one-to-one (Hungarian), accepted at
   ``tracking.segment_handoff_iou`` or more. This is the strong link: same frames, same pixels.
2. Appearance: a local id not handed off this way (someone who left before the boundary and comes back
   after it, or who only appears later) joins the closest video-level identity by torso colours
   (tracking.appearance, the distance and ``stitch_appearance_max`` threshold of tracking.stitching),
   among identities not present in this segment - the segment's own stitcher, which saw motion and
   pooled colours, already decided that its local ids are different people - and under the same gates
   as the stitcher: at most ``stitch_max_gap_seconds`` apart, and a plausible move when both sightings
   are in the same camera shot. One local id per identity, most similar pair first.
3. Everyone else is a new person.

The ledger works on plain arrays (rows of a segment's tracks table, already placed on the video's
timeline by pipeline.segments); it knows nothing of tables or files.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from detectors.keypoints import box_iou_matrix
from tracking.config import TrackingConfig
from tracking.appearance import DESCRIPTOR_SIZE, appearance_distance
from tracking.stitching import Tracklet, person_scales, plausible_motion


@dataclass
class SegmentPeople:
    """The people rows of one segment, on the video's timeline. Parallel arrays, one entry per row."""

    person_id: np.ndarray  # (R,) local person ids of the segment
    frame: np.ndarray  # (R,) video-level sampled-frame index; -1 for overlap frames with no counterpart
    time: np.ndarray  # (R,) seconds from the video start
    shot: np.ndarray  # (R,) video-level shot id (meaningful for kept rows)
    box: np.ndarray  # (R, 4) normalised xyxy
    kept: np.ndarray  # (R,) bool: the row is in this segment's own stretch (not the overlap)
    appearance: dict[int, tuple[np.ndarray, int]] = field(default_factory=dict)  # local id -> (mean, n_frames)
    head: np.ndarray | None = None  # (R, 4) normalised head xyxy, NaN where unseen (None: none seen)

    def __post_init__(self) -> None:
        self.person_id = np.asarray(self.person_id, np.int64).reshape(-1)
        n = len(self.person_id)
        self.frame = np.asarray(self.frame, np.int64).reshape(n)
        self.time = np.asarray(self.time, np.float64).reshape(n)
        self.shot = np.asarray(self.shot, np.int64).reshape(n)
        self.box = np.asarray(self.box, np.float64).reshape(n, 4)
        self.kept = np.asarray(self.kept, bool).reshape(n)
        self.head = np.full((n, 4), np.nan) if self.head is None else np.asarray(self.head, np.float64).reshape(n, 4)


@dataclass
class _Identity:
    """A video-level person: pooled colours and the rows of their latest sighting."""

    appearance_sum: np.ndarray  # sum of per-segment mean descriptors, each weighted by its frame count
    last_frames: np.ndarray  # kept rows of the latest segment that saw them (for motion gating)
    last_times: np.ndarray
    last_boxes: np.ndarray
    last_shot: int
    last_heads: np.ndarray  # head boxes of those rows (person_scales), NaN where unseen


def mean_overlap_iou(
    local_ids: np.ndarray, local_frames: np.ndarray, local_boxes: np.ndarray,
    video_ids: np.ndarray, video_frames: np.ndarray, video_boxes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean IoU between every local and every video-level id over the shared frames where either is
    seen (a frame with only one of them adds 0). Rows are (id, frame, box) triples, at most one per id
    and frame. Returns (distinct local ids, distinct video ids, (L, V) mean IoU)."""
    local_unique = np.unique(local_ids)
    video_unique = np.unique(video_ids)
    iou_sum = np.zeros((len(local_unique), len(video_unique)))
    for frame in np.intersect1d(local_frames, video_frames):
        here_local = local_frames == frame
        here_video = video_frames == frame
        iou = box_iou_matrix(local_boxes[here_local], video_boxes[here_video])
        rows = np.searchsorted(local_unique, local_ids[here_local])
        cols = np.searchsorted(video_unique, video_ids[here_video])
        iou_sum[np.ix_(rows, cols)] += iou
    # frames in which each id is seen, and in which both are: union = seen_l + seen_v - both
    local_seen = {i: set(local_frames[local_ids == i].tolist()) for i in local_unique.tolist()}
    video_seen = {i: set(video_frames[video_ids == i].tolist()) for i in video_unique.tolist()}
    union = np.array([[len(local_seen[l] | video_seen[v]) for v in video_unique.tolist()]
                      for l in local_unique.tolist()], np.float64).reshape(len(local_unique), len(video_unique))
    return local_unique, video_unique, np.where(union > 0, iou_sum / np.maximum(union, 1), 0.0)


class IdentityLedger:
    """The video-level identities of one video, built segment by segment (see module doc)."""

    def __init__(self, config: TrackingConfig):
        self.config = config
        self._identities: dict[int, _Identity] = {}
        # kept rows of every segment so far, with their video-level ids (for the overlap hand-off)
        self._frames: list[np.ndarray] = []
        self._ids: list[np.ndarray] = []
        self._boxes: list[np.ndarray] = []

    @property
    def n_identities(self) -> int:
        return len(self._identities)

    def appearance(self, video_id: int) -> np.ndarray:
        """The pooled descriptor of a video-level identity (unnormalised; all zero when never seen)."""
        return self._identities[video_id].appearance_sum

    def hand_off(self, segment: SegmentPeople) -> dict[int, int]:
        """Video-level id for every local id with kept rows in ``segment`` (which must come after every
        segment handed in before it); records the segment's kept rows under those ids."""
        kept_ids = np.unique(segment.person_id[segment.kept]).tolist()
        mapping = self._match_overlap(segment, kept_ids)
        mapping.update(self._match_appearance(segment, [i for i in kept_ids if i not in mapping], set(mapping.values())))
        next_id = len(self._identities)
        for local in self._by_first_sighting(segment, [i for i in kept_ids if i not in mapping]):
            mapping[local] = next_id
            next_id += 1
        self._record(segment, mapping)
        return mapping

    # -- 1. the overlap ----------------------------------------------------------------------------
    def _match_overlap(self, segment: SegmentPeople, kept_ids: list[int]) -> dict[int, int]:
        shared = ~segment.kept & (segment.frame >= 0) & np.isin(segment.person_id, kept_ids)
        if not shared.any() or not self._frames:
            return {}
        frames = np.concatenate(self._frames)
        in_overlap = np.isin(frames, np.unique(segment.frame[shared]))
        if not in_overlap.any():
            return {}
        local, video, mean_iou = mean_overlap_iou(
            segment.person_id[shared], segment.frame[shared], segment.box[shared],
            np.concatenate(self._ids)[in_overlap], frames[in_overlap], np.concatenate(self._boxes)[in_overlap],
        )
        rows, cols = linear_sum_assignment(-mean_iou)
        return {int(local[r]): int(video[c]) for r, c in zip(rows, cols)
                if mean_iou[r, c] >= self.config.segment_handoff_iou}

    # -- 2. appearance -----------------------------------------------------------------------------
    def _match_appearance(self, segment: SegmentPeople, unmatched: list[int], present: set[int]) -> dict[int, int]:
        candidates = [v for v in sorted(self._identities) if v not in present]
        described = [i for i in unmatched if i in segment.appearance]
        if not candidates or not described:
            return {}
        local_descriptors = np.stack([segment.appearance[i][0] for i in described])
        video_descriptors = np.stack([self._identities[v].appearance_sum for v in candidates])
        distance = appearance_distance(local_descriptors, video_descriptors)
        order = np.argsort(np.where(np.isnan(distance), np.inf, distance), axis=None, kind="stable")
        mapping: dict[int, int] = {}
        for flat in order:
            r, c = np.unravel_index(flat, distance.shape)
            if not distance[r, c] <= self.config.stitch_appearance_max:  # also stops at NaN (unseen)
                break
            local, video = described[r], candidates[c]
            if local in mapping or video in mapping.values():
                continue
            if self._gates_allow(segment, local, video):
                mapping[local] = video
        return mapping

    def _gates_allow(self, segment: SegmentPeople, local: int, video: int) -> bool:
        """The stitcher's gates between the identity's last sighting and the local id's first."""
        identity = self._identities[video]
        rows = np.flatnonzero((segment.person_id == local) & segment.kept)
        rows = rows[np.argsort(segment.time[rows], kind="stable")]
        gap = float(segment.time[rows[0]] - identity.last_times[-1])
        if gap > self.config.stitch_max_gap_seconds:
            return False
        if int(segment.shot[rows[0]]) != identity.last_shot:
            return True  # across a cut only colours can vouch for identity, and they did
        earlier = Tracklet(identity.last_shot, identity.last_frames, identity.last_times, identity.last_boxes,
                           identity.appearance_sum, scales=person_scales(identity.last_boxes, identity.last_heads),
                           heads_seen=np.isfinite(identity.last_heads).all(axis=1))
        first_shot = rows[segment.shot[rows] == segment.shot[rows[0]]]
        later = Tracklet(int(segment.shot[rows[0]]), segment.frame[first_shot], segment.time[first_shot],
                         segment.box[first_shot], segment.appearance[local][0],
                         scales=person_scales(segment.box[first_shot], segment.head[first_shot]),
                         heads_seen=np.isfinite(segment.head[first_shot]).all(axis=1))
        return plausible_motion(earlier, later, self.config)

    # -- bookkeeping -------------------------------------------------------------------------------
    @staticmethod
    def _by_first_sighting(segment: SegmentPeople, local_ids: list[int]) -> list[int]:
        """Local ids in order of their first kept row, ties left to right (as tracking numbers people)."""
        def first(local: int) -> tuple[float, float]:
            rows = np.flatnonzero((segment.person_id == local) & segment.kept)
            row = rows[np.lexsort((segment.box[rows, 0] + segment.box[rows, 2], segment.frame[rows]))[0]]
            return float(segment.frame[row]), float(segment.box[row, 0] + segment.box[row, 2])

        return sorted(local_ids, key=first)

    def _record(self, segment: SegmentPeople, mapping: dict[int, int]) -> None:
        kept = segment.kept
        video_ids = np.array([mapping[int(i)] for i in segment.person_id[kept]], np.int64)
        self._frames.append(segment.frame[kept])
        self._ids.append(video_ids)
        self._boxes.append(segment.box[kept])
        for local, video in mapping.items():
            rows = np.flatnonzero((segment.person_id == local) & kept)
            rows = rows[np.argsort(segment.time[rows], kind="stable")]
            # pooled like the stitcher pools tracklets: descriptors summed, so longer sightings weigh more
            mean, n_frames = segment.appearance.get(local, (np.zeros(DESCRIPTOR_SIZE), 0))
            weighted = np.asarray(mean, np.float64) * max(int(n_frames), 1)
            previous = self._identities.get(video)
            if previous is not None and previous.appearance_sum.shape != weighted.shape:
                raise ValueError(f"appearance descriptors of different widths {previous.appearance_sum.shape} "
                                 f"and {weighted.shape} for one video")
            pooled = weighted if previous is None else previous.appearance_sum + weighted
            last_shot = int(segment.shot[rows[-1]])
            in_last_shot = segment.shot[rows] == last_shot
            self._identities[video] = _Identity(
                appearance_sum=pooled,
                last_frames=segment.frame[rows][in_last_shot],
                last_times=segment.time[rows][in_last_shot],
                last_boxes=segment.box[rows][in_last_shot],
                last_shot=last_shot,
                last_heads=segment.head[rows][in_last_shot],
            )
