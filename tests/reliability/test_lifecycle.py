"""Reliability of the lifecycle tools a model calls: busy children, dead processes, other runs.

Each attack is played by a lead's scripted model through a real runtime:

- a lead floods a child stuck in a long model call with more inputs than its
  mailbox holds: every ``send_input`` past the mailbox's room comes back, at
  most :data:`~subagents.tools.SEND_INPUT_WAIT_SECONDS` later, as a tool
  error that says the child is busy and what to do, and the lead goes on
  (before, the first one past the room blocked the lead until its own run
  limit); ``interrupt=true`` on a full mailbox still gets through;
- ``wait``, ``send_input``, ``close_agent`` and ``TaskOutput`` on the id of an
  agent that lived in a process that has ended (its transcript is in the same
  state directory) say that its transcript exists and that ``resume_agent``
  brings it back, and it does;
- a model's ``resume_agent`` (or ``Task`` with ``resume``) of an agent of an
  unrelated earlier session is refused, with a tool error that says the user
  can resume it with ``subagents resume ID``, while ``Runtime.resume`` of that
  agent works; an agent of the caller's own session lineage (its session, or
  the session of an agent the user resumed) is resumed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed, NotFound
from subagents.runtime import (
    Message,
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    ScriptedToolCall,
    ToolResultBlock,
)
from subagents.tools import SEND_INPUT_WAIT_SECONDS
from tests.runtime.world import LEAD_TOOLS, World, tool_results

Step = Callable[[list[ToolResultBlock]], Reply]

#: How long the lead may take in the flood test: far below its run limit (1000 s).
_FLOOD_BUDGET = 300.0


def _last_input(messages: Sequence[Message]) -> int:
    """The index of the newest task or input message (where the current run began)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and message.origin in (Origin.TASK, Origin.INPUT):
            return index
    return 0


def plans(**scripts: Sequence[Step]) -> Callable[[ModelRequest], Reply]:
    """A lead policy: after the input ``name``, turn ``n`` plays ``scripts[name][n]``.

    A step sees the tool results of the current run only; past the end (or
    after an input with no script) the lead answers "Lead done.".
    """

    def policy(request: ModelRequest) -> Reply:
        messages = list(request.messages)
        start = _last_input(messages)
        script = scripts.get(messages[start].text, ())
        turn = sum(1 for m in messages[start:] if m.role == "assistant")
        if turn < len(script):
            return script[turn](tool_results(messages[start:]))
        return testing.say("Lead done.")

    return policy


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> Reply:
    """One assistant turn that makes every call of ``tool_calls``, in order."""
    return Reply(tool_calls=tuple(ScriptedToolCall(name, args) for name, args in tool_calls))


def data(result: ToolResultBlock) -> Any:
    return json.loads(result.content)


# -- a busy child's full mailbox -------------------------------------------------------------


async def test_a_flood_of_inputs_to_a_busy_child_fails_fast_and_the_lead_goes_on(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"mailbox_size": 8})
    world.agent("lead", tools=LEAD_TOOLS)
    flood = 12
    lead = plans(
        **{
            "Flood it.": [
                lambda _: testing.call(
                    "spawn_agent", agent_type="general-purpose", message="Look."
                ),
                # A moment for the child to be in its (endless) model call.
                lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]], timeout_ms=1000),
                lambda r: calls(
                    *(
                        ("send_input", {"id": data(r[0])["agent_id"], "message": f"More {n}"})
                        for n in range(flood)
                    )
                ),
                lambda r: testing.call(
                    "send_input", id=data(r[0])["agent_id"], message="Stop.", interrupt=True
                ),
            ]
        }
    )
    provider = ScriptedProvider(policies={"lead": lead, "*": lambda _: testing.hang()})
    async with world.open(provider) as rt:
        handle = await rt.spawn("lead", "Flood it.")
        started = trio.current_time()
        waited = await rt.wait([handle.agent_id], timeout=_FLOOD_BUDGET)
        took = trio.current_time() - started
        assert not waited.timed_out, "the lead is stuck on a full mailbox"
        assert waited.statuses[handle.agent_id] == Completed("Lead done.")
        results = tool_results(rt.conversation(handle.agent_id).messages)
    spawned, settled, *sends, interrupted = results
    assert not spawned.is_error
    assert data(settled)["timed_out"] is True
    delivered = [r for r in sends if not r.is_error]
    refused = [r for r in sends if r.is_error]
    assert len(delivered) == 8  # the mailbox's room; the child reads none while its call hangs
    assert len(refused) == flood - 8
    for result in refused:
        assert "busy" in result.content
        assert f"{SEND_INPUT_WAIT_SECONDS:g} s" in result.content
        assert "interrupt" in result.content
        assert "wait" in result.content
    assert took <= len(refused) * SEND_INPUT_WAIT_SECONDS + 10
    # Interrupting a busy child stops its call, so its mailbox drains and the message goes in.
    assert not interrupted.is_error, interrupted.content
    assert data(interrupted)["status"] == {"kind": "running"}


# -- an agent of a process that has ended ---------------------------------------------------


async def _earlier_run(world: World, *, close_child: bool = False) -> tuple[str, str]:
    """A first process: a lead and its child, both done, then the runtime closed.

    With ``close_child`` the child is closed on its own first, so a resume of the
    lead leaves it closed (Codex reopens only the children still open).
    """
    lead = plans(**{"Start.": []})
    worker = plans(**{"Look.": [], "Again.": []})
    provider = ScriptedProvider(policies={"lead": lead, "*": worker})
    async with world.open(provider) as rt:
        parent = (await rt.spawn("lead", "Start.")).agent_id
        child = (await rt.spawn("Explore", "Look.", parent=parent)).agent_id
        await rt.wait([parent, child], timeout=100, mode="all")
        if close_child:
            await rt.close(child)
    return parent, child


async def test_a_lead_resumed_after_its_process_ended_is_told_its_child_can_be_resumed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    parent, child = await _earlier_run(world, close_child=True)
    lead = plans(
        **{
            "Check on your helper.": [
                lambda _: testing.call("wait", ids=[child], timeout_ms=10_000),
                lambda _: testing.call("send_input", id=child, message="Hello?"),
                lambda _: testing.call("close_agent", id=child),
                lambda _: testing.call("TaskOutput", agent_id=child, block=False),
                lambda _: testing.call("resume_agent", id=child, message="Again."),
                lambda _: testing.call("wait", ids=[child], timeout_ms=60_000),
            ]
        }
    )
    provider = ScriptedProvider(policies={"lead": lead, "*": lambda _: testing.say("Back.")})
    async with world.open(provider) as rt:
        await rt.resume(parent, "Check on your helper.")
        await rt.wait([parent], timeout=200)
        results = tool_results(rt.conversation(parent).messages)
    waited, sent, closed, output, resumed, again = results
    hint = data(waited)["hints"][child]
    assert data(waited)["status"][child] == {"kind": "not_found"}
    for text in (hint, sent.content, closed.content, output.content):
        assert "transcript" in text
        assert "resume_agent" in text
        assert child in text
    assert sent.is_error
    assert closed.is_error
    assert output.is_error
    assert not resumed.is_error, resumed.content
    assert data(again)["status"][child] == {"kind": "completed", "result": "Back."}


# -- resume_agent of another run's agent ---------------------------------------------------


async def test_a_model_may_not_resume_an_agent_of_an_unrelated_session(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    _, child = await _earlier_run(world)
    lead = plans(
        **{
            "Steal.": [
                lambda _: testing.call("wait", ids=[child], timeout_ms=10_000),
                lambda _: testing.call("resume_agent", id=child, message="Tell me your secrets."),
                lambda _: testing.call(
                    "Task",
                    description="Steal",
                    prompt="Tell me your secrets.",
                    subagent_type="Explore",
                    resume=child,
                ),
            ]
        }
    )
    provider = ScriptedProvider(policies={"lead": lead, "*": lambda _: testing.say("Back.")})
    async with world.open(provider) as rt:
        thief = (await rt.spawn("lead", "Steal.")).agent_id
        await rt.wait([thief], timeout=200)
        waited, refused, task = tool_results(rt.conversation(thief).messages)
        assert rt.status(child) == NotFound()  # never brought in
        # The embedding program (and `subagents resume`) may resume any agent.
        assert await rt.resume(child, "Again.") is not None
        done = await rt.wait([child], timeout=100)
        assert done.statuses[child] == Completed("Back.")
    hint = data(waited)["hints"][child]
    for text in (hint, refused.content, task.content):
        assert f"subagents resume {child}" in text
    assert "resume_agent brings" not in hint
    assert refused.is_error
    assert task.is_error
    assert "may not resume" in refused.content


async def test_a_model_may_resume_an_agent_of_its_own_session(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    lead = plans(
        **{
            "Work.": [
                lambda _: testing.call("spawn_agent", agent_type="Explore", message="Look."),
                lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]], timeout_ms=60_000),
                lambda r: testing.call("close_agent", id=data(r[0])["agent_id"]),
                lambda r: testing.call("resume_agent", id=data(r[0])["agent_id"], message="Again."),
                lambda r: testing.call("wait", ids=[data(r[0])["agent_id"]], timeout_ms=60_000),
            ]
        }
    )
    provider = ScriptedProvider(policies={"lead": lead, "*": lambda _: testing.say("Here.")})
    async with world.open(provider) as rt:
        handle = await rt.spawn("lead", "Work.")
        await rt.wait([handle.agent_id], timeout=300)
        results = tool_results(rt.conversation(handle.agent_id).messages)
    *_, resumed, again = results
    assert not resumed.is_error, resumed.content
    assert not again.is_error
    assert data(again)["timed_out"] is False
