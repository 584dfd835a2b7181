"""The loopback server's wire format: Anthropic Messages API bodies, events and replies.

Builders (:func:`message_events`, :func:`message_body`, :func:`error_body`,
:func:`text`, :func:`tool_use`, :func:`thinking`, :func:`server_tool_use`,
:func:`web_search_tool_result`) make the JSON objects and
server-sent events the API sends; the reply values (:class:`JSONReply`,
:class:`SSEReply`, :class:`ErrorReply`, :class:`Pause`, :class:`Stall`,
:class:`Disconnect`) say what the server in :mod:`subagents.testing._loopback`
answers a request with, and :class:`RecordedRequest` is what it received.
Re-exported by :mod:`subagents.testing`, whose docstring shows how they fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

import attrs

from subagents.runtime import Usage

__all__ = [
    "DEFAULT_TEST_MODEL",
    "Disconnect",
    "ErrorReply",
    "JSONReply",
    "LoopbackReply",
    "Pause",
    "RecordedRequest",
    "SSEEvent",
    "SSEReply",
    "Stall",
    "error_body",
    "message_body",
    "message_events",
    "text",
    "thinking",
    "server_tool_use",
    "tool_use",
    "web_search_tool_result",
]

#: The model name the builders put in responses.
DEFAULT_TEST_MODEL: Final = "claude-test-model"


# -- wire-format builders ---------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def thinking(value: str, signature: str = "sig-loopback") -> dict[str, Any]:
    """A thinking content block."""
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(id: str, name: str, input: Mapping[str, Any] | str) -> dict[str, Any]:
    """A tool_use content block; a ``str`` input is streamed as raw (possibly invalid) JSON."""
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def server_tool_use(id: str, name: str, input: Mapping[str, Any]) -> dict[str, Any]:
    """A server_tool_use block: a call the API runs itself (``web_search``, ``web_fetch``)."""
    return {"type": "server_tool_use", "id": id, "name": name, "input": input}


def web_search_tool_result(
    tool_use_id: str, results: Sequence[tuple[str, str]] | str
) -> dict[str, Any]:
    """A web_search_tool_result block: ``(title, url)`` results, or an error code string."""
    content: Any
    if isinstance(results, str):
        content = {"type": "web_search_tool_result_error", "error_code": results}
    else:
        content = [
            {
                "type": "web_search_result",
                "title": title,
                "url": url,
                "encrypted_content": f"enc-{index}",
                "page_age": None,
            }
            for index, (title, url) in enumerate(results)
        ]
    return {"type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": content}


def _usage(usage: Usage | None) -> dict[str, int]:
    usage = Usage(input_tokens=10, output_tokens=5) if usage is None else usage
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _stop_reason(content: Sequence[Mapping[str, Any]], stop_reason: str | None) -> str:
    if stop_reason is not None:
        return stop_reason
    return "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"


def message_body(
    content: Sequence[Mapping[str, Any]],
    *,
    stop_reason: str | None = None,
    usage: Usage | None = None,
    model: str = DEFAULT_TEST_MODEL,
    id: str = "msg_loopback",
) -> dict[str, Any]:
    """A whole (non-streamed) Messages API response body."""
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(b) for b in content],
        "stop_reason": _stop_reason(content, stop_reason),
        "stop_sequence": None,
        "usage": _usage(usage),
    }


def error_body(error_type: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    """An Anthropic error body (``{"type": "error", "error": {...}}``)."""
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


@attrs.frozen
class SSEEvent:
    """One server-sent event: an ``event:`` line and a ``data:`` line (JSON unless a str)."""

    event: str
    data: Mapping[str, Any] | str

    def encode(self) -> bytes:
        data = self.data if isinstance(self.data, str) else json.dumps(self.data)
        return f"event: {self.event}\ndata: {data}\n\n".encode()


def _pieces(value: str, size: int) -> list[str]:
    if not value:
        return []
    return [value[i : i + size] for i in range(0, len(value), size)] if size > 0 else [value]


def message_events(
    content: Sequence[Mapping[str, Any]],
    *,
    stop_reason: str | None = None,
    usage: Usage | None = None,
    model: str = DEFAULT_TEST_MODEL,
    id: str = "msg_loopback",
    chunk: int = 8,
    ping: bool = True,
) -> list[SSEEvent]:
    """The SSE events of a streamed response with ``content``, as the API sends them.

    Text, thinking and tool input stream in pieces of ``chunk`` characters.
    Input tokens go in ``message_start``, output tokens in ``message_delta``.
    """
    counts = _usage(usage)
    start_usage = {**counts, "output_tokens": 1}
    events = [
        SSEEvent(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    if ping:
        events.append(SSEEvent("ping", {"type": "ping"}))
    for index, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], chunk)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind in ("tool_use", "server_tool_use"):
            start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
            raw = block["input"]
            raw_text = raw if isinstance(raw, str) else json.dumps(raw)
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in _pieces(raw_text, chunk)
            ]
        else:
            start, deltas = dict(block), []
        events.append(
            SSEEvent(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events.extend(
            SSEEvent(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
            )
            for d in deltas
        )
        events.append(
            SSEEvent("content_block_stop", {"type": "content_block_stop", "index": index})
        )
    events.append(
        SSEEvent(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(content, stop_reason), "stop_sequence": None},
                "usage": {"output_tokens": counts["output_tokens"]},
            },
        )
    )
    events.append(SSEEvent("message_stop", {"type": "message_stop"}))
    return events


# -- replies ---------------------------------------------------------------------------------


def _headers(value: Mapping[str, str]) -> Mapping[str, str]:
    return dict(value)


@attrs.frozen
class JSONReply:
    """A JSON body with ``status`` (200 by default)."""

    body: Mapping[str, Any]
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_headers)


@attrs.frozen
class ErrorReply:
    """An error status with an Anthropic error body.

    ``retry_after`` (seconds, fractions allowed) is sent as ``retry-after``;
    the SDK honours it when it retries (429, 5xx, 529).
    """

    status: int
    error_type: str
    message: str
    retry_after: float | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_headers)


@attrs.frozen
class Pause:
    """Inside an :class:`SSEReply`: wait ``seconds`` before the next event."""

    seconds: float


@attrs.frozen
class Stall:
    """Answer nothing for ``seconds`` (as a whole reply, or inside an :class:`SSEReply`
    after the events before it), then drop the connection."""

    seconds: float = 30.0


@attrs.frozen
class Disconnect:
    """Drop the connection at once (as a whole reply, or inside an :class:`SSEReply`)."""


def _items(value: Sequence[SSEEvent | Pause | Stall | Disconnect]) -> tuple[Any, ...]:
    return tuple(value)


@attrs.frozen
class SSEReply:
    """A ``text/event-stream`` response of ``events``, sent chunked, one chunk per event.

    :class:`Pause`, :class:`Stall` and :class:`Disconnect` items misbehave at
    their place in the stream; a stream that reaches its end is closed properly.
    """

    events: tuple[SSEEvent | Pause | Stall | Disconnect, ...] = attrs.field(converter=_items)
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_headers)


LoopbackReply: TypeAlias = JSONReply | SSEReply | ErrorReply | Stall | Disconnect
"""What the loopback server can answer a request with."""


@attrs.frozen
class RecordedRequest:
    """A request the loopback server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body, decoded as JSON."""
        return json.loads(self.body)
