"""What ``subagents tools list`` shows of a tool: its source, its flags, the filter's reason.

A tool's source is ``builtin`` (the file and shell tools we ship),
``lifecycle`` (the tools that drive other agents), ``python`` (a function
tool or any tool an embedder passes), ``mcp:<server>`` (a tool of an MCP
server, named ``mcp__<server>__<tool>``) or ``server`` (a tool the model
provider runs). A tool may say so itself with a ``source`` string attribute,
which wins: the MCP and provider-side tools do.
"""

from __future__ import annotations

from typing import Final

import msgspec

from subagents.agents import LIFECYCLE_TOOLS
from subagents.tools._filter import ToolSelection
from subagents.tools._protocol import Tool

__all__ = ["TOOL_SOURCES", "ToolRow", "tool_rows", "tool_source"]

#: Every source a tool may have; ``mcp`` stands for ``mcp:<server>``.
TOOL_SOURCES: Final = ("builtin", "lifecycle", "python", "mcp", "server")

#: The package of the tools we ship (file, shell, web, todo); each is a type of its own.
_BUILTIN_PACKAGE: Final = "subagents.tools._builtin"


class ToolRow(msgspec.Struct, frozen=True):
    """One parent tool as the listing shows it; ``reason`` is ``None`` when the agent keeps it."""

    name: str
    source: str
    read_only: bool
    needs_approval: bool
    reason: str | None


def tool_source(tool: Tool) -> str:
    """Where ``tool`` comes from: see the module docstring."""
    declared = getattr(tool, "source", None)
    if isinstance(declared, str) and declared:
        return declared
    if type(tool).__module__.startswith(_BUILTIN_PACKAGE + "."):
        return "builtin"
    if tool.name in LIFECYCLE_TOOLS and type(tool).__module__.startswith(
        "subagents.tools._lifecycle"
    ):
        return "lifecycle"
    parts = tool.name.split("__")
    if len(parts) >= 3 and parts[0] == "mcp" and parts[1]:
        return f"mcp:{parts[1]}"
    return "python"


def tool_rows(selection: ToolSelection, tools: tuple[Tool, ...]) -> list[ToolRow]:
    """One row per parent tool of ``selection`` (``tools``, in order), with the removal reason."""
    rows: list[ToolRow] = []
    for tool, decision in zip(tools, selection.decisions, strict=True):
        reason = None
        if not decision.kept:
            assert decision.layer is not None
            layer = f"layer {decision.layer.number}, {decision.layer.value}"
            reason = f"removed by {layer}: {decision.reason}"
        rows.append(
            ToolRow(
                name=tool.name,
                source=tool_source(tool),
                read_only=tool.flags.read_only,
                needs_approval=tool.flags.needs_approval,
                reason=reason,
            )
        )
    return rows
