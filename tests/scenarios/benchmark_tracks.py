"""Benchmark data: large random tracks (``random_tracks(10, 36000, 10)`` = 10 people x one hour at 10 fps)
for benchmarks/bench_events.py and the stored expectations of tests/test_events_identical.py."""
from __future__ import annotations

from typing import Optional

import numpy as np
import pyarrow as pa

from pipeline.schema import TRACKS_SCHEMA



def random_tracks(n_people: int = 10, n_frames: int = 36_000, fps: float = 10.0, seed: int = 0,
                  n_shots: int = 20) -> pa.Table:
    """Large random tracks with realistic structure: each person holds a gaze target (a face, hands, the
    camera or nothing) for 1-6 s, points now and then, with noise, dropped gaze and absences."""
    rng = np.random.default_rng(seed)
    P, F = n_people, n_frames
    t = np.arange(F) / fps
    shot = np.searchsorted(np.sort(rng.choice(np.arange(1, F), n_shots - 1, replace=False)), np.arange(F), side="right")
    xs = np.linspace(0.08, 0.92, P)
    # gaze targets change every 1-6 s
    kind = np.empty((P, F), object)
    tid = np.full((P, F), -1, np.int64)
    pointing = np.zeros((P, F), bool)
    for p in range(P):
        f = 0
        while f < F:
            n = int(rng.uniform(1, 6) * fps)
            r = rng.random()
            if r < 0.45:
                q = int(rng.integers(P - 1)); q += q >= p
                kind[p, f:f + n], tid[p, f:f + n] = "person", q
            elif r < 0.7:
                kind[p, f:f + n], tid[p, f:f + n] = "hands", int(rng.integers(P))
            elif r < 0.75:
                kind[p, f:f + n] = "camera"
            else:
                kind[p, f:f + n] = "elsewhere"
            if rng.random() < 0.1:
                pointing[p, f:f + max(1, n // 2)] = True
            f += n
    kind = np.where(rng.random((P, F)) < 0.03, "unknown", kind)
    present = rng.random((P, F)) >= 0.02
    head = np.stack([xs - 0.03, np.full(P, 0.27), xs + 0.03, np.full(P, 0.33)], -1)  # (P, 4)
    target_x = np.where(tid >= 0, xs[np.clip(tid, 0, P - 1)], xs[:, None] + 0.3)
    target_y = np.where(kind == "hands", 0.5, np.where(kind == "person", 0.3, 0.9))
    gaze_point = np.stack([target_x, target_y], -1) + rng.normal(0, 0.005, (P, F, 2))
    pp, ff = np.nonzero(present)
    n = len(pp)
    k = kind[pp, ff]
    known = k != "unknown"
    body = np.stack([xs - 0.08, np.full(P, 0.25), xs + 0.08, np.full(P, 0.95)], -1)[pp]
    keypoints = np.zeros((n, 17, 3), np.float32)
    keypoints[..., 2] = 0.9
    keypoints[:, :, 0] = xs[pp][:, None]
    keypoints[:, :, 1] = np.linspace(0.3, 0.95, 17)[None, :]
    hands = np.stack([np.stack([xs - 0.04, np.full(P, 0.48), xs, np.full(P, 0.52)], -1),
                      np.stack([xs, np.full(P, 0.48), xs + 0.04, np.full(P, 0.52)], -1)], 1)[pp]  # (n, 2, 4)

    def fixed(values: np.ndarray, width: int) -> pa.Array:
        return pa.FixedSizeListArray.from_arrays(pa.array(values.astype(np.float32).ravel()), width)

    def lists(values: np.ndarray, width: int, mask: Optional[np.ndarray] = None) -> pa.Array:
        offsets = np.arange(0, len(values) * width + 1, width, dtype=np.int32)
        arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.astype(np.float32).ravel()))
        if mask is not None:
            arr = pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.astype(np.float32).ravel()),
                                           mask=pa.array(~mask))
        return arr

    gp = gaze_point[pp, ff]
    # each direction toward its gaze point (as tests/scenarios/scene.py builds it), so a shift turns it
    toward = np.concatenate([np.nan_to_num(gp - 0.5 * (head[pp, :2] + head[pp, 2:])), np.full((n, 1), 0.5)], 1)
    directions = toward / np.linalg.norm(toward, axis=1, keepdims=True)
    hand_lists = pa.ListArray.from_arrays(pa.array(np.arange(0, 2 * n + 1, 2, dtype=np.int32)), fixed(hands.reshape(-1, 4), 4))
    point_rows = pointing[pp, ff]
    columns = {
        "video_id": pa.array(["random"] * n), "frame_idx": pa.array(ff.astype(np.int32)),
        "native_frame_idx": pa.array(ff.astype(np.int32)), "t": pa.array(t[ff]), "shot_id": pa.array(shot[ff].astype(np.int32)),
        "person_id": pa.array(pp.astype(np.int32)), "det_conf": pa.array(np.full(n, 0.9, np.float32)),
        "bbox": fixed(body, 4), "head_bbox": lists(head[pp], 4), "keypoints": lists(keypoints.reshape(n, -1), 51),
        "gaze_origin": lists(0.5 * (head[pp, :2] + head[pp, 2:]), 2), "gaze_dir": lists(directions, 3, known),
        "gaze_source": pa.array(["face_mesh"] * n), "gaze_conf": pa.array(np.where(known, 0.8, 0.0).astype(np.float32)),
        "gaze_point": lists(gp, 2, known), "gaze_target_type": pa.array(k.astype(str)),
        "gaze_target_id": pa.array(np.where(np.isin(k, ["person", "hands"]), tid[pp, ff], 0).astype(np.int32),
                                   mask=~np.isin(k, ["person", "hands"])),
        "pointing": pa.array(point_rows), "point_dir": lists(np.tile([1.0, 0.0], (n, 1)), 2, point_rows),
        "point_conf": pa.array(np.where(point_rows, 0.8, 0.0).astype(np.float32)),
        "point_target_type": pa.array(np.where(point_rows, "person", None).tolist(), pa.string()),
        "point_target_id": pa.array(((pp + 1) % P).astype(np.int32), mask=~point_rows),
        "hand_bboxes": hand_lists, "hand_open": lists(np.full((n, 2), 0.2), 2),
    }
    for fld in TRACKS_SCHEMA:  # columns added to the schema later stay empty (all nullable)
        columns.setdefault(fld.name, pa.nulls(n, fld.type))
    return pa.Table.from_pydict(columns, schema=TRACKS_SCHEMA)
