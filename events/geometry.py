"""Per-frame target association: which head, hands or object a gaze or pointing ray lands on.

Every (frame, person) row casts a ray from its origin along the image-plane projection of its
direction; a candidate box counts when it lies inside a cone of half-angle ``cone_half_angle`` around
the ray. The best candidate is the one with the smallest angular distance (0 for a box the ray passes
through; a box the ray starts in counts only when the ray heads toward its centre), then the lower priority
value, then the nearer one. The work over all rows and candidates
is one Numba kernel (``_associate_kernel``) with a NumPy reference twin (``_associate_reference``)
that tests compare it against; no Numba type leaves this module.

Conventions: positions are normalised frame coordinates (x right, y down); directions are isotropic
(pixel geometry: gaze_dir of the camera frame, point_dir of the image), so the frame's aspect ratio
(width / height) is needed to compare them with positions.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from pipeline.schema import GAZE_TARGET_TYPES, POINT_TARGET_TYPES

# Target type codes: indices into pipeline.schema.GAZE_TARGET_TYPES / POINT_TARGET_TYPES.
GAZE_PERSON = GAZE_TARGET_TYPES.index("person")
GAZE_HANDS = GAZE_TARGET_TYPES.index("hands")
GAZE_OBJECT = GAZE_TARGET_TYPES.index("object")
GAZE_CAMERA = GAZE_TARGET_TYPES.index("camera")
GAZE_ELSEWHERE = GAZE_TARGET_TYPES.index("elsewhere")
GAZE_UNKNOWN = GAZE_TARGET_TYPES.index("unknown")
POINT_PERSON = POINT_TARGET_TYPES.index("person")
POINT_HANDS = POINT_TARGET_TYPES.index("hands")
POINT_OBJECT = POINT_TARGET_TYPES.index("object")
POINT_ELSEWHERE = POINT_TARGET_TYPES.index("elsewhere")
POINT_NONE = -1  # the row is not pointing: no target at all (null in the tracks table)

_TINY = 1e-12


# --- the kernel and its twin ------------------------------------------------------------------


@njit(cache=True)
def _associate_kernel(
    origin, direction, active, self_allowed, owner, cand_start, cand_end, boxes, cand_owner, cand_priority,
    cand_self_ok, cand_self_priority, cand_max_miss, cone
):
    """For each row: index of the best candidate in [cand_start, cand_end) (-1 for none) and the point
    on it where the ray lands. All geometry is in isotropic coordinates.

    A candidate counts when its angular distance from the ray is within ``cone`` and the ray passes
    its centre within ``cand_max_miss`` x its half-diagonal (evidence relative to the target's size:
    a far head a few degrees off the ray is a miss). A row's own candidates (``cand_self_ok``) count
    by the same rule, only where the row allows it (``self_allowed``)."""
    n_rows = origin.shape[0]
    best = np.full(n_rows, -1, np.int64)
    point = np.full((n_rows, 2), np.nan)
    for r in range(n_rows):
        if not active[r]:
            continue
        ox, oy = origin[r, 0], origin[r, 1]
        dx, dy = direction[r, 0], direction[r, 1]
        best_angle, best_priority, best_distance = np.inf, 0, np.inf
        for c in range(cand_start[r], cand_end[r]):
            own = cand_owner[c] == owner[r]
            if own and not (cand_self_ok[c] and self_allowed[r]):
                continue
            x1, y1, x2, y2 = boxes[c, 0], boxes[c, 1], boxes[c, 2], boxes[c, 3]
            inside = x1 <= ox <= x2 and y1 <= oy <= y2
            if inside:
                # a ray that starts on a box (a fingertip over someone's body, eyes inside another head's box)
                # is at it only when it heads into it, toward its centre; one heading away passes in front
                vx, vy = (x1 + x2) / 2 - ox, (y1 + y2) / 2 - oy
                angle = 0.0 if vx * dx + vy * dy >= 0.0 else abs(np.arctan2(dx * vy - dy * vx, dx * vx + dy * vy))
            else:
                lo, hi, nearest = np.inf, -np.inf, np.inf
                for k in range(4):
                    cx = x1 if k == 0 or k == 3 else x2
                    cy = y1 if k < 2 else y2
                    vx, vy = cx - ox, cy - oy
                    theta = np.arctan2(dx * vy - dy * vx, dx * vx + dy * vy)
                    lo = min(lo, theta)
                    hi = max(hi, theta)
                    nearest = min(nearest, abs(theta))
                # a box seen from outside spans less than pi; a wider span straddles the back of the ray
                angle = 0.0 if (lo <= 0.0 <= hi and hi - lo < np.pi) else nearest
            if angle > cone:
                continue
            if angle > 0.0:
                # how far the ray passes from the box centre, in half-diagonals of the box
                vx, vy = (x1 + x2) / 2 - ox, (y1 + y2) / 2 - oy
                along = vx * dx + vy * dy
                miss = abs(dx * vy - dy * vx) if along > 0.0 else np.sqrt(vx * vx + vy * vy)
                half_diagonal = 0.5 * np.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
                if miss > cand_max_miss[c] * half_diagonal:
                    continue
            qx = min(max(ox, x1), x2)
            qy = min(max(oy, y1), y2)
            distance = np.sqrt((qx - ox) ** 2 + (qy - oy) ** 2)
            priority = cand_self_priority[c] if own else cand_priority[c]
            better = angle < best_angle or (
                angle == best_angle
                and (priority < best_priority or (priority == best_priority and distance < best_distance))
            )
            if better:
                best[r], best_angle, best_priority, best_distance = c, angle, priority, distance
        if best[r] >= 0:
            c = best[r]
            x1, y1, x2, y2 = boxes[c, 0], boxes[c, 1], boxes[c, 2], boxes[c, 3]
            # the ray's point nearest the box centre, pulled into the box
            t = max(0.0, ((x1 + x2) / 2 - ox) * dx + ((y1 + y2) / 2 - oy) * dy)
            point[r, 0] = min(max(ox + t * dx, x1), x2)
            point[r, 1] = min(max(oy + t * dy, y1), y2)
    return best, point


def ray_box_angles(origin: np.ndarray, direction: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(M,) angular distance (radians) from the ray at ``origin`` along ``direction`` to each xyxy box
    (M, 4), isotropic coordinates: 0 when the ray passes through the box, or starts inside it heading
    toward its centre; a ray starting inside and heading away is as far as the centre's direction from it
    (the association kernel's measure)."""
    o, d, b = np.asarray(origin, np.float64), np.asarray(direction, np.float64), np.asarray(boxes, np.float64).reshape(-1, 4)
    corners = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1) - o  # (M, 4, 2)
    theta = np.arctan2(d[0] * corners[..., 1] - d[1] * corners[..., 0], d[0] * corners[..., 0] + d[1] * corners[..., 1])
    lo, hi = theta.min(axis=1), theta.max(axis=1)
    hit = (lo <= 0.0) & (hi >= 0.0) & (hi - lo < np.pi)
    inside = (b[:, 0] <= o[0]) & (o[0] <= b[:, 2]) & (b[:, 1] <= o[1]) & (o[1] <= b[:, 3])
    centre = (b[:, :2] + b[:, 2:]) / 2 - o
    off_centre = np.abs(np.arctan2(d[0] * centre[:, 1] - d[1] * centre[:, 0], centre @ d))
    return np.where(inside, np.where(centre @ d >= 0.0, 0.0, off_centre), np.where(hit, 0.0, np.abs(theta).min(axis=1)))


def ray_reaches(origin: np.ndarray, direction: np.ndarray, boxes: np.ndarray, cone: float,
                max_miss) -> tuple[np.ndarray, np.ndarray]:
    """The association's evidence rule for one ray (isotropic ``origin`` (2,), unit ``direction`` (2,))
    and boxes (M, 4): (angular distance of each box, whether the box counts as reached): within ``cone``
    radians, and the ray passes through the box or within ``max_miss`` (scalar or (M,)) half-diagonals
    of its centre."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    angle = ray_box_angles(origin, direction, b)
    centre = (b[:, :2] + b[:, 2:]) / 2 - origin
    along = centre @ direction
    miss = np.where(along > 0.0, np.abs(direction[0] * centre[:, 1] - direction[1] * centre[:, 0]),
                    np.sqrt((centre**2).sum(axis=1)))
    half_diagonal = 0.5 * np.sqrt(((b[:, 2:] - b[:, :2]) ** 2).sum(axis=1))
    near_enough = (angle == 0.0) | (miss <= max_miss * half_diagonal)
    return angle, (angle <= cone) & near_enough


def _associate_reference(
    origin, direction, active, self_allowed, owner, cand_start, cand_end, boxes, cand_owner, cand_priority,
    cand_self_ok, cand_self_priority, cand_max_miss, cone
):
    """NumPy twin of ``_associate_kernel`` (vectorised over a row's candidates); same results."""
    n_rows = origin.shape[0]
    best = np.full(n_rows, -1, np.int64)
    point = np.full((n_rows, 2), np.nan)
    for r in np.flatnonzero(active):
        idx = np.arange(cand_start[r], cand_end[r])
        own_all = cand_owner[idx] == owner[r]
        idx = idx[~own_all | (cand_self_ok[idx] & bool(self_allowed[r]))]
        if len(idx) == 0:
            continue
        o, d = origin[r], direction[r]
        b = boxes[idx]
        own = cand_owner[idx] == owner[r]
        angle, keep = ray_reaches(o, d, b, cone, cand_max_miss[idx])
        nearest = np.stack([np.clip(o[0], b[:, 0], b[:, 2]), np.clip(o[1], b[:, 1], b[:, 3])], axis=1)
        distance = np.sqrt(((nearest - o) ** 2).sum(axis=1))
        if not keep.any():
            continue
        priority = np.where(own, cand_self_priority[idx], cand_priority[idx])
        order = np.lexsort((np.arange(len(idx))[keep], distance[keep], priority[keep], angle[keep]))
        c = idx[keep][order[0]]
        best[r] = c
        x1, y1, x2, y2 = boxes[c]
        t = max(0.0, ((x1 + x2) / 2 - o[0]) * d[0] + ((y1 + y2) / 2 - o[1]) * d[1])
        point[r] = [min(max(o[0] + t * d[0], x1), x2), min(max(o[1] + t * d[1], y1), y2)]
    return best, point


# --- public, array-in / array-out ---------------------------------------------------------------


def _as(array, dtype, shape_tail, name) -> np.ndarray:
    out = np.asarray(array, dtype=dtype)
    if not shape_tail:
        return out.reshape(-1)
    if out.size == 0:
        return out.reshape((0,) + shape_tail)
    if out.ndim != 1 + len(shape_tail) or out.shape[1:] != shape_tail:
        raise ValueError(f"{name} must have shape (N, {', '.join(map(str, shape_tail))}), got {out.shape}")
    return out


def _ray_rows(frame_index, origin, direction, direction_dims: int, self_id):
    """The per-ray inputs every target association takes, as checked arrays: frame indices, (N, 2)
    origins, (N, ``direction_dims``) directions and the ray owners' ids."""
    return (_as(frame_index, np.int64, (), "frame_index").reshape(-1), _as(origin, np.float64, (2,), "origin"),
            _as(direction, np.float64, (direction_dims,), "direction"),
            _as(self_id, np.int64, (), "self_id").reshape(-1))


def _candidates(groups):
    """Concatenate candidate groups {name: (boxes, owner, target_id, frame, type_code, priority,
    self_ok, self_priority, max_miss)} and sort them by frame so each row's candidates are one
    contiguous slice. Lower priority wins between candidates at the same angular distance;
    ``self_priority`` replaces it for the row's own candidates; ``max_miss`` is how far (in half-diagonals
    of the box) the ray may pass from the box centre."""
    boxes, owner, target_id, frame, type_code, priority, self_ok, self_priority, max_miss = [], [], [], [], [], [], [], [], []
    for name, (b, o, t, f, code, prio, ok, self_prio, miss) in groups.items():
        b = _as(b, np.float64, (4,), f"{name} boxes")
        n = len(b)
        for arr, label in ((o, "owner"), (t, "id"), (f, "frame")):
            if np.asarray(arr).reshape(-1).shape[0] != n:
                raise ValueError(f"{name} {label} has {np.asarray(arr).size} values for {n} boxes")
        boxes.append(b)
        owner.append(np.asarray(o, np.int64).reshape(-1))
        target_id.append(np.asarray(t, np.int64).reshape(-1))
        frame.append(np.asarray(f, np.int64).reshape(-1))
        type_code.append(np.full(n, code, np.int64))
        priority.append(np.full(n, prio, np.int64))
        self_ok.append(np.full(n, ok, np.bool_))
        self_priority.append(np.full(n, self_prio, np.int64))
        max_miss.append(np.full(n, miss, np.float64))
    boxes = np.concatenate(boxes)
    finite = np.isfinite(boxes).all(axis=1) & (boxes[:, 2] >= boxes[:, 0]) & (boxes[:, 3] >= boxes[:, 1])
    columns = (owner, target_id, frame, type_code, priority, self_ok, self_priority, max_miss)
    arrays = [boxes, *(np.concatenate(a) for a in columns)]
    arrays = [a[finite] for a in arrays]
    order = np.argsort(arrays[3], kind="stable")
    return [a[order] for a in arrays]


def _no_owner(ids) -> np.ndarray:
    return np.full(np.asarray(ids).reshape(-1).shape[0], -(2**62), np.int64)  # matches no person id


def _run(frame_index, origin, direction, active, self_allowed, owner, cand, aspect, cone_rad, use_numba):
    boxes, cand_owner, cand_id, cand_frame, cand_type, cand_priority, cand_self_ok, cand_self_priority, cand_max_miss = cand
    scale = np.array([aspect, 1.0, aspect, 1.0])
    iso_boxes = np.ascontiguousarray(boxes * scale)
    iso_origin = np.ascontiguousarray(origin * scale[:2])
    start = np.searchsorted(cand_frame, frame_index, side="left").astype(np.int64)
    end = np.searchsorted(cand_frame, frame_index, side="right").astype(np.int64)
    fn = _associate_kernel if use_numba else _associate_reference
    best, point = fn(
        iso_origin, np.ascontiguousarray(direction), active, np.ascontiguousarray(self_allowed, np.bool_), owner,
        start, end, iso_boxes, cand_owner, cand_priority, cand_self_ok, cand_self_priority, cand_max_miss,
        float(cone_rad),
    )
    point = point / scale[:2]
    return best, point, cand_type, cand_id


def _check_rows(n: int, **arrays: np.ndarray) -> None:
    """Every per-row array has one entry per row of ``frame_index``."""
    for name, arr in arrays.items():
        if len(arr) != n:
            raise ValueError(f"{name} has {len(arr)} rows, frame_index has {n}")


def _objects_or_none(objects, object_id, object_frame):
    """Object candidates, or none when no object detector ran."""
    if objects is None:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0)
    return objects, object_id, object_frame


def assign_gaze_targets(
    frame_index: np.ndarray,
    origin: np.ndarray,
    direction: np.ndarray,
    conf: np.ndarray,
    self_id: np.ndarray,
    heads: np.ndarray,
    head_owner: np.ndarray,
    head_frame: np.ndarray,
    hands: np.ndarray,
    hand_owner: np.ndarray,
    hand_frame: np.ndarray,
    objects: np.ndarray | None = None,
    object_id: np.ndarray | None = None,
    object_frame: np.ndarray | None = None,
    *,
    aspect: float = 1.0,
    cone_half_angle_deg: float = 15.0,
    camera_max_angle_deg: float = 12.0,
    min_conf: float = 0.2,
    reach: float = 0.25,
    max_miss: float = np.inf,
    own_hands_min_pitch_deg: float | np.ndarray = -90.0,
    hands_at_face_margin: float = -1.0,
    use_numba: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaze target of every (frame, person) row.

    Rows: ``frame_index`` (R,) int, ``origin`` (R, 2) normalised, ``direction`` (R, 3) unit gaze in the
    camera frame (z into the scene), ``conf`` (R,), ``self_id`` (R,) the row's person id.
    Candidates (normalised xyxy boxes with the frame they belong to): ``heads`` (H, 4) with
    ``head_owner`` person ids -> type ``person``; ``hands`` (K, 4) with ``hand_owner`` -> type ``hands``
    (what someone holds; the row's own hands count); optional ``objects`` with ``object_id`` -> type
    ``object``. The row's own head never counts. NaN boxes are ignored.
    ``aspect`` = frame width / height.

    Geometry: the 3D ray is projected into the image in perspective (a pinhole camera with the focal
    length ``camera_focal`` assumes, as the head-pose solver does), so a ray toward the lens shrinks to
    a point and a person off the image centre looking at the lens looks along their own line of sight
    to it: that is ``camera`` (within ``camera_max_angle_deg``). Evidence rules (precision before
    recall): a head, hand or object counts only when the ray passes its centre within ``max_miss``
    half-diagonals of its box (and inside the angular cone); the row's own hands by the same rule, and
    only when the gaze points at least ``own_hands_min_pitch_deg`` (one value, or one per row) below level
    (one's hands are well below one's eyes: a level gaze crossing them in the image looks past them).
    Hands raised beside their owner's face (centre inside the head box widened by
    ``hands_at_face_margin`` head sizes on every side; negative = off) are that person, not their
    hands: a ray landing there cannot tell the face from the hand (a high five, a hand at the chin),
    and "looks at Person N" is true either way. One's own hands at one's face are no target at all.

    Returns ``type_code`` (R,) int8 indexing ``pipeline.schema.GAZE_TARGET_TYPES``, ``target_id`` (R,)
    int32 (person id for person/hands, object id for object, -1 otherwise) and ``gaze_point`` (R, 2)
    float32: where the ray lands on the target; for ``camera`` the origin; for ``elsewhere`` the
    origin + ``reach`` x the image-plane part of the direction (clipped to the frame); NaN for unknown.
    """
    frame_index, origin, direction, self_id = _ray_rows(frame_index, origin, direction, 3, self_id)
    n = len(frame_index)
    conf = _as(conf, np.float64, (), "conf").reshape(-1)
    _check_rows(n, origin=origin, direction=direction, conf=conf, self_id=self_id)
    objects, object_id, object_frame = _objects_or_none(objects, object_id, object_frame)
    hands, hand_owner, hand_frame = (_as(hands, np.float64, (4,), "hands"), np.asarray(hand_owner).reshape(-1),
                                     np.asarray(hand_frame).reshape(-1))
    at_face = hands_at_face(hands, hand_owner, hand_frame, heads, head_owner, head_frame, hands_at_face_margin)
    cand = _candidates(
        {
            # a face the ray passes through wins over hands it also passes through: people look at
            # faces behind raised hands (a high five) far more often than at hands held before a face
            "heads": (heads, head_owner, head_owner, head_frame, GAZE_PERSON, 0, False, 0, max_miss),
            "hands at a face": (hands[at_face], hand_owner[at_face], hand_owner[at_face], hand_frame[at_face],
                                GAZE_PERSON, 0, False, 0, max_miss),
            # own hands lie on the way to most things one looks at below: others' targets go first
            "hands": (hands[~at_face], hand_owner[~at_face], hand_owner[~at_face], hand_frame[~at_face], GAZE_HANDS,
                      1, True, 2, max_miss),
            "objects": (objects, _no_owner(object_id), object_id, object_frame, GAZE_OBJECT, 1, True, 1, max_miss),
        }
    )

    type_code = np.full(n, GAZE_UNKNOWN, np.int8)
    target_id = np.full(n, -1, np.int32)
    gaze_point = np.full((n, 2), np.nan)
    usable = np.isfinite(origin).all(axis=1) & np.isfinite(direction).all(axis=1) & (np.nan_to_num(conf) >= min_conf)
    sight = camera_sight_lines(np.nan_to_num(origin), aspect)
    toward_lens = -sight / np.linalg.norm(sight, axis=1, keepdims=True)
    camera = usable & ((np.nan_to_num(direction) * toward_lens).sum(axis=1) >= np.cos(np.radians(camera_max_angle_deg)))
    type_code[camera] = GAZE_CAMERA
    gaze_point[camera] = origin[camera]

    planar = project_directions(np.nan_to_num(origin), np.nan_to_num(direction), aspect)
    planar_norm = np.linalg.norm(planar, axis=1)
    cast = usable & ~camera & (planar_norm > 1e-6)
    unit = np.divide(planar, planar_norm[:, None], out=np.zeros_like(planar), where=planar_norm[:, None] > 1e-6)
    looks_down = np.nan_to_num(direction[:, 1]) >= np.sin(np.radians(own_hands_min_pitch_deg))
    best, point, cand_type, cand_id = _run(
        frame_index, origin, unit, cast, looks_down, self_id, cand, aspect, np.radians(cone_half_angle_deg), use_numba
    )
    hit = best >= 0
    type_code[hit] = cand_type[best[hit]]
    target_id[hit] = cand_id[best[hit]]
    gaze_point[hit] = point[hit]

    elsewhere = usable & ~camera & ~hit
    type_code[elsewhere] = GAZE_ELSEWHERE
    gaze_point[elsewhere] = gaze_step_points(origin[elsewhere], direction[elsewhere], aspect, reach)
    return type_code, target_id, gaze_point.astype(np.float32)


def gaze_reaches_boxes(origin: np.ndarray, direction: np.ndarray, boxes: np.ndarray, *, aspect: float,
                       cone_half_angle_deg: float, max_miss: float) -> np.ndarray:
    """(M,) bool: does the gaze of one row (normalised ``origin`` (2,), camera-frame ``direction`` (3,)) reach
    each normalised xyxy box by the association's evidence rule (``ray_reaches`` on its perspective image)?
    What pipeline.consistency checks an "own hands" target against."""
    origin = np.asarray(origin, np.float64).reshape(1, 2)
    planar = project_directions(origin, np.asarray(direction, np.float64).reshape(1, 3), aspect)[0]
    norm = float(np.linalg.norm(planar))
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if norm <= 1e-6 or not len(boxes):
        return np.zeros(len(boxes), bool)
    scale = np.array([aspect, 1.0, aspect, 1.0])
    return ray_reaches(origin[0] * scale[:2], planar / norm, boxes * scale, np.radians(cone_half_angle_deg), max_miss)[1]


# a standing person's height in head heights: the head size of someone whose head box is clipped or tiny
BODY_HEIGHT_IN_HEADS = 7.5


def head_only_targets(
    gaze_code: np.ndarray,
    gaze_id: np.ndarray,
    head_only: np.ndarray,
    back_view: np.ndarray,
    origin: np.ndarray,
    frame_index: np.ndarray,
    person: np.ndarray,
    heads: np.ndarray,
    bodies: np.ndarray,
    *,
    aspect: float,
    max_heads: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Gaze targets that a head direction read from body keypoints (``head_only`` rows) cannot support
    become unknown. Such a direction has no elevation and is good to 20-30 degrees: it cannot tell a
    person's hands from their face, nor a look into the lens from a face turned toward the camera, and
    beyond ``max_heads`` head sizes from the looker's eyes its spread covers several people (0 = no
    distance limit). A head seen from behind (``back_view``: no face keypoint) is only a guess "into the
    scene": every target of it, "elsewhere" included, is unknown (a person checking the frame cannot see
    where it looks either). ``heads``/``bodies``: each row's head and body box (normalised xyxy, NaN when
    unknown), rows identified by (``frame_index``, ``person``); the target person's row gives their head.
    Returns new (code, id) arrays."""
    code, ids = gaze_code.copy(), gaze_id.copy()
    drop = head_only & (back_view | np.isin(code, (GAZE_HANDS, GAZE_CAMERA)))
    at_person = np.flatnonzero(head_only & (code == GAZE_PERSON))
    if max_heads > 0 and len(at_person):
        row_of = {(f, p): k for k, (f, p) in enumerate(zip(frame_index.tolist(), person.tolist()))}
        scale = np.array([aspect, 1.0])  # frame heights in both axes
        for k in at_person.tolist():
            target = row_of.get((int(frame_index[k]), int(ids[k])))
            if target is None:
                continue
            head = heads[target]
            centre = ((head[:2] + head[2:]) / 2 if np.isfinite(head).all()
                      else np.array([(bodies[target, 0] + bodies[target, 2]) / 2, bodies[target, 1]]))
            own_head = heads[k]
            size = (bodies[k, 3] - bodies[k, 1]) / BODY_HEIGHT_IN_HEADS
            if np.isfinite(own_head).all():
                size = max(size, (own_head[2] - own_head[0]) * aspect, own_head[3] - own_head[1])
            if np.linalg.norm((centre - origin[k]) * scale) > max_heads * size:
                drop[k] = True
    code[drop] = GAZE_UNKNOWN
    ids[drop] = -1
    return code, ids


def gaze_step_points(origin: np.ndarray, direction: np.ndarray, aspect: float, reach: float) -> np.ndarray:
    """Gaze points of rays that hit nothing: an isotropic step of length reach x |image-plane direction|
    from the origin (looking at the lens = a short step), in normalised coordinates, inside the frame."""
    step = project_directions(origin, direction, aspect) * reach
    step[:, 0] /= aspect
    return np.clip(np.asarray(origin, np.float64).reshape(-1, 2) + step, 0.0, 1.0)


def assign_point_targets(
    frame_index: np.ndarray,
    origin: np.ndarray,
    direction: np.ndarray,
    pointing: np.ndarray,
    self_id: np.ndarray,
    persons: np.ndarray,
    person_owner: np.ndarray,
    person_frame: np.ndarray,
    hands: np.ndarray,
    hand_owner: np.ndarray,
    hand_frame: np.ndarray,
    objects: np.ndarray | None = None,
    object_id: np.ndarray | None = None,
    object_frame: np.ndarray | None = None,
    *,
    aspect: float = 1.0,
    cone_half_angle_deg: float = 12.0,
    max_miss: float = np.inf,
    use_numba: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointing target of every (frame, person) row; same array contract as ``assign_gaze_targets``.

    ``direction`` (R, 2) is the isotropic image-plane pointing ray (index MCP -> tip, or elbow ->
    wrist), ``pointing`` (R,) bool says which rows point. Candidates: other people's body boxes
    (``persons`` -> ``person``), other people's hands (-> ``hands``, what they hold wins over their
    body when both are on the ray) and objects (-> ``object``, also preferred to bodies); the
    pointer's own body and hands never count.

    Returns ``type_code`` (R,) int8 indexing ``pipeline.schema.POINT_TARGET_TYPES`` (-1 = not
    pointing), ``target_id`` (R,) int32 and ``point`` (R, 2) float32 where the ray lands (``elsewhere``:
    where it leaves the frame; NaN when not pointing).
    """
    frame_index, origin, direction, self_id = _ray_rows(frame_index, origin, direction, 2, self_id)
    n = len(frame_index)
    pointing = np.asarray(pointing, dtype=bool).reshape(-1)
    _check_rows(n, origin=origin, direction=direction, pointing=pointing, self_id=self_id)
    objects, object_id, object_frame = _objects_or_none(objects, object_id, object_frame)
    cand = _candidates(
        {
            "persons": (persons, person_owner, person_owner, person_frame, POINT_PERSON, 1, False, 1, max_miss),
            "hands": (hands, hand_owner, hand_owner, hand_frame, POINT_HANDS, 0, False, 0, max_miss),
            "objects": (objects, _no_owner(object_id), object_id, object_frame, POINT_OBJECT, 0, True, 0, max_miss),
        }
    )
    norm = np.linalg.norm(direction, axis=1)
    active = pointing & np.isfinite(origin).all(axis=1) & np.isfinite(direction).all(axis=1) & (norm > 1e-9)
    unit = np.divide(direction, norm[:, None], out=np.zeros_like(direction), where=norm[:, None] > 1e-9)
    best, point, cand_type, cand_id = _run(
        frame_index, origin, unit, active, np.zeros(n, bool), self_id, cand, aspect, np.radians(cone_half_angle_deg),
        use_numba,
    )
    type_code = np.full(n, POINT_NONE, np.int8)
    target_id = np.full(n, -1, np.int32)
    landing = np.full((n, 2), np.nan)
    hit = best >= 0
    type_code[hit] = cand_type[best[hit]]
    target_id[hit] = cand_id[best[hit]]
    landing[hit] = point[hit]
    missed = active & ~hit
    type_code[missed] = POINT_ELSEWHERE
    landing[missed] = _frame_exit(origin[missed], unit[missed], aspect)
    return type_code, target_id, landing.astype(np.float32)


def hands_at_face(hands, hand_owner, hand_frame, heads, head_owner, head_frame, margin: float) -> np.ndarray:
    """(K,) bool: which hand boxes have their centre inside their owner's head box (same frame) widened
    by ``margin`` x the head's width and height on every side; all False when ``margin`` < 0. NaN boxes
    are never at a face."""
    hands = _as(hands, np.float64, (4,), "hands")
    heads = _as(heads, np.float64, (4,), "heads")
    out = np.zeros(len(hands), bool)
    if margin < 0 or len(hands) == 0 or len(heads) == 0:
        return out
    head_of = {(int(f), int(o)): k for k, (f, o) in enumerate(zip(np.asarray(head_frame).reshape(-1),
                                                                    np.asarray(head_owner).reshape(-1)))}
    for k, (f, o) in enumerate(zip(np.asarray(hand_frame).reshape(-1), np.asarray(hand_owner).reshape(-1))):
        h = head_of.get((int(f), int(o)))
        if h is None:
            continue
        x1, y1, x2, y2 = heads[h]
        mx, my = margin * (x2 - x1), margin * (y2 - y1)
        cx, cy = (hands[k, 0] + hands[k, 2]) / 2, (hands[k, 1] + hands[k, 3]) / 2
        out[k] = bool(x1 - mx <= cx <= x2 + mx and y1 - my <= cy <= y2 + my)  # NaN compares False
    return out


def stability_window(times: np.ndarray, target_stable_seconds: float) -> float:
    """Half-window of the stability vote (:func:`stable_targets`): ``target_stable_seconds``, widened to
    1.25 sampling steps (the median spacing of ``times``) so that it always reaches the neighbouring
    samples."""
    steps = np.diff(np.unique(np.asarray(times, np.float64)))
    step = float(np.median(steps)) if len(steps) else 0.0
    return max(float(target_stable_seconds), 1.25 * step)


def _look_rows(times, person, shot, type_code, target_id):
    """The per-row inputs of the rules over a person's neighbouring samples, as checked flat arrays."""
    times = np.asarray(times, np.float64).reshape(-1)
    person = np.asarray(person, np.int64).reshape(-1)
    shot = np.asarray(shot, np.int64).reshape(-1)
    type_code = np.asarray(type_code).reshape(-1)
    target_id = np.asarray(target_id).reshape(-1)
    _check_rows(len(times), person=person, shot=shot, type_code=type_code, target_id=target_id)
    return times, person, shot, type_code, target_id


def _person_shot_runs(times: np.ndarray, person: np.ndarray, shot: np.ndarray) -> list[np.ndarray]:
    """Row indices of each (person, shot), in time order: one look never spans two people or a cut."""
    order = np.lexsort((times, shot, person))
    key = np.stack([person[order], shot[order]], axis=1)
    return np.split(order, np.flatnonzero((np.diff(key, axis=0) != 0).any(axis=1)) + 1)


def _unit_rows(direction: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, D) unit directions (NaN read as 0) and (n,) whether each row has one."""
    unit = np.nan_to_num(np.asarray(direction, np.float64).reshape(n, -1))
    norm = np.linalg.norm(unit, axis=1)
    return unit / np.maximum(norm, 1e-9)[:, None], norm > 1e-9


def stable_targets(
    times: np.ndarray,
    person: np.ndarray,
    shot: np.ndarray,
    type_code: np.ndarray,
    target_id: np.ndarray,
    half_window_s: float,
    unknown_code: int = GAZE_UNKNOWN,
    direction: np.ndarray | None = None,
    min_turn_deg: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame targets that hold over neighbouring frames: a row keeps its target only when at least
    half of the same person's rows (same shot) within ``half_window_s`` seconds either side that have
    any target agree with it; otherwise it becomes ``unknown_code`` (a target that flickers between
    two people while the head hardly moves is not evidence of either). With ``direction`` (R, 3) and
    ``min_turn_deg`` > 0, a row whose gaze is turned at least that far from every disagreeing
    neighbour's keeps its target: the head moved, so it is a new look (at 2 fps a 0.8 s look into the
    camera is one sample between two others). Rows without a target (``unknown_code``) neither vote
    nor change. Returns new (type_code, target_id) arrays."""
    times, person, shot, type_code, target_id = _look_rows(times, person, shot, type_code, target_id)
    out_type, out_id = type_code.copy(), target_id.copy()
    if half_window_s <= 0 or len(times) == 0:
        return out_type, out_id
    voting = type_code != unknown_code
    turn_cos = unit = has_direction = None
    if direction is not None and min_turn_deg > 0:
        unit, has_direction = _unit_rows(direction, len(times))
        turn_cos = float(np.cos(np.radians(min_turn_deg)))
    for rows in _person_shot_runs(times, person, shot):
        rows = rows[voting[rows]]
        t = times[rows]
        lo = np.searchsorted(t, t - half_window_s - 1e-9, side="left")
        hi = np.searchsorted(t, t + half_window_s + 1e-9, side="right")
        for k, r in enumerate(rows):
            window = rows[lo[k] : hi[k]]
            same = (type_code[window] == type_code[r]) & (target_id[window] == target_id[r])
            if 2 * np.count_nonzero(same) >= len(window):
                continue
            if turn_cos is not None and has_direction[window].all():
                # a gaze turned away from every disagreeing neighbour's is a new look, not a flicker of
                # one head pose between two targets
                if np.all(unit[window[~same]] @ unit[r] <= turn_cos):
                    continue
            out_type[r], out_id[r] = unknown_code, -1
    return out_type, out_id


def turned_directions(direction: np.ndarray, degrees) -> np.ndarray:
    """(4, R, 3): each unit camera-frame direction (R, 3) turned by +-``degrees`` (scalar or (R,)) to the
    left and right (about the camera's y axis) and up and down (about its x axis): reads that an estimate
    this uncertain could equally have given. NaN rows stay NaN."""
    d = np.asarray(direction, np.float64).reshape(-1, 3)
    a = np.radians(np.broadcast_to(np.asarray(degrees, np.float64), (len(d),)))
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    out = np.empty((4, len(d), 3))
    for k, sign in enumerate((1.0, -1.0)):
        c, s = np.cos(sign * a), np.sin(sign * a)
        out[k] = np.stack([x * c + z * s, y, -x * s + z * c], axis=1)  # about y: left / right
        out[2 + k] = np.stack([x, y * c - z * s, y * s + z * c], axis=1)  # about x: up / down
    return out


def names_another_person(
    type_code: np.ndarray, target_id: np.ndarray, alt_code: np.ndarray, alt_id: np.ndarray
) -> np.ndarray:
    """(R,) bool: rows whose target is a person or a person's hands while one of their alternative reads
    (``alt_code`` / ``alt_id``, (K, R)) names another person or another person's hands: which of two people
    the look is on is inside the read's uncertainty. A person's face and their own hands are the same person."""
    who_kinds = (GAZE_PERSON, GAZE_HANDS)
    own = np.where(np.isin(type_code, who_kinds), target_id, -1)
    alt_code = np.asarray(alt_code).reshape(-1, len(own))
    alt_id = np.asarray(alt_id).reshape(-1, len(own))
    other = np.isin(alt_code, who_kinds) & (alt_id != own[None, :])
    return (own >= 0) & other.any(axis=0)


def settle_ambiguous_targets(
    times: np.ndarray,
    person: np.ndarray,
    shot: np.ndarray,
    type_code: np.ndarray,
    target_id: np.ndarray,
    alt_code: np.ndarray,
    alt_id: np.ndarray,
    window_s: float,
    unknown_code: int = GAZE_UNKNOWN,
    direction: np.ndarray | None = None,
    max_turn_deg=None,
    unsettled_unknown: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decisions that weigh their margin. ``alt_code`` / ``alt_id`` (K, R) are the targets the same rows get
    from directions turned within their uncertainty (:func:`turned_directions`); a row is firm when every one
    of them equals its own (``type_code``, ``target_id``), ambiguous otherwise: its look grazes a box edge or
    the camera cone, or lies between two targets, and which side wins is detector noise. An ambiguous row
    takes the target of the nearest firm row of the same person and shot within ``window_s`` seconds (earlier
    first at equal distance) when that target is one of its own alternatives (hysteresis: the look stays
    where it clearly was); otherwise it keeps its own read (saying unknown instead cost 10-18 truth rows a set:
    most marginal reads are right).
    With ``direction`` (R, 3) and ``max_turn_deg`` (scalar or (R,)), only a neighbour whose gaze is within
    that angle of the row's is the same look: a head that turned is a new look, whose target a marginal
    read must not inherit (a glance into the lens between looks at hands). Unknown rows stay unknown and
    are never firm neighbours. ``unsettled_unknown`` (R,) bool marks rows whose read cannot stand on its own:
    where no firm neighbour settles them they become unknown instead of keeping their read.
    Returns new (type_code, target_id) and the (R,) bool ``firm``."""
    times, person, shot, type_code, target_id = _look_rows(times, person, shot, type_code, target_id)
    alt_code = np.asarray(alt_code).reshape(-1, len(times))
    alt_id = np.asarray(alt_id).reshape(-1, len(times))
    known = type_code != unknown_code
    firm = known & ((alt_code == type_code) & (alt_id == target_id)).all(axis=0)
    unit = turn_cos = None
    if direction is not None and max_turn_deg is not None:
        unit, _ = _unit_rows(direction, len(times))
        turn_cos = np.cos(np.radians(np.broadcast_to(np.asarray(max_turn_deg, np.float64), (len(times),))))
    out_type, out_id = type_code.copy(), target_id.copy()
    ambiguous = known & ~firm
    # neighbours are searched within each person and shot only
    for rows in _person_shot_runs(times, person, shot):
        if not ambiguous[rows].any():
            continue
        firm_rows = rows[firm[rows]]
        for r in rows[ambiguous[rows]].tolist():
            options = set(zip(alt_code[:, r].tolist(), alt_id[:, r].tolist())) | {(int(type_code[r]), int(target_id[r]))}
            near = firm_rows[np.abs(times[firm_rows] - times[r]) <= window_s + 1e-9]
            if unit is not None:
                near = near[unit[near] @ unit[r] >= turn_cos[r] - 1e-12]
            for n in near[np.lexsort((times[near], np.abs(times[near] - times[r])))].tolist():
                if (int(type_code[n]), int(target_id[n])) in options:
                    out_type[r], out_id[r] = type_code[n], target_id[n]
                    break
            else:
                if unsettled_unknown is not None and unsettled_unknown[r]:
                    out_type[r], out_id[r] = unknown_code, -1
    return out_type, out_id, firm


def gaze_on_pointed_objects(
    times: np.ndarray,
    frame_index: np.ndarray,
    person: np.ndarray,
    shot: np.ndarray,
    gaze_code: np.ndarray,
    gaze_id: np.ndarray,
    gaze_origin: np.ndarray,
    gaze_dir: np.ndarray,
    point_code: np.ndarray,
    point_id: np.ndarray,
    heads: np.ndarray,
    head_owner: np.ndarray,
    head_frame: np.ndarray,
    objects: np.ndarray,
    object_id: np.ndarray,
    object_frame: np.ndarray,
    *,
    aspect: float,
    max_angle_deg: float,
    hold_seconds: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Gaze onto the object one points at. People look at what they point at (the eyes reach the
    referent around the arm's rise and stay while it is held), but a head-pose + iris ray on a turned
    face is a few tens of degrees off. So a row whose gaze hit nothing (``elsewhere``) counts as looking
    at object X when the same person points at X within ``hold_seconds`` (same shot), X's box is in the
    row's frame, the gaze's image-plane direction is within ``max_angle_deg`` of X (0 when the ray
    passes through its box) and no other person's head is as close to the ray. Both cues must agree:
    without the point there is no referent, without the gaze direction no look. Returns new
    (gaze_code, gaze_id)."""
    out_code, out_id = np.array(gaze_code, copy=True), np.array(gaze_id, copy=True)
    times = np.asarray(times, np.float64).reshape(-1)
    frame_index = np.asarray(frame_index, np.int64).reshape(-1)
    person = np.asarray(person, np.int64).reshape(-1)
    shot = np.asarray(shot, np.int64).reshape(-1)
    objects = np.asarray(objects, np.float64).reshape(-1, 4)
    if max_angle_deg <= 0 or not len(objects):
        return out_code, out_id
    object_id = np.asarray(object_id, np.int64).reshape(-1)
    object_frame = np.asarray(object_frame, np.int64).reshape(-1)
    heads = np.asarray(heads, np.float64).reshape(-1, 4)
    head_owner = np.asarray(head_owner, np.int64).reshape(-1)
    head_frame = np.asarray(head_frame, np.int64).reshape(-1)
    pointed = np.flatnonzero(np.asarray(point_code) == POINT_OBJECT)
    direction = project_directions(gaze_origin, gaze_dir, aspect)
    scale = np.array([aspect, 1.0, aspect, 1.0])
    limit = np.radians(max_angle_deg)
    for r in np.flatnonzero(np.asarray(gaze_code) == GAZE_ELSEWHERE):
        if not (np.isfinite(direction[r]).all() and np.isfinite(gaze_origin[r]).all()):
            continue
        near = pointed[(person[pointed] == person[r]) & (shot[pointed] == shot[r])
                       & (np.abs(times[pointed] - times[r]) <= hold_seconds + 1e-9)]
        candidates = np.flatnonzero((object_frame == frame_index[r]) & np.isin(object_id, point_id[near]))
        if not len(candidates):
            continue
        origin = np.asarray(gaze_origin[r], np.float64) * scale[:2]
        angles = ray_box_angles(origin, direction[r], objects[candidates] * scale)
        best = int(np.argmin(angles))
        if angles[best] > limit:
            continue
        others = np.flatnonzero((head_frame == frame_index[r]) & (head_owner != person[r])
                                & np.isfinite(heads).all(axis=1))
        if (ray_box_angles(origin, direction[r], heads[others] * scale) <= angles[best]).any():
            continue
        out_code[r], out_id[r] = GAZE_OBJECT, object_id[candidates[best]]
    return out_code, out_id


def camera_sight_lines(origin: np.ndarray, aspect: float) -> np.ndarray:
    """(N, 3) camera-frame directions from the lens through normalised image points ``origin`` (N, 2),
    for a pinhole camera whose focal length is the longer image side (the head-pose solver's prior)."""
    origin = np.asarray(origin, np.float64).reshape(-1, 2)
    # focal = longer side: normalised offsets scale by (side / focal)
    sx, sy = (1.0, 1.0 / aspect) if aspect >= 1.0 else (aspect, 1.0)
    return np.stack([(origin[:, 0] - 0.5) * sx, (origin[:, 1] - 0.5) * sy, np.ones(len(origin))], axis=1)


def project_directions(origin: np.ndarray, direction: np.ndarray, aspect: float) -> np.ndarray:
    """(N, 2) isotropic image-plane directions of 3D rays (camera frame, ``direction`` (N, 3)) that start
    at the scene points seen at ``origin`` (normalised): the perspective image of the ray, not the
    dropped z, so a ray toward the lens shrinks to nothing and rays off the image centre bend right."""
    sight = camera_sight_lines(origin, aspect)
    direction = np.asarray(direction, np.float64).reshape(-1, 3)
    # d/ds of the projection of (Z * sight + s * d), up to the positive factor 1 / Z
    return direction[:, :2] - sight[:, :2] * direction[:, 2:3]


def _frame_exit(origin: np.ndarray, unit: np.ndarray, aspect: float) -> np.ndarray:
    """Where rays (normalised origin, isotropic unit direction) leave the [0, 1] frame."""
    d = unit.copy()
    d[:, 0] /= aspect  # back to normalised units
    with np.errstate(divide="ignore", invalid="ignore"):
        tx = np.where(d[:, 0] > 0, (1 - origin[:, 0]) / d[:, 0], np.where(d[:, 0] < 0, -origin[:, 0] / d[:, 0], np.inf))
        ty = np.where(d[:, 1] > 0, (1 - origin[:, 1]) / d[:, 1], np.where(d[:, 1] < 0, -origin[:, 1] / d[:, 1], np.inf))
    t = np.maximum(np.minimum(tx, ty), 0.0)
    return np.clip(origin + t[:, None] * d, 0.0, 1.0)


def target_type_names(type_code: np.ndarray, vocabulary: tuple[str, ...] = GAZE_TARGET_TYPES) -> list[str | None]:
    """Type codes -> the schema's strings (None for -1)."""
    return [vocabulary[c] if c >= 0 else None for c in np.asarray(type_code).tolist()]
