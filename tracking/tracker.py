"""Frame-to-frame association with Ultralytics' BYTETracker / BOT-SORT, one tracker per camera shot.

The trackers see boxes, scores and each detection's colour descriptor (tracking.appearance). Box overlap
decides who is who, as in ByteTrack, but a track never takes a detection whose colours are clearly
another person's (Hellinger distance to the track's smoothed descriptor above ``track_appearance_gate``):
two people walking side by side otherwise swap ids when their boxes trade places. Their ids are
short-lived tracklet ids; identity over the whole video is decided afterwards by ``tracking.stitching``.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from detectors.keypoints import box_iou_matrix
from detectors.observation import FrameObservations
from tracking.appearance import appearance_distance
from tracking.config import TrackingConfig

TRACKERS = ("bytetrack", "botsort")
# The Kalman filters behave the same in any unit; a virtual 1000-pixel canvas keeps their numbers in
# the range Ultralytics tunes for.
_CANVAS = 1000.0


class _ScaledBoxes:
    """The detections view Ultralytics' trackers read: conf, cls, xywh (and xyxy) + boolean indexing."""

    def __init__(self, xyxy: np.ndarray, conf: np.ndarray):
        self.xyxy = np.asarray(xyxy, np.float32) * _CANVAS
        self.conf = np.asarray(conf, np.float32)
        self.cls = np.zeros(len(self.conf), np.float32)

    @property
    def xywh(self) -> np.ndarray:
        centre = (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2
        return np.concatenate([centre, self.xyxy[:, 2:] - self.xyxy[:, :2]], axis=1)

    def __len__(self) -> int:
        return len(self.conf)

    def __getitem__(self, index: np.ndarray) -> "_ScaledBoxes":
        return _ScaledBoxes(self.xyxy[index] / _CANVAS, self.conf[index])


def _colour_gated(base: type) -> type:
    """``base`` (BYTETracker or BOTSORT) whose association refuses colour-incompatible pairs. Colours
    travel as BOT-SORT's "native" re-id features (``model='auto'``: per-detection features given to
    ``update``), square roots of the histograms, so 1 - cosine similarity is 1 - the Bhattacharyya
    coefficient, i.e. the squared Hellinger distance."""
    from ultralytics.trackers.bot_sort import BOTSORT
    from ultralytics.trackers.utils import matching

    class ColourGated(BOTSORT):
        use_botsort_distance = base is BOTSORT

        def get_dists(self, tracks, detections):
            dists = super().get_dists(tracks, detections) if self.use_botsort_distance else self._byte_dists(tracks, detections)
            if len(tracks) and len(detections):
                colour = matching.embedding_distance(tracks, detections)
                known = (np.array([t.smooth_feat is not None for t in tracks])[:, None]
                         & np.array([d.curr_feat is not None for d in detections])[None, :])
                dists = np.where(known & (colour > self.gate ** 2), 1.0, dists)
            return dists

        def _byte_dists(self, tracks, detections):
            dists = matching.iou_distance(tracks, detections)
            return matching.fuse_score(dists, detections) if self.args.fuse_score else dists

    return ColourGated


def make_tracker(config: TrackingConfig, fps: float):
    """A fresh Ultralytics tracker whose lost-track buffer is ``track_buffer_seconds`` at ``fps``, with
    colour-gated association (see the module doc)."""
    from detectors import use_ultralytics_offline

    use_ultralytics_offline()
    from ultralytics.trackers.bot_sort import BOTSORT
    from ultralytics.trackers.byte_tracker import BYTETracker

    if config.tracker not in TRACKERS:
        raise ValueError(f"unknown tracker {config.tracker!r}; choose one of {TRACKERS}")
    args = SimpleNamespace(
        tracker_type=config.tracker,
        track_high_thresh=config.track_high_thresh,
        track_low_thresh=config.track_low_thresh,
        new_track_thresh=config.new_track_thresh,
        track_buffer=max(1, int(round(config.track_buffer_seconds * fps))),
        match_thresh=config.match_thresh,
        fuse_score=True,
        # BOT-SORT extras. Frames are released right after detection, so there is no image for
        # camera-motion compensation. Re-id features are the colour descriptors ("auto": given per
        # detection); BOT-SORT proper also lets close colours rescue a low-overlap match.
        gmc_method="none",
        proximity_thresh=0.5,
        appearance_thresh=0.8,
        with_reid=True,
        model="auto",
    )
    tracker = _colour_gated(BOTSORT if config.tracker == "botsort" else BYTETracker)(args)
    tracker.gate = config.track_appearance_gate
    return tracker


def track_shot(observations: list[FrameObservations], config: TrackingConfig, fps: float) -> list[np.ndarray]:
    """Run one new tracker over the consecutive frames of a shot. Returns, per frame, an (N,) int32
    array of tracklet ids (>= 1) for that frame's rows, -1 where a row was left unassigned (a weak
    detection that matched no track); a track takes the detection it was just before it started
    (``reach_back_to_first_sightings``)."""
    tracker = make_tracker(config, fps)
    result = []
    for frame in observations:
        ids = np.full(len(frame), -1, np.int32)
        features = np.sqrt(np.clip(frame.appearance, 0.0, None)) if frame.appearance.shape[1] else None
        tracker.update(_ScaledBoxes(frame.xyxy, frame.confidence), feats=features)
        # Every track touched this frame, including ones born here: Ultralytics reports a new track
        # only from its second frame on, which would drop the first sighting of every person.
        for track in tracker.tracked_stracks:
            if track.frame_id == tracker.frame_id and 0 <= int(track.idx) < len(frame):
                ids[int(track.idx)] = track.track_id
        result.append(ids)
    reach_back_to_first_sightings(observations, result, config)
    return result


def reach_back_to_first_sightings(observations: list[FrameObservations], ids: list[np.ndarray],
                                  config: TrackingConfig) -> None:
    """Give each track, in place, the detection it was seen as just before it started, where the tracker left
    that detection without a track. A track starts only from a detection scored at least
    ``new_track_thresh``, while a person's detections are kept from ``person_conf``: someone the detector was
    less sure of in their first sampled frame (tvhid_handshake_0001's B at 0.47 in the clip, 0.38 in a
    re-encoded copy, mid-handshake) lost that row. The unassigned detection of the frame before a track's
    first whose box overlaps the track's first box as the tracker's own association requires (IoU at least
    1 - ``match_thresh``), with colours within ``track_appearance_gate`` where both are seen, joins it, the
    best overlap first; then the frame before that, as long as one does."""
    for position in range(len(observations) - 1, 0, -1):
        here, before = observations[position], observations[position - 1]
        free = np.flatnonzero(ids[position - 1] < 0)
        tracked_before = set(ids[position - 1].tolist())
        starting = [r for r in np.flatnonzero(ids[position] >= 0) if ids[position][r] not in tracked_before]
        if not len(free) or not starting:
            continue
        overlap = box_iou_matrix(here.xyxy[starting], before.xyxy[free])
        if here.appearance.shape[1] and before.appearance.shape[1]:
            colours = appearance_distance(here.appearance[starting], before.appearance[free])
            overlap = np.where(np.isfinite(colours) & (colours > config.track_appearance_gate), 0.0, overlap)
        taken_tracks, taken_rows = set(), set()
        for flat in np.argsort(-overlap, axis=None, kind="stable").tolist():
            i, j = divmod(flat, len(free))
            if overlap[i, j] < 1.0 - config.match_thresh:
                break
            if i in taken_tracks or j in taken_rows:
                continue
            ids[position - 1][free[j]] = ids[position][starting[i]]
            taken_tracks.add(i)
            taken_rows.add(j)
