"""How a per-frame target (gaze or pointing) reads in an event: the events table's target columns, the
``details`` keys, and the "entity" used to tell whether two cues are about the same thing."""
from __future__ import annotations

from typing import Any, Optional

from events.arrays import GAZE_CODE, TrackArrays

PERSON, HANDS, OBJECT, CAMERA = GAZE_CODE["person"], GAZE_CODE["hands"], GAZE_CODE["object"], GAZE_CODE["camera"]
ELSEWHERE, UNKNOWN = GAZE_CODE["elsewhere"], GAZE_CODE["unknown"]
TARGET_CODES = (PERSON, HANDS, OBJECT, CAMERA)  # gaze targets that name a thing; the rest are none
# things in the scene that people can share attention on or follow a gaze to (not the camera: looking
# into the lens is attending to the viewer, whom nobody else in the scene can look at)
SCENE_TARGET_CODES = (PERSON, HANDS, OBJECT)


def object_label(arrays: TrackArrays, object_id: int) -> str:
    """The object's label from the objects table, "object" when the video has no such object row."""
    for k, oid in enumerate(arrays.object_ids):
        if oid == object_id:
            return arrays.object_labels[k]
    return "object"


def target_columns(arrays: TrackArrays, kind: str, target_id: Optional[int]) -> dict[str, Any]:
    """Events-table target columns for a target of ``kind`` (person | hands | object | camera |
    location | elsewhere | none): target_type (person | object | none), target_person_id, target_label."""
    if kind == "person":
        return {"target_type": "person", "target_person": target_id, "target_label": None}
    if kind == "hands":
        return {"target_type": "person", "target_person": target_id, "target_label": "hands"}
    if kind == "object":
        return {"target_type": "object", "target_person": None, "target_label": object_label(arrays, target_id)}
    if kind in ("camera", "location"):
        return {"target_type": "none", "target_person": None, "target_label": kind}
    return {"target_type": "none", "target_person": None, "target_label": None}


def entity(kind: str, target_id: Optional[int]) -> Optional[tuple[str, int]]:
    """What a target is about: ("person", id) for someone's face or hands, ("object", id), ("camera", -1);
    None for nothing in particular. Used to match a gesture's target with a gaze target."""
    if kind in ("person", "hands") and target_id is not None and target_id >= 0:
        return ("person", int(target_id))
    if kind == "object" and target_id is not None and target_id >= 0:
        return ("object", int(target_id))
    if kind == "camera":
        return ("camera", -1)
    return None
