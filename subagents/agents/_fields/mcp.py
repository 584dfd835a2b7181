"""A definition's ``mcpServers``: the MCP servers that agent, and only it, is given.

Claude Code's subagent field (https://code.claude.com/docs/en/sub-agents): each
entry is the name of a configured server or an inline ``{name: {command, args,
env}}`` table; a mapping of name to table is read the same way. The tables
are checked again, with the runtime's own rules, when the agent starts.
"""

from __future__ import annotations

import re
from typing import Any

from subagents.agents._definition import McpServerRef
from subagents.agents._diagnostics import DiagnosticCode
from subagents.agents._fields.interpreter import Interpreter

__all__ = ["field_mcp_servers"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def _ref(it: Interpreter, keys: list[str | int], name: Any, config: Any) -> McpServerRef | None:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or "__" in name:
        it.error(
            DiagnosticCode.INVALID_VALUE,
            keys,
            f"MCP server name {name!r} must be 1-40 letters, digits, '_' or '-' without '__'",
        )
        return None
    if config is not None and not (
        isinstance(config, dict) and all(isinstance(k, str) for k in config)
    ):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [*keys, name],
            f"inline MCP server {name!r} must be a table such as {{command, args, env}}",
        )
        return None
    return McpServerRef(name, config)


def field_mcp_servers(it: Interpreter, key: str, value: Any) -> None:
    entries: list[tuple[list[str | int], Any, Any]] = []
    if isinstance(value, dict):
        entries = [([key], name, config) for name, config in value.items()]
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                entries.extend(([key, index], name, config) for name, config in item.items())
            else:
                entries.append(([key, index], item, None))
    else:
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [key],
            f"{key} must be a list of server names or {{name: {{command, args}}}} tables",
        )
        return
    refs = [_ref(it, keys, name, config) for keys, name, config in entries]
    if any(ref is None for ref in refs):
        return
    chosen = tuple(ref for ref in refs if ref is not None)
    it.set("mcp_servers", chosen, [key])
    it.applied([key], f"{len(chosen)} MCP server(s) for this agent only")
