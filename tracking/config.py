"""Settings of tracking, tracklet stitching and identity hand-over between segments.

Part of the one configuration (pipeline/config.py assembles every section into ``Config``; users set these
under the section name in ``--config`` YAML). Times are in seconds, never frames, so results do not change
with the sampling rate."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrackingConfig:
    tracker: str = "bytetrack"  # bytetrack | botsort
    track_buffer_seconds: float = 2.0  # how long a lost track may come back, converted to frames at --fps
    track_high_thresh: float = 0.4
    track_low_thresh: float = 0.1
    new_track_thresh: float = 0.4
    match_thresh: float = 0.8
    # a track never takes a detection whose colours are further than this (Hellinger) from its own
    track_appearance_gate: float = 0.55
    # a tracklet is cut where its colours change for good (two detections in a row this far, Bhattacharyya,
    # from its mean so far): the tracker matched boxes of two people who crossed; stitching re-joins
    track_split_appearance: float = 0.5
    # ...and a single row whose colours are further than this from the pooled colours of the tracklet's
    # other seen rows (at least 3) is dropped: opencv_vtest's black-coat man's track took a jeans man's
    # box for one sample (0.43 from the rest, its own rows <= 0.20), a new track opened on one man and then
    # followed the bald man in front (0.44); the other rows of the clip's long tracklets are <= 0.34 from
    # theirs. Left to stitching, such a row joined others' lone rows into a mixed id. 0 = off
    track_odd_row_appearance: float = 0.4
    # ...and where it took a box while another one in reach (similar size, within 1.5 box widths) had
    # colours closer to its own by more than this: side-by-side people whose boxes traded places
    track_split_competitor_margin: float = 0.1
    # a track the tracker re-finds after missing it this long is cut there (stitching decides, with
    # colours); shorter misses (a detection dropped for a frame) stay one tracklet
    track_gap_split_seconds: float = 1.0
    stitch_max_gap_seconds: float = 60.0  # tracklets further apart than this are never joined
    stitch_appearance_max: float = 0.35  # max colour-histogram distance (Bhattacharyya) to join
    stitch_motion_max: float = 0.25  # max centre jump per second of gap (normalised units) within a shot
    # ...and at most this many of the person's own heights per second (a walker covers about one):
    # small, distant people cannot cross the frame in a few seconds. A person's height is their box's, or 7.5
    # head heights where the box is cut short (stitching.person_scales: hidden behind a nearer person)
    stitch_motion_max_heights: float = 1.0
    stitch_max_size_ratio: float = 1.5  # person heights (as above) across a gap differ by at most this factor
    stitch_unseen_max_gap_seconds: float = 1.0  # without colours (not seen well) motion vouches only this long
    # ...and only when no other tracklet seen in that gap (not beside it) comes within this many times
    # the joined move of either end: opencv_vtest's red-jacket man, colourless behind another man at
    # 62.5 s, was joined on motion to a man who had left at the right edge 1 s before, 0.18 frame widths
    # away, while his own track was 0.04 away at the previous sample; at 14.0 s a colourless man was
    # about as near (0.062 vs 0.066) to a woman walking the other way as to himself (issue 11). The same
    # test cuts a track's link into a covered box that another box contends for (stitching.guessed_links). 0 = off
    stitch_unseen_ambiguity: float = 1.5
    # ...nor between boxes one of which is more than this times as wide as the other and has no colours
    # (off the left/right frame edge): a box suddenly around a neighbour too. opencv_vtest 51.0 -> 51.5 s:
    # the blonde woman's own box (0.054 wide), then one around her and the red-jacket man (0.104, its
    # torso too small for colours). Costs a striped-jumper man's 2-row id there (arm swung out, 19.0 s)
    stitch_unseen_max_widening: float = 1.6
    # ...nor when either side's own velocity (its group's sightings over the last second), carried over the
    # gap, lands nearer another box than the candidate by more than this many box widths: two people crossing
    # with unreadable colours (tracking/motion_rivals.py; opencv_vtest 16.5 -> 17.0 s, a man walking right
    # joined on "stood still" to one walking left 0.014 away while his own next box was 0.001 off). 0 = off
    stitch_motion_rival_margin: float = 0.5
    stitch_motion_slack: float = 0.5  # plus this fraction of the box width, whatever the gap
    # a gap longer than this within a shot means the person left (or hid) and came back: the motion
    # allowance stops growing, and the colours must agree more closely (someone else may have arrived)
    stitch_reentry_seconds: float = 2.0
    stitch_reentry_appearance_max: float = 0.15
    stitch_reentry_min_seconds: float = 0.5  # and both sides followed this long (colours pooled over frames)
    # ...unless both ends touch the frame edge (within this margin, normalised): left there, came back
    # there, anywhere along the edges (the motion allowance is waived, the stricter colour test is not)
    frame_edge_margin: float = 0.02
    # faces (tracking/faces.py, dlib ResNet descriptors pooled per tracklet): chips only of heads at least
    # this tall in the sampled frame (smaller ones are mostly noise, measured there); 0 = no faces
    face_min_head_pixels: float = 40.0
    face_chips_per_tracklet: int = 3  # described per tracklet (the largest faces), never per frame
    # across a cut, faces this close (pooled) let clothes differ up to stitch_face_appearance_max: one
    # person's pooled faces were <= 0.41 apart on the shared clips, two people's >= 0.41; atd_kitchen
    # replayed a little darker and warmer moved the grey-shirt man's colours 0.56 (others' stayed >= 0.71
    # from him). Within a shot, over a gap of at most track_gap_split_seconds with a plausible move and no
    # other face in the shot as close, agreeing faces vouch whatever the colours: deepoint_pointing_up's
    # raised arm moved the seated man's colours 0.596 between two samples (faces 0.26), a close-up's arm
    # 0.76 (close-ups cut from the shared clips: 114 -> 118 samples with their person, benchmarks/README.md)
    stitch_face_match: float = 0.4
    stitch_face_appearance_max: float = 0.6
    # faces further apart than this never join after a re-entry within a shot: beyond every same-person
    # pair measured (0.69, a face seen only looking down), dlib's own decision distance is 0.6
    stitch_face_veto: float = 0.75
    # across a cut (tracking/cut_matching.py: one assignment per cut between the people seen before and the
    # new shot's people): a rival in the pair's row or column is told apart by the first of faces, colours,
    # place (box widths) that differs by at least this much, and must be the further one (the face margin
    # also keeps a within-shot join on faces from a rival face about as close)
    stitch_face_margin: float = 0.1
    cut_colour_margin: float = 0.1
    cut_place_margin: float = 0.5
    # place supports colours within stitch_appearance_max: centres at most this many box widths apart, and
    # heights within this factor (a cut back to the same set-up)
    cut_place_max_widths: float = 0.5
    cut_place_max_size_ratio: float = 1.25
    # faces this close decide across a cut whatever the colours (a change of light moved one child's pooled
    # colours 0.83 in the cutaway edit of yakhyo_classroom_group; two people's faces were >= 0.41 apart)
    cut_face_sure: float = 0.25
    min_track_seconds: float = 0.3  # tracklets shorter than this (after stitching) are dropped
    # tracking and stitching compare positions with the camera's pans and tilts taken out (read from every
    # decoded frame, pipeline/camera_motion.py): at 2 fps a whip pan across a row of children handed each
    # child's id to the neighbour who took their place in the picture (benchmarks/README.md, "Camera pans")
    camera_motion: bool = True
    # long videos (pipeline/segments.py): a segment's person takes over a video-level identity when their
    # boxes overlap by at least this IoU, averaged over the frames both segments share (absence counts 0);
    # the others are matched by colours (stitch_appearance_max) to people not seen in the segment
    segment_handoff_iou: float = 0.5
