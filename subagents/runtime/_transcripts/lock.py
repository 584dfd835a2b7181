"""The per-agent lock: an OS file lock on the transcript, held while a runtime runs the agent.

A transcript writer locks its file (``flock``, exclusive) as it opens it, and
the lock goes with the open file: closing the writer releases it, and so does a
crash, since the operating system closes the file. No other descriptor is
opened for it, so an agent costs one descriptor, as before.

A resume first claims the file (:func:`claim_transcript`): it opens the
existing file read-only (so a read-only state directory can still be resumed
from, in memory) and locks it before reading it; the resumed writer holds that
lock until its own file holds it. So no two runtimes, in one process or two,
ever append to one transcript. A refused claim raises
:class:`~subagents.runtime.AgentInUse` naming the holder, which wrote its pid and
host in the newest meta record. Retention asks :func:`is_locked` and leaves a
locked session alone.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import os
from pathlib import Path

from subagents._file_lock import FORK_WINDOW_SECONDS, try_lock
from subagents.runtime._exceptions import HOST, AgentInUse, TranscriptError, TranscriptNotFound
from subagents.runtime._transcripts.file import TranscriptFile
from subagents.runtime._transcripts.load import load_transcript

__all__ = ["claim_transcript", "is_locked", "lock_file", "this_host", "this_pid", "try_lock"]


def this_host() -> str:
    """This machine's name, as a meta record gives it."""
    return HOST


#: This process's id, asked once (and again in a forked child): a spawn's meta record
#: names it, and a system call per agent need not tell it again.
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def this_pid() -> int:
    """This process's id, as a meta record gives it."""
    return _pid


def lock_file(file: TranscriptFile, path: Path) -> None:
    """Lock ``file`` (the transcript at ``path``) for its writer; close it and raise if held.

    Raises ``BlockingIOError`` (``EAGAIN``), an ``OSError``, so a writer
    treats a transcript held elsewhere as a file it cannot write.
    """
    if not try_lock(file.fileno(), wait=FORK_WINDOW_SECONDS):
        file.close()
        raise BlockingIOError(
            errno.EAGAIN, "the transcript is locked: the agent runs in another runtime", str(path)
        )


def is_locked(fd: int) -> bool:
    """Whether another open file holds the lock of the file ``fd`` is open on (probed, not kept)."""
    if not try_lock(fd):
        return True
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def _open_existing(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)


def claim_transcript(path: Path, agent_id: str) -> io.FileIO:
    """Open the existing transcript at ``path`` read-only and lock it, for a resumed writer.

    The file returned holds the lock until it is closed (a resumed writer
    closes it once its own file holds the lock).

    Raises :class:`~subagents.runtime.AgentInUse` when a live runtime holds it
    (naming the holder), :class:`TranscriptNotFound` when the file is gone (or
    was removed while the lock was taken), :class:`TranscriptError` otherwise.
    """
    try:
        fd = _open_existing(path)
    except FileNotFoundError:
        raise TranscriptNotFound(agent_id, path) from None
    except OSError as exc:
        raise TranscriptError(
            f"Could not open the transcript {path} to resume agent {agent_id!r}: "
            f"{exc.strerror or exc}. Check that it is a readable file (not a link)."
        ) from exc
    file = io.FileIO(fd, "r")
    try:
        problem = _check_claim(fd, path, agent_id)
    except BaseException:
        file.close()
        raise
    if problem is not None:
        file.close()
        raise problem
    return file


def _check_claim(fd: int, path: Path, agent_id: str) -> TranscriptError | AgentInUse | None:
    """Lock the open transcript ``fd``; the error to raise when that fails or it was removed."""
    if not try_lock(fd, wait=FORK_WINDOW_SECONDS):
        return _in_use(path, agent_id)
    here = os.fstat(fd)
    try:
        there = os.lstat(path)
    except FileNotFoundError:
        return TranscriptNotFound(agent_id, path)
    if here.st_nlink == 0 or (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
        return TranscriptNotFound(agent_id, path)  # removed (or replaced) meanwhile
    return None


def _in_use(path: Path, agent_id: str) -> AgentInUse:
    """The refusal for a transcript held elsewhere, naming the holder its newest meta names."""
    nickname = pid = host = None
    with contextlib.suppress(TranscriptError):
        meta = load_transcript(path).meta
        nickname, pid, host = meta.nickname, meta.pid, meta.host
    return AgentInUse(agent_id, nickname=nickname, pid=pid, host=host, path=str(path))
