"""Per-frame gaze-target accuracy and pointing precision/recall of a run against the shared by-eye truth.

    python benchmarks/score_gaze_pointing.py OUT [--media DIR] [-v]

Matching follows shared/media/README.md "To score a run": each annotated row takes the sampled frame
nearest its time (within 0.3 s) and the predicted person whose head centre is nearest (within 0.12 of
the frame); predicted ids map to annotated labels by majority. Gaze is compared typed (person:X,
hands:X, object, camera, elsewhere) on rows with a definite annotation; ``unknown`` counts as not right.
Pointing is scored per sampled frame against the annotated pointing intervals (anyone pointing in a
frame of a clip where nobody points is a false positive), and pointing events against the intervals.
"""
from __future__ import annotations

import argparse
import csv
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds

from tests.shared_media import find_media_dir

MAX_DT_S = 0.3
MAX_HEAD_DISTANCE = 0.12


def _read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _tracks(out: Path, video_id: str):
    path = out / "tracks" / f"video_id={video_id}"
    if not path.exists():
        return None
    return ds.dataset(path, format="parquet").to_table().to_pylist()


def _events(out: Path, video_id: str) -> list[dict]:
    path = out / "events" / f"video_id={video_id}"
    return ds.dataset(path, format="parquet").to_table().to_pylist() if path.exists() else []


def _head_centre(row: dict):
    box = row["head_bbox"]
    if box is None or not np.all(np.isfinite(box)):
        return None
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])


def match_rows(truth_rows: list[dict], tracks: list[dict]):
    """[(truth row, predicted row or None)] and the predicted-id -> label map (majority)."""
    times = np.array(sorted({r["t"] for r in tracks}))
    by_t = defaultdict(list)
    for r in tracks:
        by_t[r["t"]].append(r)
    pairs, votes = [], defaultdict(Counter)
    for row in truth_rows:
        t = float(row["t"])  # both are pts seconds (truth/NOTES.md)
        best = None
        if len(times):
            k = int(np.argmin(np.abs(times - t)))
            if abs(times[k] - t) <= MAX_DT_S:
                head = np.array([float(row["head_x"]), float(row["head_y"])])
                dists = [(np.linalg.norm(c - head), p) for p in by_t[times[k]] if (c := _head_centre(p)) is not None]
                if dists:
                    d, p = min(dists, key=lambda x: x[0])
                    if d <= MAX_HEAD_DISTANCE:
                        best = p
                        votes[p["person_id"]][row["person"]] += 1
        pairs.append((row, best))
    labels = {pid: c.most_common(1)[0][0] for pid, c in votes.items()}
    return pairs, labels


def predicted_label(pred: dict, labels: dict[int, str]) -> str:
    kind = pred["gaze_target_type"]
    if kind in ("person", "hands"):
        return f"{kind}:{labels.get(pred['gaze_target_id'], '?')}"
    if kind == "object":
        return "object"
    return kind


def truth_label(gaze: str) -> str:
    return "object" if gaze.startswith("object:") else gaze


def score(out: Path, media: Path, verbose: bool = False) -> dict:
    truth_dir = media / "truth"
    truth = _read_csv(truth_dir / "truth.csv")
    intervals = _read_csv(truth_dir / "intervals.csv")
    clips = sorted({r["clip"] for r in truth})
    totals = Counter()
    report = {}
    for clip in clips:
        video_id = Path(clip).stem
        tracks = _tracks(out, video_id)
        if tracks is None:
            continue
        rows = [r for r in truth if r["clip"] == clip]
        pairs, labels = match_rows(rows, tracks)
        right = definite = named = named_right = 0
        confusion = Counter()
        for row, pred in pairs:
            if row["gaze"] == "unsure":
                continue
            definite += 1
            got = "unmatched" if pred is None or labels.get(pred["person_id"]) != row["person"] else predicted_label(pred, labels)
            ok = got == truth_label(row["gaze"])
            right += ok
            if got not in ("unknown", "elsewhere", "unmatched"):  # the run named a target
                named += 1
                named_right += ok
            confusion[(row["gaze"], got)] += 1
            if verbose and not ok:
                print(f"  {video_id} t={row['t']} {row['person']}: truth {row['gaze']}, predicted {got}")
        # pointing, per sampled frame: anyone pointing vs inside an annotated pointing interval
        spans = [(float(i["start"]), float(i["end"])) for i in intervals if i["clip"] == clip and i["kind"] == "pointing"]
        frame_t = sorted({r["t"] for r in tracks})
        pointing_at = defaultdict(bool)
        for r in tracks:
            pointing_at[r["t"]] |= bool(r["pointing"])
        tp = fp = fn = 0
        for t in frame_t:
            truth_pointing = any(s <= t <= e for s, e in spans)
            pred = pointing_at[t]
            tp += pred and truth_pointing
            fp += pred and not truth_pointing
            fn += truth_pointing and not pred
        events = [e for e in _events(out, video_id) if e["event_type"] == "pointing"]
        covered = sum(
            any(e["start_time"] <= e_ and e["end_time"] >= s for e in events) for s, e_ in spans
        )
        report[video_id] = {
            "gaze_right": right, "gaze_definite": definite, "gaze_named": named, "gaze_named_right": named_right,
            "labels": labels,
            "point_tp": tp, "point_fp": fp, "point_fn": fn,
            "pointing_events": len(events), "intervals_covered": f"{covered}/{len(spans)}",
            "confusion": confusion,
        }
        totals.update({"right": right, "definite": definite, "named": named, "named_right": named_right,
                       "tp": tp, "fp": fp, "fn": fn})
    report["_total"] = dict(totals)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--media", type=Path, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    media = args.media or find_media_dir()
    report = score(args.out, media, args.verbose)
    print(f"{'clip':28s} {'gaze':>9s} {'acc':>5s} {'named ok':>9s}  point tp/fp/fn  P     R     events  intervals")
    for clip, r in report.items():
        if clip == "_total":
            continue
        acc = r["gaze_right"] / r["gaze_definite"] if r["gaze_definite"] else float("nan")
        tp, fp, fn = r["point_tp"], r["point_fp"], r["point_fn"]
        p = tp / (tp + fp) if tp + fp else float("nan")
        rc = tp / (tp + fn) if tp + fn else float("nan")
        print(f"{clip:28s} {r['gaze_right']:>4d}/{r['gaze_definite']:<4d} {acc:5.2f} {r['gaze_named_right']:>4d}/{r['gaze_named']:<4d}  {tp:3d}/{fp:3d}/{fn:3d}   "
              f"{p:5.2f} {rc:5.2f} {r['pointing_events']:6d}  {r['intervals_covered']}")
    t = report["_total"]
    print(f"overall gaze {t.get('right', 0)}/{t.get('definite', 0)} = {t.get('right', 0) / max(t.get('definite', 1), 1):.3f} "
          f"(named targets right {t.get('named_right', 0)}/{t.get('named', 0)}); "
          f"pointing frames tp {t.get('tp', 0)} fp {t.get('fp', 0)} fn {t.get('fn', 0)}")


if __name__ == "__main__":
    main()
