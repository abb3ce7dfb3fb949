"""Turn what the user typed (files, directories, globs, manifests, URIs) into a list of videos with ids."""
from __future__ import annotations

import csv
import glob
import hashlib
import io
import logging
import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterable, Mapping, Optional

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.output_folders import folder_reason, owner, own_folders
from pipeline.storage import open_filesystem

log = logging.getLogger("socialtrace")

VIDEO_EXTENSIONS = {
    ".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".wmv", ".flv", ".ts", ".mts", ".3gp",
}
MANIFEST_EXTENSIONS = {".txt", ".csv", ".parquet"}
MANIFEST_URI_COLUMNS = ("uri", "path", "video", "url", "file")


class InputError(ValueError):
    """An input argument that names nothing usable."""


@dataclass(frozen=True)
class InputVideo:
    video_id: str
    uri: str


def sanitise_id(stem: str) -> str:
    """A file-name stem made safe for directory names and hive partitions."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._")
    return cleaned or "video"


def _stem(uri: str) -> str:
    return PurePosixPath(uri.rstrip("/").split("://", 1)[-1]).stem


def _is_video_name(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in VIDEO_EXTENSIONS


OUTPUT_FOLDER_REASON = "the output folder of this run (-o)"


class _Skips:
    """What a folder scan left out, by reason, for one log line per reason."""

    def __init__(self, exclude: Iterable[str]):
        self.exclude = [open_filesystem(e) for e in exclude]
        self.counts: dict[str, int] = {}

    def folders_of(self, fs: pafs.FileSystem, infos: list[pafs.FileInfo]) -> dict[str, str]:
        folders = own_folders(fs, infos)
        for ex_fs, ex_path in self.exclude:
            if type(ex_fs) is type(fs):
                folders[ex_path.rstrip("/")] = OUTPUT_FOLDER_REASON
        return folders

    def count(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1

    def report(self) -> None:
        for reason, n in sorted(self.counts.items()):
            log.info("skipped %d video file%s inside %s (socialtrace's own output, never input)",
                     n, "" if n == 1 else "s", reason)


def _list_directory(uri: str, skips: _Skips) -> list[str]:
    fs, root = open_filesystem(uri)
    infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    own = skips.folders_of(fs, infos)
    found = []
    for info in infos:
        if info.type != pafs.FileType.File or not _is_video_name(info.base_name):
            continue
        reason = owner(info.path, own, root.rstrip("/"))
        if reason is None:
            found.append(info.path)
        else:
            skips.count(reason)
    found.sort()
    if "://" in uri:
        scheme = uri.split("://", 1)[0]
        return [f"{scheme}://{p}" for p in found]
    return found


def _glob_matches(pattern: str, skips: _Skips) -> list[str]:
    """Files a local glob matches, less those inside socialtrace's own folders (``**`` walks into them)."""
    fs = pafs.LocalFileSystem()
    excluded = {p.rstrip("/"): OUTPUT_FOLDER_REASON for f, p in skips.exclude if isinstance(f, pafs.LocalFileSystem)}
    reasons: dict[str, Optional[str]] = {}

    def reason_of(folder: str) -> Optional[str]:
        if folder not in reasons:
            reasons[folder] = excluded.get(folder) or folder_reason(fs, folder)
        return reasons[folder]

    kept = []
    for match in sorted(os.path.abspath(m) for m in glob.glob(pattern, recursive=True) if os.path.isfile(m)):
        folder, reason = os.path.dirname(match), None
        while reason is None:
            reason = reason_of(folder)
            if os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
        if reason is None:
            kept.append(match)
        else:
            skips.count(reason)
    return kept


def _read_manifest(uri: str) -> list[str]:
    fs, path = open_filesystem(uri)
    suffix = PurePosixPath(path).suffix.lower()
    base = os.path.dirname(path) if "://" not in uri else None
    if suffix == ".parquet":
        table = pq.read_table(path, filesystem=fs)
        column = next((c for c in MANIFEST_URI_COLUMNS if c in table.column_names), None)
        if column is None:
            raise InputError(f"{uri}: manifest has none of the columns {MANIFEST_URI_COLUMNS}")
        entries = [str(v) for v in table.column(column).to_pylist() if v]
    else:
        with fs.open_input_stream(path) as stream:
            text = stream.read().decode("utf-8", errors="replace")
        if suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            column = next((c for c in MANIFEST_URI_COLUMNS if rows and c in rows[0]), None)
            if column is None:
                raise InputError(f"{uri}: CSV manifest needs a header with one of {MANIFEST_URI_COLUMNS}")
            entries = [row[column].strip() for row in rows if row.get(column, "").strip()]
        else:
            entries = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    # relative entries are relative to the manifest's own folder
    return [e if ("://" in e or os.path.isabs(e) or base is None) else os.path.join(base, e) for e in entries]


def expand_inputs(arguments: list[str], exclude: Iterable[str] = ()) -> list[str]:
    """Expand arguments to video URIs, in a stable order, without duplicates.

    A file that exists is taken as a video even with an odd extension (perception then says whether it
    decodes); a directory contributes its video files recursively; a glob its matches; a .txt/.csv/.parquet
    file is read as a manifest of URIs. Directory scans and globs skip the folders in ``exclude`` (the
    run's ``-o``) and every folder socialtrace wrote (pipeline/output_folders.py), and log how many files
    they skipped and why; a file named on its own is always taken.
    """
    skips = _Skips(exclude)
    uris: list[str] = []
    for argument in arguments:
        if "://" in argument:
            fs, path = open_filesystem(argument)
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.Directory:
                uris += _list_directory(argument, skips)
            elif info.type == pafs.FileType.File and PurePosixPath(path).suffix.lower() in MANIFEST_EXTENSIONS:
                uris += _read_manifest(argument)
            elif info.type == pafs.FileType.File:
                uris.append(argument)
            else:
                raise InputError(f"{argument}: no such file or directory")
        elif os.path.isdir(argument):
            found = _list_directory(argument, skips)
            if not found and not skips.counts:
                raise InputError(f"{argument}: directory holds no video files ({', '.join(sorted(VIDEO_EXTENSIONS))})")
            if not found:
                raise InputError(f"{argument}: directory holds no video files outside socialtrace's own output")
            uris += found
        elif os.path.isfile(argument):
            if os.path.splitext(argument)[1].lower() in MANIFEST_EXTENSIONS:
                uris += _read_manifest(argument)
            else:
                uris.append(os.path.abspath(argument))
        elif glob.has_magic(argument):
            matches = _glob_matches(argument, skips)
            if not matches:
                raise InputError(f"{argument}: pattern matches no files" +
                                 (" outside socialtrace's own output" if skips.counts else ""))
            uris += matches
        else:
            raise InputError(f"{argument}: no such file or directory")
    skips.report()
    seen: set[str] = set()
    unique = []
    for uri in uris:
        if uri not in seen:
            seen.add(uri)
            unique.append(uri)
    return unique


def stem_id(uri: str) -> str:
    """The id a video gets when nothing else claims it: its sanitised file-name stem."""
    return sanitise_id(_stem(uri))


def hashed_id(uri: str) -> str:
    """The id of a video whose stem another video already has: stem plus 8 hex digits of its URI's hash,
    the same on every run."""
    return f"{stem_id(uri)}-{hashlib.sha1(uri.encode()).hexdigest()[:8]}"


def assign_video_ids(uris: list[str], known: Optional[Mapping[str, str]] = None) -> list[InputVideo]:
    """Name each input video so that a name always means the same file in an output folder.

    ``known`` maps the ids an output folder already holds to their URIs (its status files). A video the
    folder knows keeps its id there. Otherwise it gets its stem, unless the stem is taken by a different
    file in the folder or shared with another new input: then every such video gets ``hashed_id``. So
    the same file never changes id between runs into one folder, and a different file never takes an
    id the folder already holds (its tables are never replaced by another video's).
    """
    known = dict(known or {})
    id_of_uri = {uri: video_id for video_id, uri in known.items()}
    new = [u for u in uris if u not in id_of_uri]
    stem_counts: dict[str, int] = {}
    for uri in new:
        stem_counts[stem_id(uri)] = stem_counts.get(stem_id(uri), 0) + 1
    videos = []
    for uri in uris:
        video_id = id_of_uri.get(uri)
        if video_id is None:
            stem = stem_id(uri)
            video_id = stem if stem not in known and stem_counts[stem] == 1 else hashed_id(uri)
            if known.get(video_id, uri) != uri:  # a hash collision: refuse rather than mix two videos
                raise InputError(f"{uri}: its video id {video_id!r} already names {known[video_id]} in the "
                                 f"output folder; rename one of the two files")
            known[video_id] = uri
        videos.append(InputVideo(video_id=video_id, uri=uri))
    return videos
