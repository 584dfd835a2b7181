"""An MCP server's tool list is not trusted: what it lists cannot break an agent's run.

tests/fixtures/mcp/hostile_server.py lists names no model API accepts (a
space, a slash, 100 characters), one name twice and a 100,000-character
description beside one good tool. Before, every one of them reached the
agent's tool list: the registry refused the bad names at spawn, and a real API
would refuse every request that carried them. Now they are left out, each with
a note in the server's status, and the good tools work.
"""

from __future__ import annotations

import sys
from pathlib import Path

from subagents import testing
from subagents.runtime import ScriptedProvider
from subagents.tools import validate_tool_name
from subagents.tools._config import MCP_DESCRIPTION_MAX_CHARS
from tests.runtime.world import World, tool_results

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "hostile_server.py"


async def test_a_hostile_tool_list_leaves_the_agent_its_good_tools(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.extra["mcp_servers"] = {
        "hostile": {"command": sys.executable, "args": [str(SERVER)], "auto_approve": True}
    }
    world.agent("user", tools="mcp__hostile__*")
    replies = iter([testing.call("mcp__hostile__good"), testing.say("done")])
    recorder = testing.RecordingPolicy(lambda request: next(replies))
    async with world.open(ScriptedProvider(recorder)) as rt:
        agent = (await rt.spawn("user", "Use the good tool.")).agent_id
        await rt.wait([agent], timeout=30)
        (result,) = tool_results(rt.conversation(agent).messages)
        assert not result.is_error, result.content
        assert "called good" in str(result.content)
        (status,) = rt.mcp_servers()
    specs = recorder.requests[0][0].tools
    names = [spec["name"] for spec in specs]
    assert sorted(names) == ["mcp__hostile__good", "mcp__hostile__twice", "mcp__hostile__verbose"]
    assert all(validate_tool_name(name) for name in names)
    verbose = next(spec for spec in specs if spec["name"] == "mcp__hostile__verbose")
    assert len(verbose["description"]) <= MCP_DESCRIPTION_MAX_CHARS
    assert status.status == "running"
    assert status.error is not None
    assert "'bad name!' (not a valid tool name)" in status.error
    assert "'../escape' (not a valid tool name)" in status.error
    assert "'twice' (listed twice)" in status.error
