"""socialtrace tracking: frame-to-frame association (Ultralytics trackers), appearance descriptors,
identity stitching into person ids, temporal smoothing of measured gaze and bridging of its short gaps."""
from tracking.gaze_gaps import fill_gaze_gaps
from tracking.gaze_smoothing import smooth_gaze_directions
from tracking.stitching import assign_person_ids

__all__ = ["assign_person_ids", "fill_gaze_gaps", "smooth_gaze_directions"]
