"""Compare two socialtrace output folders table by table: the check that a change meant to alter no result
(a refactor, a speed-up) did not.

    python -m benchmarks.compare_outputs OUT_BEFORE OUT_AFTER [--rel-tol 1e-6]

Prints one line per (table, video) and what differs; exits 1 when anything does.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.table_diff import table_differences

SORT_KEYS = {"tracks": ["frame_idx", "person_id"], "events": ["event_id"], "qa": ["qa_id"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path, help="output folder of the reference run")
    parser.add_argument("after", type=Path, help="output folder of the run to check")
    parser.add_argument("--rel-tol", type=float, default=0.0, help="relative tolerance for floats (default exact)")
    args = parser.parse_args(argv)
    differing = 0
    for table, keys in SORT_KEYS.items():
        videos = sorted({p.parent.name for root in (args.before, args.after) for p in (root / table).glob("video_id=*/*.parquet")})
        for video in videos:
            paths = [root / table / video / "part-0.parquet" for root in (args.before, args.after)]
            if not all(p.is_file() for p in paths):
                print(f"{table:7s} {video}: only in {'before' if paths[0].is_file() else 'after'}")
                differing += 1
                continue
            before, after = (pq.read_table(p).sort_by([(k, "ascending") for k in keys]) for p in paths)
            differences = table_differences(after, before, rel_tol=args.rel_tol)
            print(f"{table:7s} {video}: {before.num_rows} rows, " + ("equal" if not differences else "; ".join(differences)))
            differing += bool(differences)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
