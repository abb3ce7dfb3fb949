"""Where the real test clips live: ../shared/media beside the checkout, or $SOCIALTRACE_MEDIA.
Used by the tests (conftest's ``media_dir`` fixture) and by the benchmarks."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# the video clips of shared/media (its README describes them)
SHARED_CLIPS = ("atd_kitchen.mp4", "tvhid_highfive_0018.avi", "tvhid_highfive_0005.avi", "tvhid_handshake_0001.avi")


def find_media_dir() -> Path:
    """../shared/media beside the checkout, or $SOCIALTRACE_MEDIA."""
    env = os.environ.get("SOCIALTRACE_MEDIA")
    candidates = [Path(env)] if env else []
    candidates += [REPO_ROOT.parent / "shared" / "media", REPO_ROOT.parent.parent / "shared" / "media"]
    for path in candidates:
        if (path / "atd_kitchen.mp4").is_file():
            return path
    raise FileNotFoundError(
        "test media not found: set SOCIALTRACE_MEDIA or place shared/media beside the checkout "
        f"(looked in {[str(c) for c in candidates]})"
    )


def run_socialtrace(inputs: list[str], out, *options: str, timeout: float = 900) -> None:
    """``socialtrace run INPUTS -o OUT --executor local OPTIONS`` as a user runs it (the console script
    beside this Python); raises AssertionError with the tail of its output when it fails."""
    import shutil
    import subprocess
    import sys

    exe = shutil.which("socialtrace") or str(Path(sys.executable).with_name("socialtrace"))
    done = subprocess.run([exe, "run", *inputs, "-o", str(out), "--executor", "local", *options],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
