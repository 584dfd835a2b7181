"""Sweeping a command's processes: its process group, and every process that carries its marker.

``Bash`` and command hooks run their shell in a new session, so it leads its
own process group, and give it a marker in its environment
(:data:`RUN_MARKER_ENV`, a random token per command) that its descendants
inherit. :meth:`ProcessSweep.kill` ends them all with ``SIGKILL``: the group,
then (Linux) every process of the same user whose ``/proc/<pid>/environ``
carries the marker, which finds the ones that left the group (``setsid``,
``nohup``, a daemon's double fork). Each is signalled through a pidfd after
the marker was checked again, so a pid reused meanwhile is never killed.

A process that starts over with a new environment (``env -i``) or that
another user owns is not found: this is cleanup, not a sandbox.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Mapping
from typing import Final

import attrs

__all__ = ["RUN_MARKER_ENV", "ProcessSweep", "kill_group"]

#: The environment variable that marks every process a command starts.
RUN_MARKER_ENV: Final = "SUBAGENTS_COMMAND_RUN"
#: Sweeps for marked processes (a process may fork while the previous sweep kills).
_SWEEPS: Final = 5
#: Sweeps in which a process may read with an empty environment (an ``execve`` under
#: way) before it counts as one started with none.
_EMPTY_SWEEPS: Final = 3


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process of group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


#: ``PF_KTHREAD`` in ``/proc/<pid>/stat``'s flags: a kernel thread, which has no environment.
_KERNEL_THREAD: Final = 0x00200000


def _environ(pid: str) -> bytes | None:
    """Process ``pid``'s environment block (``None`` if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return None


def _carries(pid: str, entry: bytes) -> bool:
    """Whether process ``pid`` has ``entry`` in its environment (``False`` if unreadable)."""
    environ = _environ(pid)
    return environ is not None and entry in environ.split(b"\0")


def _between_exec_halves(pid: str) -> bool:
    """Whether ``pid``, whose environment reads empty, may be inside an ``execve``.

    The kernel puts the new program's environment in place late in ``execve``; read
    meanwhile (tens of microseconds), ``/proc/<pid>/environ`` is empty. A kernel thread
    or a zombie reads empty for good, and is told apart by its ``stat``.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0] not in (b"Z", b"X") and not int(fields[6]) & _KERNEL_THREAD
    except (OSError, IndexError, ValueError):
        return False


def _kill_marked(entry: bytes) -> None:
    """``SIGKILL`` every process whose environment holds ``entry`` (Linux; else nothing).

    Sweeps again while a sweep killed something (a process may fork meanwhile) or saw a
    process that may be in the middle of an ``execve`` (its environment not in place yet:
    a command ending in ``exec sleep``, say), up to :data:`_SWEEPS` times. An
    ``execve``'s window is tens of microseconds and a sweep takes longer, so a process
    whose environment still reads empty after :data:`_EMPTY_SWEEPS` sweeps was started
    with none, and asks for no further sweep.
    """
    if not hasattr(os, "pidfd_open"):
        return
    own = str(os.getpid())
    empty_seen: dict[str, int] = {}
    for _ in range(_SWEEPS):
        try:
            pids = [p for p in os.listdir("/proc") if p.isdigit() and p != own]
        except OSError:
            return
        again = False
        for pid in pids:
            environ = _environ(pid)
            if not environ:
                if environ is not None and _between_exec_halves(pid):
                    seen = empty_seen[pid] = empty_seen.get(pid, 0) + 1
                    again = again or seen < _EMPTY_SWEEPS
                continue
            if entry not in environ.split(b"\0"):
                continue
            try:
                fd = os.pidfd_open(int(pid))
            except OSError:
                continue
            try:
                # Checked again once the pidfd pins the process: a pid reused meanwhile
                # is never signalled.
                if _carries(pid, entry):
                    again = True
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)
        if not again:
            return


@attrs.frozen
class ProcessSweep:
    """One command's marker: put it in the command's environment, then kill what carries it."""

    marker: str = attrs.field(factory=lambda: secrets.token_hex(16), repr=False)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this command's marker added."""
        return {**env, RUN_MARKER_ENV: self.marker}

    def kill(self, pgid: int | None = None) -> None:
        """``SIGKILL`` process group ``pgid`` (if given), then every marked process."""
        if pgid is not None:
            kill_group(pgid)
        _kill_marked(f"{RUN_MARKER_ENV}={self.marker}".encode())
