"""MCP servers against the real reference servers from PyPI, under Trio.

Follows Claude Code's MCP docs (https://docs.claude.com/en/docs/claude-code/mcp):
tools are ``mcp__<server>__<tool>``; a server's failure is reported, not fatal.
Real subprocesses, so no autojump clock: the deadlines here are short real ones.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest
import trio

from subagents.tools import McpServerConfig, ToolContext, ToolFlags, open_mcp_servers

pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")


def _time_server(**kwargs: object) -> McpServerConfig:
    return McpServerConfig(
        name="time",
        command=sys.executable,
        args=("-m", "mcp_server_time", "--local-timezone", "UTC"),
        **kwargs,  # type: ignore[arg-type]
    )


def _children() -> set[int]:
    """Live child processes of this test process (Linux /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(agent_id="a", depth=0, workspace_root=tmp_path)


async def test_time_server_lists_and_calls_under_trio(tmp_path: Path) -> None:
    before = _children()
    async with open_mcp_servers([_time_server()]) as servers:
        assert servers.statuses()[0].status == "not started"
        tools = {tool.name: tool for tool in await servers.tools()}
        assert set(tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
        tool = tools["mcp__time__get_current_time"]
        assert tool.flags == ToolFlags(read_only=True, background_safe=True)
        assert servers.statuses()[0].status == "running"
        args = msgspec.convert({"timezone": "Europe/Paris"}, tool.arguments_type)
        result = await tool.call(args, _ctx(tmp_path))
        assert not result.is_error
        assert '"timezone": "Europe/Paris"' in result.content
        bad = await tool.call(
            msgspec.convert({"timezone": "Nope/Nowhere"}, tool.arguments_type), _ctx(tmp_path)
        )
        assert bad.is_error
        assert "Invalid timezone" in bad.content
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"timezone": "UTC", "extra": 1}, tool.arguments_type)
        assert _children() - before
    assert servers.statuses()[0].status == "closed"
    assert _children() - before == set()


async def test_git_server_reads_a_real_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    config = McpServerConfig(
        name="git", command=sys.executable, args=("-m", "mcp_server_git", "--repository", str(repo))
    )
    async with open_mcp_servers([config]) as servers:
        tools = {tool.name: tool for tool in await servers.tools()}
        status = tools["mcp__git__git_status"]
        result = await status.call(
            msgspec.convert({"repo_path": str(repo)}, status.arguments_type), _ctx(tmp_path)
        )
        assert not result.is_error
        assert "a.txt" in result.content
        assert tools["mcp__git__git_commit"].flags.needs_approval


_HANG = textwrap.dedent(
    """
    import os, sys, time
    from mcp.server.mcpserver import MCPServer
    server = MCPServer("hang")

    @server.tool()
    def hang(pidfile: str) -> str:
        open(pidfile, "w").write(str(os.getpid()))
        time.sleep(3600)
        return "never"

    server.run()
    """
)


async def test_a_server_killed_mid_call_gives_an_error_then_restarts(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text(_HANG)
    pidfile = tmp_path / "pid"
    config = McpServerConfig(
        name="hang", command=sys.executable, args=(str(script),), restart_backoff=0.0
    )
    async with open_mcp_servers([config]) as servers:
        (tool,) = await servers.tools()
        args = msgspec.convert({"pidfile": str(pidfile)}, tool.arguments_type)
        results = []

        async def call() -> None:
            results.append(await tool.call(args, _ctx(tmp_path)))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            with trio.fail_after(20):
                while not pidfile.exists() or not pidfile.read_text():
                    await trio.sleep(0.05)
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
        (result,) = results
        assert result.is_error
        assert servers.statuses()[0].status == "failed"
        pidfile.unlink()
        # the next use starts it again (backoff 0 here)
        (_again,) = await servers.tools()
        assert servers.statuses()[0].status == "running"


async def test_a_server_that_never_answers_is_one_failure_line(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    silent = McpServerConfig(
        name="silent", command=sys.executable, args=(str(script),), startup_timeout=1.0
    )
    missing = McpServerConfig(name="missing", command=str(tmp_path / "no-such-binary"))
    before = _children()
    async with open_mcp_servers([silent, missing, _time_server()]) as servers:
        tools = await servers.tools()
        assert {tool.name for tool in tools} == {
            "mcp__time__get_current_time",
            "mcp__time__convert_time",
        }
        by_name = {s.name: s for s in servers.statuses()}
        assert by_name["silent"].status == "failed"
        assert "no answer to initialize within 1s" in (by_name["silent"].error or "")
        assert by_name["missing"].status == "failed"
        assert "\n" not in (by_name["missing"].error or "")
        result = await servers.servers["silent"].call_tool("x", {})
        assert result.is_error
        assert "not available" in result.content
    assert _children() - before == set()


async def test_a_call_without_an_answer_ends_at_its_deadline(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text(_HANG)
    config = McpServerConfig(
        name="hang", command=sys.executable, args=(str(script),), call_timeout=1.0
    )
    async with open_mcp_servers([config]) as servers:
        (tool,) = await servers.tools()
        args = msgspec.convert({"pidfile": str(tmp_path / "pid")}, tool.arguments_type)
        result = await tool.call(args, _ctx(tmp_path))
        assert result.is_error
        assert "deadline" in result.content
        assert result.details["timed_out"] is True


def _everything_offline() -> str | None:
    """Why ``@modelcontextprotocol/server-everything`` cannot run here, or ``None``."""
    if shutil.which("npx") is None:
        return "npx is not installed"
    probe = subprocess.run(
        ["npx", "--offline", "-y", "@modelcontextprotocol/server-everything", "--help"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if b"ENOTCACHED" in probe.stderr or b"E404" in probe.stderr:
        return "@modelcontextprotocol/server-everything is not in the npm cache (offline)"
    return None


@pytest.fixture
def everything() -> None:
    reason = _everything_offline()
    if reason is not None:
        pytest.skip(reason)


@pytest.mark.usefixtures("everything")
async def test_the_npm_reference_server_everything(tmp_path: Path) -> None:
    config = McpServerConfig(
        name="everything",
        command="npx",
        args=("--offline", "-y", "@modelcontextprotocol/server-everything", "stdio"),
    )
    async with open_mcp_servers([config]) as servers:
        tools = {tool.name: tool for tool in await servers.tools()}
        echo = tools["mcp__everything__echo"]
        result = await echo.call(
            msgspec.convert({"message": "hi"}, echo.arguments_type), _ctx(tmp_path)
        )
        assert "hi" in result.content
