"""Invariance to camera edits (DESIGN.md §10, issue 22): run the shared truth clips and their mirrored,
half-resolution, zoomed, barred and blurred-fill copies at default settings and print how much of the output
comes back.

    python -m benchmarks.bench_invariance [--clips A.mp4,B.avi] [--edits mirror,fill] [--out DIR] [--media DIR]
                                          [--config FILE] [--disagreements]

Builds the edits (tests/camera_edits.py) into DIR/edits, runs ``socialtrace run`` once (local executor) over
the originals and the edits into DIR/out (reused when it already holds them), and prints per clip and edit
("reencode" too: the clip decoded and encoded again by the same lossless path, nothing else changed, whose
figures are the floor of noise every edit carries; "zoom": the centre 80 % of the frame enlarged to the full size,
scored on the people and events it keeps in view, tests/camera_edits.ZOOM_WINDOW; "bars": black bars on all four
sides; "fill": the picture in a frame 1.6 times as wide whose sides are its own blurred enlargement):
(frame, person) rows agreeing on the gaze target (pipeline/camera_invariance.py), the disagreeing rows by kind
(contra: both runs name different definite targets; abst: one says unknown; the rest are people seen on one side
only), people matched, original events found again and events only the edit has; then the pooled figures per
edit. ``--disagreements`` lists every row that disagrees with its gaze source, confidence and the change of gaze direction.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pipeline.camera_invariance import InvarianceScore, compare_outputs, overall
from pipeline.storage import OutputStore
from pipeline.inputs import sanitise_id
from pipeline.truth import GroundTruth
from tests.camera_edits import BARS, EDITS, FILL, REENCODE, ZOOM, make_edit, shown_part
from tests.shared_media import find_media_dir, run_socialtrace

ALL_EDITS = (*EDITS, REENCODE, ZOOM, BARS, FILL)


def _fmt(x: float) -> str:
    return "  -  " if x != x else f"{x:.3f}"


def print_scores(scores: list[InvarianceScore], disagreements: bool) -> None:
    print(f"{'clip':36s} {'edit':6s} {'rows':>5s} {'agree':>6s} {'share':>6s} {'contra':>6s} {'abst':>5s} {'matched':>7s} "
          f"{'events':>6s} {'found':>5s} {'share':>6s} {'extra':>5s}")
    for s in scores:
        print(f"{s.video_id:36s} {s.edit:6s} {s.n_rows:5d} {s.n_agree:6d} {_fmt(s.agreement):>6s} "
              f"{s.n_contradictions:6d} {s.n_abstentions:5d} {s.n_matched:7d} "
              f"{s.events_original:6d} {len(s.events_found):5d} {_fmt(s.events_found_share):>6s} {len(s.events_extra):5d}")
    for edit in ALL_EDITS:
        pooled = overall([s for s in scores if s.edit == edit])
        if pooled["rows"]:
            print(f"{'all clips':36s} {edit:6s} {pooled['rows']:5d} {pooled['agree']:6d} {_fmt(pooled['agreement']):>6s} "
                  f"{pooled['contradictions']:6d} {pooled['abstentions']:5d} "
                  f"{'':7s} {pooled['events']:6d} {pooled['events_found']:5d} {_fmt(pooled['events_found_share']):>6s} "
                  f"{pooled['events_extra']:5d}")
    for edit in ALL_EDITS:
        changes = [r.direction_change_deg for s in scores if s.edit == edit for r in s.rows
                   if r.direction_change_deg is not None]
        if changes:
            print(f"{edit}: gaze direction change (edit mirrored back) median {statistics.median(changes):.1f} deg, "
                  f"max {max(changes):.1f} deg over {len(changes)} matched rows")
    if not disagreements:
        return
    for s in scores:
        for r in s.disagreements():
            a, b = r.original or {}, r.edited or {}
            print(f"  {s.video_id} {s.edit} frame {r.frame_idx} t={r.t:.2f} person {r.original_id}->{r.edited_id}: "
                  f"{r.why} ({r.kind}); source {a.get('gaze_source')}->{b.get('gaze_source')}, conf "
                  f"{_num(a.get('gaze_conf'))}->{_num(b.get('gaze_conf'))}, dir change "
                  f"{'-' if r.direction_change_deg is None else f'{r.direction_change_deg:.0f} deg'}")
        for e in s.events_missed:
            print(f"  {s.video_id} {s.edit} event missed: {e.event_type} persons {e.persons} {e.start:.2f}-{e.end:.2f}")
        for e in s.events_extra:
            print(f"  {s.video_id} {s.edit} event only in the edit: {e.event_type} persons {e.persons} {e.start:.2f}-{e.end:.2f}")


def _num(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", help="comma-separated clip files of the media folder (default: every annotated clip)")
    parser.add_argument("--out", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--media", type=Path, help="shared media folder (default: ../shared/media)")
    parser.add_argument("--config", help="YAML/JSON config overrides passed to socialtrace run")
    parser.add_argument("--edits",
                        help=f"comma-separated edits to build and score (default: all of {', '.join(ALL_EDITS)})")
    parser.add_argument("--disagreements", action="store_true", help="list every disagreeing row and event")
    args = parser.parse_args(argv)
    media = args.media or find_media_dir()
    clips = args.clips.split(",") if args.clips else sorted(c.clip for c in GroundTruth.load(media / "truth").clips.values())
    work = args.out or Path(tempfile.mkdtemp(prefix="bench_invariance_"))
    out = work / "out"
    edited = {(clip, edit): work / "edits" / f"{Path(clip).stem}_{edit}.mp4" for clip in clips
              for edit in (args.edits.split(",") if args.edits else ALL_EDITS)}
    for (clip, edit), path in edited.items():
        if not path.is_file():
            make_edit(edit, media / clip, work / "edits")
    if not (out / "manifest.parquet").is_file():
        started = time.perf_counter()
        run_socialtrace([str(media / c) for c in clips] + [str(p) for p in edited.values()], out,
                        *(["--config", args.config] if args.config else []))
        print(f"socialtrace run over {len(clips)} clips and {len(edited)} edits: {time.perf_counter() - started:.1f} s wall")
    store = OutputStore(str(out))
    scores = [compare_outputs(store, sanitise_id(Path(clip).stem), store, sanitise_id(path.stem), edit,
                              window=shown_part(edit))
              for (clip, edit), path in edited.items()]
    print_scores(scores, args.disagreements)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
