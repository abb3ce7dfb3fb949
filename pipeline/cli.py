"""The `socialtrace` command line (DESIGN.md §3)."""
from __future__ import annotations

import dataclasses
import logging
import os
import sys
import time
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from pipeline import interrupts
from pipeline.config import Config
from pipeline.plurals import plural

def _flags_show_no_type() -> None:
    """Typer 0.2x's rich help prints a type after every option, `<bool>` after flags (--overwrite, --help)
    too, which reads as if they took a value; flags show none. (Typer has no setting for it.) Typer versions
    without that method (the range pyproject allows) keep their own help."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "socialtrace", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.socialtrace = True
    TyperOption.display_type_rich = display_type_rich


_flags_show_no_type()

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="rich",
    help="Turn videos of people into person tracks, gaze/gesture social events and GRASP-style QA.",
)
console = Console(stderr=True, soft_wrap=True)  # lines never wrapped by rich: paths and logs stay whole


def _table_console() -> Console:
    """Standard output for the tables of `inspect` and `score`: the terminal's width, or $COLUMNS; in a pipe or
    a log 160 columns, so that a table is whole instead of wrapped into 80 (video ids cut into pieces)."""
    stdout = Console()
    if not stdout.is_terminal and not os.environ.get("COLUMNS"):
        stdout = Console(width=160)
    return stdout


log = logging.getLogger("socialtrace")


class Detector(str, Enum):
    auto = "auto"
    yolo = "yolo"
    mediapipe = "mediapipe"


class Tracker(str, Enum):
    bytetrack = "bytetrack"
    botsort = "botsort"


class Executor(str, Enum):
    auto = "auto"
    local = "local"
    ray = "ray"


class ExportFormat(str, Enum):
    grasp_bench = "grasp-bench"
    llava_video = "llava-video"
    frame_labels = "frame-labels"


def _setup_logging(verbose: bool) -> None:
    """Rich's columns on a terminal; elsewhere (`ray job logs`, CI, files) one plain line per record, never
    wrapped at 80 columns. -v adds socialtrace's debug lines (per-stage timings) to what is shown."""
    level = logging.DEBUG if verbose else logging.INFO
    if console.is_terminal:
        handler: logging.Handler = RichHandler(console=console, show_path=False, markup=False, rich_tracebacks=True)
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], format="%(message)s", force=True)
    log.setLevel(level)


def _quiet_libraries(verbose: bool) -> None:
    """Library noise off the console unless -v (pipeline/quiet.py); the descriptor filter only when this
    process writes to the real stderr (not inside a test runner's capture)."""
    if verbose:
        return
    from pipeline import quiet

    try:
        real_stderr = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):
        real_stderr = False
    (quiet.quiet_native_stderr if real_stderr else quiet.quiet_libraries)()


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)  # paths stay whole
    raise typer.Exit(code)


def _load_config(config_file: Optional[Path]) -> Config:
    if config_file is None:
        return Config()
    try:
        return Config.load(config_file)
    except ValueError as exc:
        _fail(str(exc))


def _check_models(config: Config, weights_given: bool) -> Config:
    """Fail in one line before any work when a model file is missing; say which backend runs (once, after
    every other argument check). Returns ``config`` with the detector recorded as pipeline/detector_choice.py
    names it (one spelling per weights file, so one config hash)."""
    from detectors import find_local_weights
    from pipeline.detector_choice import choose_detector

    try:
        detector, backend, reason = choose_detector(config.detector, weights_given)
    except ValueError as exc:
        _fail(str(exc))
    weights = config.detector.object_weights
    if weights and find_local_weights(weights) is None:
        _fail(f"{weights}: object weights file not found (socialtrace never downloads weights)")
    console.print(f"detector: {backend} ({reason})", highlight=False, soft_wrap=True)
    return config.replace(detector=dataclasses.asdict(detector))


def _check_out_folder(out: str, flag: str = "-o") -> None:
    """An output folder that is an existing file is a bad argument (one line, exit 2), not a traceback."""
    if "://" not in out and os.path.exists(out) and not os.path.isdir(out):
        _fail(f"{out}: {flag} names an existing file; give a folder (new or a socialtrace output folder)")


VERBOSE = typer.Option(False, "--verbose", "-v", help="Debug logging (per-stage details, tracebacks of failed clips) and the libraries' own messages (TensorFlow Lite, protobuf), which are hidden otherwise.")


@app.command()
def run(
    inputs: List[str] = typer.Argument(..., help="Video files, directories (searched recursively), globs, "
                                       "or .txt/.csv/.parquet manifests of paths/URIs (s3://, gs:// work)."),
    out: str = typer.Option(..., "--out", "-o", help="Output folder or URI (tracks/, events/, qa/, status/, manifest.parquet, run.json)."),
    fps: Optional[float] = typer.Option(None, help="Frames per second sampled from each video \\[default: 2, from the config]."),
    detector: Optional[Detector] = typer.Option(None, help="Person/pose backend. auto = YOLO when its weights are on disk, else MediaPipe."),
    weights: Optional[str] = typer.Option(None, help="YOLO-pose weights: a path, an Ultralytics name, or yolo11n-pose.yaml for an untrained model (no download)."),
    object_weights: Optional[str] = typer.Option(None, "--object-weights", help="Ultralytics detection model (a local file, e.g. COCO yolo11n.pt) run alongside to fill OUT/objects/ so gaze and pointing can target objects by class name; off by default. A *.yaml builds an untrained model (plumbing tests)."),
    tracker: Optional[Tracker] = typer.Option(None, help="Ultralytics tracker used within each shot \\[default: bytetrack]."),
    device: Optional[str] = typer.Option(None, "--device", help="Where YOLO runs: auto (CUDA when available), cpu or cuda; decoding and MediaPipe stay on CPU threads \\[default: auto]."),
    executor: Optional[Executor] = typer.Option(None, help="local = in this process; ray = a pool of Ray actors (a local Ray instance started on demand, or --ray-address). auto = local for one video, Ray for more. \\[default: auto]"),
    ray_address: Optional[str] = typer.Option(None, help="Join this Ray cluster (e.g. auto, or ray://host:10001) instead of starting a local instance."),
    workers: Optional[int] = typer.Option(None, min=1, help="Perception actors (Ray) \\[default: one per CPU core]."),
    gpus_per_worker: Optional[float] = typer.Option(None, min=0.0, help="Fraction of a GPU per perception actor, e.g. 0.25 runs four per GPU \\[default: an even share of the GPUs on a one-node cluster (unless --device cpu), none on several nodes]."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Redo every stage of every input, even where OUT already has its tables (also tables recomputed by `socialtrace events` / `qa`)."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="YAML/JSON file with config overrides, nested by section (see pipeline/config.py)."),
    seed: Optional[int] = typer.Option(None, help="Seed for QA template and option order \\[default: 0]."),
    allow_failures: bool = typer.Option(False, "--allow-failures", help="Exit 0 when some clips failed but at least one is ok. Without it the exit status is 1 as soon as any clip failed, 2 for bad arguments."),
    verbose: bool = VERBOSE,
) -> None:
    """Run perception, events and QA over videos; rerunning resumes where it stopped.

    Exit status: 0 when every clip is ok, 1 when any clip failed (0 with --allow-failures if at least one
    is ok), 2 for bad arguments.
    """
    _setup_logging(verbose)
    _quiet_libraries(verbose)
    from pipeline import runner
    from pipeline.inputs import InputError, assign_video_ids, expand_inputs, stem_id
    from pipeline.storage import OutputStore

    config = _load_config(config_file)
    overrides: dict = {}
    if fps is not None:
        if fps <= 0:
            _fail("--fps must be positive")
        overrides.setdefault("sampling", {})["fps"] = fps
    if detector is not None:
        overrides.setdefault("detector", {})["backend"] = detector.value
    if weights is not None:
        overrides.setdefault("detector", {})["weights"] = weights
    if object_weights is not None:
        overrides.setdefault("detector", {})["object_weights"] = object_weights
    if tracker is not None:
        overrides.setdefault("tracking", {})["tracker"] = tracker.value
    if device is not None:
        from detectors.runtime import resolve_device

        try:
            resolve_device(device)
        except ValueError as exc:
            _fail(str(exc))
        overrides.setdefault("detector", {})["device"] = "" if device.strip().lower() == "auto" else device.strip().lower()
    if executor is not None:
        overrides.setdefault("run", {})["executor"] = executor.value
    if workers is not None:
        overrides.setdefault("run", {})["workers"] = workers
    if gpus_per_worker is not None:
        overrides.setdefault("run", {})["gpus_per_worker"] = gpus_per_worker
    if seed is not None:
        overrides["seed"] = seed
    config = config.replace(**overrides)
    _check_out_folder(out)
    began = time.perf_counter()
    try:
        uris = expand_inputs(inputs, exclude=[out])  # never the run's own output
    except InputError as exc:
        _fail(str(exc))
    if not uris:
        _fail("no input videos")
    log.debug("inputs: %s found in %.2f s", plural(len(uris), "video file"), time.perf_counter() - began)
    config = _check_models(config, weights_given=weights is not None)
    store = OutputStore(out)
    try:
        videos = assign_video_ids(uris, store.known_videos())
    except InputError as exc:
        _fail(str(exc))
    for video in videos:
        if video.video_id != stem_id(video.uri):
            log.info("%s: video_id %s (another video in %s, or among the inputs, has the same file name)",
                     video.uri, video.video_id, out)
    swept = store.sweep_temporaries()
    if swept:
        log.info("removed %s left by an interrupted run", plural(swept, "temporary file"))
    plan = runner.plan_run(videos, config, store, overwrite)
    plan.todo, rejected = runner.reject_unreadable(plan.todo, config, store)  # before any model loads
    log.debug("plan ready %.2f s after start: %d to perceive, %d to re-derive, %d done, %d kept",
              time.perf_counter() - began, len(plan.todo), len(plan.rederive), len(plan.done), len(plan.kept))
    chosen = config.run.executor
    if chosen == "auto":
        chosen = "local" if len(plan.todo) <= 1 and ray_address is None else "ray"
    log.info("%s: %d to process, %d already done%s (config %s); executor: %s",
             plural(len(videos), "input video"), len(plan.todo), len(plan.done) + len(plan.kept),
             f", {len(rejected)} unreadable" if rejected else "", config.hash(), chosen)
    for video, stage, command in plan.kept:
        log.warning("%s: keeping its %s tables from `socialtrace %s`, made with other settings than this "
                    "command's; `socialtrace %s %s` or --overwrite replaces them", video.video_id, stage, command,
                    stage, out)
    if plan.rederive:
        log.info("%s: perception is current, events/QA settings or code changed: re-deriving them from the "
                 "stored tracks", plural(len(plan.rederive), "video"))
    record = {"command": sys.argv, "executor": chosen, "started_at": time.time(),
              "inputs": [v.video_id for v in videos]}
    # the run record exists from the start, so that `socialtrace inspect` works on an interrupted run
    runner.write_run_record(store, config, runner.build_manifest(store, record["inputs"]),
                            {**record, "state": "running"})
    statuses: list[dict] = list(rejected)
    state = "interrupted"
    stopped = None
    with interrupts.signals_raise():  # Ctrl-C and SIGTERM alike: recorded, then one line (pipeline/interrupts.py)
        try:
            for video, stage in plan.rederive:
                statuses.append(runner.rederive_clip(store, store.read_status(video.video_id), config, stage, "run"))
            if plan.todo:
                from pipeline.ray_runner import PerceptionStartupError, iter_ray  # cheap: ray is imported on use

                with _RunDisplay(len(plan.todo)) as display:
                    if chosen == "ray":
                        stream = iter_ray(plan.todo, config, out, ray_address=ray_address, quiet=not verbose,
                                          on_segment=display.segment_done)
                    else:
                        stream = runner.iter_local(plan.todo, config, store, progress=display)
                    try:
                        for status in stream:
                            display.video_done(status)
                            statuses.append(status)
                    except PerceptionStartupError as exc:
                        state = "failed"
                        _fail(str(exc), code=1)
            elif not plan.rederive and not rejected:
                log.info("nothing to do: every input already has an ok status for config %s (use --overwrite to redo)",
                         config.hash())
            state = "finished"
        except BaseException as exc:
            stopped = interrupts.as_interrupt(exc)
            if stopped is None:
                raise
        finally:
            manifest = runner.build_manifest(store, record["inputs"])
            runner.write_run_record(store, config, manifest, {
                **record, "state": state, "finished_at": time.time(),
                "processed": len(plan.todo), "rederived": len(plan.rederive), "skipped": len(plan.done) + len(plan.kept),
                **({"interrupted_by": stopped.name} if stopped is not None else {}),
            })
    if stopped is not None:
        # the status files are the truth: a clip may have finished between its status and the signal
        finished = [v.video_id for v in plan.todo
                    if ((store.read_status(v.video_id) or {}).get("finished_at") or 0) >= record["started_at"]]
        console.print(_interrupted_line(stopped.name, [v.video_id for v in plan.todo], finished, out),
                      highlight=False, soft_wrap=True)
        raise typer.Exit(stopped.exit_code)
    log.debug("run done %.2f s after start", time.perf_counter() - began)
    for status in statuses:
        if status["status"] == "failed":
            log.error("%s failed: %s", status["video_id"], status["error"])
    n_failed = sum(s["status"] == "failed" for s in statuses)
    n_ok = len(statuses) - n_failed
    console.print(f"{n_ok} ok, {n_failed} failed, {len(plan.done) + len(plan.kept)} skipped -> {out}")
    latest = [r for r in manifest.select(["status", "in_latest_run"]).to_pylist() if r["in_latest_run"]]
    if not any(r["status"] == "ok" for r in latest) or (n_failed and not allow_failures):
        raise typer.Exit(1)


def _listed(ids: list[str], most: int = 5) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _interrupted_line(signal_name: str, todo: list[str], done: list[str], out: str) -> str:
    """One line after an interrupt: what finished, what did not, how to go on."""
    left = [v for v in todo if v not in set(done)]
    finished = f"{plural(len(done), 'video')} finished" + (f" ({_listed(done)})" if done else "")
    unfinished = f"{plural(len(left), 'video')} did not" + (f" ({_listed(left)})" if left else "")
    return f"interrupted ({signal_name}): {finished}, {unfinished} -> {out}; rerun the same command to resume"


class _RunDisplay:
    """Progress in a terminal: videos done of the run, and frames (local executor) or segments (Ray) of
    the video being perceived; one log line per video elsewhere (CI logs, files)."""

    def __init__(self, total: int):
        self.total = total
        self.statuses: list[dict] = []
        self.frames = 0
        self.video_seconds = 0.0
        self.started = time.time()
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[detail]}"), TimeElapsedColumn(), TimeRemainingColumn()]
        self.progress = Progress(*columns, console=console, transient=False, disable=not console.is_terminal)
        self.videos = self.progress.add_task("[bold]videos", total=total, detail="")
        self.within = self.progress.add_task("", total=None, detail="", visible=False)

    def __enter__(self) -> "_RunDisplay":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self.progress.__exit__(*exc_info)

    # runner.VideoProgress (local executor)
    def start_video(self, video, frames: Optional[int]) -> None:
        self.progress.reset(self.within, total=frames, description=f"  {video.video_id} frames", visible=True)

    def advance_frames(self, n: int) -> None:
        self.progress.advance(self.within, n)

    # Ray executor: the segments of a long video as they come back
    def segment_done(self, video_id: str, done: int, total: int) -> None:
        self.progress.update(self.within, total=total, completed=done, description=f"  {video_id} segments",
                             visible=True)

    def video_done(self, status: dict) -> None:
        self.statuses.append(status)
        self.frames += status.get("n_frames") or 0
        self.video_seconds += status.get("duration_s") or 0.0
        failed = sum(s["status"] == "failed" for s in self.statuses)
        elapsed = max(time.time() - self.started, 1e-9)
        self.progress.update(self.videos, advance=1, detail=f"{failed} failed, {self.frames / elapsed:.1f} frames/s, "
                                                              f"{self.video_seconds / elapsed:.2f} video-s/s")
        if not console.is_terminal:
            from pipeline.annotate import people

            log.info("[%d/%d] %s %s%s", len(self.statuses), self.total, status["video_id"], status["status"],
                     f" ({status['error']})" if status.get("error") else
                     f" ({plural(status.get('n_frames') or 0, 'frame')}, {people(status.get('n_persons') or 0)}, "
                     f"{plural(status.get('n_events') or 0, 'event')}, {plural(status.get('n_qa') or 0, 'QA item')})")
        timings = status.get("timings") or {}
        if timings:
            log.debug("%s: stage seconds %s (wall %.2f s)", status["video_id"],
                      ", ".join(f"{k} {v:.2f}" for k, v in timings.items()), status.get("wall_s") or 0.0)


def _open_existing(out: str):
    from pipeline.storage import OutputStore

    store = OutputStore(out)
    if store.read_json(store.path("run.json")) is None:
        _fail(f"{out}: not a socialtrace output folder (no run.json); create one with `socialtrace run`")
    return store


@app.command()
def events(
    out: str = typer.Argument(..., help="Output folder of `socialtrace run`."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Override event/QA thresholds (YAML/JSON); default: the config recorded in run.json."),
    verbose: bool = VERBOSE,
) -> None:
    """Recompute OUT/events from OUT/tracks (no video needed), then OUT/qa from the new events."""
    _setup_logging(verbose)
    _recompute(out, config_file, None, with_events=True)


@app.command()
def qa(
    out: str = typer.Argument(..., help="Output folder of `socialtrace run`."),
    seed: Optional[int] = typer.Option(None, help="Seed for templates and option order \\[default: the run's seed]."),
    config_file: Optional[Path] = typer.Option(None, "--config", help="Override QA settings (YAML/JSON); default: the config recorded in run.json."),
    verbose: bool = VERBOSE,
) -> None:
    """Recompute OUT/qa from OUT/events (no video, no perception)."""
    _setup_logging(verbose)
    _recompute(out, config_file, seed, with_events=False)


def _recompute(out: str, config_file: Optional[Path], seed: Optional[int], with_events: bool) -> None:
    from pipeline import runner

    store = _open_existing(out)
    config = runner.read_run_config(store)
    if config_file is not None:
        override = _load_config(config_file)
        config = config.replace(events=override.events, qa=override.qa)
    if seed is not None:
        config = config.replace(seed=seed)
    updated = runner.recompute_tables(store, config, with_events=with_events)
    manifest = runner.build_manifest(store)
    record = store.read_json(store.path("run.json")) or {}
    extra = {k: v for k, v in record.items() if k not in ("config", "config_hash", "versions", "host", "totals")}
    runner.write_run_record(store, config, manifest, extra)
    n_events = sum(s["n_events"] for s in updated)
    n_qa = sum(s["n_qa"] for s in updated)
    what = "events and QA" if with_events else "QA"
    console.print(f"recomputed {what} for {plural(len(updated), 'clip')}: {plural(n_events, 'event')}, "
                  f"{plural(n_qa, 'QA item')}")
    drops = runner.summarise_drops(updated)
    if drops:
        console.print("QA items dropped by validation: " + ", ".join(f"{k}={v}" for k, v in drops.items()))


@app.command()
def export(
    out: str = typer.Argument(..., help="Output folder of `socialtrace run`."),
    fmt: ExportFormat = typer.Option(..., "--format", help="grasp-bench: json/ per item + one labelled clip per QA unit in video/; llava-video: one LLaVA-Video-178K style JSON list pointing at the same labelled clips; frame-labels: frame_labels.parquet (per sampled frame and person: gaze target, eye contact, shared attention, pointing, split) + README.md, for probing video encoders."),
    dest: str = typer.Option(..., "--out", "-o", help="Destination folder."),
    verbose: bool = VERBOSE,
) -> None:
    """Export OUT/qa for training or evaluating video-language models."""
    _setup_logging(verbose)
    from pipeline.export import export as export_qa

    if not (fmt is ExportFormat.llava_video and dest.endswith(".json")):
        _check_out_folder(dest)
    store = _open_existing(out)
    videos = {s["video_id"]: s["uri"] for s in store.iter_statuses() if s.get("status") == "ok"}
    if not videos:
        _fail(f"{out}: no clip finished ok, nothing to export")
    summary = export_qa(out, fmt.value, dest, videos=videos)
    console.print(_export_sentence(fmt.value, summary, dest), highlight=False)


def _export_sentence(fmt: str, summary: dict, dest: str) -> str:
    """`export`'s closing line, e.g. "exported 12 QA items of 2 videos as grasp-bench: 3 labelled clips
    (56 frames) -> bench"."""
    where = summary.get("file") or dest
    if "rows" in summary:  # frame-labels: a table, no clips
        return (f"exported {plural(summary['rows'], 'frame label row')} of {plural(summary['videos'], 'video')} "
                f"as {fmt} -> {where}")
    return (f"exported {plural(summary['items'], 'QA item')} of {plural(summary['videos'], 'video')} as {fmt}: "
            f"{plural(summary['clips'], 'labelled clip')} ({plural(summary['frames'], 'frame')}) -> {where}")


@app.command("inspect")
def inspect_command(
    out: str = typer.Argument(..., help="Output folder of `socialtrace run`."),
    video: Optional[str] = typer.Option(None, "--video", help="Show one clip: its people with screen time, events in time order, QA."),
    as_json: bool = typer.Option(False, "--json", help="Print the same numbers as JSON (stdout) instead of tables."),
) -> None:
    """Summarise a run: clips ok/failed, people, events by type, QA by category, answer balance, drops."""
    from pipeline import summary as run_summary

    try:
        found = (run_summary.summarize_video(out, video) if video is not None
                 else run_summary.summarize_run(out))
    except run_summary.InspectError as exc:
        _fail(str(exc))
    if as_json:
        typer.echo(run_summary.to_json(found))
    elif video is not None:
        run_summary.print_video_summary(found, _table_console())
    else:
        run_summary.print_run_summary(found, _table_console())


@app.command("render")
def render_command(
    out: str = typer.Argument(..., help="Output folder of `socialtrace run`."),
    video: str = typer.Option(..., "--video", help="video_id of the clip to draw (see `socialtrace inspect OUT`)."),
    dest: Path = typer.Option(..., "--out", "-o", help="The .mp4 to write (H.264, plays in browsers)."),
    timeline: Optional[Path] = typer.Option(None, "--timeline", help="Also write a timeline PNG of the clip's gaze, gestures, interactions and QA."),
    native_fps: bool = typer.Option(False, "--native-fps", help="One frame per source frame (tracks from the nearest sampled frame) instead of one per sampled frame."),
    max_side: int = typer.Option(1280, min=64, help="Longest side of the rendered picture in pixels (never upscaled)."),
    verbose: bool = VERBOSE,
) -> None:
    """Draw a clip's people, head boxes, gaze and pointing rays and active events into an mp4."""
    _setup_logging(verbose)
    from pipeline.render import RenderError, render_video
    from pipeline.timeline import write_timeline

    try:
        result = render_video(out, video, dest, native_fps=native_fps, max_side=max_side)
        if timeline is not None:
            write_timeline(out, video, timeline)
    except RenderError as exc:
        _fail(str(exc))
    if result.message:
        console.print(f"[yellow]note:[/] {result.message}", highlight=False)
    per = "native" if result.native_fps else "sampled"
    console.print(f"wrote {result.path} ({plural(result.n_frames, 'frame')}, one per {per} frame, {result.width}x"
                  f"{result.height}, {result.fps:g} fps)" + (f" and {timeline}" if timeline is not None else ""))


from qa_gen.config import ScoreConfig  # noqa: E402  (kept with the score command: defaults of its flags)


@app.command("score")
def score_command(
    predictions: Path = typer.Argument(..., help="JSON lines, one per answered item: {\"qa_id\": ..., \"answer\": "
                                       "\"B\" or free text for open-ended items, \"reasoning\": optional text with "
                                       "<gaze>...</gaze> / <gesture>...</gesture> spans naming \"Person N\", or a list of "
                                       "steps {\"text\", \"modality\"}}. For GRASP-Bench json without qa_id, qa_id is the "
                                       "json file's name without .json."),
    qa_source: str = typer.Option(..., "--qa", help="The items answered: a socialtrace output folder (OUT/qa) or a "
                                  "GRASP-Bench-layout folder (json/<name>.json, from `socialtrace export --format "
                                  "grasp-bench` or any other source)."),
    dest: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for score.json and score.png "
                                        "(default: <PREDICTIONS name>_score next to PREDICTIONS)."),
    folds: int = typer.Option(ScoreConfig.blind_folds, min=2, help="Cross-validation folds (whole videos per fold) for the blind "
                              "text-only reference row."),
    time_tolerance: float = typer.Option(ScoreConfig.time_tolerance_seconds, min=0.0, help="Seconds within which a time stated in an open-ended "
                                         "answer counts as the reference's time."),
    verbose: bool = VERBOSE,
) -> None:
    """Score a model's answers: multiple-choice accuracy, Social Grounding Reward, open-ended and reasoning-trace
    similarity, against chance and a blind text-only guesser; per category, difficulty and overall."""
    _setup_logging(verbose)
    from pipeline.score import ScoreError, run_score

    if dest is None:
        dest = predictions.parent / f"{predictions.stem}_score"
    try:
        run_score(str(predictions), qa_source, dest, _table_console(),
                  ScoreConfig(time_tolerance_seconds=time_tolerance, blind_folds=folds))
    except ScoreError as exc:
        _fail(str(exc))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
