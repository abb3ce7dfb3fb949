"""What differs between two versions of an output table, in words a person can act on.

Used to check that a change which should not alter results (a refactor, a speed-up, another executor)
did not: the tests compare executors and reruns with it, and ``benchmarks/compare_outputs.py`` compares
two whole output folders. NaN equals NaN (missing boxes are NaN-filled), and floats may be given a
relative tolerance.
"""
from __future__ import annotations

import math
from typing import Any

import pyarrow as pa


def same_values(a: Any, b: Any, rel_tol: float = 0.0) -> bool:
    """Equality of nested Python values where NaN equals NaN and floats agree within ``rel_tol``."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=rel_tol, abs_tol=rel_tol * 1e-3)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_values(x, y, rel_tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k], rel_tol) for k in a)
    return a == b


def table_differences(actual: pa.Table, expected: pa.Table, rel_tol: float = 0.0, limit: int = 5) -> list[str]:
    """Human-readable differences between two tables whose rows are in the same order: schema, row
    count, then per column the first ``limit`` rows that differ with both values. Empty when equal."""
    if actual.schema != expected.schema:
        missing = sorted(set(expected.column_names) - set(actual.column_names))
        extra = sorted(set(actual.column_names) - set(expected.column_names))
        return [f"schema differs (missing columns {missing}, extra columns {extra})"
                if missing or extra else f"schema differs: {actual.schema} vs {expected.schema}"]
    if actual.num_rows != expected.num_rows:
        return [f"{actual.num_rows} rows, expected {expected.num_rows}"]
    found = []
    for column in expected.column_names:
        got, want = actual.column(column).to_pylist(), expected.column(column).to_pylist()
        rows = [i for i, (g, w) in enumerate(zip(got, want)) if not same_values(g, w, rel_tol)]
        found += [f"{column} row {i}: {got[i]!r} != expected {want[i]!r}" for i in rows[:limit]]
        if len(rows) > limit:
            found.append(f"{column}: {len(rows) - limit} more rows differ")
    return found
