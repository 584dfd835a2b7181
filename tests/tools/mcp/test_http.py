"""MCP servers over streamable HTTP, and the ``.mcp.json``/Codex shapes that configure them.

Follows Claude Code's MCP docs (https://docs.claude.com/en/docs/claude-code/mcp):
``{"type": "http", "url", "headers"}`` in ``.mcp.json``, ``${VAR}`` and
``${VAR:-default}`` expanded in ``command``, ``args``, ``env``, ``url`` and
``headers``, an unset variable without default fails the entry, ``sse`` is
deprecated; and codex-rs ``McpServerTransportConfig::StreamableHttp`` (``url``,
``http_headers``, ``bearer_token_env_var``, ``env_http_headers``). The server is
the SDK's own ``MCPServer`` (FastMCP) under uvicorn on a free 127.0.0.1 port
(tests/fixtures/mcp/http_server.py), a real subprocess, so no autojump clock:
the deadlines here are short real ones.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import pytest
import trio

from subagents import testing
from subagents.runtime import ScriptedProvider, open_runtime
from subagents.tools import (
    McpServerConfig,
    ToolContext,
    mcp_server_config,
    open_mcp_servers,
    read_mcp_json,
)
from tests.runtime.world import World, tool_results

pytest.importorskip("uvicorn")

_FIXTURE = Path(__file__).parents[2] / "fixtures" / "mcp" / "http_server.py"


class _Served:
    """The fixture server process and what it printed on stdout."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._seen = b""

    async def expect(self, marker: bytes) -> bytes:
        """Read stdout until ``marker`` (at most 20 s); the line that holds it."""
        assert self.process.stdout is not None
        with trio.fail_after(20):
            while marker not in self._seen:
                chunk = await self.process.stdout.receive_some(4096)
                assert chunk, f"fixture server exited before printing {marker!r}"
                self._seen += chunk
        _, _, after = self._seen.partition(marker)
        line = marker + after.split(b"\n", 1)[0]
        self._seen = after.split(b"\n", 1)[1] if b"\n" in after else b""
        return line


@asynccontextmanager
async def _serve(*args: str) -> AsyncIterator[tuple[_Served, int]]:
    process = await trio.lowlevel.open_process(
        [sys.executable, str(_FIXTURE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    served = _Served(process)
    try:
        port = int((await served.expect(b"port ")).split()[1])
        yield served, port
    finally:
        process.kill()
        with trio.move_on_after(10):
            await process.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(agent_id="a", depth=0, workspace_root=tmp_path)


async def test_lists_and_calls_with_the_headers_the_server_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_TOKEN", "s3cret")
    async with _serve("--token", "s3cret") as (_served, port):
        config = mcp_server_config(
            "remote",
            {
                "url": f"http://127.0.0.1:{port}/mcp",
                "bearer_token_env_var": "FIXTURE_TOKEN",
                "http_headers": {"X-Tenant": "acme"},
            },
        )
        assert config.transport == "http"
        async with open_mcp_servers([config]) as servers:
            tools = {tool.name: tool for tool in await servers.tools()}
            assert set(tools) == {"mcp__remote__echo", "mcp__remote__hang"}
            assert [(s.transport, s.status) for s in servers.statuses()] == [("http", "running")]
            echo = tools["mcp__remote__echo"]
            result = await echo.call(
                msgspec.convert({"text": "hi"}, echo.arguments_type), _ctx(tmp_path)
            )
            assert not result.is_error
            assert result.content == "hi tenant=acme"
        assert servers.statuses()[0].status == "closed"


async def test_a_refused_token_and_a_dead_url_are_one_line_each_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_TOKEN", "wrong")
    async with _serve("--token", "s3cret") as (_served, port):
        url = f"http://127.0.0.1:{port}/mcp"
        refused = McpServerConfig(name="refused", url=url, bearer_token_env_var="FIXTURE_TOKEN")
        nobody = McpServerConfig(
            name="nobody", url=f"http://127.0.0.1:{_free_port()}/mcp", startup_timeout=5.0
        )
        unset = McpServerConfig(name="unset", url=url, bearer_token_env_var="FIXTURE_NO_SUCH")
        good = McpServerConfig(name="good", url=url, headers={"Authorization": "Bearer s3cret"})
        async with open_mcp_servers([refused, nobody, unset, good]) as servers:
            tools = await servers.tools()
            assert {tool.name for tool in tools} == {"mcp__good__echo", "mcp__good__hang"}
            by_name = {s.name: s for s in servers.statuses()}
            for name in ("refused", "nobody", "unset"):
                assert by_name[name].status == "failed"
                assert by_name[name].error
                assert "\n" not in by_name[name].error
            assert "HTTP 401 Unauthorized" in (by_name["refused"].error or "")
            assert "FIXTURE_NO_SUCH" in (by_name["unset"].error or "")
            result = await servers.servers["nobody"].call_tool("echo", {"text": "x"})
            assert result.is_error
            assert "not available" in result.content


async def test_a_server_killed_mid_call_gives_an_error_then_restarts(tmp_path: Path) -> None:
    async with _serve() as (served, port):
        config = McpServerConfig(
            name="remote", url=f"http://127.0.0.1:{port}/mcp", restart_backoff=0.0
        )
        async with open_mcp_servers([config]) as servers:
            tools = {tool.name: tool for tool in await servers.tools()}
            hang = tools["mcp__remote__hang"]
            results = []

            async def call() -> None:
                results.append(await hang.call(hang.arguments_type(), _ctx(tmp_path)))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await served.expect(b"hanging")
                served.process.kill()
            (result,) = results
            assert result.is_error
            assert "stopped during the call" in result.content
            assert servers.statuses()[0].status == "failed"
            # the same endpoint answers again: the next use reconnects (backoff 0 here)
            async with _serve("--port", str(port)):
                again = {tool.name for tool in await servers.tools()}
                assert "mcp__remote__echo" in again
                assert servers.statuses()[0].status == "running"


def test_an_http_entry_in_mcp_json_with_variables_expanded(tmp_path: Path) -> None:
    entry = {
        "type": "http",
        "url": "${FIXTURE_BASE:-http://127.0.0.1:9}/mcp",
        "headers": {"Authorization": "Bearer ${FIXTURE_TOKEN}", "X-Plain": "$FIXTURE_TOKEN"},
    }
    stdio = {
        "command": "${FIXTURE_BIN}/server",
        "args": ["--key", "${FIXTURE_TOKEN}"],
        "env": {"KEY": "${FIXTURE_TOKEN}", "MODE": "${FIXTURE_MODE:-fast}"},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": entry, "cli": stdio}}))
    environ = {"FIXTURE_TOKEN": "t0k", "FIXTURE_BIN": "/opt/bin"}
    project = read_mcp_json(tmp_path, environ)
    assert project.problems == ()
    web, cli = project.servers
    assert (web.transport, web.url) == ("http", "http://127.0.0.1:9/mcp")
    assert dict(web.headers) == {"Authorization": "Bearer t0k", "X-Plain": "$FIXTURE_TOKEN"}
    assert (cli.command, cli.args) == ("/opt/bin/server", ("--key", "t0k"))
    assert dict(cli.env) == {"KEY": "t0k", "MODE": "fast"}
    # an untrusted workspace's file is read as written: it never sees the environment
    untrusted = read_mcp_json(tmp_path)
    (literal,) = untrusted.servers
    assert dict(literal.env)["KEY"] == "${FIXTURE_TOKEN}"
    (problem,) = untrusted.problems  # the url is not one before expansion
    assert "'web' ignored" in problem


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"type": "sse", "url": "http://127.0.0.1:9/sse"}, 'use "type": "http"'),
        ({"type": "http", "url": "${FIXTURE_UNSET}/mcp"}, "FIXTURE_UNSET is not set"),
        ({"type": "http"}, "needs a 'url'"),
        ({"type": "http", "url": "file:///etc/passwd"}, "http:// or https://"),
        ({"type": "http", "url": "http://h/mcp", "args": ["x"]}, "args apply only"),
        ({"command": "x", "url": "http://h/mcp"}, "not both"),
        ({"type": "websocket", "url": "ws://h"}, "not supported"),
    ],
)
def test_a_bad_http_entry_is_one_problem_line(
    tmp_path: Path, entry: dict[str, object], reason: str
) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": entry}}))
    project = read_mcp_json(tmp_path, {})
    assert project.servers == ()
    (problem,) = project.problems
    assert "'web' ignored" in problem
    assert reason in problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    "text",
    [
        "[" * 60_000 + "]" * 60_000,  # RecursionError in msgspec, under the size cap
        "{" + '"a":{' * 40_000 + "}" * 40_001,  # 240 KB
    ],
)
def test_a_deeply_nested_mcp_json_is_a_problem_not_a_crash(tmp_path: Path, text: str) -> None:
    (tmp_path / ".mcp.json").write_text(text)
    for environ in (None, {}):  # untrusted and trusted
        project = read_mcp_json(tmp_path, environ)
        assert project.servers == ()
        (problem,) = project.problems
        assert problem.startswith(f"{tmp_path / '.mcp.json'}: not read")
        assert "fix or remove the file" in problem


def test_a_config_is_either_stdio_or_http() -> None:
    with pytest.raises(ValueError, match="either a 'command'"):
        McpServerConfig(name="x")
    with pytest.raises(ValueError, match="headers apply only"):
        McpServerConfig(name="x", command="c", headers={"A": "b"})
    assert McpServerConfig(name="x", command="c").transport == "stdio"
    http = McpServerConfig(name="x", url="https://example.com/mcp", headers={"A": "secret"})
    assert http.transport == "http"
    assert "secret" not in repr(http)


async def test_a_trusted_projects_mcp_json_reaches_an_http_server_through_its_variables(
    tmp_path: Path,
) -> None:
    """The runtime expands ``${VAR}`` from its environment for a trusted workspace only."""
    world = World(tmp_path)
    entry = {
        "type": "http",
        "url": "http://127.0.0.1:${FIXTURE_PORT}/mcp",
        "headers": {"Authorization": "Bearer ${FIXTURE_TOKEN}", "X-Tenant": "${T:-dflt}"},
    }
    (world.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"remote": entry}}))
    world.agent("caller", tools="mcp__remote__echo")
    replies = iter([testing.call("mcp__remote__echo", text="hey"), testing.say("done")])
    provider = ScriptedProvider(testing.RecordingPolicy(lambda request: next(replies)))
    async with _serve("--token", "s3cret") as (_served, port):
        env = {"FIXTURE_PORT": str(port), "FIXTURE_TOKEN": "s3cret"}
        async with open_runtime(
            world.config(),
            cwd=world.project,
            home=world.home,
            env=env,
            provider=provider,
            trust_project=True,
        ) as rt:
            agent = (await rt.spawn("caller", "Echo hey")).agent_id
            await rt.wait([agent], timeout=30)
            (result,) = tool_results(rt.conversation(agent).messages)
            assert not result.is_error
            assert "hey tenant=dflt" in str(result.content)
            assert [(s.transport, s.status) for s in rt.mcp_servers()] == [("http", "running")]
        async with open_runtime(
            world.config(),
            cwd=world.project,
            home=world.home,
            env=env,
            provider=provider,
            trust_project=False,
        ) as rt:
            (status,) = rt.mcp_servers()
            assert (status.transport, status.status) == ("http", "not trusted")
