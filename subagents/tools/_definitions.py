"""From an agent definition to the filter's view of it."""

from __future__ import annotations

from subagents.agents import AgentDefinition, PermissionMode

from ._filter import ToolPolicy

__all__ = ["tool_policy"]


def tool_policy(
    definition: AgentDefinition,
    *,
    depth: int = 1,
    max_depth: int = 1,
    background: bool | None = None,
) -> ToolPolicy:
    """The :class:`ToolPolicy` of an agent of type ``definition`` spawned at ``depth``.

    ``background`` overrides the definition's own flag (a ``Task`` call may run
    any agent in the background). ``permissionMode: plan`` makes the agent
    read-only, as in Claude Code.
    """
    return ToolPolicy(
        allow=definition.tools,
        deny=definition.disallowed_tools,
        source=definition.source.value,
        background=definition.background if background is None else background,
        depth=depth,
        max_depth=max_depth,
        read_only=definition.permission_mode is PermissionMode.PLAN,
    )
