"""Hooks through a real runtime: global (configuration, code) and scoped to one agent."""

from __future__ import annotations

import json
from pathlib import Path

import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    Hook,
    HookPayload,
    HookReply,
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    load_transcript,
)
from tests.runtime.helpers import SlowTool
from tests.runtime.world import HookLog, World, tool_results

# Command hooks run real processes: these tests use the real clock (a mock clock
# would jump over the processes' run time).


def _command(log: Path, tag: str) -> str:
    # One write per line, so hooks running concurrently never interleave.
    return f"line=$(cat); printf '%s\\n' \"$line\" >> {log}; echo {tag} >> {log}.tags"


def _lines(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def test_command_hooks_from_the_configuration_and_the_definition(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    world = World(tmp_path)
    world.hooks = {
        event: [{"hooks": [{"type": "command", "command": _command(log, f"global-{event}")}]}]
        for event in ("SubagentStart", "SubagentStop", "PreToolUse", "PostToolUse")
    }
    world.agent(
        "checked",
        tools="LS",
        hooks={
            "PreToolUse": [
                {
                    "matcher": "LS",
                    "hooks": [{"type": "command", "command": _command(log, "scoped-pre")}],
                }
            ]
        },
    )
    provider = ScriptedProvider([testing.call("LS", path="."), testing.say("Listed.")])
    async with world.open(provider) as rt:
        checked = await rt.spawn("checked", "List the project")
        assert (await rt.wait([checked.agent_id], timeout=30)).statuses[
            checked.agent_id
        ] == Completed("Listed.")
        other = await rt.spawn("general-purpose", "Say hi")  # no LS call: no tool hooks
        await rt.wait([other.agent_id], timeout=30)
    payloads = _lines(log)
    mine = [
        (p["hook_event_name"], p["tool_name"])
        for p in payloads
        if p["agent_id"] == checked.agent_id
    ]
    assert mine == [
        ("SubagentStart", None),
        ("PreToolUse", "LS"),
        ("PreToolUse", "LS"),
        ("PostToolUse", "LS"),
        ("SubagentStop", None),
    ]
    tags = (tmp_path / "hooks.jsonl.tags").read_text().split()
    assert tags.count("scoped-pre") == 1  # the definition's hook, for this agent only
    assert tags.count("global-SubagentStart") == 2
    start = next(p for p in payloads if p["hook_event_name"] == "SubagentStart")
    assert start["agent_type"] == "checked"
    assert start["prompt"] == "List the project"
    assert start["transcript_path"] == checked.output_file
    pre = next(p for p in payloads if p["hook_event_name"] == "PreToolUse")
    assert pre["tool_input"]["path"] == "."  # type: ignore[index]
    assert str(pre["tool_use_id"]).startswith("toolu_")
    post = next(p for p in payloads if p["hook_event_name"] == "PostToolUse")
    assert post["tool_response"]["is_error"] is False  # type: ignore[index]
    stop = next(p for p in payloads if p["hook_event_name"] == "SubagentStop")
    assert stop["last_assistant_message"] == "Listed."


async def test_a_pre_tool_use_block_never_runs_the_tool(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.agent("writer", tools="Write")
    target = world.project / "out.txt"
    world.hooks = {
        "PreToolUse": [
            {
                "matcher": "Write",
                "hooks": [
                    {"type": "command", "command": "echo 'writes are frozen today' >&2; exit 2"}
                ],
            }
        ]
    }
    provider = ScriptedProvider(
        [testing.call("Write", file_path="out.txt", content="hello"), testing.say("Tried.")]
    )
    asked: list[object] = []

    async def approve(request: object) -> object:
        asked.append(request)
        raise AssertionError("approval must not be asked for a blocked call")

    async with world.open(provider, approval_callback=approve) as rt:  # type: ignore[arg-type]
        agent = (await rt.spawn("writer", "Write the file")).agent_id
        await rt.wait([agent], timeout=30)
        (result,) = tool_results(rt.conversation(agent).messages)
    assert result.is_error
    assert result.content == "writes are frozen today"
    assert not target.exists()
    assert asked == []


async def test_python_hooks_give_context_feedback_and_never_hang_the_runtime(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    calls: list[str] = []

    async def context(payload: HookPayload) -> HookReply:
        return HookReply.context("Remember: the build is broken.")

    async def feedback(payload: HookPayload) -> HookReply:
        calls.append(payload.hook_event_name)
        return HookReply(exit_code=2, stderr="The listing was long; summarise it.")

    async def hang(payload: HookPayload) -> None:
        await trio.sleep_forever()

    async def crash(payload: HookPayload) -> None:
        raise RuntimeError("the hook broke")

    hooks = [
        Hook("SubagentStart", function=context),
        Hook("PostToolUse", function=feedback, matcher="LS"),
        Hook("PreToolUse", function=hang, timeout_seconds=3.0),
        Hook("SubagentStop", function=crash),
    ]
    world.agent("noter", tools="Note")
    recorder = testing.RecordingPolicy(
        lambda request: (
            testing.call("Note", text="docs") if request.turn == 0 else testing.say("Done.")
        )
    )
    provider = ScriptedProvider(recorder)
    async with world.open(provider, hooks=hooks, tools=[SlowTool("Note")]) as rt:
        agent = (await rt.spawn("noter", "Find the docs")).agent_id
        waited = await rt.wait([agent], timeout=60)
        assert waited.statuses[agent] == Completed("Done.")
        assert 3.0 <= trio.current_time() < 10  # the hanging hook cost its timeout, once
        messages = list(rt.conversation(agent))
        stats = rt.statistics().hooks
    first_request = recorder.requests[0][1]
    assert [m.origin for m in first_request] == [Origin.TASK, Origin.NOTICE]
    assert first_request[1].text == "Remember: the build is broken."
    assert calls == []  # the PostToolUse hook matches LS only; Note ran
    assert (stats.timed_out, stats.failed) == (1, 1)
    assert messages[-1].text == "Done."
    log = world.state / "logs" / f"{rt.session_id}.jsonl"
    problems = [
        line
        for line in map(json.loads, log.read_text().splitlines())
        if line["event"] == "hook problem"
    ]
    assert {p["hook_event"] for p in problems} == {"PreToolUse", "SubagentStop"}
    assert all(p["agent_id"] == agent for p in problems)


async def test_post_tool_use_feedback_is_appended_to_the_result(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("noter", tools="wait")  # a tool that needs no thread: wait on nobody

    async def feedback(payload: HookPayload) -> HookReply:
        assert payload.tool_response == {
            "content": '{"status":{"x":{"kind":"not_found"}},"timed_out":false}',
            "is_error": False,
        }
        return HookReply(exit_code=2, stderr="Nobody is there; stop waiting.")

    provider = ScriptedProvider([testing.call("wait", ids=["x"]), testing.say("Stopped.")])
    async with world.open(provider, hooks=[Hook("PostToolUse", function=feedback)]) as rt:
        agent = (await rt.spawn("noter", "Wait for x")).agent_id
        await rt.wait([agent], timeout=60)
        (result,) = tool_results(rt.conversation(agent).messages)
        path = rt.transcript_path(agent)
    assert result.content.endswith("[PostToolUse hook feedback]\nNobody is there; stop waiting.")
    assert not result.is_error
    assert path is not None
    assert tool_results([r.message for r in load_transcript(path).messages]) == [result]


async def test_start_and_stop_fire_once_per_run_however_it_ends(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    hooks = HookLog()
    async with world.open(ScriptedProvider(testing.directive_policy), hooks=hooks.hooks()) as rt:
        ok = (await rt.spawn("Plan", testing.directive(testing.ScriptedBehavior.FINISH))).agent_id
        failing = (
            await rt.spawn("Plan", testing.directive(testing.ScriptedBehavior.FAIL))
        ).agent_id
        stuck = (await rt.spawn("Plan", testing.directive(testing.ScriptedBehavior.HANG))).agent_id
        await rt.wait([ok, failing], timeout=10, mode="all")
        await rt.send_input(ok, testing.directive(testing.ScriptedBehavior.FINISH))
        await rt.wait([ok], timeout=10)
        await rt.close(stuck)
    assert [hooks.count("SubagentStart", a) for a in (ok, failing, stuck)] == [2, 1, 1]
    assert [hooks.count("SubagentStop", a) for a in (ok, failing, stuck)] == [2, 1, 1]


# --- Claude Code's JSON answers and transcript paths (https://code.claude.com/docs/en/hooks) ---


def _script(path: Path, body: str) -> str:
    """A small hook script at ``path``, as a user would write one; the command that runs it."""
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


async def test_a_subagent_stop_hook_blocks_with_json_and_the_reason_goes_to_the_agent(
    tmp_path: Path,
) -> None:
    """``{"decision": "block", "reason": ...}`` on stdout (exit 0) blocks the stop, and the
    reason is the agent's next input, as Claude Code's "Stop and SubagentStop decision
    control" says; ``stop_hook_active`` is true the next time, and the hook lets it stop."""
    world = World(tmp_path)
    world.agent("counter")
    stop = _script(
        tmp_path / "stop.sh",
        'payload=$(cat)\ncase "$payload" in *\'"stop_hook_active":true\'*) exit 0;; esac\n'
        'printf \'{"decision": "block", "reason": "You forgot the pears."}\\n\'',
    )
    world.hooks = {"SubagentStop": [{"matcher": "counter", "hooks": [{"command": stop}]}]}
    recorder = testing.RecordingPolicy(lambda request: testing.say("Counted."))
    async with world.open(ScriptedProvider(recorder)) as rt:
        agent = (await rt.spawn("counter", "Count the fruit.")).agent_id
        await rt.wait([agent], timeout=30)
        assert rt.status(agent) == Completed("Counted.")
    assert len(recorder.requests) == 2  # the first run, then the one the hook asked for
    _, second = recorder.requests[1]
    assert (second[-1].text, second[-1].origin) == ("You forgot the pears.", Origin.NOTICE)


async def test_a_subagent_start_hook_adds_additional_context_from_json(tmp_path: Path) -> None:
    """``hookSpecificOutput.additionalContext`` of a ``SubagentStart`` hook is added to the
    subagent's context (Claude Code's "SubagentStart" section); the JSON itself is not."""
    world = World(tmp_path)
    start = _script(
        tmp_path / "start.sh",
        "cat >/dev/null\n"
        'printf \'{"hookSpecificOutput": {"hookEventName": "SubagentStart", '
        '"additionalContext": "The build is broken; do not run it."}}\'',
    )
    world.hooks = {"SubagentStart": [{"hooks": [{"command": start}]}]}
    recorder = testing.RecordingPolicy(lambda request: testing.say("Done."))
    async with world.open(ScriptedProvider(recorder)) as rt:
        agent = (await rt.spawn("general-purpose", "Fix the bug.")).agent_id
        await rt.wait([agent], timeout=30)
    first = recorder.requests[0][1]
    assert [(m.origin, m.text) for m in first] == [
        (Origin.TASK, "Fix the bug."),
        (Origin.NOTICE, "The build is broken; do not run it."),
    ]


async def test_the_payload_names_the_parent_transcript_and_the_agent_transcript(
    tmp_path: Path,
) -> None:
    """``agent_transcript_path`` is the subagent's transcript, ``transcript_path`` its
    parent's (Claude Code's SubagentStop input; Codex's too, openai/codex#22873). A
    top-level agent has no parent: both are its own transcript."""
    log = tmp_path / "payloads.jsonl"
    world = World(tmp_path)
    world.agent("lead", tools="spawn_agent, wait")
    world.hooks = {
        event: [{"hooks": [{"command": _command(log, event)}]}]
        for event in ("SubagentStart", "SubagentStop", "PreToolUse")
    }

    def lead(request: ModelRequest) -> Reply:
        if request.turn == 0:
            return testing.call("spawn_agent", agent_type="general-purpose", message="Look.")
        if request.turn == 1:
            child = json.loads(tool_results(request.messages)[0].content)["agent_id"]
            return testing.call("wait", ids=[child], timeout_ms=30_000)
        return testing.say("Lead done.")

    provider = ScriptedProvider(policies={"lead": lead, "*": lambda r: testing.say("Looked.")})
    async with world.open(provider) as rt:
        lead_id = (await rt.spawn("lead", "Lead.")).agent_id
        await rt.wait([lead_id], timeout=30)
        [child] = [row.id for row in rt.list(include_closed=True) if row.id != lead_id]
        lead_path, child_path = rt.transcript_path(lead_id), rt.transcript_path(child)
    assert lead_path is not None
    assert child_path is not None
    payloads = _lines(log)
    of_child = [p for p in payloads if p["agent_id"] == child]
    of_lead = [p for p in payloads if p["agent_id"] == lead_id]
    assert {p["hook_event_name"] for p in of_child} == {"SubagentStart", "SubagentStop"}
    assert {(p["transcript_path"], p["agent_transcript_path"]) for p in of_child} == {
        (str(lead_path), str(child_path))
    }
    assert {p["hook_event_name"] for p in of_lead} == {
        "SubagentStart",
        "SubagentStop",
        "PreToolUse",
    }
    assert {(p["transcript_path"], p["agent_transcript_path"]) for p in of_lead} == {
        (str(lead_path), str(lead_path))
    }


async def test_a_stop_hook_fires_for_the_top_level_agent_and_may_block_it(tmp_path: Path) -> None:
    """Claude Code fires ``Stop`` when its main agent stops and ``SubagentStop`` for a
    subagent; a ``Stop`` hook blocks with JSON as ``SubagentStop`` does, and its matcher is
    ignored (https://code.claude.com/docs/en/hooks, "Stop")."""
    log = tmp_path / "stop.jsonl"
    world = World(tmp_path)
    world.agent("lead", tools="spawn_agent, wait")
    stop = _script(
        tmp_path / "stop.sh",
        f"payload=$(cat)\nprintf '%s\\n' \"$payload\" >> {log}\n"
        'case "$payload" in *\'"stop_hook_active":true\'*) exit 0;; esac\n'
        'printf \'{"decision": "block", "reason": "Check the work."}\'',
    )
    world.hooks = {"Stop": [{"matcher": "no-such-type", "hooks": [{"command": stop}]}]}

    def lead(request: ModelRequest) -> Reply:
        if request.turn == 0:
            return testing.call("spawn_agent", agent_type="general-purpose", message="Look.")
        if request.turn == 1:
            child = json.loads(tool_results(request.messages)[0].content)["agent_id"]
            return testing.call("wait", ids=[child], timeout_ms=30_000)
        return testing.say("Lead done." if request.turn == 2 else "Checked.")

    recorder = testing.RecordingPolicy(lead)
    provider = ScriptedProvider(policies={"lead": recorder, "*": lambda r: testing.say("Looked.")})
    async with world.open(provider) as rt:
        lead_id = (await rt.spawn("lead", "Lead.")).agent_id
        await rt.wait([lead_id], timeout=30)
        assert rt.status(lead_id) == Completed("Checked.")
    payloads = _lines(log)
    assert [(p["agent_id"], p["hook_event_name"]) for p in payloads] == [(lead_id, "Stop")] * 2
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert recorder.requests[-1][1][-1].text == "Check the work."


async def test_a_hook_finds_the_agents_transcript_as_written_so_far(tmp_path: Path) -> None:
    """A hook is given the agent's transcript path, and reading it finds every line so far:
    at ``SubagentStart`` the task, at ``PreToolUse`` the model's message asking for the
    call. On the real clock the runtime makes new files at the end of the scheduler pass
    and writes a turn's call with its results; a hook waits for both, as a reader would."""
    seen: list[tuple[str, list[str], str | None]] = []

    async def read(payload: HookPayload) -> None:
        assert payload.agent_transcript_path is not None
        transcript = load_transcript(payload.agent_transcript_path)
        assert transcript.problems == ()
        last = transcript.messages[-1].message
        call = last.tool_uses[0].name if last.tool_uses else None
        seen.append((payload.hook_event_name, [m.message.role for m in transcript.messages], call))

    world = World(tmp_path)
    world.agent("worker", tools="Note")
    provider = ScriptedProvider([testing.call("Note", text="a"), testing.say("Done.")])
    hooks = [Hook(event, function=read) for event in ("SubagentStart", "PreToolUse")]
    async with world.open(provider, tools=[SlowTool("Note")], hooks=hooks) as rt:
        agent = (await rt.spawn("worker", "Note it.")).agent_id
        await rt.wait([agent], timeout=30)
    assert seen == [
        ("SubagentStart", ["user"], None),
        ("PreToolUse", ["user", "assistant"], "Note"),
    ]
