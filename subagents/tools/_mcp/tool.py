"""One MCP tool as a :class:`~subagents.tools.Tool`: schema, flags and the call.

The server's JSON Schema becomes a ``msgspec.Struct`` (top-level properties
with their JSON types and descriptions; nested values are left to the server
to check), so MCP tools are validated and filtered like every other tool. The
``readOnlyHint`` annotation maps to ``read_only``; every other MCP tool needs
approval unless its server is configured with ``auto_approve``.
"""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING, Annotated, Any

import attrs
import msgspec

from subagents.tools._mcp.config import mcp_tool_name
from subagents.tools._protocol import ToolFlags, ToolResult

if TYPE_CHECKING:
    from subagents.tools._context import ToolContext
    from subagents.tools._mcp.server import McpServer

__all__ = ["McpTool", "arguments_struct"]

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
    "null": None,
}


def _field_type(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return Any
    kind = prop.get("type")
    base: Any = _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any
    description = prop.get("description")
    if isinstance(description, str) and base is not Any:
        return Annotated[base, msgspec.Meta(description=description[:1024])]
    return base


def arguments_struct(struct_name: str, schema: Any) -> type[msgspec.Struct]:
    """A ``msgspec.Struct`` for an MCP tool's ``inputSchema`` (unknown fields refused)."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if not isinstance(props, dict):
        props = {}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    fields: list[Any] = []
    taken = {key for key in props if isinstance(key, str)}
    for index, (key, prop) in enumerate(props.items()):
        if not isinstance(key, str):
            continue
        attr = key
        if not key.isidentifier() or keyword.iskeyword(key) or key.startswith("_"):
            # A stand-in Python name for a JSON key such as "repo-name"; it must not be
            # another property's name, or one of the two would silently vanish.
            attr = f"field_{index}"
            while attr in taken:
                attr += "_"
            taken.add(attr)
        kind = _field_type(prop)
        if key in required:
            fields.append((attr, kind, msgspec.field(name=key)))
        else:
            fields.append(
                (attr, kind | msgspec.UnsetType, msgspec.field(default=msgspec.UNSET, name=key))
            )
    fields.sort(key=lambda f: len(f) == 3 and f[2].default is not msgspec.NODEFAULT)
    return msgspec.defstruct(struct_name, fields, forbid_unknown_fields=True, kw_only=True)


@attrs.frozen
class McpTool:
    """A tool of an MCP server, called through the server's shared session."""

    server: McpServer = attrs.field(repr=False)
    tool_name: str
    description: str
    arguments_type: type[msgspec.Struct] = attrs.field(repr=False)
    flags: ToolFlags

    @property
    def name(self) -> str:
        """``mcp__<server>__<tool>``."""
        return mcp_tool_name(self.server.name, self.tool_name)

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        """Call the tool on its server under the call's deadline."""
        arguments = msgspec.to_builtins(args)
        return await self.server.call_tool(self.tool_name, arguments, deadline=ctx.deadline)
