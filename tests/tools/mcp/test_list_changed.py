"""``notifications/tools/list_changed`` is honoured: the server's tools are listed again.

MCP spec, "Tools: List Changed Notification": a server that declared
``listChanged`` sends ``notifications/tools/list_changed`` when its tools
change, and the client is expected to send ``tools/list`` again. Claude Code
does so and offers the new set (https://docs.claude.com/en/docs/claude-code/mcp,
"Dynamic tool updates"). The fixture is the SDK's own ``MCPServer`` (FastMCP)
over stdio (tests/fixtures/mcp/list_changed_server.py): ``swap`` removes ``old``,
adds ``fresh`` and notifies. A real subprocess, so no autojump clock.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from subagents.tools import McpServerConfig, ToolContext, open_mcp_servers

_FIXTURE = Path(__file__).parents[2] / "fixtures" / "mcp" / "list_changed_server.py"


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(agent_id="a", depth=0, workspace_root=tmp_path)


@pytest.fixture
def config() -> McpServerConfig:
    return McpServerConfig(
        name="lc", command=sys.executable, args=(str(_FIXTURE),), call_timeout=20.0
    )


async def test_a_changed_tool_list_replaces_the_servers_tools(
    tmp_path: Path, config: McpServerConfig
) -> None:
    async with open_mcp_servers([config]) as servers:
        before = {tool.name: tool for tool in await servers.tools()}
        assert set(before) == {"mcp__lc__old", "mcp__lc__swap"}
        server = servers.servers["lc"]
        listed = server.listings
        swap = before["mcp__lc__swap"]
        result = await swap.call(swap.arguments_type(), _ctx(tmp_path))
        assert result.content == "swapped"
        assert await server.wait_listings(listed + 1)
        after = {tool.name: tool for tool in await servers.tools()}
        assert set(after) == {"mcp__lc__fresh", "mcp__lc__swap"}
        fresh = after["mcp__lc__fresh"]
        answer = await fresh.call(fresh.arguments_type(), _ctx(tmp_path))
        assert (answer.is_error, answer.content) == (False, "fresh answer")
        # an agent that still holds the removed tool gets a clear tool error
        old = before["mcp__lc__old"]
        gone = await old.call(old.arguments_type(), _ctx(tmp_path))
        assert gone.is_error
        assert "no longer offers tool 'old'" in gone.content
        assert "fresh" in gone.content
        assert servers.statuses()[0].status == "running"
