"""Reliability of transcripts on a failing disk, end to end through ``open_runtime``.

Agents run while the state directory cannot be created, is not writable, fills
up, or is deleted mid-run, under both ``transcripts.on_disk_error`` policies:

- ``memory``: every agent finishes with its result intact; the problem is
  reported (an error line ``transcript problem`` on the log) exactly once per
  agent it hit; what was written before the fault loads back unchanged, lines
  held in memory reach the file at close when the disk has room again, and an
  agent is resumed from what is on disk;
- ``stop``: an agent whose transcript cannot be written stops (a spawn is
  refused with :class:`~subagents.actors.AgentStartFailed`, a running agent ends
  Errored with the disk error in its result) while its siblings finish with
  their transcripts intact, and a later runtime resumes it from the lines
  written before the fault.

Running as root makes ``chmod`` ineffective, so faults are injected as in
``tests/runtime/transcripts/test_writer_faults.py`` (the writer's unit tests):
through the writer's ``opener`` (its default is swapped for a :class:`Disk`
whose files refuse writes once they hold ``quota`` lines, or refuse to open).
A state path that is a plain file, and ``shutil.rmtree`` of the real
directory, need no injection.
"""

from __future__ import annotations

import collections
import errno
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import AgentStartFailed, Completed, Errored, Running
from subagents.runtime import (
    LoggingConfig,
    ScriptedProvider,
    TerminateReason,
    TranscriptFile,
    TranscriptsConfig,
    TranscriptWriter,
    load_transcript,
    open_append,
)
from tests.runtime.helpers import SlowTool
from tests.runtime.world import World

#: Lines of a short agent's transcript: meta, task, tool call, tool result, answer, result.
SHORT_LINES = 6
#: A file may hold this many lines before the disk is "full" for it.
QUOTA = 7
#: Messages of the long agent on disk when its quota is reached (the meta line is the 7th).
ON_DISK = QUOTA - 1
_PROBLEM = re.compile(r"\[(?P<nickname>[^\]]+) d\d+\] transcript problem")


class Disk:
    """A simulated disk for transcript files (installed as the writer's default opener).

    A file's writes fail with ``code`` once it holds ``quota`` lines (``None``: no
    limit; set it back to ``None`` to free the space); with ``refuse`` set, every
    opening fails with that error code, as a directory that is not writable does.
    """

    def __init__(self, *, quota: int | None = None, refuse: int | None = None) -> None:
        self.quota = quota
        self.refuse = refuse
        self.code = errno.ENOSPC
        self.lines: collections.Counter[str] = collections.Counter()
        self.failed: collections.Counter[str] = collections.Counter()

    def open(self, path: Path) -> TranscriptFile:
        if self.refuse is not None:
            raise OSError(self.refuse, os.strerror(self.refuse), str(path))
        return _DiskFile(self, str(path), open_append(path))


class _DiskFile:
    def __init__(self, disk: Disk, key: str, file: TranscriptFile) -> None:
        self._disk, self._key, self._file = disk, key, file

    def write(self, data: bytes, /) -> int | None:
        disk = self._disk
        if disk.quota is not None and disk.lines[self._key] >= disk.quota:
            disk.failed[self._key] += 1
            raise OSError(disk.code, os.strerror(disk.code))
        disk.lines[self._key] += 1
        return self._file.write(data)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    """Every transcript writer (new or resumed) opens its file on this disk."""
    simulated = Disk()
    monkeypatch.setitem(TranscriptWriter.__init__.__kwdefaults__, "opener", simulated.open)
    resume = TranscriptWriter.resume.__func__  # type: ignore[attr-defined]
    monkeypatch.setitem(resume.__kwdefaults__, "opener", simulated.open)
    return simulated


def make_world(root: Path, policy: str) -> World:
    world = World(
        root,
        extra={
            "transcripts": TranscriptsConfig(on_disk_error=policy),  # type: ignore[arg-type]
            "logging": LoggingConfig(json_file=False, stderr_level="error"),
        },
    )
    world.agent("short", tools="Note")
    world.agent("long", tools="Note")
    return world


def provider() -> ScriptedProvider:
    def work(turns: int, answer: str) -> Any:
        return testing.tool_loop("Note", {"text": "n", "seconds": 0.5}, turns=turns, final=answer)

    return ScriptedProvider(
        policies={"short": work(1, "short done"), "long": work(4, "long done")}, latency=1.0
    )


def problems(err: str) -> collections.Counter[str]:
    """How many ``transcript problem`` reports each agent (by nickname) got on the log."""
    return collections.Counter(m["nickname"] for m in _PROBLEM.finditer(err))


async def spawn_three(rt: Any) -> tuple[Any, Any, Any]:
    long = await rt.spawn("long", "Take your time.")
    first = await rt.spawn("short", "Be quick.")
    second = await rt.spawn("short", "Be quick too.")
    return long, first, second


async def settle(rt: Any, *handles: Any) -> None:
    waited = await rt.wait([h.agent_id for h in handles], timeout=1000, mode="all")
    assert not waited.timed_out


def messages(path: Path | str | None) -> list[Any]:
    assert path is not None
    transcript = load_transcript(path)
    assert transcript.problems == ()
    return list(transcript.conversation())


# -- a state directory that cannot be used at all -----------------------------------


async def earlier_session(root: Path) -> tuple[str, Path, bytes]:
    """Run one agent on a healthy disk: its id, transcript path and bytes."""
    async with make_world(root, "memory").open(provider(), tools=[SlowTool("Note")]) as rt:
        old = await rt.spawn("short", "Be quick.")
        await settle(rt, old)
    path = rt.transcript_path(old.agent_id)
    assert path is not None
    return old.agent_id, path, path.read_bytes()


async def test_a_state_dir_that_cannot_be_created_is_reported_once_per_agent_and_runs_in_memory(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, capsys: pytest.CaptureFixture[str]
) -> None:
    world = make_world(tmp_path, "memory")
    world.state.write_bytes(b"a file where the state directory should be\n")
    async with world.open(provider(), tools=[SlowTool("Note")]) as rt:
        handles = await spawn_three(rt)
        await settle(rt, *handles)
        long, first, second = handles
        assert rt.status(long.agent_id) == Completed("long done")
        assert rt.status(first.agent_id) == rt.status(second.agent_id) == Completed("short done")
        for handle in handles:
            writer = rt.services.records[handle.agent_id].writer
            assert writer.in_memory
            assert writer.error.errno in (errno.ENOTDIR, errno.EEXIST)
            assert len(writer.buffered()) == len(rt.conversation(handle.agent_id)) + 2
    assert rt.statistics().transcripts_open == 0
    err = capsys.readouterr().err
    assert problems(err) == {h.nickname: 1 for h in handles}
    assert "Not a directory (ENOTDIR)" in err or "File exists (EEXIST)" in err
    assert "cannot be resumed from disk" in err
    assert world.state.read_bytes() == b"a file where the state directory should be\n"


async def test_a_state_dir_that_is_not_writable_keeps_old_transcripts_and_resumes_from_them(
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
    capsys: pytest.CaptureFixture[str],
    disk: Disk,
) -> None:
    old_id, old_path, old_bytes = await earlier_session(tmp_path)
    old_conversation = messages(old_path)
    capsys.readouterr()

    disk.refuse = errno.EACCES
    async with make_world(tmp_path, "memory").open(provider(), tools=[SlowTool("Note")]) as rt:
        handles = await spawn_three(rt)
        assert await rt.resume(old_id, "Once more.") == Running()
        await settle(rt, *handles)
        await rt.wait([old_id], timeout=1000)
        assert rt.status(old_id) == Completed("short done")
        resumed = list(rt.conversation(old_id))
        assert resumed[: len(old_conversation)] == old_conversation
        assert resumed[len(old_conversation)].text == "Once more."
        assert [rt.status(h.agent_id) for h in handles] == [
            Completed("long done"),
            Completed("short done"),
            Completed("short done"),
        ]
        old_nickname = rt.handle(old_id).nickname
    err = capsys.readouterr().err
    assert problems(err) == {h.nickname: 1 for h in (*handles, rt.handle(old_id))}
    assert old_nickname in problems(err)
    assert "Permission denied (EACCES)" in err
    assert old_path.read_bytes() == old_bytes  # the earlier transcript is untouched


@pytest.mark.parametrize("reason", ["not creatable", "not writable"])
async def test_an_unusable_state_dir_under_stop_refuses_each_agent_with_a_clear_error(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, disk: Disk, reason: str
) -> None:
    world = make_world(tmp_path, "stop")
    old_id, old_path, old_bytes = await earlier_session(tmp_path)
    blocker = world.state / "sessions"
    if reason == "not creatable":
        shutil.rmtree(blocker)
        blocker.write_bytes(b"in the way\n")
        cause = "(ENOTDIR)"
    else:
        disk.refuse = errno.EACCES
        cause = "Permission denied (EACCES)"
    async with world.open(provider(), tools=[SlowTool("Note")]) as rt:
        for agent_type in ("short", "long"):
            with pytest.raises(AgentStartFailed) as refused:
                await rt.spawn(agent_type, "Go.")
            text = str(refused.value)
            assert "failed to start" in text
            assert "Could not write the transcript" in text
            assert cause in text
            assert "The agent was stopped" in text
        if reason == "not writable":
            with pytest.raises(AgentStartFailed, match="Could not write the transcript"):
                await rt.resume(old_id, "Once more.")
        stats = rt.statistics()
        assert (stats.supervisor.live, stats.supervisor.tasks) == (0, 0)
        assert stats.supervisor.failed_spawns == (3 if reason == "not writable" else 2)
        assert stats.transcripts_open == 0
    if reason == "not creatable":
        assert blocker.read_bytes() == b"in the way\n"
    else:
        assert old_path.read_bytes() == old_bytes
        assert messages(old_path)  # still loads


async def test_on_the_real_clock_an_unusable_state_dir_under_stop_refuses_each_spawn_unasked(
    tmp_path: Path,
) -> None:
    """The same on the path users take, where new files are made at the end of the pass
    by the flusher's helper: under ``stop`` a writer makes its file at once, so an agent
    whose transcript cannot be written is refused at its spawn, before its model is asked
    anything (its file made later, the agent started, called the model, then stopped)."""
    world = make_world(tmp_path, "stop")
    world.state.mkdir(parents=True)
    (world.state / "sessions").write_bytes(b"in the way\n")
    model = provider()
    async with world.open(model, tools=[SlowTool("Note")]) as rt:
        for agent_type in ("short", "long"):
            with pytest.raises(AgentStartFailed, match=r"Could not write the transcript.*ENOTDIR"):
                await rt.spawn(agent_type, "Go.")
        stats = rt.statistics()
        assert (stats.supervisor.live, stats.supervisor.failed_spawns) == (0, 2)
        assert stats.transcripts_open == 0
    assert model.calls == 0


async def test_on_the_real_clock_an_unusable_state_dir_under_memory_runs_every_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under ``memory`` the fast path keeps batching: the files the helper cannot make
    are reported once per agent, and every agent finishes in memory."""
    world = make_world(tmp_path, "memory")
    world.state.mkdir(parents=True)
    (world.state / "sessions").write_bytes(b"in the way\n")
    quick = ScriptedProvider(
        policies={"short": testing.tool_loop("Note", {"text": "n"}, turns=1, final="done")}
    )
    async with world.open(quick, tools=[SlowTool("Note")]) as rt:
        handles = [await rt.spawn("short", "Go.") for _ in range(3)]
        await settle(rt, *handles)
        statuses = [rt.status(h.agent_id) for h in handles]
    assert statuses == [Completed("done")] * 3
    assert problems(capsys.readouterr().err) == {h.nickname: 1 for h in handles}


# -- a disk that fills up ------------------------------------------------------------------


@pytest.mark.parametrize("freed", [False, True], ids=["still full", "freed before exit"])
async def test_a_full_disk_under_memory_keeps_every_agent_running_and_what_is_on_disk_intact(
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
    capsys: pytest.CaptureFixture[str],
    disk: Disk,
    freed: bool,
) -> None:
    disk.quota = QUOTA
    world = make_world(tmp_path, "memory")
    async with world.open(provider(), tools=[SlowTool("Note")]) as rt:
        long, first, second = await spawn_three(rt)
        await settle(rt, long, first, second)
        assert rt.status(long.agent_id) == Completed("long done")
        assert rt.status(first.agent_id) == rt.status(second.agent_id) == Completed("short done")
        conversation = list(rt.conversation(long.agent_id))
        assert len(conversation) > ON_DISK
        assert messages(long.output_file) == conversation[:ON_DISK]  # the lines before the fault
        if freed:
            disk.quota = None
    err = capsys.readouterr().err
    assert problems(err) == {long.nickname: 1}  # once, and only for the agent it hit
    assert "No space left on device (ENOSPC)" in err
    for sibling in (first, second):
        assert disk.lines[sibling.output_file] == SHORT_LINES
        transcript = load_transcript(sibling.output_file)
        assert transcript.problems == ()
        assert transcript.last_result is not None
        assert transcript.last_result.text == "short done"
    on_disk = load_transcript(long.output_file)
    assert on_disk.problems == ()
    if not freed:
        assert "transcript incomplete" in err
        assert list(on_disk.conversation()) == conversation[:ON_DISK]
        assert on_disk.results == ()
        return
    # The lines held in memory reached the file at close; a later runtime resumes from it.
    assert "transcript incomplete" not in err
    assert list(on_disk.conversation()) == conversation
    assert on_disk.last_result is not None
    assert on_disk.last_result.text == "long done"
    async with make_world(tmp_path, "memory").open(provider(), tools=[SlowTool("Note")]) as rt:
        assert await rt.resume(long.agent_id) == Completed("long done")
        assert list(rt.conversation(long.agent_id)) == conversation


async def test_a_full_disk_under_stop_stops_the_agent_it_hits_and_spares_its_siblings(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, disk: Disk
) -> None:
    disk.quota = QUOTA
    async with make_world(tmp_path, "stop").open(provider(), tools=[SlowTool("Note")]) as rt:
        long, first, second = await spawn_three(rt)
        await settle(rt, long, first, second)
        status = rt.status(long.agent_id)
        assert isinstance(status, Errored)
        assert "No space left on device (ENOSPC)" in status.message  # says why it stopped
        result = rt.result(long.agent_id)
        assert result is not None
        assert result.terminate_reason is TerminateReason.ERROR
        assert result.error is not None
        assert "Could not write the transcript" in result.error
        assert "No space left on device (ENOSPC)" in result.error
        assert "The agent was stopped" in result.error
        assert rt.status(first.agent_id) == rt.status(second.agent_id) == Completed("short done")
        conversation = list(rt.conversation(long.agent_id))
        assert disk.failed[long.output_file] >= 1
    for sibling in (first, second):
        transcript = load_transcript(sibling.output_file)
        assert transcript.problems == ()
        assert [r.status for r in transcript.results] == ["completed"]
    assert messages(long.output_file) == conversation[:ON_DISK]  # what came before is intact
    assert load_transcript(long.output_file).results == ()

    # With room again, a later runtime resumes the stopped agent from those lines.
    disk.quota = None
    async with make_world(tmp_path, "stop").open(provider(), tools=[SlowTool("Note")]) as rt:
        assert await rt.resume(long.agent_id, "Finish the job.") == Running()
        await rt.wait([long.agent_id], timeout=1000)
        assert rt.status(long.agent_id) == Completed("long done")
        resumed = list(rt.conversation(long.agent_id))
        assert resumed[:ON_DISK] == conversation[:ON_DISK]
    final = load_transcript(long.output_file)
    assert final.problems == ()
    assert list(final.conversation()) == resumed
    assert [r.status for r in final.results] == ["completed"]


# -- a state directory deleted while agents run --------------------------------------------


@pytest.mark.parametrize("policy", ["memory", "stop"])
async def test_a_state_dir_deleted_mid_run_is_reported_once_per_agent_and_not_recreated(
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
    capsys: pytest.CaptureFixture[str],
    policy: str,
) -> None:
    world = make_world(tmp_path, policy)
    async with world.open(provider(), tools=[SlowTool("Note")]) as rt:
        handles = await spawn_three(rt)
        await trio.sleep(1.25)  # every agent has written its first turn
        assert all(load_transcript(h.output_file).messages for h in handles)
        shutil.rmtree(world.state)
        await settle(rt, *handles)
        statuses = [rt.status(h.agent_id) for h in handles]
        results = [rt.result(h.agent_id) for h in handles]
    err = capsys.readouterr().err
    assert problems(err) == {h.nickname: 1 for h in handles}
    assert "removed while the agent ran" in err
    assert not world.state.exists()  # not recreated behind the user's back
    if policy == "memory":
        assert statuses == [
            Completed("long done"),
            Completed("short done"),
            Completed("short done"),
        ]
        assert "cannot be resumed from disk" in err
        return
    for status, result in zip(statuses, results, strict=True):
        assert isinstance(status, Errored)
        assert "removed while the agent ran" in status.message
        assert result is not None
        assert result.terminate_reason is TerminateReason.ERROR
        assert "removed while the agent ran" in (result.error or "")
