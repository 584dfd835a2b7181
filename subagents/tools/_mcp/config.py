"""How to reach one MCP server: a stdio command (Claude Code's ``.mcp.json`` shape)."""

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


@attrs.frozen
class McpServerConfig:
    """One stdio MCP server: ``command`` with ``args`` and extra ``env``.

    ``auto_approve`` lets its tools run without approval even when they do not
    declare ``readOnlyHint``; by default only read-only tools skip approval.
    ``restart_backoff`` is the first wait before a crashed server is started
    again (doubled per failure, at most ``restart_backoff_max``).
    """

    name: str = attrs.field(validator=_check_name)
    command: str
    args: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=_freeze, eq=False)
    cwd: str | None = None
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

    @property
    def transport(self) -> str:
        """The transport's name, as ``subagents tools list`` shows it."""
        return "stdio"


def mcp_tool_name(server: str, tool: str) -> str:
    """Claude Code's name for an MCP tool: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"
