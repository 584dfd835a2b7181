"""Reliability: tool and hook faults, end to end through a runtime, next to healthy siblings.

Every test runs several agents side by side in one runtime (``open_runtime``);
one of them meets the fault, and its siblings complete with their full results
and transcripts.

Tools (autojump clock):

- a tool that raises (a bug, a :class:`~subagents.tools.ToolError`) or returns
  no result gives the model an ``is_error`` tool result that says so, and the
  agent goes on to complete;
- a tool that hangs is ended by the agent's ``max_time_seconds`` (the call is
  answered as not completed, the grace turn follows), or by ``close`` within
  the close grace period;
- a tool that returns 50 MB of text is cut to ``MAX_RESULT_CHARS`` (with a
  note saying how much was dropped) in what the model reads and in the
  transcript, and the 50 MB is not kept anywhere.

Hooks (command hooks from the settings; real processes, so the real clock, with
timeouts of half a second):

- a hook that never exits is killed at its timeout at every event it is
  configured for, reported as timed out (bus event, statistics, log), its
  processes are gone, and the agent carries on;
- a hook that exits 2 on every call blocks every tool call with its stderr as
  the reason the model reads, never runs the tool, and the agent still ends:
  by its own final message once it gives up, or at ``max_turns`` if it never
  does; ``SubagentStop``'s exit 2 makes the agent go on with the hook's stderr,
  as in Claude Code, at most ``MAX_STOP_BLOCKS`` times;
- hooks that crash (a Python hook that raises, a command that is not there, an
  exit 1) reach the log only, never the model, and floods of output (5 MB on
  stdout or stderr) are cut to the hook output cap before anyone reads them.

The dispatch, cap and hook-runner mechanics are proven at their own level in
``tests/tools/test_registry.py``, ``tests/runtime/test_loop.py``
and ``tests/runtime/hooks/test_commands.py``.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed, Errored, Shutdown
from subagents.runtime import (
    Hook,
    HookFired,
    ModelRequest,
    Origin,
    Reply,
    TerminateReason,
    ToolCallEnded,
    ToolResultBlock,
    load_transcript,
)
from subagents.runtime._hooks.commands import DEFAULT_HOOK_OUTPUT_CAP
from subagents.runtime._hooks.run import MAX_STOP_BLOCKS
from subagents.tools import ToolContext, ToolError, ToolFlags, ToolResult
from subagents.tools._config import MAX_RESULT_CHARS
from tests.reliability.siblings import check_healthy, make_world, scripted, spawn_siblings
from tests.runtime.helpers import NoteArgs, SlowTool
from tests.runtime.world import World, drain, tool_results


@attrs.define
class FaultyTool:
    """A tool whose call does ``behave()``; it counts its calls."""

    name: str
    behave: Callable[[], Awaitable[Any]]
    calls: int = 0
    description: str = "A tool that misbehaves, for the reliability tests."
    arguments_type: type[msgspec.Struct] = NoteArgs

    @property
    def flags(self) -> ToolFlags:
        return ToolFlags(read_only=True, background_safe=True)

    async def call(self, args: Any, ctx: ToolContext, /) -> Any:
        self.calls += 1
        return await self.behave()


async def explode() -> ToolResult:
    raise RuntimeError("the disk is on fire")


async def refuse() -> ToolResult:
    raise ToolError("The index is locked; try again in a minute.")


async def vanish() -> None:
    return None


async def stall() -> ToolResult:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


async def flood() -> ToolResult:
    return ToolResult.ok("x" * 50_000_000)


async def probe() -> ToolResult:
    return ToolResult.ok("probed")


# -- tools ------------------------------------------------------------------------------------


async def test_a_tool_that_fails_gives_the_model_a_tool_error_and_the_agent_goes_on(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, "Explode, Refuse, Vanish")
    tools = [
        FaultyTool("Explode", explode),
        FaultyTool("Refuse", refuse),
        FaultyTool("Vanish", vanish),
    ]
    replies = [
        testing.call("Explode"),
        testing.call("Refuse"),
        testing.call("Vanish"),
        testing.say("Worked around three broken tools."),
    ]
    recorder = testing.RecordingPolicy(lambda request: replies[request.turn])
    async with world.open(scripted(recorder), tools=[*tools, SlowTool("Note")]) as rt:
        events = rt.subscribe(policy="block", capacity=10_000)
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Use the tools.")).agent_id
        await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert rt.status(faulty) == Completed("Worked around three broken tools.")
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.turns, result.tool_uses) == (
            TerminateReason.GOAL,
            4,
            3,
        )
        answers = tool_results(rt.conversation(faulty).messages)
        path = rt.transcript_path(faulty)
        seen = drain(events)
        check_healthy(rt, siblings)
    assert [t.calls for t in tools] == [1, 1, 1]
    assert [(a.content, a.is_error) for a in answers] == [
        (
            "Tool 'Explode' failed unexpectedly (RuntimeError: the disk is on fire). "
            "This is a bug in the tool, not in your arguments; try another approach.",
            True,
        ),
        ("The index is locked; try again in a minute.", True),
        ("Tool 'Vanish' returned no result.", True),
    ]
    # The model read each error on its next turn; the bus and the transcript say the same.
    shown = [messages for request, messages in recorder.requests if request.agent_type == "faulty"]
    assert [tool_results(messages)[-1] for messages in shown[1:]] == answers
    ended = [e for e in seen if isinstance(e, ToolCallEnded) and e.agent_id == faulty]
    assert [(e.tool_name, e.is_error) for e in ended] == [
        ("Explode", True),
        ("Refuse", True),
        ("Vanish", True),
    ]
    assert path is not None
    assert tool_results([r.message for r in load_transcript(path).messages]) == answers


async def test_a_tool_that_hangs_is_ended_by_the_agent_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, "Stall", runConfig={"maxTimeSeconds": 30, "gracePeriodSeconds": 5})
    stalled = FaultyTool("Stall", stall)

    def policy(request: ModelRequest) -> Reply:
        if request.grace:
            return testing.finish(result="Stalled; here is what I have.")
        return testing.call("Stall", "Calling the slow tool.")

    async with world.open(scripted(policy), tools=[stalled, SlowTool("Note")]) as rt:
        start = trio.current_time()
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Use the slow tool.")).agent_id
        await rt.wait([faulty, *siblings], timeout=600, mode="all")
        elapsed = trio.current_time() - start
        assert 30 <= elapsed < 31
        assert rt.status(faulty) == Completed("Stalled; here is what I have.")
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.grace, result.tool_uses) == (
            TerminateReason.GOAL,
            "timeout",
            1,
        )
        messages = list(rt.conversation(faulty))
        check_healthy(rt, siblings)
    assert stalled.calls == 1
    hung = tool_results(messages)[0]
    assert hung.is_error
    assert hung.content == "Not completed: the time limit was reached before this call finished."
    assert [m.origin for m in messages] == [
        Origin.TASK,
        Origin.MODEL,
        Origin.TOOL_RESULTS,  # the hung call, answered
        Origin.GRACE,
        Origin.MODEL,
        Origin.TOOL_RESULTS,  # complete_task accepted
    ]


async def test_a_tool_that_hangs_is_ended_by_close_within_the_grace_period(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, "Stall")
    stalled = FaultyTool("Stall", stall)
    provider = scripted([testing.call("Stall")], seconds=50.0)  # siblings outlast the close
    async with world.open(provider, tools=[stalled, SlowTool("Note")]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Use the slow tool.")).agent_id
        assert (await rt.wait([faulty], timeout=10)).timed_out  # the call is stuck
        assert stalled.calls == 1
        before = trio.current_time()
        await rt.close(faulty)
        assert trio.current_time() - before < world.config().limits.close_grace_period
        assert rt.status(faulty) == Shutdown()
        result = rt.result(faulty)
        assert result is not None
        assert result.terminate_reason is TerminateReason.ABORTED
        (answer,) = tool_results(rt.conversation(faulty).messages)
        assert answer == ToolResultBlock(
            answer.tool_use_id,
            "Not completed: the run was stopped before this call finished.",
            True,
        )
        await rt.wait(siblings, timeout=600, mode="all")
        check_healthy(rt, siblings)


async def test_a_huge_tool_output_is_cut_to_the_documented_bound_everywhere(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, "Flood")
    recorder = testing.RecordingPolicy(
        lambda request: testing.call("Flood") if request.turn == 0 else testing.say("Skimmed it.")
    )
    tracemalloc.start()
    try:
        async with world.open(
            scripted(recorder), tools=[FaultyTool("Flood", flood), SlowTool("Note")]
        ) as rt:
            siblings = await spawn_siblings(rt)
            faulty = (await rt.spawn("faulty", "Read the flood.")).agent_id
            await rt.wait([faulty, *siblings], timeout=60, mode="all")
            assert rt.status(faulty) == Completed("Skimmed it.")
            (answer,) = tool_results(rt.conversation(faulty).messages)
            path = rt.transcript_path(faulty)
            check_healthy(rt, siblings)
            held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    note = f"\n[result truncated: {50_000_000 - MAX_RESULT_CHARS} more characters]"
    assert answer.content == "x" * MAX_RESULT_CHARS + note
    assert not answer.is_error
    shown = [messages for request, messages in recorder.requests if request.agent_type == "faulty"]
    assert tool_results(shown[-1]) == [answer]  # what the model read
    assert path is not None
    assert tool_results([r.message for r in load_transcript(path).messages]) == [answer]
    assert path.stat().st_size < 2 * MAX_RESULT_CHARS  # the transcript holds the cut result
    assert peak >= 50_000_000  # the tool did make its 50 MB ...
    assert held < 10_000_000  # ... and nothing kept it


# -- hooks (real processes, real clock) -----------------------------------------------------


def hook(command: str, *, matcher: str | None = None, timeout: float = 0.5) -> list[dict[str, Any]]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


async def exited(pid: int) -> bool:
    """Whether ``pid`` has exited (or exits within 2 s): woken by its pidfd, no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        with trio.move_on_after(2):
            await trio.lowlevel.wait_readable(fd)
            return True
        return False
    finally:
        os.close(fd)


def hook_log(world: World, session_id: str) -> list[dict[str, Any]]:
    log = world.state / "logs" / f"{session_id}.jsonl"
    return [
        line
        for line in map(json.loads, log.read_text().splitlines())
        if line["event"] == "hook problem"
    ]


async def test_a_hook_that_never_exits_is_killed_at_its_timeout_and_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    # The shell leaves a background sleeper and becomes a sleeper itself: both must go.
    never = f"sleep 1000 & echo $! >> {pids}; echo $$ >> {pids}; exec sleep 1000"
    world = make_world(tmp_path, "Probe")
    world.hooks = {
        "SubagentStart": hook(never, matcher="faulty"),
        "PreToolUse": hook(never, matcher="Probe"),
        "SubagentStop": hook(never, matcher="faulty"),
    }
    probed = FaultyTool("Probe", probe)
    provider = scripted([testing.call("Probe"), testing.say("Probed.")], seconds=0.0)
    async with world.open(provider, tools=[probed, SlowTool("Note")]) as rt:
        events = rt.subscribe(policy="block", capacity=10_000)
        start = trio.current_time()
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Probe it.")).agent_id
        await rt.wait([faulty, *siblings], timeout=30, mode="all")
        elapsed = trio.current_time() - start
        assert rt.status(faulty) == Completed("Probed.")
        (answer,) = tool_results(rt.conversation(faulty).messages)
        stats = rt.statistics().hooks
        fired = [e for e in drain(events) if isinstance(e, HookFired)]
        check_healthy(rt, siblings)
    assert 1.5 <= elapsed < 4  # three timeouts of 0.5 s, one after the other
    assert (answer.content, answer.is_error) == ("probed", False)  # a timeout blocks nothing
    assert probed.calls == 1
    assert [(e.agent_id, e.hook_event_name, e.timed_out, e.exit_code) for e in fired] == [
        (faulty, event, True, None) for event in ("SubagentStart", "PreToolUse", "SubagentStop")
    ]
    assert all(0.5 <= e.duration < 1.5 for e in fired)
    assert (stats.timed_out, stats.blocked) == (3, 0)
    problems = hook_log(world, rt.session_id)
    assert [(p["agent_id"], p["hook_event"]) for p in problems] == [
        (faulty, event) for event in ("SubagentStart", "PreToolUse", "SubagentStop")
    ]
    assert all("timed out after 0.5" in p["problem"] for p in problems)
    assert all("and was stopped" in p["problem"] for p in problems)
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 6  # two processes per firing
    for pid in started:
        assert await exited(pid), f"hook process {pid} outlived its timeout"


async def test_hooks_that_crash_or_flood_are_contained_and_the_agent_goes_on(
    tmp_path: Path,
) -> None:
    """A Python hook that raises, a command that is not there, one that exits 1, and
    floods of output on stdout and stderr: crashes reach the log only, floods are cut
    to the hook output cap, and the agent's work is untouched."""
    flood = f"cat > /dev/null; head -c {5 * 2**20} /dev/zero | tr '\\0' x"
    world = make_world(tmp_path, "Probe")
    world.hooks = {
        "SubagentStart": hook(f"{flood}; exit 0", matcher="faulty", timeout=10),
        "PreToolUse": hook(f"{flood} >&2; exit 2", matcher="Probe", timeout=10)
        + hook("no-such-command-anywhere", matcher="Probe", timeout=10),
        "PostToolUse": hook("cat > /dev/null; echo broken >&2; exit 1", timeout=10),
    }

    def explode(payload: Any) -> None:
        raise RuntimeError("the Python hook broke")

    python_hook = Hook("PreToolUse", function=explode, matcher="Probe")
    probed = FaultyTool("Probe", probe)
    recorder = testing.RecordingPolicy(gives_up)
    provider = scripted(recorder, seconds=0.0)
    async with world.open(provider, tools=[probed, SlowTool("Note")], hooks=[python_hook]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Probe it.")).agent_id
        waited = await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert not waited.timed_out
        status = rt.status(faulty)
        conversation = list(rt.conversation(faulty))
        check_healthy(rt, siblings)
    assert probed.calls == 0  # the exit-2 flood blocked the call
    (answer,) = tool_results(conversation)
    assert answer.is_error
    assert set(answer.content[:1000]) == {"x"}
    assert len(answer.content) <= DEFAULT_HOOK_OUTPUT_CAP + 200  # cut, with a note
    assert status == Completed(f"Blocked ({answer.content}); giving up.")
    (context,) = [m for m in conversation if m.origin is Origin.NOTICE]
    assert len(context.text) <= DEFAULT_HOOK_OUTPUT_CAP + 200  # the start hook's flood, cut
    problems = [p["problem"] for p in hook_log(world, rt.session_id)]
    assert any("the Python hook broke" in p for p in problems)
    assert any("no-such-command-anywhere" in p for p in problems)
    assert sum("exited 1: broken" in p for p in problems) == 2  # the siblings' Note calls
    # The model never saw a crash: only the blocking hook's words reached it.
    seen = " ".join(m.text for _, shown in recorder.requests for m in shown)
    assert "the Python hook broke" not in seen
    assert "no-such-command-anywhere" not in seen


def keeps_probing(request: ModelRequest) -> Reply:
    return testing.call("Probe", "Trying again.")


def gives_up(request: ModelRequest) -> Reply:
    if request.turn == 0:
        return testing.call("Probe", "Trying.")
    reason = tool_results(request.messages)[-1].content
    return testing.say(f"Blocked ({reason}); giving up.")


@pytest.mark.parametrize("stubborn", [False, True], ids=["gives-up", "stubborn"])
async def test_a_hook_that_exits_2_on_every_call_blocks_every_call_and_the_agent_still_ends(
    tmp_path: Path, stubborn: bool
) -> None:
    refuse_all = 'cat > /dev/null; echo "policy says no to everything" >&2; exit 2'
    world = make_world(tmp_path, "Probe", maxTurns=3)
    world.hooks = {
        "SubagentStart": hook(refuse_all, matcher="faulty", timeout=5),
        "PreToolUse": hook(refuse_all, matcher="Probe", timeout=5),
        "PostToolUse": hook(refuse_all, matcher="Probe", timeout=5),
        "SubagentStop": hook(refuse_all, matcher="faulty", timeout=5),
    }
    probed = FaultyTool("Probe", probe)
    provider = scripted(keeps_probing if stubborn else gives_up, seconds=0.0)
    async with world.open(provider, tools=[probed, SlowTool("Note")]) as rt:
        events = rt.subscribe(policy="block", capacity=10_000)
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Probe it.")).agent_id
        waited = await rt.wait([faulty, *siblings], timeout=30, mode="all")
        assert not waited.timed_out
        status = rt.status(faulty)
        result = rt.result(faulty)
        answers = tool_results(rt.conversation(faulty).messages)
        fired = [e for e in drain(events) if isinstance(e, HookFired) and e.agent_id == faulty]
        path = rt.transcript_path(faulty)
        check_healthy(rt, siblings)
    assert probed.calls == 0  # never ran
    assert result is not None
    blocked = [a for a in answers if a.content == "policy says no to everything"]
    assert all(a.is_error for a in blocked)
    if stubborn:
        # Three blocked calls, then the grace turn (only complete_task offered) is missed too.
        assert len(blocked) == 3
        assert (result.terminate_reason, result.turns, result.grace) == (
            TerminateReason.MAX_TURNS,
            4,
            "max_turns",
        )
        assert status == Errored(f"AgentRunFailed: {result.describe()}")
        assert result.describe().startswith(
            "max_turns: the agent used all its turns before completing its task"
        )
        assert answers[-1].content == (
            "Only complete_task is available in this last turn; the Probe call was not run."
        )
    else:
        # One blocked call, then it gives up; SubagentStop's exit 2 blocks the stop
        # and the agent goes on (it gives up again), MAX_STOP_BLOCKS times, then stops.
        assert answers == blocked
        assert len(blocked) == 1
        assert status == Completed("Blocked (policy says no to everything); giving up.")
        assert result.terminate_reason is TerminateReason.GOAL
    # SubagentStart fired once (exit 2 there cannot block), PreToolUse once per call
    # the model made outside the grace turn, SubagentStop at the end of each run
    # that ended normally and once when it failed, PostToolUse never (no call ran).
    names = [e.hook_event_name for e in fired]
    stops = 1 if stubborn else 1 + MAX_STOP_BLOCKS
    assert names == ["SubagentStart", *["PreToolUse"] * len(blocked), *["SubagentStop"] * stops]
    assert all(e.exit_code == 2 for e in fired)
    problems = hook_log(world, rt.session_id)
    assert [(p["agent_id"], p["hook_event"]) for p in problems] == [(faulty, "SubagentStart")]
    assert "exited 2: policy says no to everything" in problems[0]["problem"]
    assert path is not None
    records = load_transcript(path).results
    assert len(records) == (1 if stubborn else 1 + MAX_STOP_BLOCKS)
    assert records[-1].terminate_reason is result.terminate_reason


async def test_a_subagent_stop_hook_that_exits_2_makes_the_agent_go_on_with_its_feedback(
    tmp_path: Path,
) -> None:
    """Claude Code's rule: exit 2 blocks the stop and stderr is the agent's next input;
    the hook is told ``stop_hook_active`` the second time, and lets it stop."""
    world = make_world(tmp_path, "Probe")
    log = tmp_path / "stop-payloads.jsonl"
    world.hooks = {
        "SubagentStop": hook(
            f'payload=$(cat); echo "$payload" >> {log}; '
            'case "$payload" in *\'"stop_hook_active":true\'*) exit 0;; esac; '
            "echo 'You forgot the pears.' >&2; exit 2",
            matcher="faulty",
            timeout=5,
        )
    }
    recorder = testing.RecordingPolicy(lambda request: testing.say("Counted."))
    async with world.open(scripted(recorder), tools=[SlowTool("Note")]) as rt:
        faulty = (await rt.spawn("faulty", "Count the fruit.")).agent_id
        await rt.wait([faulty], timeout=30)
        assert rt.status(faulty) == Completed("Counted.")
        assert rt.result(faulty) is not None
    assert len(recorder.requests) == 2  # the first run, then the one the hook asked for
    _, second = recorder.requests[1]
    assert second[-1].text == "You forgot the pears."
    assert second[-1].origin is Origin.NOTICE
    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["stop_hook_active"] for p in payloads] == [False, True]


async def test_a_subagent_stop_hook_that_always_exits_2_cannot_keep_the_agent_forever(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path, "Probe")
    world.hooks = {"SubagentStop": hook("echo 'Not yet.' >&2; exit 2", matcher="faulty")}
    recorder = testing.RecordingPolicy(lambda request: testing.say("Counted."))
    async with world.open(scripted(recorder), tools=[SlowTool("Note")]) as rt:
        faulty = (await rt.spawn("faulty", "Count the fruit.")).agent_id
        waited = await rt.wait([faulty], timeout=60)
        assert not waited.timed_out
        assert rt.status(faulty) == Completed("Counted.")
    assert len(recorder.requests) == 1 + MAX_STOP_BLOCKS
