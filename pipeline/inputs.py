"""Turn what the user typed (files, directories, globs, manifests, URIs) into a list of videos with ids."""
from __future__ import annotations

import csv
import glob
import hashlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Mapping, Optional

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.storage import open_filesystem

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


def _list_directory(uri: str) -> list[str]:
    fs, root = open_filesystem(uri)
    infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    found = sorted(i.path for i in infos if i.type == pafs.FileType.File and _is_video_name(i.base_name))
    if "://" in uri:
        scheme = uri.split("://", 1)[0]
        return [f"{scheme}://{p}" for p in found]
    return found


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


def expand_inputs(arguments: list[str]) -> list[str]:
    """Expand arguments to video URIs, in a stable order, without duplicates.

    A file that exists is taken as a video even with an odd extension (perception then says whether it
    decodes); a directory contributes its video files recursively; a glob its matches; a .txt/.csv/.parquet
    file is read as a manifest of URIs.
    """
    uris: list[str] = []
    for argument in arguments:
        if "://" in argument:
            fs, path = open_filesystem(argument)
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.Directory:
                uris += _list_directory(argument)
            elif info.type == pafs.FileType.File and PurePosixPath(path).suffix.lower() in MANIFEST_EXTENSIONS:
                uris += _read_manifest(argument)
            elif info.type == pafs.FileType.File:
                uris.append(argument)
            else:
                raise InputError(f"{argument}: no such file or directory")
        elif os.path.isdir(argument):
            found = _list_directory(argument)
            if not found:
                raise InputError(f"{argument}: directory holds no video files ({', '.join(sorted(VIDEO_EXTENSIONS))})")
            uris += found
        elif os.path.isfile(argument):
            if os.path.splitext(argument)[1].lower() in MANIFEST_EXTENSIONS:
                uris += _read_manifest(argument)
            else:
                uris.append(os.path.abspath(argument))
        elif glob.has_magic(argument):
            matches = sorted(m for m in glob.glob(argument, recursive=True) if os.path.isfile(m))
            if not matches:
                raise InputError(f"{argument}: pattern matches no files")
            uris += [os.path.abspath(m) for m in matches]
        else:
            raise InputError(f"{argument}: no such file or directory")
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
