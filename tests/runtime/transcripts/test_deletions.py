"""Deleted transcript files, noticed by the flusher's watch on their folder (issue 17).

With the flusher running, a writer's lines cost no ``fstat`` each: the flusher
watches the folder (inotify) and looks once a pass, and keeps each line for two
looks. These tests delete, move and replace real files under a running flusher,
and check that no line is lost that the writer's own ``fstat`` after each line
would have kept: lines written to a file already deleted go back to memory and
into the file made again at close (with the lines before them that it still
kept: they were in the deleted file too).
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
    AgentResult,
    Message,
    ModelRequest,
    Origin,
    Reply,
    RuntimeConfig,
    ScriptedProvider,
    TerminateReason,
    load_transcript,
    open_runtime,
)
from subagents.runtime._exceptions import TranscriptWriteError
from subagents.runtime._transcripts import deletions
from subagents.runtime._transcripts import flusher as flusher_module
from subagents.runtime._transcripts.deletions import DeletionWatch, open_watch
from subagents.runtime._transcripts.flusher import TranscriptFlusher
from subagents.runtime._transcripts.records import MetaRecord
from subagents.runtime._transcripts.syncer import SyncHelper
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
        assert len(writer.buffered()) == 4  # the meta line (kept for two looks) and 3
        writer.append_message(say(3))  # in memory, after them
        writer.close()  # the folder is there: the file is made again, its lines in it
    assert texts(path) == [f"message {i}" for i in range(4)]
    assert load_transcript(path).meta.nickname == "Ada"
    assert path.read_text().count('"record":"meta"') == 1
    assert writer.statistics().lines_written == 5


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
        # message 0 too: written before the deletion, it was in the deleted file, and
        # the flusher kept it (one look ago).
        assert len(writer.buffered()) == 2
        writer.close()
    assert texts(path) == ["message 0", "message 1"]


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
        # The meta line and both messages: in the file while it had its name, but the
        # name is gone.
        assert len(writer.buffered()) == 3
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
        assert len(first.buffered()) == 1  # message 0 (its meta line two looks ago)
        assert len(second.buffered()) == 2  # its meta line (one look ago) and message 1
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
        assert watch.watch(str(folder)) is True  # new
        assert watch.watch(str(folder)) is True  # known
        (tmp_path / "link").symlink_to(folder)
        assert watch.watch(str(tmp_path / "link")) is False  # one folder, one name
        assert watch.changed() == frozenset()
        (folder / "a").unlink()
        (folder / "b").rename(folder / "c")
        (folder / "d").write_text("")  # a new file is not an event it asks for
        assert watch.changed() == {(str(folder), "a"), (str(folder), "b"), (str(folder), "c")}
        folder.rename(tmp_path / "t")
        assert watch.changed() == {(str(folder), "")}
        assert watch.watch(str(tmp_path / "t")) is True  # watched again, under its name
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
            assert watch.watch(str(tmp_path / str(index))) is True
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


async def test_a_file_deleted_on_its_way_from_the_helper_is_noticed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its folder already watched, the file is deleted after the helper made it and
    # before its writer takes it; the event is read (by a look another writer's line
    # wakes) before the writer is watched. The writer must not trust the watch then.
    folder = tmp_path / "session"
    reports: list[TranscriptWriteError] = []
    flusher = TranscriptFlusher()
    real = SyncHelper.open_all

    async def deleted_on_the_way(self: SyncHelper, paths: list[bytes]) -> list[int]:
        fds = await real(self, paths)
        for path in paths:
            os.unlink(path)
        first.append_message(say(9))  # wakes the flusher: it looks, and reads the event
        await a_pass()
        return fds

    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        first = TranscriptWriter(folder / "a0.jsonl", META, flusher=flusher)
        await flusher.opened(first)
        await a_pass()
        assert await flusher.helper_up()
        monkeypatch.setattr(SyncHelper, "open_all", deleted_on_the_way)
        writer = TranscriptWriter(
            folder / "a1.jsonl", META, flusher=flusher, on_report=reports.append
        )
        writer.append_message(say(0))
        await flusher.opened(writer)
        writer.append_message(say(1))
        await a_pass()
        assert [r.errno for r in reports] == [errno.ENOENT]
        writer.close()
        first.close()
        flusher.stop()
    assert texts(folder / "a1.jsonl") == ["message 0", "message 1"]


async def test_a_folder_renamed_with_its_parent_and_made_again_is_watched_anew(
    tmp_path: Path,
) -> None:
    # ``state/s`` is watched; ``state`` is renamed (no event reaches the watch of ``s``),
    # and ``state/s`` made again: a file there must not be taken for one the old watch
    # sees.
    folder = tmp_path / "state" / "s"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        first = await watched_writer(flusher, folder / "a0.jsonl", reports)
        (tmp_path / "state").rename(tmp_path / "state.old")
        second = await watched_writer(flusher, folder / "a1.jsonl", reports)
        second.append_message(say(0))
        await a_pass()
        (folder / "a1.jsonl").unlink()
        second.append_message(say(1))
        await a_pass()
        assert [r.errno for r in reports] == [errno.ENOENT]
        second.close()
        first.close()
    assert texts(folder / "a1.jsonl") == ["message 0", "message 1"]
    assert (tmp_path / "state.old" / "s" / "a0.jsonl").exists()


async def test_a_folder_reached_through_a_link_is_watched_under_one_name(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (tmp_path / "link").symlink_to(folder)
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        first = await watched_writer(flusher, folder / "a0.jsonl", reports)
        second = await watched_writer(flusher, tmp_path / "link" / "a1.jsonl", reports)
        with counted_fstats() as calls:
            second.append_message(say(0))
        assert len(calls) == 1  # not watched: its own look after each line
        (folder / "a1.jsonl").unlink()
        second.append_message(say(1))
        assert [r.errno for r in reports] == [errno.ENOENT]
        second.close()
        first.close()
    assert texts(folder / "a1.jsonl") == ["message 1"]


class Late:
    """A real inotify whose events reach the flusher one look late: an unlink queues its
    event a moment after the file loses its name, and a look may come in between."""

    def __init__(self) -> None:
        from inotify_simple import INotify

        self.real = INotify(nonblocking=True)
        self.waiting: list[object] = []

    def add_watch(self, path: str, mask: int) -> int:
        return int(self.real.add_watch(path, mask))

    def rm_watch(self, wd: int) -> None:
        self.real.rm_watch(wd)

    def read(self, timeout: int) -> list[object]:
        ready, self.waiting = self.waiting, list(self.real.read(timeout=0))
        return ready

    def close(self) -> None:
        self.real.close()


async def test_a_line_is_kept_for_two_looks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flusher_module, "open_watch", lambda: DeletionWatch(Late()))
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_message(say(0))
        await a_pass()
        path.unlink()
        writer.append_message(say(1))  # to the deleted file
        await a_pass()  # a look that does not see the event yet
        assert reports == []
        writer.append_message(say(2))
        await a_pass()  # the event: message 1, one look old, is still kept
        assert [r.errno for r in reports] == [errno.ENOENT]
        writer.close()
    assert texts(path)[-2:] == ["message 1", "message 2"]


async def test_a_result_waiting_for_its_fsync_keeps_its_descriptor(tmp_path: Path) -> None:
    # The look finds the file gone while the result's fsync waits for its descriptor:
    # the descriptor stays open until the writer closes, so the fsync is of that file.
    path = tmp_path / "a1.jsonl"
    reports: list[TranscriptWriteError] = []
    async with running() as flusher:
        writer = await watched_writer(flusher, path, reports)
        writer.append_result(
            AgentResult(terminate_reason=TerminateReason.GOAL, text="done"), sync=False
        )
        fd = writer.unsynced()
        assert fd is not None
        path.unlink()
        await a_pass()  # the look: gone
        assert [r.errno for r in reports] == [errno.ENOENT]
        assert os.fstat(fd).st_nlink == 0  # still open: the deleted file
        await flusher.sync(fd)
        writer.close()
    assert load_transcript(path).results[-1].status == "completed"
