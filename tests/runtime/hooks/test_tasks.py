"""``TaskCreated`` and ``TaskCompleted`` hooks as the task board's checkpoints.

Following Claude Code's hooks reference (https://code.claude.com/docs/en/hooks,
``TaskCreated``/``TaskCompleted``): exit 2 blocks with stderr as feedback (the
task is not created / stays open), so does ``{"decision": "block", "reason"}``;
the input carries ``task_id``, ``task_subject``, ``task_description``,
``teammate_name`` and ``team_name``; the events have no matcher. Each
checkpoint fires each hook exactly once, within its deadline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing

from subagents.runtime import (
    Hook,
    HookEvent,
    HookPayload,
    HookReply,
    HookRunner,
    hooks_from_settings,
    task_hook_gate,
)
from subagents.teams import CheckpointBlocked, open_board


async def test_a_task_created_hook_that_blocks_leaves_the_task_uncreated() -> None:
    seen: list[HookPayload] = []

    async def hook(payload: HookPayload) -> HookReply:
        seen.append(payload)
        if payload.task_subject == "vague":
            return HookReply.block("Say what done looks like.")
        return HookReply()

    runner = HookRunner([Hook(HookEvent.TASK_CREATED, function=hook, matcher="Bash")])
    gate = task_hook_gate(runner, session_id="s1", team_name="survey")
    async with open_board(gate=gate) as board:
        with pytest.raises(CheckpointBlocked, match="Say what done looks like") as info:
            await board.create("vague", "d", by="ada")
        assert info.value.feedback == "Say what done looks like."
        assert await board.list() == ()
        made = await board.create("Count modules", "in src/", by="ada")
        assert made.id == "2"  # ids are never reused, even for a refused task
    assert [p.task_subject for p in seen] == ["vague", "Count modules"]  # once each
    first = seen[0]
    assert (first.hook_event_name, first.task_id, first.task_description) == (
        "TaskCreated",
        "1",
        "d",
    )
    assert (first.teammate_name, first.team_name, first.session_id) == ("ada", "survey", "s1")


async def test_a_task_completed_hook_with_a_json_block_keeps_the_task_open() -> None:
    calls: list[str | None] = []

    async def hook(payload: HookPayload) -> HookReply:
        calls.append(payload.teammate_name)
        if payload.teammate_name == "ada":
            return HookReply(stdout=json.dumps({"decision": "block", "reason": "Run tests."}))
        return HookReply()

    runner = HookRunner([Hook(HookEvent.TASK_COMPLETED, function=hook)])
    async with open_board(gate=task_hook_gate(runner)) as board:
        task = await board.create("Fix", "the bug")  # no TaskCreated hook: no firing
        await board.claim(task.id, "ada")
        with pytest.raises(CheckpointBlocked, match="Run tests"):
            await board.update(task.id, status="completed", by="ada")
        assert (await board.get(task.id)).status == "in_progress"
        await board.update(task.id, owner="grace", by="ada")
        assert (await board.update(task.id, status="completed", by="grace")).status == "completed"
    assert calls == ["ada", "grace"]


async def test_a_command_hook_from_settings_exits_2_and_reads_the_task(tmp_path: Path) -> None:
    seen = tmp_path / "payload.json"
    settings = {
        "hooks": {
            "TaskCompleted": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"cat > {seen}; echo 'tests fail: fix them' >&2; exit 2",
                            "timeout": 30,
                        }
                    ]
                }
            ]
        }
    }
    runner = HookRunner(hooks_from_settings(settings), cwd=tmp_path)
    async with open_board(gate=task_hook_gate(runner, team_name="t")) as board:
        task = await board.create("Fix", "the bug")
        await board.claim(task.id, "ada")
        with pytest.raises(CheckpointBlocked, match="tests fail: fix them"):
            await board.update(task.id, status="completed", by="ada")
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "TaskCompleted"
    assert (payload["task_id"], payload["task_subject"], payload["teammate_name"]) == (
        "1",
        "Fix",
        "ada",
    )


async def test_a_hook_that_times_out_does_not_block(autojump_clock: trio.testing.MockClock) -> None:
    async def hook(payload: HookPayload) -> HookReply:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    runner = HookRunner([Hook(HookEvent.TASK_CREATED, function=hook, timeout_seconds=3)])
    async with open_board(gate=task_hook_gate(runner)) as board:
        start = trio.current_time()
        task = await board.create("A", "a")
        assert trio.current_time() - start == pytest.approx(3)
        assert task.id == "1"
    assert runner.statistics().timed_out == 1


def test_the_task_events_are_hook_events_settings_may_name() -> None:
    settings = {
        "hooks": {
            name: [{"hooks": [{"command": "true"}]}] for name in ("TaskCreated", "TaskCompleted")
        }
    }
    hooks = hooks_from_settings(settings)
    assert [hook.event for hook in hooks] == [HookEvent.TASK_CREATED, HookEvent.TASK_COMPLETED]
    assert all(
        event.ignores_matcher for event in (HookEvent.TASK_CREATED, HookEvent.TASK_COMPLETED)
    )
