"""AnthropicProvider: the real ``anthropic`` SDK against the loopback Messages API server.

These tests use real loopback sockets and real time (no autojump clock), with
small timeouts; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import time
from typing import Any

import httpx2
import msgspec
import pytest
import trio

from subagents import testing
from subagents.actors import Errored, Shutdown, SupervisorConfig, open_supervisor
from subagents.runtime import (
    AgentResult,
    AnthropicProvider,
    AuthenticationFailed,
    BadRequest,
    Message,
    ModelRequest,
    Overloaded,
    ProviderConnectionError,
    ProviderNotOpen,
    ProviderTimeout,
    RateLimited,
    StreamError,
    TerminateReason,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    agent_behavior,
    run_agent,
)
from subagents.runtime import TextBlock as Text
from tests.runtime.helpers import SlowTool, definition, selection, spec, task

READ_SPEC = {
    "name": "Note",
    "description": "Take a note.",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
FAST_RETRY = 0.01


def request(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "model": testing.DEFAULT_TEST_MODEL,
        "system": "You are terse.",
        "messages": [Message.user("Say hi, then take a note.")],
        "tools": [READ_SPEC],
    }
    values.update(fields)
    return ModelRequest(**values)


def provider(server: testing.LoopbackAnthropic, **options: Any) -> AnthropicProvider:
    options.setdefault("timeout", 1.0)
    return AnthropicProvider(api_key="sk-test", base_url=server.base_url, env={}, **options)


async def test_streamed_turn_with_text_and_a_tool_call() -> None:
    content = [
        testing.thinking("Let me think."),
        testing.text("Hi! Taking a note."),
        testing.tool_use("toolu_01", "Note", {"text": "hello world"}),
    ]
    usage = Usage(input_tokens=120, output_tokens=40, cache_read_tokens=900, cache_write_tokens=30)
    script = [testing.SSEReply(testing.message_events(content, usage=usage, chunk=5))]
    events: list[object] = []
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        response = await anthropic.stream(request(), events.append)
    assert response.content == (
        ThinkingBlock("Let me think.", "sig-loopback"),
        Text("Hi! Taking a note."),
        ToolUseBlock("toolu_01", "Note", {"text": "hello world"}),
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == usage
    assert response.request_id == "req_loopback_0001"
    assert response.model == testing.DEFAULT_TEST_MODEL
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi! Taking a note."
    assert "".join(e.thinking for e in events if isinstance(e, ThinkingDelta)) == "Let me think."
    assert events[-1] == ToolCall("toolu_01", "Note", {"text": "hello world"})
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    body = sent.json()
    assert body["stream"] is True
    assert body["model"] == testing.DEFAULT_TEST_MODEL
    # Prompt caching: the system prompt, the tool list and the newest message.
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_a_529_is_retried_by_the_sdk_then_succeeds() -> None:
    script = [
        testing.ErrorReply(529, "overloaded_error", "Overloaded", retry_after=FAST_RETRY),
        testing.SSEReply(testing.message_events([testing.text("fine now")])),
    ]
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        response = await anthropic.stream(request(), None)
    assert response.content == (Text("fine now"),)
    assert len(server.requests) == 2
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


async def test_a_400_is_a_typed_error_and_errors_the_agent() -> None:
    script = [testing.ErrorReply(400, "invalid_request_error", "max_tokens: must be positive")]
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        with pytest.raises(BadRequest) as caught:
            await anthropic.stream(request(), None)
    error = caught.value
    assert error.status_code == 400
    assert error.error_type == "invalid_request_error"
    assert error.request_id == "req_loopback_0001"
    assert not error.retryable
    assert "max_tokens: must be positive" in str(error)
    assert len(server.requests) == 1  # a 400 is not retried

    script = [testing.ErrorReply(400, "invalid_request_error", "messages: roles must alternate")]
    async with (
        testing.open_loopback_anthropic(script) as server,
        provider(server) as anthropic,
        open_supervisor(SupervisorConfig()) as sup,
    ):
        agent = spec(definition(), anthropic)
        ref = await sup.spawn(agent_behavior(agent, task()), label="worker")
        status = (await sup.wait([ref.id], timeout=5)).statuses[ref.id]
    assert isinstance(status, Errored)
    assert status.message.startswith("BadRequest: Anthropic API error 400")
    assert "messages: roles must alternate" in status.message


async def test_a_stalled_call_ends_within_half_a_second_of_close() -> None:
    results: list[AgentResult] = []
    async with (
        testing.open_loopback_anthropic([testing.Stall(10.0)]) as server,
        provider(server, timeout=30.0) as anthropic,
        open_supervisor(SupervisorConfig(close_grace_period=5.0)) as sup,
    ):
        agent = spec(definition(), anthropic)
        ref = await sup.spawn(
            agent_behavior(agent, task(), on_result=results.append), label="worker"
        )
        await server.wait_for_requests(1)
        started = time.monotonic()
        await sup.close(ref.id)
        took = time.monotonic() - started
        status = sup.status(ref.id)
    assert took < 0.5
    assert isinstance(status, Shutdown)
    assert [r.terminate_reason for r in results] == [TerminateReason.ABORTED]


async def test_an_error_inside_the_stream_is_classified_by_its_type() -> None:
    head = testing.message_events([testing.text("partial answer")])[:4]
    overloaded = testing.SSEEvent(
        "error", testing.error_body("overloaded_error", "Overloaded mid-stream")
    )
    unknown = testing.SSEEvent("error", testing.error_body("brand_new_error", "Who knows"))
    script = [testing.SSEReply([*head, overloaded]), testing.SSEReply([*head, unknown])]
    deltas: list[object] = []
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        with pytest.raises(Overloaded) as first:
            await anthropic.stream(request(), deltas.append)
        with pytest.raises(StreamError) as second:
            await anthropic.stream(request(), None)
    assert first.value.status_code is None
    assert first.value.error_type == "overloaded_error"
    assert "Overloaded mid-stream" in str(first.value)
    assert first.value.request_id == "req_loopback_0001"
    assert deltas  # the text before the error was streamed
    assert second.value.error_type == "brand_new_error"
    assert len(server.requests) == 2  # errors after the response started are not retried


async def test_a_read_that_times_out_mid_stream_is_a_timeout() -> None:
    head = testing.message_events([testing.text("partial")])[:4]
    script = [testing.SSEReply([*head, testing.Stall(5.0)])]
    async with (
        testing.open_loopback_anthropic(script) as server,
        provider(server, timeout=0.2, max_retries=0) as anthropic,
    ):
        with trio.fail_after(3), pytest.raises(ProviderTimeout) as caught:
            await anthropic.stream(request(), None)
    assert caught.value.retryable
    assert caught.value.request_id == "req_loopback_0001"
    assert "read timed out" in str(caught.value)


async def test_a_connection_dropped_mid_stream_is_a_connection_error() -> None:
    head = testing.message_events([testing.text("partial")])[:4]
    script = [testing.SSEReply([*head, testing.Disconnect()])]
    async with (
        testing.open_loopback_anthropic(script) as server,
        provider(server, max_retries=0) as anthropic,
    ):
        with pytest.raises(ProviderConnectionError, match="dropped in the middle"):
            await anthropic.stream(request(), None)


async def test_a_stream_cut_short_without_message_stop_is_a_stream_error() -> None:
    head = testing.message_events([testing.text("partial")])[:4]
    async with (
        testing.open_loopback_anthropic([testing.SSEReply(head)]) as server,
        provider(server) as anthropic,
    ):
        with pytest.raises(StreamError, match="before its message_stop"):
            await anthropic.stream(request(), None)


async def test_status_errors_map_to_our_types() -> None:
    script = [
        testing.ErrorReply(401, "authentication_error", "invalid x-api-key"),
        testing.ErrorReply(429, "rate_limit_error", "slow down", retry_after=FAST_RETRY),
        testing.ErrorReply(429, "rate_limit_error", "slow down", retry_after=FAST_RETRY),
    ]
    async with (
        testing.open_loopback_anthropic(script) as server,
        provider(server, max_retries=1) as anthropic,
    ):
        with pytest.raises(AuthenticationFailed):
            await anthropic.stream(request(), None)
        with pytest.raises(RateLimited) as limited:
            await anthropic.stream(request(), None)
    assert limited.value.retry_after == pytest.approx(FAST_RETRY)
    assert limited.value.retryable
    assert len(server.requests) == 3  # the 429 was retried once, then reported


async def test_an_unreachable_server_is_a_connection_error() -> None:
    async with (
        testing.open_loopback_anthropic([testing.Disconnect()]) as server,
        provider(server, max_retries=0) as anthropic,
    ):
        with pytest.raises(ProviderConnectionError, match="Could not reach"):
            await anthropic.stream(request(), None)


async def test_malformed_tool_input_is_reported_not_raised() -> None:
    content = [testing.tool_use("toolu_9", "Note", '{"text": "unterminated')]
    async with (
        testing.open_loopback_anthropic(
            [testing.SSEReply(testing.message_events(content, stop_reason="max_tokens"))]
        ) as server,
        provider(server) as anthropic,
    ):
        response = await anthropic.stream(request(), None)
    assert response.content == (ToolUseBlock("toolu_9", "Note", {}),)
    assert "invalid JSON" in response.invalid_tool_inputs["toolu_9"]
    assert response.stop_reason == "max_tokens"


async def test_a_lone_surrogate_the_model_writes_is_replaced_where_it_comes_in() -> None:
    """JSON may escape half of a UTF-16 pair; decoded, no UTF-8 encoder takes it (the
    transcript, the next request). Text, thinking and tool input arrive cleaned."""
    content = [
        testing.thinking("Hmm \ud83d."),
        testing.text("Hi \ud800 there"),
        testing.tool_use("toolu_7", "Note", '{"text": "a\\ud800b", "k\\udfff": ["\\udc00"]}'),
    ]
    events: list[object] = []
    async with (
        testing.open_loopback_anthropic(
            [testing.SSEReply(testing.message_events(content, chunk=3))]
        ) as server,
        provider(server) as anthropic,
    ):
        response = await anthropic.stream(request(), events.append)
    assert response.content == (
        ThinkingBlock("Hmm \ufffd.", "sig-loopback"),
        Text("Hi \ufffd there"),
        ToolUseBlock("toolu_7", "Note", {"text": "a\ufffdb", "k\ufffd": ["\ufffd"]}),
    )
    assert response.invalid_tool_inputs == {}
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi \ufffd there"
    msgspec.json.encode(response.content)  # the transcript's encoder takes it


async def test_the_provider_must_be_opened() -> None:
    anthropic = AnthropicProvider(api_key="sk-test", base_url="http://127.0.0.1:9", env={})
    with pytest.raises(ProviderNotOpen):
        await anthropic.stream(request(), None)


async def test_a_whole_agent_run_over_the_wire() -> None:
    script = [
        testing.SSEReply(
            testing.message_events(
                [testing.text("Noting."), testing.tool_use("toolu_1", "Note", {"text": "a"})]
            )
        ),
        testing.SSEReply(testing.message_events([testing.text("All noted.")])),
    ]
    async with testing.open_loopback_anthropic(script) as server, provider(server) as anthropic:
        agent = spec(definition(), anthropic, tools=selection(SlowTool("Note")))
        conversation = task()
        result = await run_agent(agent, conversation)
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.text == "All noted."
    assert result.usage == Usage(input_tokens=20, output_tokens=10)
    second = server.requests[1].json()["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Note",
        "input": {"text": "a"},
    }
    result_block = second[2]["content"][0]
    assert result_block["type"] == "tool_result"
    assert result_block["tool_use_id"] == "toolu_1"
    assert result_block["content"] == "Note: a"
    assert isinstance(conversation[2].content[0], ToolResultBlock)


async def test_an_injected_http_client_is_used_and_closed_with_the_provider() -> None:
    sent: list[str] = []

    async def record(outgoing: httpx2.Request) -> None:
        sent.append(str(outgoing.url))

    script = [testing.SSEReply(testing.message_events([testing.text("hi")]))]
    async with testing.open_loopback_anthropic(script) as server:
        client = httpx2.AsyncClient(event_hooks={"request": [record]})
        async with provider(server, http_client=client) as anthropic:
            response = await anthropic.stream(request(), None)
    assert response.content == (Text("hi"),)
    assert sent == [f"{server.base_url}/v1/messages"]
    assert client.is_closed


async def test_the_environment_names_the_key_and_the_endpoint() -> None:
    script = [testing.SSEReply(testing.message_events([testing.text("from env")]))]
    async with testing.open_loopback_anthropic(script) as server:
        env = {"ANTHROPIC_API_KEY": "sk-from-env", "ANTHROPIC_BASE_URL": server.base_url}
        async with AnthropicProvider(env=env) as anthropic:
            response = await anthropic.stream(request(), None)
    assert response.content == (Text("from env"),)
    headers = server.requests[0].headers
    assert "sk-from-env" in headers.get("x-api-key", "") + headers.get("authorization", "")
