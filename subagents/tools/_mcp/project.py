"""A project's ``.mcp.json`` (Claude Code's shape), read with typed, one-line problems.

``{"mcpServers": {name: {"command", "args", "env"} | {"type": "http", "url", "headers"}}}``
as documented at https://docs.claude.com/en/docs/claude-code/mcp ("Project scope").
The file is repository content: the caller reads it only for a trusted
workspace, and every entry is checked; a bad entry is a problem line, not an
error that stops the run. Only stdio entries are started for now; an HTTP
entry is reported as not supported.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import msgspec

from subagents._small_file import FileRefused, read_small_file
from subagents.tools._mcp.config import McpServerConfig

__all__ = ["MCP_JSON", "McpProject", "mcp_server_config", "read_mcp_json"]

#: The project file Claude Code reads its project-scope MCP servers from.
MCP_JSON = ".mcp.json"

_MAX_BYTES = 256 * 1024


@attrs.frozen
class McpProject:
    """The servers a ``.mcp.json`` configures, and one line per entry that was refused."""

    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


_KEYS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "auto_approve",
        "startup_timeout_sec",
        "tool_timeout_sec",
    }
)


def mcp_server_config(name: str, raw: Any) -> McpServerConfig:
    """One server entry, in Claude Code's ``.mcp.json`` or Codex's ``[mcp_servers.NAME]`` shape.

    ``command``, ``args``, ``env`` and ``cwd`` as both write them; Codex's
    ``startup_timeout_sec`` and ``tool_timeout_sec`` (codex-rs
    ``McpServerConfig``); ``auto_approve`` (ours) lets tools without
    ``readOnlyHint`` run without approval. Raises ``TypeError``/``ValueError``
    with what is wrong, for the caller to report with the entry's place.
    """
    if not isinstance(raw, Mapping):
        raise TypeError("must be a table with a command (stdio)")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
    kind = raw.get("type", "stdio")
    if kind != "stdio":
        raise ValueError(f"transport {kind!r} is not supported yet (stdio only)")
    command = raw.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError("needs a 'command' string")
    env = raw.get("env", {})
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise ValueError("'env' must map names to strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("'cwd' must be a path string")
    auto_approve = raw.get("auto_approve", False)
    if not isinstance(auto_approve, bool):
        raise TypeError("'auto_approve' must be true or false")
    timeouts: dict[str, float] = {}
    for key, field in (
        ("startup_timeout_sec", "startup_timeout"),
        ("tool_timeout_sec", "call_timeout"),
    ):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError(f"'{key}' must be a number of seconds > 0")
        timeouts[field] = float(value)
    return McpServerConfig(
        name=name,
        command=command,
        args=_strings(raw.get("args", []), "'args'"),
        env=env,
        cwd=cwd,
        auto_approve=auto_approve,
        **timeouts,
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
            configs.append(mcp_server_config(name, raw))
        except (TypeError, ValueError) as exc:
            problems.append(f"{path}: MCP server {name!r} ignored: {exc}")
    return McpProject(tuple(configs), tuple(problems))
