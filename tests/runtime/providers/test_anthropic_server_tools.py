"""WebSearch and WebFetch as the Messages API's server tools, over the loopback API.

Followed: Anthropic's web search tool docs
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool): the
request lists ``{"type": "web_search_20250305", "name": "web_search"}``, the
response carries ``server_tool_use`` then ``web_search_tool_result`` blocks the
API ran itself, and they are sent back as they came on the next turn. The type
names are the installed SDK's (``anthropic.types.WebSearchTool20250305Param``,
``WebFetchTool20250910Param``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from subagents import testing
from subagents.actors import Bus
from subagents.runtime import (
    AnthropicProvider,
    Publisher,
    ServerToolUseBlock,
    TerminateReason,
    ToolCallEnded,
    ToolCallStarted,
    WebSearchToolResultBlock,
    run_agent,
)
from subagents.tools import WebFetchTool, WebSearchTool
from tests.runtime.helpers import definition, selection, spec, task


def provider(server: testing.LoopbackAnthropic) -> AnthropicProvider:
    return AnthropicProvider(api_key="sk-test", base_url=server.base_url, env={}, timeout=1.0)


SEARCH = [
    testing.text("Searching."),
    testing.server_tool_use("srvtoolu_1", "web_search", {"query": "trio nursery"}),
    testing.web_search_tool_result(
        "srvtoolu_1", [("Trio docs", "https://trio.readthedocs.io/"), ("PEP", "https://x.y/")]
    ),
    testing.text("Trio has nurseries."),
]


async def test_web_tools_become_server_tools_and_their_blocks_reach_transcript_and_progress() -> (
    None
):
    script = [
        testing.SSEReply(testing.message_events(SEARCH)),
        testing.SSEReply(testing.message_events([testing.text("Done.")])),
    ]
    bus = Bus()
    tools = selection(WebSearchTool(), WebFetchTool())
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        agent = spec(definition(), anthropic, tools=tools)
        conversation = task()
        with bus.subscribe(types=[ToolCallStarted, ToolCallEnded]) as events:
            result = await run_agent(agent, conversation, publisher=Publisher(bus, agent_id="a"))
            seen = [events.receive_nowait(), events.receive_nowait()]
    # One response, no local tool run: the API ran the search.
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.text == "Searching.Trio has nurseries."
    first = server.requests[0].json()
    names = {tool["name"]: tool for tool in first["tools"]}
    assert names["web_search"]["type"] == "web_search_20250305"
    assert names["web_fetch"]["type"] == "web_fetch_20250910"
    assert "WebSearch" not in names
    assert "WebFetch" not in names
    # The transcript keeps both blocks.
    blocks = conversation[1].content
    assert ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "trio nursery"}) in blocks
    found = [b for b in blocks if isinstance(b, WebSearchToolResultBlock)]
    assert len(found) == 1
    assert found[0].tool_use_id == "srvtoolu_1"
    assert [r["url"] for r in found[0].content] == ["https://trio.readthedocs.io/", "https://x.y/"]
    # Progress shows the call like any tool's.
    assert isinstance(seen[0], ToolCallStarted)
    assert (seen[0].tool_name, seen[0].tool_use_id) == ("web_search", "srvtoolu_1")
    assert seen[0].input == {"query": "trio nursery"}
    assert isinstance(seen[1], ToolCallEnded)
    assert (seen[1].tool_name, seen[1].is_error) == ("web_search", False)


async def test_a_paused_server_turn_is_sent_back_as_it_came_and_continues() -> None:
    """``pause_turn``: the API paused a long server-tool turn; sending it back resumes it."""
    script = [
        testing.SSEReply(testing.message_events(SEARCH, stop_reason="pause_turn")),
        testing.SSEReply(testing.message_events([testing.text("Resumed and done.")])),
    ]
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        agent = spec(definition(), anthropic, tools=selection(WebSearchTool()))
        result = await run_agent(agent, task())
    assert result.text == "Resumed and done."
    assert len(server.requests) == 2
    sent: list[dict[str, Any]] = server.requests[1].json()["messages"][1]["content"]
    kinds = [block["type"] for block in sent]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
    assert sent[1] == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "trio nursery"},
    }
    assert sent[2]["content"][0]["encrypted_content"] == "enc-0"


async def test_a_failed_server_search_is_an_error_in_progress() -> None:
    content = [
        testing.server_tool_use("srvtoolu_9", "web_search", {"query": "q"}),
        testing.web_search_tool_result("srvtoolu_9", "max_uses_exceeded"),
        testing.text("Could not search."),
    ]
    bus = Bus()
    async with (
        testing.open_loopback_anthropic(
            [testing.SSEReply(testing.message_events(content))]
        ) as server,
        provider(server) as anthropic,
    ):
        agent = spec(definition(), anthropic, tools=selection(WebSearchTool()))
        with bus.subscribe(types=[ToolCallEnded]) as events:
            await run_agent(agent, task(), publisher=Publisher(bus, agent_id="a"))
            ended = events.receive_nowait()
    assert isinstance(ended, ToolCallEnded)
    assert ended.is_error


def test_server_blocks_survive_a_transcript_line_and_show_in_transcripts_show() -> None:
    """The transcript keeps them verbatim (they are sent back to the API on resume)."""
    from subagents.cli._transcripts import _message_lines
    from subagents.runtime import Message, MessageRecord

    blocks = (
        ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "q"}),
        WebSearchToolResultBlock("srvtoolu_1", [{"type": "web_search_result", "url": "u"}]),
    )
    record = MessageRecord(agent_id="a", seq=1, message=Message("assistant", blocks))
    again = msgspec.json.decode(msgspec.json.encode(record), type=MessageRecord)
    assert again.message.content == blocks
    lines = _message_lines([again])
    assert '    -> web_search (run by the provider) {"query": "q"}' in lines
    assert "    <- web_search (1 results)" in lines
