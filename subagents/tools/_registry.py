"""The registry: every tool the runtime knows, checked once when it is registered."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, final

import msgspec

from subagents.tools._config import TOOL_NAME_PATTERN
from subagents.tools._context import ToolContext
from subagents.tools._dispatch import ToolArguments, dispatch, not_available
from subagents.tools._exceptions import ToolRegistrationError
from subagents.tools._filter import ToolPolicy, ToolSelection, TrustPolicy, filter_tools
from subagents.tools._protocol import Tool, ToolFlags, ToolResult
from subagents.tools._schema import input_schema, tool_spec

__all__ = ["ToolRegistry", "validate_tool_name"]

_NAME_RE = re.compile(TOOL_NAME_PATTERN)


def validate_tool_name(name: object) -> str:
    """Return ``name`` if a model API accepts it as a tool name (``mcp__server__tool`` does)."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ToolRegistrationError(
            f"invalid tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' "
            "(MCP tools are named mcp__<server>__<tool>)"
        )
    return name


@final
class ToolRegistry:
    """Holds tools by name, in registration order; the parent toolset of filtering."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add ``tool``; raise :class:`ToolRegistrationError` if it is malformed or a duplicate."""
        name = validate_tool_name(getattr(tool, "name", None))
        if name in self._tools:
            raise ToolRegistrationError(f"a tool named '{name}' is already registered")
        description = getattr(tool, "description", None)
        if not isinstance(description, str) or not description.strip():
            raise ToolRegistrationError(f"tool '{name}' needs a non-empty description")
        if not isinstance(getattr(tool, "flags", None), ToolFlags):
            raise ToolRegistrationError(f"tool '{name}' must declare its flags as a ToolFlags")
        if not callable(getattr(tool, "call", None)):
            raise ToolRegistrationError(f"tool '{name}' has no call method")
        arguments_type = getattr(tool, "arguments_type", None)
        if not (isinstance(arguments_type, type) and issubclass(arguments_type, msgspec.Struct)):
            raise ToolRegistrationError(f"tool '{name}': arguments_type must be a msgspec.Struct")
        if not arguments_type.__struct_config__.forbid_unknown_fields:
            raise ToolRegistrationError(
                f"tool '{name}': declare {arguments_type.__qualname__} with "
                "forbid_unknown_fields=True so unknown arguments are reported to the model"
            )
        input_schema(arguments_type)
        self._tools[name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(tuple(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order."""
        return tuple(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """Every tool in the Anthropic tools API format."""
        return [tool_spec(tool) for tool in self._tools.values()]

    def select(self, policy: ToolPolicy, trust: TrustPolicy | None = None) -> ToolSelection:
        """The tools an agent with ``policy`` gets, with the reason for each decision."""
        return filter_tools(self._tools.values(), policy, trust)

    async def call(self, name: str, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        """Run a call against every registered tool, unfiltered (for a top-level agent)."""
        tool = self._tools.get(name)
        if tool is None:
            return not_available(name)
        return await dispatch(tool, arguments, ctx)
