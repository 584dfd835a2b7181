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


# -- resume and close as Codex does (issue 15, item 7) -------------------------------
# Anchors, openai/codex: codex-rs/core/src/agent/control.rs (``resume_agent_from_rollout``
# reopens the children whose spawn edge is still open, breadth first; ``close_agent``
# marks only the closed agent's edge closed, then shuts its live subtree down) and
# codex-rs/core/src/agent/registry.rs (``reserve_agent_nickname``: a resumed agent's
# stored nickname is the preferred one; used nicknames wait for the pool to reset).


async def test_closing_a_finished_agent_records_shutdown_in_its_transcript(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider(_echo)) as rt:
        agent = (await rt.spawn("general-purpose", "First")).agent_id
        await rt.wait([agent], timeout=10)
        assert await rt.close(agent) == Completed("echo: First")  # the previous status
        assert rt.status(agent) == Shutdown()
        assert rt.result(agent).text == "echo: First"  # type: ignore[union-attr]
        path = rt.transcript_path(agent)
    assert path is not None
    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert transcript.closed is not None
    assert (transcript.closed.status, transcript.closed.root) == ("shutdown", agent)
    assert [r.status for r in transcript.results] == ["completed"]  # the run did complete


async def test_resume_reopens_the_descendants_that_were_open_when_it_stopped(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_depth": 2})
    async with world.open(ScriptedProvider(_echo)) as rt:
        lead = (await rt.spawn("general-purpose", "Lead")).agent_id
        kept = (await rt.spawn("general-purpose", "Kept", parent=lead)).agent_id
        grandchild = (await rt.spawn("Explore", "Below", parent=kept)).agent_id
        dropped = (await rt.spawn("Explore", "Dropped", parent=lead)).agent_id
        await rt.wait([lead, kept, grandchild, dropped], timeout=10, mode="all")
        # Let the notices settle (Kept answers its child's "finished" notice with a turn).
        await trio.sleep(1)
        before = rt.status(kept)
        assert isinstance(before, Completed)
        await rt.close(dropped)  # the lead's own close: it stays closed
        await rt.close(lead)  # the whole subtree, closed with it
        assert not any(row.id in (lead, kept, grandchild) for row in rt.list())
        assert await rt.resume(lead) == Completed("echo: Lead")
        rows = {row.id: row for row in rt.list()}
        assert set(rows) == {lead, kept, grandchild}
        assert (rows[kept].parent_id, rows[grandchild].parent_id) == (lead, kept)
        assert rt.status(kept) == before  # back idle, as it was
        assert rt.status(dropped) == Shutdown()


async def test_resume_after_the_process_ended_brings_back_the_whole_tree(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider(_echo)) as rt:
        lead = (await rt.spawn("general-purpose", "Lead")).agent_id
        child = (await rt.spawn("Explore", "Child", parent=lead)).agent_id
        closed = (await rt.spawn("Explore", "Closed", parent=lead)).agent_id
        await rt.wait([lead, child, closed], timeout=10, mode="all")
        await rt.close(closed)
        nicknames = {row.id: row.nickname for row in rt.list(include_closed=True)}
    async with world.open(ScriptedProvider(_echo)) as rt:
        await rt.resume(lead)
        rows = {row.id: row for row in rt.list()}
        assert set(rows) == {lead, child}
        assert rows[child].parent_id == lead
        assert {i: rows[i].nickname for i in rows} == {i: nicknames[i] for i in rows}
        await rt.send_input(child, "Again")
        assert (await rt.wait([child], timeout=10)).statuses[child] == Completed("echo: Again")


async def test_resume_gives_back_the_nickname_verbatim_and_no_one_else_gets_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, extra={"nicknames": ["Ada", "Alan"]})
    async with world.open(ScriptedProvider(_echo)) as rt:
        first = await rt.spawn("general-purpose", "One")
        second = await rt.spawn("general-purpose", "Two")
        assert (first.nickname, second.nickname) == ("Ada", "Alan")
        await rt.close(first.agent_id)
        third = await rt.spawn("general-purpose", "Three")
        assert third.nickname == "Ada the 2nd"  # Ada closed, but not reused before a reset
        await rt.resume(first.agent_id)
        assert rt.handle(first.agent_id).nickname == "Ada"  # verbatim, no ordinal
        shown = [row.nickname for row in rt.list(include_closed=True)]
        assert len(shown) == len(set(shown)) == 3
