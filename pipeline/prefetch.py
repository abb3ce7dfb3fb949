"""Run an iterator in a background thread a few items ahead, so video decoding overlaps detection.

PyAV decodes and OpenCV resizes with the GIL released, and MediaPipe / PyTorch run their graphs in native
code, so on a multi-core machine the two overlap for real. Errors raised by the producer (a truncated
file, say) reach the consumer at the item where they happened; closing stops the producer.
"""
from __future__ import annotations

import queue
import threading
from contextlib import closing, nullcontext
from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")
_POLL_SECONDS = 0.1


class _Done:
    pass


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


class Prefetcher(Generic[T]):
    """``for item in Prefetcher(lambda: make_items(), depth=8)``; use ``closing()`` or ``close()``."""

    def __init__(self, make_iterator: Callable[[], Iterator[T]], depth: int):
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._finished = False
        # the iterator is created in the thread that consumes it: generators are not thread-safe
        self._thread = threading.Thread(target=self._produce, args=(make_iterator,), daemon=True,
                                        name="socialtrace-prefetch")
        self._thread.start()

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, make_iterator: Callable[[], Iterator[T]]) -> None:
        try:
            iterator = make_iterator()
            with closing(iterator) if hasattr(iterator, "close") else nullcontext():
                for item in iterator:
                    if not self._put(item):
                        return
            self._put(_Done())
        except BaseException as error:  # handed to the consumer, raised there
            self._put(_Failed(error))

    def __iter__(self) -> "Prefetcher[T]":
        return self

    def __next__(self) -> T:
        if self._finished:
            raise StopIteration
        item = self._queue.get()
        if isinstance(item, _Done):
            self._finished = True
            raise StopIteration
        if isinstance(item, _Failed):
            self._finished = True
            raise item.error
        return item

    def close(self) -> None:
        """Stop the producer and wait for it (it checks every 0.1 s while the queue is full)."""
        self._stop.set()
        self._finished = True
        while True:  # unblock a producer waiting on a full queue
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._thread.join()

