"""README's cluster path (issue 12, item 3): the [cluster] extra resolves with a protobuf mediapipe runs
on, pipeline/cluster.yaml copies neither virtual environments nor outputs and installs the extra, and a
job submitted over HTTP with `ray job submit` to a token-authenticated head started with `ray start
--head` writes the tables a local run writes."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import shutil
import time
import urllib.error
import urllib.request
import uuid
from importlib import metadata
from pathlib import Path

import psutil
import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the copy pip carries
    from pip._vendor import tomli as tomllib

from pipeline import runner
from pipeline.config import Config
from pipeline.inputs import InputVideo
from pipeline.storage import OutputStore
from tests.table_checks import assert_tables_equal, sorted_table

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
CLIP = "tvhid_handshake_0001.avi"


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _unsatisfied(requirement: Requirement, seen: set[str]) -> list[str]:
    """What of ``requirement`` (and the extras it names, recursively) this environment does not satisfy."""
    version = _installed_version(requirement.name)
    if version is None:
        return [f"{requirement} (not installed)"]
    if not requirement.specifier.contains(version, prereleases=True):
        return [f"{requirement} (installed {version})"]
    missing = []
    for extra in requirement.extras:
        if (requirement.name, extra) in seen:
            continue
        seen.add((requirement.name, extra))
        for line in metadata.requires(requirement.name) or []:
            sub = Requirement(line)
            if sub.marker is not None and sub.marker.evaluate({"extra": extra}) and not Marker(
                    str(sub.marker)).evaluate({"extra": ""}):
                missing += _unsatisfied(sub, seen)
    return missing


def test_the_cluster_extra_resolves_with_a_protobuf_mediapipe_accepts():
    extras = PYPROJECT["project"]["optional-dependencies"]
    cluster = [Requirement(r) for r in extras["cluster"]]
    assert {r.name for r in cluster} == {"ray", "protobuf"}
    assert "default" in next(r for r in cluster if r.name == "ray").extras  # the job server and `ray job`
    protobuf = next(r for r in cluster if r.name == "protobuf")
    assert not protobuf.specifier.contains("5.0") and not protobuf.specifier.contains("7.34.0")
    assert protobuf.specifier.contains("4.25.3")
    # the test extra (what README installs) pulls the cluster extra, so this environment was resolved with it
    assert "socialtrace[cluster]" in extras["test"]
    assert _unsatisfied(Requirement("ray[default]"), set()) + _unsatisfied(protobuf, set()) == []
    assert _installed_version("mediapipe") == "0.10.14"
    # Ray core is what the executor imports; Ray Data is not used
    assert any(Requirement(r).name == "ray" and not Requirement(r).extras for r in PYPROJECT["project"]["dependencies"])


def test_cluster_yaml_copies_no_environment_or_outputs_and_installs_the_extra():
    from ray.autoscaler._private.command_runner import SSHCommandRunner

    config = yaml.safe_load((REPO / "pipeline" / "cluster.yaml").read_text())
    # the arguments `ray up` gives rsync for every file mount
    arguments = SSHCommandRunner._create_rsync_filter_args(None, {"rsync_exclude": config["rsync_exclude"],
                                                                  "rsync_filter": config["rsync_filter"]})
    pairs = {(arguments[i], arguments[i + 1]) for i in range(0, len(arguments), 2)}
    for pattern in ("/.venv/", "/venv/", "/out*/", "**/.git"):
        assert ("--exclude", pattern) in pairs
    assert ("--filter", "dir-merge,- .gitignore") in pairs  # and whatever the checkout ignores
    ignored = (REPO / ".gitignore").read_text().split()
    assert {".venv/", "/out*/", "/bench/", "/llava/"} <= set(ignored)
    installs = [c for c in config["setup_commands"] if "pip install -e" in c]
    assert installs and all("[cluster]" in c for c in installs)
    # every node gets the launching machine's token, and starts Ray with token authentication
    assert config["file_mounts"]["/home/ubuntu/.ray/auth_token"] == "~/.ray/auth_token"
    for command in config["head_start_ray_commands"][-1:] + config["worker_start_ray_commands"][-1:]:
        assert "RAY_AUTH_MODE=token" in command


# --- the documented job path, end to end on a local head -------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_dashboard(url: str, token: str, head: subprocess.Popen, seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if head.poll() is not None:
            pytest.fail(f"`ray start --head` exited with {head.returncode}")
        try:
            request = urllib.request.Request(f"{url}/api/version", headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=5):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(1)
    pytest.fail(f"the dashboard at {url} did not answer within {seconds:g} s")


@pytest.fixture()
def ray_head(tmp_path_factory):
    """`ray start --head` with token authentication, one CPU and ports of its own; stopped after the test.

    Not `ray stop`: it stops every Ray process on the machine, other users' too. The head runs with
    --block, so terminating it stops its processes; any left are ended by pid (they are this test's)."""
    temp_dir = Path(f"/tmp/st-{uuid.uuid4().hex[:8]}")  # short: Ray's socket paths live under it
    token = uuid.uuid4().hex
    dashboard = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token,
           "RAY_USAGE_STATS_ENABLED": "0", "OMP_NUM_THREADS": "1"}
    command = ["ray", "start", "--head", "--block", "--num-cpus", "1", "--num-gpus", "0",
               "--port", str(_free_port()), "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dashboard),
               "--include-dashboard", "true", "--ray-client-server-port", str(_free_port()),
               "--dashboard-agent-listen-port", str(_free_port()), "--dashboard-agent-grpc-port", str(_free_port()),
               "--metrics-export-port", str(_free_port()), "--runtime-env-agent-port", str(_free_port()),
               "--temp-dir", str(temp_dir), "--disable-usage-stats"]
    log = open(tmp_path_factory.mktemp("head") / "head.log", "w")
    head = subprocess.Popen([str(Path(sys.executable).with_name("ray")), *command[1:]], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    started: dict[int, psutil.Process] = {}
    try:
        url = f"http://127.0.0.1:{dashboard}"
        _wait_for_dashboard(url, token, head)
        yield {"url": url, "token": token, "head": head, "started": started}
    finally:
        try:
            for child in psutil.Process(head.pid).children(recursive=True):
                started.setdefault(child.pid, child)
        except psutil.Error:
            pass
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
        time.sleep(2)
        for process in started.values():
            try:
                process.kill()
            except psutil.Error:
                pass
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.slow
def test_a_job_submitted_over_http_writes_the_tables_of_a_local_run(ray_head, media_dir, tmp_path):
    clip = media_dir / CLIP
    out = tmp_path / "out"
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    submit = [str(Path(sys.executable).with_name("ray")), "job", "submit", "--address", ray_head["url"],
              "--working-dir", str(REPO), "--", "python", "pipeline/ray_submit.py", str(clip), "-o", str(out),
              "--fps", "2", "--workers", "1"]

    # README: without the token a client is refused ...
    refused = subprocess.run(submit, env={**base, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "authentication token" in refused.stdout + refused.stderr
    assert not out.exists()

    # ... and with RAY_AUTH_MODE=token and the cluster's token it runs the job
    env = {**base, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": ray_head["token"]}
    job = subprocess.run(submit, env=env, capture_output=True, text=True, timeout=900)
    for child in psutil.Process(ray_head["head"].pid).children(recursive=True):
        ray_head["started"].setdefault(child.pid, child)
    assert job.returncode == 0, (job.stdout + job.stderr)[-4000:]
    assert "succeeded" in job.stdout + job.stderr and "executor: ray" in job.stdout + job.stderr

    reference = OutputStore(str(tmp_path / "reference"))
    config = Config().replace(sampling={"fps": 2.0})
    statuses = list(runner.iter_local([InputVideo("tvhid_handshake_0001", str(clip))], config, reference))
    assert [s["status"] for s in statuses] == ["ok"]
    store = OutputStore(str(out))
    assert store.read_status("tvhid_handshake_0001")["status"] == "ok"
    for name in ("tracks", "events", "qa"):
        assert_tables_equal(sorted_table(store, name), sorted_table(reference, name), name)
    assert sorted_table(store, "tracks").num_rows > 0
