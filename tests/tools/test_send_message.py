"""``SendMessage`` against a fake AgentHost: Claude Code's schema over send_input and resume.

Followed: Claude Code's tools reference ("SendMessage: Sends a message to an agent
team teammate, or resumes a subagent by its agent ID. Stopped subagents
auto-resume in the background", https://code.claude.com/docs/en/tools-reference)
and the Agent tool's hint "use SendMessage with to: '<agentId>' to continue this
agent" (anthropics/claude-code#35240): the input is ``{to, message, summary}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from subagents.actors import (
    RUNNING,
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    Completed,
    Status,
)
from subagents.tools import (
    SendMessageTool,
    ToolContext,
    dispatch,
    input_schema,
    lifecycle_tools,
)
from tests.tools.test_lifecycle import FakeHost


@attrs.define
class StoppedHost(FakeHost):
    """A host whose ``send_input`` refuses with ``refuse`` (the agent is stopped)."""

    refuse: BaseException | None = None

    async def send_input(
        self, caller: ToolContext, agent_id: str, message: str, *, interrupt: bool = False
    ) -> Status:
        self.calls.append(("send_input", {"agent_id": agent_id, "message": message}))
        if self.refuse is not None:
            raise self.refuse
        return self.status


@pytest.fixture
def ctx(make_ctx: Callable[..., ToolContext]) -> ToolContext:
    return make_ctx(depth=0)


async def send(host: FakeHost, arguments: dict[str, Any], ctx: ToolContext) -> Any:
    return await dispatch(SendMessageTool(host), arguments, ctx)


def test_schema_is_claude_codes() -> None:
    schema = input_schema(SendMessageTool(FakeHost()).arguments_type)
    assert sorted(schema["properties"]) == ["message", "summary", "to"]
    assert sorted(schema["required"]) == ["message", "to"]
    assert "SendMessage" in [tool.name for tool in lifecycle_tools(FakeHost())]


async def test_a_running_agent_gets_the_message_as_input(ctx: ToolContext) -> None:
    host = StoppedHost(status=RUNNING)
    result = await send(host, {"to": "a1", "message": "Also check b.py", "summary": "b"}, ctx)
    assert not result.is_error
    assert json.loads(result.content) == {
        "agent_id": "a1",
        "delivered": "queued",
        "status": {"kind": "running"},
    }
    assert host.calls == [("send_input", {"agent_id": "a1", "message": "Also check b.py"})]


@pytest.mark.parametrize(
    "refusal", [AgentClosed("a1", "Ada"), AgentNotFound("a1")], ids=["closed", "unloaded"]
)
async def test_a_stopped_agent_is_resumed_with_the_message(
    ctx: ToolContext, refusal: BaseException
) -> None:
    host = StoppedHost(refuse=refusal, status=RUNNING)
    result = await send(host, {"to": "a1", "message": "Continue with part 2"}, ctx)
    assert not result.is_error
    assert json.loads(result.content)["delivered"] == "resumed"
    assert host.calls[-1] == ("resume", {"agent_id": "a1", "message": "Continue with part 2"})


async def test_an_unknown_id_is_a_tool_error_saying_what_to_do(ctx: ToolContext) -> None:
    host = StoppedHost(refuse=AgentNotFound("researcher"), error=AgentNotFound("researcher"))
    result = await send(host, {"to": "researcher", "message": "hi"}, ctx)
    assert result.is_error
    assert "researcher" in result.content
    assert "id that spawning returned" in result.content


async def test_another_refusal_is_not_retried_as_a_resume(ctx: ToolContext) -> None:
    host = StoppedHost(refuse=AgentLimitReached(3))
    result = await send(host, {"to": "a1", "message": "hi"}, ctx)
    assert result.is_error
    assert host.names() == ["send_input"]


@pytest.mark.parametrize("message", ["   ", "\n\t"])
async def test_a_blank_message_is_refused_before_the_host(ctx: ToolContext, message: str) -> None:
    host = StoppedHost()
    result = await send(host, {"to": "a1", "message": message}, ctx)
    assert result.is_error
    assert "Empty message" in result.content
    assert host.calls == []


async def test_broadcast_is_refused_with_a_reason(ctx: ToolContext) -> None:
    host = StoppedHost(status=Completed("x"))
    result = await send(host, {"to": "*", "message": "status?"}, ctx)
    assert result.is_error
    assert "you are in no team" in result.content
    assert host.calls == []


async def test_a_structured_message_is_refused_by_the_schema(ctx: ToolContext) -> None:
    host = StoppedHost()
    result = await send(host, {"to": "a1", "message": {"type": "shutdown_request"}}, ctx)
    assert result.is_error
    assert host.calls == []
