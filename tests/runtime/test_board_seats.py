"""The task tools through a real runtime: offered to agents, each caller seated on a board.

A team seats its members on ``runtime.board_seats``; the runtime's ``TaskCreate``,
``TaskList``, ``TaskGet`` and ``TaskUpdate`` (offered like every tool, filtered by the
definition's ``tools``) then reach that board as the member, and the runtime's
``TaskCreated``/``TaskCompleted`` hooks gate it through ``task_hook_gate``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from subagents import testing
from subagents.runtime import (
    Hook,
    HookPayload,
    HookReply,
    ModelRequest,
    Reply,
    ScriptedProvider,
    task_hook_gate,
)
from subagents.teams import BOARD_TOOL_NAMES, BoardSeats, open_board
from tests.runtime.world import World, tool_results


def board_data(content: str) -> Any:
    head, body, tail = content.split("\n")
    assert (head, tail) == ("<task_board>", "</task_board>")
    return json.loads(body)


async def test_a_seated_agent_creates_claims_and_lists_through_the_runtime(
    tmp_path: Path,
) -> None:
    # The real clock: the journal is written in a worker thread, and a mock clock
    # that jumps while a thread works would time the lead out.
    world = World(tmp_path)
    world.agent("lead", tools="LS, TaskCreate, TaskList, TaskUpdate, TaskGet")
    plays = [
        # The first turn may run before the test seats the lead (right after spawn).
        testing.call("LS", path="."),
        testing.call("TaskCreate", subject="vague", description="d"),
        testing.call("TaskCreate", subject="Survey", description="Count modules"),
        testing.call("TaskUpdate", taskId="2", status="in_progress"),
        testing.call("TaskList"),
    ]

    def lead(request: ModelRequest) -> Reply:
        return plays[request.turn] if request.turn < len(plays) else testing.say("done")

    async def refuse_vague(payload: HookPayload) -> HookReply:
        vague = payload.task_subject == "vague"
        return HookReply.block("Say what done looks like.") if vague else HookReply()

    hooks = [Hook("TaskCreated", function=refuse_vague)]
    async with world.open(ScriptedProvider(policies={"lead": lead}), hooks=hooks) as rt:
        assert isinstance(rt.board_seats, BoardSeats)
        assert set(BOARD_TOOL_NAMES) <= {tool.name for tool in rt.services.tools}
        gate = task_hook_gate(rt.services.hooks, session_id=rt.session_id, team_name="t")
        async with open_board(world.state / "board.jsonl", gate=gate) as board:
            handle = await rt.spawn("lead", "Plan the work.")
            rt.board_seats.seat(handle.agent_id, board, "lead")
            await rt.wait([handle.agent_id], timeout=100)
            results = tool_results(rt.conversation(handle.agent_id).messages)
            (task,) = board.snapshot()
    results = results[1:]
    assert results[0].is_error
    assert "Say what done looks like." in results[0].content
    assert board_data(results[1].content) == {"task": {"id": "2", "subject": "Survey"}}
    assert board_data(results[2].content)["task"]["owner"] == "lead"
    assert board_data(results[3].content)["tasks"] == [
        {"id": "2", "subject": "Survey", "status": "in_progress", "owner": "lead", "blockedBy": []}
    ]
    assert (task.owner, task.status) == ("lead", "in_progress")
