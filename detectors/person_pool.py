"""Per-person work on threads, one MediaPipe model set per thread.

MediaPipe graphs release the GIL while they run but are not thread-safe, so each thread owns one model
set and handles every ``threads``-th person; results do not depend on which set ran them."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable

from detectors.mediapipe_models import MediaPipeModels


class PersonPool:
    """``threads`` MediaPipe model sets (the first may be given) and the threads that use them."""

    def __init__(self, threads: int, make_models: Callable[[], MediaPipeModels], first: MediaPipeModels | None = None):
        threads = max(1, int(threads))
        self.model_sets = [first or make_models()] + [make_models() for _ in range(threads - 1)]
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="socialtrace-person") if threads > 1 else None

    def map(self, work: Callable[[Any, int], Any], items: Iterable[Any]) -> list[Any]:
        """``work(item, slot)`` for every item, in order; items are dealt to the model sets (``slot``)
        and the sets run in parallel threads, each set in one thread only."""
        items = list(items)
        slots = min(len(self.model_sets), len(items))
        if self.executor is None or slots <= 1:
            return [work(item, 0) for item in items]
        results: list[Any] = [None] * len(items)

        def run_slot(slot: int) -> None:
            for k in range(slot, len(items), slots):
                results[k] = work(items[k], slot)

        list(self.executor.map(run_slot, range(slots)))  # list(): re-raises a worker's exception here
        return results

    def close(self) -> None:
        """Stop the threads and close every model set (MediaPipe graphs must be closed: see
        detectors.mediapipe_models)."""
        if self.executor is not None:
            self.executor.shutdown(wait=True)
            self.executor = None
        for models in self.model_sets:
            models.close()
