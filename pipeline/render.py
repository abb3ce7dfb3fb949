"""`socialtrace render`: the clip with what the pipeline saw drawn on it, as a browser-playable H.264 mp4.

Per person: box and "Person N" label (pipeline/annotate.py, the same drawing as the grasp-bench export),
head box, gaze ray from gaze_origin to gaze_point coloured by gaze_target_type, pointing ray. Below the
frame a caption strip names the events active at that moment. One output frame per sampled frame
(default), or per native frame with tracks taken from the nearest sampled frame.

Drawing happens on BGR images because supervision's annotators (and OpenCV) treat numpy scenes as BGR:
that way ``annotate.person_color`` is the colour that actually appears on screen.
"""
from __future__ import annotations

import bisect
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Optional, Sequence

import cv2
import numpy as np
import pyarrow as pa
import supervision as sv

from pipeline.annotate import PersonAnnotator
from pipeline.summary import InspectError, describe_event, open_output, sampling_fps
from pipeline.storage import OutputStore
from pipeline.video import iter_frames
from pipeline.video_writer import H264Writer

log = logging.getLogger("socialtrace")

# Gaze ray colour per gaze_target_type (RGB). The timeline uses the same colours for non-person targets.
GAZE_TARGET_COLORS: dict[str, tuple[int, int, int]] = {
    "person": (255, 40, 40),
    "hands": (255, 150, 0),
    "object": (255, 230, 0),
    "camera": (0, 220, 255),
    "elsewhere": (235, 235, 235),
    "unknown": (130, 130, 130),
}
POINTING_COLOR = (60, 255, 60)
OBJECT_COLOR = (255, 230, 0)
CAPTION_BACKGROUND = (24, 24, 24)

MAX_CAPTION_EVENTS = 5  # event lines below the frame; more are summarised as "+N more"
DEFAULT_MAX_SIDE = 1280  # longest side of the rendered picture (downscaled, never upscaled)
# iter_frames samples the first frame at or after each 1/fps instant; at this rate that is every frame.
_EVERY_FRAME_FPS = 1000.0

# Caption order: the interactions first, one person's own gaze target last.
_EVENT_PRIORITY = {
    "eye_contact_during_gesture": 0, "gaze_follows_gesture": 0, "gaze_gesture_alignment": 0,
    "mutual_gaze": 1, "joint_attention": 1, "gaze_following": 2, "attention_capture": 2, "gaze_aversion": 2,
    "pointing": 3, "showing": 3, "giving": 3, "reaching": 3, "sudden_gaze_shift": 4,
    "gaze_at": 5, "co_occur": 6, "adjacent": 6,
}


class RenderError(ValueError):
    """A clip that cannot be rendered; the message names the clip and the reason."""


@dataclass(frozen=True)
class RenderResult:
    path: Path
    n_frames: int  # frames written
    fps: float  # playback rate of the mp4
    width: int
    height: int
    n_people: int  # distinct person_ids drawn from the tracks table
    native_fps: bool  # one frame per native frame (True) or per sampled frame
    message: Optional[str] = None  # something the user should know (e.g. nobody was tracked)


# --- what to draw at a time ---------------------------------------------------------------------

class TrackIndex:
    """The tracks (or objects) rows of one video by sampled frame, looked up by time: the rows of the
    sampled frame nearest to ``t`` when it is within half a sampling step, else none (nobody was seen
    there, so nobody is drawn)."""

    def __init__(self, tracks: pa.Table, fps: float) -> None:
        self.half_step = 0.5 / fps
        by_frame: dict[int, list[dict]] = {}
        times: dict[int, float] = {}
        for row in tracks.to_pylist():
            by_frame.setdefault(row["frame_idx"], []).append(row)
            times[row["frame_idx"]] = row["t"]
        order = sorted(times, key=times.get)
        self._time_of = times
        self._times = [times[i] for i in order]
        self._rows = [sorted(by_frame[i], key=lambda r: r.get("person_id", r.get("object_id", 0))) for i in order]

    def rows_at(self, t: float) -> list[dict]:
        if not self._times:
            return []
        i = bisect.bisect_left(self._times, t)
        best = min((j for j in (i - 1, i) if 0 <= j < len(self._times)), key=lambda j: abs(self._times[j] - t))
        return self._rows[best] if abs(self._times[best] - t) <= self.half_step + 1e-6 else []


    def time_of(self, frame_idx: int) -> Optional[float]:
        """Time of the sampled frame ``frame_idx``, None when no row has it."""
        return self._time_of.get(frame_idx)


def active_events(events: Sequence[Mapping], t: float, half_step: float,
                  time_of: Optional[Callable[[int], Optional[float]]] = None) -> list[Mapping]:
    """Events active at ``t``, interactions first. An event runs from its first sampled frame
    (start_time) to its end_time (exclusive), usually one sampling step after its last sampled frame;
    each sampled frame stands for the native frames within half a step of it. ``time_of`` (sampled
    frame index -> time) finds the event's last sampled frame (end_frame): an event cut short (at the
    clip's end, or where a participant left) still shows on that frame."""
    hits = [e for e in events if e["start_time"] - half_step <= t < _shown_until(e, half_step, time_of)]
    return sorted(hits, key=lambda e: (_EVENT_PRIORITY.get(e["event_type"], 7), e["start_time"], e["event_id"]))


def _shown_until(event: Mapping, half_step: float, time_of: Optional[Callable[[int], Optional[float]]]) -> float:
    """Until when (exclusive) an event is drawn: to its end_time, but not past half a step after its last
    sampled frame (the native frames beyond stand for the next sample); at least its first sampled frame."""
    last = time_of(event["end_frame"]) if time_of is not None and event.get("end_frame") is not None else None
    if last is None:
        return max(event["end_time"], event["start_time"] + 2 * half_step) - half_step
    return max(min(event["end_time"], last + half_step), event["start_time"] + 1e-6)


def caption_lines(events: Sequence[Mapping], limit: int = MAX_CAPTION_EVENTS) -> list[str]:
    """One line per active event (already ordered), at most ``limit`` with a "+N more" tail."""
    lines = [describe_event(e) for e in events]
    if len(lines) > limit:
        lines = lines[: limit - 1] + [f"+{len(lines) - limit + 1} more"]
    return lines


# --- drawing ------------------------------------------------------------------------------------

def _bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (rgb[2], rgb[1], rgb[0])


def _valid(values: Optional[Sequence[float]], n: int) -> bool:
    return values is not None and len(values) >= n and all(v is not None and np.isfinite(v) for v in values[:n])


class OverlayPainter:
    """Draws one frame's people, rays, objects and caption strip. Built once per video for a picture
    size and a caption height, so every output frame has the same (even) dimensions."""

    def __init__(self, width: int, height: int, caption_lines: int) -> None:
        self.width, self.height = int(width), int(height)
        self.scale = max(self.width, self.height) / 1280.0
        self.persons = PersonAnnotator(self.width, self.height)
        self.line = max(2, int(round(3 * self.scale)))
        self.head_boxes = sv.BoxAnnotator(color=sv.ColorPalette.DEFAULT, thickness=max(1, self.line - 1),
                                          color_lookup=sv.ColorLookup.TRACK)
        self.objects = sv.BoxAnnotator(color=sv.Color(*OBJECT_COLOR), thickness=max(1, self.line - 1))
        self.object_labels = sv.LabelAnnotator(color=sv.Color(*OBJECT_COLOR), text_color=sv.Color.BLACK,
                                               text_scale=max(0.35, 0.5 * self.scale), text_padding=3,
                                               text_position=sv.Position.TOP_LEFT)
        self.font_scale = max(0.4, min(0.7, self.width / 1100.0))
        self.text_thickness = 1
        (_, text_h), baseline = cv2.getTextSize("Ag", cv2.FONT_HERSHEY_SIMPLEX, self.font_scale, 1)
        self.line_height = text_h + baseline + 6
        strip = (1 + max(0, caption_lines)) * self.line_height + 8
        self.strip_height = strip + (self.height + strip) % 2  # H.264 yuv420p needs even sizes
        self.out_width = self.width + self.width % 2
        self.out_height = self.height + self.strip_height

    def _px(self, point: Sequence[float]) -> tuple[int, int]:
        return int(round(point[0] * self.width)), int(round(point[1] * self.height))

    def draw(self, frame_bgr: np.ndarray, rows: Sequence[Mapping], objects: Sequence[Mapping],
             header: str, lines: Sequence[str]) -> np.ndarray:
        """The annotated frame with its caption strip (out_height x out_width x 3, BGR)."""
        scene = self.persons.draw(frame_bgr, rows)
        heads = [r for r in rows if _valid(r.get("head_bbox"), 4)]
        if heads:
            scene = self.head_boxes.annotate(scene, self._detections([r["head_bbox"] for r in heads],
                                                                     [r["person_id"] for r in heads]))
        if objects:
            detections = self._detections([o["bbox"] for o in objects], [o["object_id"] for o in objects])
            scene = self.objects.annotate(scene, detections)
            scene = self.object_labels.annotate(scene, detections, labels=[o["label"] for o in objects])
        people = {r["person_id"]: r for r in rows}
        for row in rows:
            self._gaze_ray(scene, row)
            self._pointing_ray(scene, row, people)
        return self._caption(scene, header, lines)

    def _detections(self, boxes: Sequence[Sequence[float]], ids: Sequence[int]) -> sv.Detections:
        xyxy = np.asarray(boxes, np.float32).reshape(-1, 4) * np.array(
            [self.width, self.height, self.width, self.height], np.float32)
        xyxy = np.clip(xyxy, 0, [self.width - 1, self.height - 1, self.width - 1, self.height - 1])
        ids = np.asarray(ids, int)
        return sv.Detections(xyxy=xyxy, tracker_id=ids, class_id=np.zeros(len(ids), int))

    def _gaze_ray(self, scene: np.ndarray, row: Mapping) -> None:
        origin = row.get("gaze_origin")
        if not _valid(origin, 2):
            return
        colour = _bgr(GAZE_TARGET_COLORS.get(row.get("gaze_target_type") or "unknown", GAZE_TARGET_COLORS["unknown"]))
        start = self._px(origin)
        point, direction = row.get("gaze_point"), row.get("gaze_dir")
        if _valid(point, 2):
            end = self._px(point)
        elif _valid(direction, 2) and np.hypot(direction[0], direction[1]) > 0.15:
            # no landing point: show the direction with a fixed length
            reach = 0.25 * max(self.width, self.height)
            norm = np.hypot(direction[0], direction[1])
            end = (int(start[0] + reach * direction[0] / norm), int(start[1] + reach * direction[1] / norm))
        else:
            # looking (nearly) into the lens: a ring on the face instead of a ray
            cv2.circle(scene, start, 3 * self.line, colour, self.line, cv2.LINE_AA)
            return
        # gaze bridged over a gap (interpolated / carried forward) is drawn thinner than measured gaze
        thickness = max(1, self.line // 2) if row.get("gaze_filled") else self.line
        _outlined_arrow(scene, start, end, colour, thickness)
        cv2.circle(scene, end, 2 * thickness, colour, -1, cv2.LINE_AA)

    def _pointing_ray(self, scene: np.ndarray, row: Mapping, people: Mapping[int, Mapping]) -> None:
        direction = row.get("point_dir")
        if not row.get("pointing") or not _valid(direction, 2):
            return
        origin = row.get("point_origin")
        if not _valid(origin, 2):
            origin = _pointing_origin(row, direction)
        if origin is None:
            return
        start = self._px(origin)
        target = people.get(row.get("point_target_id")) if row.get("point_target_type") in ("person", "hands") else None
        if target is not None:
            box = target["head_bbox"] if _valid(target.get("head_bbox"), 4) else target["bbox"]
            end = self._px(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
        else:
            reach = 0.35 * max(self.width, self.height)
            norm = max(np.hypot(direction[0], direction[1]), 1e-6)
            end = (int(start[0] + reach * direction[0] / norm), int(start[1] + reach * direction[1] / norm))
        _outlined_arrow(scene, start, end, _bgr(POINTING_COLOR), self.line, dashed=True)

    def _caption(self, scene: np.ndarray, header: str, lines: Sequence[str]) -> np.ndarray:
        canvas = np.empty((self.out_height, self.out_width, 3), np.uint8)
        canvas[:] = _bgr(CAPTION_BACKGROUND)
        canvas[: self.height, : self.width] = scene
        x = 8
        y = self.height + self.line_height
        self._text(canvas, header, (x, y), (255, 255, 255))
        # legend of gaze colours, right of the header
        legend_x = x + cv2.getTextSize(header, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale, 1)[0][0] + 16
        for name, rgb in list(GAZE_TARGET_COLORS.items()) + [("pointing", POINTING_COLOR)]:
            label = f"gaze:{name}" if name != "pointing" else name
            size = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale * 0.85, 1)[0][0]
            if legend_x + size + 16 > self.out_width:
                break
            cv2.rectangle(canvas, (legend_x, y - self.line_height // 2 - 3), (legend_x + 8, y - 3), _bgr(rgb), -1)
            cv2.putText(canvas, label, (legend_x + 11, y - 3), cv2.FONT_HERSHEY_SIMPLEX, self.font_scale * 0.85,
                        _bgr(rgb), 1, cv2.LINE_AA)
            legend_x += size + 24
        for line in lines:
            y += self.line_height
            self._text(canvas, line, (x, y), (230, 230, 230))
        return canvas

    def _text(self, canvas: np.ndarray, text: str, origin: tuple[int, int], rgb: tuple[int, int, int]) -> None:
        text = _fit_text(text, self.out_width - 2 * origin[0], self.font_scale)
        cv2.putText(canvas, text, (origin[0], origin[1] - 4), cv2.FONT_HERSHEY_SIMPLEX, self.font_scale,
                    _bgr(rgb), self.text_thickness, cv2.LINE_AA)


def _fit_text(text: str, max_width: int, font_scale: float) -> str:
    """Shorten ``text`` with "..." until it fits ``max_width`` pixels."""
    if cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)[0][0] <= max_width:
        return text
    while len(text) > 4 and cv2.getTextSize(text + "...", cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)[0][0] > max_width:
        text = text[:-1]
    return text + "..."


def _outlined_arrow(scene: np.ndarray, start: tuple[int, int], end: tuple[int, int], colour: tuple[int, int, int],
                    thickness: int, dashed: bool = False) -> None:
    """A ray with a dark outline so it stays visible on light and dark backgrounds."""
    length = float(np.hypot(end[0] - start[0], end[1] - start[1]))
    if length < 1:
        return
    tip = min(0.3, 12.0 * thickness / length)
    if dashed:
        n_dashes = max(1, int(length / (8 * thickness)))
        for k in range(n_dashes):
            a, b = k / n_dashes, (k + 0.6) / n_dashes
            p = (int(start[0] + a * (end[0] - start[0])), int(start[1] + a * (end[1] - start[1])))
            q = (int(start[0] + b * (end[0] - start[0])), int(start[1] + b * (end[1] - start[1])))
            cv2.line(scene, p, q, (0, 0, 0), thickness + 2, cv2.LINE_AA)
            cv2.line(scene, p, q, colour, thickness, cv2.LINE_AA)
        cv2.arrowedLine(scene, start, end, colour, thickness, cv2.LINE_AA, tipLength=tip)
        return
    cv2.arrowedLine(scene, start, end, (0, 0, 0), thickness + 2, cv2.LINE_AA, tipLength=tip)
    cv2.arrowedLine(scene, start, end, colour, thickness, cv2.LINE_AA, tipLength=tip)


# COCO-17 (elbow, wrist) pairs: the arm whose forearm best agrees with point_dir starts the ray
_ARMS = ((7, 9), (8, 10))


def _pointing_origin(row: Mapping, direction: Sequence[float]) -> Optional[tuple[float, float]]:
    """Where to start a pointing ray when the table has no point_origin: the wrist whose forearm points
    most along ``direction``, else the centre of the first seen hand box."""
    keypoints = row.get("keypoints")
    best, best_score = None, -2.0
    if keypoints is not None and len(keypoints) >= 51:
        kp = np.asarray(keypoints, np.float32).reshape(17, 3)
        for elbow, wrist in _ARMS:
            if not (np.isfinite(kp[[elbow, wrist], :2]).all() and kp[wrist, 2] > 0.2):
                continue
            forearm = kp[wrist, :2] - kp[elbow, :2]
            norm = np.linalg.norm(forearm)
            score = float(forearm @ np.asarray(direction[:2], np.float32) / norm) if norm > 0 else -1.0
            if score > best_score:
                best, best_score = (float(kp[wrist, 0]), float(kp[wrist, 1])), score
    if best is not None:
        return best
    for hand in row.get("hand_bboxes") or []:
        if _valid(hand, 4):
            return ((hand[0] + hand[2]) / 2, (hand[1] + hand[3]) / 2)
    return None


# --- the command --------------------------------------------------------------------------------

@dataclass
class ClipTables:
    """What render needs from the output folder for one clip."""

    status: dict
    fps: float
    tracks: pa.Table
    events: list[dict]
    objects: Optional[pa.Table]


def load_clip(out: str | OutputStore, video_id: str) -> ClipTables:
    """Status and tables of a clip that finished ok; RenderError (naming the clip and why) otherwise."""
    try:
        store = open_output(out)
    except InspectError as exc:
        raise RenderError(str(exc)) from None
    status = store.read_status(video_id)
    if status is None:
        known = sorted(s["video_id"] for s in store.iter_statuses())
        raise RenderError(f"{store.uri}: no clip {video_id!r} (known: {', '.join(known) or 'none'})")
    if status.get("status") != "ok":
        reason = status.get("error") or "no reason recorded"
        raise RenderError(f"{video_id}: the run did not finish this clip (status {status.get('status')}: {reason}); "
                          "there are no tracks to draw")
    tracks = store.read_video_table("tracks", video_id)
    if tracks is None:
        raise RenderError(f"{store.partition_file('tracks', video_id)}: missing tracks for a clip whose status is ok")
    events = store.read_video_table("events", video_id)
    return ClipTables(status=status, fps=sampling_fps(store), tracks=tracks,
                      events=events.to_pylist() if events is not None else [],
                      objects=store.read_video_table("objects", video_id))


def render_video(out: str | OutputStore, video_id: str, dest: str | Path, *, native_fps: bool = False,
                 max_side: int = DEFAULT_MAX_SIDE) -> RenderResult:
    """Render one clip of an output folder to ``dest`` (H.264 mp4). One output frame per sampled frame,
    or per native frame with ``native_fps`` (tracks drawn from the nearest sampled frame). A clip with
    no tracked people still renders (frames and captions only) and says so in ``RenderResult.message``."""
    clip = load_clip(out, video_id)
    status, fps = clip.status, clip.fps
    uri = status["uri"]
    dest = Path(dest)
    if dest.suffix.lower() != ".mp4":
        raise RenderError(f"{dest}: the output must be an .mp4 file")
    dest.parent.mkdir(parents=True, exist_ok=True)

    index = TrackIndex(clip.tracks, fps)
    objects = TrackIndex(clip.objects, fps) if clip.objects is not None and clip.objects.num_rows else None
    n_people = len(set(clip.tracks.column("person_id").to_pylist()))
    half_step = 0.5 / fps
    source_fps = float(status.get("native_fps") or 0.0)
    if native_fps:
        if source_fps <= 0:
            raise RenderError(f"{video_id}: the status file records no native frame rate for {uri}")
        decode_fps, out_fps = _EVERY_FRAME_FPS, source_fps
    else:
        # playback at the sampling rate, unless the video itself has fewer frames per second
        decode_fps, out_fps = fps, min(fps, source_fps) if source_fps > 0 else fps
    caption_rows = max(1, min(MAX_CAPTION_EVENTS, max_overlap(clip.events, half_step, index.time_of)))

    frames = _frames(uri, decode_fps, max_side, status)
    try:
        first = next(frames)
    except StopIteration:  # iter_frames raises on an empty video; this is belt and braces
        raise RenderError(f"{uri}: no decodable frames") from None
    height, width = first.image.shape[:2]
    painter = OverlayPainter(width, height, caption_rows)
    # H264Writer writes under a temporary name and renames: a failed render never leaves a broken mp4
    with H264Writer(dest, painter.out_width, painter.out_height, out_fps) as writer:
        _write_frames(writer, painter, _chain(first, frames), index, objects, clip.events, video_id,
                      native_fps, half_step, caption_rows, n_people)
    n_frames = writer.n_frames
    expected = status.get("n_frames")
    if not native_fps and expected is not None and expected != n_frames:
        log.warning("%s: rendered %d sampled frames but the run recorded %d", video_id, n_frames, expected)
    message = None
    if n_people == 0:
        message = f"{video_id}: no people were tracked in this clip; the video shows the frames without person overlays"
    return RenderResult(path=dest, n_frames=n_frames, fps=out_fps, width=painter.out_width,
                        height=painter.out_height, n_people=n_people, native_fps=native_fps, message=message)


def _write_frames(writer: H264Writer, painter: OverlayPainter, frames: Iterator, index: TrackIndex,
                  objects: Optional[TrackIndex], events: Sequence[Mapping], video_id: str, native_fps: bool,
                  half_step: float, caption_rows: int, n_people: int) -> None:
    for sampled in frames:
        rows = index.rows_at(sampled.t)
        object_rows = objects.rows_at(sampled.t) if objects is not None else []
        header = (f"{video_id}  t={sampled.t:6.2f} s  "
                  + (f"frame {sampled.native_frame_idx}" if native_fps else f"sample {sampled.frame_idx}"))
        lines = caption_lines(active_events(events, sampled.t, half_step, index.time_of), caption_rows)
        if n_people == 0 and not lines:
            lines = ["no people tracked in this clip"]
        bgr = np.ascontiguousarray(sampled.image[..., ::-1])  # RGB -> BGR, see the module docstring
        writer.write(painter.draw(bgr, rows, object_rows, header, lines))


def max_overlap(events: Sequence[Mapping], half_step: float,
                time_of: Optional[Callable[[int], Optional[float]]] = None) -> int:
    """The largest number of events active at one moment (sizes the caption strip once per video)."""
    marks = []
    for e in events:
        marks.append((e["start_time"] - half_step, 1))
        marks.append((_shown_until(e, half_step, time_of), -1))
    best = current = 0
    for _, delta in sorted(marks, key=lambda m: (m[0], m[1])):
        current += delta
        best = max(best, current)
    return best


def _frames(uri: str, fps: float, max_side: int, status: Mapping) -> Iterator:
    """Sampled frames of the clip's source (the same sampling perception used, the clip's last frame
    included), with a clear error."""
    from pipeline.video import VideoError

    try:
        yield from iter_frames(uri, fps, max_side, sample_end=True)
    except VideoError as exc:
        raise RenderError(f"cannot read the source video of {status['video_id']}: {exc}") from exc


def _chain(first, rest: Iterator) -> Iterator:
    yield first
    yield from rest
