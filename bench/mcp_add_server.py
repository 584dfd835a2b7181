"""A stdio MCP server with one tool, ``add``: the server side of ``subagents bench``'s mcp_call.

Made with the ``mcp`` SDK's ``MCPServer`` (FastMCP before mcp 2), so the
scenario needs nothing beyond the package's own dependencies. ``add`` is the
same function as bench_agents.py's ``@tool`` ``add``, so mcp_call compares an
MCP round trip with a direct function tool doing the same work. Marked
read-only (``readOnlyHint``), as the function tool is.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("bench")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
