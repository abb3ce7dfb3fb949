"""Benchmark of the events stage on 10 people x 36,000 frames (one hour at 10 fps) of synthetic tracks.

Times every Numba kernel against its NumPy twin on the same inputs (best of --repeat runs each, JIT
compile and cache loading excluded and reported separately), then the whole events stage (tracks table -> events
table; median wall-clock and CPU seconds of --repeat runs).
Last line: ``speedup_numba_vs_numpy=<geometric mean over kernels>``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_events [--people 10] [--frames 36000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from events import detect_events, kernels
from events.arrays import tracks_to_arrays
from events.gaze import gaze_onsets, gaze_relations, head_relative_gaze
from pipeline.config import EventConfig
from tests.scenarios import random_tracks


def best_of(repeat: int, fn, *args, min_total: float = 0.25, max_calls: int = 500) -> float:
    """Fastest of at least ``repeat`` calls, and of as many more as fit in ``min_total`` seconds: a
    sub-millisecond kernel timed only five times is at the mercy of one scheduler hiccup."""
    best, spent, calls = float("inf"), 0.0, 0
    while calls < repeat or (spent < min_total and calls < max_calls):
        start = time.perf_counter()
        fn(*args)
        elapsed = time.perf_counter() - start
        best, spent, calls = min(best, elapsed), spent + elapsed, calls + 1
    return best


def kernel_cases(arrays, config: EventConfig) -> dict[str, tuple]:
    """name -> (numba function, numpy twin, arguments) on hour-long inputs."""
    relations = gaze_relations(arrays, config)
    onsets = gaze_onsets(arrays, relations, config)
    n_people, n_targets, n_frames = relations.raw.shape
    flat = relations.raw.reshape(-1, n_frames)
    index = np.where(relations.raw.any(1), relations.raw.argmax(1), -1).astype(np.int64)
    relative, valid = head_relative_gaze(arrays)
    rng = np.random.default_rng(0)
    objects = np.repeat(arrays.hand_boxes[:3, :, 1, :], 1, axis=0) + rng.normal(0, 0.01, (3, n_frames, 4))
    cos_cone = float(np.cos(np.radians(config.reach_cone_half_angle_deg)))
    gap, blip = arrays.frames(config.smoothing_gap_seconds), arrays.min_frames(config.smoothing_blip_seconds)
    look_rows, look_starts, look_ends = relations.runs
    long_enough = look_ends - look_starts + 1 >= arrays.min_frames(config.min_gaze_at_seconds, config.min_look_samples)
    look_rows, look_starts, look_ends = look_rows[long_enough], look_starts[long_enough], look_ends[long_enough]
    pointing = kernels.smooth_runs(arrays.pointing, arrays.segment, gap, blip)
    point_rows, point_starts, point_ends = kernels.extract_runs(pointing, arrays.segment)
    return {
        "smooth_runs": (kernels.smooth_runs, kernels.smooth_runs_numpy, (flat, arrays.segment, gap, blip)),
        "smooth_labels": (kernels.smooth_labels, kernels.smooth_labels_numpy, (index, arrays.segment, gap, blip)),
        "extract_runs": (kernels.extract_runs, kernels.extract_runs_numpy, (relations.looking.reshape(-1, n_frames), arrays.segment)),
        "target_occupancy": (kernels.target_occupancy, kernels.target_occupancy_numpy, (index, n_targets)),
        "gaze_moving": (kernels.gaze_moving, kernels.gaze_moving_numpy,
                        (relative, valid, arrays.times, arrays.segment, config.shift_min_speed)),
        "arm_aim": (kernels.arm_aim, kernels.arm_aim_numpy,
                    (arrays.shoulder, arrays.elbow, arrays.wrist, arrays.body_box, np.arange(n_people), cos_cone)),
        "hand_holding": (kernels.hand_holding, kernels.hand_holding_numpy, (arrays.hand_boxes, objects, config.hold_min_overlap)),
        "match_following": (kernels.match_following, kernels.match_following_numpy,
                            (onsets.target, onsets.frame, onsets.person, relations.looking, arrays.times, arrays.segment,
                             config.following_min_lag_seconds, config.following_max_lag_seconds)),
        # the support of every gaze_at interval (as detect_gaze_at asks for it)
        "interval_support": (kernels.interval_support, kernels.interval_support_numpy,
                             (flat, arrays.gaze_conf, look_rows, look_rows // max(n_targets, 1), look_starts, look_ends)),
        # the target of every pointing interval (as detect_pointing asks for it)
        "interval_mode": (kernels.interval_mode, kernels.interval_mode_numpy,
                          (arrays.point_type, arrays.point_id, arrays.pointing & (arrays.point_type >= 0),
                           point_rows, point_starts, point_ends)),
        # onset and continuation of the look behind every gaze run (the stage asks this of eye contacts)
        "run_bounds": (kernels.run_bounds, kernels.run_bounds_numpy,
                       (relations.looking.reshape(-1, n_frames), arrays.segment, relations.runs[0], relations.runs[1])),
    }


def tiny_inputs() -> dict[str, tuple]:
    """Each kernel's arguments at toy size, with the argument types of the stage's calls."""
    seg = np.zeros(4, np.int64)
    one = np.zeros(1, np.int64)
    return {
        "smooth_runs": (np.zeros((1, 4), bool), seg, 1, 1),
        "smooth_labels": (np.zeros((1, 4), np.int64), seg, 1, 1),
        "extract_runs": (np.zeros((1, 4), bool), seg),
        "target_occupancy": (np.zeros((1, 4), np.int64), 2),
        "gaze_moving": (np.zeros((1, 4, 2)), np.ones((1, 4), bool), np.arange(4.0), seg, 0.5),
        "arm_aim": (np.zeros((1, 4, 2, 2)), np.zeros((1, 4, 2, 2)), np.zeros((1, 4, 2, 2)), np.zeros((1, 4, 4)), one, 0.5),
        "hand_holding": (np.zeros((1, 4, 2, 4)), np.zeros((1, 4, 4)), 0.2),
        "match_following": (one, one, one, np.zeros((1, 1, 4), bool), np.arange(4.0), seg, 0.5, 2.0),
        "interval_support": (np.zeros((1, 4), bool), np.zeros((1, 4)), one, one, one, one),
        "interval_mode": (np.zeros((1, 4), np.int64), np.zeros((1, 4), np.int64), np.zeros((1, 4), bool), one, one, one),
        "run_bounds": (np.zeros((1, 4), bool), seg, one, one),
    }


def compile_seconds() -> tuple[dict[str, float], dict[str, float]]:
    """Per kernel: the first call of the cached kernel (loads the on-disk cache, or compiles when there is
    none) and a from-scratch JIT compile of the same function without the cache."""
    load, compile_ = {}, {}
    for name, args in tiny_inputs().items():
        kernel = getattr(kernels, name)
        start = time.perf_counter()
        kernel(*args)
        load[name] = time.perf_counter() - start
        fresh = njit(cache=False)(kernel.py_func)
        start = time.perf_counter()
        fresh(*args)
        compile_[name] = time.perf_counter() - start
    return load, compile_


def median_seconds(repeat: int, fn, *args) -> tuple[float, float]:
    """Median wall-clock and CPU seconds of ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn(*args)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return float(np.median(wall)), float(np.median(cpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=10)
    parser.add_argument("--frames", type=int, default=36_000)
    parser.add_argument("--fps", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (the median is reported)")
    args = parser.parse_args()
    config = EventConfig()

    load, compiled = compile_seconds()
    print(f"jit_cache_load_seconds total={sum(load.values()):.3f} " + " ".join(f"{k}={v:.3f}" for k, v in load.items()))
    print(f"jit_compile_seconds (no cache) total={sum(compiled.values()):.3f} "
          + " ".join(f"{k}={v:.3f}" for k, v in compiled.items()))

    start = time.perf_counter()
    tracks = random_tracks(args.people, args.frames, args.fps)
    print(f"synthetic tracks: {tracks.num_rows} rows ({args.people} people x {args.frames} frames) "
          f"built in {time.perf_counter() - start:.2f} s")
    arrays = tracks_to_arrays(tracks, None, args.fps)
    speedups = {}
    print(f"{'kernel':<22}{'numba_s':>10}{'numpy_s':>10}{'speedup':>9}   (best of >= {args.repeat} calls each, more for fast kernels)")
    for name, (fast, twin, kernel_args) in kernel_cases(arrays, config).items():
        fast(*kernel_args)  # warm (compiled above; this touches the large arrays once)
        twin(*kernel_args)
        t_fast = best_of(args.repeat, fast, *kernel_args)
        t_twin = best_of(args.repeat, twin, *kernel_args)
        speedups[name] = t_twin / t_fast
        print(f"{name:<22}{t_fast:>10.4f}{t_twin:>10.4f}{t_twin / t_fast:>8.1f}x")

    detect_events(tracks.slice(0, 1000), config)  # warm every code path once
    events = detect_events(tracks, config)
    stage_wall, stage_cpu = median_seconds(args.repeat, detect_events, tracks, config)
    arrays_wall, arrays_cpu = median_seconds(args.repeat, tracks_to_arrays, tracks, None, None)
    counts = {}
    for kind in events.column("event_type").to_pylist():
        counts[kind] = counts.get(kind, 0) + 1
    print(f"events stage (tracks -> events, {events.num_rows} events): median {stage_wall:.3f} s wall, {stage_cpu:.3f} s CPU; "
          f"of which tracks -> dense arrays {arrays_wall:.3f} s wall, {arrays_cpu:.3f} s CPU")
    print("events by type: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    first_eight = list(speedups.values())[:8]  # the kernels of the first version, for comparison
    print(f"geometric mean speedup of the first eight kernels: {float(np.exp(np.mean(np.log(first_eight)))):.1f}")
    print(f"speedup_numba_vs_numpy={float(np.exp(np.mean(np.log(list(speedups.values()))))):.1f}")


if __name__ == "__main__":
    main()
