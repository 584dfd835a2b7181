"""The lifecycle tools: Codex's ``spawn_agent`` family and Claude Code's ``Task``/``TaskOutput``.

Each tool is a thin layer over an :class:`AgentHost`: it validates nothing the
registry has not already validated, asks the host, and writes the answer as
compact JSON (or, for a foreground ``Task``, the child's report followed by a
``<usage>`` line). A refusal from the host (limit reached, depth reached,
unknown id, closed agent, unknown agent type, any other ``SubagentsError``)
comes back as a tool error whose text says what to do; any other exception is
left to the registry's dispatch, and cancellation always propagates.

The tools themselves live in :mod:`subagents.tools._spawn_agent_tools` (Codex's
five) and :mod:`subagents.tools._task_tools` (``Task``/``Agent``,
``TaskOutput``), their arguments in :mod:`subagents.tools._lifecycle_args`;
this module binds them all to a host.
"""

from __future__ import annotations

from subagents.tools._lifecycle import AgentHost
from subagents.tools._protocol import Tool
from subagents.tools._spawn_agent_tools import (
    CloseAgentTool,
    ResumeAgentTool,
    SendInputTool,
    SpawnAgentTool,
    WaitTool,
)
from subagents.tools._task_tools import TaskOutputTool, TaskTool

__all__ = ["lifecycle_tools"]


def lifecycle_tools(host: AgentHost) -> tuple[Tool, ...]:
    """Every lifecycle tool bound to ``host``: Codex's five, ``Task``, ``Agent``, ``TaskOutput``."""
    return (
        SpawnAgentTool(host),
        SendInputTool(host),
        WaitTool(host),
        CloseAgentTool(host),
        ResumeAgentTool(host),
        TaskTool(host),
        TaskTool(host, name="Agent"),
        TaskOutputTool(host),
    )
