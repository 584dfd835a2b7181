"""Transcript writers on a failing disk: full, not writable, removed mid-run.

Running as root makes ``chmod`` ineffective, so the faults are injected through
the writer's ``opener``: a file whose writes start failing after a number of
lines, with the operating system's error codes. The one real ``chmod`` test
skips when the directory stays writable.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from subagents.runtime import AgentResult, Message, Origin, TerminateReason
from subagents.runtime._exceptions import TranscriptWriteError
from subagents.runtime._transcripts.file import TranscriptFile, open_append
from subagents.runtime._transcripts.load import load_transcript
from subagents.runtime._transcripts.records import MetaRecord, transcript_path
from subagents.runtime._transcripts.writer import TranscriptWriter

META = MetaRecord(agent_id="a1", agent_type="Explore", nickname="Ada", depth=1, session_id="s1")
DONE = AgentResult(terminate_reason=TerminateReason.GOAL, text="done")


def say(n: int) -> Message:
    return Message.user(f"message {n}", origin=Origin.INPUT)


class FailingFile:
    """A real transcript file whose writes fail with ``code`` once ``budget`` writes are used.

    With ``partial`` the failing write first hands half its bytes to the file,
    as a disk that fills up in the middle of a line does.
    """

    def __init__(self, path: Path, budget: int, code: int, partial: bool = False) -> None:
        self._file = open_append(path)
        self._budget = budget
        self._code = code
        self._partial = partial

    def write(self, data: bytes, /) -> int | None:
        if self._budget <= 0:
            if self._partial and len(data) > 1:
                self._partial = False
                return self._file.write(data[: len(data) // 2])
            raise OSError(self._code, os.strerror(self._code))
        self._budget -= 1
        return self._file.write(data)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


class Opener:
    """Opens :class:`FailingFile` objects; ``budgets`` gives each opening's write budget."""

    def __init__(self, *budgets: int, code: int = errno.ENOSPC, partial: bool = False) -> None:
        self.budgets = list(budgets)
        self.code = code
        self.partial = partial
        self.opened = 0

    def __call__(self, path: Path) -> TranscriptFile:
        budget = self.budgets[min(self.opened, len(self.budgets) - 1)]
        self.opened += 1
        return FailingFile(path, budget, self.code, self.partial)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return transcript_path(tmp_path, "s1", "a1")


def test_a_full_disk_under_policy_memory_reports_once_and_goes_on(path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    writer = TranscriptWriter(path, META, on_report=reports.append, opener=Opener(3, 0))
    for n in range(2):
        writer.append_message(say(n))
    on_disk = path.read_bytes()

    for n in range(2, 6):
        assert writer.append_message(say(n)) == n
    writer.append_result(DONE)

    assert len(reports) == 1
    error = reports[0]
    assert error.errno == errno.ENOSPC
    assert error.path == path
    assert str(path) in str(error)
    assert "No space left on device (ENOSPC)" in str(error)
    assert "Free some disk space" in str(error)
    assert "goes on with the transcript kept in memory" in str(error)
    assert writer.in_memory
    assert writer.error is error
    stats = writer.statistics()
    assert (stats.lines_written, stats.lines_buffered, stats.lines_dropped) == (3, 5, 0)
    assert path.read_bytes() == on_disk
    assert b'"seq":2' in writer.buffered()[0]
    assert "in memory" in repr(writer)

    writer.close()  # the retry at close fails again: nothing is written, nothing is lost
    assert path.read_bytes() == on_disk
    assert len(writer.buffered()) == 5
    assert [r.seq for r in load_transcript(path).messages] == [0, 1]


def test_a_full_disk_under_policy_stop_raises_and_keeps_what_was_written(path: Path) -> None:
    writer = TranscriptWriter(path, META, on_disk_error="stop", opener=Opener(3))
    writer.append_message(say(0))
    writer.append_message(say(1))
    on_disk = path.read_bytes()

    with pytest.raises(TranscriptWriteError) as caught:
        writer.append_message(say(2))
    assert caught.value.errno == errno.ENOSPC
    assert str(path) in str(caught.value)
    assert "No space left on device" in str(caught.value)
    assert "The agent was stopped" in str(caught.value)
    assert isinstance(caught.value.__cause__, OSError)
    with pytest.raises(TranscriptWriteError, match="No space left"):
        writer.append_result(DONE)
    assert writer.next_seq == 2
    assert not writer.in_memory
    assert writer.statistics().error is not None
    writer.close()

    assert path.read_bytes() == on_disk
    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert [m.text for m in transcript.conversation()] == ["message 0", "message 1"]


def test_a_write_cut_in_the_middle_of_a_line_leaves_a_torn_line_that_load_ignores(
    path: Path,
) -> None:
    writer = TranscriptWriter(path, META, on_disk_error="stop", opener=Opener(2, partial=True))
    writer.append_message(say(0))
    with pytest.raises(TranscriptWriteError):
        writer.append_message(say(1))
    writer.close()

    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert [n.line for n in transcript.notes] == [3]
    assert [m.text for m in transcript.conversation()] == ["message 0"]

    with TranscriptWriter.resume(transcript) as resumed:
        resumed.append_message(say(1))
    again = load_transcript(path)
    assert [p.line for p in again.problems] == [3]
    assert [m.text for m in again.conversation()] == ["message 0", "message 1"]


class ShortFile:
    """A real file whose ``write`` takes at most ``most`` bytes a call (0: none at all), as
    a pipe or a signal-interrupted ``write`` may."""

    def __init__(self, path: Path, most: int) -> None:
        self._file = open_append(path)
        self._most = most

    def write(self, data: bytes, /) -> int | None:
        return self._file.write(data[: self._most]) if self._most else 0

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


def test_short_writes_are_finished_and_every_line_arrives_whole(path: Path) -> None:
    with TranscriptWriter(path, META, opener=lambda p: ShortFile(p, 7)) as writer:
        for n in range(3):
            writer.append_message(say(n))
        writer.append_result(DONE)
        assert writer.statistics().lines_written == 5

    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert [m.text for m in transcript.conversation()] == ["message 0", "message 1", "message 2"]
    assert transcript.runs == 1


def test_a_write_that_takes_no_bytes_is_a_disk_error_not_a_loop(path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    writer = TranscriptWriter(
        path, META, on_report=reports.append, opener=lambda p: ShortFile(p, 0)
    )
    writer.append_message(say(0))

    assert [r.errno for r in reports] == [errno.EIO]
    assert "accepted no bytes" in str(reports[0])
    assert writer.in_memory
    assert len(writer.buffered()) == 2  # the meta line and the message, kept
    writer.close()

    with pytest.raises(TranscriptWriteError, match="accepted no bytes"):
        TranscriptWriter(path, META, on_disk_error="stop", opener=lambda p: ShortFile(p, 0))


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_transcript_that_cannot_be_opened(path: Path, code: int) -> None:
    def refuse(_: Path) -> TranscriptFile:
        raise OSError(code, os.strerror(code))

    reports: list[TranscriptWriteError] = []
    writer = TranscriptWriter(path, META, on_report=reports.append, opener=refuse)
    writer.append_message(say(0))
    assert writer.in_memory
    assert [r.errno for r in reports] == [code]
    assert len(writer.buffered()) == 2
    assert b'"record":"meta"' in writer.buffered()[0]
    writer.close()

    with pytest.raises(TranscriptWriteError) as caught:
        TranscriptWriter(path, META, on_disk_error="stop", opener=refuse)
    assert caught.value.errno == code
    assert "writable" in str(caught.value)


def test_a_state_dir_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state directory should be")
    path = transcript_path(blocker, "s1", "a1")
    writer = TranscriptWriter(path, META)
    assert writer.in_memory
    assert writer.error is not None
    assert writer.error.errno in (errno.ENOTDIR, errno.EEXIST)
    writer.close()
    with pytest.raises(TranscriptWriteError):
        TranscriptWriter(path, META, on_disk_error="stop")


def test_a_read_only_state_dir_for_real(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o500)
    try:
        if os.access(state, os.W_OK):
            pytest.skip("running as root: chmod does not stop writes (see the injected faults)")
        reports: list[TranscriptWriteError] = []
        writer = TranscriptWriter(
            transcript_path(state, "s1", "a1"), META, on_report=reports.append
        )
        assert writer.in_memory
        assert reports[0].errno == errno.EACCES
        writer.close()
    finally:
        state.chmod(0o700)


def test_a_state_dir_removed_mid_run_under_policy_memory(tmp_path: Path, path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    writer = TranscriptWriter(path, META, on_report=reports.append)
    writer.append_message(say(0))
    shutil.rmtree(tmp_path / "sessions")

    writer.append_message(say(1))
    writer.append_message(say(2))
    writer.append_result(DONE)

    assert [r.errno for r in reports] == [errno.ENOENT]
    assert "removed while the agent ran" in str(reports[0])
    assert writer.in_memory
    assert [b'"seq":1' in line for line in writer.buffered()] == [True, False, False]
    writer.close()
    assert not (tmp_path / "sessions").exists()  # not recreated behind the user's back


def test_a_state_dir_removed_mid_run_under_policy_stop(tmp_path: Path, path: Path) -> None:
    writer = TranscriptWriter(path, META, on_disk_error="stop")
    writer.append_message(say(0))
    shutil.rmtree(tmp_path / "sessions")
    with pytest.raises(TranscriptWriteError) as caught:
        writer.append_message(say(1))
    assert caught.value.errno == errno.ENOENT
    assert str(path) in str(caught.value)
    writer.close()


def test_the_memory_buffer_is_bounded_and_drops_the_oldest_messages_first(path: Path) -> None:
    writer = TranscriptWriter(path, META, max_buffered_lines=4, opener=Opener(0))
    writer.append_message(say(0))
    writer.append_result(DONE)
    for n in range(1, 6):
        writer.append_message(say(n))

    kinds = [
        b'"record":"meta"' in line or b'"record":"result"' in line for line in writer.buffered()
    ]
    assert kinds == [True, True, False, False]
    assert b'"seq":4' in writer.buffered()[2]
    assert b'"seq":5' in writer.buffered()[3]
    assert writer.statistics().lines_dropped == 4

    for _ in range(3):
        writer.append_result(DONE)
    buffered = writer.buffered()
    assert len(buffered) == 4
    assert b'"record":"meta"' in buffered[0]
    assert all(b'"record":"result"' in line for line in buffered[1:])
    writer.append_message(say(6))  # nothing but meta and results left: the new message goes
    assert len(writer.buffered()) == 4
    assert writer.statistics().lines_dropped == 4 + 3 + 1


def test_retry_moves_the_held_lines_to_disk_once_the_disk_has_room(path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    opener = Opener(2, 1_000)
    writer = TranscriptWriter(path, META, on_report=reports.append, opener=opener)
    for n in range(5):
        writer.append_message(say(n))
    assert writer.in_memory

    assert writer.retry()
    assert not writer.statistics().in_memory
    assert writer.error is None
    assert writer.buffered() == ()
    writer.append_result(DONE)
    assert writer.retry()
    writer.close()

    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert [m.text for m in transcript.conversation()] == [f"message {n}" for n in range(5)]
    assert transcript.last_result is not None
    assert len(reports) == 1


def test_close_retries_once_and_a_failing_retry_keeps_the_lines(path: Path) -> None:
    opener = Opener(1, 0, 1_000)
    writer = TranscriptWriter(path, META, opener=opener)
    writer.append_message(say(0))
    assert not writer.retry()  # the second opening fails on its first write
    assert len(writer.buffered()) == 1
    writer.close()  # the third opening works
    assert writer.buffered() == ()
    assert [m.text for m in load_transcript(path).conversation()] == ["message 0"]
    assert opener.opened == 3


def test_a_file_removed_alone_is_started_again_with_a_meta_line(path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    writer = TranscriptWriter(path, META, on_report=reports.append)
    writer.append_message(say(0))
    path.unlink()

    writer.append_message(say(1))  # goes to the deleted file: noticed, held in memory
    assert [r.errno for r in reports] == [errno.ENOENT]
    assert not path.exists()
    writer.close()  # the folder is still there: the retry recreates the file

    transcript = load_transcript(path)
    assert transcript.meta.nickname == "Ada"
    assert [m.text for m in transcript.conversation()] == ["message 1"]
    assert [p.message for p in transcript.problems] == ["messages seq 0 missing before this one"]
