"""Where an Ultralytics model runs: PyTorch, or an OpenVINO / ONNX Runtime export of the same weights.

The export is made locally, once, on first use (Ultralytics' exporter, offline) into a cache folder keyed
by the weights' hash, so a changed weights file never reuses a stale export. Concurrent processes are
safe: each exports into its own temporary folder inside the cache and renames the result into place; the
first rename wins and the others use it. When the export is impossible (runtime not installed, exporter
error, read-only cache) the PyTorch model runs and the log says so.

Exports have dynamic input shapes: one file serves the 640 px pass, the larger small-people pass and the
zoomed crops, at any batch size.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import logging
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("socialtrace")

# openvino-bf16: the same export computed in bfloat16 where the CPU has the units (OpenVINO's own default
# there): about 1.8x faster than float32 on AMD EPYC, not bit-equal to PyTorch (benchmarks/README.md)
RUNTIMES = ("auto", "openvino", "openvino-bf16", "onnx", "torch")
DEVICES = ("auto", "cpu", "cuda")
# fastest first on CPU (benchmarks/README.md, "Compiled CPU runtime"): what ``auto`` tries in turn
CPU_PREFERENCE = ("openvino", "onnx", "torch")
# the Python module each runtime needs at inference time
_RUNTIME_MODULE = {"openvino": "openvino", "onnx": "onnxruntime"}


@dataclass(frozen=True)
class LoadedModel:
    """An Ultralytics model ready to predict, the runtime it runs on and the torch device string."""

    model: object
    runtime: str  # openvino | onnx | torch
    device: str  # "cpu" or "cuda:0"
    path: str  # the file or folder loaded


def cache_dir() -> Path:
    """$SOCIALTRACE_CACHE, else $XDG_CACHE_HOME/socialtrace, else ~/.cache/socialtrace."""
    explicit = os.environ.get("SOCIALTRACE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "socialtrace"


def weights_hash(path: str | Path) -> str:
    """First 16 hex digits of the file's SHA-256."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(requested: str) -> str:
    """The torch device for ``requested`` (auto | cpu | cuda, or an explicit torch device such as
    cuda:1; "" = auto): auto picks CUDA when present. A ValueError when CUDA is asked for and absent."""
    requested = (requested or "auto").strip().lower()
    if requested == "auto":
        return "cuda:0" if cuda_available() else "cpu"
    if requested.startswith("cuda"):
        if not cuda_available():
            raise ValueError(f"--device {requested}: CUDA is not available on this machine (torch sees no GPU)")
        return "cuda:0" if requested == "cuda" else requested
    if requested == "cpu":
        return "cpu"
    raise ValueError(f"device {requested!r}: expected one of {', '.join(DEVICES)}")


def runtime_installed(runtime: str) -> bool:
    module = _RUNTIME_MODULE.get(runtime)
    return module is None or importlib.util.find_spec(module) is not None


def export_path(weights: Path, runtime: str, root: Path | None = None) -> Path:
    """Where the export of ``weights`` for ``runtime`` lives in the cache (it may not exist yet)."""
    root = root or cache_dir()
    stem = f"{weights.stem}-{weights_hash(weights)}"
    if runtime == "openvino":
        return root / "exports" / f"{stem}_openvino_model"  # Ultralytics knows the format by this suffix
    if runtime == "onnx":
        return root / "exports" / f"{stem}.onnx"
    raise ValueError(f"runtime {runtime!r} has no export")


def exported_model(weights: str | Path, runtime: str, root: Path | None = None) -> Path:
    """The cached export of ``weights`` (a .pt file) for ``runtime`` (openvino | onnx), made now when absent.
    Raises when the export cannot be made."""
    weights = Path(weights)
    target = export_path(weights, runtime, root)
    if target.exists():
        return target
    if not runtime_installed(runtime):
        raise RuntimeError(f"{_RUNTIME_MODULE[runtime]} is not installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    from detectors import use_ultralytics_offline

    use_ultralytics_offline()
    from ultralytics import YOLO

    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        copy = scratch / weights.name  # the exporter writes next to the weights it reads
        shutil.copyfile(weights, copy)
        kwargs = {"format": runtime, "dynamic": True, "imgsz": 640, "verbose": False}  # float32: no quantize
        if runtime == "onnx":
            kwargs["simplify"] = importlib.util.find_spec("onnxslim") is not None
        log.info("exporting %s to %s, once (cached in %s)", weights.name, runtime, target.parent)
        # the exporter's "Predict: yolo predict ..." usage lines, and torch's tracing deprecation warnings
        with _quiet_ultralytics(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            made = Path(YOLO(str(copy), task="pose").export(**kwargs))
        try:
            os.rename(made, target)  # atomic; a folder already there (another process won) makes it fail
        except OSError:
            if not target.exists():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


@contextlib.contextmanager
def _quiet_ultralytics():
    """Ultralytics' info lines (export usage hints, "Loading ... for OpenVINO inference") kept off stdout;
    this module logs which runtime ran instead."""
    logger = logging.getLogger("ultralytics")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logger.setLevel(level)


def _openvino_precision(model, path: Path, precision: str, threads: int = 0) -> None:
    """Recompile an Ultralytics OpenVINO model with ``precision`` (f32 | bf16) inference on ``threads``
    CPU threads (0 = OpenVINO's default, every core of the machine). On CPUs with
    bfloat16 units (AMD EPYC with avx512_bf16, Intel with AMX) OpenVINO computes in bfloat16 by default:
    about twice as fast, but a box of zidane.jpg moved by 6 % of the image, so f32 is the default."""
    import numpy as np
    import openvino as ov

    model.predict(np.zeros((64, 64, 3), np.uint8), imgsz=64, device="cpu", verbose=False)  # builds the predictor
    backend = model.predictor.model.backend
    xml = path if path.is_file() else next(path.glob("*.xml"))
    settings = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": precision}
    if threads > 0:
        # OpenVINO's pool ignores OMP_NUM_THREADS: without this, each of N Ray actors on an N-core node
        # would start one inference thread per core of the node
        settings["INFERENCE_NUM_THREADS"] = int(threads)
    backend.ov_compiled_model = ov.Core().compile_model(str(xml), "CPU", settings)


def load_model(weights: str, task: str, *, runtime: str = "auto", device: str = "auto", threads: int = 0) -> LoadedModel:
    """``weights`` loaded on ``runtime`` (auto = the fastest installed CPU runtime whose export works; on a
    GPU always PyTorch) and ``device``. Only ``*.pt`` files are exported; others load as given.
    ``threads`` > 0 caps OpenVINO's inference threads (a Ray actor's share of the node's cores; PyTorch's
    pool is sized by its caller, ONNX Runtime keeps its default)."""
    from detectors.yolo_backend import load_ultralytics

    if runtime not in RUNTIMES:
        raise ValueError(f"runtime {runtime!r}: expected one of {', '.join(RUNTIMES)}")
    torch_device = resolve_device(device)
    exportable = str(weights).endswith(".pt") and Path(weights).is_file()
    if torch_device != "cpu" or not exportable:
        if runtime not in ("auto", "torch"):
            log.warning("runtime %s: runs on CPU with .pt weights only; PyTorch on %s instead", runtime, torch_device)
        return LoadedModel(load_ultralytics(weights, task), "torch", torch_device, str(weights))
    for candidate in CPU_PREFERENCE if runtime == "auto" else (runtime,):
        if candidate == "torch":
            break
        try:
            path = exported_model(weights, candidate.split("-")[0])
            with _quiet_ultralytics():
                model = load_ultralytics(str(path), task)
                if candidate.startswith("openvino"):
                    _openvino_precision(model, path, "bf16" if candidate.endswith("bf16") else "f32", threads)
        except Exception as exc:  # any exporter / runtime failure: the next runtime, PyTorch at the end
            log.warning("%s runtime unavailable for %s (%s: %s); trying the next", candidate, weights,
                        type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else "")
            continue
        log.info("YOLO runtime: %s (%s)", candidate, path)
        return LoadedModel(model, candidate, "cpu", str(path))
    log.info("YOLO runtime: torch (%s)", weights)
    return LoadedModel(load_ultralytics(weights, task), "torch", "cpu", str(weights))
