"""Where each person's gaze points, read from the tracks table, to verify claims that someone does NOT
look at something.

Events record looks that were found; a look that was missed leaves no event. An item that says one
person is the one looking at X ("Who is looking at the camera?") is wrong when anyone else looks at X
too, so the absence of other events is not enough: every other person present must be seen looking
clearly away from X, by at least a margin, at every sampled frame of the window. A row without a gaze
direction, or a target that cannot be placed (a location; an object when no box of its label from the objects
table is near that time), can never be ruled out.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pyarrow as pa

from events.geometry import camera_sight_lines, project_directions
from qa_gen.events_view import Target


def _column(tracks: pa.Table, name: str) -> list:
    return tracks.column(name).to_pylist() if name in tracks.column_names else [None] * tracks.num_rows


def _centre(box) -> Optional[np.ndarray]:
    if box is None or len(box) != 4 or not np.all(np.isfinite(box)):
        return None
    return (np.asarray(box[:2], np.float64) + np.asarray(box[2:], np.float64)) / 2


class LookGeometry:
    """Per person and sampled frame: gaze origin and direction, head centre and hand centres (normalised
    image coordinates; directions in the camera frame) of one video or unit, and the frame's aspect."""

    def __init__(self, tracks: pa.Table, aspect: float, objects: Optional[pa.Table] = None):
        if not aspect or aspect <= 0:
            raise ValueError(f"aspect (frame width / height) must be positive, got {aspect}")
        self.aspect = float(aspect)
        # each object label's boxes: times and centres (an object target is named by its label)
        self._objects: dict[str, tuple[np.ndarray, list[np.ndarray]]] = {}
        if objects is not None and objects.num_rows:
            found: dict[str, list[tuple[float, np.ndarray]]] = {}
            for label, t, box in zip(*(objects.column(c).to_pylist() for c in ("label", "t", "bbox"))):
                centre = _centre(box)
                if centre is not None:
                    found.setdefault(label, []).append((float(t), centre))
            for label, seen in found.items():
                seen.sort(key=lambda r: r[0])
                self._objects[label] = (np.array([r[0] for r in seen]), [r[1] for r in seen])
        self._rows: dict[int, list[tuple]] = {}
        columns = [_column(tracks, c) for c in ("person_id", "t", "gaze_origin", "gaze_dir", "head_bbox", "bbox",
                                                "hand_bboxes")]
        for pid, t, origin, direction, head, body, hands in zip(*columns):
            head_centre = _centre(head)
            if head_centre is None and body is not None and _centre(body) is not None:
                head_centre = np.array([(body[0] + body[2]) / 2, body[1]], np.float64)  # top of the body
            hand_centres = [c for c in (_centre(h) for h in (hands or [])) if c is not None]
            known = (origin is not None and direction is not None and len(origin) == 2 and len(direction) == 3
                     and np.all(np.isfinite(origin)) and np.all(np.isfinite(direction))
                     and np.linalg.norm(direction) > 1e-9)
            self._rows.setdefault(int(pid), []).append((
                float(t),
                np.asarray(origin, np.float64) if known else None,
                np.asarray(direction, np.float64) / np.linalg.norm(direction) if known else None,
                head_centre, hand_centres))
        for rows in self._rows.values():
            rows.sort(key=lambda r: r[0])
        self._times = {pid: np.array([r[0] for r in rows]) for pid, rows in self._rows.items()}

    def _rows_in(self, pid: int, a: float, b: float, tolerance: float) -> list[tuple]:
        times = self._times.get(pid)
        if times is None:
            return []
        lo, hi = np.searchsorted(times, a - tolerance, side="left"), np.searchsorted(times, b + tolerance, side="right")
        return self._rows[pid][lo:hi]

    def _places(self, target: Target, t: float, tolerance: float) -> Optional[list[np.ndarray]]:
        """Where ``target`` is in the frame at ``t``: [] when its person is not seen then, None when the
        rows cannot place it (a location; an object with no box of its label near ``t``: objects are found on
        some frames only, so one not found is not out of view)."""
        if target.kind == "object":
            times, centres = self._objects.get(target.label, (np.zeros(0), []))
            near = np.flatnonzero(np.abs(times - t) <= tolerance + 1e-9)
            if not len(near):
                return None
            closest = np.abs(times[near] - t).min()
            return [centres[k] for k in near if abs(times[k] - t) <= closest + 1e-9]
        if target.kind not in ("person", "hands"):
            return None
        rows = self._rows_in(target.person_id, t, t, tolerance)
        if not rows:
            return []
        row = min(rows, key=lambda r: abs(r[0] - t))
        if target.kind == "person":
            return [] if row[3] is None else [row[3]]
        return list(row[4]) or None  # hands not boxed on a person in view: they could be anywhere near

    def near_throughout(self, pid: int, target: Target, a: float, b: float, margin_deg: float,
                        tolerance: float) -> bool:
        """Is ``pid``'s gaze measured within ``margin_deg`` of ``target`` at every sampled frame within [a, b]
        (± ``tolerance``), the target placed at each (the angles of ``may_look_at``)? Then the look could as
        well be on it all along. No frames, no direction or no place: no."""
        rows = self._rows_in(pid, a, b, tolerance)
        cos_margin = float(np.cos(np.radians(margin_deg)))
        closeness = [self._closeness(row, target, tolerance) for row in rows]
        return bool(rows) and all(c is not None and c > cos_margin for c in closeness)

    def may_look_at(self, pid: int, target: Target, a: float, b: float, margin_deg: float,
                    tolerance: float) -> bool:
        """Could ``pid`` be looking at ``target`` at some sampled frame within [a, b] (± ``tolerance``)?
        Yes unless every such frame has a gaze direction at least ``margin_deg`` from the target: for the
        camera, the angle to the line toward the lens; for a person's face or hands, the angle in the image
        between the gaze's perspective image and the line to them. No frames: yes (nothing rules it out)."""
        rows = self._rows_in(pid, a, b, tolerance)
        cos_margin = float(np.cos(np.radians(margin_deg)))
        return not rows or any(c is None or c > cos_margin for c in (self._closeness(r, target, tolerance) for r in rows))

    def _closeness(self, row: tuple, target: Target, tolerance: float) -> Optional[float]:
        """The cosine of the angle between one row's gaze and ``target`` (the nearest of its places): for the
        camera, to the line toward the lens; else in the image. None where it cannot be measured (no direction,
        a target the rows cannot place, a look straight along the lens axis); -inf where the target is not in
        view; +inf where the gaze starts on it."""
        t, origin, direction, _, _ = row
        if direction is None:
            return None
        if target.kind == "camera":
            toward_lens = -camera_sight_lines(origin, self.aspect)[0]
            return float(direction @ toward_lens / np.linalg.norm(toward_lens))
        places = self._places(target, t, tolerance)
        if places is None:
            return None
        if not places:
            return -np.inf
        image_ray = project_directions(origin, direction, self.aspect)[0]
        if np.linalg.norm(image_ray) < 1e-9:
            return None  # a look straight at or away from the lens: no side of the image to rule out
        best = -np.inf
        for place in places:
            to_target = (place - origin) * np.array([self.aspect, 1.0])
            norm = np.linalg.norm(image_ray) * np.linalg.norm(to_target)
            best = max(best, np.inf if norm < 1e-12 else float(image_ray @ to_target / norm))
        return best
