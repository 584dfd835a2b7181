"""Transcript lines written in batches: a turn's lines in one ``write``, a held line at most
one scheduler pass late (issue 17).

The guarantee kept from before: a turn's lines are handed to the OS before the
writer returns from the turn's last line (so before the loop publishes the
turn's completion, and a completed turn survives ``kill -9``), and a result is
``fsync``-ed before ``append_result`` returns (``test_transcripts.py``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    AgentResult,
    Message,
    Origin,
    ScriptedProvider,
    TerminateReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnCompleted,
    load_transcript,
)
from subagents.runtime._exceptions import TranscriptWriteError
from subagents.runtime._transcripts import writer as writer_module
from subagents.runtime._transcripts.file import TranscriptFile, open_append
from subagents.runtime._transcripts.flusher import (
    GATHER_PASSES,
    GATHER_PASSES_WAITED,
    Flushable,
    TranscriptFlusher,
)
from subagents.runtime._transcripts.records import MetaRecord
from subagents.runtime._transcripts.syncer import SyncHelper, helper_available
from subagents.runtime._transcripts.writer import TranscriptWriter
from subagents.tools import ToolContext, ToolFlags, ToolResult
from tests.runtime.helpers import NoteArgs
from tests.runtime.transcripts.helpers import hold_new_files, record_fsync_threads
from tests.runtime.world import World

META = MetaRecord(agent_id="a1", agent_type="Explore", nickname="Ada", depth=1, session_id="s1")
CALL = Message("assistant", (ToolUseBlock("t1", "Read", {"path": "x"}),), Origin.MODEL)
RESULTS = Message("user", (ToolResultBlock("t1", "text of x"),), Origin.TOOL_RESULTS)


class CountingFile:
    """A real transcript file that counts its writes (and can fail them)."""

    def __init__(self, path: Path) -> None:
        self._file = open_append(path)
        self.writes = 0
        self.fail = False

    def write(self, data: bytes, /) -> int | None:
        if self.fail:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.writes += 1
        return self._file.write(data)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


class Accepting:
    """A flusher that always accepts, and remembers who asked."""

    def __init__(self) -> None:
        self.wanted: list[Flushable] = []

    def want(self, writer: Flushable, /) -> bool:
        self.wanted.append(writer)
        return True

    def want_open(self, writer: object, /) -> bool:
        return False  # the writer makes its file itself, at once

    def claim_open(self, writer: object, /) -> None:
        raise AssertionError("never asked to make a file")


def _writer(
    path: Path, flusher: object, **options: object
) -> tuple[TranscriptWriter, CountingFile]:
    files: list[CountingFile] = []

    def opener(p: Path) -> TranscriptFile:
        files.append(CountingFile(p))
        return files[-1]

    writer = TranscriptWriter(path, META, opener=opener, flusher=flusher, **options)  # type: ignore[arg-type]
    return writer, files[0]


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def test_a_turns_call_and_results_go_to_the_file_in_one_write(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    flusher = Accepting()
    writer, file = _writer(path, flusher)
    before = file.writes
    writer.append_message(CALL)
    assert _lines(path) == 1  # the call waits for its results (or the end of the pass)
    assert flusher.wanted == [writer]
    writer.append_message(RESULTS)
    assert file.writes == before + 1
    assert _lines(path) == 3  # both on the OS before append_message returned
    writer.close()
    assert [m.message.role for m in load_transcript(path).messages] == ["assistant", "user"]


def test_a_held_line_is_written_by_flush_and_by_close(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    writer, _ = _writer(path, Accepting())
    writer.append_message(CALL)
    writer.flush()
    assert _lines(path) == 2
    writer.append_message(CALL)
    writer.close()
    assert _lines(path) == 3


def test_a_result_writes_the_held_line_first_and_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(writer_module.os, "fsync", synced.append)
    path = tmp_path / "a1.jsonl"
    writer, _ = _writer(path, Accepting())
    writer.append_message(CALL)
    writer.append_result(AgentResult(terminate_reason=TerminateReason.GOAL, text="done"))
    assert len(synced) == 1
    assert _lines(path) == 3
    writer.close()
    assert load_transcript(path).runs == 1


def test_a_declining_flusher_means_every_line_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    writer, _ = _writer(path, TranscriptFlusher())  # not running: declines
    writer.append_message(CALL)
    assert _lines(path) == 2
    writer.close()


def test_a_disk_error_on_a_batch_keeps_both_lines_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    writer, file = _writer(path, Accepting())
    writer.append_message(CALL)
    file.fail = True
    writer.append_message(RESULTS)
    assert writer.in_memory
    assert len(writer.buffered()) == 2
    file.fail = False
    assert writer.retry()
    writer.close()
    assert [m.message.role for m in load_transcript(path).messages] == ["assistant", "user"]


def test_a_disk_error_on_a_batch_under_stop_raises(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    writer, file = _writer(path, Accepting(), on_disk_error="stop")
    writer.append_message(CALL)
    file.fail = True
    with pytest.raises(TranscriptWriteError):
        writer.append_message(RESULTS)
    writer.close()


async def test_the_flusher_makes_new_files_and_writes_held_lines_at_the_end_of_the_pass(
    tmp_path: Path,
) -> None:
    path, other = tmp_path / "a1.jsonl", tmp_path / "a2.jsonl"
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(path, META, flusher=flusher)
        second = TranscriptWriter(other, META, flusher=flusher)
        # no file yet: made at the end of the pass, in a worker thread, both together
        assert writer.opening
        assert second.opening
        assert not path.exists()
        assert not other.exists()
        writer.append_message(CALL)
        writer.append_message(Message.user("more", origin=Origin.INPUT))
        assert not writer.in_memory  # waiting for its file is not a disk error
        await flusher.opened(writer)
        await flusher.opened(second)
        assert (_lines(path), _lines(other)) == (3, 1)  # meta, call, more: one write
        assert flusher.opened_files == 2
        second.append_message(CALL)  # held back for its turn, now that the file is there
        assert _lines(other) == 1
        await trio.testing.wait_all_tasks_blocked()
        assert _lines(other) == 2
        assert flusher.passes == 1
        flusher.stop()
    writer.close()
    second.close()
    assert [m.message.text for m in load_transcript(path).messages] == ["", "more"]


@pytest.mark.skipif(not helper_available(), reason="no helper process on this platform")
async def test_files_wanted_one_pass_after_another_are_made_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loop of spawns wants one new file a scheduler pass: each batch is a round trip to
    # the helper process, so the flusher gathers them for a few passes.
    batches: list[int] = []
    real_open_in_helper = TranscriptFlusher._open_in_helper

    async def counting(
        self: TranscriptFlusher, helper: SyncHelper, opens: dict[Any, None], nursery: trio.Nursery
    ) -> dict[Any, None]:
        batches.append(len(opens))
        return await real_open_in_helper(self, helper, opens, nursery)

    monkeypatch.setattr(TranscriptFlusher, "_open_in_helper", counting)
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        first = TranscriptWriter(tmp_path / "first.jsonl", META, flusher=flusher)
        await flusher.opened(first)  # the helper is up: no batch waits for it to start
        assert batches == [1]
        batches.clear()
        writers = []
        for index in range(16):
            writers.append(TranscriptWriter(tmp_path / f"a{index}.jsonl", META, flusher=flusher))
            await trio.lowlevel.checkpoint()
        for writer in writers:
            await flusher.opened(writer)
        flusher.stop()
    for writer in (first, *writers):
        writer.close()
    assert sum(batches) == 16, batches
    assert batches[0] >= 6, batches  # one or two files before
    assert len(batches) <= 4, batches
    assert all(_lines(tmp_path / f"a{index}.jsonl") == 1 for index in range(16))


def _instant_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every batch of new files the flusher hands to the helper, made at once
    in this thread instead: batches then end only where the flusher's gathering ends
    them, not where a round trip to the helper happened to take long."""
    batches: list[int] = []

    async def instant(
        self: TranscriptFlusher, helper: SyncHelper, opens: dict[Any, None], nursery: trio.Nursery
    ) -> dict[Any, None]:
        batches.append(len(opens))
        for writer in opens:
            self._adopt(writer, writer.open_file())
        return {}

    monkeypatch.setattr(TranscriptFlusher, "_open_in_helper", instant)
    return batches


@contextlib.asynccontextmanager
async def _running_flusher() -> AsyncIterator[TranscriptFlusher]:
    """A flusher whose task runs (and has parked) for the block; stopped at its end."""
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        try:
            yield flusher
        finally:
            flusher.stop()


@contextlib.asynccontextmanager
async def _flusher_with_helper_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[TranscriptFlusher, trio.Nursery, list[int]]]:
    """A running flusher whose helper is up (one file made), then its batches counted and
    made at once (:func:`_instant_batches`); stopped at the end of the block."""
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        first = TranscriptWriter(tmp_path / "first.jsonl", META, flusher=flusher)
        await flusher.opened(first)
        try:
            yield flusher, nursery, _instant_batches(monkeypatch)
        finally:
            flusher.stop()
    first.close()


@pytest.mark.skipif(not helper_available(), reason="no helper process on this platform")
async def test_a_long_loop_of_spawns_makes_its_files_in_few_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each round trip to the helper costs this process tens of microseconds of CPU
    # whatever it carries: while nobody waits for a file, a batch gathers up to
    # GATHER_PASSES passes, not the 8 it once did (13 round trips for 100 spawns).
    writers = []
    async with _flusher_with_helper_up(tmp_path, monkeypatch) as (flusher, _, batches):
        for index in range(100):
            writers.append(TranscriptWriter(tmp_path / f"a{index}.jsonl", META, flusher=flusher))
            await trio.lowlevel.checkpoint()
        for writer in writers:
            await flusher.opened(writer)
    for writer in writers:
        writer.close()
    assert sum(batches) == 100, batches
    assert len(batches) <= 3, batches
    assert all(_lines(tmp_path / f"a{index}.jsonl") == 1 for index in range(100))


@pytest.mark.skipif(not helper_available(), reason="no helper process on this platform")
async def test_a_writer_waiting_for_its_file_ends_the_gathering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spawns go on one a pass, but a turn completed before its file was made (opened)
    # must not wait for the loop to end: the batch goes GATHER_PASSES_WAITED passes after
    # it began, not GATHER_PASSES.
    writers: list[TranscriptWriter] = []
    async with _flusher_with_helper_up(tmp_path, monkeypatch) as (flusher, nursery, batches):
        done = trio.Event()

        async def spawns() -> None:
            index = 0
            while not done.is_set():
                path = tmp_path / f"a{index}.jsonl"
                writers.append(TranscriptWriter(path, META, flusher=flusher))
                index += 1
                await trio.lowlevel.checkpoint()

        nursery.start_soon(spawns)
        await trio.lowlevel.checkpoint()
        await trio.lowlevel.checkpoint()
        waited = writers[0]
        await flusher.opened(waited)
        assert not waited.opening
        done.set()
        await trio.testing.wait_all_tasks_blocked()
    for writer in writers:
        writer.close()
    assert batches[0] <= GATHER_PASSES_WAITED + 2 < GATHER_PASSES, batches
    assert sum(batches) == len(writers), batches


async def test_a_writer_that_needs_its_file_before_the_pass_ends_makes_it_itself(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a1.jsonl"
    async with _running_flusher() as flusher:
        writer = TranscriptWriter(path, META, flusher=flusher)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        # a result written and fsync-ed now (a cancelled run's): the file is made here
        writer.append_result(AgentResult(terminate_reason=TerminateReason.ABORTED))
        assert not writer.opening
        assert [r.run for r in load_transcript(path).results] == [1]
        writer.close()
        await trio.testing.wait_all_tasks_blocked()
    assert flusher.opened_files == 0  # the flusher never made it a second time


async def test_a_turn_completed_before_its_file_is_made_settles_without_blocking_the_thread(
    tmp_path: Path,
) -> None:
    """The guarantee kept: a completed turn is in the file before the loop goes on, even
    when the turn ends before the flusher made the file (a model that answers at once);
    the loop awaits ``settling()`` for it, and the Trio thread makes no file and waits for
    no worker thread meanwhile."""
    path = tmp_path / "a1.jsonl"
    started, gate, slow = _gated_opener()
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(path, META, flusher=flusher, opener=slow)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        assert writer.settling() is None  # no turn completed yet
        writer.append_message(CALL)
        writer.append_message(RESULTS)  # the turn is complete; its file is being made
        assert writer.opening
        settling = writer.settling()
        assert settling is not None
        assert writer.settling() is None  # asked once per completed turn
        await trio.to_thread.run_sync(started.wait, 30)  # the worker is stuck on the file
        assert not path.exists()
        gate.set()
        with trio.fail_after(30):
            await settling
        assert not writer.opening
        assert len(load_transcript(path).messages) == 3
        answer = Message("assistant", (TextBlock("done"),), Origin.MODEL)
        writer.append_message(answer)  # the file is there: written at once
        assert writer.settling() is None
        assert len(load_transcript(path).messages) == 4
        flusher.stop()
    writer.close()
    assert flusher.opened_files == 1


async def test_a_file_never_made_is_given_up_after_the_wait_and_the_lines_kept(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker thread stuck on the file (a hung network file system) holds the loop for
    ``OPEN_WAIT_SECONDS`` at most: the writer then follows its disk-error policy."""
    from subagents.runtime._transcripts import flusher as flusher_module

    monkeypatch.setattr(flusher_module, "_virtual_clock", lambda: False)
    path = tmp_path / "a1.jsonl"
    started, gate, slow = _gated_opener()
    reports: list[TranscriptWriteError] = []
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(
            path, META, flusher=flusher, opener=slow, on_report=reports.append
        )
        writer.append_message(Message.user("task", origin=Origin.TASK))
        writer.append_message(Message("assistant", (TextBlock("done"),), Origin.MODEL))
        settling = writer.settling()
        assert settling is not None
        await trio.to_thread.run_sync(started.wait, 30)
        before = trio.current_time()
        await settling  # the clock jumps to the deadline: the thread never ends by itself
        assert trio.current_time() - before == pytest.approx(flusher_module.OPEN_WAIT_SECONDS)
        assert writer.in_memory
        assert [type(r.os_error) for r in reports] == [TimeoutError]
        assert len(writer.buffered()) == 3  # meta, task, answer: nothing lost
        gate.set()
        flusher.stop()
    assert flusher.opened_files == 1  # made after its writer gave up, and closed then
    writer.close()  # tries the file once more, as after any disk error: nothing lost
    assert [m.message.text for m in load_transcript(path).messages] == ["task", "done"]


async def test_each_writer_waiting_for_its_file_gives_up_at_its_own_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher keeps the deadline of every writer waiting for its file: each gives up
    ``OPEN_WAIT_SECONDS`` after it began to wait, not when the first one does."""
    from subagents.runtime._transcripts import flusher as flusher_module

    monkeypatch.setattr(flusher_module, "_virtual_clock", lambda: False)
    started, gate, slow = _gated_opener()
    flusher = TranscriptFlusher()
    woke: dict[str, float] = {}

    async def wait_for(name: str, writer: TranscriptWriter) -> None:
        await flusher.opened(writer)
        woke[name] = trio.current_time()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        first = TranscriptWriter(tmp_path / "a1.jsonl", META, flusher=flusher, opener=slow)
        await trio.to_thread.run_sync(started.wait, 30)  # the worker thread is stuck on it
        start = trio.current_time()
        nursery.start_soon(wait_for, "first", first)
        await trio.sleep(10)
        # Wanted while the first batch is stuck: it waits in the next one.
        second = TranscriptWriter(tmp_path / "a2.jsonl", META, flusher=flusher, opener=slow)
        nursery.start_soon(wait_for, "second", second)
        await trio.sleep(flusher_module.OPEN_WAIT_SECONDS + 5)
        wait = flusher_module.OPEN_WAIT_SECONDS
        assert woke == {
            "first": pytest.approx(start + wait),
            "second": pytest.approx(start + 10 + wait),
        }
        assert first.in_memory  # each keeps its lines: nothing lost
        assert second.in_memory
        gate.set()
        flusher.stop()
    first.close()
    second.close()


async def test_a_cancelled_caller_still_waits_for_its_file(tmp_path: Path) -> None:
    """The wait for a file is no cancellation point, as a shielded one was not: a turn
    whose agent is cancelled meanwhile goes on only once its lines are in the file."""
    path = tmp_path / "a1.jsonl"
    started, gate, slow = _gated_opener()
    flusher = TranscriptFlusher()
    steps: list[str] = []
    scopes: list[trio.CancelScope] = []

    async def waiter(writer: TranscriptWriter) -> None:
        with trio.CancelScope() as scope:
            scopes.append(scope)
            await flusher.opened(writer)
            steps.append("opened")
            await trio.lowlevel.checkpoint()
            steps.append("not cancelled")
        steps.append("cancelled" if scope.cancelled_caught else "never cancelled")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(path, META, flusher=flusher, opener=slow)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        await trio.to_thread.run_sync(started.wait, 30)
        nursery.start_soon(waiter, writer)
        await trio.testing.wait_all_tasks_blocked()
        scopes[0].cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert steps == []  # parked for the file, cancelled or not
        gate.set()  # the batch in flight is adopted before the flusher's task ends
        flusher.stop()
    assert steps == ["opened", "cancelled"]
    assert not writer.in_memory
    writer.close()
    assert [m.message.text for m in load_transcript(path).messages] == ["task"]


async def test_a_flusher_that_fails_leaves_no_writer_waiting_for_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of files that fails with a bug ends the flusher's task, and with it the
    deadlines it keeps: a writer still waiting has its file made as the flusher stops."""
    from subagents.runtime._transcripts import flusher as flusher_module

    def broken(self: object) -> None:
        raise RuntimeError("a bug in the batch")

    monkeypatch.setattr(flusher_module._OpenBatch, "run", broken)
    path = tmp_path / "a1.jsonl"
    flusher = TranscriptFlusher(helper=False)
    woke: list[bool] = []

    async def waiter(writer: TranscriptWriter) -> None:
        await flusher.opened(writer)
        woke.append(writer.opening)

    with pytest.RaisesGroup(RuntimeError, flatten_subgroups=True):
        async with trio.open_nursery() as nursery:
            await nursery.start(flusher.run)
            writer = TranscriptWriter(path, META, flusher=flusher)
            writer.append_message(Message.user("task", origin=Origin.TASK))
            nursery.start_soon(waiter, writer)
    assert woke == [False]  # woken with its file made
    assert not writer.in_memory
    writer.close()
    assert [m.message.text for m in load_transcript(path).messages] == ["task"]


class _ReleasingEvent:
    """The batch's ``done`` event, whose first wait releases the worker thread first."""

    def __init__(self, done: threading.Event, gate: threading.Event) -> None:
        self.done, self.gate, self.waited = done, gate, False

    def wait(self, timeout: float | None = None) -> bool:
        self.waited = True
        self.gate.set()
        return self.done.wait(timeout)

    def set(self) -> None:
        self.done.set()


def _gated_opener() -> tuple[threading.Event, threading.Event, Callable[[Path], TranscriptFile]]:
    """An opener that says it ``started``, then waits (30 s at most) for ``gate``."""
    started, gate = threading.Event(), threading.Event()

    def slow(p: Path) -> TranscriptFile:
        started.set()
        gate.wait(30)
        return open_append(p)

    return started, gate, slow


async def test_a_writer_closed_while_its_file_is_being_made_waits_for_it(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    started, gate, slow = _gated_opener()
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(path, META, flusher=flusher, opener=slow)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        await trio.to_thread.run_sync(started.wait, 30)  # the worker thread is making it
        batch = flusher._batch
        assert batch is not None
        releasing = _ReleasingEvent(batch.done, gate)
        batch.done = releasing  # type: ignore[assignment]
        writer.close()  # waits for the worker's file: never a second open of it
        assert releasing.waited
        await trio.testing.wait_all_tasks_blocked()
        flusher.stop()
    assert flusher.opened_files == 1
    assert [m.message.text for m in load_transcript(path).messages] == ["task"]


async def test_a_writer_the_worker_has_not_reached_makes_its_file_itself(tmp_path: Path) -> None:
    """No wait on a worker that may not run yet (it waits for a thread slot in the Trio
    thread): the writer takes its file from the batch and the worker skips it."""
    started, gate, slow = _gated_opener()
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        first = TranscriptWriter(tmp_path / "a1.jsonl", META, flusher=flusher, opener=slow)
        # An opener of its own keeps it in the worker thread's batch (not the helper's).
        second = TranscriptWriter(
            tmp_path / "a2.jsonl", META, flusher=flusher, opener=lambda p: open_append(p)
        )
        await trio.to_thread.run_sync(started.wait, 30)  # the worker is stuck on the first
        second.append_message(Message.user("task", origin=Origin.TASK))
        second.close()  # made here, at once
        assert [m.message.text for m in load_transcript(tmp_path / "a2.jsonl").messages] == ["task"]
        gate.set()
        await flusher.opened(first)
        flusher.stop()
    first.close()
    assert flusher.opened_files == 1  # the first only


async def test_written_puts_every_line_so_far_in_the_file(tmp_path: Path) -> None:
    """What a hook waits for before it reads the file: the line held back for its turn
    written, and the file the flusher is making made; then nothing is left to wait for."""
    path = tmp_path / "a1.jsonl"
    async with _running_flusher() as flusher:
        writer = TranscriptWriter(path, META, flusher=flusher)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        writer.append_message(CALL)  # held back, to go with its results
        assert not path.exists()
        waiting = writer.written()
        assert waiting is not None  # the file is still being made
        with trio.fail_after(30):
            await waiting
        loaded = load_transcript(path)
        assert [m.message.role for m in loaded.messages] == ["user", "assistant"]
        assert writer.written() is None
        writer.append_message(RESULTS)
    writer.close()
    assert [m.message.role for m in load_transcript(path).messages] == [
        "user",
        "assistant",
        "user",
    ]


@pytest.mark.parametrize("policy", ["memory", "stop"])
async def test_a_file_the_flusher_cannot_make_follows_the_writers_policy(
    tmp_path: Path, policy: str
) -> None:
    """Under ``memory`` the flusher makes the file at the end of the pass, and a failure
    keeps the lines in memory; under ``stop`` the writer makes its file at once, so the
    failure stops it before anything else is done (an agent's spawn is refused before its
    model is asked anything)."""
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []

    def refused(p: Path) -> TranscriptFile:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(p))

    def make() -> TranscriptWriter:
        return TranscriptWriter(
            path,
            META,
            flusher=flusher,
            opener=refused,
            on_disk_error=policy,  # type: ignore[arg-type]
            on_report=reports.append,
        )

    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        if policy == "stop":
            with pytest.raises(TranscriptWriteError, match="Permission denied"):
                make()
            flusher.stop()
            assert flusher.opened_files == 0  # never handed to the flusher
            assert not path.exists()
            return
        writer = make()
        assert writer.opening  # the flusher makes it, with the pass's other files
        writer.append_message(Message.user("task", origin=Origin.TASK))
        await flusher.opened(writer)
        assert writer.in_memory
        assert len(writer.buffered()) == 2  # the meta line and the task, kept
        assert [r.errno for r in reports] == [errno.EACCES]
        flusher.stop()
    writer.close()
    assert not path.exists()


@attrs.define(eq=False)
class GateTool:
    """A read-only tool whose call with ``text="wait"`` holds until ``release`` is set."""

    name: str = "Gate"
    description: str = "Waits when asked to."
    arguments_type: type[msgspec.Struct] = NoteArgs
    flags: ToolFlags = attrs.field(factory=lambda: ToolFlags(read_only=True, background_safe=True))
    started: trio.Event = attrs.field(factory=trio.Event)
    release: trio.Event = attrs.field(factory=trio.Event)

    async def call(self, args: NoteArgs, ctx: ToolContext, /) -> ToolResult:
        if args.text == "wait":
            self.started.set()
            await self.release.wait()
        return ToolResult.ok(args.text)


async def test_in_a_runtime_a_turn_costs_one_write_and_a_slow_tools_call_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = 0
    real = writer_module.write_all

    def counting(file: TranscriptFile, data: bytes) -> None:
        nonlocal writes
        writes += 1
        real(file, data)

    monkeypatch.setattr(writer_module, "write_all", counting)
    world = World(tmp_path)
    world.agent("worker", tools="Gate")
    gate = GateTool()
    provider = ScriptedProvider(
        [testing.call("Gate", text="a")] * 3
        + [testing.call("Gate", text="wait"), testing.say("ok")]
    )
    async with world.open(provider, tools=[gate]) as rt:
        handle = await rt.spawn("worker", "work")
        with trio.fail_after(30):
            await gate.started.wait()
            await trio.testing.wait_all_tasks_blocked()
        # The long call is under way: the model's message that asked for it is on disk.
        path = rt.transcript_path(handle.agent_id)
        assert path is not None
        loaded = load_transcript(path)
        assert loaded.messages[-1].message.tool_uses[0].input == {"text": "wait"}
        gate.release.set()
        await rt.wait([handle.agent_id], timeout=30)
    # The meta line, the prompt, three turns of one write each, the fourth turn's call (at
    # the end of its pass) and results, the answer, the result: 9 (one per line: 12).
    assert writes <= 9


@pytest.mark.skipif(not helper_available(), reason="no file helper on this platform")
async def test_in_a_runtime_a_turn_is_on_disk_before_it_is_announced_and_the_thread_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that answers at once ends the first turn before the file is made: the
    agent's loop waits for it before it announces the turn or asks the model again, and
    the Trio thread goes on with everything else meanwhile (it used to make the file
    itself, or wait in a blocking call for a worker thread's whole batch)."""
    asked, release = hold_new_files(monkeypatch)
    world = World(tmp_path)
    world.agent("worker", tools="Gate")
    provider = ScriptedProvider([testing.call("Gate", text="a"), testing.say("ok")])
    async with world.open(provider, tools=[GateTool()]) as rt:
        turns = rt.subscribe(types=[TurnCompleted], policy="block")
        handle = await rt.spawn("worker", "work")
        with trio.fail_after(30):
            await asked.wait()
            await trio.testing.wait_all_tasks_blocked()
        # The first turn is complete in memory; its file is not made, so it is not announced.
        assert [m.role for m in rt.conversation(handle.agent_id)] == ["user", "assistant", "user"]
        assert rt.progress(handle.agent_id).turns == 1
        with pytest.raises(trio.WouldBlock):
            turns.receive_nowait()
        path = rt.transcript_path(handle.agent_id)
        assert path is not None
        assert not path.exists()
        release.set()
        with trio.fail_after(30):
            first = await turns.receive()
            # announced once the turn is on disk (the loop may be further on by now)
            assert isinstance(first, TurnCompleted)
            assert len(load_transcript(path).messages) >= 3
            await rt.wait([handle.agent_id], timeout=30)
        turns.close()
    assert rt.status(handle.agent_id) == Completed("ok")
    loaded = load_transcript(path)
    assert [m.message.role for m in loaded.messages] == ["user", "assistant", "user", "assistant"]


async def test_the_results_of_one_pass_are_fsynced_together_in_worker_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    flusher = TranscriptFlusher(
        helper=False
    )  # the worker threads (the helper's own tests: test_syncer.py)
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        async with trio.open_nursery() as waiters:
            for file in files:
                waiters.start_soon(flusher.sync, file.fileno())
        flusher.stop()
    assert sorted(synced) == sorted(f.fileno() for f in files)
    assert flusher.synced == 3  # made by the task, not inline
    for file in files:
        file.close()


async def test_a_cancelled_caller_still_waits_for_its_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait for a result's ``fsync`` is no cancellation point: a caller whose scope is
    cancelled meanwhile goes on only once the result is on disk."""
    gate = threading.Event()
    real = os.fsync

    def slow(fd: int) -> None:
        if not gate.wait(30):
            raise OSError(errno.ETIMEDOUT, "the test's gate was never opened")
        real(fd)

    monkeypatch.setattr(os, "fsync", slow)
    flusher = TranscriptFlusher(helper=False)
    file = open_append(tmp_path / "a.jsonl")
    steps: list[str] = []

    async def caller(scope: trio.CancelScope) -> None:
        with scope:
            await flusher.sync(file.fileno())
            steps.append("synced")
            await trio.lowlevel.checkpoint()
        steps.append("cancelled" if scope.cancelled_caught else "not cancelled")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        scope = trio.CancelScope()
        async with trio.open_nursery() as callers:
            callers.start_soon(caller, scope)
            await trio.testing.wait_all_tasks_blocked()
            scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            assert steps == []  # parked for the fsync, cancelled or not
            gate.set()
        flusher.stop()
    file.close()
    assert steps == ["synced", "cancelled"]
    assert flusher.synced == 1


async def test_a_batch_of_fsync_calls_cut_short_leaves_no_caller_parked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the flusher's batch fail with something other than an ``OSError`` (a bug),
    what it did not sync is synced in the Trio thread and its callers go on, instead of
    waiting for ever: their wait cannot be cancelled."""
    flusher = TranscriptFlusher(helper=False)
    synced: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        synced.append(fd)
        real(fd)

    async def broken(self: TranscriptFlusher, syncs: object, nursery: trio.Nursery) -> None:
        raise RuntimeError("a bug in the batch")

    monkeypatch.setattr(os, "fsync", recording)
    monkeypatch.setattr(TranscriptFlusher, "_sync_batch", broken)
    file = open_append(tmp_path / "a.jsonl")
    fd = file.fileno()
    returned: list[str] = []

    async def caller() -> None:
        await flusher.sync(fd)
        returned.append("synced")

    with pytest.raises(ExceptionGroup) as caught:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(flusher.run)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(caller)
    file.close()
    assert caught.value.subgroup(RuntimeError) is not None
    assert caught.value.subgroup(OSError) is None  # the caller got no error
    assert returned == ["synced"]
    assert synced == [fd]


async def test_a_failed_fsync_is_the_callers_error(tmp_path: Path) -> None:
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(OSError, match="Bad file descriptor"):
            await flusher.sync(987_654)  # no such descriptor
        flusher.stop()


async def test_under_a_virtual_clock_the_fsync_is_made_at_once(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    flusher = TranscriptFlusher()
    file = open_append(tmp_path / "a.jsonl")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        await flusher.sync(file.fileno())
        flusher.stop()
    assert flusher.synced == 0
    file.close()


async def test_in_a_runtime_results_are_fsynced_by_the_flusher_before_the_status(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with world.open(provider) as rt:
        handles = [await rt.spawn("general-purpose", "work") for _ in range(3)]
        waited = await rt.wait([h.agent_id for h in handles], timeout=30, mode="all")
        assert all(isinstance(s, Completed) for s in waited.statuses.values())
        for handle in handles:
            path = rt.services.records[handle.agent_id].transcript_file
            assert path is not None
            assert load_transcript(path).runs == 1
        assert rt.services.flusher.synced == 3


async def test_a_close_fsyncs_its_closed_line_off_the_trio_thread_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job closes an agent per row: each close once waited for its own fsync in the Trio
    thread. The line is still on disk (fsync-ed, by the flusher's helper process or a
    worker thread) before ``close`` returns."""
    world = World(tmp_path)
    provider = ScriptedProvider([testing.say("done")])
    async with world.open(provider) as rt:
        handle = await rt.spawn("general-purpose", "Say done.")
        await rt.wait([handle.agent_id], timeout=30)
        trio_thread = threading.get_ident()
        synced = record_fsync_threads(monkeypatch)
        before = rt.services.flusher.synced
        await rt.close(handle.agent_id)
        assert rt.services.flusher.synced == before + 1  # before close returned
        assert trio_thread not in synced
        path = rt.transcript_path(handle.agent_id)
        assert path is not None
        closed = load_transcript(path).closed
        assert closed is not None
        assert closed.root == handle.agent_id


async def test_closing_running_agents_fsyncs_their_results_off_the_trio_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stopped run's result (``shutdown``) is fsync-ed by the flusher, as a completed
    one's: closing thousands of running agents made one fsync after the other in the
    Trio thread. Each result is still on disk when its close returns."""
    world = World(tmp_path)
    provider = ScriptedProvider(lambda request: testing.hang())
    async with world.open(provider) as rt:
        handles = [await rt.spawn("general-purpose", "work") for _ in range(3)]
        with trio.fail_after(30):
            await trio.testing.wait_all_tasks_blocked(0.01)
        trio_thread = threading.get_ident()
        synced = record_fsync_threads(monkeypatch)
        before = rt.services.flusher.synced
        for handle in handles:
            await rt.close(handle.agent_id)
            path = rt.transcript_path(handle.agent_id)
            assert path is not None
            (result,) = load_transcript(path).results
            assert result.status == "shutdown"
        assert rt.services.flusher.synced >= before + 3
        assert trio_thread not in synced


async def test_an_opener_that_raises_something_else_takes_the_disk_error_path(
    tmp_path: Path,
) -> None:
    """An opener's bug must not end the flusher's task (and with it the runtime)."""
    reports: list[TranscriptWriteError] = []
    calls: list[Path] = []

    def broken(p: Path) -> TranscriptFile:
        calls.append(p)
        if len(calls) == 1:
            raise RuntimeError("an opener's bug")
        return open_append(p)

    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        writer = TranscriptWriter(
            tmp_path / "a1.jsonl", META, flusher=flusher, opener=broken, on_report=reports.append
        )
        await flusher.opened(writer)
        assert writer.in_memory
        assert "an opener's bug" in str(reports[0])
        second = TranscriptWriter(tmp_path / "a2.jsonl", META, flusher=flusher)
        await flusher.opened(second)  # the flusher still makes files
        assert (tmp_path / "a2.jsonl").exists()
        flusher.stop()
    writer.close()  # its retry opens the file: the lines held in memory reach it
    second.close()
    assert load_transcript(tmp_path / "a1.jsonl").meta.nickname == "Ada"


async def test_want_soon_declines_while_the_flusher_waits_for_fsync_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session log asks with ``want_soon``: a line logged while a transcript's fsync is
    slow (a stalled disk) is written at once, not held until the fsync returns."""
    from subagents.runtime._logging import RuntimeLog

    release = threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        release.wait(30)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    flusher = TranscriptFlusher(helper=False)
    path = tmp_path / "log.jsonl"
    fd = os.open(tmp_path / "synced", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with RuntimeLog(path=path, env={}) as log, trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                await nursery.start(flusher.run)
                log.batch_with(flusher.want_soon)
                log.logger().info("held for the pass")
                assert not path.read_bytes()
                synced = trio.Event()

                async def sync() -> None:
                    await flusher.sync(fd)
                    synced.set()

                nursery.start_soon(sync)
                await trio.testing.wait_all_tasks_blocked()  # the fsync is in its thread
                assert path.read_bytes().count(b"\n") == 1  # the pass ended
                log.logger().info("while the disk is slow")
                assert path.read_bytes().count(b"\n") == 2  # at once
                release.set()
                await synced.wait()
                await trio.testing.wait_all_tasks_blocked()  # the flusher parks again
                log.logger().info("held again")
                assert path.read_bytes().count(b"\n") == 2
                flusher.stop()
            assert path.read_bytes().count(b"\n") == 3
    finally:
        release.set()
        os.close(fd)


def test_a_writer_that_fails_does_not_cost_the_others_their_flush() -> None:
    flushed: list[str] = []

    class Writer:
        def __init__(self, name: str, fails: bool = False) -> None:
            self.name, self.fails = name, fails

        def flush(self) -> None:
            flushed.append(self.name)
            if self.fails:
                raise RuntimeError(f"{self.name} failed")

    flusher = TranscriptFlusher(helper=False)
    flusher._running = True  # as run() sets it
    for writer in (Writer("first"), Writer("buggy", fails=True), Writer("after")):
        assert flusher.want(writer)
    with pytest.raises(RuntimeError, match="buggy failed"):
        flusher.flush()
    assert flushed == ["first", "buggy", "after"]


def test_a_stop_whose_file_making_fails_still_flushes_and_syncs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flushed: list[str] = []

    class Writer:
        def flush(self) -> None:
            flushed.append("flushed")

    flusher = TranscriptFlusher(helper=False)
    flusher._running = True
    assert flusher.want(Writer())

    def broken() -> None:
        raise RuntimeError("making files failed")

    ended: list[str] = []
    monkeypatch.setattr(TranscriptFlusher, "_open_now", lambda self: broken())
    monkeypatch.setattr(TranscriptFlusher, "_sync_now", lambda self: ended.append("synced"))
    with pytest.raises(RuntimeError, match="making files failed"):
        flusher.stop()
    assert flushed == ["flushed"]
    assert ended == ["synced"]
