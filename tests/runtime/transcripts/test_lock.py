"""The per-agent lock: a writer holds its transcript's flock, a resume claims it first."""

from __future__ import annotations

import errno
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.runtime import (
    AgentInUse,
    MetaRecord,
    ModelRequest,
    Reply,
    ScriptedProvider,
    TranscriptFile,
    TranscriptNotFound,
    TranscriptWriter,
    clean_old_transcripts,
    load_transcript,
    new_session_id,
    transcript_path,
)
from subagents.runtime._transcripts.lock import claim_transcript
from tests.runtime.world import LEAD_TOOLS, World, tool_results


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _meta(session_id: str = "s1") -> MetaRecord:
    return MetaRecord(agent_id="a1", agent_type="Explore", nickname="Ada", session_id=session_id)


def test_a_writer_holds_the_lock_and_a_second_writer_cannot_write(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    first = TranscriptWriter(path, _meta())
    assert first.meta.pid == os.getpid()
    assert first.meta.host

    second = TranscriptWriter.resume(load_transcript(path))

    assert second.in_memory
    assert second.error is not None
    assert second.error.errno == errno.EAGAIN
    assert "Another runtime holds this transcript's lock" in str(second.error)
    assert not second.retry()  # still held
    first.close()
    assert second.retry()  # released at close: the lines held in memory reach the file
    second.close()
    assert len(load_transcript(path).metas) == 2


def test_a_claim_refuses_a_held_transcript_naming_its_holder(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    with pytest.raises(TranscriptNotFound):
        claim_transcript(path, "a1")
    before = _fds()
    with TranscriptWriter(path, _meta()), pytest.raises(AgentInUse) as refused:
        claim_transcript(path, "a1")
    assert refused.value.pid == os.getpid()
    assert refused.value.nickname == "Ada"
    assert "agent Ada (a1) is running in this process" in str(refused.value)
    assert "wait for it or close it" in str(refused.value)
    claimed = claim_transcript(path, "a1")
    with TranscriptWriter.resume(load_transcript(path), lock=claimed) as writer:
        assert not writer.in_memory
        assert claimed.closed  # the writer's own file holds the lock now
    assert _fds() == before


def test_a_claim_of_a_file_removed_meanwhile_is_not_found(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    TranscriptWriter(path, _meta()).close()
    path.rename(path.with_name("moved.jsonl"))
    path.symlink_to(path.with_name("moved.jsonl"))
    with pytest.raises(Exception, match="not a link"):
        claim_transcript(path, "a1")


def test_agent_in_use_says_who_and_pickles() -> None:
    far = AgentInUse("a1", nickname="Ada", pid=4242, host="elsewhere", path="/s/agent-a1.jsonl")
    assert str(far).startswith("agent Ada (a1) is running in process 4242 on host elsewhere;")
    assert "wait for it or close it" in str(far)
    assert str(AgentInUse("a1")).startswith("agent a1 is running in another process;")
    again = pickle.loads(pickle.dumps(far))
    assert (type(again), str(again), again.pid) == (AgentInUse, str(far), 4242)


def test_retention_keeps_a_session_whose_agent_is_live_here(tmp_path: Path) -> None:
    session_id = new_session_id()
    path = transcript_path(tmp_path, session_id, "a1")
    with TranscriptWriter(path, _meta(session_id)):
        os.utime(path, (0.0, 0.0))
        [kept] = clean_old_transcripts(tmp_path, 1)
        assert kept.skipped is not None
        assert path.exists()
    [dry] = clean_old_transcripts(tmp_path, 1, dry_run=True)
    assert (dry.transcripts, dry.folder_removed) == ((path,), True)
    assert path.exists()


async def test_agents_release_their_locks_and_descriptors_when_closed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_threads": 40})
    before = _fds()
    async with world.open(ScriptedProvider(lambda request: testing.say("done"))) as rt:
        ids = [(await rt.spawn("general-purpose", f"Task {n}")).agent_id for n in range(30)]
        await rt.wait(ids, timeout=10, mode="all")
        assert len(_fds() - before) >= 30  # one descriptor per open agent, its lock on it
        for agent_id in ids[:10]:
            await rt.close(agent_id)
        for agent_id in ids[:10]:  # closed: the lock went, so the same runtime resumes it
            await rt.resume(agent_id, "Again")
        await rt.wait(ids[:10], timeout=10, mode="all")
    assert _fds() == before


async def test_a_second_runtime_cannot_resume_an_agent_live_in_the_first(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.hang()])) as first:
        agent = (await first.spawn("general-purpose", "Take your time")).agent_id
        async with world.open(ScriptedProvider([testing.say("never")])) as second:
            with pytest.raises(AgentInUse, match="is running in this process"):
                await second.resume(agent, "Me too")
            assert second.list(include_closed=True) == []
        await first.close(agent, grace=0)
    transcript = load_transcript(first.transcript_path(agent) or "")
    assert transcript.problems == ()
    assert len(transcript.metas) == 1


async def test_resume_agent_of_a_child_live_in_another_runtime_is_a_tool_error(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)

    def child_of(request: ModelRequest) -> str:
        return str(json.loads(tool_results(request.messages)[0].content)["agent_id"])

    def lead(request: ModelRequest) -> Reply:
        if request.turn == 0:
            return testing.call("spawn_agent", agent_type="general-purpose", message="Work.")
        if request.turn == 1:
            return testing.call("wait", ids=[child_of(request)], timeout_ms=30_000)
        if request.turn == 2:
            return testing.call("close_agent", id=child_of(request))
        if request.turn == 3:  # by then another runtime has taken the child
            call = testing.call("resume_agent", id=child_of(request), message="Again.")
            return attrs.evolve(call, latency=100.0)
        return testing.say("Lead done.")

    provider = ScriptedProvider(policies={"lead": lead, "*": lambda r: testing.say("done")})
    async with (
        world.open(ScriptedProvider(lambda r: testing.hang())) as other,
        world.open(provider) as rt,
    ):
        lead_id = (await rt.spawn("lead", "Lead the work.")).agent_id
        await trio.sleep(50)
        [child] = [row.id for row in rt.list(include_closed=True) if row.id != lead_id]
        await other.resume(child, "Mine now")
        await rt.wait([lead_id], timeout=1000)
        refused = tool_results(rt.conversation(lead_id).messages)[-1]
        await other.close(child, grace=0)
    assert refused.is_error
    assert "is running in this process" in refused.content
    assert "wait for it or close it" in refused.content


def test_on_a_file_system_without_locks_transcripts_are_written_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr("subagents.runtime._transcripts.lock.fcntl.flock", no_locks)
    path = transcript_path(tmp_path, "s1", "a1")
    with TranscriptWriter(path, _meta()) as writer:
        assert not writer.in_memory
    claimed = claim_transcript(path, "a1")
    with TranscriptWriter.resume(load_transcript(path), lock=claimed) as writer:
        assert not writer.in_memory
    assert len(load_transcript(path).metas) == 2


def test_a_resume_that_cannot_write_keeps_the_lock_it_claimed(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    TranscriptWriter(path, _meta()).close()

    def refuse(path: Path) -> TranscriptFile:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    claimed = claim_transcript(path, "a1")  # read-only: a read-only state dir can be resumed
    with TranscriptWriter.resume(load_transcript(path), lock=claimed, opener=refuse) as writer:
        assert writer.in_memory
        with pytest.raises(AgentInUse):
            claim_transcript(path, "a1")
    assert claimed.closed
    claim_transcript(path, "a1").close()


def test_a_meta_record_names_this_process_and_a_forked_child_names_itself(
    tmp_path: Path,
) -> None:
    """The process id is asked once, not per spawn: a forked child asks again."""
    TranscriptWriter(tmp_path / "t.jsonl", _meta()).close()
    assert load_transcript(tmp_path / "t.jsonl").meta.pid == os.getpid()
    script = (
        "import os, sys\n"
        "from subagents.runtime._transcripts.lock import this_pid\n"
        "parent = this_pid()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    os._exit(0 if this_pid() == os.getpid() != parent else 1)\n"
        "_, status = os.waitpid(child, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status) or (this_pid() != os.getpid()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], check=False, timeout=60)
    assert done.returncode == 0
