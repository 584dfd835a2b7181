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


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process of group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _carries(pid: str, entry: bytes) -> bool:
    """Whether process ``pid`` has ``entry`` in its environment (``False`` if unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return entry in f.read().split(b"\0")
    except OSError:
        return False


def _kill_marked(entry: bytes) -> None:
    """``SIGKILL`` every process whose environment holds ``entry`` (Linux; else nothing)."""
    if not hasattr(os, "pidfd_open"):
        return
    own = str(os.getpid())
    for _ in range(_SWEEPS):
        try:
            pids = [p for p in os.listdir("/proc") if p.isdigit() and p != own]
        except OSError:
            return
        found = False
        for pid in pids:
            if not _carries(pid, entry):
                continue
            try:
                fd = os.pidfd_open(int(pid))
            except OSError:
                continue
            try:
                # Checked again once the pidfd pins the process: a pid reused meanwhile
                # is never signalled.
                if _carries(pid, entry):
                    found = True
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)
        if not found:
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
