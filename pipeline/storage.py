"""Output layout (DESIGN.md §4) and atomic writes on any pyarrow filesystem (local path, s3://, gs://).

Every file goes to a temporary name in its final directory and is renamed into place, so a reader (or a
killed run) never sees half a file. On object stores a single PUT is already atomic and rename is a copy,
so there the final name is written directly. ``sweep_temporaries`` removes what a killed run left.
"""
from __future__ import annotations

import io
import json
import os
import posixpath
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline import schema

TEMP_MARK = ".tmp-"
PART_NAME = "part-0.parquet"
TABLE_NAMES = ("tracks", "objects", "events", "qa")


def open_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path) for a local path or a URI pyarrow understands."""
    if "://" in uri:
        return pafs.FileSystem.from_uri(uri)
    return pafs.LocalFileSystem(), os.path.abspath(uri)


@dataclass
class OutputStore:
    """One run's output directory."""

    uri: str

    def __post_init__(self) -> None:
        self.fs, self.root = open_filesystem(self.uri)
        self.is_local = isinstance(self.fs, pafs.LocalFileSystem)

    # --- paths ----------------------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def partition_dir(self, table: str, video_id: str) -> str:
        return self.path(table, f"video_id={video_id}")

    def partition_file(self, table: str, video_id: str) -> str:
        return posixpath.join(self.partition_dir(table, video_id), PART_NAME)

    def status_file(self, video_id: str) -> str:
        return self.path("status", f"{video_id}.json")

    # --- writing --------------------------------------------------------------------------------
    def _atomic_write(self, final_path: str, data: bytes) -> None:
        self.fs.create_dir(posixpath.dirname(final_path), recursive=True)
        if not self.is_local:
            with self.fs.open_output_stream(final_path) as out:
                out.write(data)
            return
        temp_path = f"{final_path}{TEMP_MARK}{uuid.uuid4().hex[:8]}"
        try:
            with open(temp_path, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp_path, final_path)
        finally:
            if os.path.exists(temp_path):
                os.remove(temp_path)

    def write_table(self, table_name: str, video_id: str, table: pa.Table) -> str:
        """Write one video's partition of a table. The partition directory names the video (hive
        partitioning, for DuckDB and pyarrow.dataset) and the file keeps its video_id column too, so
        that a reader of the files alone (``datasets.load_dataset("parquet", data_files=...)``) knows
        each row's video."""
        ids = pa.array([video_id] * table.num_rows, pa.string())
        if "video_id" in table.column_names:
            table = table.set_column(table.column_names.index("video_id"), "video_id", ids)
        else:
            table = table.add_column(0, "video_id", ids)
        final_path = self.partition_file(table_name, video_id)
        self.write_parquet(final_path, table)
        return final_path

    def write_json(self, path: str, payload: Any) -> None:
        data = json.dumps(payload, indent=2, sort_keys=True, default=_json_default).encode()
        self._atomic_write(path, data)

    def write_parquet(self, path: str, table: pa.Table) -> None:
        """A zero-row table is written with no row group at all: an empty row group makes some readers
        fail (Hugging Face datasets: "BatchSize must be greater than 0")."""
        sink = io.BytesIO()
        with pq.ParquetWriter(sink, table.schema, compression="zstd") as writer:
            if table.num_rows:
                writer.write_table(table)
        self._atomic_write(path, sink.getvalue())

    def delete_video(self, video_id: str, tables: tuple[str, ...] = TABLE_NAMES) -> None:
        """Remove a video's partitions (before redoing it, or after it failed midway)."""
        for name in tables:
            directory = self.partition_dir(name, video_id)
            if self._exists(directory):
                self.fs.delete_dir(directory)

    def sweep_temporaries(self) -> int:
        """Delete temporary files a killed run left behind; returns how many."""
        if not self._exists(self.root):
            return 0
        removed = 0
        for info in self.fs.get_file_info(pafs.FileSelector(self.root, recursive=True)):
            if info.type == pafs.FileType.File and TEMP_MARK in info.base_name:
                self.fs.delete_file(info.path)
                removed += 1
        return removed

    # --- reading --------------------------------------------------------------------------------
    def _exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def read_json(self, path: str) -> Optional[dict]:
        if not self._exists(path):
            return None
        with self.fs.open_input_stream(path) as stream:
            return json.loads(stream.read().decode())

    def read_status(self, video_id: str) -> Optional[dict]:
        return self.read_json(self.status_file(video_id))

    def iter_statuses(self) -> Iterator[dict]:
        directory = self.path("status")
        if not self._exists(directory):
            return
        infos = self.fs.get_file_info(pafs.FileSelector(directory))
        for info in sorted(infos, key=lambda i: i.path):
            if info.type == pafs.FileType.File and info.base_name.endswith(".json") and TEMP_MARK not in info.base_name:
                status = self.read_json(info.path)
                if status is not None:
                    yield status

    def known_videos(self) -> dict[str, str]:
        """video_id -> URI of every video this folder has a status for (pipeline.inputs keeps ids stable)."""
        return {s["video_id"]: s["uri"] for s in self.iter_statuses() if s.get("video_id") and s.get("uri")}

    def read_video_table(self, table_name: str, video_id: str) -> Optional[pa.Table]:
        """One video's partition with its video_id column restored, conformed to the schema."""
        path = self.partition_file(table_name, video_id)
        if not self._exists(path):
            return None
        table = pq.read_table(path, filesystem=self.fs)
        if "video_id" not in table.column_names:  # written before the files kept their video_id column
            table = table.append_column("video_id", pa.array([video_id] * table.num_rows, pa.string()))
        return schema.conform(table, schema.TABLES[table_name])

    def read_table(self, table_name: str, filter_expression: Any = None) -> pa.Table:
        """The whole hive-partitioned table across videos (empty table with the schema when absent)."""
        directory = self.path(table_name)
        target = schema.TABLES[table_name]
        if not self._exists(directory):
            return schema.empty_table(target)
        files = [
            info.path
            for info in self.fs.get_file_info(pafs.FileSelector(directory, recursive=True))
            if info.type == pafs.FileType.File and info.base_name.endswith(".parquet")
        ]
        if not files:
            return schema.empty_table(target)
        # video_id is typed explicitly: an id like "0001" must not be inferred as an integer
        partitioning = ds.partitioning(pa.schema([("video_id", pa.string())]), flavor="hive")
        dataset = ds.dataset(sorted(files), filesystem=self.fs, format="parquet", partitioning=partitioning,
                             partition_base_dir=directory)
        table = dataset.to_table(filter=filter_expression)
        return schema.conform(table, target)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
