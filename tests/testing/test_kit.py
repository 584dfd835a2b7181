"""The property-test kit of ``subagents.testing``: directives, operations, the checker."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given, settings

from subagents import testing
from subagents.actors import (
    PENDING_INIT,
    RUNNING,
    SHUTDOWN,
    AgentSpawned,
    Completed,
    Lagged,
    StatusChanged,
    SupervisorStatistics,
)
from subagents.runtime import (
    COMPLETE_TASK,
    ActivationStarted,
    HookFired,
    Message,
    ModelRequest,
    Origin,
    Reply,
    ToolResultBlock,
)
from subagents.testing import ScriptedBehavior


def _request(*messages: Message, grace: bool = False) -> ModelRequest:
    return ModelRequest(
        model="m", system="s", messages=messages, tools=(), grace=grace, agent_type="worker"
    )


def test_the_newest_directive_decides_the_reply() -> None:
    policy = testing.DirectivePolicy(tool="Note", arguments={"text": "x"})
    task = Message.user(testing.directive(ScriptedBehavior.TOOL, "look"), origin=Origin.TASK)
    first = policy(_request(task))
    assert [(c.name, dict(c.input)) for c in first.tool_calls] == [("Note", {"text": "x"})]
    results = Message("user", (ToolResultBlock("t", "ok"),), Origin.TOOL_RESULTS)
    assert policy(_request(task, Message.assistant("calling"), results)).text == "done (tool)"
    hang = Message.user(testing.directive(ScriptedBehavior.HANG), origin=Origin.INPUT)
    assert policy(_request(task, Message.assistant("done"), hang)).hang
    assert policy(_request(task, hang, grace=True)).hang
    fail = Message.user(testing.directive(ScriptedBehavior.FAIL), origin=Origin.INPUT)
    assert policy(_request(fail)).error is not None
    malformed = policy(_request(Message.user(testing.directive(ScriptedBehavior.MALFORMED))))
    assert malformed.tool_calls[0].input == '{"path": '
    plain = policy(_request(Message.user("no directive here")))
    assert plain.text == "done (finish)"
    graced = policy(_request(task, grace=True))
    assert graced.tool_calls[0].name == COMPLETE_TASK


@settings(max_examples=50)
@given(ops=testing.operations(max_size=10))
def test_operation_sequences_start_with_a_spawn_and_end_any_cancel(ops: list[object]) -> None:
    assert isinstance(ops[0], testing.Spawn)
    cancels = [i for i, op in enumerate(ops) if isinstance(op, testing.Cancel)]
    assert cancels in ([], [len(ops) - 1])
    assert 1 <= len(ops) <= 10


@settings(max_examples=30)
@given(script=testing.agent_scripts(max_tool_turns=2))
def test_agent_scripts_end_with_an_answer_or_a_fault(script: list[Reply]) -> None:
    *calls, last = script
    assert len(calls) <= 2
    assert all(reply.tool_calls for reply in calls)
    assert last.text or last.tool_calls or last.error is not None or last.hang


def _envelope(agent: str, seq: int) -> dict[str, object]:
    return {"agent_id": agent, "parent_id": None, "depth": 0, "nickname": "Ada", "seq": seq}


def test_the_checker_reports_each_broken_promise(tmp_path: Path) -> None:
    checker = testing.InvariantChecker(max_threads=1, state_dir=tmp_path)
    checker.handle(AgentSpawned(label="w", **_envelope("a", 1)))  # type: ignore[arg-type]
    checker.handle(StatusChanged(status=PENDING_INIT, **_envelope("a", 2)))  # type: ignore[arg-type]
    checker.handle(StatusChanged(status=RUNNING, **_envelope("a", 3)))  # type: ignore[arg-type]
    checker.handle(ActivationStarted(activation=1, **_envelope("a", 4)))  # type: ignore[arg-type]
    checker.handle(
        HookFired(  # type: ignore[arg-type]
            hook_event_name="SubagentStart",
            hook="h",
            exit_code=0,
            timed_out=False,
            error=None,
            duration=0.0,
            **_envelope("a", 5),
        )
    )
    # A run ends with no result on disk and no SubagentStop; then an illegal transition.
    checker.handle(StatusChanged(status=Completed("x"), **_envelope("a", 6)))  # type: ignore[arg-type]
    checker.handle(StatusChanged(status=PENDING_INIT, **_envelope("a", 7)))  # type: ignore[arg-type]
    checker.handle(StatusChanged(status=RUNNING, **_envelope("b", 5)))  # type: ignore[arg-type]
    checker.handle(Lagged(dropped=3))
    stats = SupervisorStatistics(
        live=2, peak_live=2, open=1, tasks=1, spawned=1, revived=0, completed=0, errored=0,
        shutdown=0, failed_spawns=0, unresponsive=0, max_threads=1, max_depth=1,
    )  # fmt: skip
    checker.check_after_exit(stats)
    text = "\n".join(checker.violations)
    for fragment in (
        "1 SubagentStart but 0 SubagentStop",
        "its run ended completed with no result on disk",
        "illegal status transition completed -> pending_init",
        "seq 5 after 7",
        "a status before its spawn event",
        "3 events were lost",
        "kernel: 2 live agents (max_threads=1)",
        "after exit: 1 tasks, 2 live, 1 open agents left",
    ):
        assert fragment in text, fragment
    with pytest.raises(AssertionError, match="invariant violation"):
        checker.assert_ok()


def test_the_checker_forgets_finished_agents_and_still_catches_their_stray_events() -> None:
    checker = testing.InvariantChecker(max_threads=2)
    seq = iter(range(1, 100))

    def feed(agent: str, *statuses: object) -> None:
        for status in statuses:
            checker.handle(StatusChanged(status=status, **_envelope(agent, next(seq))))  # type: ignore[arg-type]

    for agent in ("a", "b"):
        checker.handle(AgentSpawned(label="w", **_envelope(agent, next(seq))))  # type: ignore[arg-type]
        feed(agent, PENDING_INIT, RUNNING)
    feed("a", Completed("x"))
    assert checker.forget_finished() == 1
    assert set(checker.final_statuses()) == {"b"}  # a running agent is kept
    checker.handle(AgentSpawned(label="w", **_envelope("a", next(seq))))  # type: ignore[arg-type]
    feed("a", PENDING_INIT, RUNNING, SHUTDOWN)  # brought back: a new life, checked as ever
    assert checker.violations == []
    assert checker.forget_finished() == 1
    feed("a", RUNNING)  # a forgotten agent's stray status: still a violation
    assert "a: a status before its spawn event" in checker.violations


async def test_the_echo_worker_runs_as_many_turns_as_asked(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The benchmarks' agent type, 10 turns by default and any length on request (the
    instruction count splits an agent's cost with runs of 2 and of 10 turns)."""
    from subagents import open_runtime
    from subagents.runtime import RuntimeConfig, TerminateReason

    project, home, state = testing.echo_worker_project(tmp_path)
    config = RuntimeConfig(state_dir=state)
    for turns in (1, 2, testing.ECHO_WORKER_TURNS):
        provider = testing.echo_worker_provider(turns=turns)
        async with open_runtime(
            config, cwd=project, home=home, env={}, provider=provider, tools=[testing.EchoTool()]
        ) as rt:
            handle = await rt.spawn(testing.ECHO_WORKER, "Ping.")
            await rt.wait([handle.agent_id], timeout=30)
            result = rt.result(handle.agent_id)
        assert result is not None
        assert (result.terminate_reason, result.turns) == (TerminateReason.GOAL, turns)
    with pytest.raises(ValueError, match="at least 1 turn"):
        testing.echo_worker_provider(turns=0)
