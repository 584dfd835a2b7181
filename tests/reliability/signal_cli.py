"""``subagents`` as a user runs it, with a lead that is busy in a Bash command.

Run as a script: ``python signal_cli.py READY COMMAND [ARGS...]`` runs
``subagents COMMAND ARGS...`` (the real command line, in this process) with the
offline survey policies replaced: on each prompt (a run's, a resume's) the
lead spawns an ``Explore`` agent whose model call never returns, and at the
same time runs, through ``Bash``, a command that starts a background ``sleep``
and writes its pid to ``READY`` (a FIFO the test reads) before it waits. So
when the test reads a pid, the run is mid-command with a child agent running:
the state a signal must shut down.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from subagents import testing
from subagents.runtime import ModelRequest, Reply, ReplyPolicy, ScriptedToolCall, ToolResultBlock

#: What the Bash command's background process does: long enough to outlive any test.
BACKGROUND = "sleep 300"


def policies(ready: str) -> dict[str, ReplyPolicy]:
    """The lead's and the Explore agent's policies; the Bash command reports to ``ready``."""
    command = f"{BACKGROUND} & echo $! > {shlex.quote(ready)}; wait"

    def lead(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if not any(type(block) is ToolResultBlock for block in last.content):  # a new prompt
            return Reply(
                text="Starting.",
                tool_calls=(
                    ScriptedToolCall(
                        "spawn_agent", {"agent_type": "Explore", "message": "Look around."}
                    ),
                    ScriptedToolCall("Bash", {"command": command}),
                ),
            )
        return testing.say("Done.")

    def explore(request: ModelRequest) -> Reply:
        return testing.hang("Thinking.")

    return {"Explore": explore, "*": lead}


def main(argv: list[str]) -> int:
    """Run the command line ``argv[1:]`` with the policies reporting to ``argv[0]``."""
    import subagents.cli._run as cli_run
    from subagents.cli import main as cli_main

    ready = argv[0]

    def survey_policies(*_: Any, **__: Any) -> dict[str, ReplyPolicy]:
        return policies(ready)

    cli_run.survey_policies = survey_policies  # type: ignore[assignment]
    return cli_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
