"""The background decoder: same items in the same order, errors at the right place, clean stop."""
from __future__ import annotations

import threading
import time
from contextlib import closing

import pytest

from pipeline.prefetch import Prefetcher


def test_items_arrive_in_order_and_the_producer_runs_ahead():
    produced: list[int] = []

    def numbers():
        for i in range(50):
            produced.append(i)
            yield i

    with closing(Prefetcher(numbers, depth=4)) as items:
        first = next(items)
        time.sleep(0.2)
        # the producer filled the queue (depth 4) plus the one it holds while waiting
        assert first == 0 and 4 <= len(produced) <= 6
        assert [first, *items] == list(range(50))


def test_an_error_is_raised_where_it_happened():
    def failing():
        yield 1
        yield 2
        raise ValueError("clip.mp4: truncated")

    items = Prefetcher(failing, depth=8)
    assert next(items) == 1 and next(items) == 2
    with pytest.raises(ValueError, match="clip.mp4: truncated"):
        next(items)
    with pytest.raises(StopIteration):
        next(items)
    items.close()


def test_close_stops_a_blocked_producer_and_closes_its_generator():
    closed = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    items = Prefetcher(endless, depth=2)
    assert next(items) == 0
    items.close()
    assert closed.wait(2.0)
    assert not items._thread.is_alive()
    with pytest.raises(StopIteration):
        next(items)
