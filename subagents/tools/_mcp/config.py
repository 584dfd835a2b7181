"""How to reach one MCP server: a stdio command or a streamable HTTP URL.

The two shapes of Claude Code's ``.mcp.json`` (``command`` or ``"type": "http"``
with ``url``) and of Codex's ``[mcp_servers.NAME]`` (``command`` or ``url``),
https://docs.claude.com/en/docs/claude-code/mcp and codex-rs
``McpServerTransportConfig`` (``Stdio`` / ``StreamableHttp``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import attrs

from subagents.tools._config import (
    MCP_CALL_TIMEOUT_SECONDS,
    MCP_RESTART_BACKOFF_MAX_SECONDS,
    MCP_RESTART_BACKOFF_SECONDS,
    MCP_STARTUP_TIMEOUT_SECONDS,
)

__all__ = ["McpServerConfig", "mcp_tool_name"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def _freeze(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


def _tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _check_name(_inst: object, _attr: object, value: str) -> None:
    if not _NAME.fullmatch(value) or "__" in value:
        raise ValueError(
            f"MCP server name {value!r} must be 1-40 letters, digits, '_' or '-' "
            "without '__' (it becomes part of tool names mcp__<server>__<tool>)"
        )


def _check_positive(_inst: object, attr: attrs.Attribute[float], value: float) -> None:
    if not value > 0:
        raise ValueError(f"MCP server setting {attr.name} must be > 0, got {value!r}")


def _check_http_url(_inst: object, _attr: object, value: str | None) -> None:
    if value is not None and not re.match(r"^https?://[^/\s]", value):
        raise ValueError(f"MCP server url {value!r} must start with http:// or https://")


@attrs.frozen
class McpServerConfig:
    """One MCP server: a stdio ``command`` (with ``args``, extra ``env``, ``cwd``)
    or a streamable HTTP ``url`` (with ``headers``, Codex's ``bearer_token_env_var``
    and ``env_headers``: header name to the environment variable holding its value).

    Exactly one of ``command`` and ``url`` is set; the stdio-only and HTTP-only
    settings are refused on the other kind. Environment variables named by
    ``bearer_token_env_var``/``env_headers`` are read when the server is
    connected, so the secret is never part of the configuration value.

    ``auto_approve`` lets its tools run without approval even when they do not
    declare ``readOnlyHint``; by default only read-only tools skip approval.
    ``restart_backoff`` is the first wait before a crashed server is started
    again (doubled per failure, at most ``restart_backoff_max``).
    """

    name: str = attrs.field(validator=_check_name)
    command: str | None = None
    args: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_freeze, eq=False, repr=False)
    cwd: str | None = None
    url: str | None = attrs.field(default=None, validator=_check_http_url)
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_freeze, eq=False, repr=False)
    bearer_token_env_var: str | None = None
    env_headers: Mapping[str, str] = attrs.field(factory=dict, converter=_freeze, eq=False)
    auto_approve: bool = False
    startup_timeout: float = attrs.field(
        default=MCP_STARTUP_TIMEOUT_SECONDS, validator=_check_positive
    )
    call_timeout: float = attrs.field(default=MCP_CALL_TIMEOUT_SECONDS, validator=_check_positive)
    restart_backoff: float = attrs.field(
        default=MCP_RESTART_BACKOFF_SECONDS, validator=attrs.validators.ge(0)
    )
    restart_backoff_max: float = attrs.field(
        default=MCP_RESTART_BACKOFF_MAX_SECONDS, validator=attrs.validators.ge(0)
    )

    def __attrs_post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.name!r} needs either a 'command' (stdio) or a 'url' "
                "(streamable HTTP), not both and not neither"
            )
        if self.command is not None:
            if not self.command:
                raise ValueError(f"MCP server {self.name!r}: 'command' is empty")
            extra = [
                key
                for key, used in (
                    ("headers", self.headers),
                    ("bearer_token_env_var", self.bearer_token_env_var),
                    ("env_headers", self.env_headers),
                )
                if used
            ]
            if extra:
                raise ValueError(
                    f"MCP server {self.name!r} runs a command (stdio): "
                    f"{', '.join(extra)} apply only to a 'url' server"
                )
        else:
            extra = [
                key
                for key, used in (("args", self.args), ("env", self.env), ("cwd", self.cwd))
                if used
            ]
            if extra:
                raise ValueError(
                    f"MCP server {self.name!r} is reached by 'url' (HTTP): "
                    f"{', '.join(extra)} apply only to a 'command' server"
                )

    @property
    def transport(self) -> str:
        """The transport's name, as ``subagents tools list`` shows it: stdio or http."""
        return "stdio" if self.command is not None else "http"


def mcp_tool_name(server: str, tool: str) -> str:
    """Claude Code's name for an MCP tool: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"
