"""A project's ``.mcp.json`` (Claude Code's shape), read with typed, one-line problems.

``{"mcpServers": {name: {"command", "args", "env"} | {"type": "http", "url", "headers"}}}``
as documented at https://docs.claude.com/en/docs/claude-code/mcp ("Project scope").
The file is repository content: the caller reads it only for a trusted
workspace, and every entry is checked; a bad entry is a problem line, not an
error that stops the run. Only stdio entries are started for now; an HTTP
entry is reported as not supported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import msgspec

from subagents._small_file import FileRefused, read_small_file
from subagents.tools._mcp.config import McpServerConfig

__all__ = ["MCP_JSON", "McpProject", "read_mcp_json"]

#: The project file Claude Code reads its project-scope MCP servers from.
MCP_JSON = ".mcp.json"

_MAX_BYTES = 256 * 1024


@attrs.frozen
class McpProject:
    """The servers a ``.mcp.json`` configures, and one line per entry that was refused."""

    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def _entry(name: str, raw: Any) -> McpServerConfig:
    if not isinstance(raw, dict):
        raise TypeError("must be an object with a command (stdio) or a url (http)")
    kind = raw.get("type", "stdio")
    if kind != "stdio":
        raise ValueError(f"transport {kind!r} is not supported yet (stdio only)")
    command = raw.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError("needs a 'command' string")
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError("'env' must map names to strings")
    return McpServerConfig(
        name=name, command=command, args=_strings(raw.get("args", []), "'args'"), env=env
    )


def read_mcp_json(root: Path) -> McpProject:
    """The servers of ``root/.mcp.json`` (none when there is no such file)."""
    path = root / MCP_JSON
    if not path.exists():
        return McpProject()
    try:
        data = msgspec.json.decode(read_small_file(path, _MAX_BYTES))
    except (OSError, FileRefused, msgspec.DecodeError) as exc:
        return McpProject(problems=(f"{path}: not read ({exc}); fix or remove the file",))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return McpProject(problems=(f"{path}: needs an object 'mcpServers'",))
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    for name, raw in servers.items():
        try:
            configs.append(_entry(name, raw))
        except (TypeError, ValueError) as exc:
            problems.append(f"{path}: MCP server {name!r} ignored: {exc}")
    return McpProject(tuple(configs), tuple(problems))
