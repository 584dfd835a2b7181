"""Signals that stop ``subagents run`` and ``resume``: Ctrl-C, ``timeout``/``docker stop``, hangup.

A real subprocess runs the command line on an offline run whose lead is busy
in a Bash command that started a background ``sleep``, with a child agent in a
model call (see ``signal_cli.py``). Each signal must end the run
as Ctrl-C does: every agent ``shutdown`` in its transcript and in the summary,
the summary printed, the exit code 128 + the signal's number, and the Bash
command's processes gone. A closed terminal (its writes fail) must not break
that shutdown.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from subagents.runtime import load_transcript

pytestmark = pytest.mark.skipif(
    not hasattr(os, "pidfd_open"), reason="pidfds (Linux) watch the Bash command's processes"
)

HARNESS = Path(__file__).with_name("signal_cli.py")
#: Bound on the run reaching its Bash command, and on its shutdown after the signal.
TIMEOUT = 60.0
#: Bound on the background process being gone once the command has exited (it is
#: killed before the command exits: this only absorbs the kernel's reaping).
GONE_TIMEOUT = 5.0


def _environment() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    environment.update({"COLUMNS": "160", "LINES": "50", "TERM": "xterm-256color"})
    return environment


def _readable(fd: int, timeout: float) -> bool:
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready)


class Busy:
    """A started command whose lead is in its Bash command: the process and the sleep's pidfd."""

    def __init__(self, process: subprocess.Popen[Any], sleep_pidfd: int, sleep_pid: int) -> None:
        self.process = process
        self.sleep_pidfd = sleep_pidfd
        self.sleep_pid = sleep_pid

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def sleep_gone(self) -> bool:
        """Whether the background ``sleep`` has exited (within :data:`GONE_TIMEOUT`)."""
        return _readable(self.sleep_pidfd, GONE_TIMEOUT)


@contextlib.contextmanager
def busy_command(
    tmp_path: Path, *args: str, terminal: int | None = None, **popen: Any
) -> Iterator[Busy]:
    """Start ``subagents ARGS`` and wait (bounded) until its Bash command has started the sleep.

    What the command writes to ``terminal`` (a pty's primary side) meanwhile is
    read and dropped, so the command never blocks on a full terminal. On exit,
    whatever is left (the command, the sleep) is killed, so a failing test
    leaves no process behind either.
    """
    ready = tmp_path / f"ready-{len(list(tmp_path.glob('ready-*')))}"
    os.mkfifo(ready)
    reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)  # the shell's open never blocks
    process = subprocess.Popen(
        [sys.executable, str(HARNESS), str(ready), *args], env=_environment(), **popen
    )
    sleep_pidfd = -1
    try:
        process_fd = os.pidfd_open(process.pid)
        watched = [reader, process_fd] + ([] if terminal is None else [terminal])
        deadline = time.monotonic() + TIMEOUT
        try:
            while True:
                ready_fds, _, _ = select.select(
                    watched, [], [], max(0.0, deadline - time.monotonic())
                )
                if terminal not in ready_fds:
                    break
                os.read(terminal, 65536)
        finally:
            os.close(process_fd)
        assert reader in ready_fds, "the run never reached its Bash command"
        sleep_pid = int(os.read(reader, 64).decode().strip())
        sleep_pidfd = os.pidfd_open(sleep_pid)  # pins the process: no pid reuse below
        yield Busy(process, sleep_pidfd, sleep_pid)
    finally:
        os.close(reader)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=TIMEOUT)
        if sleep_pidfd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(sleep_pidfd, signal.SIGKILL)
            os.close(sleep_pidfd)


def _run_args(tmp_path: Path) -> list[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "main.py").write_text("print('hi')\n")
    return ["--cwd", str(project), "--state-dir", str(tmp_path / "state"), "--yes"]


def _assert_transcripts_end_shutdown(state: Path, agents: int) -> None:
    transcripts = sorted(state.rglob("agent-*.jsonl"))
    assert len(transcripts) == agents, transcripts
    for path in transcripts:
        last = load_transcript(path).last_result
        assert last is not None, path
        assert (last.status, last.terminate_reason.value) == ("shutdown", "aborted"), path


def _assert_summary_says_shutdown(stdout: str, agents: int) -> None:
    table = [line for line in stdout.splitlines() if line.startswith("│")]
    rows = [line for line in table if "lead" in line or "Explore" in line]
    assert len(rows) == agents, stdout
    for row in rows:
        assert "shutdown" in row, stdout
        assert "running" not in row, stdout
    assert "session " in stdout, stdout


EXIT_CODES = [
    pytest.param(signal.SIGINT, 130, id="SIGINT"),
    pytest.param(signal.SIGTERM, 143, id="SIGTERM"),
    pytest.param(signal.SIGHUP, 129, id="SIGHUP"),
]


@pytest.mark.parametrize(("number", "code"), EXIT_CODES)
def test_a_signal_shuts_the_run_down_cleanly(tmp_path: Path, number: int, code: int) -> None:
    with busy_command(
        tmp_path,
        "run",
        "Go",
        *_run_args(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as busy:
        busy.signal(number)
        stdout, stderr = busy.process.communicate(timeout=TIMEOUT)
        assert busy.process.returncode == code, stderr
        assert busy.sleep_gone(), f"the Bash command's sleep {busy.sleep_pid} outlived the run"
    assert "Traceback" not in stderr, stderr
    assert "stopping" in stderr, stderr
    _assert_summary_says_shutdown(stdout, agents=2)
    _assert_transcripts_end_shutdown(tmp_path / "state", agents=2)


def test_sigterm_shuts_a_resumed_agent_down_cleanly(tmp_path: Path) -> None:
    args = _run_args(tmp_path)
    with busy_command(tmp_path, "run", "Go", *args, "--json", stdout=subprocess.PIPE) as busy:
        busy.signal(signal.SIGINT)
        stdout, _ = busy.process.communicate(timeout=TIMEOUT)
        assert busy.process.returncode == 130
    lead = next(
        path.stem.removeprefix("agent-")
        for path in (tmp_path / "state").rglob("agent-*.jsonl")
        if load_transcript(path).meta.agent_type == "lead"
    )
    with busy_command(
        tmp_path,
        "resume",
        lead,
        "Again",
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as busy:
        busy.signal(signal.SIGTERM)
        stdout, stderr = busy.process.communicate(timeout=TIMEOUT)
        assert busy.process.returncode == 143, stderr
        assert busy.sleep_gone(), f"the Bash command's sleep {busy.sleep_pid} outlived the resume"
    assert "Traceback" not in stderr, stderr
    # The lead, its Explore agent of the first run (open when that process ended, so
    # reopened with the lead, as Codex's resume does) and its new Explore agent.
    _assert_summary_says_shutdown(stdout, agents=3)
    _assert_transcripts_end_shutdown(tmp_path / "state", agents=3)


def test_a_closed_terminal_still_shuts_the_run_down_cleanly(tmp_path: Path) -> None:
    """The terminal goes away (its writes now fail), then SIGHUP comes, twice: shell and kernel."""
    primary, secondary = pty.openpty()
    try:
        with busy_command(
            tmp_path,
            "run",
            "Go",
            *_run_args(tmp_path),
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            close_fds=True,
            terminal=primary,
        ) as busy:
            os.close(secondary)
            secondary = -1
            os.close(primary)  # the terminal closes: writes to it fail from now on
            primary = -1
            busy.signal(signal.SIGHUP)
            busy.signal(signal.SIGHUP)
            assert busy.process.wait(timeout=TIMEOUT) == 129
            assert busy.sleep_gone(), f"the Bash command's sleep {busy.sleep_pid} outlived the run"
    finally:
        for fd in (primary, secondary):
            if fd >= 0:
                os.close(fd)
    _assert_transcripts_end_shutdown(tmp_path / "state", agents=2)
