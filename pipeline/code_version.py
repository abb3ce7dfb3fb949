"""Which code made an output: a fingerprint of the source of the packages each stage runs.

A stage's tables depend on the code as much as on the settings. With the settings alone in a stage's hash
(pipeline.config.Config.stage_hashes), a rerun into an existing output folder after an upgrade kept every
table the old code had written and mixed the two versions in one corpus. With the code's fingerprint in it,
a rerun redoes each stage whose code changed (a change to the QA templates alone redoes QA only), and a
cluster whose workers run other code than the driver shows as stale on the next run.
"""
from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

# the project's packages each stage's tables depend on (perception uses events.geometry's association)
STAGE_PACKAGES = {
    "perception": ("detectors", "tracking", "events", "pipeline"),
    "events": ("detectors", "tracking", "events", "pipeline"),
    "qa": ("detectors", "tracking", "events", "pipeline", "qa_gen"),
}


def source_fingerprint(folder: str | Path) -> str:
    """16 hex digits over the relative path and bytes of every .py file under ``folder``."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=None)
def package_fingerprint(name: str) -> str:
    """The fingerprint of an importable package's source (computed once per process)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"no package {name!r} to fingerprint")
    return source_fingerprint(next(iter(spec.submodule_search_locations)))


def stage_code(stage: str) -> dict[str, str]:
    """{package: fingerprint} of the code a stage's tables depend on."""
    return {name: package_fingerprint(name) for name in STAGE_PACKAGES[stage]}
