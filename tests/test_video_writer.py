"""The one H.264 writer (pipeline/video_writer.py) used by `render` and `export`: frames written are the
frames read back, odd sizes are padded, the file appears only on a clean close, and the encoder falls
back when libx264 is missing."""
from __future__ import annotations

import av
import numpy as np
import pytest

from pipeline import video_writer
from pipeline.video_writer import H264Writer, h264_encoder


def _frames(n: int, h: int, w: int) -> list[np.ndarray]:
    """BGR frames with a bright square moving right, one step per frame."""
    out = []
    for k in range(n):
        img = np.full((h, w, 3), 40, np.uint8)
        img[10:30, 5 + 6 * k: 25 + 6 * k] = (0, 200, 255)
        out.append(img)
    return out


def _read(path) -> tuple[str, list[np.ndarray], float]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [f.to_ndarray(format="bgr24") for f in container.decode(stream)]
        return stream.codec_context.name, frames, float(stream.average_rate)


def test_frames_round_trip_with_odd_sizes_padded(tmp_path):
    path = tmp_path / "clip.mp4"
    frames = _frames(6, 61, 81)
    with H264Writer(path, 81, 61, 2.0) as writer:
        for frame in frames:
            writer.write(frame)
    assert writer.n_frames == 6 and path.is_file() and not list(tmp_path.glob(".*partial*"))
    codec, decoded, rate = _read(path)
    assert codec == "h264" and len(decoded) == 6 and rate == pytest.approx(2.0)
    assert decoded[0].shape == (62, 82, 3)  # padded to even
    for original, back in zip(frames, decoded):
        assert np.abs(back[:61, :81].astype(int) - original).mean() < 4.0
    with pytest.raises(ValueError, match="frame shape"):
        with H264Writer(tmp_path / "bad.mp4", 81, 61, 2.0) as writer:
            writer.write(frames[0][:60])


def test_a_failed_write_leaves_nothing_and_an_old_file_untouched(tmp_path):
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"previous")
    with pytest.raises(RuntimeError, match="boom"):
        with H264Writer(path, 64, 48, 2.0) as writer:
            writer.write(_frames(1, 48, 64)[0])
            raise RuntimeError("boom")
    assert path.read_bytes() == b"previous" and not list(tmp_path.glob(".*partial*"))
    with pytest.raises(ValueError, match="no frames"):
        with H264Writer(tmp_path / "empty.mp4", 64, 48, 2.0):
            pass
    assert not (tmp_path / "empty.mp4").exists() and not list(tmp_path.glob(".*partial*"))


def test_encoder_falls_back_when_libx264_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(video_writer, "H264_ENCODERS", ("libx264_not_built", "h264"))
    assert h264_encoder() == "h264"
    with H264Writer(tmp_path / "clip.mp4", 64, 48, 2.0) as writer:
        for frame in _frames(3, 48, 64):
            writer.write(frame)
    codec, decoded, _ = _read(tmp_path / "clip.mp4")
    assert codec == "h264" and len(decoded) == 3
    monkeypatch.setattr(video_writer, "H264_ENCODERS", ("libx264_not_built",))
    with pytest.raises(RuntimeError, match="no H.264 encoder"):
        H264Writer(tmp_path / "none.mp4", 64, 48, 2.0)
