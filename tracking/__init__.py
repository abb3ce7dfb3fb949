"""socialtrace tracking: frame-to-frame association (Ultralytics trackers), appearance descriptors,
identity stitching into person ids, and bridging of short gaps in measured gaze."""
from tracking.gaze_gaps import fill_gaze_gaps
from tracking.stitching import assign_person_ids

__all__ = ["assign_person_ids", "fill_gaze_gaps"]
