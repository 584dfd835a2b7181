"""``ListMcpResourcesTool`` and ``ReadMcpResourceTool``: an agent's MCP servers' resources.

Claude Code's tools of these names (https://code.claude.com/docs/en/tools-reference;
the tool descriptions: "Lists available resources from configured MCP servers.
Each resource object includes a 'server' field", and "Reads a specific resource
from an MCP server, identified by server name and resource URI", parameters
``server`` and ``uri``). List takes an optional ``server``; Read takes both.
They are offered to an agent that has at least one MCP server
(:func:`mcp_resource_tools`) and filtered like every tool. Both only read, so
they are read-only and need no approval. Every failure (unknown server, server
down, refused URI, deadline) is a tool error. A resource's text comes back as
it is, cut at ``MCP_RESOURCE_MAX_CHARS`` in all; a binary (blob) content is
described by its MIME type and size, never inlined.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Final, final

import attrs
import msgspec

from subagents.tools._config import MCP_RESOURCE_MAX_CHARS
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._protocol import Tool, ToolFlags, ToolResult

if TYPE_CHECKING:
    from subagents.tools._mcp.server import McpServer

__all__ = [
    "MCP_RESOURCE_TOOL_NAMES",
    "ListMcpResourcesArgs",
    "ListMcpResourcesTool",
    "ReadMcpResourceArgs",
    "ReadMcpResourceTool",
    "mcp_resource_tools",
]

#: The two resource tools' names, as Claude Code spells them.
MCP_RESOURCE_TOOL_NAMES: Final = ("ListMcpResourcesTool", "ReadMcpResourceTool")

_FLAGS: Final = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

_ServerName = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class ListMcpResourcesArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ListMcpResourcesTool: an optional server to list alone."""

    server: (
        Annotated[
            _ServerName,
            msgspec.Meta(description="Optional server name; without it every server is listed."),
        ]
        | None
    ) = None


class ReadMcpResourceArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ReadMcpResourceTool: the server and the resource's URI."""

    server: Annotated[
        _ServerName, msgspec.Meta(description="The MCP server to read the resource from.")
    ]
    uri: Annotated[
        str,
        msgspec.Meta(min_length=1, max_length=8192, description="The URI of the resource to read."),
    ]


def _by_name(servers: Iterable[McpServer]) -> Mapping[str, McpServer]:
    found: dict[str, McpServer] = {}
    for server in servers:
        found.setdefault(server.name, server)
    return MappingProxyType(found)


def _unknown(name: str, servers: Mapping[str, McpServer]) -> ToolResult:
    known = ", ".join(sorted(servers)) or "none"
    return ToolResult.error(f"No MCP server named {name!r}; this agent's servers: {known}")


def _resource_row(server: str, resource: Any) -> dict[str, object]:
    row: dict[str, object] = {"uri": str(resource.uri), "name": resource.name}
    if resource.mime_type:
        row["mimeType"] = resource.mime_type
    if resource.description:
        row["description"] = resource.description
    row["server"] = server
    return row


@final
@attrs.frozen
class ListMcpResourcesTool:
    """Lists the resources of the agent's MCP servers, or of one of them."""

    servers: Mapping[str, McpServer] = attrs.field(converter=_by_name, repr=False)

    name = "ListMcpResourcesTool"
    source = "builtin"
    description = (
        "List the resources your MCP servers offer (files, records, documents they expose by "
        "URI). Give `server` to list one server only. Each resource has a uri, a name, often a "
        "mimeType and description, and the server it comes from; read one with "
        "ReadMcpResourceTool."
    )
    arguments_type = ListMcpResourcesArgs
    flags = _FLAGS

    async def call(self, args: ListMcpResourcesArgs, ctx: ToolContext, /) -> ToolResult:
        """The resources as a JSON array; servers that could not answer are named after it."""
        if args.server is not None and args.server not in self.servers:
            return _unknown(args.server, self.servers)
        names = [args.server] if args.server is not None else list(self.servers)
        rows: list[dict[str, object]] = []
        failed: list[str] = []
        for name in names:
            try:
                resources = await self.servers[name].list_resources(deadline=ctx.deadline)
            except ToolError as exc:
                failed.append(str(exc))
                continue
            rows.extend(_resource_row(name, resource) for resource in resources)
        if failed and (args.server is not None or not rows):
            return ToolResult.error("\n".join(failed), resources=0)
        if rows:
            text = msgspec.json.encode(rows).decode("utf-8")
        else:
            text = "No resources found. MCP servers may still provide tools without resources."
        if failed:
            text += "\n\nNot listed:\n" + "\n".join(failed)
        return ToolResult.ok(text, resources=len(rows))


def _blob_size(blob: str) -> int:
    """The decoded size of base64 ``blob``, without decoding it."""
    stripped = blob.rstrip("=")
    return len(stripped) * 3 // 4


def _content_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    mime = block.mime_type or "unknown type"
    blob = getattr(block, "blob", "")
    size = _blob_size(blob) if isinstance(blob, str) else 0
    return f"[binary content of {block.uri}: {mime}, {size} bytes, not shown]"


def _joined(contents: Sequence[Any]) -> str:
    if len(contents) == 1:
        return _content_text(contents[0])
    return "\n\n".join(
        f"--- {block.uri} ({block.mime_type or 'unknown type'}) ---\n{_content_text(block)}"
        for block in contents
    )


@final
@attrs.frozen
class ReadMcpResourceTool:
    """Reads one resource of one of the agent's MCP servers, by URI."""

    servers: Mapping[str, McpServer] = attrs.field(converter=_by_name, repr=False)

    name = "ReadMcpResourceTool"
    source = "builtin"
    description = (
        "Read a resource of one of your MCP servers, by server name and resource URI (as "
        "ListMcpResourcesTool gives them). Text comes back as it is (long text is cut); "
        "binary content is described by its type and size."
    )
    arguments_type = ReadMcpResourceArgs
    flags = _FLAGS

    async def call(self, args: ReadMcpResourceArgs, ctx: ToolContext, /) -> ToolResult:
        """The resource's text, capped; any failure an error result."""
        server = self.servers.get(args.server)
        if server is None:
            return _unknown(args.server, self.servers)
        try:
            result = await server.read_resource(args.uri, deadline=ctx.deadline)
        except ToolError as exc:
            return ToolResult.error(str(exc), server=args.server)
        contents = list(result.contents)
        if not contents:
            return ToolResult.ok(
                f"Resource {args.uri} is empty.", server=args.server, truncated=False
            )
        text = _joined(contents)
        truncated = len(text) > MCP_RESOURCE_MAX_CHARS
        if truncated:
            more = len(text) - MCP_RESOURCE_MAX_CHARS
            text = f"{text[:MCP_RESOURCE_MAX_CHARS]}\n[resource cut here: {more} more characters]"
        return ToolResult.ok(text, server=args.server, truncated=truncated)


def mcp_resource_tools(servers: Sequence[McpServer]) -> tuple[Tool, ...]:
    """Both resource tools for an agent with ``servers``; none when it has no MCP server."""
    if not servers:
        return ()
    return (ListMcpResourcesTool(servers), ReadMcpResourceTool(servers))
