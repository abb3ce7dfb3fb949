"""The Ray executor: perception on a pool of actors, events + QA on CPU actors, one status per clip.

Why Ray core actors + ``ray.wait`` and not Ray Data's ``map_batches`` (DESIGN.md §7 names Ray Data):
a week-long corpus job needs three things per clip that Ray Data's streaming executor (Ray 2.x) does
not give: (1) a per-clip timeout - a hung decode or model call blocks its actor-pool slot forever, Ray
Data has no per-row deadline; (2) a bounded, per-clip retry when the actor process dies (OOM killer,
segfault in a native decoder) that ends in a ``failed`` row naming the clip - Ray Data retries the
whole block and, once retries are exhausted, either aborts the dataset or (``max_errored_blocks``)
drops the block without saying which video it held; (3) a status the driver can stream per clip for
the progress bar and the manifest. The shape is otherwise the one Ray Data would build: a table of
clips (one row per video, here the ``todo`` list), a callable-class stage whose ``__init__`` loads the
models once per actor (``PerceptionActor`` wraps ``pipeline.perception.PerceptionWorker``), sized by
``config.run.workers`` with ``num_gpus=config.run.gpus_per_worker``, and a CPU stage for events + QA.
That stage runs on a few long-lived CPU actors (``EventsActor``, one per eight perception actors) rather
than one task per clip: Ray reaps idle task workers after about a second, so each clip's task would pay a
fresh process, the imports and the Numba JIT (1-3 s measured, against 10 ms warm). Only Arrow tables and
small dicts cross the boundary; frames never leave the perception actor.

Each clip runs exactly the per-clip code of the local executor (``runner.finish_clip`` /
``runner.failed_status`` / ``runner.error_message``), so both executors write equal tables. Files are
written by the task that made them, through ``OutputStore(out_uri)`` (any pyarrow.fs URI), atomically,
status last. The driver writes a clip's status only when its worker cannot: after the actor died
``max_retries + 1`` times or the clip ran past ``clip_timeout_seconds``. Ray prints one "(raylet) A
worker died" notice per killed process on the driver's console; that line comes from Ray's error
channel, which ``log_to_driver=False`` does not silence.

Long videos: a video longer than ``config.sampling.max_clip_seconds`` is perceived as overlapping
segments (pipeline/segments.py), each an ordinary unit of work: the driver first asks an actor for the
video's duration (a header probe, milliseconds), plans the segments from it on the sampling grid and
queues them ahead of other videos, so that any free perception actor takes one and the segments of one
video run in parallel; each has its own timeout (``clip_timeout_seconds`` + ``clip_timeout_per_video_second``
x its length) and its own retry budget. Their tables wait in the object store until the last one is
back; then an events actor merges them (``segments.merge_segments``: one person_id space, times and
frame indices over the whole video) and runs ``runner.finish_clip``, so a long video still gets one
status and one manifest row. A segment that raises, times out or kills its actor beyond the retries
fails its whole video, with a reason naming the segment; the other segments' results are dropped and
nothing partial is written. Boundaries are not searched at scene cuts, which would need a second full
decode before any work starts (decode is what bounds a GPU node); instead consecutive segments overlap
by ``sampling.segment_overlap_seconds``, so both see the same people in the same frames and identity is
handed over by box overlap (tracking/segment_identity.py), with torso colours only for people who are
not in the overlap. A video no longer than the limit is one perceive call, as before the split existed.
"""
from __future__ import annotations

import collections
import logging
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from pipeline import runner
from pipeline.clip import ClipSpec, PerceptionResult
from pipeline.config import Config, usable_cores
from pipeline.inputs import InputVideo
from pipeline.segments import SegmentError, merge_segments, plan_segments, probe_duration, segment_label
from pipeline.storage import OutputStore

log = logging.getLogger("socialtrace")

# How often the driver wakes up to check deadlines when nothing has finished.
_POLL_SECONDS = 1.0
# One events + QA actor per this many perception actors (events + QA take ~10 ms per clip, perception ~1 s).
_PERCEPTION_ACTORS_PER_EVENTS_ACTOR = 8
# Environment variables that size the intra-op thread pools of numpy/BLAS/OpenCV/torch/numba.
_THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


class PerceptionStartupError(RuntimeError):
    """Perception workers cannot start at all (bad weights, missing backend): no clip can run."""


# --- the remote pieces --------------------------------------------------------------------------

class PerceptionActor:
    """One perception worker: models loaded once in ``__init__``, then one clip per ``perceive`` call.

    Decoded frames stay inside this process. ``perceive`` has two return values, so the driver only
    fetches the small first one: ``(None, PerceptionResult)`` - the tables go from here straight to an
    events actor - or, for a clip that raised, ``(failed status it already wrote, None)``.
    """

    def __init__(self, config: Config, out_uri: str, threads: int, quiet: bool = False):
        for name in _THREAD_ENV_VARS:  # read by the native libraries when they load, so set before
            os.environ[name] = str(threads)
        if quiet:  # likewise: before mediapipe is imported
            from pipeline.quiet import quiet_libraries

            quiet_libraries()
        from pipeline.perception import PerceptionWorker

        self.config = config
        self.store = OutputStore(out_uri)
        # per-person model threads follow the actor's share of the cores
        self.worker = PerceptionWorker(config.replace(run={"perception_threads": config.run.perception_threads or threads}))
        _pin_loaded_thread_pools(threads)

    def ready(self) -> int:
        """Answered once ``__init__`` finished; the process id lets operators find a stuck worker."""
        return os.getpid()

    def duration(self, video: InputVideo) -> Optional[float]:
        """The video's length from its header (fast), so the driver can split long videos and give them
        more time; None when it cannot be read (``perceive`` then reports why)."""
        return probe_duration(video.uri)

    def perceive(self, video: InputVideo) -> tuple[Optional[dict], Optional[PerceptionResult]]:
        started = time.time()
        self.store.delete_video(video.video_id)  # a previous attempt may have left partitions
        try:
            result = self.worker(ClipSpec(video_id=video.video_id, uri=video.uri))
        except Exception as exc:  # one bad clip must never stop the run (same rule as runner.process_video)
            return runner.failed_status(video, runner.error_message(video.uri, exc), self.config, self.store,
                                        started), None
        return None, result

    def perceive_segment(self, clip: ClipSpec, n_segments: int) -> tuple[Optional[str], Optional[PerceptionResult]]:
        """One segment of a long video: ``(None, PerceptionResult)``, or ``(error naming the segment, None)``.
        Writes nothing: the video's files are written once all its segments are merged."""
        try:
            return None, self.worker(clip)
        except Exception as exc:  # the driver fails the whole video with this reason
            return str(SegmentError(clip, n_segments, exc)), None


class EventsActor:
    """Events + QA for perceived clips (runner.finish_clip), then the clip's tables and status.

    A long-lived CPU worker rather than a task per clip: Ray reaps idle task workers beyond its soft limit
    after about a second, so with perception taking longer than that every task would start a fresh
    process and pay the imports and Numba JIT again (measured 1-3 s per clip against 10 ms warm).
    """

    def __init__(self, config: Config, out_uri: str):
        import events  # noqa: F401 - imported once here, not on the first clip
        import qa_gen  # noqa: F401

        self.config = config
        self.store = OutputStore(out_uri)

    def finish(self, video: InputVideo, result: PerceptionResult, started: float) -> dict:
        try:
            return runner.finish_clip(result, self.config, self.store, started)
        except Exception as exc:  # same rule as runner.process_video
            return runner.failed_status(video, runner.error_message(video.uri, exc), self.config, self.store,
                                        started)

    def finish_segments(self, video: InputVideo, started: float, *results: PerceptionResult) -> dict:
        """Merge the perceived segments of a long video into one result, then as ``finish``. (The results
        are separate arguments so that Ray resolves each reference here, not on the driver.)"""
        try:
            merged = merge_segments(list(results), self.config)
            self.store.delete_video(video.video_id)  # an earlier, interrupted attempt may have left partitions
            return runner.finish_clip(merged, self.config, self.store, started)
        except Exception as exc:  # same rule as runner.process_video
            return runner.failed_status(video, runner.error_message(video.uri, exc), self.config, self.store,
                                        started)


def _pin_loaded_thread_pools(threads: int) -> None:
    """Size the thread pools of OpenCV and torch (when the backend loaded it), so that N actors on N
    cores do not each start one thread per core and fight over them."""
    import sys

    if "cv2" in sys.modules:
        sys.modules["cv2"].setNumThreads(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


# --- driver-side bookkeeping --------------------------------------------------------------------

@dataclass
class _Clip:
    """One video of the run, from its duration probe to its status."""

    video: InputVideo
    started: float = field(default_factory=time.time)  # wall clock when its first work was dispatched
    duration_s: float = 0.0  # the video's length, once probed: longer videos get more time
    segments: list[ClipSpec] = field(default_factory=list)  # planned segments (empty: not split)
    results: dict[int, Any] = field(default_factory=dict)  # segment index -> ref of its PerceptionResult
    done: bool = False  # its status is decided (finished, or failed): late results are dropped


@dataclass
class _Work:
    """One call a perception actor makes for a video: probe its duration, perceive it whole, or one segment."""

    clip: _Clip
    kind: str  # "probe" | "whole" | "segment"
    spec: Optional[ClipSpec] = None  # segment
    attempts: int = 0  # dispatches so far
    deaths: list[str] = field(default_factory=list)  # why each dead worker died

    def describe(self) -> str:
        """What this work is, for errors: the whole video, or which segment of it."""
        if self.kind != "segment":
            return ""
        return f"{segment_label(self.spec, len(self.clip.segments))}: "

    def seconds(self) -> float:
        """How much video this work decodes (for its timeout)."""
        if self.kind == "probe":
            return 0.0
        if self.kind == "whole":
            return self.clip.duration_s
        end = self.spec.end_s if self.spec.end_s is not None else max(self.clip.duration_s, self.spec.start_s)
        return end - self.spec.start_s


@dataclass
class _Slot:
    """One perception actor of the pool and the work it is doing."""

    actor: Any
    work: Optional[_Work] = None
    ready: bool = False  # __init__ finished (models loaded)


@dataclass
class _Call:
    """One outstanding remote call the driver waits for."""

    kind: str  # "start" (actor __init__) | "perception" (any _Work) | "finish" (events + QA)
    deadline: float  # time.monotonic() after which the call is given up
    slot: Optional[_Slot] = None  # start, perception
    work: Optional[_Work] = None  # perception
    clip: Optional[_Clip] = None  # finish
    events_index: int = -1  # finish: which events actor
    result_ref: Any = None  # perception of a video or segment: the PerceptionResult, not fetched
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class PoolPlan:
    """How many perception actors, and their resources."""

    workers: int
    cpus_per_worker: float
    threads_per_worker: int
    gpus_per_worker: float


# GPU memory one perception actor holds: 16 actors on one H100 held 37.4 GB together (CUDA context, cuDNN,
# YOLO at batch 32; benchmarks/README.md "GPU path")
GPU_BYTES_PER_ACTOR = 2.5e9


def plan_pool(config: Config, n_clips: int, cluster_cpus: float, cluster_gpus: float,
              largest_node_cpus: float, gpu_free_bytes: Optional[float] = None) -> PoolPlan:
    """Size the actor pool: ``config.run.workers`` (0 = one per CPU), capped by GPUs and by the clips
    (``n_clips`` counts units of perception: a long video's segments run in parallel).

    Spare cores go to intra-op threads (1 worker on 2 cores runs 2 threads), but never more than one
    node has, since an actor cannot span nodes; more workers than cores share them (fractional CPUs).

    A Ray actor sees a GPU only when it asks for a share of one. With ``gpus_per_worker`` 0 on a one-node
    cluster that has GPUs (a GPU workstation: the local instance), the actors share them evenly unless
    ``detector.device`` is cpu, when ``gpu_free_bytes`` (free GPU memory of that node, None = unknown) holds
    GPU_BYTES_PER_ACTOR for each of them; otherwise (several nodes, some of which may have no GPU, or too
    little memory) the share must be asked for (``--gpus-per-worker``), and a warning says the GPUs stay idle.
    """
    gpus = config.run.gpus_per_worker
    if gpus < 0:
        raise ValueError(f"run.gpus_per_worker must be >= 0, got {gpus}")
    if config.run.workers < 0:
        raise ValueError(f"run.workers must be >= 0 (0 = one per CPU), got {config.run.workers}")
    workers = config.run.workers or max(1, int(cluster_cpus))
    wants_gpu = (config.detector.device or "auto").strip().lower() != "cpu"
    if gpus == 0 and cluster_gpus > 0 and wants_gpu:
        shared_by = max(1, min(workers, n_clips))
        idle = None
        if cluster_cpus > largest_node_cpus + 1e-9:
            idle = "on several nodes"
        elif gpu_free_bytes is None or gpu_free_bytes < shared_by * GPU_BYTES_PER_ACTOR:
            idle = (f"{shared_by} actors need about {shared_by * GPU_BYTES_PER_ACTOR / 1e9:.0f} GB of GPU memory, "
                    + ("free memory unknown" if gpu_free_bytes is None else f"{gpu_free_bytes / 1e9:.0f} GB free"))
        if idle:
            log.warning("the Ray cluster has %g GPU(s) but --gpus-per-worker is 0 (%s): perception runs on CPUs "
                        "only; e.g. --workers 8 --gpus-per-worker 0.125 shares a GPU among 8 actors", cluster_gpus, idle)
        else:
            gpus = math.floor(cluster_gpus / shared_by * 1e4) / 1e4
    if gpus > 0:
        if cluster_gpus < gpus:
            raise ValueError(f"--gpus-per-worker {gpus} but the Ray cluster has {cluster_gpus:g} GPU(s)")
        workers = min(workers, max(1, int(cluster_gpus / gpus + 1e-9)))
    workers = max(1, min(workers, n_clips))
    if 0 < cluster_cpus < workers:
        # more actors than cores, asked for explicitly (e.g. slow remote reads): they share the cores;
        # whole CPUs each would leave the extra actors unschedulable
        return PoolPlan(workers=workers, cpus_per_worker=math.floor(cluster_cpus / workers * 1e4) / 1e4,
                        threads_per_worker=1, gpus_per_worker=gpus)
    threads = max(1, min(int(cluster_cpus // workers), int(largest_node_cpus)))
    return PoolPlan(workers=workers, cpus_per_worker=float(threads), threads_per_worker=threads,
                    gpus_per_worker=gpus)


# --- Ray start-up ------------------------------------------------------------------------------

def _connect(ray_address: Optional[str]) -> bool:
    """Join ``ray_address`` or start a local instance sized to this machine; True when we connected
    (and so must disconnect, which also stops a local instance we started)."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray_address and ray_address.startswith("ray://"):  # Ray Client: the server owns its own logging
        ray.init(address=ray_address, log_to_driver=False, logging_level=logging.WARNING)
        log.info("joined Ray cluster at %s (Ray Client)", ray_address)
        return True
    common = dict(log_to_driver=False, logging_level=logging.WARNING, configure_logging=True,
                  include_dashboard=False)
    if ray_address:
        ray.init(address=ray_address, **common)
        log.info("joined Ray cluster at %s", ray_address)
    else:
        # Ray turns token auth on for a new local instance (good) and warns about it on the console (noise)
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        # "local" forces a fresh instance: never attach by accident to someone else's `ray start`
        ray.init(address="local", num_cpus=usable_cores(), **common)
        log.info("started a local Ray instance with %d CPU(s)", usable_cores())
    return True


def _local_gpu_free_bytes() -> Optional[float]:
    """Free memory of this machine's GPUs (the smallest times their count), read through NVML (no CUDA
    context is made); None when unknown."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            return float(min(pynvml.nvmlDeviceGetMemoryInfo(h).free for h in handles) * len(handles)) if handles else None
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # no driver, no NVML: the share is not given unasked
        return None


def _cluster_shape() -> tuple[float, float, float]:
    import ray

    resources = ray.cluster_resources()
    node_cpus = [n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive")]
    return resources.get("CPU", 1.0), resources.get("GPU", 0.0), max(node_cpus or [1.0])


# --- the executor ------------------------------------------------------------------------------

def iter_ray(todo: list[InputVideo], config: Config, out_uri: str,
             ray_address: Optional[str] = None, quiet: bool = False,
             on_segment: Optional[Callable[[str, int, int], None]] = None) -> Iterator[dict]:
    """Process ``todo`` on Ray; yield one status dict per video as it completes (ok or failed).

    Joins ``ray_address`` when given (e.g. "auto" on a cluster head), else starts a local instance and
    stops it afterwards. Videos longer than ``sampling.max_clip_seconds`` run as parallel segments (see
    the module doc). A clip or segment whose actor dies is retried on a fresh actor up to
    ``config.run.max_retries`` times, then its video failed; one running longer than
    ``config.run.clip_timeout_seconds`` + ``config.run.clip_timeout_per_video_second`` x its length fails
    its video and its actor is replaced. Raises ``PerceptionStartupError`` when no perception actor can start.
    ``quiet`` keeps library noise out of the workers' logs (pipeline/quiet.py); ``on_segment(video_id,
    done, total)`` is called as the segments of a long video come back (a progress display).
    """
    import ray

    if not todo:
        return
    connected = _connect(ray_address)
    try:
        cpus, gpus, node_cpus = _cluster_shape()
        # the driver shares a node with the actors unless it is a Ray Client
        gpu_free = _local_gpu_free_bytes() if gpus > 0 and not (ray_address or "").startswith("ray://") else None
        pool = plan_pool(config, _units_of_work(todo, config, config.run.workers or int(cpus)), cpus, gpus,
                         node_cpus, gpu_free)
        log.info("Ray: %d perception actor(s), %g CPU / %d thread(s) / %g GPU each", pool.workers,
                 pool.cpus_per_worker, pool.threads_per_worker, pool.gpus_per_worker)
        yield from _Scheduler(todo, config, out_uri, pool, quiet=quiet, on_segment=on_segment).run()
    finally:
        if connected:
            ray.shutdown()


def _units_of_work(todo: list[InputVideo], config: Config, wanted_workers: int) -> int:
    """How many perception calls the run can keep busy at once, as far as sizing the pool needs: one per
    video, and when there are fewer videos than wanted actors, each long video's segments (the few headers
    are read here, on the driver; an unreadable one counts once)."""
    if len(todo) >= wanted_workers:
        return len(todo)
    units = 0
    for video in todo:
        try:
            units += len(plan_segments(video.video_id, video.uri, probe_duration(video.uri), config))
        except ValueError:  # a config that cannot split: the video fails with that reason later
            units += 1
    return units


class _Scheduler:
    """The driver loop: keep every perception actor busy, split long videos into segments, hand results to
    the events actors, enforce deadlines, replace dead actors, and yield each video's status once."""

    def __init__(self, todo: list[InputVideo], config: Config, out_uri: str, pool: PoolPlan, quiet: bool = False,
                 on_segment: Optional[Callable[[str, int, int], None]] = None):
        import ray

        self.quiet = quiet
        self.on_segment = on_segment
        self.config = config
        self.out_uri = out_uri
        self.store = OutputStore(out_uri)
        self.pool = pool
        self.timeout = config.run.clip_timeout_seconds
        self.per_second = config.run.clip_timeout_per_video_second
        self.queue: collections.deque[_Work] = collections.deque(_Work(_Clip(v), "probe") for v in todo)
        # Restarts of perception actors are ours (a fresh actor per dead one, counted per unit of work), not
        # Ray's. No runtime_env for the thread limits: it would cost every actor a dedicated, not prestarted,
        # worker process (~2 s); Ray already sets OMP_NUM_THREADS to the actor's CPUs and
        # PerceptionActor pins the rest.
        self.perception_class = ray.remote(PerceptionActor).options(
            num_cpus=pool.cpus_per_worker, num_gpus=pool.gpus_per_worker, max_restarts=0, max_task_retries=0)
        # Events + QA take ~1 % of a clip's time: one CPU actor serves several perception actors. They
        # claim no CPU slot so that perception can hold every core (Ray's CPUs are for placement, not
        # isolation). Ray restarts a dead one and retries its clip (finishing is idempotent), bounded.
        events_class = ray.remote(EventsActor).options(num_cpus=0, max_restarts=-1,
                                                        max_task_retries=config.run.max_retries)
        n_events = max(1, -(-pool.workers // _PERCEPTION_ACTORS_PER_EVENTS_ACTOR))
        self.events_actors = [events_class.remote(config, out_uri) for _ in range(n_events)]
        self.events_load = [0] * n_events
        self.slots: list[_Slot] = []
        self.startup_failures: list[str] = []  # consecutive, reset by any actor that starts
        self.calls: dict[Any, _Call] = {}  # ObjectRef -> what the driver is waiting for

    # -- perception actors --
    def _start_actor(self) -> None:
        actor = self.perception_class.remote(self.config, self.out_uri, self.pool.threads_per_worker, self.quiet)
        slot = _Slot(actor=actor)
        self.slots.append(slot)
        deadline = time.monotonic() + self.config.run.worker_start_timeout_seconds
        self.calls[actor.ready.remote()] = _Call("start", deadline, slot=slot)

    def _replace_actor(self, slot: _Slot) -> None:
        import ray

        self.slots.remove(slot)
        ray.kill(slot.actor, no_restart=True)
        self._start_actor()

    def _startup_failed(self, slot: _Slot, reason: str) -> None:
        self.startup_failures.append(reason)
        if len(self.startup_failures) > self.config.run.max_retries:
            raise PerceptionStartupError(
                f"perception workers cannot start ({len(self.startup_failures)} attempts): {reason}")
        self._replace_actor(slot)

    def _dispatch(self) -> None:
        """Give queued work to idle, started actors."""
        for slot in self.slots:
            if not self.queue:
                return
            if slot.ready and slot.work is None:
                work = self.queue.popleft()
                work.attempts += 1
                slot.work = work
                deadline = time.monotonic() + self.timeout + work.seconds() * self.per_second
                result_ref = None
                if work.kind == "probe":
                    ref = slot.actor.duration.remote(work.clip.video)
                elif work.kind == "whole":
                    ref, result_ref = slot.actor.perceive.options(num_returns=2).remote(work.clip.video)
                else:
                    ref, result_ref = slot.actor.perceive_segment.options(num_returns=2).remote(
                        work.spec, len(work.clip.segments))
                self.calls[ref] = _Call("perception", deadline, slot=slot, work=work, result_ref=result_ref)

    def _fail(self, clip: _Clip, error: str) -> dict:
        """Fail a video (once): drop its queued work and record why; results still running are ignored."""
        clip.done = True
        clip.results.clear()
        self.queue = collections.deque(w for w in self.queue if w.clip is not clip)
        if not error.startswith(clip.video.uri):
            error = f"{clip.video.uri}: {error}"
        return runner.failed_status(clip.video, error, self.config, self.store, clip.started)

    # -- outcomes --
    def _on_started(self, ref: Any, call: _Call) -> None:
        import ray

        try:
            ray.get(ref)
        except ray.exceptions.RayError as exc:
            self._startup_failed(call.slot, _reason(exc))
            return
        call.slot.ready = True
        self.startup_failures.clear()

    def _on_perception(self, ref: Any, call: _Call) -> Optional[dict]:
        import ray

        slot, work = call.slot, call.work
        clip = work.clip
        slot.work = None
        try:
            answer = ray.get(ref)  # small: the duration, or None / an error; the tables stay in the object store
        except ray.exceptions.RayActorError as exc:  # the process died mid-call: OOM kill, segfault, kill -9
            work.deaths.append(_reason(exc))
            self._replace_actor(slot)
            if clip.done:
                return None
            if work.attempts <= self.config.run.max_retries:
                log.warning("%s: %sperception worker died (%s); retrying (%d/%d)", clip.video.video_id,
                            work.describe(), work.deaths[-1], work.attempts, self.config.run.max_retries)
                self.queue.appendleft(work)
                return None
            return self._fail(clip, f"{work.describe()}perception worker died on each of {work.attempts} attempts "
                                    f"(out of memory or a crash in native code?); last: {work.deaths[-1]}")
        if clip.done:
            return None  # another segment of this video already failed it
        if work.kind == "probe":
            return self._plan(clip, answer)
        if answer is not None:  # the work raised
            if work.kind == "whole":
                clip.done = True
                return answer  # the actor already wrote the failed status
            return self._fail(clip, answer)
        if work.kind == "whole":
            self._finish(clip, "finish", call.result_ref)
        else:
            clip.results[work.spec.segment_index] = call.result_ref
            if self.on_segment is not None:
                self.on_segment(clip.video.video_id, len(clip.results), len(clip.segments))
            if len(clip.results) == len(clip.segments):
                self._finish(clip, "finish_segments", *[clip.results[i] for i in range(len(clip.segments))])
        return None

    def _plan(self, clip: _Clip, duration: Optional[float]) -> Optional[dict]:
        """A probed video: perceive it whole, or queue its segments ahead of other videos, so that every
        free actor takes one of them."""
        clip.duration_s = float(duration or 0.0)
        try:
            specs = plan_segments(clip.video.video_id, clip.video.uri, duration, self.config)
        except ValueError as exc:  # a config that cannot split this video
            return self._fail(clip, str(exc))
        if len(specs) == 1:
            self.queue.appendleft(_Work(clip, "whole"))
            return None
        clip.segments = specs
        self.queue.extendleft(reversed([_Work(clip, "segment", spec=spec) for spec in specs]))
        log.info("%s: %.0f s, %d segments", clip.video.video_id, clip.duration_s, len(specs))
        return None

    def _finish(self, clip: _Clip, method: str, *result_refs: Any) -> None:
        """Hand perceived tables to the least loaded events actor (``finish`` or ``finish_segments``)."""
        index = min(range(len(self.events_actors)), key=self.events_load.__getitem__)
        self.events_load[index] += 1
        # events + QA grow with the video too (and a fresh events actor first loads its Numba cache)
        deadline = time.monotonic() + self.timeout + clip.duration_s * self.per_second
        actor = self.events_actors[index]
        # Ray resolves the refs inside the events actor: the tables never pass through the driver
        if method == "finish":
            finish_ref = actor.finish.remote(clip.video, result_refs[0], clip.started)
        else:
            finish_ref = actor.finish_segments.remote(clip.video, clip.started, *result_refs)
        self.calls[finish_ref] = _Call("finish", deadline, clip=clip, events_index=index)

    def _on_finished(self, ref: Any, call: _Call) -> dict:
        import ray

        self.events_load[call.events_index] -= 1
        call.clip.done = True
        call.clip.results.clear()
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:  # its worker died more often than the retries allow
            return self._fail(call.clip, f"events/QA worker failed: {_reason(exc)}")

    def _expire(self, now: float) -> list[dict]:
        """Fail work past its deadline and replace the actor stuck on it (a hung native call cannot be
        interrupted, only its process killed)."""
        import ray

        statuses = []
        for ref, call in list(self.calls.items()):
            if now < call.deadline:
                continue
            del self.calls[ref]
            allowed = call.deadline - call.submitted
            if call.kind == "start":
                self._startup_failed(call.slot, f"model loading took longer than "
                                                f"{self.config.run.worker_start_timeout_seconds:g} s "
                                                f"(run.worker_start_timeout_seconds)")
            elif call.kind == "perception":
                work = call.work
                length = "segment's" if work.kind == "segment" else "video's"
                error = (f"{work.describe()}timed out after {round(allowed, 1):g} s (run.clip_timeout_seconds "
                         f"{self.timeout:g} s + run.clip_timeout_per_video_second x the {length} length)")
                log.warning("%s: %s; replacing its worker", work.clip.video.video_id, error)
                call.slot.work = None
                self._replace_actor(call.slot)
                if not work.clip.done:
                    statuses.append(self._fail(work.clip, error))
            else:
                error = (f"timed out after {round(allowed, 1):g} s (run.clip_timeout_seconds {self.timeout:g} s + "
                         f"run.clip_timeout_per_video_second x the video's length)")
                log.warning("%s: %s in events/QA; restarting that worker", call.clip.video.video_id, error)
                self.events_load[call.events_index] -= 1
                ray.cancel(ref)  # so that Ray does not retry this one on the restarted actor
                # Ray restarts the actor (max_restarts=-1) and retries the other clips it held
                ray.kill(self.events_actors[call.events_index], no_restart=False)
                statuses.append(self._fail(call.clip, error))
        return statuses

    def run(self) -> Iterator[dict]:
        import ray

        handlers = {"start": self._on_started, "perception": self._on_perception, "finish": self._on_finished}
        for _ in range(self.pool.workers):
            self._start_actor()
        try:
            while self.calls or self.queue:
                self._dispatch()
                now = time.monotonic()
                next_deadline = min((c.deadline for c in self.calls.values()), default=now)
                wait = min(max(next_deadline - now, 0.0), _POLL_SECONDS)
                ready, _ = ray.wait(list(self.calls), num_returns=1, timeout=wait)
                for ref in ready:
                    status = handlers[(call := self.calls.pop(ref)).kind](ref, call)
                    if status is not None:
                        yield status
                yield from self._expire(time.monotonic())
        finally:
            for actor in [slot.actor for slot in self.slots] + self.events_actors:
                ray.kill(actor, no_restart=True)
            self.slots.clear()


def _reason(exc: BaseException, limit: int = 300) -> str:
    """What a Ray error says happened, in one line, without its preamble, colour codes or advice."""
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(exc).splitlines()]
    lines = [line for line in lines if line]
    if getattr(exc, "actor_init_failed", False) and lines:
        text = lines[-1]  # the exception raised in __init__, after the traceback
    else:
        # ActorDiedError: a generic first line, tab-indented fields, then the system's reason
        details = [line for line in lines[1:] if not re.match(r"^(class_name|actor_id|pid|name|namespace|ip):", line)]
        text = f"{lines[0] if lines else type(exc).__name__}" + (f" {details[0]}" if details else "")
    text = text.split(" Some common causes include")[0]
    return f"{type(exc).__name__}: {text[:limit]}"
