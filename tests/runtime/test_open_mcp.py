"""A project's ``.mcp.json`` servers reach its agents through the filter, under workspace trust.

Claude Code's project scope (https://docs.claude.com/en/docs/claude-code/mcp):
``.mcp.json`` at the project root, ``{"mcpServers": {name: {command, args, env}}}``,
tools named ``mcp__<server>__<tool>``. Real ``mcp-server-time`` (PyPI), so no
autojump clock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from subagents import testing
from subagents.actors import AgentLimitReached, DepthLimitReached
from subagents.runtime import ScriptedProvider
from tests.runtime.world import World, tool_results
from tests.tools.mcp.test_server import _children

pytest.importorskip("mcp_server_time")


def _mcp_json(world: World) -> None:
    server = {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    }
    (world.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"time": server, "bad": {"args": []}}})
    )


async def test_a_trusted_projects_server_gives_its_agents_tools(tmp_path: Path) -> None:
    world = World(tmp_path)
    _mcp_json(world)
    world.agent("clock", tools="mcp__time__*")
    replies = iter(
        [testing.call("mcp__time__get_current_time", timezone="Asia/Tokyo"), testing.say("done")]
    )
    recorder = testing.RecordingPolicy(lambda request: next(replies))
    before = _children()
    async with world.open(ScriptedProvider(recorder)) as rt:
        assert [(s.name, s.status) for s in rt.mcp_servers()] == [("time", "not started")]
        agent = (await rt.spawn("clock", "What time is it in Tokyo?")).agent_id
        await rt.wait([agent], timeout=30)
        (result,) = tool_results(rt.conversation(agent).messages)
        assert not result.is_error
        assert "Asia/Tokyo" in str(result.content)
        assert {spec["name"] for spec in recorder.requests[0][0].tools} == {
            "mcp__time__get_current_time",
            "mcp__time__convert_time",
        }
        assert [(s.name, s.status) for s in rt.mcp_servers()] == [("time", "running")]
    assert _children() - before == set()


async def test_an_untrusted_projects_servers_are_not_started(tmp_path: Path) -> None:
    world = World(tmp_path)
    _mcp_json(world)
    recorder = testing.RecordingPolicy(lambda request: testing.say("done"))
    before = _children()
    async with world.open(ScriptedProvider(recorder), trust_project=False) as rt:
        (status,) = rt.mcp_servers()
        assert (status.name, status.status) == ("time", "not trusted")
        assert "trust the workspace" in (status.error or "")
        agent = (await rt.spawn("general-purpose", "Hi")).agent_id
        await rt.wait([agent], timeout=30)
        # No server; the one child is the transcripts' fsync helper.
        await rt.services.flusher.helper_up()
        assert _children() - before - {rt.services.flusher.helper_pid} == set()
    names = {spec["name"] for spec in recorder.requests[0][0].tools}
    assert not any(name.startswith("mcp__") for name in names)


async def test_the_users_configured_server_runs_in_an_untrusted_project(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.extra["mcp_servers"] = {
        "clock": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    }
    world.agent("timer", tools="mcp__clock__convert_time")
    recorder = testing.RecordingPolicy(lambda request: testing.say("done"))
    async with world.open(ScriptedProvider(recorder), trust_project=False) as rt:
        agent = (await rt.spawn("timer", "Hi")).agent_id
        await rt.wait([agent], timeout=30)
        assert [(s.name, s.status) for s in rt.mcp_servers()] == [("clock", "running")]
    names = {spec["name"] for spec in recorder.requests[0][0].tools}
    assert names == {"mcp__clock__convert_time"}


async def test_a_definitions_mcp_servers_give_that_agent_only_those(tmp_path: Path) -> None:
    """``mcpServers`` (Claude Code's subagent field): an inline server for this agent only."""
    world = World(tmp_path)
    world.extra["mcp_servers"] = {
        "shared": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    }
    inline = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    world.agent("own", tools="mcp__*", mcpServers=[{"mine": inline}])
    world.agent("plain", tools="mcp__*")
    recorder = testing.RecordingPolicy(lambda request: testing.say("done"))
    before = _children()
    async with world.open(ScriptedProvider(recorder)) as rt:
        own = (await rt.spawn("own", "Hi")).agent_id
        await rt.wait([own], timeout=30)
        plain = (await rt.spawn("plain", "Hi")).agent_id
        await rt.wait([plain], timeout=30)
        assert {(s.name, s.status) for s in rt.mcp_servers()} == {
            ("shared", "running"),
            ("mine", "running"),
        }
    first, second = ({spec["name"] for spec in r.tools} for r, _ in recorder.requests)
    assert first == {"mcp__mine__get_current_time", "mcp__mine__convert_time"}
    assert second == {"mcp__shared__get_current_time", "mcp__shared__convert_time"}
    assert _children() - before == set()


async def test_a_spawn_over_a_limit_fails_before_its_servers_start(tmp_path: Path) -> None:
    """A definition's MCP servers are programs: a spawn the kernel would refuse
    (``max_threads`` reached, ``max_depth`` passed) fails before any of them starts."""
    canary = tmp_path / "server-started"
    world = World(tmp_path, limits={"max_threads": 1, "max_depth": 0})
    server = {"command": "sh", "args": ["-c", f"touch {canary}; exit 1"]}
    world.agent("own", tools="mcp__*", mcpServers=[{"mine": server}])
    provider = ScriptedProvider(lambda request: testing.hang())
    async with world.open(provider) as rt:
        first = (await rt.spawn("general-purpose", "Hold the only slot.")).agent_id
        with pytest.raises(AgentLimitReached):
            await rt.spawn("own", "Hi")
        with pytest.raises(DepthLimitReached):
            await rt.spawn("own", "Hi", parent=first)
        assert rt.statistics().supervisor.failed_spawns == 2
    assert not canary.exists()


async def test_an_untrusted_project_agents_inline_server_is_not_started(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.agent("own", mcpServers=[{"mine": {"command": "sh", "args": ["-c", "exit 1"]}}])
    recorder = testing.RecordingPolicy(lambda request: testing.say("done"))
    async with world.open(ScriptedProvider(recorder), trust_project=False) as rt:
        agent = (await rt.spawn("own", "Hi")).agent_id
        await rt.wait([agent], timeout=30)
        (status,) = rt.mcp_servers()
        assert (status.name, status.status) == ("mine", "not trusted")


async def test_an_agent_with_servers_gets_the_resource_tools_through_its_filter(
    tmp_path: Path,
) -> None:
    """ListMcpResourcesTool/ReadMcpResourceTool (Claude Code's names) come with a server.

    They are filtered like every tool: granted by ``tools:``, removed by
    ``disallowedTools:``, and absent for an agent whose ``mcpServers`` is empty.
    """
    world = World(tmp_path)
    server = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "resources_server.py"
    world.extra["mcp_servers"] = {"res": {"command": sys.executable, "args": [str(server)]}}
    world.agent("reader", tools="ListMcpResourcesTool, ReadMcpResourceTool")
    world.agent("lister", disallowedTools="ReadMcpResourceTool")
    world.agent("none", mcpServers=[])
    replies = iter(
        [
            testing.call("ReadMcpResourceTool", server="res", uri="note://readme"),
            testing.say("done"),
            testing.say("done"),
            testing.say("done"),
        ]
    )
    recorder = testing.RecordingPolicy(lambda request: next(replies))
    async with world.open(ScriptedProvider(recorder)) as rt:
        for name in ("reader", "lister", "none"):
            agent = (await rt.spawn(name, "Hi")).agent_id
            await rt.wait([agent], timeout=30)
            if name == "reader":
                (result,) = tool_results(rt.conversation(agent).messages)
                assert not result.is_error
                assert "hello from a resource" in str(result.content)
    reader, _, lister, none = ({spec["name"] for spec in r.tools} for r, _ in recorder.requests)
    assert reader == {"ListMcpResourcesTool", "ReadMcpResourceTool"}
    assert "ListMcpResourcesTool" in lister
    assert "ReadMcpResourceTool" not in lister
    assert not none & {"ListMcpResourcesTool", "ReadMcpResourceTool"}


async def test_a_projects_server_runs_in_the_project_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path in ``.mcp.json`` names the project's file, wherever the process runs.

    The server script sits in the project as ``tools/time_server.py``; the
    embedding process runs in another folder. Without the project folder as
    the server's working directory, Python would not find the script.
    """
    world = World(tmp_path)
    (world.project / "tools").mkdir()
    (world.project / "tools" / "time_server.py").write_text(
        "from mcp_server_time import main\nmain()\n"
    )
    server = {"command": sys.executable, "args": ["tools/time_server.py"]}
    (world.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": server}}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    world.agent("clock", tools="mcp__time__*")
    replies = iter([testing.call("mcp__time__get_current_time", timezone="UTC"), testing.say("ok")])
    async with world.open(ScriptedProvider(lambda request: next(replies))) as rt:
        agent = (await rt.spawn("clock", "What time is it?")).agent_id
        await rt.wait([agent], timeout=30)
        (result,) = tool_results(rt.conversation(agent).messages)
        assert not result.is_error, result.content
        assert [(s.name, s.status) for s in rt.mcp_servers()] == [("time", "running")]
