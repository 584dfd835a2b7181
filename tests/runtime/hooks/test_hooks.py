"""Hooks: configuration, matchers, Python hooks, and the once-per-run Start/Stop guarantee.

Everything here is in-process (Python hooks, the parsers) and runs on the
autojump clock where time matters; real shell commands are tested in
``test_commands.py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from subagents import SubagentsError
from subagents.actors import Bus
from subagents.agents import HookSpec
from subagents.runtime._exceptions import HookConfigError
from subagents.runtime._hooks.commands import DEFAULT_HOOK_TIMEOUT, HookEvent, HookPayload
from subagents.runtime._hooks.run import subagent_run_hooks
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import (
    Hook,
    HookFired,
    HookFunction,
    HookReply,
    hooks_from_settings,
    hooks_from_specs,
)

PRE = HookEvent.PRE_TOOL_USE
POST = HookEvent.POST_TOOL_USE
START = HookEvent.SUBAGENT_START
STOP = HookEvent.SUBAGENT_STOP


def payload(event: HookEvent = PRE, **fields: Any) -> HookPayload:
    base: dict[str, Any] = {
        "agent_id": "agent-1",
        "agent_type": "Explore",
        "parent_id": "lead",
        "depth": 1,
    }
    if event.is_tool_event:
        base |= {"tool_use_id": "toolu_1", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    return HookPayload(hook_event_name=event.value, **(base | fields))


def replying(reply: HookReply | None, calls: list[HookPayload] | None = None) -> HookFunction:
    async def hook(p: HookPayload) -> HookReply | None:
        if calls is not None:
            calls.append(p)
        return reply

    return hook


def sleeping(seconds: float, calls: list[str] | None = None, name: str = "") -> HookFunction:
    async def hook(p: HookPayload) -> HookReply | None:
        await trio.sleep(seconds)
        if calls is not None:
            calls.append(name)
        return HookReply.context(name) if name else None

    return hook


# --- configuration -------------------------------------------------------------------------


def test_settings_in_claude_code_shape() -> None:
    settings = {
        "permissions": {"allow": ["Read"]},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash|Write",
                    "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5}],
                },
                {"matcher": "*", "hooks": [{"type": "command", "command": "log"}]},
            ],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "echo ctx"}]}],
            "Stop": [{"matcher": "x", "hooks": [{"type": "command", "command": "./done.sh"}]}],
            "SessionStart": [{"hooks": [{"type": "prompt", "prompt": "ignored"}]}],
        },
    }
    hooks = hooks_from_settings(settings)
    assert hooks == (
        Hook(PRE, command="./check.sh", matcher="Bash|Write", timeout_seconds=5.0),
        Hook(PRE, command="log"),
        Hook(START, command="echo ctx"),
        Hook(HookEvent.STOP, command="./done.sh", matcher="x"),
    )
    assert all(h.scope == "global" for h in hooks)
    assert hooks[1].matcher is None
    assert hooks[1].timeout_seconds == DEFAULT_HOOK_TIMEOUT
    assert hooks_from_settings({}) == ()
    assert hooks_from_settings({"hooks": None}) == ()


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ([], "settings must be a mapping"),
        ({"hooks": []}, "hooks must be a mapping"),
        ({"hooks": {"PreToolUs": []}}, "hooks.PreToolUs is not a hook event"),
        ({"hooks": {"PreToolUse": {}}}, "hooks.PreToolUse must be a list"),
        ({"hooks": {"PreToolUse": ["x"]}}, "hooks.PreToolUse[0] must be a mapping"),
        ({"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}}, "[0].matcher must be text"),
        ({"hooks": {"PostToolUse": [{"matcher": "Bash"}]}}, "hooks.PostToolUse[0].hooks must"),
        ({"hooks": {"PreToolUse": [{"hooks": [1]}]}}, "[0].hooks[0] must be a mapping"),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "?"}]}]}},
            "hooks.PreToolUse[0].hooks[0].type must be 'command'",
        ),
        ({"hooks": {"SubagentStop": [{"hooks": [{"command": " "}]}]}}, ".command must be"),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"command": "x", "timeout": "5"}]}]}},
            "hooks[0].timeout must be a number of seconds, not a str",
        ),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"command": "x", "timeout": True}]}]}},
            "timeout must be a number",
        ),
        (
            {"hooks": {"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]}},
            "timeout must be positive and finite",
        ),
        (
            {"hooks": {"PreToolUse": [{"matcher": "mcp__(", "hooks": [{"command": "x"}]}]}},
            "hooks.PreToolUse[0].matcher: matcher 'mcp__(' is not a valid regular expression",
        ),
    ],
)
def test_bad_settings_name_the_key(settings: Any, fragment: str) -> None:
    with pytest.raises(HookConfigError) as info:
        hooks_from_settings(settings)
    assert fragment in str(info.value)
    assert isinstance(info.value, SubagentsError)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_entries = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["command", "prompt"]) | _json,
        "command": st.sampled_from(["echo hi", ""]) | _json,
        "timeout": st.sampled_from([1, 0.5, 0, -3, math.inf, math.nan]) | _json,
    },
)
_groups = st.fixed_dictionaries(
    {},
    optional={
        "matcher": st.sampled_from(["Bash", "mcp__.*", "(", "*", ""]) | _json,
        "hooks": st.lists(_entries | _json, max_size=3) | _json,
    },
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(
            st.sampled_from([e.value for e in HookEvent] + ["Stop", "Nope"]) | st.text(max_size=5),
            st.lists(_groups | _json, max_size=3) | _json,
            max_size=4,
        )
        | _json
    },
)


@settings(max_examples=300, deadline=None)
@given(_settings | _json)
def test_random_settings_give_hooks_or_a_typed_error(value: Any) -> None:
    error: HookConfigError | None = None
    hooks: tuple[Hook, ...] = ()
    try:
        hooks = hooks_from_settings(value)
    except HookConfigError as exc:
        error = exc
    assert error is None or str(error)
    assert all(isinstance(h, Hook) and h.command for h in hooks)
    assert all(0 < h.timeout_seconds < math.inf for h in hooks)


def test_agent_scoped_hooks_from_specs() -> None:
    hooks = hooks_from_specs(
        [HookSpec("PreToolUse", "./guard.sh", "Bash"), HookSpec("SubagentStop", "done", None, 3)]
    )
    assert hooks == (
        Hook(PRE, command="./guard.sh", matcher="Bash", scope="agent"),
        Hook(STOP, command="done", timeout_seconds=3, scope="agent"),
    )
    with pytest.raises(HookConfigError, match="not a valid regular expression"):
        hooks_from_specs([HookSpec("PreToolUse", "x", "[")])


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "exactly one of 'command' and 'function'"),
        ({"command": "x", "function": replying(None)}, "exactly one"),
        ({"command": "x", "timeout_seconds": math.inf}, "positive and finite"),
        ({"command": "x", "timeout_seconds": 0}, "positive and finite"),
    ],
)
def test_hook_validation(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(HookConfigError, match=fragment):
        Hook(PRE, **kwargs)


def test_unknown_event_is_a_config_error() -> None:
    with pytest.raises(HookConfigError, match="unknown hook event 'SessionStart'"):
        Hook("SessionStart", command="x")
    assert Hook("PostToolUse", command="x").event is POST


@pytest.mark.parametrize(
    ("matcher", "name", "expected"),
    [
        (None, "Anything", True),
        ("", "Anything", True),
        ("*", "Anything", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Bash|Write", "Write", True),
        ("Bash|Write", "Edit", False),
        ("mcp__.*", "mcp__github__search", True),
        ("mcp__.*", "Read", False),
        ("Notebook.*", "NotebookEdit", True),
        ("^Edit$", "MultiEdit", False),
        ("Edit$", "MultiEdit", True),
    ],
)
def test_matchers_follow_claude_code(matcher: str | None, name: str, expected: bool) -> None:
    assert Hook(PRE, command="x", matcher=matcher).matches(name) is expected


def test_a_matcher_never_matches_a_missing_subject() -> None:
    assert not Hook(PRE, command="x", matcher="Bash").matches(None)
    assert Hook(PRE, command="x").matches(None)


# --- Python hooks and the decision table -------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "reply", "blocked", "reason", "feedback", "user"),
    [
        (PRE, HookReply(0, stdout="fine"), False, None, (), 0),
        (PRE, HookReply.block("no rm -rf"), True, "no rm -rf", (), 0),
        (PRE, HookReply(2), True, "The call was blocked by a PreToolUse hook", (), 0),
        (PRE, HookReply(1, stderr="oops"), False, None, (), 1),
        (POST, HookReply(2, stderr="lint failed"), False, None, ("lint failed",), 0),
        (POST, HookReply(0, stdout="hidden"), False, None, (), 0),
        (START, HookReply.context("Use tabs."), False, None, ("Use tabs.",), 0),
        (START, HookReply(2, stderr="cannot block"), False, None, (), 1),
        (STOP, HookReply(0, stdout="hidden"), False, None, (), 0),
        (STOP, HookReply(2, stderr="tests fail"), True, "tests fail", (), 0),
        (STOP, HookReply(7, stderr="weird"), False, None, (), 1),
        (STOP, None, False, None, (), 0),
    ],
)
async def test_exit_code_table(
    event: HookEvent,
    reply: HookReply | None,
    blocked: bool,
    reason: str | None,
    feedback: tuple[str, ...],
    user: int,
) -> None:
    runner = HookRunner([Hook(event, function=replying(reply))])
    outcome = await runner.fire(event, payload(event))
    assert outcome.blocked is blocked
    if reason is None:
        assert outcome.reason is None
    else:
        assert outcome.reason is not None
        assert outcome.reason.startswith(reason)
    assert outcome.feedback == feedback
    assert len(outcome.user_messages) == user
    assert len(outcome.results) == 1


def _json(**fields: Any) -> HookReply:
    return HookReply(0, stdout=json.dumps(fields))


def _specific(event: HookEvent, **fields: Any) -> HookReply:
    return _json(hookSpecificOutput={"hookEventName": event.value, **fields})


@pytest.mark.parametrize(
    ("event", "reply", "blocked", "reason", "feedback", "user"),
    [
        # Stop/SubagentStop decision control: block with a reason, or let it stop.
        (STOP, _json(decision="block", reason="Run the tests."), True, "Run the tests.", (), 0),
        (STOP, _json(decision="block"), False, None, (), 1),  # Claude requires the reason
        (STOP, _json(decision="block", reason="  "), False, None, (), 1),
        (STOP, _json(decision="block", reason="x", **{"continue": False}), False, None, (), 1),
        (STOP, _json(decision="approve", reason="fine"), False, None, (), 0),
        (STOP, _json(), False, None, (), 0),
        (STOP, _json(systemMessage="Tests are slow today."), False, None, (), 1),
        # Exit 2 is read from stderr; stdout JSON is not read then.
        (STOP, HookReply(2, stdout='{"decision": "block", "reason": "no"}'), False, None, (), 1),
        # SubagentStart: additionalContext goes to the subagent, never the raw JSON.
        (START, _specific(START, additionalContext="Use tabs."), False, None, ("Use tabs.",), 0),
        (
            START,
            _json(hookSpecificOutput={"additionalContext": "Tabs."}),
            False,
            None,
            ("Tabs.",),
            0,
        ),
        (START, _specific(STOP, additionalContext="Use tabs."), False, None, (), 1),
        (START, _json(decision="block", reason="no"), False, None, (), 1),
        (START, _json(suppressOutput=True), False, None, (), 0),
        (START, HookReply.context("[note] Use tabs."), False, None, ("[note] Use tabs.",), 0),
        # The tool events' JSON forms.
        (
            PRE,
            _specific(PRE, permissionDecision="deny", permissionDecisionReason="No."),
            True,
            "No.",
            (),
            0,
        ),
        (PRE, _specific(PRE, permissionDecision="allow"), False, None, (), 0),
        (PRE, _json(decision="block", reason="Frozen."), True, "Frozen.", (), 0),
        (POST, _json(decision="block", reason="Lint failed."), False, None, ("Lint failed.",), 0),
        (POST, _specific(POST, additionalContext="3 warnings."), False, None, ("3 warnings.",), 0),
        (POST, _json(**{"continue": False}), False, None, (), 1),
        # Malformed answers are ignored, with a message for the user.
        (STOP, HookReply(0, stdout='{"decision": "block", "reason": 5}'), False, None, (), 1),
        (STOP, HookReply(0, stdout='{"decision": "stop"}'), False, None, (), 1),
        (STOP, HookReply(0, stdout='{"decision": "block",'), False, None, (), 1),
        (START, HookReply(0, stdout='["Use tabs."]'), False, None, (), 1),
        (START, HookReply(0, stdout="[" * 50_000), False, None, (), 1),
    ],
)
async def test_json_output_as_claude_code_reads_it(
    event: HookEvent,
    reply: HookReply,
    blocked: bool,
    reason: str | None,
    feedback: tuple[str, ...],
    user: int,
) -> None:
    """Claude Code's hooks reference, https://code.claude.com/docs/en/hooks ("JSON output",
    "Stop and SubagentStop decision control", "SubagentStart"): JSON on stdout is read on
    exit 0 only; ``decision: "block"`` needs a ``reason``; ``continue: false`` wins."""
    runner = HookRunner([Hook(event, function=replying(reply))], output_cap=1 << 20)
    outcome = await runner.fire(event, payload(event))
    assert (outcome.blocked, outcome.reason, outcome.feedback) == (blocked, reason, feedback)
    assert len(outcome.user_messages) == user, outcome.user_messages


async def test_json_cut_by_the_output_cap_is_ignored() -> None:
    long = json.dumps({"decision": "block", "reason": "x" * 200})
    runner = HookRunner([Hook(STOP, function=replying(HookReply(0, stdout=long)))], output_cap=64)
    outcome = await runner.fire(STOP, payload(STOP))
    assert not outcome.blocked
    (message,) = outcome.user_messages
    assert "cut by the output cap" in message


async def test_no_matching_hook_is_an_empty_outcome() -> None:
    calls: list[HookPayload] = []
    runner = HookRunner([Hook(PRE, function=replying(None, calls), matcher="Write")])
    assert not runner.has_hooks(POST)
    assert runner.has_hooks(PRE)
    outcome = await runner.fire(PRE, payload(PRE))
    assert outcome.results == ()
    assert not outcome.blocked
    assert calls == []
    assert runner.statistics().firings == 0


async def test_start_and_stop_matchers_match_the_agent_type() -> None:
    calls: list[HookPayload] = []
    runner = HookRunner([Hook(START, function=replying(None, calls), matcher="Explore|Plan")])
    await runner.fire(START, payload(START, agent_type="Explore"))
    await runner.fire(START, payload(START, agent_type="general-purpose"))
    assert [c.agent_type for c in calls] == ["Explore"]


async def test_a_raising_hook_is_reported_to_the_user_only() -> None:
    async def broken(p: HookPayload) -> HookReply | None:
        raise ValueError("bad hook")

    async def wrong(p: HookPayload) -> Any:
        return "not a reply"

    runner = HookRunner([Hook(PRE, function=broken), Hook(PRE, function=wrong)])
    outcome = await runner.fire(PRE, payload())
    assert not outcome.blocked
    assert outcome.feedback == ()
    first, second = outcome.user_messages
    assert "ValueError: bad hook" in first
    assert "returned str; expected a HookReply or None" in second
    assert [r.error is not None for r in outcome.results] == [True, True]
    assert runner.statistics().failed == 2


async def test_a_hanging_hook_times_out(autojump_clock: trio.testing.MockClock) -> None:
    runner = HookRunner([Hook(PRE, function=sleeping(math.inf), timeout_seconds=7)])
    start = trio.current_time()
    outcome = await runner.fire(PRE, payload())
    assert trio.current_time() - start == pytest.approx(7)
    (result,) = outcome.results
    assert result.timed_out
    assert result.exit_code is None
    assert "timed out after 7 s" in outcome.user_messages[0]
    assert not outcome.blocked
    assert runner.statistics().timed_out == 1


async def test_the_firing_deadline_bounds_every_hook(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runner = HookRunner([Hook(POST, function=sleeping(30), timeout_seconds=60)])
    outcome = await runner.fire(POST, payload(POST), deadline=trio.current_time() + 2)
    assert outcome.results[0].timed_out
    assert outcome.results[0].duration == pytest.approx(2)


async def test_cancellation_propagates_out_of_fire(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runner = HookRunner([Hook(PRE, function=sleeping(30)), Hook(PRE, function=sleeping(40))])
    with trio.move_on_after(1) as scope:
        await runner.fire(PRE, payload())
        pytest.fail("fire returned although it was cancelled")
    assert scope.cancelled_caught


async def test_hooks_run_concurrently_and_report_in_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    done: list[str] = []
    global_hooks = [Hook(START, function=sleeping(3, done, "global-slow"))]
    agent_hooks = [
        Hook(START, function=sleeping(1, done, "agent-fast"), scope="agent"),
        Hook(START, function=sleeping(2, done, "agent-mid"), scope="agent"),
    ]
    runner = HookRunner(global_hooks)
    start = trio.current_time()
    outcome = await runner.fire(START, payload(START), agent_hooks=agent_hooks)
    assert trio.current_time() - start == pytest.approx(3)
    assert done == ["agent-fast", "agent-mid", "global-slow"]
    assert outcome.feedback == ("global-slow", "agent-fast", "agent-mid")
    assert outcome.feedback_text == "global-slow\n\nagent-fast\n\nagent-mid"
    assert [r.hook.scope for r in outcome.results] == ["global", "agent", "agent"]


async def test_a_hook_listed_twice_runs_once() -> None:
    calls: list[HookPayload] = []
    function = replying(None, calls)
    runner = HookRunner([Hook(PRE, function=function), Hook(PRE, command="true")])
    agent = [Hook(PRE, function=function, scope="agent"), Hook(PRE, command="true", scope="agent")]
    assert len(runner.matching(PRE, "Bash", agent)) == 2
    await runner.fire(PRE, payload(), agent_hooks=agent)
    assert len(calls) == 1


async def test_an_unhashable_callable_is_a_hook_like_any_other() -> None:
    calls: list[HookPayload] = []

    class Guard:
        __hash__ = None  # type: ignore[assignment]  # (defining __eq__ does this too)

        def __call__(self, payload: HookPayload) -> None:
            calls.append(payload)

    guard = Guard()
    runner = HookRunner([Hook(PRE, function=guard), Hook(PRE, function=guard)])
    assert len(runner.matching(PRE, "Bash")) == 1
    await runner.fire(PRE, payload())
    assert len(calls) == 1


async def test_hook_event_name_follows_the_event() -> None:
    calls: list[HookPayload] = []
    runner = HookRunner([Hook(POST, function=replying(None, calls))])
    await runner.fire(POST, payload(PRE, tool_response={"ok": True}))
    assert calls[0].hook_event_name == "PostToolUse"
    assert calls[0].tool_response == {"ok": True}


async def test_python_hook_output_is_capped() -> None:
    runner = HookRunner(
        [Hook(PRE, function=replying(HookReply(2, stderr="x" * 5000)))], output_cap=100
    )
    outcome = await runner.fire(PRE, payload())
    (result,) = outcome.results
    assert result.truncated
    assert result.stderr.startswith("x" * 100 + "\n[output truncated: 5000 bytes in all")
    assert outcome.blocked


async def test_hook_fired_events_on_the_bus() -> None:
    bus = Bus()
    runner = HookRunner([Hook(PRE, function=replying(HookReply.block("no")))], bus=bus)
    await runner.fire(PRE, payload())  # no subscriber: nothing is built
    assert bus.last_seq == 0
    with bus.subscribe(types=[HookFired]) as sub:
        await runner.fire(PRE, payload(), nickname="Ada")
        event = sub.receive_nowait()
    assert isinstance(event, HookFired)
    assert (event.agent_id, event.parent_id, event.depth, event.nickname) == (
        "agent-1",
        "lead",
        1,
        "Ada",
    )
    assert event.hook_event_name == "PreToolUse"
    assert event.exit_code == 2
    assert event.tool_use_id == "toolu_1"
    assert runner.statistics().blocked == 2


# --- once per run ----------------------------------------------------------------------------


class Recorder:
    """Python Start/Stop hooks that record each firing, with a factory for their payloads."""

    def __init__(self, stop_seconds: float = 0.0) -> None:
        self.fired: list[str] = []
        self.last_message: str | None = None
        self.stop_seconds = stop_seconds

    async def on_start(self, p: HookPayload) -> HookReply:
        self.fired.append(p.hook_event_name)
        return HookReply.context("Remember the style guide.")

    async def on_stop(self, p: HookPayload) -> HookReply | None:
        self.fired.append(p.hook_event_name)
        await trio.sleep(self.stop_seconds)
        self.fired.append(f"stop saw {p.last_assistant_message}")
        return None

    def hooks(self) -> list[Hook]:
        return [Hook(START, function=self.on_start), Hook(STOP, function=self.on_stop)]

    def factory(self) -> Callable[[HookEvent], HookPayload]:
        return lambda event: payload(event, last_assistant_message=self.last_message)


async def test_start_and_stop_once_on_normal_exit() -> None:
    rec = Recorder()
    async with subagent_run_hooks(HookRunner(rec.hooks()), rec.factory()) as run:
        assert run.context == "Remember the style guide."
        assert "stop=False" in repr(run)
        rec.last_message = "the answer"
    assert rec.fired == ["SubagentStart", "SubagentStop", "stop saw the answer"]
    assert run.stop is not None
    assert run.stop.user_messages == ()


async def test_with_no_hook_the_block_holds_nothing_per_agent_and_fires_nothing() -> None:
    # Every agent waits inside this block: with no hook it keeps no wrapper of its own,
    # and the (empty) outcomes are one value shared by every agent.
    rec = Recorder()
    runner = HookRunner()
    blocks = [subagent_run_hooks(runner, rec.factory()) for _ in range(2)]
    for block in blocks:
        async with block as run:
            assert run is block
            assert run.stop is None
        assert run.stop is not None
        assert await run.finish() is None
    first, second = blocks
    assert first.start is second.start  # type: ignore[attr-defined]
    assert first.stop is second.stop  # type: ignore[attr-defined]
    assert rec.fired == []


def as_agent_hook(hook: Hook) -> Hook:
    return Hook(hook.event, function=hook.function, scope="agent")


async def test_agent_scoped_start_and_stop_hooks() -> None:
    rec = Recorder()
    agent_hooks = [as_agent_hook(h) for h in rec.hooks()]
    async with subagent_run_hooks(HookRunner(), rec.factory(), agent_hooks=agent_hooks):
        pass
    assert rec.fired == ["SubagentStart", "SubagentStop", "stop saw None"]


async def test_stop_fires_once_when_the_run_raises() -> None:
    rec = Recorder()
    with pytest.raises(RuntimeError, match="model exploded"):
        async with subagent_run_hooks(HookRunner(rec.hooks()), rec.factory()):
            raise RuntimeError("model exploded")
    assert rec.fired == ["SubagentStart", "SubagentStop", "stop saw None"]


async def test_stop_fires_shielded_when_the_run_is_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder(stop_seconds=2)
    with trio.move_on_after(10) as scope:
        async with subagent_run_hooks(HookRunner(rec.hooks()), rec.factory()) as run:
            await trio.sleep_forever()
    assert scope.cancelled_caught
    # The stop hook slept 2 s inside a cancelled scope and still finished.
    assert rec.fired == ["SubagentStart", "SubagentStop", "stop saw None"]
    assert run.stop is not None
    assert not run.stop.results[0].timed_out


async def test_cancelled_stop_hooks_get_only_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder(stop_seconds=math.inf)
    runner = HookRunner(rec.hooks())
    with trio.move_on_after(10):
        async with subagent_run_hooks(runner, rec.factory(), stop_grace=3) as run:
            await trio.sleep_forever()
    assert trio.current_time() == pytest.approx(13)
    assert run.stop is not None
    assert run.stop.results[0].timed_out
    assert rec.fired == ["SubagentStart", "SubagentStop"]


async def test_keyboard_interrupt_gets_the_grace_too(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder(stop_seconds=30)
    runner = HookRunner(rec.hooks())
    with pytest.raises(KeyboardInterrupt):
        async with subagent_run_hooks(runner, rec.factory(), stop_grace=1) as run:
            raise KeyboardInterrupt
    assert run.stop is not None
    assert run.stop.results[0].timed_out


async def test_stop_fires_even_when_start_is_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    fired: list[str] = []

    async def slow_start(p: HookPayload) -> None:
        fired.append(p.hook_event_name)
        await trio.sleep(30)

    async def stop(p: HookPayload) -> None:
        fired.append(p.hook_event_name)

    runner = HookRunner([Hook(START, function=slow_start), Hook(STOP, function=stop)])
    entered = False
    with trio.move_on_after(1):
        async with subagent_run_hooks(runner, lambda e: payload(e)):
            entered = True
    assert not entered
    assert fired == ["SubagentStart", "SubagentStop"]


async def test_no_hooks_costs_nothing() -> None:
    async with subagent_run_hooks(HookRunner(), lambda e: payload(e)) as run:
        assert run.context is None
    assert run.stop is not None
    assert run.stop.results == ()


async def test_with_no_hook_registered_no_payload_is_built() -> None:
    """Issue 17: with no hooks configured, hooks cost nothing (not even a payload)."""
    built: list[HookEvent] = []

    def factory(event: HookEvent) -> HookPayload:
        built.append(event)
        return HookPayload(hook_event_name=event.value, agent_id="a1", agent_type="Explore")

    async with subagent_run_hooks(HookRunner([]), factory) as fired:
        assert not fired.start.results
        assert await fired.finish() is None
    assert built == []
    stop_only = HookRunner([Hook(HookEvent.SUBAGENT_STOP, function=_noop)])
    async with subagent_run_hooks(stop_only, factory):
        pass
    assert built == [HookEvent.SUBAGENT_STOP]


async def _noop(payload: HookPayload) -> None:
    return None
