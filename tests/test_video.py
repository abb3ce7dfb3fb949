"""Video I/O: probing, pts-based sampling, rotation, scene cuts and clear errors for bad files."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from pipeline.video import (
    ShotDetector,
    VideoError,
    assign_shots,
    iter_frames,
    probe,
    rotate_image,
    rotation_from_display_matrix,
    scaled_size,
)

CLIPS = {
    # name: (native frames, width, height, native fps)
    "atd_kitchen.mp4": (101, 1280, 720, 30.0),
    "tvhid_highfive_0018.avi": (68, 544, 416, 25.0),
    "tvhid_highfive_0005.avi": (77, 624, 352, 23.976),
    "tvhid_handshake_0001.avi": (50, 624, 352, 23.976),
}


def _write_video(path: Path, frames: list[np.ndarray], pts: list[int], time_base: Fraction, rotation_ccw: int = 0) -> None:
    """Write RGB frames with the given pts (H.264 in MP4) and optional display-matrix rotation."""
    height, width = frames[0].shape[:2]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=int(round(1 / time_base)) if time_base < 1 else 25)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = time_base
        stream.codec_context.time_base = time_base
        if rotation_ccw:
            stream.set_display_rotation(rotation_ccw)
        for image, p in zip(frames, pts):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = p
            frame.time_base = time_base
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


# --- real clips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CLIPS))
def test_probe_reads_real_clips(media_dir: Path, name: str) -> None:
    n_frames, width, height, fps = CLIPS[name]
    info = probe(str(media_dir / name))
    assert (info.width, info.height, info.rotation) == (width, height, 0)
    assert info.native_fps == pytest.approx(fps, rel=1e-3)
    assert info.n_native_frames == n_frames
    # the length counts from the first frame, which an AVI's decoder delay puts 2-3 frames after pts 0
    with av.open(str(media_dir / name)) as container:
        stream = container.streams.video[0]
        lead = float(next(container.decode(stream)).pts * stream.time_base) - float((stream.start_time or 0) * stream.time_base)
    assert info.duration_s == pytest.approx(n_frames / fps - lead, abs=0.05)


@pytest.mark.parametrize("name", sorted(CLIPS))
@pytest.mark.parametrize("fps", [2.0, 10.0])
def test_sampling_count_and_times_follow_pts(media_dir: Path, name: str, fps: float) -> None:
    info = probe(str(media_dir / name))
    frames = list(iter_frames(str(media_dir / name), fps=fps, max_side=480))
    assert abs(len(frames) - info.duration_s * fps) <= 1
    times = np.array([f.t for f in frames])
    assert np.all(np.diff(times) > 0)
    assert [f.frame_idx for f in frames] == list(range(len(frames)))
    native = np.array([f.native_frame_idx for f in frames])
    assert np.all(np.diff(native) > 0)
    # pts-based: each sample is the first native frame at or after its instant, so it lies within
    # one native frame period after k / fps (unless one native frame covers several instants)
    period = 1.0 / info.native_fps
    for frame in frames[1:]:
        instant = np.ceil(frame.t * fps - 1e-6) / fps
        assert frame.t - instant < period + 1e-3
    if name == "atd_kitchen.mp4":  # every frame decodes, so decoded index = pts x rate
        for frame in frames:
            assert frame.t == pytest.approx(frame.native_frame_idx / info.native_fps, abs=1e-3)
    image = frames[0].image
    assert image.dtype == np.uint8 and image.shape[2] == 3 and max(image.shape[:2]) == 480


def test_images_are_rgb_and_never_upscaled(media_dir: Path) -> None:
    frames = list(iter_frames(str(media_dir / "tvhid_highfive_0018.avi"), fps=2, max_side=4000))
    assert frames[0].image.shape == (416, 544, 3)
    with av.open(str(media_dir / "tvhid_highfive_0018.avi")) as container:  # closed: its decoder runs threads
        first = next(container.decode(video=0)).to_ndarray(format="rgb24")
    np.testing.assert_array_equal(frames[0].image, first)


def test_segment_times_are_from_clip_start(media_dir: Path) -> None:
    uri = str(media_dir / "atd_kitchen.mp4")
    frames = list(iter_frames(uri, fps=10, max_side=320, start_s=1.0, end_s=2.0))
    assert len(frames) == 10
    assert frames[0].t == pytest.approx(0.0, abs=1e-3)
    assert frames[0].native_frame_idx == 30
    assert frames[-1].t == pytest.approx(0.9, abs=0.04)


def test_file_uri_through_pyarrow_fs(media_dir: Path) -> None:
    uri = (media_dir / "tvhid_handshake_0001.avi").resolve().as_uri()
    assert probe(uri).n_native_frames == 50
    # 48 decoded frames from pts 0.125 to 2.085 s: time 0 is the first frame, so 2 fps samples 0, 0.5, 1.0, 1.5
    assert [round(f.t, 2) for f in iter_frames(uri, fps=2, max_side=320)] == [0.0, 0.5, 1.0, 1.5]


# --- synthetic: variable frame rate, rotation ---------------------------------------------------


def test_variable_frame_rate_is_sampled_by_pts(tmp_path: Path) -> None:
    # 1 ms ticks; frames every 40 ms for the first second, then every 200 ms for two seconds
    pts_ms = list(range(0, 1000, 40)) + list(range(1000, 3001, 200))
    frames = [np.full((48, 64, 3), (i * 9) % 256, np.uint8) for i in range(len(pts_ms))]
    path = tmp_path / "vfr.mp4"
    _write_video(path, frames, pts_ms, Fraction(1, 1000))

    sampled = list(iter_frames(str(path), fps=10, max_side=64))
    times_ms = [round(f.t * 1000) for f in sampled]
    # first pts at or after each 100 ms instant; in the 200 ms part one frame covers two instants
    expected = [0, 120, 200, 320, 400, 520, 600, 720, 800, 920] + list(range(1000, 3001, 200))
    assert times_ms == expected
    assert [f.native_frame_idx for f in sampled] == [pts_ms.index(t) for t in expected]


@pytest.mark.parametrize("n_frames, regular_ms, end_ms", [(49, [0, 520, 1000, 1520], 1920), (53, [0, 520, 1000, 1520, 2000], None)])
def test_the_last_frame_is_sampled_when_the_clip_ends_past_half_a_step(tmp_path: Path, n_frames: int,
                                                                     regular_ms: list[int], end_ms) -> None:
    """25 fps (40 ms ticks), sampled at 2 fps: a 1.96 s clip (49 frames, the last at 1.92 s) ends 0.4 s after
    its last regular sample, so with sample_end its last frame is a sample too and every moment of the clip is
    within half a step of one. A 2.12 s clip's last frame (2.08 s) is 0.08 s after the 2.0 s sample: nothing
    added. A clip cut short by end_s never gains one (the frame is not the video's end)."""
    pts = [40 * i for i in range(n_frames)]
    frames = [np.full((48, 64, 3), (i * 5) % 256, np.uint8) for i in range(n_frames)]
    path = tmp_path / "short.mp4"
    _write_video(path, frames, pts, Fraction(1, 1000))

    def sampled(**kwargs):
        return [(round(f.t * 1000), f.frame_idx, f.native_frame_idx) for f in iter_frames(str(path), 2.0, 64, **kwargs)]
    plain = sampled()
    assert [t for t, _, _ in plain] == regular_ms
    with_end = sampled(sample_end=True)
    expected = regular_ms + ([end_ms] if end_ms is not None else [])
    assert [t for t, _, _ in with_end] == expected
    assert [i for _, i, _ in with_end] == list(range(len(expected)))
    assert with_end[-1][2] == (n_frames - 1 if end_ms is not None else pts.index(regular_ms[-1]))
    # the sampled images are those frames, whole (the grey level written into each)
    images = [f.image for f in iter_frames(str(path), 2.0, 64, sample_end=True)]
    assert abs(int(images[-1].mean()) - (with_end[-1][2] * 5) % 256) <= 3
    assert [t for t, _, _ in sampled(end_s=1.9, sample_end=True)] == [t for t in regular_ms if t < 1900]


@pytest.mark.parametrize("rotation_ccw, expected_cw", [(90, 270), (-90, 90), (180, 180)])
def test_rotation_metadata_is_applied(tmp_path: Path, rotation_ccw: int, expected_cw: int) -> None:
    image = np.zeros((32, 64, 3), np.uint8)
    image[:, :16] = 255  # white band on the left of the stored frame
    path = tmp_path / "rotated.mp4"
    _write_video(path, [image] * 5, [0, 1, 2, 3, 4], Fraction(1, 10), rotation_ccw=rotation_ccw)

    info = probe(str(path))
    assert info.rotation == expected_cw
    shown = next(iter_frames(str(path), fps=10, max_side=64)).image
    white = shown.mean(axis=2) > 128
    if expected_cw == 270:  # stored left edge ends at the bottom
        assert (info.width, info.height) == (32, 64) and white[-10:].all() and not white[:40].any()
    elif expected_cw == 90:  # stored left edge ends at the top (portrait phone video)
        assert (info.width, info.height) == (32, 64) and white[:10].all() and not white[-40:].any()
    else:  # upside down: left edge ends at the right
        assert (info.width, info.height) == (64, 32) and white[:, -10:].all() and not white[:, :40].any()


def test_rotation_helpers() -> None:
    assert [rotation_from_display_matrix(d) for d in (0, 90, -90, 180, -180, 270)] == [0, 270, 90, 180, 180, 90]
    image = np.arange(6).reshape(2, 3, 1)
    assert rotate_image(image, 90)[:, :, 0].tolist() == [[3, 0], [4, 1], [5, 2]]
    assert scaled_size(1280, 720, 960) == (960, 540)
    assert scaled_size(320, 200, 960) == (320, 200)


# --- scene cuts ---------------------------------------------------------------------------------


def test_shot_detector_finds_the_cut_between_two_clips(media_dir: Path) -> None:
    first = [f.image for f in iter_frames(str(media_dir / "atd_kitchen.mp4"), fps=10, max_side=320)]
    second = [f.image for f in iter_frames(str(media_dir / "tvhid_highfive_0005.avi"), fps=10, max_side=320)]
    second = [np.ascontiguousarray(img[: first[0].shape[0], : first[0].shape[1]]) for img in second]
    shots = assign_shots(first + second, fps=10, threshold=3.0, min_seconds=0.6)
    assert shots.dtype == np.int32
    assert shots[: len(first)].tolist() == [0] * len(first)
    assert shots[len(first) :].tolist() == [1] * len(second)


def test_cuts_are_found_at_the_decoded_frame_where_they_happen(media_dir: Path, tmp_path: Path) -> None:
    """A cut 2 frames into the clip, a 1.1 s cutaway and the cut back, at 25 fps, none on a 2 fps sample:
    every decoded frame is judged, so the cuts are the exact pts of the first frames of each piece, and
    the sampled frames' shots and shot starts follow from them. A one-frame white flash is no cut."""
    from tests.video_edits import clip_frames, write_edit

    size, fps = (320, 180), 25.0
    hug = clip_frames(media_dir / "mmaction2_hug_lab.mp4", fps, size)
    kitchen = clip_frames(media_dir / "atd_kitchen.mp4", fps, size, seconds=1.1)
    flash = [np.full_like(hug[0], 255)]
    pieces = [clip_frames(media_dir / "tvhid_handshake_0001.avi", fps, size)[:2], hug[:30], kitchen,
              hug[30:40] + flash + hug[40:]]
    path = tmp_path / "edit.mp4"
    starts = write_edit(path, pieces, fps)
    detector = ShotDetector()
    sampled = [f.t for f in iter_frames(str(path), 2.0, 320, on_decoded=detector.push_frame)]
    detector.finish()
    assert detector.cut_times() == pytest.approx(starts[1:], abs=1e-6)
    expected = np.searchsorted(starts[1:], np.asarray(sampled) + 1e-6, side="right")
    assert detector.shot_ids(sampled).tolist() == expected.tolist()
    assert detector.shot_starts(sampled).tolist() == pytest.approx([starts[k] for k in expected])


def test_a_cut_in_a_dark_flat_scene_is_found_relative_to_the_pictures_contrast(media_dir: Path, tmp_path: Path) -> None:
    """tvhid_handshake_0001 (grey levels within about 10 of their mean) cut from a close-up on A to the wide
    shot of both men and back (benchmarks/bench_reverse_shots.py): the first cut changes the 64 px grey frames
    by 11.9, under the 12 that bright footage needs. Unfound, it let one id run from A in the close-up to B in the
    wide shot. It is as large as the pictures' own contrast, where frames within a shot of the shared clips
    change by at most 0.46 of it: a cut."""
    from benchmarks.bench_reverse_shots import close_up_box
    from pipeline.truth import GroundTruth
    from tests.video_edits import clip_frames, cropped, write_edit

    truth = GroundTruth.load(media_dir / "truth").clip("tvhid_handshake_0001")
    box = close_up_box(np.mean([r.head for r in truth.rows if r.person == "A"], axis=0))
    frames = clip_frames(media_dir / "tvhid_handshake_0001.avi", 10.0, (640, 360))
    thirds = np.array_split(np.arange(len(frames)), 3)
    pieces = [cropped([frames[k] for k in part], shot, (640, 360))
              for part, shot in zip(thirds, [box, (0.0, 0.0, 1.0, 1.0), box])]
    path = tmp_path / "close_wide_close.mp4"
    starts = write_edit(path, pieces, 10.0)

    def cuts(video: Path, **options) -> list[float]:
        detector = ShotDetector(**options)
        for _ in iter_frames(str(video), 2.0, 320, on_decoded=detector.push_frame):
            pass
        detector.finish()
        return detector.cut_times()

    assert cuts(path) == pytest.approx(starts[1:], abs=1e-6)
    assert len(cuts(path, min_change_contrast=0.0)) < 2  # the absolute 12 alone misses the first
    assert cuts(media_dir / "tvhid_handshake_0001.avi") == []  # the shared clip itself has no cut


def test_shot_detector_needs_times_in_order() -> None:
    detector = ShotDetector()
    detector.push_image(1.0, np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="increasing times"):
        detector.push_image(0.5, np.zeros((8, 8, 3), np.uint8))


# --- bad input ----------------------------------------------------------------------------------


def _audio_only(path: Path) -> None:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=16000)
        samples = (np.sin(np.linspace(0, 400, 16000)) * 0.1).astype(np.float32)[None]
        frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
        frame.sample_rate = 16000
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _bad_inputs(tmp_path: Path, media_dir: Path) -> dict[str, tuple[Path, str]]:
    zero = tmp_path / "zero.mp4"
    zero.write_bytes(b"")
    text = tmp_path / "notes.mp4"
    text.write_text("this is a shopping list, not a video\n" * 20)
    audio = tmp_path / "audio_only.mp4"
    _audio_only(audio)
    cases = {
        "missing": (tmp_path / "missing.mp4", "file not found"),
        "zero": (zero, "empty file"),
        "text": (text, "not a readable video"),
        "audio": (audio, "no video stream"),
        "directory": (tmp_path, "not a file"),
    }
    for name in ("atd_kitchen.mp4", "tvhid_highfive_0018.avi"):
        data = (media_dir / name).read_bytes()
        truncated = tmp_path / f"truncated_{name}"
        truncated.write_bytes(data[: int(len(data) * 0.3)])
        cases[f"truncated {name}"] = (truncated, "truncated")
    return cases


@pytest.mark.parametrize(
    "case",
    ["missing", "zero", "text", "audio", "directory", "truncated atd_kitchen.mp4", "truncated tvhid_highfive_0018.avi"],
)
def test_bad_input_raises_video_error_naming_file_and_reason(tmp_path: Path, media_dir: Path, case: str) -> None:
    path, reason = _bad_inputs(tmp_path, media_dir)[case]
    # not pytest.raises: its ExceptionInfo and this frame hold each other, and with them the traceback's
    # decoder, whose FFmpeg threads would then outlive the test
    try:
        probe(str(path))
        list(iter_frames(str(path), fps=2, max_side=320))  # probe may pass a truncated AVI; decoding may not
    except VideoError as error:
        message, uri = str(error), error.uri
    else:
        pytest.fail(f"{case}: no VideoError")
    assert message.startswith(f"{path}: ")
    assert reason in message
    assert uri == str(path)


def test_bad_arguments_are_rejected(media_dir: Path) -> None:
    uri = str(media_dir / "atd_kitchen.mp4")
    with pytest.raises(ValueError, match="fps"):
        next(iter_frames(uri, fps=0, max_side=320))
    with pytest.raises(ValueError, match="end_s"):
        next(iter_frames(uri, fps=2, max_side=320, start_s=2.0, end_s=1.0))


def test_time_starts_at_the_first_frame_whatever_the_container(media_dir: Path, tmp_path: Path) -> None:
    """tvhid_handshake_0001.avi's first frame carries pts 0.125 s (the decoder's delay); copied into MP4 the
    same frames start at 0. Both must sample the same frames at the same times: a copy of a clip gives the
    same output (at pts-from-stream-start times the AVI sampled frames 0, 9, 21, 33, 45 and the copy 0, 12,
    24, 36)."""
    from tests.camera_edits import edit_clip

    source = media_dir / "tvhid_handshake_0001.avi"
    with av.open(str(source)) as container:
        assert float(next(container.decode(video=0)).pts * container.streams.video[0].time_base) > 0.1
    copy = edit_clip(source, tmp_path / "copy.mp4", lambda image: image)
    original = [(f.t, f.native_frame_idx) for f in iter_frames(str(source), fps=2, max_side=320)]
    copied = [(f.t, f.native_frame_idx) for f in iter_frames(str(copy), fps=2, max_side=320)]
    assert [i for _, i in original] == [i for _, i in copied] == [0, 12, 24, 36]
    assert np.allclose([t for t, _ in original], [t for t, _ in copied], atol=2e-3)
    # a segment starting later counts from the same first frame (the whole-clip frame indices)
    later = list(iter_frames(str(source), fps=2, max_side=320, start_s=1.0))
    assert later[0].native_frame_idx == 24 and later[0].t == pytest.approx(0.0, abs=2e-3)

