"""A project's ``.mcp.json`` (Claude Code's shape), read with typed, one-line problems.

``{"mcpServers": {name: {"command", "args", "env"} | {"type": "http", "url", "headers"}}}``
as documented at https://docs.claude.com/en/docs/claude-code/mcp ("Project scope",
"Environment variable expansion in .mcp.json": ``${VAR}`` and ``${VAR:-default}``
in ``command``, ``args``, ``env``, ``url`` and ``headers``; a variable that is
not set and has no default makes the entry fail). The file is repository
content: the caller expands variables, and starts its servers, only for a
trusted workspace; every entry is checked, and a bad entry is a problem line,
not an error that stops the run. ``"type": "sse"`` (deprecated in Claude Code)
is refused with a pointer to ``http``.
"""

from __future__ import annotations

import re
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


def _string_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{what} must map names to strings")
    return dict(value)


_KEYS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "http_headers",
        "bearer_token_env_var",
        "env_http_headers",
        "auto_approve",
        "startup_timeout_sec",
        "tool_timeout_sec",
    }
)

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(text: str, environ: Mapping[str, str]) -> str:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` replaced (Claude Code's ``.mcp.json``).

    One pass, no nesting: an expanded value is never expanded again. Raises
    ``ValueError`` naming a variable that is not set and has no default.
    """

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        raise ValueError(
            f"environment variable {name} is not set; set it or write ${{{name}:-default}}"
        )

    return _VARIABLE.sub(one, text)


def _expand_entry(raw: Any, environ: Mapping[str, str]) -> Any:
    """``raw`` with variables expanded in the fields Claude Code expands; others untouched."""
    if not isinstance(raw, Mapping):
        return raw
    entry = dict(raw)
    for key in ("command", "url"):
        if isinstance(entry.get(key), str):
            entry[key] = expand_variables(entry[key], environ)
    if isinstance(entry.get("args"), list):
        entry["args"] = [
            expand_variables(v, environ) if isinstance(v, str) else v for v in entry["args"]
        ]
    for key in ("env", "headers"):
        if isinstance(entry.get(key), Mapping):
            entry[key] = {
                k: expand_variables(v, environ) if isinstance(v, str) else v
                for k, v in entry[key].items()
            }
    return entry


def mcp_server_config(name: str, raw: Any) -> McpServerConfig:
    """One server entry, in Claude Code's ``.mcp.json`` or Codex's ``[mcp_servers.NAME]`` shape.

    stdio: ``command``, ``args``, ``env`` and ``cwd`` as both write them.
    Streamable HTTP: Claude Code's ``"type": "http"`` with ``url`` and
    ``headers``, or Codex's ``url`` with ``http_headers``,
    ``bearer_token_env_var`` and ``env_http_headers`` (codex-rs
    ``McpServerTransportConfig::StreamableHttp``). Codex's
    ``startup_timeout_sec`` and ``tool_timeout_sec``; ``auto_approve`` (ours)
    lets tools without ``readOnlyHint`` run without approval. Raises
    ``TypeError``/``ValueError`` with what is wrong, for the caller to report
    with the entry's place.
    """
    if not isinstance(raw, Mapping):
        raise TypeError("must be a table with a command (stdio) or a url (http)")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
    kind = raw.get("type", "http" if "url" in raw and "command" not in raw else "stdio")
    if kind == "sse":
        raise ValueError(
            'transport "sse" is deprecated and not supported; '
            'use "type": "http" with the server\'s streamable HTTP url'
        )
    if kind not in ("stdio", "http"):
        raise ValueError(f'transport {kind!r} is not supported; use "stdio" or "http"')
    auto_approve = raw.get("auto_approve", False)
    if not isinstance(auto_approve, bool):
        raise TypeError("'auto_approve' must be true or false")
    timeouts: dict[str, Any] = {}
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
    command, url = raw.get("command"), raw.get("url")
    if kind == "http" and (not isinstance(url, str) or not url):
        raise ValueError("an http server needs a 'url' string")
    if kind == "stdio" and (not isinstance(command, str) or not command):
        raise ValueError("needs a 'command' string (stdio) or a 'url' (http)")
    if command is not None and not isinstance(command, str):
        raise ValueError("'command' must be a string")
    if url is not None and not isinstance(url, str):
        raise ValueError("'url' must be a string")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("'cwd' must be a path string")
    if "headers" in raw and "http_headers" in raw:
        raise ValueError("give 'headers' (Claude Code) or 'http_headers' (Codex), not both")
    token_var = raw.get("bearer_token_env_var")
    if token_var is not None and (not isinstance(token_var, str) or not token_var):
        raise ValueError("'bearer_token_env_var' must name an environment variable")
    # the class refuses a mix of the two kinds (a url with args, a command with headers)
    return McpServerConfig(
        name=name,
        command=command,
        args=_strings(raw.get("args", []), "'args'"),
        env=_string_map(raw.get("env", {}), "'env'"),
        cwd=cwd,
        url=url,
        headers=_string_map(raw.get("headers", raw.get("http_headers", {})), "'headers'"),
        bearer_token_env_var=token_var,
        env_headers=_string_map(raw.get("env_http_headers", {}), "'env_http_headers'"),
        auto_approve=auto_approve,
        **timeouts,
    )


def _in_project(config: McpServerConfig, root: Path) -> McpServerConfig:
    """A stdio server of the project runs in the project folder, as Claude Code runs it.

    Without ``cwd`` it would run wherever the embedding process happens to be,
    and a relative ``command`` or ``args`` path (``./tools/server.py``) would
    name another folder's file; a relative ``cwd`` is the project's subfolder.
    """
    if config.transport != "stdio":
        return config
    cwd = root if config.cwd is None else root / config.cwd
    return attrs.evolve(config, cwd=str(cwd))


def read_mcp_json(root: Path, environ: Mapping[str, str] | None = None) -> McpProject:
    """The servers of ``root/.mcp.json`` (none when there is no such file), run in ``root``.

    With ``environ`` (a trusted workspace), ``${VAR}`` and ``${VAR:-default}``
    are expanded from it; without, entries are read as written (an untrusted
    repository's file is only reported, and it never sees the environment).
    """
    path = root / MCP_JSON
    if not path.exists():
        return McpProject()
    try:
        data = msgspec.json.decode(read_small_file(path, _MAX_BYTES))
    except (OSError, FileRefused, msgspec.DecodeError, ValueError, RecursionError) as exc:
        # RecursionError: arrays or objects nested thousands deep.
        return McpProject(problems=(f"{path}: not read ({exc}); fix or remove the file",))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return McpProject(problems=(f"{path}: needs an object 'mcpServers'",))
    configs: list[McpServerConfig] = []
    problems: list[str] = []
    for name, raw in servers.items():
        try:
            entry = raw if environ is None else _expand_entry(raw, environ)
            configs.append(_in_project(mcp_server_config(name, entry), root))
        except (TypeError, ValueError) as exc:
            problems.append(f"{path}: MCP server {name!r} ignored: {exc}")
    return McpProject(tuple(configs), tuple(problems))
