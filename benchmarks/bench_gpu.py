"""Throughput of perception with YOLO on the GPU (``--device cuda``): decode and MediaPipe stay on CPU threads.

    python -m benchmarks.bench_gpu [--fps 2] [--batch-size 32] [--threads N] [--loop-seconds 60] [--media DIR]

Prints, per clip, the per-stage seconds (decode, shots, detect = YOLO on the GPU, refine = MediaPipe face
mesh / hands on CPU threads, track, gaze, table) and then ``video_seconds_per_wall_second[cuda]`` over all
clips, with the share of wall time each stage took: the stage that dominates says whether a node needs more
CPU threads per GPU (refine, decode) or a faster GPU (detect). Without CUDA it says so and exits 0 having
run nothing: no figure is made up. Model loading and a warm-up clip are not timed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

STAGES = ("decode", "shots", "detect", "refine", "track", "gaze", "table", "total")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=32, help="frames per YOLO call on the GPU")
    parser.add_argument("--threads", type=int, default=None,
                        help="MediaPipe threads (one model set each) [default: the run config's, one per core]")
    parser.add_argument("--loop-seconds", type=float, default=60.0)
    parser.add_argument("--clips", default=None, help="comma-separated clip names in --media [the shared clips]")
    parser.add_argument("--media", type=Path, default=None)
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("bench_gpu: CUDA is not available on this machine (torch sees no GPU): nothing was run, "
              "no GPU figure exists from this run.")
        return

    from benchmarks.bench_perception import loop_clip
    from pipeline.clip import ClipSpec
    from pipeline.config import Config
    from pipeline.perception import PerceptionWorker
    from pipeline.video import probe
    from tests.shared_media import SHARED_CLIPS, find_media_dir

    media = args.media or find_media_dir()
    names = args.clips.split(",") if args.clips else list(SHARED_CLIPS)
    run = {"perception_threads": args.threads} if args.threads else {}
    config = Config().replace(sampling={"fps": args.fps},
                              detector={"device": "cuda", "runtime": "torch", "batch_size": args.batch_size}, run=run)
    worker = PerceptionWorker(config)
    print(f"device={torch.cuda.get_device_name(0)} cpus={os.cpu_count()} batch_size={args.batch_size} "
          f"runtime={getattr(worker.detector, 'runtime', '-')} threads={config.run.perception_thread_count()}")
    totals = dict.fromkeys(STAGES, 0.0)
    video_seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        looped = Path(tmp) / "kitchen_loop.mp4"
        loop_clip(media / "atd_kitchen.mp4", looped, args.loop_seconds)
        uris = [str(media / name) for name in names] + [str(looped)]
        worker(ClipSpec(video_id="warmup", uri=uris[0]))
        print(f"{'clip':30s} {'video_s':>7s} " + " ".join(f"{s:>7s}" for s in STAGES) + f" {'x_real':>6s}")
        for uri in uris:
            duration = probe(uri).duration_s
            result = worker(ClipSpec(video_id=Path(uri).stem, uri=uri))
            for stage in STAGES:
                totals[stage] += result.timings.get(stage, 0.0)
            video_seconds += duration
            print(f"{Path(uri).name[:30]:30s} {duration:7.2f} "
                  + " ".join(f"{result.timings.get(s, 0.0):7.2f}" for s in STAGES)
                  + f" {duration / result.timings['total']:6.2f}", flush=True)
    worker.close()
    print("stage_share " + " ".join(f"{s}={totals[s] / totals['total']:.3f}" for s in STAGES if s != "total"))
    print(f"video_seconds_per_wall_second[cuda]={video_seconds / totals['total']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
