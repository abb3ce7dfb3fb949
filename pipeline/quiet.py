"""Keep library noise off the console by default (``-v`` keeps it).

MediaPipe's TensorFlow Lite prints an "INFO: Created TensorFlow Lite XNNPACK delegate" line and one
"inference_feedback_manager" warning per model from C++ straight to file descriptor 2, before absl
logging is initialised, so neither Python's logging nor GLOG_minloglevel / TF_CPP_MIN_LOG_LEVEL reach
them (the variables are still set, before mediapipe is imported, for the libraries that do read them).
``quiet_native_stderr`` therefore puts a filter on descriptor 2 that drops those known lines and passes
everything else through; Python's own stderr (logging, rich, tracebacks) bypasses the filter. protobuf's
"SymbolDatabase.GetPrototype() is deprecated" warning, raised through mediapipe 0.10.14, is ignored.
"""
from __future__ import annotations

import atexit
import io
import os
import re
import sys
import threading
import warnings

# Read by glog/absl/TensorFlow when they initialise: set before mediapipe is imported.
QUIET_ENVIRONMENT = {"GLOG_minloglevel": "2", "TF_CPP_MIN_LOG_LEVEL": "2"}
NOISE_LINES = re.compile(
    rb"inference_feedback_manager\.cc|^INFO: Created TensorFlow Lite|"
    rb"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
)

_installed = False


def quiet_python_warnings() -> None:
    warnings.filterwarnings("ignore", message=r"SymbolDatabase\.GetPrototype\(\) is deprecated",
                            category=UserWarning)


def quiet_libraries() -> None:
    """Everything but the descriptor filter: environment variables and Python warnings (for Ray workers,
    whose stderr goes to Ray's log files anyway)."""
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    quiet_python_warnings()


def quiet_native_stderr() -> None:
    """Filter known noise out of what native code writes to descriptor 2, for the rest of the process."""
    global _installed
    quiet_libraries()
    if _installed:
        return
    try:
        original = os.dup(2)
    except OSError:  # no stderr at all: nothing to filter
        return
    read_end, write_end = os.pipe()
    sys.stderr.flush()
    # Python's stderr writes to the original descriptor: rich's live progress display must not wait for
    # a newline in the filter
    sys.stderr = io.TextIOWrapper(io.FileIO(os.dup(original), "w"), write_through=True,
                                  encoding=sys.stderr.encoding, errors="backslashreplace")
    os.dup2(write_end, 2)
    os.close(write_end)
    thread = threading.Thread(target=_forward, args=(read_end, original), name="stderr-filter", daemon=True)
    thread.start()
    _installed = True

    def restore() -> None:  # at exit: flush what the filter still holds
        os.dup2(original, 2)
        thread.join(timeout=1.0)

    atexit.register(restore)


def _forward(read_end: int, original: int) -> None:
    pending = b""
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        kept = b"".join(line + b"\n" for line in lines if not NOISE_LINES.search(line))
        if kept:
            os.write(original, kept)
    if pending and not NOISE_LINES.search(pending):
        os.write(original, pending)
