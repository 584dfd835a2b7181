"""The agent loop as a kernel actor: statuses, close, follow-up input, results."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import (
    ChildFinished,
    Completed,
    Errored,
    Shutdown,
    SupervisorConfig,
    open_supervisor,
)
from subagents.runtime import (
    AgentResult,
    Message,
    Origin,
    RunFinished,
    TerminateReason,
    agent_behavior,
    as_input,
)
from tests.runtime.helpers import SlowTool, definition, selection, spec, task

CONFIG = SupervisorConfig(max_threads=8, close_grace_period=2.0)


async def test_goal_completes_the_actor_with_the_report(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results: list[AgentResult] = []
    agent = spec(definition(output=True), [testing.finish(report={"summary": "s", "count": 1})])
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(
            agent_behavior(agent, task(), on_result=results.append), label="worker"
        )
        waited = await sup.wait([ref.id], timeout=10)
        status = waited.statuses[ref.id]
    assert isinstance(status, Completed)
    assert status.result is not None
    assert json.loads(status.result) == {"summary": "s", "count": 1}
    assert [r.terminate_reason for r in results] == [TerminateReason.GOAL]


async def test_provider_error_errors_the_actor_with_the_typed_message(
    autojump_clock: trio.testing.MockClock,
) -> None:
    agent = spec(definition(), [testing.fail("invalid_request_error", "prompt is too long")])
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, task()), label="worker")
        status = (await sup.wait([ref.id], timeout=10)).statuses[ref.id]
    assert isinstance(status, Errored)
    assert status.message == "BadRequest: prompt is too long"


async def test_a_limit_errors_the_actor_and_says_which(
    autojump_clock: trio.testing.MockClock,
) -> None:
    agent = spec(
        definition(max_turns=2),
        testing.tool_loop("Note", turns=10),
        tools=selection(SlowTool("Note")),
    )
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, task()), label="worker")
        status = (await sup.wait([ref.id], timeout=10)).statuses[ref.id]
    assert isinstance(status, Errored)
    assert status.message.startswith("AgentRunFailed: max_turns: the agent used all its turns")


async def test_close_aborts_a_stalled_model_call_promptly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results: list[AgentResult] = []
    agent = spec(definition(), [testing.hang("working...")])
    async with open_supervisor(CONFIG) as sup:
        with sup.subscribe(types=[RunFinished]) as finished:
            ref = await sup.spawn(
                agent_behavior(agent, task(), on_result=results.append), label="worker"
            )
            await trio.sleep(5.0)
            before = trio.current_time()
            await sup.close(ref.id)
            took = trio.current_time() - before
            event = finished.receive_nowait()
        status = sup.status(ref.id)
    # The stop request aborted the run at once: the close ladder never had to cancel.
    assert took < 0.5
    assert isinstance(status, Shutdown)
    assert [r.terminate_reason for r in results] == [TerminateReason.ABORTED]
    assert isinstance(event, RunFinished)
    assert event.terminate_reason == "aborted"
    assert event.agent_id == ref.id


async def test_leaving_the_supervisor_cancels_a_hung_agent_and_reports_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    results: list[AgentResult] = []
    agent = spec(definition(), [testing.hang()])
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, task(), on_result=results.append), label="w")
        await trio.sleep(1.0)
    assert isinstance(sup.status(ref.id), Shutdown)
    assert [r.terminate_reason for r in results] == [TerminateReason.ABORTED]


async def test_follow_up_input_revives_the_agent_with_its_context(
    autojump_clock: trio.testing.MockClock,
) -> None:
    recorder = testing.RecordingPolicy(lambda request: testing.say(f"reply {request.turn}"))
    agent = spec(definition(), recorder)
    conversation = task("first")
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, conversation), label="worker")
        first = (await sup.wait([ref.id], timeout=10)).statuses[ref.id]
        await sup.send(ref.id, "second")
        second = (await sup.wait([ref.id], timeout=10)).statuses[ref.id]
    assert first == Completed("reply 0")
    assert second == Completed("reply 1")
    assert [m.text for m in conversation] == ["first", "reply 0", "second", "reply 1"]
    assert conversation[2].origin is Origin.INPUT


async def test_input_sent_during_a_run_joins_it_at_the_next_turn(
    autojump_clock: trio.testing.MockClock,
) -> None:
    recorder = testing.RecordingPolicy(testing.tool_loop("Note", {"seconds": 5.0}, turns=2))
    agent = spec(definition(), recorder, tools=selection(SlowTool("Note")))
    conversation = task()
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, conversation), label="worker")
        await trio.sleep(1.0)
        await sup.send(ref.id, "also look at B")
        status = (await sup.wait([ref.id], timeout=60)).statuses[ref.id]
    assert status == Completed("done")
    _, shown = recorder.requests[1]
    assert shown[-1].text == "also look at B"
    assert shown[-1].origin is Origin.INPUT
    assert len(recorder.requests) == 3


async def test_ask_gets_the_result_of_the_run_it_started(
    autojump_clock: trio.testing.MockClock,
) -> None:
    agent = spec(definition(), lambda request: testing.say(f"answer {request.turn}"))
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, task()), label="worker")
        await sup.wait([ref.id], timeout=10)
        reply = await sup.ask(ref.id, "and now?", timeout=10)
    assert isinstance(reply, AgentResult)
    assert reply.text == "answer 1"


def test_mailbox_messages_become_conversation_messages() -> None:
    assert as_input("hello") == Message.user("hello", origin=Origin.INPUT)
    message = Message.user("as is")
    assert as_input(message) is message
    notice = as_input(ChildFinished("c1", "Ada", Completed("found it")))
    assert notice.origin is Origin.NOTICE
    assert notice.text == (
        "Agent Ada (c1) finished: completed.\n\n"
        '<agent_result agent_id="c1" nickname="Ada">\nfound it\n</agent_result>'
    )
    failed = as_input(ChildFinished("c2", "Bo", Errored("boom")))
    assert "errored" in failed.text
    assert "boom" in failed.text


@pytest.mark.parametrize("agents", [50])
async def test_many_agents_run_side_by_side(
    agents: int, autojump_clock: trio.testing.MockClock
) -> None:
    agent = spec(
        definition(),
        testing.tool_loop("Note", {"text": "x"}, turns=3),
        tools=selection(SlowTool("Note")),
        latency=1.0,
    )
    async with open_supervisor(SupervisorConfig(max_threads=agents)) as sup:
        start = trio.current_time()
        refs = [await sup.spawn(agent_behavior(agent, task()), label="w") for _ in range(agents)]
        waited = await sup.wait([r.id for r in refs], timeout=60, mode="all")
        elapsed = trio.current_time() - start
    assert all(s == Completed("done") for s in waited.statuses.values())
    assert elapsed == pytest.approx(4.0)  # four model calls of 1 s each, all agents at once


async def test_input_beyond_the_inbox_is_kept_for_the_next_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    recorder = testing.RecordingPolicy(
        lambda request: (
            testing.call("Note", seconds=5.0)
            if request.turn == 0
            else testing.say(f"reply {request.turn}")
        )
    )
    agent = spec(definition(), recorder, tools=selection(SlowTool("Note")))
    conversation = task()
    async with open_supervisor(CONFIG) as sup:
        ref = await sup.spawn(agent_behavior(agent, conversation, inbox_capacity=2), label="worker")
        await trio.sleep(1.0)
        for number in range(5):
            await sup.send(ref.id, f"note {number}")
        status = (await sup.wait([ref.id], timeout=60)).statuses[ref.id]
    assert isinstance(status, Completed)
    inputs = [m.text for m in conversation if m.origin is Origin.INPUT]
    assert inputs == [f"note {number}" for number in range(5)]


async def test_close_aborts_a_leaf_agent_too(autojump_clock: trio.testing.MockClock) -> None:
    results: list[AgentResult] = []
    agent = spec(definition(), [testing.hang()])
    config = SupervisorConfig(max_depth=0, close_grace_period=2.0)
    async with open_supervisor(config) as sup:
        ref = await sup.spawn(agent_behavior(agent, task(), on_result=results.append), label="leaf")
        await trio.sleep(1.0)
        before = trio.current_time()
        await sup.close(ref.id)
        assert trio.current_time() - before < 0.5
        assert isinstance(sup.status(ref.id), Shutdown)
    assert [r.terminate_reason for r in results] == [TerminateReason.ABORTED]
