"""Settings of the person/pose backends, the face -> gaze refinement and the hand -> pointing shape.

Part of the one configuration (pipeline/config.py assembles every section into ``Config``; users set these
under the section name in ``--config`` YAML). Times are in seconds, never frames, so results do not change
with the sampling rate."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DetectorConfig:
    backend: str = "auto"  # auto | yolo | mediapipe
    weights: str = "yolo11n-pose.pt"  # path or Ultralytics name; *.yaml builds an untrained model
    person_conf: float = 0.35  # minimum detection confidence kept
    batch_size: int = 8  # frames per YOLO forward pass
    # YOLO network input side (pixels, multiple of 32; a smaller frame is upsampled to it): chosen by
    # measuring recall of annotated people against CPU time (benchmarks/README.md)
    yolo_input_size: int = 640
    # a batch whose people are small (median box height below this share of the frame height: a crowd
    # seen from afar) is detected again at this larger input size, where small people are found
    small_person_height: float = 0.3
    yolo_small_people_input_size: int = 960
    # ...and so is each frame holding a small candidate box this confident but below person_conf: a
    # blurred background person a few dozen pixels tall scores 0.1-0.2 at 640 and 0.5-0.6 at 960
    # (tvhid_highfive_0018's woman), while large people alone never leave such boxes; the frame keeps
    # its large people's boxes from the usual input. 1.0 = off
    small_candidate_conf: float = 0.1
    # ...and so is each frame where the usual input finds nobody at person_conf: a crowd seen from afar
    # (opencv_vtest at 25.5-35.5 s: 4-6 walkers, none found at 640 and no faint candidate either, 2-4 at 960)
    # leaves nothing at 640 for the two rules above to start from. Costs one larger look per empty frame
    small_people_when_empty: bool = True
    # a box this wide for its height (pixels) may hold two people, one just behind the other, boxed as one
    # with one skeleton: it is cropped (with this margin of its size on each side: the pair box often cuts
    # off the second person's head), detected again at this input size (the crop is upsampled) and
    # dropped when it holds two or more people there (precision before recall: see detectors/pair_split.py
    # for why they are not added). Most single walkers are narrower; a lower bound looks at several times
    # more boxes for no more pairs. pair_split_input_size 0 = off
    pair_split_min_aspect: float = 0.45
    pair_split_input_size: int = 320
    pair_split_margin: float = 0.25
    # only boxes shorter than this share of the frame height: a taller person already has enough pixels
    # at the usual input, zooming adds nothing but time
    pair_split_max_height: float = 0.5
    # a person found in the crop counts at this confidence: the one half hidden behind the other scores low
    # zoomed in too, and a single walker's crop holds no second box inside it at all
    pair_split_conf: float = 0.15
    # ...when this share of their box lies in the original box and they are at least this share of its
    # height: a neighbour's head or feet reaching into the margin is not a second person in the box
    pair_split_inside: float = 0.7
    pair_split_min_height: float = 0.6
    # objects (gaze / pointing targets with a class name): an Ultralytics detection model, e.g. COCO
    # yolo11n.pt; "" = no object detector. Its "person" class is left to the pose model.
    object_weights: str = ""
    object_conf: float = 0.35  # minimum object detection confidence kept
    object_input_size: int = 640  # network input side for the object model (pixels, multiple of 32)
    device: str = ""  # auto | cpu | cuda (or cuda:N); "" = auto: the GPU when torch sees one
    # where YOLO runs on CPU: auto = the fastest installed export of the .pt weights (OpenVINO, then ONNX
    # Runtime, made once and cached by the weights' hash: detectors/runtime.py), else PyTorch; on a GPU
    # always PyTorch. openvino | onnx | torch force one (an impossible export falls back to PyTorch)
    runtime: str = "auto"
    mediapipe_search_passes: int = 1  # pose passes over the frame minus people found (back views)
    # that search runs on every frame while it finds someone, otherwise once per this interval
    search_interval_seconds: float = 1.0
    hand_model: bool = True  # run the hand landmark model on raised arms (pointing / open palm)
    # every model (YOLO pose, face detection, face mesh, hands) reads each image as it is and mirrored, and
    # the two reads are averaged (detectors/mirror.py): a mirrored clip gives the same people, gaze and
    # gestures, and each read is steadier. Costs a second pass of each model
    mirror_average: bool = True
    # a face no person holds is a person of its own (close-ups: detectors/face_people.py) when fewer than
    # this many head heights of the frame lie below it (its body is out of view) and it is on no one's
    # box; 0 = off
    face_people_max_body_heads: float = 3.0


@dataclass(frozen=True)
class GazeConfig:
    cone_half_angle_deg: float = 15.0  # a head counts as a gaze target inside this cone
    camera_max_angle_deg: float = 12.0  # gaze this close to the line from the eyes to the lens = camera
    # gaze below this confidence gets target "unknown"; 0 = every measured direction is used. A face-mesh
    # confidence is the face score x how well a generic face fits: low on profiles, which still point
    # the right way (benchmarks/README.md, "Issue 22"); raise for fewer, surer targets
    min_conf: float = 0.0
    iris_weight: float = 1.0  # how much the iris offset turns the head-pose direction (1 = the full eye turn)
    # face-mesh gaze is turned up by this (the generic face reads head pitch low on level gaze, but
    # with the lid cue steep looks read shallow: no constant helped on the shared truth, see
    # benchmarks/README.md; 0 = no correction)
    head_pitch_bias_deg: float = 0.0
    # head orientation: "mesh" = the face mesh's own 3D landmarks (detectors/face_pose.py), with iris
    # and lid cues measured on the face, not the image; "pnp" = solvePnP against a generic face (the
    # old path: it read level looks 0-28 deg low and over-read yaw toward the lens in 3/4 views).
    # Gaze rows right at 2 fps 27 -> 34 of 56, at 10 fps 30 -> 36 (benchmarks/README.md, "Head pose
    # from the face mesh's own landmarks")
    head_pose: str = "mesh"
    # lid opening (lid distance / eye width, measured on the face) of a level look, for head_pose
    # "mesh": level looks on the truth clips read 0.2-0.4 on the face. 0.27 / 0.30 / 0.33 all give 34
    # of 56 rows at 2 fps (0.36, the image-measured value "pnp" keeps, 31); 0.30 and 0.33 add a wrong
    # "looks at A's hands" event (tvhid_highfive_0005's laughing B, whose narrowed lids read as looking down)
    eye_open_level: float = 0.27
    # with head_pose "mesh", the iris and lid cues fade from none at this eye width (the wider eye, in
    # pixels of the processed frame) to full at the next: at 8 pixels the whole lid range from level to
    # closed is 1.5 pixels, one landmark's error. tvhid_handshake_0001's dark B (eyes 6.7-7.9 px) then
    # reads his look at A from the head alone: 2 -> 6 of 7 rows at 2 fps (fading from 7 instead kept
    # 3 of 7; from 8 to 11 cost atd_kitchen's A, eyes 10-12 px, 4 rows). Fitted on that one person.
    eye_cue_min_pixels: float = 8.0
    eye_cue_full_pixels: float = 10.0
    # with head_pose "mesh", each eye's iris offset, and its lid cue where it reads an up-look, counts
    # (its width in the image / its width on the face) ** this: the far eye of a 3/4 view is seen
    # edge-on, a few pixels the mesh mostly guesses. tvhid_highfive_0005's laughing B (far eye 4.5 of 7.1
    # px, read wide open with the iris turned back to the lens) then reads his look at A at 0 s: gaze rows
    # 41 -> 43 / 42 -> 44 / 40 -> 41 of 56 at 2 / 5 / 10 fps, events unchanged (power 3: the same; 1: 41
    # at 2 fps). Weighting down-reading lids too cost atd_kitchen A's look at B's hands at 2.0-2.25 s
    # (benchmarks/README.md "Far eye weighted by how squarely it is seen"). 0 = both eyes alike.
    eye_view_power: float = 2.0
    # with head_pose "mesh": a smile's cheeks push the lower lids up and narrow the lid opening with no look
    # down, which read as one (yakhyo_classroom_group's boy smiling into the lens, 11-29 degrees low;
    # tvhid_highfive_0005's laughing B at 640x360, at A's hands instead of A's face; the held-out children
    # looking into the camera read "elsewhere" in issue 22). On a face whose mouth spans at least this share of
    # its width (corner to corner over cheek to cheek, on the face: neutral mouths 0.22-0.39, smiles 0.40-0.50
    # over the face-mesh truth rows) each lower lid counts at no less than lower_lid_rest eye widths below the
    # eye corners' line (non-smiling faces' median: 0.087); the upper lid, which a down-look lowers, reads as
    # before. 0 = off (benchmarks/README.md, "A smile is not a look down")
    smile_mouth_width: float = 0.40
    lower_lid_rest: float = 0.08
    smooth_seconds: float = 0.1  # measured directions are averaged over this half-window (0 = off)
    interpolate_max_seconds: float = 0.3  # gaps up to this are interpolated (GRASP: 3 frames at 10 fps)
    carry_max_seconds: float = 1.0  # gaps up to this carry the last gaze with decaying confidence
    point_reach: float = 0.25  # gaze point when nothing is hit: origin + this x image-plane direction
    # a head, hand or object is a gaze target only when the ray passes its centre within this many
    # half-diagonals of its box (evidence relative to the target's size)
    target_max_miss: float = 2.0
    # one's own hands are a gaze target (reached like any other, target_max_miss) only when the gaze points
    # at least this far below level (hands held in front of the chest are about 40-70 degrees below the eyes)
    own_hands_min_pitch_deg: float = 40.0
    # another person's hand whose centre lies within this many head sizes of their head box counts as
    # that person (a ray on a hand raised beside a face cannot tell the two apart: tvhid_highfive_0018's
    # B watched A's face and read "A's hands"); own hands there are no target; negative = off
    hands_at_face_margin: float = 0.5
    # decisions that weigh their margin (events.geometry.settle_ambiguous_targets): each target is also read
    # along the gaze turned by this many degrees left, right, up and down (a face-mesh read; one from body
    # keypoints, good to 20-30 degrees, has its own figure). A row whose reads disagree (the look grazes a box
    # edge or the camera cone, or lies between two targets) takes the target of the nearest row of the same
    # person and shot within settle_seconds whose reads all agree and whose gaze is within the uncertainty of
    # its own (the same look), when that target is among its reads; otherwise it keeps its own read.
    # 0 = hard thresholds. Measured on both truth sets with the camera
    # edits (benchmarks/README.md, "Decisions that weigh their margin"): 8 / 15 keeps every truth row and
    # lifts half-resolution agreement; 10 / 20 costs 3 development rows; abstaining costs 10-18 rows on each
    # set (most marginal reads are right). A keypoint read (no elevation at all) naming a person that no firm
    # read settles does abstain (unknown: benchmarks/README.md, "A still nobody tuned on")
    target_uncertainty_deg: float = 8.0
    keypoint_target_uncertainty_deg: float = 15.0
    settle_seconds: float = 1.0
    # a face-mesh read whose eyes are too small to read (the eye cues faded, eye_cue_min_pixels) is the head's
    # direction, and the eyes can look anywhere within about this many degrees of it (in natural viewing the
    # eyes rarely turn further before the head follows); the range grows as the eye cues fade. Where it holds
    # another person (or another person's hands) than the one the read names, the read cannot say who is
    # looked at: unknown (0 = off). Changes no row at full size, where faded eyes are rare on the truth;
    # on half-resolution copies (bench_accuracy --half-resolution) validation QA 7/8/3 -> 8/2/4
    # right/wrong/uncheckable, wrong events 6 -> 3, gaze rows 27 -> 26 of 53 (development unchanged);
    # 20 and 25 cost 4 development rows (atd_kitchen B's look at his own hands beside A's) (benchmarks/README.md,
    # "Low resolution"). The eyes, read in full however small, then choose among the people within that range
    # (never a target outside it, never against a head whose range holds one person): half-resolution gaze rows
    # 0.679 -> 0.804 / 0.642 -> 0.849 on the two sets, full size unchanged (benchmarks/README.md, "Small eyes
    # choose, the head bounds")
    unread_eyes_uncertainty_deg: float = 15.0
    # a frame's target must be shared by at least half of that person's targets within this many
    # seconds either side, else it is unknown (0 = off). The window never holds less than the
    # neighbouring samples (1.25 sampling steps): at 2 fps a target seen at one instant between two
    # others is not evidence (benchmarks/README.md, "Issue 10, precision rules")
    target_stable_seconds: float = 0.2
    # ... unless its gaze is turned at least this far from every disagreeing neighbour's (a new look, not
    # a flicker; 0 = off; on eyes too small to read, the turn of the look with the eyes read however small): atd_kitchen A's single 2 fps samples into the camera (truth 0.13-0.9 s,
    # 1.43-1.7 s) are kept; bench_accuracy 38 -> 41 of 56 gaze rows at 2 fps, 15 / 20 / 30 degrees alike,
    # no event or QA item changes verdict (benchmarks/README.md, "Issue 10, 2026-11-25")
    target_turn_keep_deg: float = 20.0
    # while someone points at an object (within pointed_object_hold_seconds of a frame where they do),
    # a gaze that hits nothing counts as on that object when its image-plane direction is within this
    # angle of the object's box (events.geometry.gaze_on_pointed_objects: pointers look at their
    # referent, and a turned face's head pose + iris ray passes some way above or below it); 0 = off
    pointed_object_max_angle_deg: float = 25.0
    pointed_object_hold_seconds: float = 0.5
    # a gaze read from body keypoints alone (no face measured: no elevation, direction good to about
    # 20-30 degrees) names a person only when their head is within this many head sizes of the looker's
    # eyes, and never hands or the camera (events.geometry.head_only_targets). On the shared truth every
    # right keypoint-gaze target lies within 6.6 head sizes; opencv_vtest's walkers, seen from above and
    # behind, were credited with looks at people 10-50 head sizes away and at far people's hands
    # (benchmarks/README.md, "Targets of a gaze read from keypoints"). 0 = no distance limit
    head_only_max_target_heads: float = 8.0


@dataclass(frozen=True)
class PointingConfig:
    score_threshold: float = 0.5  # pointing_score >= this = extended index, other fingers curled
    # on a raised arm the middle finger counts this much against pointing (seen from the side it
    # lies along the index and reads as extended; see detectors.hands.pointing_score)
    raised_arm_middle_weight: float = 0.45
    # wrist-shoulder distance / (upper arm + forearm) of a pointing arm: 0.8 = elbow opened past ~106 deg
    # (equal segments); a right-angle bend around something held reads ~0.7
    min_arm_extension: float = 0.8
    cone_half_angle_deg: float = 12.0
    min_arm_elevation_deg: float = 35.0  # arm (shoulder->wrist) this far from the torso axis = raised
    # a forearm shorter than this fraction of the upper arm is an occluded elbow snapped onto the hand
    # (hands held together in front of the chest): the arm's shape is unknown, so it is not "raised"
    min_forearm_ratio: float = 0.35


@dataclass(frozen=True)
class ReferentConfig:
    """The class-agnostic pointed-at object finder (detectors/referents.py)."""

    enabled: bool = True  # look for the thing pointed at on frames where someone points
    # pointing frames are searched at this longer side (pixels): the thing pointed at is seen at a
    # distance of a room, so small detail does not matter and the search stays cheap
    working_side: int = 320
    # mean-shift smoothing before regions grow (spatial radius in working pixels, colour radius in RGB
    # levels): flattens texture (a pleated shade, fabric weave) so one thing is one region, keeps edges
    smoothing_radius: int = 6
    smoothing_colour: float = 18.0
    # the ray starts this share of the frame diagonal past the fingertip (the fingertip estimate is a
    # few pixels off, and the finger itself must not be the referent)
    fingertip_clearance: float = 0.01
    max_reach: float = 0.8  # the ray is searched this share of the frame diagonal
    # pixels within this many levels of the seed (per channel of Lab with lightness scaled by
    # lightness_weight, after smoothing) belong to one region: a shaded lamp shade stays one region,
    # a lamp and the wall behind it do not
    colour_tolerance: float = 14.0
    lightness_weight: float = 0.4
    ring_width: float = 0.01  # the surroundings a region is contrasted with: a ring this share of the diagonal
    # a referent is a thing: between a small object at room distance and a large piece of furniture
    min_area: float = 0.0012
    max_area: float = 0.06
    min_fill: float = 0.35  # region pixels / box pixels: a snake through the scene is not one thing
    max_elongation: float = 4.0  # longer box side / shorter: table legs, cables and door frames are not referents
    # Lab distance between the region's colour and its ring's: a thing that stands out from what is
    # around it, not a shade step on a wall
    min_contrast: float = 25.0
    # a referent's colour is rare in the frame: at most this many pixels elsewhere (within
    # same_colour_distance in Lab of its mean colour) per pixel of the region. One fragment of a
    # textured thing (a backpack's panel, a table leg among others) shares its colour with the rest
    max_colour_share: float = 2.0
    same_colour_distance: float = 12.0
    # share of the region's box a person box may cover: people (and what they hold) are not referents
    max_person_overlap: float = 0.2
    # a referent found on a pointing frame is also placed on the frames of the same shot this close in
    # time (a pointed-at thing is furniture-like and does not move that fast; a cut ends it), so a look
    # just before or after the point can land on it (GazeConfig.pointed_object_hold_seconds)
    carry_seconds: float = 0.5
