"""pipeline.table_diff: equal tables give no differences, and each kind of difference is named."""
from __future__ import annotations

import math

import pyarrow as pa

from pipeline.table_diff import same_values, table_differences


def _table(values, boxes):
    return pa.table({"t": pa.array(values, pa.float64()), "box": pa.array(boxes, pa.list_(pa.float32()))})


def test_nan_equals_nan_and_tolerance_is_relative():
    assert same_values([1.0, math.nan, {"a": [math.nan]}], [1.0, math.nan, {"a": [math.nan]}])
    assert not same_values(math.nan, 0.0) and not same_values(0.0, math.nan)
    assert not same_values(1.0, 1.0 + 1e-9) and same_values(1.0, 1.0 + 1e-9, rel_tol=1e-6)
    assert not same_values(100.0, 101.0, rel_tol=1e-3)


def test_equal_tables_have_no_differences():
    a = _table([0.0, 0.5], [[math.nan] * 4, [0.1, 0.2, 0.3, 0.4]])
    assert table_differences(a, _table([0.0, 0.5], [[math.nan] * 4, [0.1, 0.2, 0.3, 0.4]])) == []


def test_differences_name_column_row_and_values():
    a = _table([0.0, 0.5, 1.0], [None, [0.1, 0.2, 0.3, 0.4], None])
    b = _table([0.0, 0.75, 1.0], [None, [0.1, 0.2, 0.3, 0.4], None])
    assert table_differences(a, b) == ["t row 1: 0.5 != expected 0.75"]
    assert table_differences(a.slice(0, 2), b) == ["2 rows, expected 3"]
    assert "missing columns ['box']" in table_differences(a.select(["t"]), b)[0]


def test_many_differences_are_summarised():
    a, b = _table([float(i) for i in range(10)], [None] * 10), _table([i + 0.5 for i in range(10)], [None] * 10)
    found = table_differences(a, b, limit=3)
    assert len(found) == 4 and found[-1] == "t: 7 more rows differ"
