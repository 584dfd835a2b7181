"""Resume: an open agent is left alone; a closed one is rebuilt from its transcript."""

from __future__ import annotations

from pathlib import Path

import attrs
import msgspec
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import AgentNotFound, Completed, Errored, NotFound, Running, Shutdown
from subagents.runtime import (
    Message,
    MessageRecord,
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptNotFound,
    load_transcript,
)
from tests.runtime.world import World, drain, statuses_of


def _echo(request: ModelRequest) -> Reply:
    newest = next(m.text for m in reversed(request.messages) if m.role == "user" and m.text)
    return busy(f"echo: {newest}")


def busy(text: str) -> Reply:
    """A reply that takes a second, so the agent is still running when ``resume`` returns."""
    return attrs.evolve(testing.say(text), latency=1.0)


async def test_resume_in_the_same_runtime_after_close(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    recorder = testing.RecordingPolicy(_echo)
    async with world.open(ScriptedProvider(recorder)) as rt:
        events = rt.subscribe(policy="block", capacity=1000)
        agent = (await rt.spawn("general-purpose", "First")).agent_id
        await rt.wait([agent], timeout=10)
        await rt.close(agent)
        with pytest.raises(Exception, match="closed"):
            await rt.send_input(agent, "Hello?")
        assert await rt.resume(agent, "Second") == Running()
        assert (await rt.wait([agent], timeout=10)).statuses[agent] == Completed("echo: Second")
        assert rt.handle(agent).depth == 0
        assert statuses_of(drain(events), agent) == [
            "pending_init",
            "running",
            "completed",
            "shutdown",  # closed once finished: Shutdown, as Codex's close_agent
            "pending_init",
            "running",
            "completed",
        ]
        assert rt.statistics().transcripts_open == 1
    _, shown = recorder.requests[-1]
    assert [m.text for m in shown] == ["First", "echo: First", "Second"]


async def test_an_open_agent_is_left_alone_and_a_prompt_becomes_input(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider(_echo)) as rt:
        agent = (await rt.spawn("general-purpose", "First")).agent_id
        await rt.wait([agent], timeout=10)
        assert await rt.resume(agent) == Completed("echo: First")
        assert await rt.resume(agent, "More") == Running()
        assert (await rt.wait([agent], timeout=10)).statuses[agent] == Completed("echo: More")
        assert rt.statistics().supervisor.spawned == 1


async def test_resume_without_a_prompt_comes_back_idle_after_an_answer(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider(_echo)) as rt:
        agent = (await rt.spawn("general-purpose", "First")).agent_id
        await rt.wait([agent], timeout=10)
        path = rt.transcript_path(agent)
    assert path is not None
    lines_before = path.read_bytes().count(b"\n")
    async with world.open(ScriptedProvider(_echo)) as rt:
        assert await rt.resume(agent) == Completed("echo: First")
        assert rt.result(agent) is not None
        assert len(load_transcript(path).results) == 1  # nothing ran: no new result
        await rt.send_input(agent, "Again")
        assert (await rt.wait([agent], timeout=10)).statuses[agent] == Completed("echo: Again")
    transcript = load_transcript(path)
    assert [m.message.text for m in transcript.messages] == [
        "First",
        "echo: First",
        "Again",
        "echo: Again",
    ]
    assert path.read_bytes().count(b"\n") > lines_before


async def test_resume_without_a_prompt_carries_on_a_run_cut_short(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        agent = (await rt.spawn("general-purpose", "Work hard")).agent_id
        await trio.sleep(1)
        await rt.close(agent)
    recorder = testing.RecordingPolicy(lambda request: busy("Finished after all."))
    async with world.open(ScriptedProvider(recorder)) as rt:
        assert await rt.resume(agent) == Running()
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
    assert status == Completed("Finished after all.")
    _, shown = recorder.requests[0]
    assert [m.text for m in shown] == ["Work hard"]


async def test_a_failed_agent_resumed_without_a_prompt_tries_again(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.fail()])) as rt:
        agent = (await rt.spawn("general-purpose", "Try")).agent_id
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
        assert isinstance(status, Errored)
        await rt.close(agent)
    async with world.open(ScriptedProvider([busy("Worked this time.")])) as rt:
        assert await rt.resume(agent) == Running()
        assert (await rt.wait([agent], timeout=10)).statuses[agent] == Completed(
            "Worked this time."
        )


async def test_resume_repairs_a_transcript_cut_by_a_crash(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("One.")])) as rt:
        agent = (await rt.spawn("general-purpose", "Count")).agent_id
        await rt.wait([agent], timeout=10)
        path = rt.transcript_path(agent)
    assert path is not None
    # A crash mid-turn: the model's tool call is on disk, its result is not, and
    # the last line was torn.
    call = Message("assistant", (ToolUseBlock("toolu_9", "LS", {"path": "."}),), Origin.MODEL)
    record = MessageRecord(agent_id=agent, seq=2, message=call)
    with path.open("ab") as file:
        file.write(msgspec.json.encode(record) + b"\n" + b'{"record":"mess')
    recorder = testing.RecordingPolicy(lambda request: busy("Recovered."))
    async with world.open(ScriptedProvider(recorder)) as rt:
        assert await rt.resume(agent) == Running()
        assert (await rt.wait([agent], timeout=10)).statuses[agent] == Completed("Recovered.")
    _, shown = recorder.requests[0]
    assert [m.origin for m in shown][-2:] == [Origin.MODEL, Origin.TOOL_RESULTS]
    (answer,) = shown[-1].content
    assert isinstance(answer, ToolResultBlock)
    assert (answer.tool_use_id, answer.is_error) == ("toolu_9", True)
    transcript = load_transcript(path)
    # The torn line was ended by the resumed writer: now a corrupt line in the
    # middle, reported with its number, every other line kept.
    (problem,) = transcript.problems
    assert (problem.line, "not valid JSON" in problem.message) == (6, True)
    assert [m.seq for m in transcript.messages] == [0, 1, 2, 3, 4]
    assert transcript.messages[-1].message.text == "Recovered."


async def test_resume_of_an_unknown_agent_names_the_state_directory(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("ok")])) as rt:
        assert rt.status("nobody") == NotFound()
        with pytest.raises(TranscriptNotFound, match="nobody"):
            await rt.resume("nobody")


@pytest.mark.parametrize("bad", [123, None, b"a1", ["a1"]])
async def test_resume_of_an_id_that_is_not_text_is_agent_not_found(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, bad: object
) -> None:
    async with World(tmp_path).open(ScriptedProvider([testing.say("ok")])) as rt:
        with pytest.raises(AgentNotFound, match="No agent with id"):
            await rt.resume(bad)  # type: ignore[arg-type]
        assert (await rt.spawn("general-purpose", "Still here?")).agent_id  # still usable


async def test_a_resumed_child_goes_back_under_its_open_parent(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider(_echo)) as rt:
        parent = (await rt.spawn("general-purpose", "Parent")).agent_id
        child = (await rt.spawn("Explore", "Child", parent=parent)).agent_id
        await rt.wait([parent, child], timeout=10, mode="all")
        await rt.close(child)
        await rt.resume(child, "Back")
        assert (rt.handle(child).parent_id, rt.handle(child).depth) == (parent, 1)
        await rt.wait([child], timeout=10)
        await rt.close(parent)  # closes the child too
        assert rt.status(child) == Shutdown()
        assert rt.result(child).text == "echo: Back"  # type: ignore[union-attr]
        await rt.resume(child, "Alone")  # its parent is closed now: top level
        assert (rt.handle(child).parent_id, rt.handle(child).depth) == (None, 0)
        await rt.close(child)
        assert rt.status(child) in (Shutdown(), Completed("echo: Alone"))
