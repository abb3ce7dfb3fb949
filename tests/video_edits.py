"""Edited videos built from the shared clips for identity and cut tests (PyAV + OpenCV, in the test's tmp
folder: media is never copied into the repository): cutaways, digital zooms; and who keeps their id
across a cutaway (``identity_across_cutaway``).

Every edit is written at one frame rate and size, so each piece's first frame is at a known time."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment

from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer


def clip_frames(path: Path, fps: float, size: tuple[int, int], seconds: Optional[float] = None) -> list[np.ndarray]:
    """The clip's frames at ``fps`` as BGR images of ``size`` (w, h), at most ``seconds`` long."""
    frames = []
    for frame in iter_frames(str(path), fps, 4096):
        if seconds is not None and frame.t >= seconds - 1e-6:
            break
        frames.append(np.ascontiguousarray(cv2.resize(frame.image, size, interpolation=cv2.INTER_AREA)[..., ::-1]))
    return frames


def zoomed(frames: list[np.ndarray], final_fraction: float) -> list[np.ndarray]:
    """A smooth digital zoom: frame k shows the centre crop of side 1 -> ``final_fraction`` of the frame
    (linearly over the frames), scaled back up to the full size."""
    height, width = frames[0].shape[:2]
    out = []
    for k, image in enumerate(frames):
        fraction = 1.0 + (final_fraction - 1.0) * k / max(1, len(frames) - 1)
        w, h = width * fraction, height * fraction
        x0, y0 = (width - w) / 2, (height - h) / 2
        crop = image[int(round(y0)): int(round(y0 + h)), int(round(x0)): int(round(x0 + w))]
        out.append(cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR))
    return out


def panned(frames: list[np.ndarray], fraction: float, shift: float, seconds: float, fps: float
           ) -> tuple[list[np.ndarray], list[float]]:
    """A digital pan: frame k shows a window of ``fraction`` of the frame (centred vertically) whose left side
    slides from 0 to ``shift`` of the frame's width over the first ``seconds``, then stays, scaled back up to
    the full size. Returns the frames and each one's window left side (normalised)."""
    height, width = frames[0].shape[:2]
    w, h = width * fraction, height * fraction
    y0 = (height - h) / 2
    out, lefts = [], []
    for k, image in enumerate(frames):
        left = shift * min(1.0, k / fps / seconds)
        x0 = left * width
        crop = image[int(round(y0)): int(round(y0 + h)), int(round(x0)): int(round(x0 + w))]
        out.append(cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR))
        lefts.append(left)
    return out, lefts


def ids_through_pan(reference: list[dict], pan: list[dict], lefts: list[float], fraction: float, fps: float) -> dict:
    """Who is who in a panned copy (``panned``) of a clip: tracks rows (``person_id``, ``t``, ``bbox``) of the
    clip as it was (``reference``) and of the pan. Each pan box is put back where it lies in the clip (its
    window's place at that frame) and matched to the reference box of that instant it overlaps most (IoU >=
    MATCH_IOU). Returns ``split`` (reference id -> the pan ids its boxes carry, where more than one) and
    ``merged`` (pan id -> the reference ids its boxes were matched to, where more than one)."""
    top = (1.0 - fraction) / 2
    by_t: dict[float, list[dict]] = {}
    for r in reference:
        by_t.setdefault(round(r["t"], 3), []).append(r)
    votes: dict[int, Counter] = {}
    for r in pan:
        left = lefts[min(int(round(r["t"] * fps)), len(lefts) - 1)]
        b = np.asarray(r["bbox"], float)
        placed = np.array([left, top, left, top]) + b * fraction
        candidates = by_t.get(round(r["t"], 3), [])
        overlaps = [(_iou(placed, np.asarray(c["bbox"], float)), c["person_id"]) for c in candidates]
        best = max(overlaps, default=(0.0, None))
        if best[0] >= MATCH_IOU:
            votes.setdefault(r["person_id"], Counter())[best[1]] += 1
    pan_ids_of: dict[int, set[int]] = {}
    for pan_id, counter in votes.items():
        for ref_id in counter:
            pan_ids_of.setdefault(ref_id, set()).add(pan_id)
    return {"split": {k: sorted(v) for k, v in pan_ids_of.items() if len(v) > 1},
            "merged": {k: dict(v) for k, v in votes.items() if len(v) > 1}}


def cropped(frames: list[np.ndarray], box: tuple[float, float, float, float], size: tuple[int, int]) -> list[np.ndarray]:
    """A fixed crop of each frame, ``box`` normalised (x1, y1, x2, y2), scaled to ``size`` (w, h): a
    close-up made from a wider shot."""
    height, width = frames[0].shape[:2]
    x1, y1, x2, y2 = (int(round(v)) for v in np.array(box) * [width, height, width, height])
    return [cv2.resize(f[y1:y2, x1:x2], size, interpolation=cv2.INTER_CUBIC) for f in frames]


def ultralytics_still(name: str) -> np.ndarray:
    """One of the two photos in ultralytics' wheel (``zidane``, ``bus``) as a BGR image: footage nobody tuned on."""
    import ultralytics

    return cv2.imread(str(Path(ultralytics.__file__).parent / "assets" / f"{name}.jpg"))


def letterboxed(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` scaled to the height of ``size`` (w, h) and centred on a black frame of that size."""
    width = int(round(image.shape[1] * size[1] / image.shape[0]))
    frame = np.zeros((size[1], size[0], 3), np.uint8)
    left = (size[0] - width) // 2
    frame[:, left:left + width] = cv2.resize(image, (width, size[1]), interpolation=cv2.INTER_AREA)
    return frame


def write_edit(path: Path, pieces: list[list[np.ndarray]], fps: float) -> list[float]:
    """Write the pieces one after another (BGR frames of one size); returns each piece's start time. One
    encoder thread: the same edit, byte for byte, on every run."""
    height, width = pieces[0][0].shape[:2]
    starts, n = [], 0
    with H264Writer(path, width, height, fps, threads=1) as writer:
        for piece in pieces:
            starts.append(n / fps)
            for image in piece:
                writer.write(image)
                n += 1
    return starts


MATCH_IOU = 0.3  # a replay box is this person's when it overlaps their interpolated box this much
MATCH_REACH_S = 0.25  # half a 2 fps sampling step: how far past a person's first/last sighting to look


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def _box_at(sightings: list[tuple[float, np.ndarray]], t: float) -> np.ndarray | None:
    """A person's box at clip time ``t``, linearly between their sightings (the nearest one within
    MATCH_REACH_S beyond either end); None when they were not around then."""
    times = np.array([s[0] for s in sightings])
    if t < times[0] - MATCH_REACH_S - 1e-6 or t > times[-1] + MATCH_REACH_S + 1e-6:
        return None
    k = int(np.searchsorted(times, t))
    if k == 0 or k == len(times):
        return sightings[min(k, len(times) - 1)][1]
    (t0, b0), (t1, b1) = sightings[k - 1], sightings[k]
    if t1 - t0 > 1.0 + 1e-6:  # not seen in between: not interpolated across a long absence
        return b0 if t - t0 <= MATCH_REACH_S else (b1 if t1 - t <= MATCH_REACH_S else None)
    w = (t - t0) / (t1 - t0)
    return (1 - w) * b0 + w * b1


def pieces_of(rows: list[dict], starts: list[float]) -> np.ndarray:
    """The piece of an edit (``write_edit``'s start times) each tracks row's time falls in."""
    return np.searchsorted(starts, [r["t"] + 1e-6 for r in rows], side="right") - 1


def identity_across_cutaway(rows: list[dict], starts: list[float]) -> dict:
    """Who keeps their id across a cutaway: tracks rows (``person_id``, ``t``, ``bbox``, ``shot_id``) of
    an edit whose pieces start at ``starts`` (a clip, a cutaway, the same clip again). The replay shows the
    very frames of the first piece, so who is who there is found by position, not by id: a first-piece
    person is seen in the replay when a replay box, at a sampled instant of the clip, overlaps (IoU >=
    MATCH_IOU) their box interpolated at that instant; a person counts only when seen in both pieces (at
    2 fps the replay's samples fall at other instants, and someone sampled only in the clip's last 0.5 s
    may never be sampled again). Returns lists of first-piece ids: ``first``, ``seen`` (again), ``kept``
    (the replay boxes matched to them carry, by majority, their own id), ``unseen``; pairs (person, id
    their replay boxes carry): ``wrong`` (the id of someone seen beside them in the first piece: a wrong
    join), ``split`` (of someone never seen beside them: one person the first piece split in two, or a
    wrong join; judge by eye); ids: ``cutaway``, ``replay``, ``shared`` (cutaway ids also in the first piece
    or the replay); ``shots``."""
    piece = pieces_of(rows, starts)
    first: dict[int, list[tuple[float, np.ndarray]]] = {}
    for r, p in zip(rows, piece):
        if p == 0:
            first.setdefault(r["person_id"], []).append((r["t"], np.asarray(r["bbox"], float)))
    replay_by_t: dict[float, list[dict]] = {}
    for r, p in zip(rows, piece):
        if p == 2:
            replay_by_t.setdefault(r["t"] - starts[2], []).append(r)
    people = sorted(first)
    votes: dict[int, Counter] = {pid: Counter() for pid in people}
    for t, found in replay_by_t.items():
        expected = [(pid, _box_at(first[pid], t)) for pid in people]
        expected = [(pid, b) for pid, b in expected if b is not None]
        if not expected or not found:
            continue
        cost = np.array([[1.0 - _iou(b, np.asarray(r["bbox"], float)) for r in found] for _, b in expected])
        for i, j in zip(*linear_sum_assignment(cost)):
            if cost[i, j] <= 1.0 - MATCH_IOU:
                votes[expected[i][0]][found[j]["person_id"]] += 1
    seen = [pid for pid in people if votes[pid]]
    kept = [pid for pid in seen if votes[pid].most_common(1)[0][0] == pid]
    # a replay box matched to one person but named as another person of the first piece: a wrong join when
    # the two were seen together there; else perhaps one person the first piece had split in two
    together = {(a, b) for a in people for b in people
                if a != b and {t for t, _ in first[a]} & {t for t, _ in first[b]}}
    named = {(pid, other) for pid in seen for other in votes[pid] if other != pid and other in first}
    wrong = sorted(named & together)
    split = sorted(named - together)
    ids = [{r["person_id"] for r, p in zip(rows, piece) if p == q} for q in range(3)]
    return {"first": people, "seen": seen, "kept": kept, "wrong": wrong, "split": split,
            "unseen": [pid for pid in people if pid not in seen],
            "cutaway": sorted(ids[1]), "replay": sorted(ids[2]), "shared": sorted(ids[1] & (ids[0] | ids[2])),
            "shots": sorted({r["shot_id"] for r in rows})}
