"""The lifecycle tools through a real runtime: what a lead model sees, refusals included."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed, Shutdown
from subagents.runtime import (
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    ToolResultBlock,
    load_transcript,
)
from subagents.runtime._fork import FORK_BOUNDARY
from subagents.tools import FORK_NOTE
from tests.runtime.world import LEAD_TOOLS, World, tool_results

Step = Callable[[list[ToolResultBlock]], Reply]


def steps(*plays: Step) -> Callable[[ModelRequest], Reply]:
    """A lead policy: turn ``n`` plays ``plays[n]`` with the tool results so far; then answers."""

    def policy(request: ModelRequest) -> Reply:
        if request.turn < len(plays):
            return plays[request.turn](tool_results(request.messages))
        return testing.say("Lead done.")

    return policy


def data(result: ToolResultBlock) -> Any:
    return json.loads(result.content)


async def run_lead(
    world: World, lead: Callable[[ModelRequest], Reply], worker: Any, **options: Any
) -> tuple[list[ToolResultBlock], dict[str, Any]]:
    """Run the lead to its end; its tool results and, by id, every agent's final row."""
    provider = ScriptedProvider(policies={"lead": lead, "*": worker})
    async with world.open(provider, **options) as rt:
        handle = await rt.spawn("lead", "Lead the work.")
        await rt.wait([handle.agent_id], timeout=100)
        results = tool_results(rt.conversation(handle.agent_id).messages)
        rows = {row.id: row for row in rt.list(include_closed=True)}
        rows["lead"] = rows[handle.agent_id]
        rows["conversation"] = list(rt.conversation(handle.agent_id))
        rows["runtime"] = rt
    return results, rows


async def test_foreground_task_returns_the_report_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call(
            "Task", description="Find docs", prompt="Where are the docs?", subagent_type="Explore"
        )
    )
    worker = Reply(text="In docs/.", latency=3.0)
    results, rows = await run_lead(world, lead, lambda request: worker)
    (report,) = results
    assert not report.is_error
    assert report.content.startswith("<agent_result agent_id=")
    assert "In docs/." in report.content
    assert "<usage>agent_id:" in report.content
    # The result came as the tool's answer, not a second time as a notice.
    assert not [m for m in rows["conversation"] if m.origin is Origin.NOTICE]


async def test_background_task_and_task_output(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call(
            "Task",
            description="Read",
            prompt="Read everything.",
            subagent_type="Explore",
            run_in_background=True,
        ),
        lambda r: testing.call("TaskOutput", agent_id=data(r[0])["agent_id"], block=False),
        lambda r: testing.call("TaskOutput", agent_id=data(r[0])["agent_id"], timeout=60_000),
    )
    worker = Reply(text="Read it all.", latency=20.0)
    results, rows = await run_lead(world, lead, lambda request: worker)
    launched, peek, final = (data(r) for r in results)
    assert launched["status"] == "async_launched"
    child = launched["agent_id"]
    assert launched["output_file"] == str(rows["runtime"].transcript_path(child))
    assert peek["status"] == {"kind": "running"}
    assert peek["result"] is None
    assert final["status"] == {"kind": "completed", "result": "Read it all."}
    assert (final["terminate_reason"], final["turns"]) == ("goal", 1)
    assert load_transcript(launched["output_file"]).results[-1].text == "Read it all."
    # A background child's end reaches the lead as a notice.
    assert any(child in m.text for m in rows["conversation"] if m.origin is Origin.NOTICE)


async def test_refusals_come_back_as_tool_errors(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_threads": 2})
    world.agent("lead", tools=LEAD_TOOLS)

    def spawn(agent_type: str) -> Step:
        return lambda _: testing.call("spawn_agent", agent_type=agent_type, message="Look.")

    lead = steps(
        spawn("Explorer"),  # unknown type
        spawn("Explore"),  # the one slot left
        spawn("Explore"),  # over max_threads
        lambda r: testing.call("wait", ids=[data(r[1])["agent_id"]], timeout_ms=30_000),
        lambda r: testing.call("send_input", id="nobody", message="Hi"),  # not found
        lambda r: testing.call("close_agent", id=data(r[1])["agent_id"]),
        lambda r: testing.call("send_input", id=data(r[1])["agent_id"], message="Hi"),  # closed
        lambda r: testing.call("resume_agent", id=data(r[1])["agent_id"], message="Again."),
        lambda r: testing.call("wait", ids=[data(r[1])["agent_id"]], timeout_ms=30_000),
    )

    def worker(request: ModelRequest) -> Reply:
        # Busy for a second, so the child still holds its slot at the third spawn.
        return attrs.evolve(testing.directive_policy(request), latency=1.0)

    results, rows = await run_lead(world, lead, worker)
    unknown, spawned, over, _, missing, closed, refused, resumed, waited = results
    assert unknown.is_error
    assert "Unknown agent type 'Explorer'. Did you mean 'Explore'?" in unknown.content
    assert "Available agent types:" in unknown.content
    assert not spawned.is_error
    assert over.is_error
    assert "Agent limit reached (max_threads=2)" in over.content
    assert missing.is_error
    assert "No agent with id 'nobody'" in missing.content
    assert data(closed) == {"previous_status": {"kind": "completed", "result": "done (finish)"}}
    assert refused.is_error
    assert "is closed and takes no more input" in refused.content
    assert data(resumed) == {"status": {"kind": "running"}}
    child = data(spawned)["agent_id"]
    assert data(waited)["status"][child]["kind"] == "completed"
    assert rows[child].parent_id == rows["lead"].id


async def test_a_leaf_cannot_spawn(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("eager", tools="spawn_agent, LS")
    lead = steps(lambda _: testing.call("Task", description="d", prompt="p", subagent_type="eager"))
    eager_requests: list[tuple[ModelRequest, Sequence[Any]]] = []

    def eager(request: ModelRequest) -> Reply:
        eager_requests.append((request, tuple(request.messages)))
        if request.turn == 0:
            return testing.call("spawn_agent", agent_type="Explore", message="Go.")
        return testing.say("Did it myself.")

    results, _ = await run_lead(world, lead, eager)
    assert "Did it myself." in results[0].content
    request, _ = eager_requests[0]
    assert "spawn_agent" not in {spec["name"] for spec in request.tools}
    refusal = tool_results(eager_requests[1][1])[0]
    assert refusal.is_error
    assert "Agent depth limit reached (max_depth=1). Solve the task yourself." in refusal.content


async def test_scoped_spawn_tools_start_only_their_types(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools="Agent(Explore), TaskOutput")
    lead = steps(
        lambda _: testing.call("Agent", description="d", prompt="p", subagent_type="Plan"),
        lambda _: testing.call("Agent", description="d", prompt="p", subagent_type="Explore"),
    )
    results, _ = await run_lead(world, lead, lambda request: testing.say("ok"))
    refused, allowed = results
    assert refused.is_error
    assert "may not spawn agents of type 'Plan'" in refused.content
    assert "Explore" in refused.content
    assert not allowed.is_error


async def test_fork_context_hands_the_child_the_lead_conversation(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: Reply(
            text="Let me delegate.",
            tool_calls=(
                testing.call(
                    "spawn_agent", agent_type="Explore", message="Go on.", fork_context=True
                ).tool_calls[0],
            ),
        ),
        lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]]),
    )
    seen: list[Sequence[Any]] = []

    def child(request: ModelRequest) -> Reply:
        seen.append(tuple(request.messages))
        return testing.say("ok")

    await run_lead(world, lead, child)
    (messages,) = seen
    assert messages[0].text == "Lead the work."
    assert messages[1].text == "Let me delegate."  # the pending spawn call itself left out
    assert not messages[1].tool_uses
    assert messages[2].text == FORK_BOUNDARY
    assert messages[3].origin is Origin.TASK


async def test_closing_the_lead_closes_its_children(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call("spawn_agent", agent_type="Explore", message="Look."),
        lambda _: testing.hang(),
    )
    provider = ScriptedProvider(policies={"lead": lead, "*": lambda r: testing.hang()})
    async with world.open(provider) as rt:
        handle = await rt.spawn("lead", "Lead.")
        await trio.sleep(1)
        (child,) = [row for row in rt.list() if row.parent_id == handle.agent_id]
        await rt.close(handle.agent_id)
        assert rt.status(child.id) == Shutdown()
        assert rt.statistics().transcripts_open == 0
        assert rt.status(handle.agent_id) == Shutdown()
    assert load_transcript(rt.transcript_path(child.id)).results[-1].status == "shutdown"  # type: ignore[arg-type]
    assert isinstance(Completed(), Completed)


# -- issue 15: the lifecycle tools speak Codex's and Claude Code's contracts ---------------


def _first_messages(seen: list[Sequence[Any]]) -> list[str]:
    return [messages[0].text for messages in seen]


@pytest.mark.parametrize(
    "call",
    [
        {"tool": "spawn_agent", "message": "Go on."},
        {"tool": "spawn_agent", "agent_type": "general-purpose", "message": "Go on."},
        {
            "tool": "spawn_agent",
            "agent_type": "general-purpose",
            "message": "Go on.",
            "fork_context": False,
        },
        {
            "tool": "Task",
            "description": "d",
            "prompt": "Go on.",
            "subagent_type": "general-purpose",
        },
        {"tool": "spawn_agent", "agent_type": "forker", "message": "Go on.", "fork_context": False},
    ],
)
async def test_a_child_starts_with_a_fresh_context(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, call: dict[str, Any]
) -> None:
    """Codex's ``fork_context`` defaults to false (``#[serde(default)] fork_context: bool`` in
    codex-rs core/src/tools/handlers/multi_agents.rs) and an explicit false means false;
    Claude Code's subagents start from their prompt. Even a definition that forks is not
    forked when the call says ``fork_context: false``."""
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("forker", forkContext=True)
    arguments = {k: v for k, v in call.items() if k != "tool"}
    lead = steps(
        lambda _: Reply(
            text="Let me delegate.",
            tool_calls=(testing.call(call["tool"], **arguments).tool_calls[0],),
        ),
        lambda r: (
            testing.call("wait", ids=[data(r[0])["agent_id"]])
            if call["tool"] == "spawn_agent"
            else testing.say("Lead done.")
        ),
    )
    seen: list[Sequence[Any]] = []

    def child(request: ModelRequest) -> Reply:
        seen.append(tuple(request.messages))
        return testing.say("ok")

    await run_lead(world, lead, child)
    (messages,) = seen
    assert [m.origin for m in messages] == [Origin.TASK]
    assert messages[0].text == "Go on."
    assert FORK_BOUNDARY not in " ".join(m.text for m in messages)


async def test_a_definition_that_forks_forks_unless_told_not_to(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """``forkContext: true`` is the definition's opt-in; the tools' listing says so."""
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("forker", forkContext=True)
    lead = steps(
        lambda _: testing.call("spawn_agent", agent_type="forker", message="Go on."),
        lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]]),
    )
    seen: list[Sequence[Any]] = []
    listings: list[str] = []

    def child(request: ModelRequest) -> Reply:
        seen.append(tuple(request.messages))
        return testing.say("ok")

    def lead_policy(request: ModelRequest) -> Reply:
        listings.extend(s["description"] for s in request.tools if s["name"] == "spawn_agent")
        return lead(request)

    await run_lead(world, lead_policy, child)
    (messages,) = seen
    assert messages[0].text == "Lead the work."
    assert any(m.text == FORK_BOUNDARY for m in messages)
    listing = listings[0]
    assert f"- forker: The forker agent of the tests. {FORK_NOTE}" in listing
    assert "- Explore: " in listing
    assert FORK_NOTE not in listing.split("- Explore: ")[1].split("\n- ")[0]


async def test_task_output_takes_claude_codes_task_id_and_milliseconds(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Claude Code's TaskOutput: ``task_id``, ``timeout`` in ms (default 30000, at most
    600000), ``block`` true by default (github.com/weiesky/cc-viewer,
    concepts/en/Tool-TaskOutput.md). A 5000 ms wait on a 20 s agent ends with it
    still running; the usual ``{"task_id", "timeout": 30000}`` collects its result."""
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call(
            "Task",
            description="Read",
            prompt="Read.",
            subagent_type="Explore",
            run_in_background=True,
        ),
        lambda r: testing.call("TaskOutput", task_id=data(r[0])["agent_id"], timeout=5000),
        lambda r: testing.call("TaskOutput", task_id=data(r[0])["agent_id"], timeout=30000),
        lambda r: testing.call("TaskOutput", task_id=data(r[0])["agent_id"], timeout=600_001),
    )
    worker = Reply(text="Read it all.", latency=20.0)
    results, _ = await run_lead(world, lead, lambda request: worker)
    _, early, final, too_long = results
    assert not early.is_error
    assert data(early)["status"] == {"kind": "running"}
    assert not final.is_error
    assert data(final)["status"] == {"kind": "completed", "result": "Read it all."}
    assert too_long.is_error
    assert "$.timeout" in too_long.content


async def test_wait_ends_before_the_callers_own_run_does(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A wait longer than what is left of the caller's run is cut short of its deadline, so
    the caller keeps a turn to act, and the result says so (issue 15, item 4)."""
    world = World(tmp_path, limits={"max_time_seconds": 100.0})
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call("spawn_agent", agent_type="Explore", message="Look."),
        lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]], timeout_ms=3_600_000),
    )
    results, rows = await run_lead(world, lead, lambda request: testing.hang())
    _, waited = results
    assert not waited.is_error, waited.content
    answer = data(waited)
    assert answer["timed_out"] is True
    assert "your own run ends in" in answer["note"]
    assert rows["conversation"][-1].text == "Lead done."


async def test_blank_input_is_refused_as_codex_does(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """codex-rs refuses ``message.trim().is_empty()`` with "Empty message can't be sent to an
    agent" (``parse_collab_input``, core/src/tools/handlers/multi_agents.rs)."""
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = steps(
        lambda _: testing.call("spawn_agent", agent_type="Explore", message="Look."),
        lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]]),
        lambda r: testing.call("send_input", id=data(r[0])["agent_id"], message="   "),
        lambda r: testing.call("spawn_agent", agent_type="Explore", message=" \n\t"),
    )
    requests: list[ModelRequest] = []

    def worker(request: ModelRequest) -> Reply:
        requests.append(request)
        return testing.say("done")

    results, _ = await run_lead(world, lead, worker)
    _, _, blank_input, blank_spawn = results
    for refused in (blank_input, blank_spawn):
        assert refused.is_error
        assert refused.content == "Empty message can't be sent to an agent"
    assert len(requests) == 1  # no second run, no second agent


def _calls(*replies: Reply) -> Reply:
    """One model message carrying every tool call of ``replies``, in that order."""
    return Reply(tool_calls=[c for reply in replies for c in reply.tool_calls])


def _echo_worker(latency: float) -> Callable[[ModelRequest], Reply]:
    """A child that answers ``report: <its prompt>`` after ``latency`` s of model time."""

    def policy(request: ModelRequest) -> Reply:
        return Reply(text=f"report: {request.messages[0].text}", latency=latency)

    return policy


async def test_task_calls_of_one_message_run_concurrently_in_call_order(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Three ``Task`` calls in one message take one child's time, not three.

    Claude Code's Task description: "Launch multiple agents concurrently whenever
    possible, to maximize performance; to do that, use a single message with
    multiple tool uses" (the Task tool definition, e.g. the published
    claude-code-tools.json). Results come back in call order.
    """
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("worker")
    prompts = ("alpha", "beta", "gamma")
    lead = steps(
        lambda _: _calls(
            *(
                testing.call("Task", description=p, prompt=p, subagent_type="worker")
                for p in prompts
            )
        )
    )
    start = trio.current_time()
    results, _rows = await run_lead(world, lead, _echo_worker(5.0))
    elapsed = trio.current_time() - start
    assert elapsed < 6.0, f"three 5 s children took {elapsed:.1f} s"
    assert [r.is_error for r in results] == [False, False, False]
    for prompt, result in zip(prompts, results, strict=True):
        assert f"report: {prompt}" in result.content
    # The children were started in call order: their ids count up with it.
    ids = [re.search(r'agent_id="[^"]*-(\d+)"', r.content) for r in results]
    numbers = [int(m.group(1)) for m in ids if m is not None]
    assert len(numbers) == 3
    assert numbers == sorted(numbers)


async def test_an_error_in_one_task_call_leaves_the_others_right(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("worker")
    lead = steps(
        lambda _: _calls(
            testing.call("Task", description="a", prompt="alpha", subagent_type="worker"),
            testing.call("Task", description="b", prompt="beta", subagent_type="no-such-type"),
            testing.call("Task", description="c", prompt="gamma", subagent_type="worker"),
        )
    )
    start = trio.current_time()
    results, _ = await run_lead(world, lead, _echo_worker(5.0))
    assert trio.current_time() - start < 6.0
    first, refused, third = results
    assert "report: alpha" in first.content
    assert not first.is_error
    assert refused.is_error
    assert "no-such-type" in refused.content
    assert "report: gamma" in third.content
    assert not third.is_error


async def test_spawn_calls_of_one_message_run_concurrently_and_wait_runs_after(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """``spawn_agent`` calls of one message start together; a later ``wait`` sees them.

    ``wait`` (like ``send_input``, ``close_agent``, ``resume_agent`` and
    ``SendMessage``) addresses agents by id, so it runs only after every call
    written before it has finished, as Codex runs its collab tools (none of them
    supports parallel tool calls in codex-rs ``tools/spec.rs``).
    """
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("worker")
    lead = steps(
        lambda _: _calls(
            testing.call("spawn_agent", message="alpha"),
            testing.call("spawn_agent", message="beta"),
        ),
        lambda r: testing.call("wait", ids=[data(x)["agent_id"] for x in r], timeout_ms=60_000),
    )
    results, _rows = await run_lead(world, lead, _echo_worker(5.0))
    first, second, waited = (data(r) for r in results)
    assert first["agent_id"] != second["agent_id"]
    assert waited["timed_out"] is False


async def test_send_message_continues_a_finished_and_a_closed_agent(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Claude Code's way to continue a subagent: ``SendMessage {to: agentId, message}``.

    "Sends a message to an agent team teammate, or resumes a subagent by its
    agent ID. Stopped subagents auto-resume in the background"
    (https://code.claude.com/docs/en/tools-reference).
    """
    world = World(tmp_path)
    world.agent("lead", tools=f"{LEAD_TOOLS}, SendMessage")
    world.agent("worker")

    def child(r: list[ToolResultBlock]) -> str:
        return re.search(r'agent_id="([^"]+)"', r[0].content).group(1)  # type: ignore[union-attr]

    lead = steps(
        lambda _: testing.call("Task", description="a", prompt="alpha", subagent_type="worker"),
        lambda r: testing.call("SendMessage", to=child(r), message="beta", summary="more"),
        lambda r: testing.call("wait", ids=[child(r)], timeout_ms=60_000),
        lambda r: testing.call("close_agent", id=child(r)),
        lambda r: testing.call("SendMessage", to=child(r), message="gamma"),
        lambda r: testing.call("wait", ids=[child(r)], timeout_ms=60_000),
    )

    def worker(request: ModelRequest) -> Reply:
        return Reply(text=f"report: {request.messages[-1].text}", latency=2.0)

    results, _ = await run_lead(world, lead, worker)
    first, queued, waited, _closed, resumed, waited_again = results
    assert "report: alpha" in first.content
    agent_id = child(results)
    assert data(queued) == {
        "agent_id": agent_id,
        "delivered": "queued",
        "status": data(queued)["status"],
    }
    assert data(waited)["status"][agent_id] == {"kind": "completed", "result": "report: beta"}
    assert data(resumed)["delivered"] == "resumed"
    assert data(waited_again)["status"][agent_id] == {
        "kind": "completed",
        "result": "report: gamma",
    }


async def test_the_lead_holds_a_slot_and_a_finished_child_frees_its_own(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Our two slot rules, as the tool descriptions state them (unlike Codex's guards.rs).

    With ``max_threads = 2`` the lead and one child fill the pool: of two
    ``spawn_agent`` calls in one message (children that keep running) one is
    refused, as Codex refuses a spawn over the limit. Once a child has finished,
    a new one starts without any ``close_agent``.
    """
    world = World(tmp_path, limits={"max_threads": 2})
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("worker")
    lead = steps(
        lambda _: _calls(
            testing.call("spawn_agent", agent_type="worker", message="alpha"),
            testing.call("spawn_agent", agent_type="worker", message="beta"),
        ),
        lambda r: testing.call(
            "wait", ids=[data(x)["agent_id"] for x in r if not x.is_error], timeout_ms=60_000
        ),
        lambda _: testing.call("Task", description="c", prompt="gamma", subagent_type="worker"),
    )
    results, _ = await run_lead(world, lead, _echo_worker(5.0))
    first, second, waited, third = results
    # Starting calls take their slot in call order: the first starts, the second is refused.
    assert not first.is_error
    assert second.is_error
    assert "Agent limit reached (max_threads=2)" in second.content
    assert data(waited)["timed_out"] is False
    assert not third.is_error
    assert "report: gamma" in third.content


async def test_task_calls_beyond_the_free_slots_run_as_their_siblings_finish(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Three foreground ``Task`` calls and two free slots: two run, then the third.

    A call refused only because its own siblings hold the slots is made again
    once they have finished, so no call of the message fails for it; results
    stay in call order.
    """
    world = World(tmp_path, limits={"max_threads": 3})
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("worker")
    prompts = ("alpha", "beta", "gamma")
    lead = steps(
        lambda _: _calls(
            *(
                testing.call("Task", description=p, prompt=p, subagent_type="worker")
                for p in prompts
            )
        )
    )
    start = trio.current_time()
    results, _ = await run_lead(world, lead, _echo_worker(5.0))
    assert trio.current_time() - start < 11.0
    assert [r.is_error for r in results] == [False, False, False]
    for prompt, result in zip(prompts, results, strict=True):
        assert f"report: {prompt}" in result.content
