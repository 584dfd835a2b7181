"""ListMcpResourcesTool and ReadMcpResourceTool against a real stdio server.

Claude Code's tools of these names (https://code.claude.com/docs/en/tools-reference;
their descriptions: List "Lists available resources from configured MCP servers.
Each resource object includes a 'server' field", optional ``server``; Read "Reads a
specific resource from an MCP server, identified by server name and resource URI",
``server`` and ``uri`` required). Neither ``mcp-server-time`` nor ``mcp-server-git``
lists resources, so the server is tests/fixtures/mcp/resources_server.py (the
SDK's MCPServer, stdio). Real subprocesses: short real deadlines, no autojump clock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from subagents.tools import (
    ListMcpResourcesArgs,
    ListMcpResourcesTool,
    McpServerConfig,
    ReadMcpResourceArgs,
    ReadMcpResourceTool,
    ToolContext,
    ToolFlags,
    ToolRegistry,
    mcp_resource_tools,
    open_mcp_servers,
)
from subagents.tools._config import MCP_RESOURCE_MAX_CHARS

SERVER = Path(__file__).resolve().parents[2] / "fixtures" / "mcp" / "resources_server.py"


def _resources(*extra: str, name: str = "res", **kwargs: object) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=sys.executable,
        args=(str(SERVER), *extra),
        **kwargs,  # type: ignore[arg-type]
    )


def _ctx(tmp_path: Path, scope: trio.CancelScope | None = None) -> ToolContext:
    return ToolContext(agent_id="a", depth=0, workspace_root=tmp_path, cancel_scope=scope)


async def test_list_gives_every_resource_with_its_server(tmp_path: Path) -> None:
    async with open_mcp_servers([_resources()]) as servers:
        listing, reading = mcp_resource_tools(list(servers.servers.values()))
        assert isinstance(listing, ListMcpResourcesTool)
        assert isinstance(reading, ReadMcpResourceTool)
        assert listing.flags == ToolFlags(read_only=True, background_safe=True)
        result = await listing.call(ListMcpResourcesArgs(), _ctx(tmp_path))
        assert not result.is_error, result.content
        rows = json.loads(result.content)
        assert {row["uri"]: row["server"] for row in rows} == {
            "note://readme": "res",
            "blob://logo": "res",
            "fail://always": "res",
        }
        readme = next(row for row in rows if row["uri"] == "note://readme")
        assert readme == {
            "uri": "note://readme",
            "name": "readme",
            "mimeType": "text/plain",
            "description": "A short note",
            "server": "res",
        }
        one = await listing.call(ListMcpResourcesArgs(server="res"), _ctx(tmp_path))
        assert json.loads(one.content) == rows


async def test_read_gives_text_and_describes_blobs(tmp_path: Path) -> None:
    async with open_mcp_servers([_resources()]) as servers:
        _, reading = mcp_resource_tools(list(servers.servers.values()))
        text = await reading.call(ReadMcpResourceArgs("res", "note://readme"), _ctx(tmp_path))
        assert (text.is_error, text.content) == (False, "hello from a resource\n")
        blob = await reading.call(ReadMcpResourceArgs("res", "blob://logo"), _ctx(tmp_path))
        assert not blob.is_error
        assert blob.content == "[binary content of blob://logo: image/png, 1032 bytes, not shown]"


async def test_every_failure_is_a_tool_error(tmp_path: Path) -> None:
    missing = McpServerConfig(name="gone", command=str(tmp_path / "no-such-server"))
    async with open_mcp_servers([_resources(), missing]) as servers:
        listing, reading = mcp_resource_tools(list(servers.servers.values()))
        ctx = _ctx(tmp_path)
        unknown = await reading.call(ReadMcpResourceArgs("nope", "note://readme"), ctx)
        assert unknown.is_error
        assert "No MCP server named 'nope'" in unknown.content
        assert "gone, res" in unknown.content
        refused = await reading.call(ReadMcpResourceArgs("res", "nope://x"), ctx)
        assert refused.is_error
        assert "could not read 'nope://x'" in refused.content
        raising = await reading.call(ReadMcpResourceArgs("res", "fail://always"), ctx)
        assert raising.is_error
        down = await reading.call(ReadMcpResourceArgs("gone", "x://y"), ctx)
        assert down.is_error
        assert "'gone' is not available" in down.content
        # Listing every server: the one that answers is listed, the other named after it.
        both = await listing.call(ListMcpResourcesArgs(), ctx)
        assert not both.is_error
        body, _, note = both.content.partition("\n\nNot listed:\n")
        assert len(json.loads(body)) == 3
        assert "'gone' is not available" in note
        only = await listing.call(ListMcpResourcesArgs(server="gone"), ctx)
        assert only.is_error
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(b'{"server": "res", "uri": "a", "x": 1}', type=ReadMcpResourceArgs)
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(b'{"uri": "a"}', type=ReadMcpResourceArgs)


async def test_a_server_without_resources_lists_none(tmp_path: Path) -> None:
    pytest.importorskip("mcp_server_time")
    time = McpServerConfig(name="time", command=sys.executable, args=("-m", "mcp_server_time"))
    async with open_mcp_servers([time]) as servers:
        listing, _ = mcp_resource_tools(list(servers.servers.values()))
        result = await listing.call(ListMcpResourcesArgs(), _ctx(tmp_path))
        assert not result.is_error
        assert result.content.startswith("No resources found.")


async def test_a_long_resource_is_cut_at_the_cap(tmp_path: Path) -> None:
    size = MCP_RESOURCE_MAX_CHARS + 5000
    async with open_mcp_servers([_resources("--big", str(size))]) as servers:
        _, reading = mcp_resource_tools(list(servers.servers.values()))
        result = await reading.call(ReadMcpResourceArgs("res", "big://text"), _ctx(tmp_path))
        assert not result.is_error
        assert result.details["truncated"] is True
        assert result.content.startswith("x" * MCP_RESOURCE_MAX_CHARS + "\n[resource cut here")
        assert "5000 more characters" in result.content


async def test_a_read_runs_under_the_calls_deadline(tmp_path: Path) -> None:
    async with open_mcp_servers([_resources("--slow")]) as servers:
        (server,) = servers.servers.values()
        await server.tools()  # started outside the deadline under test
        _, reading = mcp_resource_tools([server])
        # The agent's scope (only its deadline is read); the call itself ends the wait.
        agent_scope = trio.CancelScope(deadline=trio.current_time() + 0.5)
        with trio.fail_after(20):
            result = await reading.call(
                ReadMcpResourceArgs("res", "slow://never"), _ctx(tmp_path, agent_scope)
            )
        assert result.is_error
        assert "no answer when asked to read 'slow://never' before its deadline" in result.content


async def test_an_agent_without_servers_gets_no_resource_tools() -> None:
    assert mcp_resource_tools([]) == ()


async def test_the_resource_tools_register_and_validate(tmp_path: Path) -> None:
    async with open_mcp_servers([_resources()]) as servers:
        registry = ToolRegistry(mcp_resource_tools(list(servers.servers.values())))
        assert registry.names == ("ListMcpResourcesTool", "ReadMcpResourceTool")


async def test_a_stdio_server_gets_its_env_but_not_the_users_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server sees the SDK's safe variables plus its configured ``env``, nothing else.

    Before, a server with an ``env`` entry got the whole environment of the
    user (``ANTHROPIC_API_KEY`` included), while one without got the SDK's
    short default list: the secret now stays with the runtime in both cases.
    """
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
    config = _resources(env={"MCP_GIVEN": "yes"})
    async with open_mcp_servers([config]) as servers:
        _listing, reading = mcp_resource_tools(list(servers.servers.values()))

        async def read(uri: str) -> str:
            result = await reading.call(ReadMcpResourceArgs(server="res", uri=uri), _ctx(tmp_path))
            assert not result.is_error, result.content
            return str(result.content)

        assert "yes" in await read("env://MCP_GIVEN")
        secret = await read("env://ANTHROPIC_API_KEY")
        assert "sk-ant-must-not-leak" not in secret
        assert "<unset>" in secret
