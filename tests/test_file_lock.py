"""The shared file lock waits out a process being started, and nothing longer.

A process started from any thread (a runtime's fsync helper, a tool's
subprocess, an MCP server) holds a copy of every descriptor from its ``fork`` to
its ``exec``, so a lock this process has just released can look held for that
moment. A copy made with ``os.dup`` is the same thing, held for as long as the
test likes: the holder here is released at the first pause, the way an
``exec`` ends it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subagents import _file_lock
from subagents._file_lock import FORK_WINDOW_SECONDS, try_lock
from subagents.runtime import AgentInUse
from subagents.runtime._transcripts.lock import claim_transcript, is_locked
from subagents.teams import BoardInUse
from subagents.teams._journal import Journal


class FakeTime:
    """``time.monotonic`` and ``time.sleep`` for the lock: a pause moves the clock, and the
    first pause can run ``on_first_pause`` (the forked copy's ``exec``)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses: list[float] = []
        self.on_first_pause: list[int] = []  # descriptors to close at the first pause

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        while self.on_first_pause:
            os.close(self.on_first_pause.pop())


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    """The lock module's clock, faked (only there: the time module itself is untouched)."""
    fake = FakeTime()
    monkeypatch.setattr(_file_lock, "time", fake)
    return fake


def _released_but_copied(path: Path) -> int:
    """Lock ``path``, then close it while a copy of the descriptor lives on (as in a child
    between its fork and its exec); the copy."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    assert try_lock(fd)
    copy = os.dup(fd)
    os.close(fd)
    return copy


def test_a_lock_held_by_a_starting_process_is_waited_for(
    tmp_path: Path, fake_time: FakeTime
) -> None:
    path = tmp_path / "lock"
    fake_time.on_first_pause.append(_released_but_copied(path))
    fd = os.open(path, os.O_RDWR)
    try:
        assert try_lock(fd, wait=FORK_WINDOW_SECONDS)
        assert len(fake_time.pauses) == 1
    finally:
        os.close(fd)


def test_a_lock_held_for_good_is_refused_once_the_window_has_passed(
    tmp_path: Path, fake_time: FakeTime
) -> None:
    path = tmp_path / "lock"
    holder = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fd = os.open(path, os.O_RDWR)
    try:
        assert try_lock(holder)
        assert not try_lock(fd, wait=FORK_WINDOW_SECONDS)
        assert sum(fake_time.pauses) == pytest.approx(FORK_WINDOW_SECONDS)
        assert len(fake_time.pauses) < 15  # growing pauses, not a spin
    finally:
        os.close(fd)
        os.close(holder)


def test_a_probe_answers_at_once(tmp_path: Path, fake_time: FakeTime) -> None:
    path = tmp_path / "lock"
    copy = _released_but_copied(path)
    fd = os.open(path, os.O_RDWR)
    try:
        assert not try_lock(fd)
        assert is_locked(fd)
        assert fake_time.pauses == []
    finally:
        os.close(fd)
        os.close(copy)


def test_a_board_reopened_while_a_process_starts_is_not_refused(
    tmp_path: Path, fake_time: FakeTime
) -> None:
    path = tmp_path / "board.jsonl"
    journal, _ = Journal.open(path)
    copy = os.dup(journal._fd)
    journal.close()
    fake_time.on_first_pause.append(copy)
    again, _ = Journal.open(path)
    again.close()
    # Held for good, it is still refused, as before.
    holder, _ = Journal.open(path)
    try:
        with pytest.raises(BoardInUse):
            Journal.open(path)
    finally:
        holder.close()


def test_a_transcript_claimed_while_a_process_starts_is_not_refused(
    tmp_path: Path, fake_time: FakeTime
) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_text('{"type":"meta"}\n')
    fake_time.on_first_pause.append(_released_but_copied(path))
    claim_transcript(path, "a1").close()
    holder = claim_transcript(path, "a1")
    try:
        with pytest.raises(AgentInUse):
            claim_transcript(path, "a1")
    finally:
        holder.close()
