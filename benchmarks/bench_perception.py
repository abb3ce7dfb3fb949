"""Speed and memory of CPU perception on the shared clips and on a 60 s clip made by looping one.

    OMP_NUM_THREADS=2 python -m benchmarks.bench_perception [--fps 2] [--detector auto,mediapipe] [--media DIR]

Several backends (comma-separated ``--detector``) run interleaved: each clip goes through every backend
before the next clip, so on a shared, loaded machine they see the same load and their ratio holds even
when the absolute figures do not. Prints per-stage seconds (decode, shots, detect, refine, objects,
track, gaze, table), frames/s and peak RSS per clip and backend, then per backend
``realtime_factor[<backend>]=<video seconds per wall second>`` and ``decode_share[...]``, and the ratio
of the first backend's real-time factor to each other's. Model loading and a warm-up clip (JIT
compilation, lazy imports) are not timed.
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

import av

from benchmarks.cpu_steal import cpu_times, describe, steal_share
from pipeline.clip import ClipSpec
from pipeline.config import Config
from pipeline.perception import PerceptionWorker
from pipeline.video import iter_frames, probe
from tests.shared_media import SHARED_CLIPS, find_media_dir

STAGES = ("decode", "shots", "detect", "refine", "objects", "track", "gaze", "table", "total")


def loop_clip(source: Path, target: Path, seconds: float) -> None:
    """Write ``source`` repeated until ``seconds`` long, by copying packets with shifted timestamps
    (no re-encoding, so the result decodes exactly like the original)."""
    with av.open(str(source)) as probe_container:
        stream = probe_container.streams.video[0]
        period = stream.duration or int(probe_container.duration / av.time_base / stream.time_base)
    with av.open(str(source)) as inp, av.open(str(target), "w") as out:
        in_stream = inp.streams.video[0]
        out_stream = out.add_stream_from_template(in_stream)
        offset = 0
        while offset * in_stream.time_base < seconds:
            inp.seek(0, stream=in_stream)
            for packet in inp.demux(in_stream):
                if packet.dts is None:
                    continue
                packet.pts += offset
                packet.dts += offset
                packet.stream = out_stream
                out.mux(packet)
            offset += period


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def decode_only_seconds(uri: str, config: Config) -> float:
    started = time.perf_counter()
    for _ in iter_frames(uri, config.sampling.fps, config.sampling.max_side):
        pass
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--detector", default="auto,mediapipe", help="comma-separated: auto | yolo | mediapipe")
    parser.add_argument("--weights", default=None)
    parser.add_argument("--runtime", default=None,
                        help="comma-separated YOLO runtimes (auto | openvino | onnx | torch), each run as its own "
                             "backend interleaved with the others, e.g. torch,auto [default: the config's]")
    parser.add_argument("--device", default=None, help="auto | cpu | cuda [default: the config's]")
    parser.add_argument("--yolo-input-size", type=int, default=None)
    parser.add_argument("--loop-seconds", type=float, default=60.0)
    parser.add_argument("--without-faint-pass", action="store_true",
                        help="also run the first backend without the faint-small-person pass "
                             "(detector.small_candidate_conf=1.0), interleaved, to measure its cost")
    parser.add_argument("--without-pair-split", action="store_true",
                        help="also run the first backend without the zoomed look at boxes that may hold two "
                             "people (detector.pair_split_input_size=0), interleaved, to measure its cost")
    parser.add_argument("--clips", default=",".join(SHARED_CLIPS),
                        help="comma-separated clip names in --media (e.g. add opencv_vtest.avi)")
    parser.add_argument("--media", type=Path, default=None, help="folder of the shared clips [../shared/media or $SOCIALTRACE_MEDIA]")
    args = parser.parse_args()
    args.media = args.media or find_media_dir()

    configs = {}
    runtimes = args.runtime.split(",") if args.runtime else [None]
    for backend in args.detector.split(","):
        for runtime in runtimes if backend != "mediapipe" else [None]:
            detector = {"backend": backend} | ({"weights": args.weights} if args.weights else {})
            if args.yolo_input_size:
                detector["yolo_input_size"] = args.yolo_input_size
            if runtime:
                detector["runtime"] = runtime
            if args.device:
                detector["device"] = args.device
            label = f"{backend}/{runtime}" if runtime and len(runtimes) > 1 else backend
            configs[label] = Config().replace(sampling={"fps": args.fps}, detector=detector)
    first = next(iter(configs))
    for wanted, suffix, detector in ((args.without_faint_pass, "nofaint", {"small_candidate_conf": 1.0}),
                                     (args.without_pair_split, "nopair", {"pair_split_input_size": 0})):
        if wanted:
            configs[f"{first}-{suffix}"] = configs[first].replace(detector=detector)
    workers = {}
    for label, config in configs.items():
        load_started = time.perf_counter()
        workers[label] = PerceptionWorker(config)
        runtime = getattr(workers[label].detector, "runtime", "-")
        print(f"{label}: backend={workers[label].backend} runtime={runtime} model_load_s={time.perf_counter() - load_started:.2f} fps={args.fps}")
    print(f"cpus={os.cpu_count()} OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')} "
          f"load_average={' '.join(f'{x:.1f}' for x in os.getloadavg())}")

    with tempfile.TemporaryDirectory() as tmp:
        looped = Path(tmp) / f"kitchen_loop_{int(args.loop_seconds)}s.mp4"
        loop_clip(args.media / "atd_kitchen.mp4", looped, args.loop_seconds)
        uris = [str(args.media / name) for name in args.clips.split(",")] + [str(looped)]
        for worker in workers.values():
            worker(ClipSpec(video_id="warmup", uri=uris[0]))  # compile / first-call costs, not timed

        header = f"{'clip':30s} {'backend':13s} {'video_s':>7s} {'frames':>6s} " + " ".join(f"{s:>7s}" for s in STAGES)
        print(header + f" {'frames/s':>8s} {'x_real':>6s} {'people':>6s} {'rss_MB':>7s}")
        video = dict.fromkeys(workers, 0.0)
        wall = dict.fromkeys(workers, 0.0)
        decode_only = dict.fromkeys(workers, 0.0)
        ticks_before = cpu_times()
        for uri in uris:
            info = probe(uri)
            for label, worker in workers.items():
                result = worker(ClipSpec(video_id=Path(uri).stem, uri=uri))
                decode_only[label] += decode_only_seconds(uri, configs[label])
                seconds = result.timings["total"]
                n_people = len(set(result.tracks.column("person_id").to_pylist()))
                stages = " ".join(f"{result.timings.get(s, 0.0):7.2f}" for s in STAGES)
                print(
                    f"{Path(uri).name[:30]:30s} {label:13s} {info.duration_s:7.2f} {result.n_frames:6d} {stages} "
                    f"{result.n_frames / seconds:8.2f} {info.duration_s / seconds:6.2f} {n_people:6d} {peak_rss_mb():7.0f}",
                    flush=True,
                )
                video[label] += info.duration_s
                wall[label] += seconds
        steal = steal_share(ticks_before, cpu_times())
    for worker in workers.values():
        worker.close()
    print(f"{describe(steal)} (CPU time the hypervisor gave other VMs during the timed clips); "
          f"load_average={' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"peak_rss_mb={peak_rss_mb():.0f}")
    factors = {label: video[label] / wall[label] for label in workers}
    for label in workers:
        print(f"total[{label}] video {video[label]:.1f} s in {wall[label]:.1f} s wall; decode-only {decode_only[label]:.1f} s")
        print(f"decode_share[{label}]={decode_only[label] / wall[label]:.3f}")
        print(f"realtime_factor[{label}]={factors[label]:.2f}")
    first = next(iter(workers))
    for label in list(workers)[1:]:
        print(f"speed_ratio[{first}/{label}]={factors[first] / factors[label]:.2f}")


if __name__ == "__main__":
    main()
