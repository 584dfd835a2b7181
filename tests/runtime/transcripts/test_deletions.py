"""Deleted transcript files, noticed by the flusher's watch on their folder (issue 17).

With the flusher running, a writer's lines cost no ``fstat`` each: the flusher
watches the folder (inotify) and looks once a pass. These tests delete, move and
replace real files under a running flusher, and check that no line is lost that
the writer's own ``fstat`` after each line would have kept: lines written to a file
already deleted go back to memory and into the file made again at close.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.runtime import (
    Message,
    ModelRequest,
    Origin,
    Reply,
    RuntimeConfig,
    ScriptedProvider,
    load_transcript,
    open_runtime,
)
from subagents.runtime._exceptions import TranscriptWriteError
from subagents.runtime._transcripts import deletions
from subagents.runtime._transcripts import flusher as flusher_module
from subagents.runtime._transcripts.deletions import DeletionWatch, open_watch
from subagents.runtime._transcripts.flusher import TranscriptFlusher
from subagents.runtime._transcripts.records import MetaRecord
from subagents.runtime._transcripts.writer import TranscriptWriter

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or open_watch() is None, reason="inotify: Linux only"
)

META = MetaRecord(agent_id="a1", agent_type="Explore", nickname="Ada", depth=1, session_id="s1")


def say(index: int) -> Message:
    return Message.user(f"message {index}", origin=Origin.INPUT)


def texts(path: Path) -> list[str]:
    return [m.text for m in load_transcript(path).conversation()]


@asynccontextmanager
async def running() -> AsyncIterator[TranscriptFlusher]:
    """A flusher running in a nursery (its files made at once: no helper process)."""
    flusher = TranscriptFlusher(helper=False)
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        try:
            yield flusher
        finally:
            flusher.stop()


async def a_pass() -> None:
    """Let the flusher take its turn (it looks at the watched folders)."""
    await trio.testing.wait_all_tasks_blocked()


async def watched_writer(
    flusher: TranscriptFlusher, path: Path, reports: list[TranscriptWriteError]
) -> TranscriptWriter:
    writer = TranscriptWriter(path, META, flusher=flusher, on_report=reports.append)
    await flusher.opened(writer)  # its file made by the flusher
    await a_pass()
    return writer


@contextmanager
def counted_fstats() -> Iterator[list[str]]:
    """The files ``os.fstat`` is called on meanwhile (their paths when called)."""
    calls: list[str] = []
    real = os.fstat

    def counting(fd: int) -> os.stat_result:
        calls.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    os.fstat = counting  # type: ignore[assignment]
    try:
        yield calls
    finally:
        os.fstat = real


async def test_lines_of_a_watched_file_cost_no_fstat(tmp_path: Path) -> None:
    async with running() as flusher:
        writer = await watched_writer(flusher, tmp_path / "a1.jsonl", [])
        with counted_fstats() as calls:
            for index in range(20):
                writer.append_message(say(index))
            await a_pass()
        assert calls == []
        writer.close()
    assert texts(tmp_path / "a1.jsonl") == [f"message {i}" for i in range(20)]


async def test_lines_written_after_a_deletion_in_the_same_pass_are_kept(tmp_path: Path) -> None:
    # The deletion comes before the flusher looks: every line since its last look was
    # written to the deleted file, and goes back to memory, then to the file made again.
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_message(say(0))
        path.unlink()
        writer.append_message(say(1))
        writer.append_message(say(2))
        assert reports == []  # not noticed yet: no fstat a line
        await a_pass()
        assert [r.errno for r in reports] == [errno.ENOENT]
        assert writer.in_memory
        assert len(writer.buffered()) == 3
        writer.append_message(say(3))  # in memory, after them
        writer.close()  # the folder is there: the file is made again, its lines in it
    assert texts(path) == [f"message {i}" for i in range(4)]
    assert load_transcript(path).meta.nickname == "Ada"


async def test_a_deletion_between_lines_is_noticed_at_the_next_lines_look(
    tmp_path: Path,
) -> None:
    # The flusher sleeps while nothing is written: the next line wakes it, and is kept.
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_message(say(0))
        await a_pass()  # message 0 is safe: the file had its name when it was written
        path.unlink()
        await a_pass()
        writer.append_message(say(1))
        await a_pass()
        assert [r.errno for r in reports] == [errno.ENOENT]
        assert len(writer.buffered()) == 1
        writer.close()
    assert texts(path) == ["message 1"]


async def test_a_close_looks_at_the_lines_the_flusher_kept(tmp_path: Path) -> None:
    # Deleted, written to and closed in one pass: the close looks itself.
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        path.unlink()
        writer.append_message(say(0))
        writer.close()
        assert [r.errno for r in reports] == [errno.ENOENT]
    assert texts(path) == ["message 0"]


async def test_a_file_moved_away_goes_back_to_an_fstat_a_line(tmp_path: Path) -> None:
    # Moved out of the watched folder, the file can be deleted where no watch sees it:
    # its writer looks itself from the move on.
    path, elsewhere = tmp_path / "a1.jsonl", tmp_path / "other" / "moved.jsonl"
    elsewhere.parent.mkdir()
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_message(say(0))
        path.rename(elsewhere)
        await a_pass()
        assert reports == []  # still linked: nothing lost
        elsewhere.unlink()
        writer.append_message(say(1))  # its own fstat sees it gone
        assert [r.errno for r in reports] == [errno.ENOENT]
        writer.close()
    assert texts(path) == ["message 1"]


async def test_a_file_renamed_over_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_message(say(0))
        (tmp_path / "impostor").write_text("not a transcript\n")
        (tmp_path / "impostor").rename(path)  # our file loses its name
        writer.append_message(say(1))
        await a_pass()
        assert [r.errno for r in reports] == [errno.ENOENT]
        # Both: message 0 went to the file while it had its name, but the name is gone.
        assert len(writer.buffered()) == 2
        writer.close()  # appended to what the path names now, as any retry is
    text = path.read_text()
    assert text.startswith("not a transcript\n")
    assert '"message 0"' in text
    assert '"message 1"' in text


async def test_a_folder_removed_with_its_files_is_noticed(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        first = await watched_writer(flusher, folder / "a1.jsonl", reports)
        second = await watched_writer(flusher, folder / "a2.jsonl", reports)
        first.append_message(say(0))
        shutil.rmtree(folder)
        second.append_message(say(1))
        await a_pass()
        assert sorted(r.errno for r in reports) == [errno.ENOENT, errno.ENOENT]
        assert len(first.buffered()) == 1  # message 0 (the meta line was looked at before)
        assert len(second.buffered()) == 1  # message 1
        first.close()  # the folder is not made again
        second.close()
    assert not folder.exists()


async def test_files_in_a_new_folder_are_watched_too(tmp_path: Path) -> None:
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        for index in range(3):
            folder = tmp_path / f"s{index}"
            writer = await watched_writer(flusher, folder / "a1.jsonl", reports)
            with counted_fstats() as calls:
                writer.append_message(say(0))
            assert calls == []
            (folder / "a1.jsonl").unlink()
            writer.append_message(say(1))
            await a_pass()
            assert len(reports) == index + 1
            writer.close()


class Overflowing:
    """An inotify whose queue overflowed (16,384 events unread)."""

    closed = False

    def add_watch(self, path: str, mask: int) -> int:
        return 1

    def read(self, timeout: int) -> list[tuple[int, int, int, str]]:
        return [(-1, 0x4000, 0, "")]

    def close(self) -> None:
        self.closed = True


async def test_after_an_overflow_every_writer_looks_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inotify = Overflowing()
    monkeypatch.setattr(flusher_module, "open_watch", lambda: DeletionWatch(inotify))
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)  # the overflow comes at the look
        assert inotify.closed
        path.unlink()
        writer.append_message(say(0))  # its own fstat sees it gone
        assert [r.errno for r in reports] == [errno.ENOENT]
        writer.close()
    assert texts(path) == ["message 0"]


async def test_without_inotify_every_line_is_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flusher_module, "open_watch", lambda: None)
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        with counted_fstats() as calls:
            writer.append_message(say(0))
        assert len(calls) == 1
        path.unlink()
        writer.append_message(say(1))
        assert [r.errno for r in reports] == [errno.ENOENT]
        writer.close()
    assert texts(path) == ["message 1"]


async def test_a_stopped_flusher_leaves_each_writer_to_look_itself(tmp_path: Path) -> None:
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
    path.unlink()
    writer.append_message(say(0))
    assert [r.errno for r in reports] == [errno.ENOENT]
    writer.close()
    assert texts(path) == ["message 0"]


async def test_the_stop_policy_is_not_watched(tmp_path: Path) -> None:
    # Under "stop" the line whose file is gone raises at once.
    path = tmp_path / "a1.jsonl"
    async with running() as flusher:
        writer = TranscriptWriter(path, META, flusher=flusher, on_disk_error="stop")
        path.unlink()
        with pytest.raises(TranscriptWriteError) as caught:
            writer.append_message(say(0))
        assert caught.value.errno == errno.ENOENT
        writer.close()


def test_the_watch_names_what_happened(tmp_path: Path) -> None:
    watch = open_watch()
    assert watch is not None
    try:
        folder = tmp_path / "s"
        folder.mkdir()
        (folder / "a").write_text("")
        (folder / "b").write_text("")
        assert watch.watch(str(folder)) is None  # new
        assert watch.watch(str(folder)) is True  # known
        assert watch.changed() == frozenset()
        (folder / "a").unlink()
        (folder / "b").rename(folder / "c")
        (folder / "d").write_text("")  # a new file is not an event it asks for
        assert watch.changed() == {(str(folder), "a"), (str(folder), "b"), (str(folder), "c")}
        folder.rename(tmp_path / "t")
        assert watch.changed() == {(str(folder), "")}
        assert watch.watch(str(tmp_path / "t")) is None  # watched again, as new
    finally:
        watch.close()
    assert watch.closed
    assert watch.watch(str(tmp_path)) is False
    assert watch.changed() == frozenset()


def test_the_watch_is_bounded(tmp_path: Path) -> None:
    watch = open_watch()
    assert watch is not None
    try:
        for index in range(deletions.MAX_FOLDERS):
            (tmp_path / str(index)).mkdir()
            assert watch.watch(str(tmp_path / str(index))) is None
        (tmp_path / "more").mkdir()
        assert watch.watch(str(tmp_path / "more")) is False
        assert watch.watch(str(tmp_path / "missing")) is False  # no such folder
    finally:
        watch.close()


async def test_a_transcript_deleted_mid_run_is_written_again_by_open_runtime(
    tmp_path: Path,
) -> None:
    # The path users take: the runtime's flusher watches the session folder, and a
    # transcript deleted between two turns gets the lines after it back at the close.
    project, home, state = testing.echo_worker_project(tmp_path)
    paths: list[Path] = []
    inner = testing.tool_loop("Echo", {"text": "ping"}, turns=3, final="done", complete=True)

    def deleting(request: ModelRequest) -> Reply:
        if request.turn == 2:
            paths[0].unlink()
        return inner(request)

    config = RuntimeConfig(state_dir=state)
    async with open_runtime(
        config,
        cwd=project,
        home=home,
        env={},
        provider=ScriptedProvider(deleting),
        tools=[testing.EchoTool()],
    ) as rt:
        with counted_fstats() as calls:
            handle = await rt.spawn(testing.ECHO_WORKER, "Ping three times.")
            path = rt.transcript_path(handle.agent_id)
            assert path is not None
            paths.append(path)
            await rt.wait([handle.agent_id], timeout=30)
        # Two looks at the transcript (its folder's first watch, the deletion noticed),
        # not one a line (11 lines, 3 of them after the deletion); its file, made by the
        # helper process, costs none.
        looks = [name for name in calls if os.path.basename(name).startswith(path.name)]
        assert len(looks) == 2, looks
    assert path.exists()
    transcript = load_transcript(path)
    assert transcript.results[-1].status == "completed"
    # Every line from the deletion on is kept: turns 2 and 3 (a call and its result each),
    # and those before it since the flusher's last look (written to the deleted file).
    seqs = [m.seq for m in transcript.messages]
    assert seqs == list(range(seqs[0], 9))
    assert seqs[0] <= 5
    log = state / "logs" / f"{rt.session_id}.jsonl"
    assert any(
        json.loads(line)["event"] == "transcript problem" for line in log.read_text().splitlines()
    )
