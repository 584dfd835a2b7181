"""MCP servers as tools, through the official ``mcp`` Python SDK.

How it runs under Trio: the SDK is written against ``anyio``, and anyio picks
its backend from the running event loop (``sniffio``), so ``stdio_client`` and
``ClientSession`` called inside ``trio.run`` run on anyio's Trio backend: their
task groups are Trio nurseries, their streams Trio memory channels, and a Trio
cancel scope (``trio.move_on_after``) cancels a pending request. Checked with
``mcp`` 2.3 against the reference server ``mcp-server-time``
(tests/tools/mcp/test_server.py). One rule matters: the SDK's context managers
must be entered and left in the same task, so each server's connection lives
in one task of its own (:class:`McpServer`), and calls from other tasks use the
session it opened. The same holds for ``streamable_http_client`` (a server
configured by ``url``): its ``httpx2`` client runs on anyio's Trio backend too,
is made by the connection task with connect/read timeouts and closed by it, and
a call's deadline is still a Trio cancel scope (checked against the SDK's own
``MCPServer`` served by uvicorn on loopback, tests/tools/mcp/test_http.py).
Notifications reach the session's ``message_handler`` in a task the SDK starts;
``tools/list_changed`` only marks the list stale there, and the connection task
lists again.

Tools are named as in Claude Code, ``mcp__<server>__<tool>``
(https://docs.claude.com/en/docs/claude-code/mcp), so ``mcp__github__*`` in
``tools:``/``disallowedTools:`` selects them with the usual patterns. An agent
with at least one server also gets ``ListMcpResourcesTool`` and
``ReadMcpResourceTool`` (:func:`mcp_resource_tools`).
"""

from subagents.tools._mcp.config import McpServerConfig, mcp_tool_name
from subagents.tools._mcp.project import MCP_JSON, McpProject, mcp_server_config, read_mcp_json
from subagents.tools._mcp.resources import (
    MCP_RESOURCE_TOOL_NAMES,
    ListMcpResourcesArgs,
    ListMcpResourcesTool,
    ReadMcpResourceArgs,
    ReadMcpResourceTool,
    mcp_resource_tools,
)
from subagents.tools._mcp.server import McpServer, McpServers, McpServerStatus, open_mcp_servers
from subagents.tools._mcp.tool import McpTool

__all__ = [
    "MCP_JSON",
    "McpProject",
    "read_mcp_json",
    "McpServer",
    "McpServerConfig",
    "McpServerStatus",
    "McpServers",
    "McpTool",
    "mcp_server_config",
    "mcp_tool_name",
    "MCP_RESOURCE_TOOL_NAMES",
    "ListMcpResourcesArgs",
    "ListMcpResourcesTool",
    "ReadMcpResourceArgs",
    "ReadMcpResourceTool",
    "mcp_resource_tools",
    "open_mcp_servers",
]
