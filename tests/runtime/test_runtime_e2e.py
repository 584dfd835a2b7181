"""The issue's three proofs, end to end with the scripted provider.

1. A lead spawns three Explore agents in parallel, waits for any, sends input
   to the one that finished, closes the stuck one, and waits for all: the
   statuses, events, hooks and transcripts are what a user expects.
2. Resume after the process ended: a new runtime on the same state directory
   rebuilds an agent, and the model sees the whole earlier conversation.
3. Cancelling the embedder's scope mid-run: every agent ends Shutdown, every
   SubagentStop fires once, every transcript loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from subagents import testing
from subagents.actors import AgentSpawned, Bus, Completed, Shutdown, StatusChanged
from subagents.runtime import (
    ActivationStarted,
    HookFired,
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    ScriptedToolCall,
    TerminateReason,
    load_transcript,
)
from tests.runtime.world import LEAD_TOOLS, HookLog, World, drain, statuses_of, tool_results

QUICK, STUCK, SLOW = "Find the README (quick)", "Map the whole tree (stuck)", "Read the docs (slow)"


def explore_policy(request: ModelRequest) -> Reply:
    """Explore agents: the quick one answers, the slow one takes 5 s, the stuck one hangs."""
    newest = next(m.text for m in reversed(request.messages) if m.role == "user" and m.text)
    if newest == "Tell me more.":
        return testing.say("More: the README has a title.")
    if "(stuck)" in newest:
        return testing.hang()
    if "(slow)" in newest:
        return Reply(text="The docs are thin.", latency=5.0)
    return testing.say("The README is at the root.")


def lead_policy(request: ModelRequest) -> Reply:
    """The lead: spawn three, wait for any, input to the finished one, close the stuck one,
    then wait until the other two are final, and report."""
    turn = request.turn
    if turn == 0:
        return Reply(
            text="Fanning out.",
            tool_calls=tuple(
                ScriptedToolCall("spawn_agent", {"agent_type": "Explore", "message": task})
                for task in (QUICK, STUCK, SLOW)
            ),
        )
    results = [json.loads(b.content) for b in tool_results(request.messages)]
    quick, stuck, slow = (r["agent_id"] for r in results[:3])
    if turn == 1:
        return testing.call("wait", ids=[quick, stuck, slow], timeout_ms=60_000)
    if turn == 2:
        (finished,) = [i for i, s in results[3]["status"].items() if s["kind"] == "completed"]
        return testing.call("send_input", id=finished, message="Tell me more.")
    if turn == 3:
        return testing.call("close_agent", id=stuck)
    # From here on, wait until both others are final again (after the input).
    final: set[str] = set()
    for result in results[6:]:
        final |= {i for i, s in result.get("status", {}).items() if s["kind"] == "completed"}
    pending = [i for i in (quick, slow) if i not in final]
    if pending:
        return testing.call("wait", ids=pending, timeout_ms=60_000)
    return testing.say("All three reported; one was stuck and closed.")


async def test_a_lead_fans_out_to_three_explore_agents(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", "You lead a team of explorers.", tools=LEAD_TOOLS)
    hooks = HookLog()
    provider = ScriptedProvider(policies={"lead": lead_policy, "Explore": explore_policy})
    async with world.open(provider, hooks=hooks.hooks()) as rt:
        events = rt.subscribe(policy="block", capacity=10_000)
        lead = await rt.spawn("lead", "Survey the project.")
        waited = await rt.wait([lead.agent_id], timeout=120)
        assert waited.statuses[lead.agent_id] == Completed(
            "All three reported; one was stuck and closed."
        )
        assert trio.current_time() < 10  # the slow agent's 5 s, nothing waited in vain
        seen = drain(events)
        rows = {row.id: row for row in rt.list(include_closed=True)}
        children = [e for e in seen if isinstance(e, AgentSpawned) and e.depth == 1]
        quick, stuck, slow = (e.agent_id for e in children)
        paths = {agent: rt.transcript_path(agent) for agent in rows}
        lead_messages = list(rt.conversation(lead.agent_id))

    # Statuses: the lead completed, the stuck child was closed, the others completed.
    assert {e.parent_id for e in children} == {lead.agent_id}
    assert {e.label for e in children} == {"Explore"}
    assert len({e.nickname for e in children} | {lead.nickname}) == 4
    assert rows[stuck].status == Shutdown()
    assert rows[stuck].closed
    assert rows[quick].status == Completed("More: the README has a title.")
    assert rows[slow].status == Completed("The docs are thin.")

    # Events: each agent's statuses, in order, one final per run.
    assert statuses_of(seen, lead.agent_id) == ["pending_init", "running", "completed"]
    assert statuses_of(seen, quick) == [
        "pending_init",
        "running",
        "completed",
        "running",
        "completed",
    ]
    assert statuses_of(seen, stuck) == ["pending_init", "running", "shutdown"]
    assert statuses_of(seen, slow) == ["pending_init", "running", "completed"]
    activations = [e.agent_id for e in seen if isinstance(e, ActivationStarted)]
    assert sorted(activations) == sorted([lead.agent_id, quick, quick, stuck, slow])
    seqs = [e.seq for e in seen]
    assert seqs == sorted(seqs)

    # Hooks: SubagentStart and SubagentStop once per run, Stop before the final status.
    for agent, runs in ((lead.agent_id, 1), (quick, 2), (stuck, 1), (slow, 1)):
        assert hooks.count("SubagentStart", agent) == runs
        assert hooks.count("SubagentStop", agent) == runs
    stop_of_stuck = next(
        e.seq
        for e in seen
        if isinstance(e, HookFired) and e.agent_id == stuck and e.hook_event_name == "SubagentStop"
    )
    shutdown_of_stuck = next(
        e.seq
        for e in seen
        if isinstance(e, StatusChanged) and e.agent_id == stuck and e.status == Shutdown()
    )
    assert stop_of_stuck < shutdown_of_stuck
    starts = {p.agent_id: p for p in hooks.payloads if p.hook_event_name == "SubagentStart"}
    assert starts[slow].prompt == SLOW
    assert starts[slow].parent_id == lead.agent_id
    assert starts[slow].depth == 1
    # Claude Code's: the subagent's own transcript, and its parent's.
    assert starts[slow].agent_transcript_path == str(paths[slow])
    assert starts[slow].transcript_path == str(paths[lead.agent_id])

    # Transcripts: every one loads cleanly, with the meta, messages and results expected.
    for agent, path in paths.items():
        assert path is not None
        transcript = load_transcript(path)
        assert transcript.problems == ()
        assert transcript.meta.nickname == rows[agent].nickname
        assert transcript.meta.depth == rows[agent].depth
        assert transcript.meta.parent_id == rows[agent].parent_id
    quick_transcript = load_transcript(paths[quick])  # type: ignore[arg-type]
    assert [m.message.text for m in quick_transcript.messages][-2:] == [
        "Tell me more.",
        "More: the README has a title.",
    ]
    assert [r.status for r in quick_transcript.results] == ["completed", "completed"]
    (stuck_result,) = load_transcript(paths[stuck]).results  # type: ignore[arg-type]
    assert (stuck_result.status, stuck_result.terminate_reason) == (
        "shutdown",
        TerminateReason.ABORTED,
    )
    lead_transcript = load_transcript(paths[lead.agent_id])  # type: ignore[arg-type]
    assert [r.message for r in lead_transcript.messages] == lead_messages
    # The lead heard of no end by a notice: it waited for the children (wait collected
    # their results) and closed the stuck one itself.
    notices = [m.text for m in lead_messages if m.origin is Origin.NOTICE]
    assert not any(stuck in text for text in notices)


def _remember(request: ModelRequest) -> Reply:
    newest = next(m.text for m in reversed(request.messages) if m.role == "user" and m.text)
    # A second's latency: the agent is still running when resume returns.
    return attrs.evolve(testing.say(f"noted: {newest}"), latency=1.0)


async def test_resume_after_the_process_ended_shows_the_model_everything(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    first = ScriptedProvider(_remember)
    async with world.open(first) as rt:
        handle = await rt.spawn("general-purpose", "Remember the number 42.")
        await rt.wait([handle.agent_id], timeout=10)
        await rt.send_input(handle.agent_id, "Also remember 7.")
        await rt.wait([handle.agent_id], timeout=10)
        before = list(rt.conversation(handle.agent_id))
    assert [m.text for m in before] == [
        "Remember the number 42.",
        "noted: Remember the number 42.",
        "Also remember 7.",
        "noted: Also remember 7.",
    ]

    recorder = testing.RecordingPolicy(_remember)
    async with world.open(ScriptedProvider(recorder)) as rt:
        assert rt.status(handle.agent_id).__class__.__name__ == "NotFound"
        status = await rt.resume(handle.agent_id, "Which numbers?")
        assert status.__class__.__name__ == "Running"
        waited = await rt.wait([handle.agent_id], timeout=10)
        assert waited.statuses[handle.agent_id] == Completed("noted: Which numbers?")
        again = rt.handle(handle.agent_id)
        assert (again.nickname, again.agent_type, again.depth, again.model) == (
            handle.nickname,
            handle.agent_type,
            0,
            handle.model,
        )
        assert again.output_file == handle.output_file  # the same file goes on
    ((request, shown),) = recorder.requests
    assert request.agent_id == handle.agent_id
    assert list(shown) == [*before, shown[-1]]
    assert shown[-1].text == "Which numbers?"
    transcript = load_transcript(Path(handle.output_file or ""))
    assert transcript.problems == ()
    assert [m.seq for m in transcript.messages] == list(range(6))
    assert [r.run for r in transcript.results] == [1, 2, 3]
    assert len(transcript.metas) == 2
    assert transcript.meta.created == transcript.metas[0].created


async def test_cancelling_the_embedders_scope_shuts_everything_down_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", "You lead.", tools=LEAD_TOOLS)
    hooks = HookLog()

    def lead(request: ModelRequest) -> Reply:
        if request.turn == 0:
            return Reply(
                tool_calls=tuple(
                    ScriptedToolCall("spawn_agent", {"agent_type": "Explore", "message": task})
                    for task in (STUCK, SLOW, STUCK)
                )
            )
        children = [json.loads(b.content)["agent_id"] for b in tool_results(request.messages)]
        return testing.call("wait", ids=children, timeout_ms=600_000)

    def explore(request: ModelRequest) -> Any:
        return Reply(text="Still looking.", latency=1000.0)

    bus = Bus()
    events = bus.subscribe(policy="block", capacity=10_000)
    provider = ScriptedProvider(policies={"lead": lead, "Explore": explore})
    with trio.CancelScope() as scope:
        async with world.open(provider, bus=bus, hooks=hooks.hooks()) as rt:
            await rt.spawn("lead", "Survey.")
            await rt.spawn("Explore", "Look on your own.")
            await trio.sleep(10)
            assert len(rt.list()) == 5
            assert all(row.status.__class__.__name__ == "Running" for row in rt.list())
            scope.cancel()
            await trio.sleep(1)
            raise AssertionError("not reached: the scope was cancelled")
    assert scope.cancelled_caught
    seen = drain(events)
    agents = [e.agent_id for e in seen if isinstance(e, AgentSpawned)]
    assert len(agents) == 5
    for agent in agents:
        assert statuses_of(seen, agent) == ["pending_init", "running", "shutdown"]
        assert hooks.count("SubagentStart", agent) == 1
        assert hooks.count("SubagentStop", agent) == 1
        transcript = load_transcript(rt.transcript_path(agent))  # type: ignore[arg-type]
        assert transcript.problems == ()
        (result,) = transcript.results
        assert (result.status, result.terminate_reason) == ("shutdown", TerminateReason.ABORTED)
    stats = rt.statistics()
    assert (stats.supervisor.tasks, stats.supervisor.live, stats.transcripts_open) == (0, 0, 0)
