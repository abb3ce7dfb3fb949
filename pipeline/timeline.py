"""`socialtrace render --timeline`: one picture of a clip's social events over time (matplotlib, Agg).

One row per person: a thin grey line where the person is tracked, gaze_at segments coloured by what they
look at (another person in that person's box colour, objects/camera/elsewhere in the render's gaze colours),
gesture events as hatched bars; mutual gaze, joint attention and attention capture as bands linking the
rows of the people involved; gaze following as an arrow from leader to follower; QA time ranges as ticks
in a lane below, labelled with the category code.

``build_timeline`` turns the tables into plain segments (testable without drawing); ``draw_timeline``
draws them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

import pyarrow as pa

from pipeline.annotate import people, person_color, person_label
from qa_gen.events_view import event_from_row
from qa_gen.wording import event_type_name, target_phrase
from pipeline.render import GAZE_TARGET_COLORS, POINTING_COLOR

GESTURE_COLORS = {"pointing": POINTING_COLOR, "reaching": (70, 130, 255), "showing": (200, 90, 255),
                  "giving": (255, 120, 190)}
BAND_COLORS = {"mutual_gaze": (230, 30, 30), "joint_attention": (20, 150, 230), "attention_capture": (150, 60, 200)}
BAND_EVENT_TYPES = tuple(BAND_COLORS)
MAX_QA_LANES = 12  # QA ticks are stacked into lanes so they do not overlap; beyond this they share lanes


@dataclass(frozen=True)
class Segment:
    """A coloured interval on a person's row."""

    person_id: int
    start: float
    end: float
    color: tuple[int, int, int]  # RGB
    label: str  # legend entry
    hatch: str = ""


@dataclass(frozen=True)
class Band:
    """An interval linking the rows of ``person_ids`` (an interaction between them)."""

    event_type: str
    person_ids: tuple[int, ...]
    start: float
    end: float


@dataclass(frozen=True)
class Arrow:
    """Leader -> follower (gaze following), drawn from the leader's row at ``start`` to the follower's at
    ``end``."""

    leader_id: int
    follower_id: int
    start: float
    end: float


@dataclass(frozen=True)
class QATick:
    category: str
    start: float
    end: float
    lane: int


@dataclass
class TimelineData:
    duration: float
    person_ids: list[int]
    presence: list[Segment] = field(default_factory=list)
    gaze: list[Segment] = field(default_factory=list)
    gestures: list[Segment] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    markers: list[tuple[int, float, str]] = field(default_factory=list)  # (person_id, t, event_type)
    qa: list[QATick] = field(default_factory=list)


def gaze_target_style(event: Mapping) -> tuple[tuple[int, int, int], str, str]:
    """(colour, legend label, hatch) of a gaze_at event's target; the label is the target's phrasing in
    qa_gen/wording.py, as captions and QA name it."""
    target = event_from_row(event).target
    label = f"-> {target_phrase(target)}"
    if target is not None and target.kind in ("person", "hands"):
        return person_color(target.person_id), label, "///" if target.kind == "hands" else ""
    if target is not None and target.kind == "object":
        return GAZE_TARGET_COLORS["object"], label, ""
    key = target.kind if target is not None and target.kind in GAZE_TARGET_COLORS else "elsewhere"
    return GAZE_TARGET_COLORS[key], label if target is not None else "-> elsewhere", ""


def _presence(tracks: pa.Table, fps: float, duration: Optional[float] = None) -> list[Segment]:
    """Runs of consecutive sampled frames in which each person is tracked, [first t, last t + 1/fps)
    like the events' intervals, never past the clip's ``duration`` (when known)."""
    segments = []
    step = 1.0 / fps
    rows = sorted(tracks.select(["person_id", "frame_idx", "t"]).to_pylist(), key=lambda r: (r["person_id"], r["frame_idx"]))
    run_start = previous = None
    for row in rows + [None]:
        continues = (row is not None and previous is not None and row["person_id"] == previous["person_id"]
                     and row["frame_idx"] == previous["frame_idx"] + 1)
        if previous is not None and not continues:
            end = previous["t"] + step if not duration else max(min(previous["t"] + step, duration), previous["t"])
            segments.append(Segment(previous["person_id"], run_start["t"], end, (150, 150, 150), "tracked"))
        if not continues:
            run_start = row
        previous = row
    return segments


def _assign_lanes(ranges: Sequence[tuple[float, float]]) -> list[int]:
    """Greedy interval stacking: each range goes to the lowest lane whose last range has ended."""
    lane_ends: list[float] = []
    lanes = [0] * len(ranges)
    for i in sorted(range(len(ranges)), key=lambda k: ranges[k]):
        start, end = ranges[i]
        for lane, lane_end in enumerate(lane_ends):
            if start > lane_end:
                lane_ends[lane] = end
                lanes[i] = lane
                break
        else:
            if len(lane_ends) < MAX_QA_LANES:
                lane_ends.append(end)
                lanes[i] = len(lane_ends) - 1
            else:  # full: share the lane that frees up first
                lane = min(range(len(lane_ends)), key=lane_ends.__getitem__)
                lane_ends[lane] = max(lane_ends[lane], end)
                lanes[i] = lane
    return lanes


def build_timeline(tracks: pa.Table, events: Optional[pa.Table], qa: Optional[pa.Table], fps: float,
                   duration: Optional[float] = None) -> TimelineData:
    """Everything the timeline draws, from one video's tables."""
    event_rows = events.to_pylist() if events is not None else []
    qa_rows = qa.to_pylist() if qa is not None else []
    # item times count from their QA unit's start; the timeline is in video time
    ranges = [(q["time_range"][0] + (q.get("unit_start") or 0.0), q["time_range"][1] + (q.get("unit_start") or 0.0))
              for q in qa_rows]
    persons = set(tracks.column("person_id").to_pylist())
    for event in event_rows:
        persons.update(event["persons_involved"] or [])
    end_times = [e["end_time"] for e in event_rows] + [b for _, b in ranges]
    if tracks.num_rows:
        end_times.append(max(tracks.column("t").to_pylist()) + 1.0 / fps)
    data = TimelineData(duration=float(duration or max(end_times, default=1.0)), person_ids=sorted(persons))
    data.presence = _presence(tracks, fps, duration)
    for event in sorted(event_rows, key=lambda e: (e["start_time"], e["event_id"])):
        kind, source = event["event_type"], event["source"]
        # end_time is exclusive (one step after the last frame); an event is at least one step wide
        start, end = event["start_time"], max(event["end_time"], event["start_time"] + 1.0 / fps)
        who = event.get("initiator_id")
        if who is None and len(event["persons_involved"] or []) == 1:
            who = event["persons_involved"][0]
        if kind == "gaze_at" and who is not None:
            colour, label, hatch = gaze_target_style(event)
            data.gaze.append(Segment(who, start, end, colour, label, hatch))
        elif source == "gesture" and who is not None:
            data.gestures.append(Segment(who, start, end, GESTURE_COLORS.get(kind, (120, 120, 120)), event_type_name(kind), "xx"))
        elif kind in BAND_EVENT_TYPES:
            data.bands.append(Band(kind, tuple(sorted(event["persons_involved"] or [])), start, end))
        elif kind == "gaze_following" and event.get("leader_id") is not None and event.get("follower_id") is not None:
            lag = event.get("lag_seconds") or 0.0
            data.arrows.append(Arrow(event["leader_id"], event["follower_id"], start, start + lag))
        elif kind in ("sudden_gaze_shift", "gaze_aversion") and who is not None:
            data.markers.append((who, start, kind))
    order = sorted(range(len(qa_rows)), key=lambda i: (ranges[i], qa_rows[i]["category"]))
    lanes = _assign_lanes([ranges[i] for i in order])
    data.qa = [QATick(qa_rows[i]["category"], ranges[i][0], ranges[i][1], lane) for i, lane in zip(order, lanes)]
    return data


def _mpl(rgb: tuple[int, int, int], alpha: float = 1.0) -> tuple[float, float, float, float]:
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255, alpha)


def draw_timeline(data: TimelineData, path: str | Path, title: str = "") -> Path:
    """Draw ``data`` to a PNG at ``path`` and return the path."""
    import matplotlib

    matplotlib.use("Agg", force=False)  # no display needed; a no-op if a backend is already chosen
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n_people = max(1, len(data.person_ids))
    n_lanes = max((tick.lane for tick in data.qa), default=-1) + 1
    heights = [0.9 * n_people + 0.6, 0.25 * max(n_lanes, 1) + 0.5]
    fig, (ax, ax_qa) = plt.subplots(2, 1, sharex=True, figsize=(11, sum(heights) + 1.4),
                                    gridspec_kw={"height_ratios": heights}, constrained_layout=True)
    row_of = {pid: i for i, pid in enumerate(data.person_ids)}
    legend: dict[str, Patch] = {}

    for seg in data.presence:
        ax.plot([seg.start, min(seg.end, data.duration)], [row_of[seg.person_id] + 0.36] * 2, color="0.55", lw=2.0, zorder=1,
                solid_capstyle="butt")
        legend.setdefault("tracked", plt.Line2D([], [], color="0.55", lw=2.0, label="tracked (person visible)"))
    for band in data.bands:
        rows = [row_of[p] for p in band.person_ids if p in row_of] or [0]
        colour = BAND_COLORS[band.event_type]
        ax.add_patch(plt.Rectangle((band.start, min(rows) - 0.42), band.end - band.start, max(rows) - min(rows) + 0.84,
                                   facecolor=_mpl(colour, 0.13), edgecolor=_mpl(colour, 0.9), lw=1.5, zorder=0))
        legend.setdefault(band.event_type, Patch(facecolor=_mpl(colour, 0.13), edgecolor=_mpl(colour, 0.9),
                                                 label=event_type_name(band.event_type)))
    for seg in data.gaze:
        y = row_of[seg.person_id]
        ax.broken_barh([(seg.start, seg.end - seg.start)], (y - 0.28, 0.3), facecolors=_mpl(seg.color, 0.9),
                       edgecolor="0.2", lw=0.6, hatch=seg.hatch or None, zorder=2)
        legend.setdefault("gaze " + seg.label, Patch(facecolor=_mpl(seg.color, 0.9), edgecolor="0.2",
                                                     hatch=seg.hatch or None, label="gaze " + seg.label))
    for seg in data.gestures:
        y = row_of[seg.person_id]
        ax.broken_barh([(seg.start, seg.end - seg.start)], (y + 0.06, 0.22), facecolors=_mpl(seg.color, 0.75),
                       edgecolor="0.1", lw=0.8, hatch=seg.hatch, zorder=3)
        legend.setdefault("gesture " + seg.label, Patch(facecolor=_mpl(seg.color, 0.75), edgecolor="0.1",
                                                        hatch=seg.hatch, label=seg.label))
    for arrow in data.arrows:
        if arrow.leader_id in row_of and arrow.follower_id in row_of:
            ax.annotate("", xy=(arrow.end, row_of[arrow.follower_id]), xytext=(arrow.start, row_of[arrow.leader_id]),
                        arrowprops={"arrowstyle": "->", "color": "0.15", "lw": 1.4}, zorder=4)
            legend.setdefault("gaze following", Patch(facecolor="white", edgecolor="0.15", label="gaze following (arrow)"))
    for person_id, t, kind in data.markers:
        marker = "v" if kind == "sudden_gaze_shift" else "x"
        ax.plot([t], [row_of[person_id] - 0.36], marker=marker, color="0.1", ms=6, zorder=5, ls="none")
        legend.setdefault(kind, plt.Line2D([], [], marker=marker, color="0.1", ls="none", label=event_type_name(kind)))

    ax.set_yticks(range(n_people))
    ax.set_yticklabels([person_label(p) for p in data.person_ids] or ["(nobody)"])
    for tick, pid in zip(ax.get_yticklabels(), data.person_ids):
        tick.set_color(_mpl(person_color(pid)))
        tick.set_fontweight("bold")
    ax.set_ylim(n_people - 0.5, -0.5)  # Person 0 on top
    ax.set_xlim(0, max(data.duration, 1e-3))
    ax.grid(axis="x", color="0.9", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title or "timeline", loc="left", fontsize=11)
    if legend:
        ax.legend(handles=list(legend.values()), loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8,
                  frameon=False)

    for tick in data.qa:
        ax_qa.plot([tick.start, tick.end], [tick.lane, tick.lane], color="0.25", lw=1.6, solid_capstyle="butt")
        ax_qa.plot([tick.start, tick.end], [tick.lane, tick.lane], marker="|", color="0.25", ms=7, ls="none")
        ax_qa.text(tick.start, tick.lane - 0.12, tick.category, fontsize=7, va="bottom", ha="left", color="0.15")
    ax_qa.set_ylim(max(n_lanes, 1) - 0.4, -0.8)
    ax_qa.set_yticks([])
    ax_qa.set_ylabel(f"QA ({len(data.qa)})", rotation=0, ha="right", va="center")
    ax_qa.set_xlabel("time (s)")
    ax_qa.grid(axis="x", color="0.9", lw=0.6)
    if not data.qa:
        ax_qa.text(0.5, 0.5, "no QA items", transform=ax_qa.transAxes, ha="center", va="center", color="0.5")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_timeline(out, video_id: str, path: str | Path) -> Path:
    """Build and draw the timeline of one clip of an output folder (``out``: path, URI or OutputStore)."""
    from pipeline.render import load_clip
    from pipeline.storage import OutputStore

    clip = load_clip(out, video_id)  # the same checks as render: the clip exists and finished ok
    store = out if isinstance(out, OutputStore) else OutputStore(str(out))
    events = store.read_video_table("events", video_id)
    qa = store.read_video_table("qa", video_id)
    data = build_timeline(clip.tracks, events, qa, clip.fps, clip.status.get("duration_s"))
    title = (f"{video_id}: {people(len(data.person_ids))}, {len(clip.events)} events, "
             f"{0 if qa is None else qa.num_rows} QA items")
    return draw_timeline(data, path, title)
