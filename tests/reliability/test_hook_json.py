"""Hostile JSON on a hook's stdout: ignored with a log line, never a crash, a hang or a block.

Claude Code reads a hook's stdout as JSON when it exits 0
(https://code.claude.com/docs/en/hooks, "JSON output"), and a hook is a
program the repository may have written. Whatever it prints (megabytes of
it, nesting deeper than any decoder recurses, the right keys with the wrong
types, an array instead of an object, bytes that are not UTF-8), the agent it
runs for completes as if the hook had said nothing, the person running it gets
one log line per hook that says why its output was ignored, its siblings are
untouched, and the hook output cap still bounds what is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import Origin
from subagents.runtime._hooks.commands import DEFAULT_HOOK_OUTPUT_CAP
from tests.reliability.siblings import check_healthy, make_world, scripted, spawn_siblings
from tests.runtime.helpers import SlowTool

_MEGABYTES = 5_000_000

HOSTILE = {
    "huge nesting, past the cap": f"head -c {_MEGABYTES} /dev/zero | tr '\\0' '['",
    "huge block reason, past the cap": (
        'printf \'{"decision": "block", "reason": "\'; '
        f"head -c {_MEGABYTES} /dev/zero | tr '\\0' 'x'; printf '\"}}'"
    ),
    "deep nesting, under the cap": "head -c 60000 /dev/zero | tr '\\0' '['",
    "deep nesting, balanced": (
        "head -c 30000 /dev/zero | tr '\\0' '['; head -c 30000 /dev/zero | tr '\\0' ']'"
    ),
    "wrong types": (
        'printf \'{"decision": ["block"], "reason": {"a": 1}, "hookSpecificOutput": "x"}\''
    ),
    "context of the wrong type": (
        'printf \'{"hookSpecificOutput": {"additionalContext": 12345}}\''
    ),
    "not an object": 'printf \'[{"decision": "block", "reason": "Do it again."}]\'',
    "not UTF-8": 'printf \'{"decision": "block", "reason": "\\377\\000"}\'',
    "unknown decision": 'printf \'{"decision": "halt", "reason": "Do it again."}\'',
}


def _hook(command: str) -> list[dict[str, Any]]:
    return [{"matcher": "faulty", "hooks": [{"command": command, "timeout": 10}]}]


@pytest.mark.parametrize("command", HOSTILE.values(), ids=list(HOSTILE))
async def test_hostile_json_on_stdout_is_ignored_with_a_log_line(
    tmp_path: Path, command: str
) -> None:
    world = make_world(tmp_path)
    world.hooks = {"SubagentStart": _hook(command), "SubagentStop": _hook(command)}
    recorder = testing.RecordingPolicy(lambda request: testing.say("Counted."))
    async with world.open(scripted(recorder, seconds=0.1), tools=[SlowTool("Note")]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Count the fruit.")).agent_id
        waited = await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert not waited.timed_out
        assert rt.status(faulty) == Completed("Counted.")
        check_healthy(rt, siblings)
        session = rt.session_id
    (request,) = recorder.requests  # the stop was not blocked: one run, one request
    assert [m.origin for m in request[1]] == [Origin.TASK]  # no context from the hook
    lines = (world.state / "logs" / f"{session}.jsonl").read_text().splitlines()
    assert all(len(line) < 2 * DEFAULT_HOOK_OUTPUT_CAP for line in lines)
    problems = [p for p in map(json.loads, lines) if p["event"] == "hook problem"]
    assert [(p["agent_id"], p["hook_event"]) for p in problems] == [
        (faulty, "SubagentStart"),
        (faulty, "SubagentStop"),
    ]
    assert all("ignored" in p["problem"] for p in problems)
