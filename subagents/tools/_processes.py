"""Sweeping a command's processes: its process group, and every process that carries its marker.

``Bash`` and command hooks run their shell in a new session, so it leads its
own process group, and give it a marker in its environment
(:data:`RUN_MARKER_ENV`, a random token per command) that its descendants
inherit. :meth:`ProcessSweep.kill` ends them all with ``SIGKILL``: the group,
then (Linux) every process of the same user whose ``/proc/<pid>/environ``
carries the marker, which finds the ones that left the group (``setsid``,
``nohup``, a daemon's double fork). Each is signalled through a pidfd after
the marker was checked again, so a pid reused meanwhile is never killed.

A process caught inside an ``execve`` has no environment to read yet; the
sweep reads it again until it has (see :func:`_kill_marked`). A process that
starts over with a new environment (``env -i``), overwrites its own, or that
another user owns is not found: this is cleanup, not a sandbox.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Mapping
from typing import Final

import attrs
import trio

__all__ = ["RUN_MARKER_ENV", "ProcessSweep", "kill_group"]

#: The environment variable that marks every process a command starts.
RUN_MARKER_ENV: Final = "SUBAGENTS_COMMAND_RUN"
#: Sweeps that kill something before the sweep gives up (a process may fork while
#: the previous sweep kills).
_SWEEPS: Final = 5
#: How long (real seconds) the sweep waits for processes in the middle of an ``execve``
#: to put their new environment in place. That takes tens of microseconds, or
#: milliseconds on a loaded machine; a program loaded from a stalled disk may take
#: longer, and is then left alone.
_EXEC_WAIT_SECONDS: Final = 1.0
#: The first and the longest pause between two sweeps that wait for an ``execve``.
_FIRST_PAUSE_SECONDS: Final = 0.0002
_LONGEST_PAUSE_SECONDS: Final = 0.01


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process of group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


#: ``PF_KTHREAD`` in ``/proc/<pid>/stat``'s flags: a kernel thread, which has no environment.
_KERNEL_THREAD: Final = 0x00200000
#: Where, in ``/proc/<pid>/stat``'s fields after the command's name, the state, the
#: flags and the end of the environment block are.
_STATE_FIELD: Final = 0
_FLAGS_FIELD: Final = 6
_ENV_END_FIELD: Final = 48


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
    """Whether ``pid``, whose environment reads empty, is inside an ``execve``.

    ``execve`` swaps in the new program's memory first and records where its
    environment lies later; meanwhile ``/proc/<pid>/environ`` reads empty and the
    environment's end in ``/proc/<pid>/stat`` is 0. A process started with an empty
    environment has that end set, and a kernel thread or a zombie has no memory at all:
    they are told apart here, so only a real ``execve`` makes the sweep wait.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (
            fields[_STATE_FIELD] not in (b"Z", b"X")
            and not int(fields[_FLAGS_FIELD]) & _KERNEL_THREAD
            and fields[_ENV_END_FIELD] == b"0"
        )
    except (OSError, IndexError, ValueError):
        return False


def _processes(own: str) -> list[str] | None:
    """Every process's pid but ``own`` (``None`` if ``/proc`` cannot be listed)."""
    try:
        return [p for p in os.listdir("/proc") if p.isdigit() and p != own]
    except OSError:
        return None


def _sweep(pids: list[str], entry: bytes, signalled: set[str]) -> tuple[bool, list[str]]:
    """Kill each of ``pids`` that carries ``entry``, and add it to ``signalled``.

    Returns whether it killed one not in ``signalled`` before (one killed by an earlier
    sweep may still be dying), and the pids met in the middle of an ``execve``.
    """
    killed = False
    mid_exec: list[str] = []
    for pid in pids:
        environ = _environ(pid)
        if not environ:
            if environ is not None and _between_exec_halves(pid):
                mid_exec.append(pid)
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
                killed = killed or pid not in signalled
                signalled.add(pid)
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(fd)
    return killed, mid_exec


def _kill_marked(entry: bytes) -> None:
    """``SIGKILL`` every process whose environment holds ``entry`` (Linux; else nothing).

    Sweeps all of ``/proc`` again at once while a sweep killed a process it had not
    killed before (a process may fork meanwhile), up to :data:`_SWEEPS` times. A
    process in the middle of an ``execve`` shows no environment yet (a command ending
    in ``exec sleep``, say): the processes a sweep met so are read again after a short
    pause, until each has its environment or :data:`_EXEC_WAIT_SECONDS` have passed.
    Only those are waited for, so other programs starting all the time (a build) do
    not hold the sweep up. This blocks: run it in a worker thread.
    """
    if not hasattr(os, "pidfd_open"):
        return
    own = str(os.getpid())
    deadline = time.monotonic() + _EXEC_WAIT_SECONDS
    pause = _FIRST_PAUSE_SECONDS
    kills = 0
    signalled: set[str] = set()
    pids = _processes(own)
    while pids is not None:
        killed, mid_exec = _sweep(pids, entry, signalled)
        if killed and kills < _SWEEPS:
            kills += 1
            pids = _processes(own)
            continue
        now = time.monotonic()
        if not mid_exec or now >= deadline:
            return
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, _LONGEST_PAUSE_SECONDS)
        pids = mid_exec


@attrs.frozen
class ProcessSweep:
    """One command's marker: put it in the command's environment, then kill what carries it."""

    marker: str = attrs.field(factory=lambda: secrets.token_hex(16), repr=False)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this command's marker added."""
        return {**env, RUN_MARKER_ENV: self.marker}

    async def kill(self, pgid: int | None = None) -> None:
        """``SIGKILL`` process group ``pgid`` (if given), then every marked process.

        The sweep reads ``/proc`` and may wait for an ``execve``, so it runs in a
        worker thread; it is not abandoned when cancelled, and returns when done.
        """
        if pgid is not None:
            kill_group(pgid)
        await trio.to_thread.run_sync(_kill_marked, f"{RUN_MARKER_ENV}={self.marker}".encode())
