"""The loopback server: a small HTTP/1.1 server on 127.0.0.1 that serves a script of replies.

:func:`open_loopback_anthropic` runs a :class:`LoopbackAnthropic` for the
duration of an ``async with`` block: it reads each request (keep-alive,
``content-length`` bodies), records it, and sends the next reply of its script
(the values of :mod:`subagents.testing._wire`), misbehaving where a reply says
so. It is bounded in requests, idle time and body size, so a test cannot hang on
it. Re-exported by :mod:`subagents.testing`.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Final, final

import trio

from subagents.testing._wire import (
    Disconnect,
    ErrorReply,
    JSONReply,
    LoopbackReply,
    Pause,
    RecordedRequest,
    SSEEvent,
    Stall,
    error_body,
)

__all__ = ["LoopbackAnthropic", "open_loopback_anthropic"]

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
