"""The Anthropic provider: the official ``anthropic`` SDK's async client, streaming.

Use it as an async context manager; it opens one ``AsyncAnthropic`` client
(itself used with ``async with``, so its connection pool is closed on exit)
and every agent turn streams one Messages API call through it::

    async with AnthropicProvider() as provider:      # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
        response = await provider.stream(request, sink)

The SDK retries what is retryable (429, 5xx, 529, connection errors) with its
backoff and the server's ``retry-after``. Every failure is raised as our own
:class:`~subagents.runtime.ProviderError` subclass: status errors by their
``error.type`` (then their status), errors that arrive inside the SSE stream by
their ``type``, a read that times out mid-stream as :class:`ProviderTimeout`,
a connection that drops mid-stream as :class:`ProviderConnectionError`.
The system prompt, the tool list and the newest message carry prompt-cache
breakpoints, so the repeated prefix of each turn is read from the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, final

import msgspec

from subagents._unicode import valid_json, valid_text
from subagents.runtime._config.defaults import (
    API_KEY_ENV,
    BASE_URL_ENV,
    DEFAULT_MAX_RETRIES,
    DEFAULT_REQUEST_TIMEOUT,
)
from subagents.runtime._exceptions import (
    ProviderConnectionError,
    ProviderError,
    ProviderNotOpen,
    ProviderTimeout,
    StreamError,
    provider_error,
)
from subagents.runtime._logging import mask_text
from subagents.runtime._messages import (
    Block,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    WebFetchToolResultBlock,
    WebSearchToolResultBlock,
)
from subagents.runtime._providers.base import (
    ModelRequest,
    ModelResponse,
    StreamSink,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    # Imported where they are used: the SDK (with pydantic and httpx2) adds about
    # 130,000 objects and most of a second to an import of ``subagents.runtime``
    # that may never talk to Anthropic, and every full garbage collection then
    # walks them.
    import anthropic
    import httpx2

__all__ = ["SERVER_TOOLS", "AnthropicProvider", "encode_messages", "request_params"]

#: Claude Code's web tools, as the Messages API's server tools (the type names of
#: ``anthropic.types.WebSearchTool20250305Param`` and ``WebFetchTool20250910Param``):
#: the API runs them, so their local specs are replaced in the request.
SERVER_TOOLS: Final[Mapping[str, Mapping[str, str]]] = {
    "WebSearch": {"type": "web_search_20250305", "name": "web_search"},
    "WebFetch": {"type": "web_fetch_20250910", "name": "web_fetch"},
}
_SERVER_RESULTS: Final[
    Mapping[str, type[WebSearchToolResultBlock] | type[WebFetchToolResultBlock]]
] = {
    "web_search_tool_result": WebSearchToolResultBlock,
    "web_fetch_tool_result": WebFetchToolResultBlock,
}

_EPHEMERAL: Final = {"type": "ephemeral"}
_CONNECT_TIMEOUT: Final = 5.0


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The Messages API form of ``messages``.

    Consecutive messages of one role are merged (the API wants turns to
    alternate; a grace notice after tool results is one user turn), and the
    newest block gets a prompt-cache breakpoint.
    """
    encoded: list[dict[str, Any]] = []
    for message in messages:
        if not message.content:
            continue
        blocks: list[dict[str, Any]] = list(msgspec.to_builtins(message.content))
        if encoded and encoded[-1]["role"] == message.role:
            encoded[-1]["content"].extend(blocks)
        else:
            encoded.append({"role": message.role, "content": blocks})
    if encoded:
        last = encoded[-1]["content"]
        if last and last[-1]["type"] not in ("thinking", "redacted_thinking"):
            last[-1] = {**last[-1], "cache_control": _EPHEMERAL}
    return encoded


def request_params(request: ModelRequest) -> dict[str, Any]:
    """The ``messages.create`` arguments for ``request`` (without ``stream``)."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": encode_messages(request.messages),
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
    if request.tools:
        tools = [dict(SERVER_TOOLS.get(spec["name"], spec)) for spec in request.tools]
        tools[-1]["cache_control"] = _EPHEMERAL
        params["tools"] = tools
    settings = request.settings
    if settings.temperature is not None:
        params["temperature"] = settings.temperature
    if settings.top_p is not None:
        params["top_p"] = settings.top_p
    budget = settings.thinking_budget
    if budget is not None and budget < 0:
        params["thinking"] = {"type": "adaptive"}
    elif budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if request.max_tokens <= budget:
            params["max_tokens"] = budget + request.max_tokens
    return params


@final
class AnthropicProvider:
    """The Messages API through the official SDK, streamed.

    ``api_key`` and ``base_url`` default to ``ANTHROPIC_API_KEY`` and
    ``ANTHROPIC_BASE_URL`` from ``env`` (``os.environ``); ``http_client`` is
    handed to the SDK (which closes it on exit). ``timeout`` bounds each
    request, and each read of a stream; ``max_retries`` is the SDK's.
    """

    __slots__ = ("_client", "_options", "api_key", "base_url")

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.api_key = api_key if api_key is not None else env.get(API_KEY_ENV)
        self.base_url = base_url if base_url is not None else env.get(BASE_URL_ENV) or None
        self._options: dict[str, Any] = {
            "http_client": http_client,
            "max_retries": max_retries,
            "timeout": timeout,
            "default_headers": dict(default_headers or {}),
        }
        self._client: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        state = "open" if self._client is not None else "closed"
        return f"<AnthropicProvider {self.base_url or 'default endpoint'} {state}>"

    async def __aenter__(self) -> Self:
        import anthropic
        import httpx2

        if self._client is not None:
            raise ProviderNotOpen("This AnthropicProvider is already open; open it once.")
        options = dict(self._options)
        seconds = options.pop("timeout")
        client = anthropic.AsyncAnthropic(
            api_key=self.api_key,
            base_url=self.base_url,
            timeout=httpx2.Timeout(seconds, connect=min(seconds, _CONNECT_TIMEOUT)),
            **options,
        )
        self._client = await client.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(exc_type, exc, tb)

    async def stream(self, request: ModelRequest, sink: StreamSink | None) -> ModelResponse:
        """Stream one Messages API call; see the module docstring for errors."""
        import anthropic
        import httpx2

        client = self._client
        if client is None:
            raise ProviderNotOpen(
                "Use the AnthropicProvider inside `async with AnthropicProvider(...) as provider:`."
            )
        assembler = _Assembler(sink)
        secrets = (self.api_key or "",)
        try:
            stream = await client.messages.create(**request_params(request), stream=True)
            async with stream:
                assembler.request_id = stream.response.headers.get("request-id")
                async for event in stream:
                    assembler.feed(event)
        except ProviderError:
            raise
        except anthropic.APIStatusError as exc:
            raise _status_error(exc, secrets) from exc
        except anthropic.APITimeoutError as exc:
            raise ProviderTimeout(
                "The Anthropic API did not answer in time (after the SDK's retries)."
            ) from exc
        except anthropic.APIConnectionError as exc:
            raise ProviderConnectionError(
                f"Could not reach the Anthropic API ({mask_text(_cause(exc), secrets)}), "
                "after the SDK's retries."
            ) from exc
        except httpx2.TimeoutException as exc:
            raise ProviderTimeout(
                "The Anthropic API stopped sending in the middle of a response "
                f"(read timed out){_rid(assembler.request_id)}.",
                request_id=assembler.request_id,
            ) from exc
        except httpx2.HTTPError as exc:
            raise ProviderConnectionError(
                "The connection to the Anthropic API dropped in the middle of a response "
                f"({type(exc).__name__}: {mask_text(str(exc), secrets)})"
                f"{_rid(assembler.request_id)}.",
                request_id=assembler.request_id,
            ) from exc
        except (anthropic.APIError, ValueError) as exc:
            raise StreamError(
                "The Anthropic API sent a response that could not be read "
                f"({mask_text(str(exc), secrets)})"
                f"{_rid(assembler.request_id)}.",
                request_id=assembler.request_id,
            ) from exc
        return assembler.finish(request.model)


def _rid(request_id: str | None) -> str:
    return f" [request-id {request_id}]" if request_id else ""


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)


def _status_error(exc: anthropic.APIStatusError, secrets: Sequence[str]) -> ProviderError:
    """Our typed error for an API error reply; ``secrets`` are masked in the server's words."""
    body_type = exc.type
    status = exc.status_code if exc.status_code >= 400 else None
    detail = mask_text(exc.api_message or exc.message, secrets)
    where = f"error {status}" if status is not None else "error in the response stream"
    kind = f" ({body_type})" if body_type else ""
    retry_after = _retry_after(exc.response.headers) if status is not None else None

    def error(advice: str) -> ProviderError:
        return provider_error(
            f"Anthropic API {where}{kind}: {detail}{advice}{_rid(exc.request_id)}",
            error_type=body_type,
            status_code=status,
            request_id=exc.request_id,
            retry_after=retry_after,
        )

    found = error("")
    if status is not None and found.retryable:
        # The SDK has retried it already: say so, and what is left to do.
        return error("; still failing after the SDK's retries, try again later")
    return found


def _retry_after(headers: httpx2.Headers) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                continue
    return None


@final
class _Partial:
    """A content block while it streams."""

    __slots__ = ("id", "kind", "name", "parts", "signature")

    def __init__(self, kind: str, *, id: str = "", name: str = "", first: str = "") -> None:
        self.kind = kind
        self.id = id
        self.name = name
        self.parts: list[str] = [first] if first else []
        self.signature = ""


@final
class _Assembler:
    """Builds the response from the SDK's raw stream events, feeding the sink as it goes."""

    __slots__ = (
        "_blocks",
        "_done",
        "_sink",
        "content",
        "invalid",
        "model",
        "request_id",
        "stop_reason",
        "usage",
    )

    def __init__(self, sink: StreamSink | None) -> None:
        self._sink = sink
        self._blocks: dict[int, _Partial] = {}
        self._done = False
        self.content: dict[int, Block] = {}
        self.invalid: dict[str, str] = {}
        self.model = ""
        self.request_id: str | None = None
        self.stop_reason = "end_turn"
        self.usage: dict[str, int] = {}

    def feed(self, event: Any) -> None:
        kind = event.type
        if kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "content_block_stop":
            self._stop(event.index)
        elif kind == "message_start":
            self.model = event.message.model
            self._take_usage(event.message.usage)
        elif kind == "message_delta":
            if event.delta.stop_reason is not None:
                self.stop_reason = event.delta.stop_reason
            self._take_usage(event.usage)
        elif kind == "message_stop":
            self._done = True

    def _take_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for ours, theirs in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_tokens", "cache_read_input_tokens"),
            ("cache_write_tokens", "cache_creation_input_tokens"),
        ):
            value = getattr(usage, theirs, None)
            if value is not None:
                self.usage[ours] = value

    def _start(self, index: int, block: Any) -> None:
        kind = block.type
        if kind == "text":
            self._blocks[index] = _Partial("text", first=block.text or "")
        elif kind == "thinking":
            partial = _Partial("thinking", first=block.thinking or "")
            partial.signature = block.signature or ""
            self._blocks[index] = partial
        elif kind == "redacted_thinking":
            self.content[index] = RedactedThinkingBlock(block.data)
        elif kind in ("tool_use", "server_tool_use"):
            self._blocks[index] = _Partial(kind, id=block.id, name=block.name)
        elif kind in _SERVER_RESULTS:
            content = block.model_dump(mode="json", exclude_none=True)["content"]
            self.content[index] = _SERVER_RESULTS[kind](block.tool_use_id, content)
        else:
            raise StreamError(
                f"The Anthropic API sent a {kind!r} content block, which this runtime does "
                f"not handle{_rid(self.request_id)}.",
                request_id=self.request_id,
            )

    def _delta(self, index: int, delta: Any) -> None:
        partial = self._blocks.get(index)
        if partial is None:
            raise StreamError(
                f"The Anthropic API sent a delta for content block {index}, which was never "
                f"started{_rid(self.request_id)}.",
                request_id=self.request_id,
            )
        kind = delta.type
        sink = self._sink
        if kind == "text_delta":
            text = valid_text(delta.text)
            partial.parts.append(text)
            if sink is not None:
                sink(TextDelta(text))
        elif kind == "input_json_delta":
            partial.parts.append(delta.partial_json)
        elif kind == "thinking_delta":
            thinking = valid_text(delta.thinking)
            partial.parts.append(thinking)
            if sink is not None:
                sink(ThinkingDelta(thinking))
        elif kind == "signature_delta":
            partial.signature = delta.signature

    def _stop(self, index: int) -> None:
        partial = self._blocks.pop(index, None)
        if partial is None:
            return
        text = "".join(partial.parts)
        if partial.kind == "text":
            if text:
                self.content[index] = TextBlock(text)
        elif partial.kind == "thinking":
            self.content[index] = ThinkingBlock(text, partial.signature)
        elif partial.kind == "server_tool_use":
            arguments, _ = _arguments(text)
            self.content[index] = ServerToolUseBlock(partial.id, partial.name, arguments)
        else:
            arguments, problem = _arguments(text)
            if problem is not None:
                self.invalid[partial.id] = problem
            self.content[index] = ToolUseBlock(partial.id, partial.name, arguments)
            if self._sink is not None:
                self._sink(ToolCall(partial.id, partial.name, arguments, problem))

    def finish(self, requested_model: str) -> ModelResponse:
        if not self._done:
            raise StreamError(
                "The Anthropic API's stream ended before its message_stop event"
                f"{_rid(self.request_id)}.",
                request_id=self.request_id,
            )
        for index in list(self._blocks):
            self._stop(index)
        usage = self.usage
        return ModelResponse(
            content=tuple(self.content[i] for i in sorted(self.content)),
            stop_reason=self.stop_reason,
            usage=Usage(
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                usage.get("cache_read_tokens", 0),
                usage.get("cache_write_tokens", 0),
            ),
            model=self.model or requested_model,
            request_id=self.request_id,
            invalid_tool_inputs=self.invalid,
        )


def _arguments(text: str) -> tuple[dict[str, Any], str | None]:
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as exc:
        return {}, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return valid_json(value), None
