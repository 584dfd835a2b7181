"""The sweep of a command's processes: what carries its marker is killed, even mid-``execve``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from subagents.tools import _processes
from subagents.tools._processes import ProcessSweep

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the marker sweep reads /proc (Linux)"
)


def _start(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "30"], env=env, stdin=subprocess.DEVNULL)


def test_a_marked_process_is_killed() -> None:
    sweep = ProcessSweep()
    process = _start(sweep.environment(dict(os.environ)))
    try:
        sweep.kill()
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        process.kill()
        process.wait(timeout=10)


def test_a_process_read_in_the_middle_of_its_execve_is_swept_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read between the two halves of an ``execve``, ``/proc/<pid>/environ`` is empty for
    tens of microseconds (seen here on about 0.4% of reads of a process starting up). A
    command ending in ``exec sleep`` could so escape the sweep of its agent's close."""
    sweep = ProcessSweep()
    reads: list[bytes | None] = []
    process = _start(sweep.environment(dict(os.environ)))
    try:
        real = _processes._environ

        def first_read_mid_exec(pid: str) -> bytes | None:
            if pid != str(process.pid):
                return real(pid)
            read = b"" if not reads else real(pid)  # the first sweep meets the execve
            reads.append(read)
            return read

        monkeypatch.setattr(_processes, "_environ", first_read_mid_exec)
        sweep.kill()
        assert process.wait(timeout=10) == -signal.SIGKILL
        assert reads[0] == b""
        assert len(reads) >= 2
    finally:
        process.kill()
        process.wait(timeout=10)


def test_a_process_started_without_an_environment_ends_the_extra_sweeps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a command's, and not mid-``execve``: it is read in a bounded number of sweeps,
    then the sweep stops, and it is left alone."""
    reads: list[bytes | None] = []
    bare = _start({})
    try:
        real = _processes._environ

        def counting(pid: str) -> bytes | None:
            read = real(pid)
            if pid == str(bare.pid):
                reads.append(read)
            return read

        monkeypatch.setattr(_processes, "_environ", counting)
        # Other tests' processes starting up meanwhile would ask for sweeps of their own.
        real_halves = _processes._between_exec_halves
        monkeypatch.setattr(
            _processes,
            "_between_exec_halves",
            lambda pid: pid == str(bare.pid) and real_halves(pid),
        )
        ProcessSweep().kill()
        assert reads == [b""] * _processes._EMPTY_SWEEPS
        assert bare.poll() is None  # not marked: left running
    finally:
        bare.kill()
        bare.wait(timeout=10)
