"""The process's open-file limit while a runtime writes transcripts.

Every open agent holds its transcript open (the file carries the agent's lock,
see ``_transcripts/lock.py``), so 1,000 agents spawned and left open need 1,000
descriptors. The usual soft limit is 1,024 on Linux and 256 on macOS, well
below the hard limit the system allows (often 524,288 on Linux): past it each
new agent's transcript could not be opened, and was kept in memory only, so the
agent could not be resumed. :class:`FileLimitGuard` raises the soft limit to
the hard one (at most :data:`MOST_OPEN_FILES`) while a runtime is open, as
servers that hold many files do.

The limit is the process's, and a process may hold several runtimes (a test
suite, a Ray worker hosting one in a thread), so the change is shared and
counted as :class:`~subagents.runtime._collector.CollectorGuard`'s is: the first
runtime saves the soft limit it finds, and the last one to close puts it back.
A limit that cannot be raised (no ``resource`` module, or the system refuses)
is left as it is; what a transcript that still cannot be opened then says is
in ``TranscriptWriteError`` (``EMFILE``).

:func:`reserve_descriptors` also grows the process's table of descriptors once,
at start-up, to hold the files of ``max_threads`` agents. Linux grows it one
doubling at a time as descriptors are handed out, and in a process with a
second thread (Trio's worker threads stay for a while) each growth waits for
an RCU grace period first: 12.5 ms of a stalled Trio thread on the machine the
benchmarks run on, at 256, 512, 1,024... open agents, in the middle of a loop
of spawns. Grown once at start, in a worker thread, the table costs 8 bytes a
slot and never shrinks.
"""

from __future__ import annotations

import contextlib
import os
import threading
import types
from typing import Final, final

import trio

resource: types.ModuleType | None
try:
    import resource
except ImportError:  # Windows: no rlimits; the C runtime's limit is not ours to change
    resource = None

fcntl: types.ModuleType | None
try:
    import fcntl
except ImportError:  # Windows: no descriptor table to grow ahead
    fcntl = None

__all__ = [
    "MOST_OPEN_FILES",
    "RESERVE_FROM",
    "FileLimitGuard",
    "grow_table",
    "open_files_limit",
    "reserve_descriptors",
]

#: The highest soft limit a runtime sets. The programs its agents and hooks run inherit
#: it, and some close every descriptor up to the limit one by one at start: handed a hard
#: limit in the millions (some containers), they would take seconds to start.
MOST_OPEN_FILES: Final = 65_536
#: Agents below which the descriptor table's own first sizes do: nothing is reserved.
RESERVE_FROM: Final = 64
#: Descriptors reserved beyond the agents' own: logs, sockets, the helper, hooks' pipes.
_RESERVE_SLACK: Final = 64
#: What macOS accepts at most for one process when its hard limit says "unlimited"
#: (``OPEN_MAX``; ``kern.maxfilesperproc`` is often 10,240 or more).
_UNLIMITED_FALLBACK: Final = 10_240

_LOCK = threading.Lock()
#: The soft limit found before the first runtime raised it, and the one it set.
_saved: tuple[int, int] | None = None
#: How many open runtimes hold the raised limit.
_holders = 0


def open_files_limit() -> tuple[int, int] | None:
    """The process's soft and hard open-file limits, or ``None`` where there are none."""
    return None if resource is None else resource.getrlimit(resource.RLIMIT_NOFILE)


def _raise_soft() -> tuple[int, int] | None:
    """Raise the soft limit toward the hard one: the limit found and the one set, or
    ``None`` when it was left alone (already the hard one, or the system refused)."""
    assert resource is not None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinity = resource.RLIM_INFINITY
    if soft == infinity or (hard != infinity and soft >= hard):
        return None
    wanted = MOST_OPEN_FILES if hard == infinity else min(hard, MOST_OPEN_FILES)
    for target in (wanted, _UNLIMITED_FALLBACK) if hard == infinity else (wanted,):
        if target <= soft:
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            # Above what the system allows (macOS with an "unlimited" hard limit), or
            # refused: the next target, and in the end the limit as found.
            continue
        return soft, target
    return None


async def reserve_descriptors(count: int) -> int | None:
    """Grow the process's descriptor table to hold ``count`` more descriptors, in a worker
    thread (see the module): the highest descriptor number it reached, or ``None`` when
    nothing was reserved (``count`` below :data:`RESERVE_FROM`, or see :func:`grow_table`)."""
    if count < RESERVE_FROM:
        return None
    return await trio.to_thread.run_sync(grow_table, count)


def grow_table(count: int) -> int | None:
    """Grow the process's descriptor table now to hold ``count`` more descriptors (at most
    the soft limit), blocking: the highest descriptor number it reached, or ``None`` (no
    ``fcntl``, or the system refused).

    The table is grown by duplicating a descriptor to the lowest free number at or above
    the one wanted (``F_DUPFD``, which never replaces an open descriptor) and closing the
    copy: the table keeps its size.
    """
    if fcntl is None:
        return None
    try:
        probe = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        wanted = probe + count + _RESERVE_SLACK
        limit = open_files_limit()
        if limit is not None and resource is not None and limit[0] != resource.RLIM_INFINITY:
            wanted = min(wanted, limit[0] - 1)
        wanted = min(wanted, MOST_OPEN_FILES - 1)
        if wanted <= probe:
            return None
        try:
            copy = fcntl.fcntl(probe, fcntl.F_DUPFD_CLOEXEC, wanted)
        except OSError:  # no free descriptor at or above it (EMFILE), or refused
            return None
        os.close(copy)
        return int(copy)
    finally:
        os.close(probe)


@final
class FileLimitGuard:
    """Raises the soft open-file limit while entered, when ``wanted`` (see the module)."""

    __slots__ = ("_entered", "_wanted")

    def __init__(self, wanted: bool) -> None:
        self._wanted = wanted
        self._entered = False

    def __repr__(self) -> str:
        return f"<FileLimitGuard wanted={self._wanted} entered={self._entered}>"

    def __enter__(self) -> FileLimitGuard:
        global _saved, _holders
        if not self._wanted or resource is None:
            return self
        with _LOCK:
            if _holders == 0:
                _saved = _raise_soft()
            _holders += 1
        self._entered = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _saved, _holders
        if not self._entered:
            return
        self._entered = False
        with _LOCK:
            _holders -= 1
            if _holders == 0 and _saved is not None and resource is not None:
                found, raised = _saved
                _saved = None
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                # Put back only what is still ours: a limit the application set meanwhile
                # stays. Descriptors opened above the old limit stay valid.
                if soft == raised:
                    with contextlib.suppress(ValueError, OSError):
                        resource.setrlimit(resource.RLIMIT_NOFILE, (found, hard))
