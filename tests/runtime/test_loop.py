"""The agent loop: completion, complete_task validation, limits and the grace turn, tools."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Bus
from subagents.runtime import (
    COMPLETE_TASK,
    GracePeriodEnded,
    GracePeriodStarted,
    Message,
    Origin,
    Publisher,
    Reply,
    RunControl,
    RunFinished,
    ScriptedProvider,
    TerminateReason,
    TextBlock,
    TextChunk,
    ToolCallEnded,
    ToolCallStarted,
    ToolResultBlock,
    ToolUseBlock,
    TurnCompleted,
    TurnStarted,
    UsageReported,
    run_agent,
)
from subagents.tools import NO_CAPACITY, ToolContext, ToolResult
from tests.runtime.helpers import SlowTool, definition, selection, spec, task

GOOD_REPORT = {"summary": "all good", "count": 2}


def tool_results(conversation: object) -> list[ToolResultBlock]:
    return [
        block
        for message in conversation  # type: ignore[attr-defined]
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


async def test_final_message_completes_claude_code_style() -> None:
    tool = SlowTool("Note")
    agent = spec(
        definition(),
        [testing.call("Note", text="a"), testing.say("The answer is 42.")],
        tools=selection(tool),
    )
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.status == "success"
    assert result.text == "The answer is 42."
    assert result.output is None
    assert (result.turns, result.tool_uses) == (2, 1)
    assert result.usage.output_tokens > 0
    assert [m.origin for m in conversation] == [
        Origin.TASK,
        Origin.MODEL,
        Origin.TOOL_RESULTS,
        Origin.MODEL,
    ]
    assert tool_results(conversation)[0].content == "Note: a"


async def test_complete_task_output_is_validated_and_corrected_next_turn() -> None:
    agent = spec(
        definition(output=True),
        [
            testing.finish(report={"summary": "missing count"}),
            testing.finish(report={"summary": "bad", "count": -1, "extra": 1}),
            testing.finish("Here it is.", report=GOOD_REPORT),
        ],
    )
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.output == GOOD_REPORT
    assert result.text == "Here it is."
    assert result.turns == 3
    assert result.tool_uses == 0  # complete_task is the completion signal, not work
    errors = tool_results(conversation)
    assert errors[0].is_error
    assert "'count' is a required property" in errors[0].content
    assert "$.report" in errors[0].content
    assert errors[1].is_error
    assert "$.report.count" in errors[1].content
    assert "minimum" in errors[1].content
    assert "Additional properties" in errors[1].content
    assert not errors[2].is_error
    assert result.report() == '{"count": 2, "summary": "all good"}'


async def test_complete_task_is_offered_when_the_definition_lists_it() -> None:
    recorder = testing.RecordingPolicy(testing.tool_loop("Note", turns=0, complete=True))
    agent = spec(
        definition(tools=("Note", COMPLETE_TASK)), recorder, tools=selection(SlowTool("Note"))
    )
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.text == "done"
    request, _ = recorder.requests[0]
    assert request.tool_names == ["Note", COMPLETE_TASK]


async def test_missing_complete_task_call_ends_the_run() -> None:
    agent = spec(definition(output=True), [testing.say("I am done, honestly.")])
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.NO_COMPLETE_TASK_CALL
    assert result.status == "failure"
    assert result.text == "I am done, honestly."
    assert result.grace is None


async def test_timeout_then_grace_complete_task_gives_goal_with_grace_noted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    slow = Reply(tool_calls=testing.call("Note", seconds=30.0).tool_calls)
    recorder = testing.RecordingPolicy(
        lambda request: testing.finish(report=GOOD_REPORT) if request.grace else slow
    )
    agent = spec(
        definition(output=True, max_time=100.0, grace=5.0),
        recorder,
        tools=selection(SlowTool("Note")),
    )
    conversation = task()
    start = trio.current_time()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.grace == "timeout"
    assert result.output == GOOD_REPORT
    assert result.turns == 5  # four turns in the time limit (the fourth cut short), then grace
    assert trio.current_time() - start == pytest.approx(100.0)
    grace_request, shown = recorder.requests[-1]
    assert grace_request.grace
    assert grace_request.tool_names == [COMPLETE_TASK]
    notice = shown[-1]
    assert notice.origin is Origin.GRACE
    assert "exceeded the time limit" in notice.text
    # The call the deadline interrupted was answered, so the conversation stays valid.
    interrupted = shown[-2]
    assert interrupted.origin is Origin.TOOL_RESULTS
    assert "time limit was reached" in interrupted.content[0].content  # type: ignore[union-attr]
    assert "succeeded" not in result.describe()
    assert "grace turn after a timeout limit" in result.describe()


async def test_timeout_with_grace_ignored_ends_with_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    agent = spec(
        definition(output=True, max_time=10.0, grace=3.0),
        lambda request: testing.say("still thinking") if request.grace else testing.hang(),
    )
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.TIMEOUT
    assert result.status == "failure"
    assert result.grace == "timeout"
    assert result.text == "still thinking"
    assert result.duration == pytest.approx(10.0)


async def test_grace_turn_that_hangs_is_bounded_by_the_grace_period(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    agent = spec(definition(max_time=10.0, grace=3.0), lambda request: testing.hang())
    with bus.subscribe(types=[GracePeriodStarted, GracePeriodEnded]) as events:
        result = await run_agent(agent, task(), publisher=Publisher(bus, agent_id="a1"))
        seen = [events.receive_nowait(), events.receive_nowait()]
    assert result.terminate_reason is TerminateReason.TIMEOUT
    assert result.duration == pytest.approx(13.0)
    assert isinstance(seen[0], GracePeriodStarted)
    assert (seen[0].reason, seen[0].grace_seconds) == ("timeout", 3.0)
    assert isinstance(seen[1], GracePeriodEnded)
    assert seen[1].outcome == "timed_out"


async def test_max_turns_then_grace_complete_task_gives_goal() -> None:
    recorder = testing.RecordingPolicy(
        lambda request: (
            testing.finish(result="partial but useful")
            if request.grace
            else testing.call("Note", text="again")
        )
    )
    agent = spec(definition(max_turns=3), recorder, tools=selection(SlowTool("Note")))
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.grace == "max_turns"
    assert result.text == "partial but useful"
    assert (result.turns, result.tool_uses) == (4, 3)
    _, shown = recorder.requests[-1]
    assert "maximum number of turns" in shown[-1].text


async def test_max_turns_with_grace_ignored_ends_with_max_turns() -> None:
    agent = spec(
        definition(max_turns=2),
        lambda request: testing.call("Note", text="more"),
        tools=selection(SlowTool("Note")),
    )
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.MAX_TURNS
    assert result.status == "failure"
    assert result.grace == "max_turns"
    assert result.turns == 3
    # The grace turn's call to another tool was refused, not run.
    refused = tool_results(conversation)[-1]
    assert refused.is_error
    assert "Only complete_task is available" in refused.content
    assert result.tool_uses == 2


async def test_invalid_complete_task_in_grace_keeps_the_limit_reason() -> None:
    agent = spec(
        definition(output=True, max_turns=1),
        lambda request: (
            testing.finish(report={"summary": 1}) if request.grace else testing.call("Note")
        ),
        tools=selection(SlowTool("Note")),
    )
    bus = Bus()
    with bus.subscribe(types=[GracePeriodEnded]) as events:
        result = await run_agent(agent, task(), publisher=Publisher(bus, agent_id="a"))
        ended = events.receive_nowait()
    assert result.terminate_reason is TerminateReason.MAX_TURNS
    assert isinstance(ended, GracePeriodEnded)
    assert ended.outcome == "invalid"


async def test_provider_failure_ends_with_error_and_keeps_the_exception() -> None:
    control = RunControl()
    agent = spec(definition(), [testing.fail("overloaded_error", "busy")])
    result = await run_agent(agent, task(), control=control)
    assert result.terminate_reason is TerminateReason.ERROR
    assert result.error == "Overloaded: busy"
    assert type(control.error).__name__ == "Overloaded"
    assert control.result == result


async def test_script_that_runs_out_is_an_error_naming_the_turn() -> None:
    agent = spec(definition(), [testing.call("Note")], tools=selection(SlowTool("Note")))
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.ERROR
    assert result.error is not None
    assert "no reply for turn 2" in result.error


async def test_malformed_tool_call_is_answered_with_an_error_then_corrected() -> None:
    tool = SlowTool("Note")
    agent = spec(
        definition(),
        [testing.malformed("Note"), testing.call("Note", text="fixed"), testing.say("ok")],
        tools=selection(tool),
    )
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    first, second = tool_results(conversation)
    assert first.is_error
    assert "not a valid JSON object" in first.content
    assert second.content == "Note: fixed"
    assert len([entry for entry in tool.log if entry[0] == "start"]) == 1


async def test_read_only_calls_of_a_turn_run_concurrently(
    autojump_clock: trio.testing.MockClock,
) -> None:
    a, b = SlowTool("A"), SlowTool("B")
    reply = Reply(
        tool_calls=[
            *testing.call("A", seconds=5.0).tool_calls,
            *testing.call("B", seconds=5.0).tool_calls,
        ]
    )
    agent = spec(definition(), [reply, testing.say("done")], tools=selection(a, b))
    start = trio.current_time()
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert trio.current_time() - start == pytest.approx(5.0)
    assert a.log[0][2] == b.log[0][2] == start
    # Results come back in call order whatever the finishing order.
    assert [r.content for r in tool_results(conversation)] == ["A: ", "B: "]


async def test_calls_run_in_order_when_one_is_not_read_only(
    autojump_clock: trio.testing.MockClock,
) -> None:
    reader, writer = SlowTool("Reader"), SlowTool("Writer", read_only=False)
    reply = Reply(
        tool_calls=[
            *testing.call("Writer", seconds=5.0).tool_calls,
            *testing.call("Reader", seconds=5.0).tool_calls,
        ]
    )
    agent = spec(definition(), [reply, testing.say("done")], tools=selection(reader, writer))
    start = trio.current_time()
    await run_agent(agent, task())
    assert trio.current_time() - start == pytest.approx(10.0)
    assert writer.log[1][2] <= reader.log[0][2]


def _message(*calls: tuple[str, float]) -> Reply:
    """One model message calling each ``(tool, seconds)`` in order."""
    return Reply(
        tool_calls=[
            c for name, seconds in calls for c in testing.call(name, seconds=seconds).tool_calls
        ]
    )


async def test_concurrent_calls_run_together_and_a_barrier_keeps_its_place(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Consecutive concurrent calls form one batch; any other call waits for what precedes it.

    The partition follows Claude Code's tool orchestration (concurrency-safe calls
    of one message batched, the others one at a time) and Codex's
    ``supports_parallel_tool_calls``: a call that is not parallel starts only
    after the calls written before it.
    """
    a, b, c, d = (SlowTool(n, read_only=False, concurrent=True) for n in "ABCD")
    barrier = SlowTool("Barrier", read_only=False)
    reply = _message(("A", 5.0), ("B", 3.0), ("Barrier", 5.0), ("C", 5.0), ("D", 1.0))
    agent = spec(definition(), [reply, testing.say("done")], tools=selection(a, b, c, d, barrier))
    start = trio.current_time()
    conversation = task()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert trio.current_time() - start == pytest.approx(15.0)
    assert a.log[0][2] == b.log[0][2] == start
    assert barrier.log[0][2] == pytest.approx(start + 5.0)
    assert c.log[0][2] == d.log[0][2] == pytest.approx(start + 10.0)
    assert [r.content for r in tool_results(conversation)] == [
        "A: ",
        "B: ",
        "Barrier: ",
        "C: ",
        "D: ",
    ]


async def test_abort_during_a_concurrent_batch_keeps_the_finished_results(
    autojump_clock: trio.testing.MockClock,
) -> None:
    quick, slow, slower = (SlowTool(n, read_only=False, concurrent=True) for n in "QST")
    control = RunControl()
    conversation = task()
    agent = spec(
        definition(),
        [_message(("S", 50.0), ("Q", 1.0), ("T", 60.0))],
        tools=selection(quick, slow, slower),
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_agent(agent, conversation, control=control))
        await trio.sleep(3.0)
        control.abort()
    assert control.result is not None
    assert control.result.terminate_reason is TerminateReason.ABORTED
    first, second, third = tool_results(conversation)
    assert first.is_error
    assert "stopped before this call finished" in first.content
    assert (second.content, second.is_error) == ("Q: ", False)
    assert third.is_error
    assert "stopped before this call finished" in third.content


async def test_an_error_in_a_concurrent_batch_leaves_the_other_results(
    autojump_clock: trio.testing.MockClock,
) -> None:
    broken = SlowTool("Broken", read_only=False, concurrent=True, fail=True)
    fine = SlowTool("Fine", read_only=False, concurrent=True)
    conversation = task()
    agent = spec(
        definition(),
        [_message(("Fine", 2.0), ("Broken", 1.0), ("Fine", 3.0)), testing.say("ok")],
        tools=selection(broken, fine),
    )
    start = trio.current_time()
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert trio.current_time() - start == pytest.approx(3.0)
    first, broke, third = tool_results(conversation)
    assert (first.content, third.content) == ("Fine: ", "Fine: ")
    assert broke.is_error
    assert "RuntimeError" in broke.content


@attrs.define
class OneSlotTool(SlowTool):
    """A concurrent tool with room for one call at a time; another is refused ``NO_CAPACITY``."""

    busy: bool = False

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        if self.busy:
            self.log.append(("refused", self.name, trio.current_time()))
            return ToolResult.error("no free slot", **{NO_CAPACITY: True})
        self.busy = True
        try:
            return await super().call(args, ctx)
        finally:
            self.busy = False


async def test_a_call_refused_for_capacity_is_made_again_after_its_batch(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tool = OneSlotTool("Slot", read_only=False, concurrent=True)
    bus = Bus()
    conversation = task()
    agent = spec(
        definition(),
        [_message(("Slot", 5.0), ("Slot", 5.0)), testing.say("done")],
        tools=selection(tool),
    )
    start = trio.current_time()
    with bus.subscribe(types=[ToolCallStarted, ToolCallEnded]) as events:
        await run_agent(agent, conversation, publisher=Publisher(bus, agent_id="a1"))
        seen = [events.receive_nowait() for _ in range(4)]
        with pytest.raises(trio.WouldBlock):
            events.receive_nowait()
    assert trio.current_time() - start == pytest.approx(10.0)
    assert [kind for kind, _, _ in tool.log] == ["start", "refused", "end", "start", "end"]
    assert [r.content for r in tool_results(conversation)] == ["Slot: ", "Slot: "]
    # One start and one end per call, though the refused one ran twice.
    assert [type(e).__name__ for e in seen].count("ToolCallStarted") == 2
    assert [type(e).__name__ for e in seen].count("ToolCallEnded") == 2


async def test_each_tool_call_has_its_own_error_boundary() -> None:
    broken, fine = SlowTool("Broken", fail=True), SlowTool("Fine")
    reply = Reply(tool_calls=[*testing.call("Broken").tool_calls, *testing.call("Fine").tool_calls])
    conversation = task()
    agent = spec(
        definition(),
        [reply, testing.call("Missing"), testing.say("ok")],
        tools=selection(broken, fine),
    )
    result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    broke, worked, missing = tool_results(conversation)
    assert broke.is_error
    assert "RuntimeError" in broke.content
    assert worked.content == "Fine: "
    assert not worked.is_error
    assert missing.is_error
    assert "not available" in missing.content


async def test_abort_ends_a_stalled_call_with_aborted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    control = RunControl()
    agent = spec(definition(), [testing.hang("thinking...")])
    result = None

    async def run() -> None:
        nonlocal result
        result = await run_agent(agent, task(), control=control)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await trio.sleep(7.0)
        control.abort()
    assert result is not None
    assert result.terminate_reason is TerminateReason.ABORTED
    assert result.status == "aborted"
    assert result.duration == pytest.approx(7.0)


async def test_abort_mid_tool_call_answers_the_call(autojump_clock: trio.testing.MockClock) -> None:
    control = RunControl()
    conversation = task()
    agent = spec(
        definition(), [testing.call("Note", seconds=50.0)], tools=selection(SlowTool("Note"))
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_agent(agent, conversation, control=control))
        await trio.sleep(1.0)
        control.abort()
    assert control.result is not None
    assert control.result.terminate_reason is TerminateReason.ABORTED
    last = conversation[-1]
    assert last.origin is Origin.TOOL_RESULTS
    assert "stopped before this call finished" in last.content[0].content  # type: ignore[union-attr]


async def test_outside_cancellation_propagates_and_records_an_aborted_result(
    autojump_clock: trio.testing.MockClock,
) -> None:
    control = RunControl()
    agent = spec(definition(), [testing.hang()])
    with trio.move_on_after(3.0):
        await run_agent(agent, task(), control=control)
        pytest.fail("the run should have been cancelled")
    assert control.result is not None
    assert control.result.terminate_reason is TerminateReason.ABORTED


async def test_follow_up_run_continues_the_same_conversation() -> None:
    recorder = testing.RecordingPolicy(lambda request: testing.say(f"answer {request.turn}"))
    agent = spec(definition(), recorder)
    conversation = task("first question")
    first = await run_agent(agent, conversation)
    conversation.append(Message.user("second question", origin=Origin.INPUT))
    second = await run_agent(agent, conversation)
    assert (first.text, second.text) == ("answer 0", "answer 1")
    assert second.turns == 1
    _, shown = recorder.requests[1]
    assert [m.text for m in shown] == ["first question", "answer 0", "second question"]


async def test_inputs_queued_during_a_run_join_at_the_next_turn() -> None:
    control = RunControl(inbox_capacity=1)
    assert control.add_input(Message.user("also check B", origin=Origin.INPUT))
    assert not control.add_input(Message.user("overflow"))
    recorder = testing.RecordingPolicy(testing.tool_loop("Note", turns=1, final="ok"))
    agent = spec(definition(), recorder, tools=selection(SlowTool("Note")))
    await run_agent(agent, task(), control=control)
    _, first = recorder.requests[0]
    assert [m.text for m in first] == ["Do the task.", "also check B"]


async def test_events_cover_every_step_in_order() -> None:
    bus = Bus()
    publisher = Publisher(bus, agent_id="a1", parent_id="lead", depth=1, nickname="Ada")
    provider = ScriptedProvider(
        [
            Reply(text="Looking.", tool_calls=testing.call("Note", text="x").tool_calls),
            testing.say("Done."),
        ],
        chunk_size=4,
    )
    agent = spec(definition(), provider, tools=selection(SlowTool("Note")))
    with bus.subscribe(capacity=100) as events:
        await run_agent(agent, task(), publisher=publisher)
        seen = []
        while True:
            try:
                seen.append(events.receive_nowait())
            except trio.WouldBlock:
                break
    kinds = [type(e).__name__ for e in seen]
    assert kinds == [
        "TurnStarted",
        "TextChunk",
        "TextChunk",
        "UsageReported",
        "ToolCallStarted",
        "ToolCallEnded",
        "TurnCompleted",
        "TurnStarted",
        "TextChunk",
        "TextChunk",
        "UsageReported",
        "TurnCompleted",
        "RunFinished",
    ]
    assert all(e.agent_id == "a1" and e.nickname == "Ada" and e.depth == 1 for e in seen)
    assert [e.seq for e in seen] == sorted(e.seq for e in seen)
    started = next(e for e in seen if isinstance(e, ToolCallStarted))
    ended = next(e for e in seen if isinstance(e, ToolCallEnded))
    assert (started.tool_name, started.input) == ("Note", {"text": "x"})
    assert ended.tool_use_id == started.tool_use_id
    assert not ended.is_error
    assert ended.duration >= 0
    assert "".join(e.text for e in seen[1:3] if isinstance(e, TextChunk)) == "Looking."
    turn = next(e for e in seen if isinstance(e, TurnCompleted))
    assert (turn.turn, turn.stop_reason, turn.tool_calls) == (1, "tool_use", 1)
    assert isinstance(seen[0], TurnStarted)
    assert seen[0].model == "claude-test"
    usage = [e for e in seen if isinstance(e, UsageReported)]
    assert usage[1].total == usage[0].usage + usage[1].usage
    finished = seen[-1]
    assert isinstance(finished, RunFinished)
    assert finished.terminate_reason == "goal"


async def test_no_events_are_built_without_subscribers() -> None:
    bus = Bus()
    agent = spec(definition(), [testing.say("quiet")])
    await run_agent(agent, task(), publisher=Publisher(bus, agent_id="a"))
    assert bus.statistics().published == 0


async def test_tool_use_ids_are_unique_and_results_answer_every_call() -> None:
    agent = spec(
        definition(),
        testing.tool_loop("Note", {"text": "t"}, turns=3),
        tools=selection(SlowTool("Note")),
    )
    conversation = task()
    await run_agent(agent, conversation)
    uses = [b.id for m in conversation for b in m.content if isinstance(b, ToolUseBlock)]
    answered = [b.tool_use_id for b in tool_results(conversation)]
    assert len(set(uses)) == 3
    assert uses == answered
    assert isinstance(conversation[-1].content[0], TextBlock)


async def test_abort_during_the_grace_turn_ends_with_aborted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    control = RunControl()
    agent = spec(definition(max_time=10.0, grace=30.0), lambda request: testing.hang())
    with bus.subscribe(types=[GracePeriodEnded]) as events:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: run_agent(
                    agent, task(), publisher=Publisher(bus, agent_id="a"), control=control
                )
            )
            await trio.sleep(15.0)
            control.abort()
        ended = events.receive_nowait()
    assert control.result is not None
    assert control.result.terminate_reason is TerminateReason.ABORTED
    assert control.result.grace == "timeout"
    assert control.result.duration == pytest.approx(15.0)
    assert isinstance(ended, GracePeriodEnded)
    assert ended.outcome == "aborted"


async def test_abort_before_the_run_starts_aborts_at_once() -> None:
    control = RunControl()
    control.abort()
    recorder = testing.RecordingPolicy(lambda request: testing.say("never"))
    result = await run_agent(spec(definition(), recorder), task(), control=control)
    assert result.terminate_reason is TerminateReason.ABORTED
    assert result.turns == 1  # the model call was started, then cancelled at its first checkpoint
    assert result.text is None
