"""The Ray executor: equal tables to the local executor, `ray submit` script, cluster config, pool sizing."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
import ray.autoscaler
import yaml

from pipeline.config import Config
from pipeline.inputs import assign_video_ids
from pipeline.ray_runner import plan_pool
from pipeline.ray_submit import submit_arguments
from pipeline.storage import OutputStore
from tests.table_checks import assert_tables_equal, run_both_executors, sorted_table

REPO = Path(__file__).resolve().parents[1]
CLIPS = ("tvhid_highfive_0018.avi", "tvhid_handshake_0001.avi")
RAY_SCHEMA = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
# columns that measure how long something took, not what was found
TIMING_COLUMNS = {"wall_s"}


# --- cluster config and submit script (no Ray instance needed) ---------------------------------

def _commented_aws_example(text: str) -> dict:
    """The AWS example that cluster.yaml carries as a comment block, parsed."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# provider:"))
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line[2:] if line.startswith("# ") else line[1:])
    return yaml.safe_load("\n".join(re.sub(r"\s+#.*$", "", b) for b in block))


def test_cluster_yaml_is_valid_for_ray_up():
    import jsonschema
    from ray.autoscaler._private.commands import prepare_config
    from ray.autoscaler._private.util import validate_config

    text = (REPO / "pipeline" / "cluster.yaml").read_text()
    config = yaml.safe_load(text)
    jsonschema.validate(config, RAY_SCHEMA)  # the file as written
    prepared = prepare_config(config)  # what `ray up` does: fill defaults and the local node type ...
    validate_config(prepared)  # ... then validate against the same schema plus Ray's own checks
    assert config["provider"]["type"] == "local"
    assert config["provider"]["head_ip"] and len(config["provider"]["worker_ips"]) >= 1
    assert set(prepared["available_node_types"]) == {"local.cluster.node"}
    assert prepared["available_node_types"]["local.cluster.node"]["max_workers"] == len(config["provider"]["worker_ips"])
    assert "." in config["file_mounts"].values()
    assert any("pip install" in c and "socialtrace" in c for c in config["setup_commands"])
    assert any("ray start --head" in c for c in config["head_start_ray_commands"])
    assert any("$RAY_HEAD_IP" in c for c in config["worker_start_ray_commands"])

    aws = _commented_aws_example(text)
    aws_config = {**{k: v for k, v in config.items() if k not in ("provider", "auth", "max_workers")}, **aws}
    jsonschema.validate(aws_config, RAY_SCHEMA)
    validate_config(prepare_config(aws_config))
    assert aws_config["provider"]["type"] == "aws"
    assert aws_config["head_node_type"] in aws_config["available_node_types"]


def test_submit_arguments_force_ray_and_cluster_address():
    assert submit_arguments(["s3://b/videos", "-o", "s3://b/out"], environ={}) == [
        "run", "s3://b/videos", "-o", "s3://b/out", "--executor", "ray", "--ray-address", "auto"]
    # `ray job submit` sets RAY_ADDRESS; an explicit option wins over both
    assert submit_arguments(["v", "-o", "o"], environ={"RAY_ADDRESS": "10.0.0.1:6379"})[-1] == "10.0.0.1:6379"
    explicit = submit_arguments(["v", "-o", "o", "--ray-address=ray://h:10001", "--executor", "ray"], environ={})
    assert explicit.count("--executor") == 1 and "auto" not in explicit


def test_pool_sizing():
    config = Config()
    # workers = 0: one actor per CPU, one thread each
    assert plan_pool(config, 100, 16, 0, 16) == plan_pool(config.replace(run={"workers": 16}), 100, 16, 0, 16)
    assert plan_pool(config, 100, 16, 0, 16).threads_per_worker == 1
    # one worker on two cores gets both cores as intra-op threads; never more than a node has
    one = plan_pool(config.replace(run={"workers": 1}), 10, 2, 0, 2)
    assert (one.workers, one.cpus_per_worker, one.threads_per_worker) == (1, 2.0, 2)
    assert plan_pool(config.replace(run={"workers": 2}), 10, 64, 0, 8).threads_per_worker == 8
    # fractional GPUs: 0.25 per actor on one GPU caps the pool at four
    gpu = plan_pool(config.replace(run={"gpus_per_worker": 0.25}), 100, 16, 1, 16)
    assert (gpu.workers, gpu.threads_per_worker, gpu.gpus_per_worker) == (4, 4, 0.25)
    # more actors than cores, asked for explicitly: they share the cores instead of waiting forever
    crowded = plan_pool(config.replace(run={"workers": 3}), 10, 2, 0, 2)
    assert (crowded.workers, crowded.threads_per_worker) == (3, 1)
    assert crowded.workers * crowded.cpus_per_worker <= 2
    # never more actors than clips
    assert plan_pool(config, 3, 16, 0, 16).workers == 3
    with pytest.raises(ValueError, match="gpus-per-worker 0.5 but the Ray cluster has 0 GPU"):
        plan_pool(config.replace(run={"gpus_per_worker": 0.5}), 4, 16, 0, 16)


def test_the_actors_of_a_gpu_workstation_share_its_gpu_unasked(caplog):
    """A Ray actor sees a GPU only when it asks for a share: without one, `--device auto` on a one-GPU machine
    ran every actor's YOLO on the CPU while the GPU idled."""
    config = Config()
    h100 = 80e9  # free bytes
    shared = plan_pool(config, 100, 16, 1, 16, h100)  # one node: 16 cores, 1 GPU
    assert (shared.workers, shared.threads_per_worker) == (16, 1)
    assert shared.gpus_per_worker == pytest.approx(1 / 16) and shared.workers * shared.gpus_per_worker <= 1
    few = plan_pool(config, 3, 16, 2, 16, 2 * 16e9)  # three clips: three actors share the two GPUs
    assert few.workers == 3 and few.workers * few.gpus_per_worker <= 2 and few.gpus_per_worker > 0.6
    assert plan_pool(config.replace(detector={"device": "cpu"}), 100, 16, 1, 16, h100).gpus_per_worker == 0
    assert plan_pool(config.replace(run={"gpus_per_worker": 0.25}), 100, 16, 1, 16, h100).workers == 4  # as asked
    # the share must be asked for where it might not fit: several nodes (which of them hold the GPUs is Ray's
    # to know), a GPU too small for every actor's CUDA context, free memory unknown
    for cpus, free in ((32, h100), (16, 12e9), (16, None)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="socialtrace"):
            alone = plan_pool(config, 100, cpus, 1, 16, free)
        assert alone.gpus_per_worker == 0 and alone.workers == cpus
        assert "--gpus-per-worker is 0" in caplog.text


# --- real runs on the shared clips ---------------------------------------------------------------

def _manifest(store: OutputStore) -> pa.Table:
    import pyarrow.parquet as pq

    table = pq.read_table(store.path("manifest.parquet"))
    return table.drop_columns([c for c in table.column_names if c in TIMING_COLUMNS]).sort_by("video_id")


@pytest.fixture(scope="module")
def executor_runs(media_dir, ray_instance, tmp_path_factory):
    """The same clips through the local executor and the Ray executor (2 actors)."""
    config = Config().replace(sampling={"fps": 2.0}, run={"workers": 2})
    videos = assign_video_ids([str(media_dir / name) for name in CLIPS])
    return run_both_executors(videos, config, tmp_path_factory.mktemp)


@pytest.mark.slow
def test_ray_and_local_executors_write_equal_tables(executor_runs):
    (local, local_statuses), (ray_store, ray_statuses) = executor_runs["local"], executor_runs["ray"]
    assert sorted(s["status"] for s in ray_statuses) == ["ok", "ok"], [s.get("error") for s in ray_statuses]
    assert sorted(s["video_id"] for s in ray_statuses) == sorted(s["video_id"] for s in local_statuses)
    for name in ("tracks", "events", "qa"):
        assert_tables_equal(sorted_table(ray_store, name), sorted_table(local, name), name)
    assert sorted_table(ray_store, "tracks").num_rows > 0  # people were found: the comparison is not vacuous
    assert _manifest(ray_store).equals(_manifest(local))
    # each status records the per-stage timings the benchmark reads
    assert all({"events_qa"} <= set(s["timings"]) for s in ray_statuses)


@pytest.mark.slow
def test_ray_submit_script_runs_on_the_cluster(executor_runs, ray_instance, media_dir, tmp_path):
    """What `ray submit cluster.yaml ray_submit.py -- INPUT -o OUT` runs on the head node."""
    out = tmp_path / "out"
    env = {**os.environ, "RAY_ADDRESS": ray_instance, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1",
           "COLUMNS": "250"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "pipeline" / "ray_submit.py"), "--",
         *[str(media_dir / name) for name in CLIPS], "-o", str(out), "--fps", "2", "--workers", "2"],
        capture_output=True, text=True, env=env, timeout=300, cwd=str(REPO / "pipeline"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "executor: ray" in proc.stderr and "joined Ray cluster" in proc.stderr
    store = OutputStore(str(out))
    assert _manifest(store).column("status").to_pylist() == ["ok", "ok"]
    reference = executor_runs["ray"][0]
    for name in ("tracks", "events", "qa"):
        assert_tables_equal(sorted_table(store, name), sorted_table(reference, name), name)
