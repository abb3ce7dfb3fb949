"""Entry point for `ray submit` / `ray job submit`: `socialtrace run` on the cluster this runs in.

    ray submit pipeline/cluster.yaml pipeline/ray_submit.py -- s3://bucket/videos -o s3://bucket/out
    ray job submit --address http://127.0.0.1:8265 --working-dir . -- \\
        python pipeline/ray_submit.py s3://bucket/videos -o s3://bucket/out

`ray submit` copies this file to the head node and runs it with the arguments after `--`; they are the
arguments of `socialtrace run` (INPUT... -o OUT and any option). The run always uses the Ray executor
and joins the cluster it runs on (`--ray-address auto`, or $RAY_ADDRESS, which `ray job submit` sets),
so it is exactly the command a user would type on the head node.
"""
from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

_HERE = os.path.dirname(os.path.abspath(__file__))


def _fix_import_path() -> None:
    """Run as a script, Python puts pipeline/ itself first on sys.path, where its modules could shadow
    top-level ones; drop it, and find the package from a checkout when not installed."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    try:
        import pipeline  # noqa: F401 - installed on the node (cluster.yaml setup_commands)
    except ImportError:
        sys.path.insert(0, os.path.dirname(_HERE))


def submit_arguments(argv: Sequence[str], environ: Optional[dict] = None) -> list[str]:
    """`socialtrace run` arguments for ``argv``: forces the Ray executor and the cluster's address unless
    the user gave them."""
    environ = os.environ if environ is None else environ
    arguments = ["run", *argv]
    if not any(a == "--executor" or a.startswith("--executor=") for a in argv):
        arguments += ["--executor", "ray"]
    if not any(a == "--ray-address" or a.startswith("--ray-address=") for a in argv):
        arguments += ["--ray-address", environ.get("RAY_ADDRESS") or "auto"]
    return arguments


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Run `socialtrace run ARGV... --executor ray --ray-address auto` and exit with its code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        print("socialtrace run options follow:\n")
        argv = ["--help"]
    from pipeline.cli import app

    app(args=submit_arguments(argv), prog_name="ray_submit.py")


if __name__ == "__main__":
    _fix_import_path()
    main()
