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


def _start_settled(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A process whose ``execve`` is over: it said so on its stdout."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; print(flush=True); sys.stdin.read()"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"\n"
    return process


def _end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(timeout=10)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


async def test_a_marked_process_is_killed_right_after_it_starts() -> None:
    """Swept as soon as ``Popen`` returns, a process is often still inside its
    ``execve`` (on a loaded machine, for milliseconds): the sweep waits for it."""
    for _ in range(20):
        sweep = ProcessSweep()
        process = _start(sweep.environment(dict(os.environ)))
        try:
            await sweep.kill()
            assert process.wait(timeout=10) == -signal.SIGKILL
        finally:
            _end(process)


def test_the_kernel_shows_an_execve_under_way_as_the_sweep_expects() -> None:
    """Read before the environment, the ``stat`` says "inside an execve" whenever the
    environment then reads empty: the environment only ever appears, never goes."""
    caught = 0
    for _ in range(2000):
        process = _start({"A": "B"})
        try:
            between = _processes._between_exec_halves(str(process.pid))
            environ = _processes._environ(str(process.pid))
            assert environ is not None
            assert between or environ == b"A=B\0"
            caught += not environ
        finally:
            _end(process)
        if caught:
            break
    assert caught, "no process was read in the middle of its execve"


def test_a_process_started_with_no_environment_is_not_taken_for_one_mid_execve() -> None:
    bare = _start_settled({})
    try:
        assert _processes._environ(str(bare.pid)) == b""
        assert not _processes._between_exec_halves(str(bare.pid))
    finally:
        _end(bare)


def test_a_kernel_thread_is_not_taken_for_a_process_mid_execve() -> None:
    assert not _processes._between_exec_halves("2")  # kthreadd


async def test_a_process_held_in_its_execve_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """However long its ``execve`` takes (here: the first 25 reads, far more than a
    fixed number of sweeps), the sweep reads the process again until it can tell."""
    sweep = ProcessSweep()
    process = _start_settled(sweep.environment(dict(os.environ)))
    reads: list[bytes | None] = []
    listings = 0
    real_environ, real_halves, real_processes = (
        _processes._environ,
        _processes._between_exec_halves,
        _processes._processes,
    )

    def held_environ(pid: str) -> bytes | None:
        if pid != str(process.pid):
            return real_environ(pid)
        read = b"" if len(reads) < 25 else real_environ(pid)
        reads.append(read)
        return read

    def listing(own: str) -> list[str] | None:
        nonlocal listings
        listings += 1
        return real_processes(own)

    monkeypatch.setattr(_processes, "_environ", held_environ)
    monkeypatch.setattr(
        _processes,
        "_between_exec_halves",
        lambda pid: len(reads) <= 25 if pid == str(process.pid) else real_halves(pid),
    )
    monkeypatch.setattr(_processes, "_processes", listing)
    try:
        await sweep.kill()
        assert process.wait(timeout=10) == -signal.SIGKILL
        assert reads[:25] == [b""] * 25
        assert len(reads) >= 26
        # The first listing, and one more after the kill: the waiting read only the
        # process it waited for.
        assert listings == 2
    finally:
        _end(process)


async def test_a_process_that_never_ends_its_execve_is_waited_for_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A program loaded from a stalled disk: after the wait, the sweep gives up on it,
    and leaves an unmarked process alone."""
    stuck = _start_settled({"A": "B"})
    reads = 0
    real_environ, real_halves = _processes._environ, _processes._between_exec_halves

    def stuck_environ(pid: str) -> bytes | None:
        nonlocal reads
        if pid != str(stuck.pid):
            return real_environ(pid)
        reads += 1
        return b""

    monkeypatch.setattr(_processes, "_environ", stuck_environ)
    monkeypatch.setattr(
        _processes,
        "_between_exec_halves",
        lambda pid: pid == str(stuck.pid) or real_halves(pid),
    )
    monkeypatch.setattr(_processes, "_EXEC_WAIT_SECONDS", 0.02)
    try:
        await ProcessSweep().kill()
        # Pauses double from 0.2 ms: a 20 ms wait reads it a handful of times.
        assert 2 <= reads <= 10
        assert stuck.poll() is None
    finally:
        _end(stuck)


async def test_a_process_with_no_environment_is_read_once_and_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a command's, and not mid-``execve``: the sweep does not wait for it."""
    bare = _start_settled({})
    reads: list[bytes | None] = []
    real = _processes._environ

    def counting(pid: str) -> bytes | None:
        read = real(pid)
        if pid == str(bare.pid):
            reads.append(read)
        return read

    monkeypatch.setattr(_processes, "_environ", counting)
    try:
        await ProcessSweep().kill()
        assert reads == [b""]
        assert bare.poll() is None
    finally:
        _end(bare)
