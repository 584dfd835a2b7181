r"""The public test kit: a loopback Anthropic server and helpers for scripted policies.

**The loopback server** speaks the Anthropic Messages API wire format on
127.0.0.1 (an ephemeral port), so tests can run the real ``anthropic`` SDK, and
:class:`~subagents.runtime.AnthropicProvider`, without any network. It serves a
script: one reply per request, in order, from a list (or a callable)::

    from subagents import testing

    content = [testing.text("Hello"), testing.tool_use("toolu_1", "Read", {"file_path": "a"})]
    script = [
        testing.ErrorReply(529, "overloaded_error", "Overloaded", retry_after=0.01),
        testing.SSEReply(testing.message_events(content)),
    ]
    async with testing.open_loopback_anthropic(script) as server:
        async with AnthropicProvider(api_key="test", base_url=server.base_url) as provider:
            ...
        assert server.requests[1].json()["model"] == "claude-..."

Replies: :class:`JSONReply` (a whole JSON body), :class:`SSEReply` (an event
stream with ``event:`` lines, sent with chunked encoding; it may hold
:class:`Pause`, :class:`Stall` and :class:`Disconnect` items to misbehave
mid-stream), :class:`ErrorReply` (an error status with an Anthropic error body,
``request-id`` and optional ``retry-after``), :class:`Stall` (never answer) and
:class:`Disconnect` (close without answering). Every response carries a
``request-id`` header. The server is bounded: it serves at most
``max_requests`` requests, drops connections idle for ``idle_timeout``
seconds, stalls for at most a stall's own ``seconds``, and everything it runs
ends when its ``async with`` block does. Builders (:func:`message_events`,
:func:`message_body`, :func:`text`, :func:`tool_use`, :func:`thinking`) make
the wire objects.

**Scripted policies**: :func:`say`, :func:`call`, :func:`finish`, :func:`fail`,
:func:`hang` and :func:`malformed` build :class:`~subagents.runtime.Reply`
values; :func:`tool_loop` is a policy that calls one tool for a number of
turns and then answers; :class:`RecordingPolicy` keeps what each request
showed the model.

**Property tests of a runtime** (the kit our own stateful tests use; the
strategies need Hypothesis, imported only when a strategy is called):

- :class:`DirectivePolicy` plays scripted agent :class:`Behavior`\ s chosen by
  the newest :func:`directive` in the conversation: ``finish``, ``fail`` (a
  provider error), ``hang``, ``tool`` (calls a tool, ``LS`` for the default
  instance :data:`directive_policy`, then answers) and
  ``malformed`` (a tool call whose arguments are not JSON, then answers), so a
  follow-up input can change what an agent's next run does;
- :func:`operations` draws sequences of :class:`Spawn` (foreground or
  background, top-level or under an agent), :class:`SendInput` (with or
  without interrupt), :class:`Wait`, :class:`Close`, :class:`Resume` and a
  final :class:`Cancel`; :func:`apply_operation` performs one on a runtime;
- :func:`behaviors`, :func:`agent_scripts` (turn-by-turn scripts: tool calls,
  then an answer, a ``complete_task`` call or a fault) and :func:`faults`
  (provider errors of every kind, hangs, malformed tool calls);
- :class:`InvariantChecker` follows the bus (a lossless subscription opened
  before the runtime) and records every broken promise: slots out of bounds,
  statuses off the transition table (more than one final status per run),
  events out of order or lost, a run whose result was not on disk, with its
  status, when its final status was published, unpaired start/stop hooks, and
  anything left running after exit::

    bus = Bus()
    checker = InvariantChecker(max_threads=4, state_dir=state)
    with bus.subscribe(policy="block", capacity=10_000) as events:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(checker.follow, events)
            async with open_runtime(config, bus=bus, provider=provider) as rt:
                agents: list[str] = []
                for op in ops:  # drawn from operations()
                    await apply_operation(rt, op, agents, agent_type="Explore")
            checker.check_after_exit(rt.supervisor.statistics())
            events.close()
    checker.assert_ok()
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TypeAlias, final

import attrs
import trio

from subagents._testing_invariants import InvariantChecker
from subagents._testing_ops import (
    Behavior,
    Cancel,
    Close,
    DirectivePolicy,
    Operation,
    Resume,
    SendInput,
    Spawn,
    Wait,
    agent_scripts,
    apply_operation,
    behaviors,
    directive,
    directive_policy,
    faults,
    operations,
)
from subagents.runtime import (
    COMPLETE_TASK as _COMPLETE_TASK,
)
from subagents.runtime import (
    Message,
    ModelRequest,
    Policy,
    Reply,
    ScriptedToolCall,
    Usage,
    provider_error,
)

__all__ = [
    # property tests of a runtime
    "Behavior",
    "Cancel",
    "Close",
    "DirectivePolicy",
    "InvariantChecker",
    "Operation",
    "Resume",
    "SendInput",
    "Spawn",
    "Wait",
    "agent_scripts",
    "apply_operation",
    "behaviors",
    "directive",
    "directive_policy",
    "faults",
    "operations",
    # the loopback server and scripted policies
    "DEFAULT_TEST_MODEL",
    "Disconnect",
    "ErrorReply",
    "JSONReply",
    "LoopbackAnthropic",
    "LoopbackReply",
    "Pause",
    "RecordedRequest",
    "RecordingPolicy",
    "SSEEvent",
    "SSEReply",
    "Stall",
    "call",
    "error_body",
    "fail",
    "finish",
    "hang",
    "malformed",
    "message_body",
    "message_events",
    "open_loopback_anthropic",
    "say",
    "text",
    "thinking",
    "tool_loop",
    "tool_use",
]

#: The model name the builders put in responses.
DEFAULT_TEST_MODEL: Final = "claude-test-model"

_MAX_HEADER_BYTES: Final = 64 * 1024
_MAX_BODY_BYTES: Final = 16 * 1024 * 1024
_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


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
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
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


# -- the server --------------------------------------------------------------------------------


class _BadRequest(Exception):
    """A request the loopback server cannot parse (answered with 400, then closed)."""


@final
class LoopbackAnthropic:
    """A running loopback server: its ``base_url`` and what it received."""

    def __init__(
        self,
        script: Sequence[LoopbackReply] | Callable[[RecordedRequest], LoopbackReply],
        *,
        max_requests: int,
        idle_timeout: float,
    ) -> None:
        self._script = script if callable(script) else list(script)
        self.max_requests = max_requests
        self.idle_timeout = idle_timeout
        self.base_url = ""
        #: Every request received, in order (at most ``max_requests``).
        self.requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        #: Connections accepted so far.
        self.connections = 0
        self._arrived = trio.lowlevel.ParkingLot()

    def __repr__(self) -> str:
        return f"<LoopbackAnthropic {self.base_url} {len(self.requests)} requests>"

    async def wait_for_requests(self, count: int = 1, *, timeout: float = 5.0) -> None:
        """Wait until ``count`` requests have arrived; ``trio.TooSlowError`` past ``timeout``."""
        with trio.fail_after(timeout):
            while len(self.requests) < count:
                await self._arrived.park()

    def _reply_for(self, request: RecordedRequest) -> LoopbackReply:
        if callable(self._script):
            return self._script(request)
        index = len(self.requests) - 1
        if index < len(self._script):
            return self._script[index]
        return ErrorReply(
            500,
            "api_error",
            f"The loopback server's script has {len(self._script)} replies; "
            f"request {index + 1} has none.",
            headers={"x-should-retry": "false"},
        )

    async def _serve(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        async with stream:
            buffer = bytearray()
            while len(self.requests) < self.max_requests:
                request: RecordedRequest | None = None
                with trio.move_on_after(self.idle_timeout):
                    try:
                        request = await _read_request(stream, buffer)
                    except _BadRequest as exc:
                        body = json.dumps(error_body("invalid_request_error", str(exc))).encode()
                        await _send_head(stream, 400, "application/json", len(body), {}, "")
                        await stream.send_all(body)
                        return
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        return
                    if request is None:
                        return
                    self.requests.append(request)
                    self._arrived.unpark_all()
                    reply = self._reply_for(request)
                    request_id = f"req_loopback_{next(self._ids):04d}"
                if request is None:  # idle for idle_timeout seconds
                    return
                try:
                    keep_open = await _respond(stream, reply, request_id)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not keep_open:
                    return


async def _read_request(stream: trio.SocketStream, buffer: bytearray) -> RecordedRequest | None:
    """The next request on the connection, or ``None`` when the client closed it."""
    while b"\r\n\r\n" not in buffer:
        if len(buffer) > _MAX_HEADER_BYTES:
            raise _BadRequest("request headers are too large")
        data = await stream.receive_some(65536)
        if not data:
            return None
        buffer.extend(data)
    end = buffer.index(b"\r\n\r\n")
    head = bytes(buffer[:end]).decode("latin-1")
    del buffer[: end + 4]
    request_line, *lines = head.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3:
        raise _BadRequest(f"malformed request line {request_line!r}")
    method, path, _ = parts
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise _BadRequest(f"malformed header line {line!r}")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest("chunked request bodies are not supported by the loopback server")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest("content-length is not a number") from None
    if length < 0 or length > _MAX_BODY_BYTES:
        raise _BadRequest(f"request body of {length} bytes is out of range")
    while len(buffer) < length:
        data = await stream.receive_some(65536)
        if not data:
            return None
        buffer.extend(data)
    body = bytes(buffer[:length])
    del buffer[:length]
    return RecordedRequest(method=method, path=path, headers=headers, body=body)


async def _send_head(
    stream: trio.SocketStream,
    status: int,
    content_type: str,
    length: int | None,
    extra: Mapping[str, str],
    request_id: str,
) -> None:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"content-type: {content_type}"]
    if length is None:
        lines.append("transfer-encoding: chunked")
        lines.append("cache-control: no-cache")
    else:
        lines.append(f"content-length: {length}")
    if request_id:
        lines.append(f"request-id: {request_id}")
    lines.extend(f"{name}: {value}" for name, value in extra.items())
    await stream.send_all(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


async def _respond(stream: trio.SocketStream, reply: LoopbackReply, request_id: str) -> bool:
    """Send ``reply``; whether the connection may serve another request."""
    if isinstance(reply, Disconnect):
        return False
    if isinstance(reply, Stall):
        await trio.sleep(reply.seconds)
        return False
    if isinstance(reply, JSONReply | ErrorReply):
        if isinstance(reply, JSONReply):
            status, body, extra = reply.status, reply.body, dict(reply.headers)
        else:
            status = reply.status
            body = error_body(reply.error_type, reply.message, request_id)
            extra = dict(reply.headers)
            if reply.retry_after is not None:
                extra.setdefault("retry-after", repr(reply.retry_after))
        data = json.dumps(body).encode()
        await _send_head(stream, status, "application/json", len(data), extra, request_id)
        await stream.send_all(data)
        return True
    await _send_head(stream, reply.status, "text/event-stream", None, reply.headers, request_id)
    for item in reply.events:
        if isinstance(item, SSEEvent):
            payload = item.encode()
            await stream.send_all(b"%x\r\n%s\r\n" % (len(payload), payload))
        elif isinstance(item, Pause):
            await trio.sleep(item.seconds)
        elif isinstance(item, Stall):
            await trio.sleep(item.seconds)
            return False
        else:
            return False
    await stream.send_all(b"0\r\n\r\n")
    return True


@asynccontextmanager
async def open_loopback_anthropic(
    script: Sequence[LoopbackReply] | Callable[[RecordedRequest], LoopbackReply],
    *,
    max_requests: int = 100,
    idle_timeout: float = 5.0,
) -> AsyncIterator[LoopbackAnthropic]:
    """Serve ``script`` on 127.0.0.1 (an ephemeral port) for the duration of the block.

    ``script`` is a list of replies, one per request in order (requests past
    its end get a 500 that the SDK does not retry), or a callable that picks
    the reply for each request. Past ``max_requests`` requests connections are
    closed; a connection idle for ``idle_timeout`` seconds is dropped.
    """
    server = LoopbackAnthropic(script, max_requests=max_requests, idle_timeout=idle_timeout)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    server.base_url = f"http://127.0.0.1:{port}"
    body_error: BaseException | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(trio.serve_listeners, server._serve, listeners))
        try:
            yield server
        except BaseException as exc:  # re-raised below, unwrapped, once the server has stopped
            body_error = exc
        nursery.cancel_scope.cancel()
    if body_error is not None:
        raise body_error


# -- scripted-provider helpers ------------------------------------------------------------------


def say(value: str) -> Reply:
    """A final message."""
    return Reply(text=value)


def call(name: str, text: str = "", /, **arguments: Any) -> Reply:
    """A reply that calls the tool ``name`` with ``arguments``."""
    return Reply.call(name, text, **arguments)


def finish(text: str = "", /, **arguments: Any) -> Reply:
    """A reply that calls ``complete_task`` with ``arguments``."""
    return Reply.complete(text, **arguments)


def fail(
    error_type: str = "overloaded_error",
    message: str = "scripted failure",
    *,
    status: int | None = None,
    text: str = "",
) -> Reply:
    """A reply that raises the provider error of ``error_type`` (after streaming ``text``)."""
    return Reply(
        text=text, error=provider_error(message, error_type=error_type, status_code=status)
    )


def hang(text: str = "") -> Reply:
    """A reply that never finishes (after streaming ``text``)."""
    return Reply(text=text, hang=True)


def malformed(name: str, raw: str = '{"unterminated": ', text: str = "") -> Reply:
    """A reply whose call to ``name`` carries arguments that are not a JSON object."""
    return Reply(text=text, tool_calls=(ScriptedToolCall(name, raw),))


def tool_loop(
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    turns: int,
    final: str = "done",
    complete: bool = False,
) -> Policy:
    """A policy: call ``tool`` with ``arguments`` for ``turns`` turns, then finish.

    It finishes with the final message ``final``, or (``complete``) by calling
    ``complete_task`` with ``result=final``. The replies are built once, so the
    policy costs one list lookup per turn.
    """
    calling = Reply(tool_calls=(ScriptedToolCall(tool, dict(arguments or {})),))
    ending = (
        Reply(tool_calls=(ScriptedToolCall(_COMPLETE_TASK, {"result": final}),))
        if complete
        else Reply(text=final)
    )

    def policy(request: ModelRequest) -> Reply:
        return calling if request.turn < turns else ending

    return policy


@final
class RecordingPolicy:
    """Wraps a policy and keeps, for each request, a copy of what the model was shown.

    ``requests`` holds ``(request, messages)`` pairs: the request and a snapshot
    of its messages at call time (the request's own list keeps growing). At
    most ``limit`` are kept (the oldest are dropped).
    """

    __slots__ = ("_limit", "_policy", "requests")

    def __init__(self, policy: Policy, *, limit: int = 1000) -> None:
        self._policy = policy
        self._limit = limit
        self.requests: list[tuple[ModelRequest, tuple[Message, ...]]] = []

    def __call__(self, request: ModelRequest) -> Any:
        self.requests.append((request, tuple(request.messages)))
        if len(self.requests) > self._limit:
            del self.requests[0]
        return self._policy(request)
