"""Scripted replies: what a policy answers a model request with.

A :class:`Reply` holds text, thinking, tool calls (:class:`ScriptedToolCall`),
token usage, latency, and faults (an error to raise, a hang, a malformed tool
call); what it always sends is worked out once, when it is made, since a reply
is played many times. A :class:`ReplyPolicy` chooses the reply to each request.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias, final

import attrs
import msgspec

from subagents._unicode import valid_json, valid_text
from subagents.runtime._complete_task import COMPLETE_TASK
from subagents.runtime._exceptions import ProviderError
from subagents.runtime._messages import Block, TextBlock, ThinkingBlock
from subagents.runtime._providers.base import ModelRequest, Usage

__all__ = ["ReplyPolicy", "Reply", "ScriptedToolCall"]

_SIGNATURE: Final = "scripted"


def _input(value: Mapping[str, Any] | str | None) -> Mapping[str, Any] | str:
    if value is None:
        return {}
    return value if isinstance(value, str) else dict(value)


@attrs.frozen
class ScriptedToolCall:
    """A tool call in a scripted reply.

    ``input`` is the arguments object; a ``str`` is taken as the raw JSON text
    the model produced, so text that does not parse as an object makes a
    malformed call. ``id`` defaults to one derived from the agent and turn.
    """

    name: str
    input: Mapping[str, Any] | str = attrs.field(factory=dict, converter=_input)
    id: str | None = None


def _calls(value: Sequence[ScriptedToolCall]) -> tuple[ScriptedToolCall, ...]:
    return tuple(value)


@attrs.frozen
class Reply:
    """One scripted model response.

    ``latency`` (seconds, overriding the provider's) passes before anything
    streams; ``error`` is raised and ``hang`` waits forever after the text has
    streamed. ``usage`` defaults to a rough, deterministic estimate.
    """

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = attrs.field(default=(), converter=_calls)
    usage: Usage | None = None
    latency: float | None = None
    error: ProviderError | None = None
    hang: bool = False
    stop_reason: str | None = None
    _prepared: _Prepared = attrs.field(init=False, eq=False, repr=False, hash=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_prepared", _Prepared(self))

    @classmethod
    def call(cls, name: str, text: str = "", /, **arguments: Any) -> Reply:
        """A reply that makes one tool call with ``arguments``."""
        return cls(text=text, tool_calls=(ScriptedToolCall(name, arguments),))

    @classmethod
    def complete(cls, text: str = "", /, **arguments: Any) -> Reply:
        """A reply that calls ``complete_task`` with ``arguments``."""
        return cls.call(COMPLETE_TASK, text, **arguments)


@final
class _Prepared:
    """What a reply always sends, worked out once: a reply is played many times."""

    __slots__ = ("calls", "head", "output_tokens", "stop_reason")

    def __init__(self, reply: Reply) -> None:
        # What a model writes is cleaned where it comes in, as the Anthropic provider
        # does: a lone surrogate in a script plays as U+FFFD (subagents._unicode).
        head: list[Block] = []
        if reply.thinking:
            head.append(ThinkingBlock(valid_text(reply.thinking), _SIGNATURE))
        if reply.text:
            head.append(TextBlock(valid_text(reply.text)))
        self.head = tuple(head)
        calls: list[tuple[str | None, str, dict[str, Any], str | None]] = []
        written = len(reply.text) + len(reply.thinking)
        for call in reply.tool_calls:
            arguments, problem = call.input, None
            if isinstance(arguments, str):
                written += len(arguments)
                arguments, problem = _parse_arguments(arguments)
            else:
                arguments = valid_json(arguments)
                written += len(_encoder.encode(arguments))
            written += len(call.name)
            calls.append((call.id, call.name, dict(arguments), problem))
        self.calls = tuple(calls)
        self.output_tokens = max(1, written // 4)
        self.stop_reason = reply.stop_reason or ("tool_use" if calls else "end_turn")


_encoder = msgspec.json.Encoder()


ReplyPolicy: TypeAlias = Callable[[ModelRequest], Reply | Awaitable[Reply]]
"""Chooses the reply to a request (it may be async)."""


def _parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        return {}, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return valid_json(value), None
