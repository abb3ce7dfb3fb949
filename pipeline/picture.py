"""The picture inside black bars or a blurred fill: letterboxed films, pillarboxed 4:3 television, phone videos
posted in a wider frame.

A film framed 2.39:1 inside a 16:9 frame, or 4:3 television inside a 16:9 one, carries bars of black that
are no part of the scene. Left in, they shrink the people in what the detector sees (a pillarboxed clip
gives its people 1/1.4 of the pixels), stretch every distance measured in frame units, and change the
camera prior (a focal length of the frame's longer side), so the same footage with bars came out
differently: of the truth clips' gaze rows, 40 of 59 agreed on yakhyo_classroom_group pillarboxed, 11 of 22
on pyscenedetect_archive_two_women.

So perception, events and QA work on the picture alone (``iter_frames(window=...)``), as if the bars had
never been there, and the tables are written in the displayed frame's coordinates (DESIGN.md: coordinates
are normalised to the displayed frame), so boxes still land on the video a user opens. The clip's status
records the picture (``picture``: normalised x0, y0, x1, y1 of the displayed frame) so that events and QA
recomputed from stored tables see the picture's coordinates again (``tracks_in_picture``).

Bars are found once per video on a few frames spread over it (``find_picture``): rows (columns) at an edge
that are dark in every one of them. Bars come in pairs: both opposite edges must be dark, and alike, since
a dark side of a room is at one edge only. A film cut for the web often has its subtitles burned into the lower
bar: there a row may be lettered in some frames, so it is a bar row when its ends are dark in every frame and
the whole of it in at least one (or the other bar is clean in every frame), and the two bars are then as deep as
each other (a letterbox is centred).

A phone's portrait video posted in a landscape frame (or a landscape one in a portrait frame) often fills the
sides with the same picture enlarged and blurred, or with a flat colour. Those copies hold the people again,
large and soft, and the pose model finds them (in such edits of tvhid_highfive_0018 and yakhyo_classroom_group
blurred copies became people of their own, and the QA asked what one of them looked at). A fill is told from footage by
two things footage does not do at once, in every probed frame: the margins have almost no texture (lines of
``FILL_MAX_TEXTURE`` of the picture's own at most), and they end at one straight line across the whole frame
where every line of pixels jumps (``FILL_MIN_EDGE`` times the picture's usual step from pixel to pixel: a
composited edge, 6-28 times on the edits tried; a blurred background in focus behind a person fades over
many pixels; the few lines beside the edge, where a lossy encoder rings, are excused from softness). Fills are
centred: both margins end at lines the same distance from their edges. One probed frame may lack the edge: a
title card, an end card or a logo shown full frame has flat margins too, but no line where a picture starts.
"""
from __future__ import annotations

import logging
from fractions import Fraction
from typing import Optional, Sequence

import av
import numpy as np
import pyarrow as pa

from pipeline.video import _declared_duration, _open_container, _stream_rotation, _video_stream, rotate_image

log = logging.getLogger(__name__)

Window = tuple[float, float, float, float]  # normalised x0, y0, x1, y1 of the displayed frame

PROBE_FRAMES = 7  # frames looked at, spread over the video (the frame at each of 7 instants)
PROBE_MAX_DECODED = 120  # ...decoded on from the keyframe before it, at most this many frames
# a row (column) is black when at most BAR_MAX_BRIGHT_SHARE of its pixels are brighter than this luma (full range,
# as PyAV's "gray" gives it: video black reads 0-5 there) in every probed frame. The darkest rows of real footage
# on the shared clips (tvhid_handshake_0001's dark room, tvhid_highfive_0005's shadowed left edge) read 28-51 (at
# their 99th percentile): a bar limit of 40 took 2 % of those pictures for bars
BAR_MAX_LUMA = 24
BAR_MAX_BRIGHT_SHARE = 0.01
MIN_BAR_SHARE = 0.01  # each bar at least this share of the frame's side...
MIN_BAR_BALANCE = 0.5  # ...and the smaller of a pair at least this share of the larger
MIN_PICTURE_SHARE = 0.4  # the picture keeps at least this share of each side (else: a dark video, no bars)
# subtitles burned into letterbox bars (films cut for the web): a bar row may hold lettering in its middle; its ends,
# this share of the row at each side, stay dark in every probe, and it is dark throughout in at least one probe
# that is no black frame (between two subtitles), or the opposite bar is dark throughout in every probe (subtitles
# on screen in all of them). Such bars must be centred: as deep within this share of the height (plus 2 rows)
CAPTION_CLEAR_SHARE = 0.1
BAR_CAPTION_MAX_OFFSET = 0.01
# a fill's lines have at most this share of the texture (mean step between neighbours along the line) of the
# picture's middle: blurred fills read 0.02-0.28 on the edits tried (a blur of 4 % of the frame's height), but
# smooth footage reads as low in places (mmaction2_hug_lab: 0.25 at its 10th percentile), so the edge decides
FILL_MAX_TEXTURE = 0.5
# ...and end at a line where pixels step across it at least this many times the picture's usual step (lossless
# edits 6-28; x264 at crf 32 smooths one edge of 8 tried to 2.97)
FILL_MIN_EDGE = 2.5
# ...in every probed frame but this many, when at least FILL_MIN_PROBES_TO_EXCUSE frames tell (not flat): a title
# card, an end card or a logo has flat margins like the fill's but no edge where the picture starts
FILL_EXCUSED_PROBES = 1
FILL_MIN_PROBES_TO_EXCUSE = 4
# the lines this close to the edge need not be soft: a lossy encoder rings beside a sharp edge (x264 at crf 32:
# 0.56 of the picture's texture in the fill's first line, 0.14 four lines out)
FILL_EDGE_RING = 4
FILL_MIN_SHARE = 0.02  # each margin at least this share of the frame's side
FILL_MAX_OFFSET = 0.01  # the two margins' widths differ by at most this share of the side (plus 2 pixels)
MIN_FILL_PICTURE_SHARE = 0.25  # a portrait picture in a landscape frame keeps 0.32 of its width
MIDDLE = (0.4, 0.6)  # the part of a side that is picture in every fill: the reference for texture and steps

# the normalised (x, y) coordinate columns of the tracks and objects tables: name -> how its values are laid
# out ("box": x0, y0, x1, y1; "point": x, y; "keypoints": x, y, score triples; "boxes": a list of boxes).
# Directions are not coordinates: gaze_dir lives in the camera frame and point_dir in pixel geometry.
TRACK_COORDINATES = {"bbox": "box", "head_bbox": "box", "keypoints": "keypoints", "gaze_origin": "point",
                     "gaze_point": "point", "point_origin": "point", "hand_bboxes": "boxes"}
OBJECT_COORDINATES = {"bbox": "box"}


def find_picture(uri: str) -> Optional[Window]:
    """The picture inside the video's black bars or fill (normalised to the displayed frame), or None when it
    has neither. Never raises: a video it cannot probe is read whole (its decoding errors are perception's to name)."""
    try:
        with _open_container(str(uri)) as container:
            stream = _video_stream(container, str(uri))
            greys = _probe_greys(container, stream)
            if not greys:
                return None
            rotation = _stream_rotation(stream, greys[0][1])
            window = picture_window([rotate_image(g[..., None], rotation)[..., 0] for g, _ in greys])
    except Exception as exc:  # noqa: BLE001 - bars are an optimisation of the view, never a failure
        log.debug("%s: no black-bar probe (%s)", uri, exc)
        return None
    if window is not None:
        log.debug("%s: picture inside black bars or a fill at %s", uri, ", ".join(f"{v:.3f}" for v in window))
    return window


def _probe_greys(container, stream) -> list[tuple[np.ndarray, av.VideoFrame]]:
    """The luma plane of the frame at each of PROBE_FRAMES instants spread over the video. A short clip or a long
    group of pictures has one keyframe for several instants, and that keyframe may be a title card or a fade from
    black, so each instant's frame is decoded on to: from where the last one was found when it lies at most
    PROBE_MAX_DECODED frames ahead (one pass over a short clip), else from the keyframe before it (at most that
    many frames on from there)."""
    time_base = stream.time_base or Fraction(1, 1)
    duration = _declared_duration(container, stream)
    start = stream.start_time or 0
    rate = float(stream.average_rate or stream.guessed_rate or 25)
    stream.thread_type = "AUTO"
    # frames no other frame refers to are not decoded at all: the probe is the first reference frame at or after
    # the instant, a few frames later at most, for a fraction of the decoding
    stream.codec_context.skip_frame = "NONREF"
    greys, frames, position = [], None, None
    instants = [duration * (k + 0.5) / PROBE_FRAMES for k in range(PROBE_FRAMES)] if duration > 0 else [0.0]
    for instant in instants:
        target = int(start + instant / time_base)
        if position is None or not 0 <= (target - position) * time_base * rate <= PROBE_MAX_DECODED:
            container.seek(target, stream=stream, backward=True)
            frames = container.decode(stream)
        frame = None
        for decoded, candidate in enumerate(frames):
            frame = candidate
            if candidate.pts is None or candidate.pts >= target or decoded + 1 >= PROBE_MAX_DECODED:
                break
        if frame is None:
            position = None
            continue
        position = frame.pts
        greys.append((frame.to_ndarray(format="gray"), frame))
    return greys


def picture_window(greys: Sequence[np.ndarray]) -> Optional[Window]:
    """The picture inside the black bars or fill common to ``greys`` (uint8 luma images of one size, displayed
    orientation), normalised; None without either (module doc)."""
    stack = [np.asarray(g) for g in greys]
    if not stack or any(g.shape != stack[0].shape for g in stack):
        return None
    height, width = stack[0].shape
    bright = [g > BAR_MAX_LUMA for g in stack]
    dark_rows = np.all([b.mean(axis=1) <= BAR_MAX_BRIGHT_SHARE for b in bright], axis=0)
    dark_columns = np.all([b.mean(axis=0) <= BAR_MAX_BRIGHT_SHARE for b in bright], axis=0)
    top, bottom = _bar_pair(dark_rows)
    left, right = _bar_pair(dark_columns)
    if (top, bottom) == (0, 0):
        top, bottom = _captioned_bar_pair([b[:, left:width - right] for b in bright], dark_rows)
    # a fill on an axis without bars, looked for inside the bars of the other
    if (left, right) == (0, 0):
        left, right = _fill_pair([g[top:height - bottom].astype(np.float32) for g in stack])
    if (top, bottom) == (0, 0):
        top, bottom = _fill_pair([g[:, left:width - right].T.astype(np.float32) for g in stack])
    if (top, bottom, left, right) == (0, 0, 0, 0):
        return None
    return left / width, top / height, (width - right) / width, (height - bottom) / height


def _run(flags: np.ndarray) -> int:
    """How many of ``flags`` are true from its start on."""
    return int(np.argmin(flags)) if not flags.all() else len(flags)


def _middle(n: int) -> slice:
    """The MIDDLE part of a side of ``n`` lines (at least one line)."""
    start = int(MIDDLE[0] * n)
    return slice(start, max(start + 1, int(MIDDLE[1] * n)))


def _bar_pair(dark: np.ndarray) -> tuple[int, int]:
    """The bars (lines from each end) of one axis, or (0, 0) when they are no pair (module doc)."""
    n = len(dark)
    first, last = _run(dark), _run(dark[::-1])
    if n - first - last < MIN_PICTURE_SHARE * n:
        return 0, 0
    if min(first, last) < MIN_BAR_SHARE * n or min(first, last) < MIN_BAR_BALANCE * max(first, last):
        return 0, 0
    return first, last


def _captioned_bar_pair(bright: Sequence[np.ndarray], dark_rows: np.ndarray) -> tuple[int, int]:
    """Letterbox bars with subtitles burned into them (rows of ``bright``, each probe's pixels brighter than
    BAR_MAX_LUMA inside any pillar bars; ``dark_rows``, the rows dark throughout in every probe), or (0, 0) (module
    doc): rows dark at both ends (CAPTION_CLEAR_SHARE of their length) in every probed frame, and dark throughout in
    at least one that is no black frame, or on the side facing a bar dark throughout in every one (subtitles on
    screen in every probe); from both edges, the two bars as deep within BAR_CAPTION_MAX_OFFSET."""
    height, width = bright[0].shape
    ends = max(1, int(CAPTION_CLEAR_SHARE * width))
    dark_ends = np.all([np.concatenate([b[:, :ends], b[:, -ends:]], axis=1).mean(axis=1) <= BAR_MAX_BRIGHT_SHARE
                        for b in bright], axis=0)
    dark_lines = [b.mean(axis=1) <= BAR_MAX_BRIGHT_SHARE for b in bright]
    pictures = [d for d in dark_lines if not d[_middle(height)].all()]  # a black frame (a fade) says nothing
    if not pictures:
        return 0, 0
    limit = BAR_CAPTION_MAX_OFFSET * height + 2
    top, bottom = _bar_pair(dark_ends & np.any(pictures, axis=0))
    if (top, bottom) != (0, 0) and abs(top - bottom) <= limit:
        return top, bottom
    # one clean bar (dark throughout in every probe) and lettering in every probe of the other
    clean_top, clean_bottom = _run(dark_rows), _run(dark_rows[::-1])
    lettered_top, lettered_bottom = _run(dark_ends), _run(dark_ends[::-1])
    for clean, top, bottom in ((clean_top, clean_top, lettered_bottom), (clean_bottom, lettered_top, clean_bottom)):
        if (clean >= MIN_BAR_SHARE * height and abs(top - bottom) <= limit
                and height - top - bottom >= MIN_PICTURE_SHARE * height):
            return top, bottom
    return 0, 0


def _fill_pair(images: Sequence[np.ndarray]) -> tuple[int, int]:
    """The fill margins (columns from the left and right edge) of ``images`` (float luma, one size), or (0, 0)
    when there is no fill (module doc). Rows are columns of the transposed images."""
    width = images[0].shape[1]
    if width < 8 or images[0].shape[0] < 2:
        return 0, 0
    middle = _middle(width)
    soft, strengths = np.ones(width, bool), []
    for image in images:
        texture = np.abs(np.diff(image, axis=0)).mean(axis=0)  # along each column
        step = np.abs(np.diff(image, axis=1)).mean(axis=0)  # across each line between neighbouring columns
        texture_ref, step_ref = float(np.median(texture[middle])), float(np.median(step[middle]))
        if texture_ref <= 0 or step_ref <= 0:
            continue  # a flat frame (a fade) tells nothing
        soft &= texture <= FILL_MAX_TEXTURE * texture_ref
        strengths.append(step / step_ref)
    if not strengths:
        return 0, 0
    # each line's weakest step over the probes, but for the excused ones
    excused = FILL_EXCUSED_PROBES if len(strengths) >= FILL_MIN_PROBES_TO_EXCUSE else 0
    strength = np.sort(np.stack(strengths), axis=0)[excused]
    edge = strength >= FILL_MIN_EDGE
    # the picture starts after an edge line (between columns k and k + 1) with only soft columns before it (but
    # for the ring beside the edge), and ends before one with only soft columns after it
    soft_before = np.cumprod(soft).astype(bool)  # columns 0..k all soft
    soft_after = np.cumprod(soft[::-1]).astype(bool)[::-1]  # columns k.. all soft
    ring, lines = FILL_EDGE_RING, np.arange(width - 1)
    soft_up_to_ring = (lines >= ring) & soft_before[np.maximum(lines - ring, 0)]
    soft_from_ring = (lines < width - 1 - ring) & soft_after[np.minimum(lines + 1 + ring, width - 1)]
    lefts = np.flatnonzero(edge & soft_up_to_ring) + 1
    rights = width - 1 - np.flatnonzero(edge & soft_from_ring)
    a, b = lefts[:, None], rights[None, :]
    fits = ((np.minimum(a, b) >= FILL_MIN_SHARE * width) & (np.abs(a - b) <= FILL_MAX_OFFSET * width + 2)
            & (width - a - b >= MIN_FILL_PICTURE_SHARE * width))
    if not fits.any():
        return 0, 0
    # the sharpest pair of edges that fits (an encoder smears an edge over the next line or two)
    sharpness = strength[lefts - 1][:, None] + strength[width - 1 - rights][None, :]
    i, j = np.unravel_index(np.argmax(np.where(fits, sharpness, -1.0)), fits.shape)
    return int(lefts[i]), int(rights[j])


def picture_aspect(width: float, height: float, window: Optional[Window]) -> float:
    """The displayed picture's width / height: the frame's, less its bars or fill."""
    if window is None:
        return width / height
    x0, y0, x1, y1 = window
    return (width * (x1 - x0)) / (height * (y1 - y0))


def coded_window(window: Optional[Window], rotation: int) -> Optional[Window]:
    """``window`` (of the displayed frame) in the stored frame, before its clockwise display ``rotation``:
    what readers of raw decoded frames (pipeline.video.ShotDetector, pipeline.camera_motion.CameraPath) crop."""
    if window is None:
        return None
    x0, y0, x1, y1 = window
    return {0: window, 90: (y0, 1 - x1, y1, 1 - x0), 180: (1 - x1, 1 - y1, 1 - x0, 1 - y0),
            270: (1 - y1, x0, 1 - y0, x1)}[rotation % 360]


def displayed_moves(moves: np.ndarray, rotation: int) -> np.ndarray:
    """(N, 2) moves (normalised x right, y down) of the stored frame as the displayed frame shows them after a
    clockwise ``rotation``: a phone's portrait video is stored on its side, and a pan along the stored x is a
    move along the displayed y."""
    moves = np.asarray(moves, np.float64)
    dx, dy = moves[:, 0], moves[:, 1]
    turned = {0: (dx, dy), 90: (-dy, dx), 180: (-dx, -dy), 270: (dy, -dx)}[rotation % 360]
    return np.stack(turned, axis=1)


def _mapped(values: Optional[list], layout: str, scale: np.ndarray, offset: np.ndarray) -> Optional[list]:
    if values is None:
        return None
    if layout == "boxes":
        return [_mapped(box, "box", scale, offset) for box in values]
    array = np.asarray(values, np.float64)
    if layout == "keypoints":
        triples = array.reshape(-1, 3).copy()
        triples[:, :2] = triples[:, :2] * scale + offset
        return triples.reshape(-1).astype(np.float32).tolist()
    pairs = array.reshape(-1, 2) * scale + offset
    return pairs.reshape(-1).astype(np.float32).tolist()


def _map_table(table: Optional[pa.Table], columns: dict[str, str], scale: np.ndarray, offset: np.ndarray
               ) -> Optional[pa.Table]:
    if table is None or table.num_rows == 0:
        return table
    for name, layout in columns.items():
        if name not in table.column_names:
            continue
        index = table.column_names.index(name)
        field = table.schema.field(index)
        values = [_mapped(v, layout, scale, offset) for v in table.column(name).to_pylist()]
        table = table.set_column(index, field, pa.array(values, type=field.type))
    return table


def _affine(window: Window) -> tuple[np.ndarray, np.ndarray]:
    """Scale and offset taking picture coordinates to frame coordinates."""
    x0, y0, x1, y1 = window
    return np.array([x1 - x0, y1 - y0]), np.array([x0, y0])


def to_frame(table: Optional[pa.Table], window: Optional[Window], columns: dict[str, str]) -> Optional[pa.Table]:
    """``table``'s coordinates (``columns``: TRACK_COORDINATES or OBJECT_COORDINATES), normalised to the picture
    ``window``, normalised to the whole displayed frame; unchanged without a window."""
    if window is None:
        return table
    scale, offset = _affine(window)
    return _map_table(table, columns, scale, offset)


def to_picture(table: Optional[pa.Table], window: Optional[Window], columns: dict[str, str]) -> Optional[pa.Table]:
    """The inverse of ``to_frame``: frame coordinates back to the picture's."""
    if window is None:
        return table
    scale, offset = _affine(window)
    return _map_table(table, columns, 1.0 / scale, -offset / scale)


def window_of(record: Optional[dict]) -> Optional[Window]:
    """The picture recorded in a clip's status (``picture``), None when it had no bars or fill."""
    picture = (record or {}).get("picture")
    return tuple(float(v) for v in picture) if picture else None
