"""The events kernels compile once per machine: Numba's on-disk cache (``@njit(cache=True)``) is written by
the first process and read, with nothing recompiled, by the next (issue 24: the first clip of a run paid
8.4 s of compilation)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# the events stage of two scenarios that between them reach every event type (tests/test_events_scenarios.py)
_EVENTS_SNIPPET = """
from events import detect_events
from pipeline.config import EventConfig
from tests.test_events_scenarios import conversation, objects_and_arms
for scenario in (objects_and_arms(), conversation()):
    detect_events(scenario.tracks(10.0), EventConfig(), scenario.objects(10.0))
"""


def _cache_lines(cache_dir: Path) -> list[str]:
    """Numba's cache messages (NUMBA_DEBUG_CACHE) of one fresh process running the events stage."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "NUMBA_DEBUG_CACHE": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", _EVENTS_SNIPPET], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("[cache]")]


@pytest.mark.slow
def test_a_second_process_recompiles_nothing(tmp_path):
    first = _cache_lines(tmp_path / "numba")
    saved = [line for line in first if "data saved" in line]
    assert len(saved) >= 5, first  # the first process compiled the kernels and stored them
    second = _cache_lines(tmp_path / "numba")
    assert not [line for line in second if "data saved" in line], second  # nothing compiled again
    assert len([line for line in second if "data loaded" in line]) >= 5
