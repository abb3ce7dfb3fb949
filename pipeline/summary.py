"""`socialtrace inspect`: what a run produced, computed from the stored tables (not from the status
counters, which it cross-checks), as plain dicts that print as rich tables or as JSON.

Two views: ``summarize_run`` (the corpus: clips ok/failed, people, events by type and source, QA by
category and difficulty, answer-letter balance, validation drops) and ``summarize_video`` (one clip: its
people with screen time, its events in time order, its QA items).
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc
from rich.console import Console
from rich.table import Table

from pipeline.annotate import person_label
from pipeline.plurals import plural
from qa_gen.blind_baselines import leave_one_video_out
from qa_gen.wording import describe_row
from pipeline.storage import OutputStore

ANSWER_LETTERS = ("A", "B", "C", "D")
DIFFICULTIES = ("easy", "medium", "hard")
QA_FORMATS = ("mcq", "open_ended")


class InspectError(ValueError):
    """The output folder or the requested video cannot be inspected; the message says why."""


# --- loading ------------------------------------------------------------------------------------

def open_output(out: str | OutputStore) -> OutputStore:
    """The OutputStore of a finished `socialtrace run`, or InspectError when ``out`` is not one."""
    store = out if isinstance(out, OutputStore) else OutputStore(str(out))
    if store.read_json(store.path("run.json")) is None:
        raise InspectError(f"{store.uri}: not a socialtrace output folder (no run.json); "
                           "create one with `socialtrace run`")
    return store


def sampling_fps(store: OutputStore) -> float:
    """Frames per second the run sampled (from run.json): one tracks row covers 1/fps seconds."""
    record = store.read_json(store.path("run.json")) or {}
    fps = (record.get("config") or {}).get("sampling", {}).get("fps")
    if not fps or fps <= 0:
        raise InspectError(f"{store.path('run.json')}: no positive sampling.fps in the recorded config")
    return float(fps)


# --- small helpers ------------------------------------------------------------------------------

def _value_counts(table: pa.Table, keys: list[str]) -> list[dict]:
    """Row counts per distinct combination of ``keys`` (sorted by keys)."""
    if table.num_rows == 0:
        return []
    grouped = table.group_by(keys).aggregate([([], "count_all")]).to_pylist()
    rows = [{**{k: row[k] for k in keys}, "count": int(row["count_all"])} for row in grouped]
    return sorted(rows, key=lambda r: tuple("" if r[k] is None else str(r[k]) for k in keys))


def _persons_per_video(tracks: pa.Table) -> dict[str, int]:
    if tracks.num_rows == 0:
        return {}
    grouped = tracks.group_by("video_id").aggregate([("person_id", "count_distinct")])
    return dict(zip(grouped.column("video_id").to_pylist(),
                    (int(v) for v in grouped.column("person_id_count_distinct").to_pylist())))


def _rows_per_video(table: pa.Table) -> dict[str, int]:
    return {row["video_id"]: row["count"] for row in _value_counts(table.select(["video_id"]), ["video_id"])}


def describe_event(event: Mapping[str, Any]) -> str:
    """A short sentence for one events row (who, what, whom), used by inspect and render captions: the one
    event phrasing of qa_gen/wording.py, so captions, summaries and QA say the same thing."""
    return describe_row(event)


# --- corpus view --------------------------------------------------------------------------------

def summarize_run(out: str | OutputStore) -> dict:
    """Counts over the whole output folder, computed from the tables. Keys: out, fps, clips
    (total/ok/failed/skipped), clip_list (one dict per clip), failed (video_id, uri, error), events_total,
    events_by_source, events_by_type, qa_total, qa_by_category, qa_by_difficulty, qa_by_format,
    answer_letters, qa_dropped, blind_baselines (per category, the accuracy of each text-only guesser
    fitted on the other videos' items: qa_gen/blind_baselines.py leave_one_video_out), warnings (status
    counters that disagree with the tables)."""
    store = open_output(out)
    statuses = list(store.iter_statuses())
    tracks = store.read_table("tracks").select(["video_id", "person_id", "frame_idx"])
    events = store.read_table("events").select(["video_id", "source", "event_type"])
    qa = store.read_table("qa").select(["video_id", "category", "category_name", "difficulty", "format", "answer"])

    persons = _persons_per_video(tracks)
    event_rows = _rows_per_video(events)
    qa_rows = _rows_per_video(qa)
    status_counts = Counter(s.get("status", "unknown") for s in statuses)

    clip_list, failed, warnings = [], [], []
    for status in statuses:
        video_id = status["video_id"]
        ok = status.get("status") == "ok"
        clip = {
            "video_id": video_id,
            "status": status.get("status"),
            "error": status.get("error"),
            "backend": status.get("backend"),
            "duration_s": status.get("duration_s"),
            "n_frames": status.get("n_frames"),
            "n_persons": persons.get(video_id, 0) if ok else None,
            "n_events": event_rows.get(video_id, 0) if ok else None,
            "n_qa": qa_rows.get(video_id, 0) if ok else None,
            "qa_dropped": int(sum((status.get("qa_dropped") or {}).values())) if ok else None,
            "n_units": len(status.get("units") or []) if ok else None,
        }
        clip_list.append(clip)
        if status.get("status") == "failed":
            failed.append({"video_id": video_id, "uri": status.get("uri"), "error": status.get("error")})
        if ok:
            for key in ("n_persons", "n_events", "n_qa"):
                recorded = status.get(key)
                if recorded is not None and recorded != clip[key]:
                    warnings.append(f"{video_id}: status file says {key}={recorded} but the table has {clip[key]}")

    known = {s["video_id"] for s in statuses}
    for table_name, per_video in (("tracks", persons), ("events", event_rows), ("qa", qa_rows)):
        for video_id in sorted(set(per_video) - known):
            warnings.append(f"{video_id}: has {table_name} rows but no status file (an interrupted run?)")

    by_category = _qa_by_category(qa)
    dropped = Counter()
    for status in statuses:
        dropped.update({k: int(v) for k, v in (status.get("qa_dropped") or {}).items()})

    mcq = qa.filter(pc.equal(qa.column("format"), "mcq")) if qa.num_rows else qa
    letters = Counter(mcq.column("answer").to_pylist()) if mcq.num_rows else Counter()
    record = store.read_json(store.path("run.json")) or {}
    inputs = record.get("inputs")
    return {
        "out": store.uri,
        # the latest `socialtrace run`: running (or killed while running), interrupted, finished
        "run": {"state": record.get("state", "finished"), "inputs": None if inputs is None else len(inputs),
                "inputs_finished": None if inputs is None else len(set(inputs) & known)},
        "fps": sampling_fps(store),
        "clips": {"total": len(statuses), "ok": status_counts.get("ok", 0),
                  "failed": status_counts.get("failed", 0), "skipped": status_counts.get("skipped", 0)},
        "clip_list": clip_list,
        "failed": failed,
        "events_total": events.num_rows,
        "events_by_source": {r["source"]: r["count"] for r in _value_counts(events, ["source"])},
        "events_by_type": _value_counts(events, ["source", "event_type"]),
        "qa_total": qa.num_rows,
        "qa_by_category": by_category,
        "qa_by_difficulty": {d: sum(c[d] for c in by_category) for d in DIFFICULTIES},
        "qa_by_format": {f: sum(c[f] for c in by_category) for f in QA_FORMATS},
        "answer_letters": {letter: int(letters.get(letter, 0)) for letter in ANSWER_LETTERS},
        "qa_dropped": dict(sorted(dropped.items())),
        "blind_baselines": _blind_baselines(store) if mcq.num_rows else {},
        "warnings": warnings,
    }


def _blind_baselines(store: OutputStore) -> dict:
    columns = ["video_id", "category", "format", "question", "options", "answer", "template"]
    return leave_one_video_out(store.read_table("qa").select(columns).to_pylist())


def _qa_by_category(qa: pa.Table) -> list[dict]:
    """One row per category: total, per difficulty, per format."""
    rows: dict[str, dict] = {}
    for item in qa.select(["category", "category_name", "difficulty", "format"]).to_pylist():
        row = rows.setdefault(item["category"], {
            "category": item["category"], "category_name": item["category_name"], "total": 0,
            **{d: 0 for d in DIFFICULTIES}, **{f: 0 for f in QA_FORMATS}})
        row["total"] += 1
        if item["difficulty"] in DIFFICULTIES:
            row[item["difficulty"]] += 1
        if item["format"] in QA_FORMATS:
            row[item["format"]] += 1
    return [rows[code] for code in sorted(rows, key=_category_order)]


def _category_order(code: str) -> tuple[int, int, str]:
    family = {"T": 0, "G": 1, "C": 2}.get(code[:1], 3)
    number = int(code[1:]) if code[1:].isdigit() else 99
    return family, number, code


# --- one video ----------------------------------------------------------------------------------

def summarize_video(out: str | OutputStore, video_id: str) -> dict:
    """One clip: its status, people (frames seen, screen time = frames seen / sampling fps, first and last
    time seen, mean detection confidence, gaze-target mix, pointing frames), events in time order with a
    description, and QA items."""
    store = open_output(out)
    status = store.read_status(video_id)
    if status is None:
        known = sorted(s["video_id"] for s in store.iter_statuses())
        raise InspectError(f"{store.uri}: no clip {video_id!r} (known: {', '.join(known) or 'none'})")
    fps = sampling_fps(store)
    summary: dict[str, Any] = {
        "video_id": video_id,
        "status": {k: v for k, v in status.items() if k not in ("timings", "shots", "units")},
        "timings": status.get("timings") or {},
        "fps": fps,
        "people": [],
        "events": [],
        "qa": [],
        "n_shots": len(status.get("shots") or []),
        "units": [{**unit, "n_shots": len(unit.get("shot_ids") or [])} for unit in status.get("units") or []],
    }
    if status.get("status") != "ok":
        return summary
    tracks = store.read_video_table("tracks", video_id)
    events = store.read_video_table("events", video_id)
    qa = store.read_video_table("qa", video_id)
    if tracks is not None:
        summary["people"] = people_summary(tracks, fps)
    if events is not None and events.num_rows:
        ordered = events.sort_by([("start_time", "ascending"), ("end_time", "ascending"), ("event_id", "ascending")])
        for event in ordered.to_pylist():
            summary["events"].append({
                "event_id": event["event_id"], "source": event["source"], "event_type": event["event_type"],
                "start_time": event["start_time"], "end_time": event["end_time"],
                "duration_s": event["end_time"] - event["start_time"],
                "persons_involved": event["persons_involved"], "confidence": event["confidence"],
                "description": describe_event(event),
            })
    if qa is not None and qa.num_rows:
        columns = ["qa_id", "category", "category_name", "difficulty", "format", "question", "options",
                   "answer", "answer_text", "time_range", "persons", "source_event_ids", "unit_id"]
        items = qa.select(columns).to_pylist()
        summary["qa"] = sorted(items, key=lambda q: (q["unit_id"] if q["unit_id"] is not None else -1,
                                                     _category_order(q["category"]), q["time_range"][0], q["qa_id"]))
    return summary


def people_summary(tracks: pa.Table, fps: float) -> list[dict]:
    """Per person of one video's tracks: frames seen, screen_time_s (= frames / fps), first_t, last_t,
    mean det_conf, frames per gaze_target_type, pointing frames."""
    people: dict[int, dict] = {}
    for row in tracks.select(["person_id", "t", "det_conf", "gaze_target_type", "pointing"]).to_pylist():
        person = people.setdefault(row["person_id"], {
            "person_id": row["person_id"], "frames": 0, "first_t": row["t"], "last_t": row["t"],
            "conf_sum": 0.0, "gaze_targets": Counter(), "pointing_frames": 0})
        person["frames"] += 1
        person["first_t"] = min(person["first_t"], row["t"])
        person["last_t"] = max(person["last_t"], row["t"])
        person["conf_sum"] += float(row["det_conf"])
        person["gaze_targets"][row["gaze_target_type"]] += 1
        person["pointing_frames"] += bool(row["pointing"])
    result = []
    for person_id in sorted(people):
        p = people[person_id]
        result.append({
            "person_id": person_id,
            "frames": p["frames"],
            "screen_time_s": p["frames"] / fps,
            "first_t": p["first_t"],
            "last_t": p["last_t"],
            "mean_det_conf": p["conf_sum"] / p["frames"],
            "gaze_targets": dict(sorted(p["gaze_targets"].items())),
            "pointing_frames": p["pointing_frames"],
        })
    return result


# --- printing -----------------------------------------------------------------------------------

def to_json(summary: Mapping[str, Any]) -> str:
    """The summary as indented JSON (what `inspect --json` prints)."""
    return json.dumps(summary, indent=2, default=_json_default)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _num(value: Optional[float], digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_run_summary(summary: Mapping[str, Any], console: Console) -> None:
    """Rich tables of ``summarize_run``'s result."""
    clips = summary["clips"]
    console.print(f"[bold]{summary['out']}[/]: {plural(clips['total'], 'clip')}, [green]{clips['ok']} ok[/], "
                  f"[red]{clips['failed']} failed[/], {clips['skipped']} skipped; sampled at {summary['fps']:g} fps; "
                  f"{summary['events_total']} events, {summary['qa_total']} QA items")

    table = Table(title="Clips", title_justify="left")
    for name, justify in (("video_id", "left"), ("status", "left"), ("seconds", "right"), ("frames", "right"),
                          ("people", "right"), ("events", "right"), ("QA units", "right"), ("QA", "right"),
                          ("QA dropped", "right"),
                          ("error", "left")):
        table.add_column(name, justify=justify, overflow="fold")
    for clip in summary["clip_list"]:
        colour = {"ok": "green", "failed": "red"}.get(clip["status"], "yellow")
        table.add_row(clip["video_id"], f"[{colour}]{clip['status']}[/]", _num(clip["duration_s"]),
                      _str(clip["n_frames"]), _str(clip["n_persons"]), _str(clip["n_events"]), _str(clip["n_units"]), _str(clip["n_qa"]),
                      _str(clip["qa_dropped"]), clip["error"] or "")
    console.print(table)
    run = summary.get("run") or {}
    if run.get("state", "finished") != "finished":
        done = f": {run['inputs_finished']} of its {plural(run['inputs'], 'input')} have a status" if run.get("inputs") else ""
        state = "was interrupted" if run["state"] == "interrupted" else "has not finished (still running, or killed)"
        console.print(f"[yellow]the latest run {state}{done}; the tables hold what finished; rerun the same "
                      f"command to resume[/]")

    if summary["events_by_type"]:
        table = Table(title="Events by type", title_justify="left")
        table.add_column("source")
        table.add_column("event_type")
        table.add_column("count", justify="right")
        for row in summary["events_by_type"]:
            table.add_row(row["source"], row["event_type"], str(row["count"]))
        table.add_section()
        for source, count in summary["events_by_source"].items():
            table.add_row(f"[bold]{source}[/]", "[bold]all[/]", f"[bold]{count}[/]")
        console.print(table)
    else:
        console.print("no events")

    if summary["qa_by_category"]:
        table = Table(title="QA by category", title_justify="left")
        for name in ("code", "category", "total", *DIFFICULTIES, *QA_FORMATS):
            table.add_column(name, justify="left" if name in ("code", "category") else "right")
        for row in summary["qa_by_category"]:
            table.add_row(row["category"], row["category_name"], str(row["total"]),
                          *(str(row[d]) for d in DIFFICULTIES), *(str(row[f]) for f in QA_FORMATS))
        table.add_section()
        table.add_row("", "[bold]all[/]", f"[bold]{summary['qa_total']}[/]",
                      *(str(summary["qa_by_difficulty"][d]) for d in DIFFICULTIES),
                      *(str(summary["qa_by_format"][f]) for f in QA_FORMATS))
        console.print(table)
        letters = summary["answer_letters"]
        n_mcq = sum(letters.values())
        shares = ", ".join(f"{k} {v} ({100 * v / n_mcq:.0f}%)" if n_mcq else f"{k} 0" for k, v in letters.items())
        console.print(f"MCQ answer letters: {shares}")
    else:
        console.print("no QA items")
    if summary["qa_dropped"]:
        console.print("QA items dropped by validation: "
                      + ", ".join(f"{k}={v}" for k, v in summary["qa_dropped"].items()))
    blind = summary.get("blind_baselines") or {}
    if blind:
        names = sorted({k for row in blind.values() for k in row if k != "n"})
        table = Table(title="Blind baselines (text-only guessers, each video scored by guessers fitted on the "
                            "others; chance 0.25)", title_justify="left")
        for name in ("code", "mcq items", *names, "best"):
            table.add_column(name, justify="left" if name == "code" else "right")
        for category, row in blind.items():
            best = max(row[n] for n in names)
            colour = "red" if best > 0.35 and row["n"] >= 5 else "default"
            table.add_row(category, str(int(row["n"])), *(f"{row[n]:.2f}" for n in names), f"[{colour}]{best:.2f}[/]")
        console.print(table)
    for warning in summary["warnings"]:
        console.print(f"[yellow]warning:[/] {warning}")


def print_video_summary(summary: Mapping[str, Any], console: Console) -> None:
    """Rich tables of ``summarize_video``'s result."""
    status = summary["status"]
    head = f"[bold]{summary['video_id']}[/] ({status.get('uri')}): status {status.get('status')}"
    if status.get("status") != "ok":
        console.print(head + f"\n[red]error:[/] {status.get('error')}")
        return
    picture = status.get("picture")
    bars = ""
    if picture and status.get("width") and status.get("height"):  # read inside black bars or a fill (pipeline/picture.py)
        x0, y0, x1, y1 = picture
        bars = (f" (picture {round((x1 - x0) * status['width'])}x{round((y1 - y0) * status['height'])} inside "
                f"bars or fill)")
    console.print(head + f", {_num(status.get('duration_s'), 2)} s, {status.get('width')}x{status.get('height')}{bars}, "
                  f"{status.get('n_frames')} frames at {summary['fps']:g} fps, backend {status.get('backend') or '?'}")

    table = Table(title="People", title_justify="left")
    for name in ("person", "frames", "screen time s", "first s", "last s", "det conf", "gaze targets (frames)",
                 "pointing frames"):
        table.add_column(name, justify="left" if name in ("person", "gaze targets (frames)") else "right")
    for p in summary["people"]:
        mix = ", ".join(f"{k} {v}" for k, v in p["gaze_targets"].items())
        table.add_row(person_label(p["person_id"]), str(p["frames"]), _num(p["screen_time_s"], 2), _num(p["first_t"], 2),
                      _num(p["last_t"], 2), _num(p["mean_det_conf"], 2), mix, str(p["pointing_frames"]))
    console.print(table if summary["people"] else "no people tracked")

    table = Table(title="Events (time order)", title_justify="left")
    for name in ("id", "start s", "end s", "source", "type", "what", "conf"):
        table.add_column(name, justify="right" if name in ("id", "start s", "end s", "conf") else "left")
    for e in summary["events"]:
        table.add_row(str(e["event_id"]), _num(e["start_time"]), _num(e["end_time"]), e["source"], e["event_type"],
                      e["description"], _num(e["confidence"], 2))
    console.print(table if summary["events"] else "no events")

    table = Table(title=f"QA units ({summary['n_shots']} shots; item times count from their unit's start)",
                  title_justify="left")
    for name in ("unit", "start s", "end s", "length s", "shots", "events", "QA items"):
        table.add_column(name, justify="right")
    for u in summary["units"]:
        shots = u.get("shot_ids") or []
        span = "-" if not shots else (str(shots[0]) if len(shots) == 1 else f"{shots[0]}-{shots[-1]}")
        table.add_row(str(u["unit_id"]), _num(u["start"]), _num(u["end"]), _num(u["end"] - u["start"]),
                      f"{u['n_shots']} ({span})", _str(u.get("n_events")), _str(u.get("n_qa")))
    console.print(table if summary["units"] else "no QA units recorded (run `socialtrace qa OUT` to plan them)")

    table = Table(title="QA", title_justify="left", show_lines=True)
    for name in ("cat", "level", "unit", "time s", "question", "answer"):
        table.add_column(name, overflow="fold")
    for q in summary["qa"]:
        options = "\n".join(q["options"])
        question = q["question"] + (f"\n{options}" if options else "")
        answer = f"{q['answer']}) {q['answer_text']}" if q["format"] == "mcq" else q["answer_text"]
        table.add_row(q["category"], q["difficulty"], _str(q.get("unit_id")),
                      f"{q['time_range'][0]:.1f}-{q['time_range'][1]:.1f}", question, answer)
    console.print(table if summary["qa"] else "no QA items")
    dropped = status.get("qa_dropped") or {}
    if dropped:
        console.print("QA items dropped by validation: " + ", ".join(f"{k}={v}" for k, v in sorted(dropped.items())))


def _str(value: Any) -> str:
    return "-" if value is None else str(value)
