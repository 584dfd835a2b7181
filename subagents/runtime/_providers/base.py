"""The provider protocol: one streamed model call per agent turn.

A provider gets a :class:`ModelRequest` and a sink. While the response
streams in it hands the sink :class:`TextDelta`, :class:`ThinkingDelta` and
:class:`ToolCall` events (or builds none when the sink is ``None``, which the
loop passes when nobody listens), and it returns the whole
:class:`ModelResponse`: the assembled content blocks, the stop reason and the
token usage. Failures are raised as :class:`~subagents.runtime.ProviderError`
subclasses. A sink callback instead of an async generator keeps the protocol
free of Trio's async-generator pitfalls (no yield inside the provider's own
cancel scopes) and costs nothing per turn when nobody listens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from subagents.agents import ModelSettings
from subagents.runtime._config.defaults import DEFAULT_MAX_TOKENS
from subagents.runtime._messages import Block, Message

__all__ = [
    "ModelRequest",
    "ModelResponse",
    "Provider",
    "StopReason",
    "StreamEvent",
    "StreamSink",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "Usage",
]

StopReason: TypeAlias = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
"""Why the model stopped, as the Messages API says it."""


class Usage(msgspec.Struct, frozen=True, gc=False):
    """Token usage: input, output, and prompt-cache reads and writes."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Every token billed: input (fresh, cached and cache-written) plus output."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


class TextDelta(msgspec.Struct, frozen=True, tag_field="type", tag="text_delta", gc=False):
    """A piece of the model's text, as it streams."""

    text: str


class ThinkingDelta(msgspec.Struct, frozen=True, tag_field="type", tag="thinking_delta", gc=False):
    """A piece of the model's thinking, as it streams."""

    thinking: str


class ToolCall(msgspec.Struct, frozen=True, tag_field="type", tag="tool_call", gc=False):
    """A complete tool call, handed over as soon as its block closes.

    ``error`` is set (and ``input`` empty) when the model's arguments were not
    a JSON object; the loop answers such a call with a tool error.
    """

    id: str
    name: str
    input: dict[str, Any]
    error: str | None = None


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCall
"""What a provider hands its sink while a response streams."""

StreamSink: TypeAlias = Callable[[StreamEvent], None]
"""Receives stream events; it must not block (the loop's sink publishes on the bus)."""


_EMPTY: Mapping[str, str] = MappingProxyType({})
_NO_SETTINGS = ModelSettings()


class ModelRequest(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One model call.

    ``messages`` is the agent's live conversation: read it during the call, do
    not keep it. ``tools`` are tool specs in the Anthropic format (name,
    description, input_schema). ``agent_type`` and ``turn`` (the agent's own
    turns so far) let scripted policies choose a reply; ``grace`` marks the
    last turn, where only ``complete_task`` is offered.
    """

    model: str
    system: str
    messages: Sequence[Message]
    tools: Sequence[Mapping[str, Any]] = ()
    settings: ModelSettings = _NO_SETTINGS
    max_tokens: int = DEFAULT_MAX_TOKENS
    agent_type: str = ""
    agent_id: str = ""
    turn: int = 0
    grace: bool = False

    @property
    def tool_names(self) -> list[str]:
        """The names of the offered tools."""
        return [str(spec["name"]) for spec in self.tools]


class ModelResponse(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A whole model response.

    ``content`` holds the assembled blocks (empty text blocks left out).
    ``invalid_tool_inputs`` maps the id of each tool call whose arguments did
    not parse as a JSON object to the reason; its block carries ``{}``.
    """

    content: tuple[Block, ...]
    stop_reason: str
    usage: Usage = Usage()
    model: str = ""
    request_id: str | None = None
    invalid_tool_inputs: Mapping[str, str] = _EMPTY


class Provider(Protocol):
    """What the agent loop calls to talk to a model."""

    @property
    def name(self) -> str:
        """A short name for logs and results (``anthropic``, ``scripted``)."""
        ...

    async def stream(self, request: ModelRequest, sink: StreamSink | None) -> ModelResponse:
        """Make one model call, stream its events into ``sink``, return the whole response.

        Raises a :class:`~subagents.runtime.ProviderError` subclass on failure.
        Must be cancellable at every await.
        """
        ...
