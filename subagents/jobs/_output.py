"""The job's output CSV, written at the end, atomically: every input column, then the job's.

The job's columns are the issue's: ``job_id, item_id, status, attempts,
last_error, result_json, started_at, completed_at`` (Codex's ``render_job_csv``
in ``codex-rs/core/src/tools/handlers/agent_jobs.rs`` writes the same kind of
columns; times are RFC 3339 in UTC as there). The file is written beside its
final path, flushed to disk, then renamed over it, so a reader sees the old
file or the whole new one, never half of one.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from subagents.jobs._state import ItemRow
from subagents.jobs._template import render_value

__all__ = ["JOB_COLUMNS", "write_output"]

#: The columns the job adds after the input's.
JOB_COLUMNS: Final = (
    "job_id",
    "item_id",
    "status",
    "attempts",
    "last_error",
    "result_json",
    "started_at",
    "completed_at",
)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat()


def write_output(path: Path, job_id: str, columns: Sequence[str], items: Iterable[ItemRow]) -> None:
    """Write the output CSV at ``path`` atomically (blocking: call it in a worker thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            writer = csv.writer(file)
            writer.writerow([*columns, *JOB_COLUMNS])
            for item in items:
                writer.writerow(
                    [
                        *(render_value(item.values.get(column)) for column in columns),
                        job_id,
                        item.item_id,
                        item.status,
                        item.attempts,
                        item.last_error or "",
                        item.result_json or "",
                        _when(item.started_at),
                        _when(item.completed_at),
                    ]
                )
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
