"""Results ``fsync``-ed by a helper process (issue 17).

Made in worker threads, the ``fsync`` calls cost more CPU than the turn they
protect, in hand-overs of the GIL. These tests hold the helper to what the
threads guaranteed: the file is synced (in another process, never in ours), an
error comes back as the caller's, a helper that dies is replaced by the threads
without losing a sync, and the helper never outlives its flusher or its process.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    Message,
    Origin,
    ScriptedProvider,
    TranscriptsConfig,
    load_transcript,
)
from subagents.runtime._exceptions import TranscriptWriteError
from subagents.runtime._transcripts import file as file_module
from subagents.runtime._transcripts.file import open_append
from subagents.runtime._transcripts.flusher import TranscriptFlusher
from subagents.runtime._transcripts.lock import try_lock
from subagents.runtime._transcripts.records import MetaRecord
from subagents.runtime._transcripts.syncer import (
    MAX_FDS_PER_MESSAGE,
    SyncHelper,
    helper_available,
)
from subagents.runtime._transcripts.writer import TranscriptWriter
from tests.runtime.transcripts.helpers import hold_new_files
from tests.runtime.world import World
from tests.steps import steps_of

META = MetaRecord(agent_id="a", agent_type="t", nickname="n", depth=1, session_id="s")

pytestmark = pytest.mark.skipif(not helper_available(), reason="no fsync helper on this platform")


@pytest.fixture
def fsync_in_this_process(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every ``os.fsync`` made in this process, recorded (and still made)."""
    calls: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return calls


async def _gone(pid: int) -> None:
    """Wait (at most 10 s) until process ``pid`` has ended, without polling."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with trio.fail_after(10):
            await trio.lowlevel.wait_readable(pidfd)
    finally:
        os.close(pidfd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_helper_syncs_files_in_its_own_process(
    tmp_path: Path, fsync_in_this_process: list[int]
) -> None:
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(3)]
    for file in files:
        file.write(b'{"line": 1}\n')
    helper = await SyncHelper.start()
    try:
        assert helper.pid != os.getpid()
        assert await helper.fsync_all([f.fileno() for f in files]) == [0, 0, 0]
        assert helper.synced == 3
    finally:
        await helper.aclose()
        for file in files:
            file.close()
    assert fsync_in_this_process == []  # made by the helper, not here
    assert not _alive(helper.pid)  # ended and reaped


async def test_an_fsync_that_fails_comes_back_as_its_errno(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()  # a pipe cannot be fsync-ed: EINVAL
    file = open_append(tmp_path / "a.jsonl")
    helper = await SyncHelper.start()
    try:
        assert await helper.fsync_all([write_end, file.fileno()]) == [errno.EINVAL, 0]
    finally:
        await helper.aclose()
        os.close(read_end)
        os.close(write_end)
        file.close()


async def test_a_descriptor_that_is_not_open_is_refused_and_the_helper_goes_on(
    tmp_path: Path,
) -> None:
    file = open_append(tmp_path / "a.jsonl")
    helper = await SyncHelper.start()
    try:
        with pytest.raises(OSError, match="Bad file descriptor") as caught:
            await helper.fsync_all([987_654])
        assert caught.value.errno == errno.EBADF
        assert await helper.fsync_all([file.fileno()]) == [0]
    finally:
        await helper.aclose()
        file.close()


async def test_a_batch_larger_than_one_message_is_synced_whole(tmp_path: Path) -> None:
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(260)]  # two messages
    helper = await SyncHelper.start()
    try:
        assert await helper.fsync_all([f.fileno() for f in files]) == [0] * 260
    finally:
        await helper.aclose()
        for file in files:
            file.close()


async def test_the_helper_runs_nothing_from_the_folder_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cloned repository is data: a ``socket.py`` in the current folder, or on a
    ``PYTHONPATH`` it sets, is not what the helper imports."""
    planted = tmp_path / "repo"
    planted.mkdir()
    marker = tmp_path / "ran"
    for name in ("socket.py", "struct.py", "signal.py"):
        (planted / name).write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(planted)
    monkeypatch.setenv("PYTHONPATH", str(planted))
    monkeypatch.setenv("PYTHONSTARTUP", str(planted / "socket.py"))
    file = open_append(tmp_path / "a.jsonl")
    helper = await SyncHelper.start()
    try:
        assert await helper.fsync_all([file.fileno()]) == [0]
    finally:
        await helper.aclose()
        file.close()
    assert not marker.exists()


async def test_a_request_waiting_when_the_helper_is_stopped_gets_an_oserror(
    tmp_path: Path,
) -> None:
    """The flusher stops a helper that failed one request while another may be waiting
    for its answer (a batch of new files refused under the open-file limit, and a batch
    of fsync calls under way): that one is told the helper cannot answer (``OSError``,
    which the flusher falls back from), not Trio's ``ClosedResourceError``, which had
    ended the runtime."""
    file = open_append(tmp_path / "a.jsonl")
    helper = await SyncHelper.start()
    errors: list[BaseException] = []

    async def request(call: Callable[[], Awaitable[object]]) -> None:
        try:
            await call()
        except Exception as exc:
            errors.append(exc)

    os.kill(helper.pid, signal.SIGSTOP)  # it cannot answer: the requests wait
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(request, lambda: helper.fsync_all([file.fileno()]))
            nursery.start_soon(request, lambda: helper.open_all([os.fsencode(tmp_path / "b")]))
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(helper.aclose)
            await trio.testing.wait_all_tasks_blocked()
            os.kill(helper.pid, signal.SIGCONT)  # it reads the end of its sockets, and ends
    finally:
        file.close()
    assert len(errors) == 2
    assert all(isinstance(error, OSError) and error.errno == errno.EPIPE for error in errors)
    assert not _alive(helper.pid)


_OWNER = textwrap.dedent(
    """
    import sys, trio
    from subagents.runtime._transcripts.syncer import SyncHelper

    async def main():
        helper = await SyncHelper.start()
        print(helper.pid, flush=True)
        await trio.sleep_forever()

    trio.run(main)
    """
)


async def test_the_helper_ends_when_its_owner_is_killed() -> None:
    """``kill -9`` leaves no helper behind: its socket closes and it ends."""
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
    )
    try:
        assert owner.stdout is not None
        with trio.fail_after(30):
            line = await trio.to_thread.run_sync(owner.stdout.readline)
        pid = int(line)
        assert _alive(pid)
    finally:
        owner.kill()
        owner.wait()
    await _gone(pid)


async def test_a_flusher_hands_its_results_to_the_helper_once_it_is_up(
    tmp_path: Path, fsync_in_this_process: list[int]
) -> None:
    flusher = TranscriptFlusher()
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(3)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        await flusher.sync(files[0].fileno())  # the first: worker threads, helper starting
        assert await flusher.helper_up()
        pid = flusher.helper_pid
        assert pid is not None
        async with trio.open_nursery() as waiters:
            for file in files[1:]:
                waiters.start_soon(flusher.sync, file.fileno())
        flusher.stop()
    assert fsync_in_this_process == [files[0].fileno()]
    assert flusher.synced == 3
    assert flusher.helper_pid is None
    assert not _alive(pid)  # stopped with its flusher
    for file in files:
        file.close()


async def test_a_helper_that_dies_is_replaced_by_threads_and_no_sync_is_lost(
    tmp_path: Path, fsync_in_this_process: list[int]
) -> None:
    flusher = TranscriptFlusher()
    first, second = open_append(tmp_path / "a.jsonl"), open_append(tmp_path / "b.jsonl")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        await flusher.sync(first.fileno())
        assert await flusher.helper_up()
        pid = flusher.helper_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await _gone(pid)
        await flusher.sync(second.fileno())  # the helper is gone: the threads make it
        assert flusher.helper_pid is None
        flusher.stop()
    assert fsync_in_this_process == [first.fileno(), second.fileno()]
    first.close()
    second.close()


async def test_a_flusher_told_not_to_use_a_helper_never_starts_one(tmp_path: Path) -> None:
    flusher = TranscriptFlusher(helper=False)
    file = open_append(tmp_path / "a.jsonl")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flusher.run)
        await trio.testing.wait_all_tasks_blocked()
        for _ in range(2):
            await flusher.sync(file.fileno())
        # New files go to a worker thread at once: no wait for a helper that never comes.
        writer = TranscriptWriter(tmp_path / "b.jsonl", META, flusher=flusher)
        assert writer.opening
        with trio.fail_after(10):
            await flusher.opened(writer)
        assert not writer.opening
        assert not await flusher.helper_up()
        flusher.stop()
    writer.close()
    assert flusher.synced == 2
    assert flusher.opened_files == 1
    file.close()


async def test_in_a_runtime_results_are_synced_by_the_helper_before_the_status(
    tmp_path: Path, fsync_in_this_process: list[int]
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with world.open(provider) as rt:
        flusher = rt.services.flusher
        first = await rt.spawn("general-purpose", "work")
        await rt.wait([first.agent_id], timeout=30)
        assert await flusher.helper_up()
        before = list(fsync_in_this_process)
        handles = [await rt.spawn("general-purpose", "work") for _ in range(3)]
        waited = await rt.wait([h.agent_id for h in handles], timeout=30, mode="all")
        assert all(isinstance(s, Completed) for s in waited.statuses.values())
        for handle in handles:
            path = rt.services.records[handle.agent_id].transcript_file
            assert path is not None
            assert load_transcript(path).runs == 1
        assert fsync_in_this_process == before  # none made in this process
        pid = flusher.helper_pid
        assert pid is not None
    assert not _alive(pid)  # the runtime's close ended it


# -- new files made by the helper ----------------------------------------------------


async def test_the_helper_makes_new_files_and_hands_their_descriptors_over(
    tmp_path: Path,
) -> None:
    paths = [tmp_path / f"agent-{i}.jsonl" for i in range(260)]  # more than one message
    (tmp_path / "old.jsonl").write_bytes(b"kept\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    helper = await SyncHelper.start()
    try:
        fds = await helper.open_all(
            [os.fsencode(p) for p in [*paths, tmp_path / "old.jsonl", tmp_path / "empty.jsonl"]]
        )
    finally:
        await helper.aclose()
    assert helper.made == 261  # descriptors handed over
    # A file with lines is left to its writer (a torn line to end), as it was.
    assert fds[-2] == -errno.EEXIST
    assert (tmp_path / "old.jsonl").read_bytes() == b"kept\n"
    for path, fd in zip([*paths, tmp_path / "empty.jsonl"], fds[:-2] + fds[-1:], strict=True):
        stat = os.fstat(fd)
        assert os.path.samestat(stat, os.stat(path))  # ours now: the helper has ended
        assert try_lock(fd)  # not locked: the writer locks it (a claim may make its own)
        if path in paths:
            assert stat.st_mode & 0o777 == 0o600  # made private to its owner
        os.write(fd, b"line\n")  # opened for appending
        os.close(fd)
    assert paths[0].read_bytes() == b"line\n"


async def test_a_file_the_helper_cannot_make_comes_back_as_its_errno(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    wanted = [tmp_path / "missing" / "a.jsonl", tmp_path / "a-file" / "b.jsonl", tmp_path / "c"]
    helper = await SyncHelper.start()
    try:
        made = await helper.open_all([os.fsencode(p) for p in wanted])
        with pytest.raises(OSError, match="not a path"):
            await helper.open_all([b"bad\0path"])
        assert (await helper.open_all([os.fsencode(tmp_path / "d")]))[0] >= 0  # goes on
    finally:
        await helper.aclose()
    assert made[:2] == [-errno.ENOENT, -errno.ENOTDIR]
    assert made[2] >= 0
    os.close(made[2])


async def test_both_kinds_of_request_run_side_by_side_each_answered_on_its_own(
    tmp_path: Path,
) -> None:
    """A batch of fsync calls and a batch of new files at once (the flusher's two tasks):
    each kind has its own socket and thread in the helper, and gets its own answers."""
    files = [open_append(tmp_path / f"s{i}.jsonl") for i in range(200)]
    synced: list[list[int]] = []

    async def sync_all() -> None:
        synced.append(await helper.fsync_all([f.fileno() for f in files]))

    helper = await SyncHelper.start()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sync_all)
            made = await helper.open_all([os.fsencode(tmp_path / f"n{i}.jsonl") for i in range(3)])
        assert synced == [[0] * 200]
        assert all(fd >= 0 for fd in made)
        for fd in made:
            os.close(fd)
    finally:
        await helper.aclose()
        for file in files:
            file.close()


async def test_a_batch_with_a_path_the_helper_cannot_take_makes_nothing(tmp_path: Path) -> None:
    """Refused before anything is sent: no file of the batch is made, and no descriptor
    of an earlier message is left open here (the first 250 used to be)."""
    good = [os.fsencode(tmp_path / f"a{i}.jsonl") for i in range(260)]
    helper = await SyncHelper.start()
    try:
        with pytest.raises(OSError, match="not a path"):
            await helper.open_all([*good, b"bad\0path"])
        assert helper.made == 0
    finally:
        await helper.aclose()
    assert list(tmp_path.iterdir()) == []


async def test_a_flusher_has_the_helper_make_new_files_once_it_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_this_process: list[str] = []
    real = file_module._private

    def recording(path: str, flags: int) -> int:
        in_this_process.append(path)
        return real(path, flags)

    monkeypatch.setattr(file_module, "_private", recording)
    flusher = TranscriptFlusher()
    folder = tmp_path / "sessions" / "s1" / "subagents"  # made by the Trio thread, once
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        first = TranscriptWriter(folder / "a0.jsonl", META, flusher=flusher)
        await flusher.opened(first)  # made once the helper started (not by a worker thread)
        assert await flusher.helper_up()
        writers = [TranscriptWriter(folder / f"a{i}.jsonl", META, flusher=flusher) for i in (1, 2)]
        for writer in writers:
            assert writer.opening
            writer.append_message(Message.user("task", origin=Origin.TASK))
        for writer in writers:
            await flusher.opened(writer)
            assert not writer.opening
            assert not writer.in_memory
        made_here = list(in_this_process)
        # Locked by its writer, as any transcript: a second writer is refused.
        second = TranscriptWriter(folder / "a1.jsonl", META)
        assert second.in_memory
        second.close()
        flusher.stop()
    for writer in [first, *writers]:
        writer.close()
    assert made_here == []  # all three by the helper
    assert flusher.opened_files == 3
    assert [m.message.text for m in load_transcript(folder / "a2.jsonl").messages] == ["task"]


async def test_a_writer_that_needs_its_file_while_the_helper_makes_it_makes_it_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close while the helper is making the file: the writer opens it itself, and the
    helper's descriptor, when it comes, is closed (never two files, never a lock fight)."""
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        first = TranscriptWriter(tmp_path / "a0.jsonl", META, flusher=flusher)
        await flusher.opened(first)
        assert await flusher.helper_up()
        asked, release = hold_new_files(monkeypatch)
        writer = TranscriptWriter(tmp_path / "a1.jsonl", META, flusher=flusher)
        writer.append_message(Message.user("task", origin=Origin.TASK))
        await asked.wait()
        writer.close()  # made here, at once, with its lines
        assert [m.message.text for m in load_transcript(tmp_path / "a1.jsonl").messages] == ["task"]
        release.set()
        await trio.testing.wait_all_tasks_blocked()
        # the helper's descriptor was closed: the file's lock is free once the writer closed
        again = TranscriptWriter(tmp_path / "a1.jsonl", META)
        assert not again.in_memory
        again.close()
        flusher.stop()
    first.close()
    assert flusher.opened_files == 1  # the first only


async def _start_helper(flusher: TranscriptFlusher, folder: Path) -> None:
    """Have the running ``flusher`` start its helper process, by a first file in ``folder``."""
    first = TranscriptWriter(folder / "a0.jsonl", META, flusher=flusher)
    await flusher.opened(first)
    first.close()
    assert await flusher.helper_up()


async def test_a_file_its_writer_made_itself_is_not_made_again_when_the_helper_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer closed (its file made at once) while the helper was at it, and the
    helper's answer is an error (the folder was removed meanwhile): the flusher leaves
    it there, never a second file in a worker thread (a folder made again, a file
    opened and left open)."""
    folder = tmp_path / "session"
    flusher = TranscriptFlusher()
    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        await _start_helper(flusher, folder)
        asked, release = hold_new_files(monkeypatch)
        writer = TranscriptWriter(folder / "a1.jsonl", META, flusher=flusher)
        await asked.wait()
        writer.close()  # made here, at once
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
        release.set()  # the helper answers ENOENT for it
        await trio.testing.wait_all_tasks_blocked()
        flusher.stop()
    assert not folder.exists()  # not made again
    assert flusher.opened_files == 1  # the first only


async def test_a_writer_makes_its_own_file_while_the_helpers_is_on_its_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper has made the file and its descriptor is on its way back when the writer
    needs the file at once (its close): the writer makes and locks the same file in this
    thread. The helper's descriptor must not hold the lock (a lock the helper took would
    refuse the writer for 0.25 s and send its lines to memory, as the soak found), and
    is closed when it comes."""
    folder = tmp_path / "session"
    flusher = TranscriptFlusher()
    reports: list[TranscriptWriteError] = []
    made, release = trio.Event(), trio.Event()
    real = SyncHelper.open_all

    async def answered_late(self: SyncHelper, paths: list[bytes]) -> list[int]:
        fds = await real(self, paths)
        made.set()
        await release.wait()
        return fds

    async with trio.open_nursery() as nursery:
        await nursery.start(flusher.run)
        await _start_helper(flusher, folder)
        monkeypatch.setattr(SyncHelper, "open_all", answered_late)
        writer = TranscriptWriter(
            folder / "a1.jsonl", META, flusher=flusher, on_report=reports.append
        )
        writer.append_message(Message.user("hello", origin=Origin.INPUT))
        await made.wait()
        writer.close()  # made here, at once, and locked
        release.set()
        await trio.testing.wait_all_tasks_blocked()
        flusher.stop()
    assert reports == []
    assert [m.text for m in load_transcript(folder / "a1.jsonl").conversation()] == ["hello"]


# -- one wake a round trip ------------------------------------------------------------


async def test_a_round_trip_to_the_helper_wakes_its_caller_once(tmp_path: Path) -> None:
    """Issue 17, twelfth round: a request goes out without a yield and its caller sleeps
    once, until the answer comes (the lock's, the send's and the receive's checkpoints
    made three passes of every round trip: a close waited for three, a result too)."""
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(3)]
    helper = await SyncHelper.start()
    try:
        fds = [f.fileno() for f in files]
        assert await steps_of(lambda: helper.fsync_all(fds)) == 1
        many = (fds * MAX_FDS_PER_MESSAGE)[: 2 * MAX_FDS_PER_MESSAGE + 1]  # three messages
        assert await steps_of(lambda: helper.fsync_all(many)) == 3
        path = os.fsencode(tmp_path / "new.jsonl")
        made: list[int] = []

        async def make() -> None:
            made.extend(await helper.open_all([path]))

        assert await steps_of(make) == 1
        assert made[0] >= 0
        os.close(made[0])
    finally:
        await helper.aclose()
        for file in files:
            file.close()


async def test_requests_wait_their_turn_on_one_socket(tmp_path: Path) -> None:
    """Two batches of fsync calls at once share the socket one after the other: each
    gets its own answer (the second waits for the lock the first holds)."""
    files = [open_append(tmp_path / f"a{i}.jsonl") for i in range(4)]
    read_end, write_end = os.pipe()
    answers: dict[str, list[int]] = {}
    helper = await SyncHelper.start()
    try:

        async def sync(name: str, fds: list[int]) -> None:
            answers[name] = await helper.fsync_all(fds)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sync, "files", [f.fileno() for f in files])
            nursery.start_soon(sync, "pipe", [write_end, files[0].fileno()])
        assert answers == {"files": [0, 0, 0, 0], "pipe": [errno.EINVAL, 0]}
    finally:
        await helper.aclose()
        os.close(read_end)
        os.close(write_end)
        for file in files:
            file.close()


async def test_closing_one_agent_waits_once_for_its_closed_line(tmp_path: Path) -> None:
    """A close of one finished agent: with transcripts, its closing task waits once more
    than without (its ``closed`` line's ``fsync``), and every task together steps three
    times more (that wait, and the flusher's two: the request, the answer); the close
    starts no task of its own for one agent."""
    provider = ScriptedProvider(lambda request: testing.say("done"))
    steps: dict[bool, list[int]] = {}
    every: dict[bool, int] = {}
    for transcripts in (False, True):
        world = World(
            tmp_path / str(transcripts),
            extra={"transcripts": TranscriptsConfig(enabled=transcripts)},
        )
        async with world.open(provider) as rt:
            handles = [await rt.spawn("general-purpose", "work") for _ in range(3)]
            await rt.wait([h.agent_id for h in handles], timeout=30, mode="all")
            paths = [rt.services.records[h.agent_id].transcript_file for h in handles]
            if transcripts:
                assert await rt.services.flusher.helper_up()
            steps[transcripts] = [
                await steps_of(functools.partial(rt.close, h.agent_id)) for h in handles[:2]
            ]
            every[transcripts] = await steps_of(
                functools.partial(rt.close, handles[2].agent_id), every_task=True
            )
        if transcripts:
            for path in paths:
                assert path is not None
                assert load_transcript(path).closed is not None
    assert steps[True] == [s + 1 for s in steps[False]]
    assert every[True] == every[False] + 3, every
