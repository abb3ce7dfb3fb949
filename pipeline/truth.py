"""By-eye ground truth of annotated clips (the format of shared/media/truth: persons.csv, truth.csv,
intervals.csv, frames_map.csv) and what it says a person looks at or does at an instant.

Truth times are PyAV presentation times (``frame.time``) of the decoded frames ``frames_map.csv`` names.
Scoring (pipeline/accuracy.py) converts them to the run's clock with ``ClipTruth.to_run_time``, so a
clip whose first frame has pts > 0 is aligned whichever zero the run used.
"""
from __future__ import annotations

import csv
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional, Sequence

from pipeline.inputs import sanitise_id

TRUTH_FILES = ("persons.csv", "truth.csv", "intervals.csv", "frames_map.csv")
UNSURE = "unsure"
GAZE_KINDS = ("person", "hands", "object", "camera", "elsewhere")
INTERVAL_KINDS = ("mutual_gaze", "joint_attention", "pointing", "giving", "showing", "reaching", "shot_cut",
                  "enters", "leaves")
GESTURE_INTERVAL_KINDS = ("pointing", "giving", "showing", "reaching")


class TruthError(ValueError):
    """The ground truth cannot be read or does not cover what was asked; the message names the file or
    clip and the reason."""


def typed_target(value: str) -> str:
    """A gaze / pointing target as the run can express it: ``person:<label>``, ``hands:<label>``,
    ``object`` (which object is not compared: no object detector runs by default), ``camera``,
    ``elsewhere``, or ``unsure``."""
    value = value.strip()
    if value.startswith("object"):
        return "object"
    return value


def target_kind(typed: str) -> str:
    """``person`` / ``hands`` / ``object`` / ``camera`` / ``elsewhere`` / ... of a typed target."""
    return typed.split(":", 1)[0]


@dataclass(frozen=True)
class TruthRow:
    """One annotated person at one annotated instant."""

    t: float  # the annotated time as written (0.25 s grid)
    pts: float  # pts of the decoded frame the row describes
    person: str  # label (A, B, ...)
    head: tuple[float, float]  # normalised centre of the head
    gaze: str  # typed target (see typed_target) or "unsure"
    pointing_at: str  # typed target, or "" when not pointing
    gesture: str

    @property
    def definite(self) -> bool:
        return self.gaze != UNSURE


@dataclass(frozen=True)
class TruthInterval:
    kind: str
    persons: tuple[str, ...]  # pointing and other gestures: the gesturer first
    start: float  # pts seconds
    end: float
    note: str = ""


@dataclass
class ClipTruth:
    """The annotation of one clip. ``first_pts``: pts of decoded frame 0 (0.08 s in one clip)."""

    clip: str  # file name as in the truth files
    labels: tuple[str, ...]
    rows: list[TruthRow]
    intervals: list[TruthInterval]
    first_pts: float = 0.0
    run_zero: float = 0.0  # the run's time of decoded frame 0 (see align)
    _index: Optional[tuple] = field(default=None, init=False, repr=False, compare=False)

    @property
    def video_id(self) -> str:
        return sanitise_id(PurePosixPath(self.clip).stem)

    def align(self, run_zero: float) -> None:
        """Tell the truth which run time decoded frame 0 has (the run may count from the stream start,
        from the first frame, or from pts 0)."""
        self.run_zero = float(run_zero)
        self._index = None

    def to_run_time(self, pts: float) -> float:
        return pts - self.first_pts + self.run_zero

    def _indexed(self) -> tuple[list[float], dict[str, tuple[list[float], list[TruthRow]]]]:
        """Instants and per-label (times, rows) on the run's clock, built once per alignment."""
        if self._index is None:
            per_label: dict[str, tuple[list[float], list[TruthRow]]] = {}
            for r in sorted(self.rows, key=lambda r: r.pts):
                times, rows = per_label.setdefault(r.person, ([], []))
                times.append(self.to_run_time(r.pts))
                rows.append(r)
            self._index = (sorted({self.to_run_time(r.pts) for r in self.rows}), per_label)
        return self._index

    def times(self) -> list[float]:
        """Annotated instants on the run's clock, ascending."""
        return self._indexed()[0]

    def row(self, label: str, time: float, tolerance: float = 0.01) -> Optional[TruthRow]:
        """The row of ``label`` at run time ``time`` (an annotated instant), or None when not in view."""
        times, rows = self._indexed()[1].get(label, ([], []))
        i = bisect_left(times, time - tolerance)
        if i < len(times) and times[i] <= time + tolerance:
            return rows[i]
        return None

    def gaze_at(self, label: str, time: float) -> Optional[str]:
        """Typed gaze of ``label`` at an annotated instant; None when the person is not in view then."""
        r = self.row(label, time)
        return None if r is None else r.gaze

    def instants(self, a: float, b: float) -> list[float]:
        """Annotated instants (run clock) inside [a, b]."""
        times = self.times()
        return times[bisect_left(times, a - 1e-6): bisect_right(times, b + 1e-6)]

    def intervals_of(self, kind: str) -> list[TruthInterval]:
        return [iv for iv in self.intervals if iv.kind == kind]

    def interval_run_times(self, iv: TruthInterval) -> tuple[float, float]:
        return self.to_run_time(iv.start), self.to_run_time(iv.end)


# DESIGN.md §10: the clips annotated later are the validation set. Develop on the first set; a rule that helps
# only the first set is overfit. Both are reported apart.
VALIDATION_CLIPS = frozenset({"mmaction2_hug_lab", "yakhyo_classroom_group", "pyscenedetect_archive_two_women"})
TRUTH_SETS = ("development", "validation")


def truth_set_of(video_id: str) -> str:
    """Which of the truth's two sets a clip belongs to."""
    return "validation" if video_id in VALIDATION_CLIPS else "development"


@dataclass
class GroundTruth:
    """All annotated clips, by video_id (the sanitised file stem the run uses)."""

    directory: Path
    clips: dict[str, ClipTruth]

    @classmethod
    def load(cls, directory: str | Path) -> "GroundTruth":
        directory = Path(directory)
        if not directory.is_dir():
            raise TruthError(f"{directory}: ground-truth folder not found")
        for name in TRUTH_FILES:
            if not (directory / name).is_file():
                raise TruthError(f"{directory / name}: missing ground-truth file (need {', '.join(TRUTH_FILES)})")
        persons = _read_csv(directory / "persons.csv", ("clip", "person"))
        frames = _read_csv(directory / "frames_map.csv", ("clip", "t", "decoded_frame_index", "frame_pts_s",
                                                          "index_over_fps_s"))
        rows = _read_csv(directory / "truth.csv", ("clip", "t", "person", "head_x", "head_y", "gaze",
                                                   "pointing_at", "gesture"))
        intervals = _read_csv(directory / "intervals.csv", ("clip", "kind", "persons", "start", "end"))

        labels: dict[str, list[str]] = {}
        for r in persons:
            labels.setdefault(r["clip"], []).append(r["person"])
        pts_of: dict[tuple[str, float], float] = {}
        first_pts: dict[str, float] = {}
        for i, r in enumerate(frames, start=2):
            where = f"{directory / 'frames_map.csv'} line {i}"
            pts = _number(r["frame_pts_s"], where)
            pts_of[(r["clip"], round(_number(r["t"], where), 3))] = pts
            first_pts[r["clip"]] = pts - _number(r["index_over_fps_s"], where)
        clips = {clip: ClipTruth(clip, tuple(names), [], [], first_pts.get(clip, 0.0)) for clip, names in labels.items()}

        for i, r in enumerate(rows, start=2):
            where = f"{directory / 'truth.csv'} line {i}"
            clip = _clip_of(clips, r["clip"], where)
            if r["person"] not in clip.labels:
                raise TruthError(f"{where}: person {r['person']!r} is not in persons.csv for {r['clip']}")
            t = _number(r["t"], where)
            gaze = typed_target(r["gaze"])
            if gaze != UNSURE and target_kind(gaze) not in GAZE_KINDS:
                raise TruthError(f"{where}: gaze {r['gaze']!r} is not one of {GAZE_KINDS} or unsure")
            clip.rows.append(TruthRow(
                t=t, pts=pts_of.get((r["clip"], round(t, 3)), t), person=r["person"],
                head=(_number(r["head_x"], where), _number(r["head_y"], where)), gaze=gaze,
                pointing_at=typed_target(r["pointing_at"]) if r["pointing_at"].strip() else "",
                gesture=r["gesture"].strip()))
        for i, r in enumerate(intervals, start=2):
            where = f"{directory / 'intervals.csv'} line {i}"
            clip = _clip_of(clips, r["clip"], where)
            if r["kind"] not in INTERVAL_KINDS:
                raise TruthError(f"{where}: interval kind {r['kind']!r} is not one of {INTERVAL_KINDS}")
            start, end = _number(r["start"], where), _number(r["end"], where)
            if end < start:
                raise TruthError(f"{where}: interval ends ({end}) before it starts ({start})")
            clip.intervals.append(TruthInterval(r["kind"], tuple(p for p in r["persons"].split("+") if p),
                                                start, end, r.get("note") or ""))
        for clip in clips.values():
            clip.rows.sort(key=lambda row: (row.pts, row.person))
        return cls(directory, {c.video_id: c for c in clips.values()})

    def clip(self, video_id: str) -> ClipTruth:
        try:
            return self.clips[video_id]
        except KeyError:
            raise TruthError(f"{self.directory}: no ground truth for clip {video_id!r} "
                             f"(annotated: {', '.join(sorted(self.clips))})") from None

    def video_ids(self, truth_set: Optional[str] = None) -> list[str]:
        """Annotated clips, all or those of one set ("development" | "validation")."""
        if truth_set is not None and truth_set not in TRUTH_SETS:
            raise TruthError(f"unknown truth set {truth_set!r} (sets: {', '.join(TRUTH_SETS)})")
        return sorted(v for v in self.clips if truth_set is None or truth_set_of(v) == truth_set)


def _read_csv(path: Path, required: Sequence[str]) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in required if c not in (reader.fieldnames or [])]
            if missing:
                raise TruthError(f"{path}: missing column(s) {missing} (header: {reader.fieldnames})")
            return [{k: (v or "") for k, v in row.items() if k is not None} for row in reader]
    except UnicodeDecodeError as exc:
        raise TruthError(f"{path}: not UTF-8 text ({exc})") from None


def _number(value: str, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise TruthError(f"{where}: {value!r} is not a number") from None


def _clip_of(clips: dict[str, ClipTruth], name: str, where: str) -> ClipTruth:
    if name not in clips:
        raise TruthError(f"{where}: clip {name!r} is not in persons.csv")
    return clips[name]
