"""Camera edits of a shared clip, built into a test's tmp folder (DESIGN.md §10: the output must not change
with them): a horizontal mirror, half resolution, a digital zoom into the frame's centre, black bars around
the picture (letterbox and pillarbox) and a blurred fill beside it (a phone video posted in a wider frame).

Each edit decodes the clip with PyAV, changes every frame with OpenCV and encodes it again (H.264 when this
PyAV build has it, else MPEG-4 part 2) with every frame's own presentation time, so a clip with a gap in its
timestamps keeps it and a run samples the same instants from the edit as from the original. Non-square
pixels are kept (the sample aspect ratio is copied), so the displayed frame is the original's, mirrored or
halved. The clips themselves are never copied into the repository.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable

import av
import cv2
import numpy as np

from pipeline.camera_invariance import FULL_FRAME
from pipeline.video_writer import usable_encoder

# the edits the issue names (the invariance tests and benchmarks/bench_invariance.py make them), by the suffix
# their files get
EDITS = ("mirror", "half")
# a digital zoom (made by both too): the centre of the frame, this share of its width and height, stretched over
# the whole frame as an editor reframes a shot; ZOOM_WINDOW is the part of the original it shows
ZOOM = "zoom"
ZOOM_KEEP = 0.8
ZOOM_WINDOW = ((1 - ZOOM_KEEP) / 2, (1 - ZOOM_KEEP) / 2, (1 + ZOOM_KEEP) / 2, (1 + ZOOM_KEEP) / 2)
# black bars on all four sides (tests/camera_edits.barred_clip): a film letterboxed inside a 4:3 picture that is
# pillarboxed inside a wider frame. BARS_WINDOW is the part of the edit's frame the original fills, and the part
# of the original the edit shows is beyond its edges (shown_part)
BARS = "bars"
BARS_GROWTH = (1.3, 1.2)  # the frame's width and height over the picture's
# the picture centred in a wider frame whose sides are the same picture enlarged to cover the frame and blurred
# (tests/camera_edits.filled_clip): how phone videos are posted in a landscape frame. The blurred copies hold
# people too, large and soft. FILL_BLUR is the blur's standard deviation over the frame's height
FILL = "fill"
FILL_GROWTH = 1.6  # the frame's width over the picture's
FILL_BLUR = 0.04
# the same clip encoded again and nothing else: how much of an edit's disagreement the second encode alone
# makes (benchmarks/bench_invariance.py reports it beside the edits; the tests do not build it)
REENCODE = "reencode"
# lossless (x264 at crf 0): the edit under test is the flip or the resize, not a second round of compression.
# At crf 16 x264 encoded the same frames differently on two of four runs of one process, one thread or not
# (up to 39 grey levels on the first frame), so figures measured on an edit moved from run to run; lossless,
# the decoded pixels are the same on every run (the files are ~10x larger: 28 MB for atd_kitchen's 3.4 s)
LOSSLESS_CRF = 0


def _encoder() -> str:
    name = usable_encoder(("libx264", "mpeg4"))
    if name is None:
        raise RuntimeError("this PyAV build has neither libx264 nor mpeg4 to encode camera edits with")
    return name


def near_lossless_stream(sink, size: tuple[int, int], rate, time_base, threads: int = 1, crf: int = LOSSLESS_CRF):
    """A yuv420p video stream of ``size`` (w, h) in the output container ``sink``, frames stamped in
    ``time_base``, encoded by libx264 at ``crf`` (0: lossless; mpeg4 at qscale 2, near-lossless, where this PyAV
    has no libx264) by ``threads`` encoder threads (0: the encoder's choice)."""
    encoder = _encoder()
    stream = sink.add_stream(encoder, rate=rate)
    stream.width, stream.height = size
    stream.pix_fmt = "yuv420p"
    stream.time_base = time_base
    stream.codec_context.time_base = time_base
    stream.options = {"crf": str(int(crf)), "preset": "veryfast"} if encoder == "libx264" else {"qscale": "2"}
    # with several threads x264 encodes the same frames differently from run to run on a busy machine (up to 46
    # grey levels by a clip's end); at crf 0 the decoded pixels are the same whatever the threads
    if threads > 0:
        stream.codec_context.thread_count = int(threads)
    if encoder == "mpeg4":
        stream.codec_context.qscale = 2
    return stream


def _even(n: float) -> int:
    """yuv420p needs even sizes."""
    return max(2, int(round(n / 2.0)) * 2)


def edit_clip(src: str | Path, dst: str | Path, transform: Callable[[np.ndarray], np.ndarray],
              size: Callable[[int, int], tuple[int, int]] = lambda w, h: (w, h), crf: int = LOSSLESS_CRF) -> Path:
    """Write ``transform`` of every frame of ``src`` (stored pixels, BGR) to ``dst`` (.mp4), frame size
    ``size(width, height)``, each frame at its original presentation time (lossless unless ``crf`` says)."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(src)) as source, av.open(str(dst), mode="w") as sink:
        in_stream = source.streams.video[0]
        time_base = in_stream.time_base or Fraction(1, 90000)
        rate = in_stream.average_rate or in_stream.guessed_rate or Fraction(25, 1)
        width, height = size(in_stream.codec_context.width, in_stream.codec_context.height)
        out_stream = near_lossless_stream(sink, (_even(width), _even(height)), rate, time_base, crf=crf)
        sar = in_stream.sample_aspect_ratio
        if sar is not None and sar > 0:
            out_stream.codec_context.sample_aspect_ratio = sar
        last_pts = None
        for frame in source.decode(in_stream):
            if frame.pts is None or (last_pts is not None and frame.pts <= last_pts):
                continue  # no place on the timeline (the run skips these too)
            image = transform(frame.to_ndarray(format="bgr24"))
            if image.shape[:2] != (out_stream.height, out_stream.width):
                image = cv2.resize(image, (out_stream.width, out_stream.height), interpolation=cv2.INTER_AREA)
            edited = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="bgr24").reformat(format="yuv420p")
            edited.pts = frame.pts
            edited.time_base = time_base
            for packet in out_stream.encode(edited):
                sink.mux(packet)
            last_pts = frame.pts
        for packet in out_stream.encode():
            sink.mux(packet)
    return dst


def mirror_clip(src: str | Path, dst: str | Path) -> Path:
    """``src`` flipped left to right."""
    return edit_clip(src, dst, lambda image: cv2.flip(image, 1))


def reencoded_clip(src: str | Path, dst: str | Path) -> Path:
    """``src`` decoded and encoded again, every pixel as it was: the edits' own share of noise."""
    return edit_clip(src, dst, lambda image: image)


def half_resolution_clip(src: str | Path, dst: str | Path) -> Path:
    """``src`` at half its width and height (area averaging, as a camera or a transcoder downscales)."""
    def halve(image: np.ndarray) -> np.ndarray:
        height, width = image.shape[:2]
        return cv2.resize(image, (_even(width / 2), _even(height / 2)), interpolation=cv2.INTER_AREA)

    return edit_clip(src, dst, halve, lambda w, h: (_even(w / 2), _even(h / 2)))


def zoomed_clip(src: str | Path, dst: str | Path) -> Path:
    """The centre of ``src`` (``ZOOM_WINDOW``) enlarged to the full frame size (bicubic, as an editor's digital
    zoom interpolates)."""
    def zoom(image: np.ndarray) -> np.ndarray:
        height, width = image.shape[:2]
        x0, y0, x1, y1 = ZOOM_WINDOW
        crop = image[int(round(y0 * height)):int(round(y1 * height)), int(round(x0 * width)):int(round(x1 * width))]
        return cv2.resize(crop, (_even(width), _even(height)), interpolation=cv2.INTER_CUBIC)

    return edit_clip(src, dst, zoom)


def barred_clip(src: str | Path, dst: str | Path) -> Path:
    """``src`` as it is, centred in a larger black frame (``BARS_GROWTH``): bars above, below and at both sides."""
    def bar(image: np.ndarray) -> np.ndarray:
        height, width = image.shape[:2]
        frame = np.zeros((_even(height * BARS_GROWTH[1]), _even(width * BARS_GROWTH[0]), 3), np.uint8)
        top, left = (frame.shape[0] - height) // 2, (frame.shape[1] - width) // 2
        frame[top:top + height, left:left + width] = image
        return frame

    return edit_clip(src, dst, bar, lambda w, h: (_even(w * BARS_GROWTH[0]), _even(h * BARS_GROWTH[1])))


def filled_clip(src: str | Path, dst: str | Path) -> Path:
    """``src`` as it is, centred in a frame ``FILL_GROWTH`` times as wide whose sides show ``src`` enlarged to the
    frame's width, its middle kept, and blurred (``FILL_BLUR``)."""
    def fill(image: np.ndarray) -> np.ndarray:
        height, width = image.shape[:2]
        frame_width = _even(width * FILL_GROWTH)
        enlarged = cv2.resize(image, (frame_width, int(round(height * frame_width / width))),
                              interpolation=cv2.INTER_LINEAR)
        top = (enlarged.shape[0] - height) // 2
        frame = cv2.GaussianBlur(enlarged[top:top + height], (0, 0), FILL_BLUR * height)
        left = (frame_width - width) // 2
        frame[:, left:left + width] = image
        return frame

    return edit_clip(src, dst, fill, lambda w, h: (_even(w * FILL_GROWTH), h))


def shown_part(kind: str) -> tuple[float, float, float, float]:
    """The part of the original frame the ``kind`` edit shows (normalised xyxy), for
    pipeline.camera_invariance.compare_outputs: the zoom's window, the bars' frame (beyond the original's edges),
    else the whole frame."""
    if kind == BARS:
        margin_x, margin_y = (BARS_GROWTH[0] - 1) / 2, (BARS_GROWTH[1] - 1) / 2
        return -margin_x, -margin_y, 1 + margin_x, 1 + margin_y
    if kind == FILL:
        margin_x = (FILL_GROWTH - 1) / 2
        return -margin_x, 0.0, 1 + margin_x, 1.0
    return ZOOM_WINDOW if kind == ZOOM else FULL_FRAME


def make_edit(kind: str, src: str | Path, folder: str | Path) -> Path:
    """The ``kind`` edit ("mirror" | "half" | "zoom" | "bars" | "fill" | "reencode") of ``src`` as
    FOLDER/<stem>_<kind>.mp4 (its own video_id, so one run can hold the originals and their edits)."""
    makers = {"mirror": mirror_clip, "half": half_resolution_clip, ZOOM: zoomed_clip, BARS: barred_clip,
              FILL: filled_clip, REENCODE: reencoded_clip}
    if kind not in makers:
        raise ValueError(f"unknown camera edit {kind!r} (edits: {', '.join(makers)})")
    return makers[kind](src, Path(folder) / f"{Path(src).stem}_{kind}.mp4")
