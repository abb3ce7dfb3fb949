"""How much CPU time the hypervisor gave to other machines while a benchmark ran.

On a shared VM a neighbour can take a third of the cores' time ("steal" in /proc/stat), which slows
every figure of a run alike; the benchmarks print this share so a slow run can be told from a slow
change. Linux only; elsewhere the share is reported as unknown.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

_STAT = Path("/proc/stat")


def cpu_times() -> Optional[list[int]]:
    """The aggregate "cpu" line of /proc/stat (user, nice, system, idle, iowait, irq, softirq, steal, ...)."""
    try:
        fields = _STAT.read_text().splitlines()[0].split()
    except OSError:
        return None
    return [int(v) for v in fields[1:9]] if fields and fields[0] == "cpu" and len(fields) >= 9 else None


def steal_share(before: Optional[list[int]], after: Optional[list[int]]) -> Optional[float]:
    """Stolen ticks / all ticks between two ``cpu_times()`` readings; None when unknown."""
    if before is None or after is None:
        return None
    delta = [b - a for a, b in zip(before, after)]
    total = sum(delta)
    return delta[7] / total if total > 0 else None


def describe(share: Optional[float]) -> str:
    return "cpu_steal_share=unknown" if share is None else f"cpu_steal_share={share:.3f}"
