"""README says what happens (issue 12, items 3, 5, 10, 11): the install it documents is the one CI runs,
it tells a CPU-only user how to avoid the CUDA build of torch, its commands write under out/, and the
exit status, the cluster extra and Ray's token are documented."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def commands(text: str) -> list[list[str]]:
    found = []
    for block in bash_blocks(text):
        for line in block.splitlines():
            line = line.split(" #")[0].strip()
            if line and not line.startswith("#"):
                found += [shlex.split(part) for part in line.split("&&")]
    return found


def test_ci_installs_and_tests_exactly_as_readme_says():
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    install = bash_blocks(section("Install"))[0].strip()
    assert [part.strip() for part in install.split("&&")] == ci[-4:-1]
    assert bash_blocks(section("Run the tests"))[0].strip() == ci[-1] == "python -m pytest"


def test_install_says_which_torch_pip_installs_and_how_to_get_the_cpu_build():
    install = section("Install")
    assert "pip picks the build for your machine" not in README
    assert "CUDA" in install and "GB" in install
    cpu = [c for c in commands(install) if "--index-url" in c]
    assert cpu and cpu[0][:4] == ["pip", "install", "torch", "torchvision"]  # together: their versions match
    assert cpu[0][cpu[0].index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"


def test_examples_write_under_out_and_the_rest_is_ignored():
    for text in (README, (REPO / "docs" / "viewing.md").read_text()):
        for command in commands(text):
            for flag in ("-o", "--out", "--timeline"):
                if command[:1] == ["socialtrace"] and flag in command:
                    target = command[command.index(flag) + 1]
                    assert re.match(r"(out|OUT)(/|$)|s3://|/tmp/", target), command
    ignored = (REPO / ".gitignore").read_text().split()
    assert {"/out*/", "/bench/", "/llava/", "/kitchen.*", ".venv/"} <= set(ignored)


def test_exit_status_cluster_extra_and_ray_token_are_documented():
    run = section("Run on a video")
    assert "--allow-failures" in run and "exit" in run.lower()
    cluster = " ".join(section("Run on a cluster").split())
    assert '".[cluster]"' in cluster
    assert "RAY_AUTH_MODE=token" in cluster and "RAY_AUTH_TOKEN" in cluster and "ray get-auth-token" in cluster
    assert "Missing authentication token" in cluster
