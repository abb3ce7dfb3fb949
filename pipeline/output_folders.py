"""Recognise what socialtrace itself wrote, so that a folder scan never takes it for input video.

README puts exports and renders under the output folder, and `run videos -o videos/out` puts the output
folder inside the input folder: without this, a rerun would ingest its own labelled training clips and
renders as new corpus videos (issue 26). A folder is socialtrace's own when it is

- a run's output folder: it holds run.json or manifest.parquet (pipeline/runner.py writes both);
- a grasp-bench export: it holds json/ and video/ (pipeline/export.py);
- a llava-video export: it holds llava_video.json, or video/ beside a .json list whose items point into
  video/ (the export's ``-o name.json`` form).

Everything under such a folder (renders written into it included) is skipped.
"""
from __future__ import annotations

import posixpath
import re
from typing import Iterable, Optional

import pyarrow.fs as pafs

RUN_MARKERS = ("run.json", "manifest.parquet")
LLAVA_DEFAULT_NAME = "llava_video.json"


LLAVA_HEAD = re.compile(rb'^\s*\[\s*\{[^{]*?"video"\s*:\s*"video/')


def _is_llava_list(fs: pafs.FileSystem, path: str) -> bool:
    """True when ``path`` starts like a llava export: a JSON list whose first item's "video" is under
    video/ (the first few KB only: the export of a corpus can be large)."""
    try:
        with fs.open_input_stream(path) as stream:
            head = stream.read(4096)
    except OSError:
        return False
    return LLAVA_HEAD.match(head) is not None


def own_folders(fs: pafs.FileSystem, infos: Iterable[pafs.FileInfo]) -> dict[str, str]:
    """folder -> why it is socialtrace's own (a reason for the log), among the folders of a recursive
    listing ``infos`` of ``fs``."""
    files: set[str] = set()
    dirs: set[str] = set()
    for info in infos:
        (dirs if info.type == pafs.FileType.Directory else files).add(info.path)
    own: dict[str, str] = {}
    json_files: dict[str, list[str]] = {}
    for path in files:
        folder, name = posixpath.split(path)
        if name.endswith(".json"):
            json_files.setdefault(folder, []).append(path)
        if name in RUN_MARKERS:
            own[folder] = "a socialtrace output folder"
        elif name == LLAVA_DEFAULT_NAME:
            own.setdefault(folder, "a llava-video export")
    for folder in dirs:
        parent = posixpath.dirname(folder)
        if posixpath.basename(folder) != "video" or parent in own:
            continue
        if posixpath.join(parent, "json") in dirs:
            own[parent] = "a grasp-bench export"
            continue
        if any(_is_llava_list(fs, f) for f in json_files.get(parent, ())):
            own[parent] = "a llava-video export"
    return own


def owner(path: str, folders: dict[str, str], root: Optional[str] = None) -> Optional[str]:
    """The reason of the nearest folder in ``folders`` that holds ``path``, or None. Folders at or above
    ``root`` (the folder the user named) do not count: naming a folder asks for its videos."""
    folder = posixpath.dirname(path)
    while folder != root:
        if folder in folders:
            return folders[folder]
        parent = posixpath.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def folder_reason(fs: pafs.FileSystem, folder: str) -> Optional[str]:
    """Why ``folder`` itself is socialtrace's own, or None (one non-recursive look; for glob matches,
    whose folders were not listed)."""
    try:
        infos = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    except OSError:
        return None
    return own_folders(fs, infos).get(folder)
