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

Long videos: DESIGN.md §1 splits videos longer than ``config.sampling.max_clip_seconds`` into
scene-bounded segments that share one person_id space. That needs cross-segment identity stitching in
tracking/, which does not exist yet, so here a whole video is one unit of work: correct (perception
streams frames, so memory does not grow with length, and ids are video-wide) but not parallel within a
video, which is why the timeout grows with the video's length (read from its header before the clip
starts). The next step is a planning pass (probe + scene cuts, on an actor) that emits
``ClipSpec(start_s, end_s)`` rows, and a per-video reduce that stitches the segments' tracklets
(appearance descriptors kept per tracklet) before events run.
"""
from __future__ import annotations

import collections
import logging
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from pipeline import runner
from pipeline.clip import ClipSpec, PerceptionResult
from pipeline.config import Config, usable_cores
from pipeline.inputs import InputVideo
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

    def __init__(self, config: Config, out_uri: str, threads: int):
        for name in _THREAD_ENV_VARS:  # read by the native libraries when they load, so set before
            os.environ[name] = str(threads)
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
        """The video's length from its header (fast), so the driver can give long videos more time;
        None when it cannot be read (``perceive`` then reports why)."""
        from pipeline.video import VideoError, probe

        try:
            return probe(video.uri).duration_s
        except (VideoError, OSError):
            return None

    def perceive(self, video: InputVideo) -> tuple[Optional[dict], Optional[PerceptionResult]]:
        started = time.time()
        self.store.delete_video(video.video_id)  # a previous attempt may have left partitions
        try:
            result = self.worker(ClipSpec(video_id=video.video_id, uri=video.uri))
        except Exception as exc:  # one bad clip must never stop the run (same rule as runner.process_video)
            return runner.failed_status(video, runner.error_message(video.uri, exc), self.config, self.store,
                                        started), None
        return None, result


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
    video: InputVideo
    attempts: int = 0  # perception attempts started
    started: float = field(default_factory=time.time)  # wall clock of the first attempt
    deaths: list[str] = field(default_factory=list)  # why each dead worker died
    duration_s: float = 0.0  # the video's length, once probed: longer videos get more time


@dataclass
class _Slot:
    """One perception actor of the pool and the clip it is working on."""

    actor: Any
    clip: Optional[_Clip] = None
    ready: bool = False  # __init__ finished (models loaded)


@dataclass
class _Call:
    """One outstanding remote call the driver waits for."""

    kind: str  # "start" (actor __init__) | "duration" (header probe) | "perceive" | "finish" (events + QA)
    deadline: float  # time.monotonic() after which the call is given up
    slot: Optional[_Slot] = None  # start, perceive
    clip: Optional[_Clip] = None  # perceive, finish
    events_index: int = -1  # finish: which events actor
    result_ref: Any = None  # perceive: the PerceptionResult, handed on without fetching it
    perceive: Optional["_Call"] = None  # duration: the perceive call whose deadline it extends
    submitted: float = field(default_factory=time.monotonic)


@dataclass
class PoolPlan:
    """How many perception actors, and their resources."""

    workers: int
    cpus_per_worker: float
    threads_per_worker: int
    gpus_per_worker: float


def plan_pool(config: Config, n_clips: int, cluster_cpus: float, cluster_gpus: float,
              largest_node_cpus: float) -> PoolPlan:
    """Size the actor pool: ``config.run.workers`` (0 = one per CPU), capped by GPUs and by the clips.

    Spare cores go to intra-op threads (1 worker on 2 cores runs 2 threads), but never more than one
    node has, since an actor cannot span nodes; more workers than cores share them (fractional CPUs).
    """
    gpus = config.run.gpus_per_worker
    if gpus < 0:
        raise ValueError(f"run.gpus_per_worker must be >= 0, got {gpus}")
    if config.run.workers < 0:
        raise ValueError(f"run.workers must be >= 0 (0 = one per CPU), got {config.run.workers}")
    workers = config.run.workers or max(1, int(cluster_cpus))
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


def _cluster_shape() -> tuple[float, float, float]:
    import ray

    resources = ray.cluster_resources()
    node_cpus = [n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive")]
    return resources.get("CPU", 1.0), resources.get("GPU", 0.0), max(node_cpus or [1.0])


# --- the executor ------------------------------------------------------------------------------

def iter_ray(todo: list[InputVideo], config: Config, out_uri: str,
             ray_address: Optional[str] = None) -> Iterator[dict]:
    """Process ``todo`` on Ray; yield one status dict per clip as it completes (ok or failed).

    Joins ``ray_address`` when given (e.g. "auto" on a cluster head), else starts a local instance and
    stops it afterwards. A clip whose actor dies is retried on a fresh actor up to
    ``config.run.max_retries`` times, then failed; a clip running longer than
    ``config.run.clip_timeout_seconds`` + ``config.run.clip_timeout_per_video_second`` x its length is
    failed and its actor replaced. Raises ``PerceptionStartupError`` when no perception actor can start.
    """
    import ray

    if not todo:
        return
    connected = _connect(ray_address)
    try:
        cpus, gpus, node_cpus = _cluster_shape()
        pool = plan_pool(config, len(todo), cpus, gpus, node_cpus)
        log.info("Ray: %d perception actor(s), %g CPU / %d thread(s) / %g GPU each", pool.workers,
                 pool.cpus_per_worker, pool.threads_per_worker, pool.gpus_per_worker)
        yield from _Scheduler(todo, config, out_uri, pool).run()
    finally:
        if connected:
            ray.shutdown()


class _Scheduler:
    """The driver loop: keep every perception actor busy, hand results to the events actors, enforce
    deadlines, replace dead actors, and yield each clip's status once."""

    def __init__(self, todo: list[InputVideo], config: Config, out_uri: str, pool: PoolPlan):
        import ray

        self.config = config
        self.out_uri = out_uri
        self.store = OutputStore(out_uri)
        self.pool = pool
        self.timeout = config.run.clip_timeout_seconds
        self.queue: collections.deque[_Clip] = collections.deque(_Clip(v) for v in todo)
        # Restarts of perception actors are ours (a fresh actor per dead one, counted per clip), not Ray's.
        # No runtime_env for the thread limits: it would cost every actor a dedicated, not prestarted,
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
        actor = self.perception_class.remote(self.config, self.out_uri, self.pool.threads_per_worker)
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
        """Give queued clips to idle, started actors."""
        for slot in self.slots:
            if not self.queue:
                return
            if slot.ready and slot.clip is None:
                clip = self.queue.popleft()
                clip.attempts += 1
                slot.clip = clip
                # the actor runs these in order: the header probe first (milliseconds), then the clip
                duration_ref = slot.actor.duration.remote(clip.video)
                failure_ref, result_ref = slot.actor.perceive.options(num_returns=2).remote(clip.video)
                perceive = _Call("perceive", time.monotonic() + self.timeout, slot=slot, clip=clip,
                                 result_ref=result_ref)
                self.calls[failure_ref] = perceive
                # never expires itself: a hung probe is the perceive call's timeout
                self.calls[duration_ref] = _Call("duration", float("inf"), clip=clip, perceive=perceive)

    def _fail(self, clip: _Clip, error: str) -> dict:
        return runner.failed_status(clip.video, f"{clip.video.uri}: {error}", self.config, self.store, clip.started)

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

    def _on_duration(self, ref: Any, call: _Call) -> None:
        """A long video gets ``clip_timeout_per_video_second`` more time per second of it."""
        import ray

        try:
            duration = ray.get(ref)
        except ray.exceptions.RayError:  # the actor died: its perceive call reports that
            return
        if duration and call.perceive.clip is call.clip:
            call.clip.duration_s = float(duration)
            call.perceive.deadline += duration * self.config.run.clip_timeout_per_video_second

    def _on_perceived(self, ref: Any, call: _Call) -> Optional[dict]:
        import ray

        slot, clip = call.slot, call.clip
        slot.clip = None
        try:
            failure = ray.get(ref)  # small: None, or the failed status; the tables stay in the object store
        except ray.exceptions.RayActorError as exc:  # the process died mid-clip: OOM kill, segfault, kill -9
            clip.deaths.append(_reason(exc))
            self._replace_actor(slot)
            if clip.attempts <= self.config.run.max_retries:
                log.warning("%s: perception worker died (%s); retrying (%d/%d)", clip.video.video_id,
                            clip.deaths[-1], clip.attempts, self.config.run.max_retries)
                self.queue.appendleft(clip)
                return None
            return self._fail(clip, f"perception worker died on each of {clip.attempts} attempts (out of memory "
                                    f"or a crash in native code?); last: {clip.deaths[-1]}")
        if failure is not None:  # the clip raised; the actor already wrote its failed status
            return failure
        index = min(range(len(self.events_actors)), key=self.events_load.__getitem__)
        self.events_load[index] += 1
        # events + QA grow with the video too (and a fresh events actor first loads its Numba cache)
        deadline = time.monotonic() + self.timeout + clip.duration_s * self.config.run.clip_timeout_per_video_second
        # Ray resolves the ref inside the events actor: the tables never pass through the driver
        finish_ref = self.events_actors[index].finish.remote(clip.video, call.result_ref, clip.started)
        self.calls[finish_ref] = _Call("finish", deadline, clip=clip, events_index=index)
        return None

    def _on_finished(self, ref: Any, call: _Call) -> dict:
        import ray

        self.events_load[call.events_index] -= 1
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:  # its worker died more often than the retries allow
            return self._fail(call.clip, f"events/QA worker failed: {_reason(exc)}")

    def _expire(self, now: float) -> list[dict]:
        """Fail clips past their deadline and replace the actor stuck on each (a hung native call cannot
        be interrupted, only its process killed)."""
        import ray

        statuses = []
        for ref, call in list(self.calls.items()):
            if now < call.deadline:
                continue
            del self.calls[ref]
            allowed = call.deadline - call.submitted
            error = (f"timed out after {allowed:.0f} s (run.clip_timeout_seconds {self.timeout:g} s + "
                     f"run.clip_timeout_per_video_second x the video's length)")
            if call.kind == "start":
                self._startup_failed(call.slot, f"model loading took longer than "
                                                f"{self.config.run.worker_start_timeout_seconds:g} s "
                                                f"(run.worker_start_timeout_seconds)")
            elif call.kind == "perceive":
                log.warning("%s: %s; replacing its worker", call.clip.video.video_id, error)
                call.slot.clip = None
                self._replace_actor(call.slot)
                statuses.append(self._fail(call.clip, error))
            else:
                log.warning("%s: %s in events/QA; restarting that worker", call.clip.video.video_id, error)
                self.events_load[call.events_index] -= 1
                ray.cancel(ref)  # so that Ray does not retry this one on the restarted actor
                # Ray restarts the actor (max_restarts=-1) and retries the other clips it held
                ray.kill(self.events_actors[call.events_index], no_restart=False)
                statuses.append(self._fail(call.clip, error))
        return statuses

    def run(self) -> Iterator[dict]:
        import ray

        handlers = {"start": self._on_started, "duration": self._on_duration, "perceive": self._on_perceived,
                    "finish": self._on_finished}
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
