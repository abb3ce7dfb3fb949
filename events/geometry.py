"""Per-frame target association: which head, hands or object a gaze or pointing ray lands on.

Every (frame, person) row casts a ray from its origin along the image-plane projection of its
direction; a candidate box counts when it lies inside a cone of half-angle ``cone_half_angle`` around
the ray. The best candidate is the one with the smallest angular distance (0 for a box the ray passes
through), then the lower priority value, then the nearer one. The work over all rows and candidates
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
    origin, direction, active, owner, cand_start, cand_end, boxes, cand_owner, cand_priority, cand_self_ok, cand_self_priority, cone
):
    """For each row: index of the best candidate in [cand_start, cand_end) (-1 for none) and the point
    on it where the ray lands. All geometry is in isotropic coordinates."""
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
            if cand_owner[c] == owner[r] and not cand_self_ok[c]:
                continue
            x1, y1, x2, y2 = boxes[c, 0], boxes[c, 1], boxes[c, 2], boxes[c, 3]
            inside = x1 <= ox <= x2 and y1 <= oy <= y2
            if inside:
                angle = 0.0
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
            qx = min(max(ox, x1), x2)
            qy = min(max(oy, y1), y2)
            distance = np.sqrt((qx - ox) ** 2 + (qy - oy) ** 2)
            priority = cand_self_priority[c] if cand_owner[c] == owner[r] else cand_priority[c]
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


def _associate_reference(
    origin, direction, active, owner, cand_start, cand_end, boxes, cand_owner, cand_priority, cand_self_ok, cand_self_priority, cone
):
    """NumPy twin of ``_associate_kernel`` (vectorised over a row's candidates); same results."""
    n_rows = origin.shape[0]
    best = np.full(n_rows, -1, np.int64)
    point = np.full((n_rows, 2), np.nan)
    for r in np.flatnonzero(active):
        idx = np.arange(cand_start[r], cand_end[r])
        idx = idx[(cand_owner[idx] != owner[r]) | cand_self_ok[idx]]
        if len(idx) == 0:
            continue
        o, d = origin[r], direction[r]
        b = boxes[idx]
        corners = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1) - o  # (M, 4, 2)
        theta = np.arctan2(d[0] * corners[..., 1] - d[1] * corners[..., 0], d[0] * corners[..., 0] + d[1] * corners[..., 1])
        lo, hi = theta.min(axis=1), theta.max(axis=1)
        hit = (lo <= 0.0) & (hi >= 0.0) & (hi - lo < np.pi)
        inside = (b[:, 0] <= o[0]) & (o[0] <= b[:, 2]) & (b[:, 1] <= o[1]) & (o[1] <= b[:, 3])
        angle = np.where(inside | hit, 0.0, np.abs(theta).min(axis=1))
        nearest = np.stack([np.clip(o[0], b[:, 0], b[:, 2]), np.clip(o[1], b[:, 1], b[:, 3])], axis=1)
        distance = np.sqrt(((nearest - o) ** 2).sum(axis=1))
        keep = angle <= cone
        if not keep.any():
            continue
        priority = np.where(cand_owner[idx] == owner[r], cand_self_priority[idx], cand_priority[idx])
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


def _candidates(groups, n_frames_hint: int):
    """Concatenate candidate groups {name: (boxes, owner, target_id, frame, type_code, priority,
    self_ok, self_priority)} and sort them by frame so each row's candidates are one contiguous slice.
    Lower priority wins between candidates at the same angular distance; ``self_priority`` replaces
    it for the row's own candidates."""
    boxes, owner, target_id, frame, type_code, priority, self_ok, self_priority = [], [], [], [], [], [], [], []
    for name, (b, o, t, f, code, prio, ok, self_prio) in groups.items():
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
    boxes = np.concatenate(boxes)
    finite = np.isfinite(boxes).all(axis=1) & (boxes[:, 2] >= boxes[:, 0]) & (boxes[:, 3] >= boxes[:, 1])
    arrays = [boxes, *(np.concatenate(a) for a in (owner, target_id, frame, type_code, priority, self_ok, self_priority))]
    arrays = [a[finite] for a in arrays]
    order = np.argsort(arrays[3], kind="stable")
    return [a[order] for a in arrays]


def _no_owner(ids) -> np.ndarray:
    return np.full(np.asarray(ids).reshape(-1).shape[0], -(2**62), np.int64)  # matches no person id


def _run(frame_index, origin, direction, active, owner, cand, aspect, cone_rad, use_numba):
    boxes, cand_owner, cand_id, cand_frame, cand_type, cand_priority, cand_self_ok, cand_self_priority = cand
    scale = np.array([aspect, 1.0, aspect, 1.0])
    iso_boxes = np.ascontiguousarray(boxes * scale)
    iso_origin = np.ascontiguousarray(origin * scale[:2])
    start = np.searchsorted(cand_frame, frame_index, side="left").astype(np.int64)
    end = np.searchsorted(cand_frame, frame_index, side="right").astype(np.int64)
    fn = _associate_kernel if use_numba else _associate_reference
    best, point = fn(
        iso_origin, np.ascontiguousarray(direction), active, owner, start, end, iso_boxes,
        cand_owner, cand_priority, cand_self_ok, cand_self_priority, float(cone_rad),
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

    Returns ``type_code`` (R,) int8 indexing ``pipeline.schema.GAZE_TARGET_TYPES``, ``target_id`` (R,)
    int32 (person id for person/hands, object id for object, -1 otherwise) and ``gaze_point`` (R, 2)
    float32: where the ray lands on the target; for ``camera`` the origin; for ``elsewhere`` the
    origin + ``reach`` x the image-plane part of the direction (clipped to the frame); NaN for unknown.
    """
    frame_index = _as(frame_index, np.int64, (), "frame_index").reshape(-1)
    n = len(frame_index)
    origin = _as(origin, np.float64, (2,), "origin")
    direction = _as(direction, np.float64, (3,), "direction")
    conf = _as(conf, np.float64, (), "conf").reshape(-1)
    self_id = _as(self_id, np.int64, (), "self_id").reshape(-1)
    _check_rows(n, origin=origin, direction=direction, conf=conf, self_id=self_id)
    objects, object_id, object_frame = _objects_or_none(objects, object_id, object_frame)
    cand = _candidates(
        {
            # a face the ray passes through wins over hands it also passes through: people look at
            # faces behind raised hands (a high five) far more often than at hands held before a face
            "heads": (heads, head_owner, head_owner, head_frame, GAZE_PERSON, 0, False, 0),
            # own hands lie on the way to most things one looks at below: others' targets go first
            "hands": (hands, hand_owner, hand_owner, hand_frame, GAZE_HANDS, 1, True, 2),
            "objects": (objects, _no_owner(object_id), object_id, object_frame, GAZE_OBJECT, 1, True, 1),
        },
        n,
    )

    type_code = np.full(n, GAZE_UNKNOWN, np.int8)
    target_id = np.full(n, -1, np.int32)
    gaze_point = np.full((n, 2), np.nan)
    usable = np.isfinite(origin).all(axis=1) & np.isfinite(direction).all(axis=1) & (np.nan_to_num(conf) >= min_conf)
    camera = usable & (-direction[:, 2] >= np.cos(np.radians(camera_max_angle_deg)))
    type_code[camera] = GAZE_CAMERA
    gaze_point[camera] = origin[camera]

    planar = direction[:, :2].copy()
    planar_norm = np.linalg.norm(planar, axis=1)
    cast = usable & ~camera & (planar_norm > 1e-6)
    unit = np.divide(planar, planar_norm[:, None], out=np.zeros_like(planar), where=planar_norm[:, None] > 1e-6)
    best, point, cand_type, cand_id = _run(
        frame_index, origin, unit, cast, self_id, cand, aspect, np.radians(cone_half_angle_deg), use_numba
    )
    hit = best >= 0
    type_code[hit] = cand_type[best[hit]]
    target_id[hit] = cand_id[best[hit]]
    gaze_point[hit] = point[hit]

    elsewhere = usable & ~camera & ~hit
    type_code[elsewhere] = GAZE_ELSEWHERE
    # isotropic step of length reach * |planar| (looking at the lens = a short step), back to normalised
    step = planar[elsewhere] * reach
    step[:, 0] /= aspect
    gaze_point[elsewhere] = np.clip(origin[elsewhere] + step, 0.0, 1.0)
    return type_code, target_id, gaze_point.astype(np.float32)


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
    frame_index = _as(frame_index, np.int64, (), "frame_index").reshape(-1)
    n = len(frame_index)
    origin = _as(origin, np.float64, (2,), "origin")
    direction = _as(direction, np.float64, (2,), "direction")
    pointing = np.asarray(pointing, dtype=bool).reshape(-1)
    self_id = _as(self_id, np.int64, (), "self_id").reshape(-1)
    _check_rows(n, origin=origin, direction=direction, pointing=pointing, self_id=self_id)
    objects, object_id, object_frame = _objects_or_none(objects, object_id, object_frame)
    cand = _candidates(
        {
            "persons": (persons, person_owner, person_owner, person_frame, POINT_PERSON, 1, False, 1),
            "hands": (hands, hand_owner, hand_owner, hand_frame, POINT_HANDS, 0, False, 0),
            "objects": (objects, _no_owner(object_id), object_id, object_frame, POINT_OBJECT, 0, True, 0),
        },
        n,
    )
    norm = np.linalg.norm(direction, axis=1)
    active = pointing & np.isfinite(origin).all(axis=1) & np.isfinite(direction).all(axis=1) & (norm > 1e-9)
    unit = np.divide(direction, norm[:, None], out=np.zeros_like(direction), where=norm[:, None] > 1e-9)
    best, point, cand_type, cand_id = _run(
        frame_index, origin, unit, active, self_id, cand, aspect, np.radians(cone_half_angle_deg), use_numba
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
