"""One process per job: an OS file lock (``flock``) on the job's lock file, held while it runs.

As for agent resume (``runtime/_transcripts/lock.py``), the lock goes with the
open file, so a process killed with ``kill -9`` releases it, and the next
``resume`` takes it. The holder writes its pid and host into the file, so a
refused process can name it.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from subagents._file_lock import FORK_WINDOW_SECONDS, try_lock
from subagents.jobs._exceptions import JobError, JobLocked

__all__ = ["LOCK_NAME", "hold_job_lock", "job_lock_holder"]

#: The lock file in a job's folder.
LOCK_NAME: Final = "lock"
_HOLDER_MAX: Final = 256


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def _holder(fd: int) -> str | None:
    with contextlib.suppress(OSError):
        text = os.pread(fd, _HOLDER_MAX, 0).decode("utf-8", "replace").strip()
        return text or None
    return None


@contextlib.contextmanager
def hold_job_lock(folder: Path, job_id: str) -> Iterator[None]:
    """Hold the job's lock for the block; :class:`JobLocked` if another process holds it."""
    path = folder / LOCK_NAME
    try:
        fd = _open(path)
    except OSError as exc:
        raise JobError(
            f"The lock {path} of job {job_id!r} cannot be opened: {exc.strerror or exc}. "
            "Check that the state directory is writable (and the file is not a link)."
        ) from exc
    try:
        if not try_lock(fd, wait=FORK_WINDOW_SECONDS):
            raise JobLocked(job_id, path, _holder(fd))
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def job_lock_holder(folder: Path) -> str | None:
    """Who runs the job in ``folder`` now (``pid N on HOST``), ``None`` when nobody does."""
    path = folder / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if try_lock(fd):
            return None
        return _holder(fd) or "another process"
    finally:
        os.close(fd)
