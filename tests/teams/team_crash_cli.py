"""``subagents team`` as a user runs it, with a scripted team that stops mid-team.

Run as a script: ``python team_crash_cli.py READY subagents-team-args...`` runs
``subagents team ARGS...`` (the real command line, in this process) with the
offline team policies replaced by a fixed script:

- the lead puts three tasks on the board (``2`` waits on ``1``, ``3`` on ``2``),
  messages ada, and ends its turn;
- ada, on the message, claims task ``1``, completes it, claims task ``2`` (unblocked now),
  writes ``READY`` and then hangs in a model call that never returns;
- the other teammates answer every prompt without calling a tool.

So once ``READY`` exists, the team is mid-work (ada in a model call, task ``2``
hers and in progress) and :data:`EXPECTED_BOARD` is what the board holds: the
state a ``kill -9`` must not lose.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from subagents import testing
from subagents.runtime import ModelRequest, Reply, ReplyPolicy, ScriptedToolCall

#: What ada is sent; it must be in her conversation exactly once after the resume.
TOKEN = "token-before-the-kill"
#: ``(id, subject, status, owner, blocked_by)`` of every task once ``READY`` exists.
EXPECTED_BOARD = (
    ("1", "Survey src", "completed", "ada", ()),
    ("2", "Check the survey", "in_progress", "ada", ("1",)),
    ("3", "Write the report", "pending", None, ("2",)),
)


def _call(name: str, **arguments: Any) -> Reply:
    return Reply(text="", tool_calls=(ScriptedToolCall(name, arguments),))


def policies(ready: Path) -> dict[str, ReplyPolicy]:
    lead_plays = [
        _call("TaskCreate", subject="Survey src", description="Count the modules"),
        _call("TaskCreate", subject="Check the survey", description="Grep again", blockedBy=["1"]),
        _call("TaskCreate", subject="Write the report", description="The table", blockedBy=["2"]),
        _call("SendMessage", to="ada", message=f"{TOKEN}: finish task 1, then take task 2"),
    ]
    turns: dict[str, int] = {}

    def lead(request: ModelRequest) -> Reply:
        turn = turns[request.agent_id] = turns.get(request.agent_id, -1) + 1
        return lead_plays[turn] if turn < len(lead_plays) else testing.say("Waiting.")

    ada_plays = [
        _call("TaskUpdate", taskId="1", status="in_progress"),
        _call("TaskUpdate", taskId="1", status="completed"),
        _call("TaskUpdate", taskId="2", status="in_progress"),
    ]
    ada_turns: list[int] = []

    def teammate(request: ModelRequest) -> Reply:
        first = request.messages[0].text
        if not first.startswith("You are ada,"):
            return testing.say("Idle.")
        if not any(TOKEN in m.text for m in request.messages):
            return testing.say("Idle.")
        ada_turns.append(1)
        if len(ada_turns) <= len(ada_plays):
            return ada_plays[len(ada_turns) - 1]
        ready.write_text("ready")
        return testing.hang("Checking.")

    return {"team-lead": lead, "*": teammate}


def main(argv: list[str]) -> int:
    import subagents.cli._team as cli_team
    from subagents.cli import main as cli_main

    ready = Path(argv[0])

    def team_policies(*_: Any, **__: Any) -> dict[str, ReplyPolicy]:
        return policies(ready)

    cli_team.team_policies = team_policies  # type: ignore[assignment]
    return cli_main(["team", *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
