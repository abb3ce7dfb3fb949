"""Ctrl-C and a scheduler's SIGTERM end a run the same way: as an exception in the main thread, so the
run's bookkeeping (run.json "interrupted", the closing line) happens before the process exits.

Without this, SIGTERM killed the process where it stood (run.json stayed "running") and Ctrl-C left
only a silent exit 130. A second signal during that bookkeeping is not raised again, so the record is
written whole; the shell convention for the exit status is 128 + the signal's number (130, 143).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run was asked to stop. A BaseException like KeyboardInterrupt, so the per-clip ``except
    Exception`` that turns a bad clip into a failed row never swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def as_interrupt(exc: BaseException | None) -> Interrupted | None:
    """The Interrupted that ``exc`` stands for: ours, Ctrl-C's KeyboardInterrupt, or the SystemExit(15)
    Ray's driver raises from the SIGTERM handler ``ray.init`` installs over ours, also where Python wrapped it
    in another exception on the way out (a signal during a lazy import: an exception in a class's
    ``__set_name__`` becomes a RuntimeError from it). None for anything else."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, Interrupted):
            return exc
        if isinstance(exc, KeyboardInterrupt):
            return Interrupted(signal.SIGINT)
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
            return Interrupted(signal.SIGTERM)
        exc = exc.__cause__ or exc.__context__
    return None


@contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise ``Interrupted`` (main thread only: Python delivers
    signals there); the first one only, later ones are ignored until the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in HANDLED}

    def raise_once(signum, frame):
        for handled in HANDLED:
            signal.signal(handled, signal.SIG_IGN)
        raise Interrupted(signum)

    for signum in HANDLED:
        signal.signal(signum, raise_once)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
