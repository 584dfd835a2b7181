"""The scripted provider: deterministic, offline replies from policies.

A policy gets the :class:`ModelRequest` and returns a
:class:`~subagents.runtime.Reply` (or an awaitable of one): text, thinking,
tool calls, token usage, latency, and faults (see
:mod:`~subagents.runtime._providers.reply`). Policies are chosen per agent type,
with a default; a :class:`~subagents.runtime.Script` plays a list of replies
read from YAML or JSON (see :mod:`~subagents.runtime._providers.script`).
With no policy at all the provider answers with :func:`default_policy`. It is
what runs when no API key is set, and what tests and benchmarks use.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, final

import trio

from subagents.runtime._complete_task import COMPLETE_TASK
from subagents.runtime._exceptions import ScriptError
from subagents.runtime._messages import Block, Message, ToolUseBlock
from subagents.runtime._providers.base import (
    ModelRequest,
    ModelResponse,
    StreamSink,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from subagents.runtime._providers.reply import Reply, ReplyPolicy, ScriptedToolCall
from subagents.runtime._providers.script import Script, load_scripts

__all__ = [
    "ScriptedProvider",
    "SharedTimer",
    "default_policy",
    "sample_for_schema",
]


# -- the default policy ------------------------------------------------------------------


def sample_for_schema(schema: Mapping[str, Any], _depth: int = 0) -> Any:
    """A small value that satisfies common JSON Schemas (for offline ``complete_task`` calls).

    Handles ``const``, ``enum``, ``anyOf``/``oneOf``/``allOf`` (first branch),
    objects (required properties), arrays (``minItems`` samples), strings
    (``minLength``), numbers and integers (``minimum``), booleans and null.
    """
    if _depth > 16:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if branches:
            return sample_for_schema(branches[0], _depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties: Mapping[str, Any] = schema.get("properties", {})
        return {
            name: sample_for_schema(properties.get(name, {}), _depth + 1)
            for name in schema.get("required", ())
        }
    if kind == "array":
        items = schema.get("items", {})
        return [sample_for_schema(items, _depth + 1) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0)) or "scripted"
    if kind in ("integer", "number"):
        minimum = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = minimum + 1 if "exclusiveMinimum" in schema else minimum
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    return None


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            text = message.text
            if text:
                return text
    return ""


def default_policy(request: ModelRequest) -> Reply:
    """The offline default: answer with a note on the task, or call ``complete_task``.

    When ``complete_task`` is offered it is called with arguments sampled from
    its schema; otherwise the reply is a final message that quotes the input.
    """
    task = _last_user_text(request.messages)
    summary = " ".join(task.split())[:200]
    text = f"[scripted reply: no model was called] Task received: {summary}"
    for spec in request.tools:
        if spec.get("name") == COMPLETE_TASK:
            schema = spec.get("input_schema", {})
            arguments = sample_for_schema(schema)
            result = schema.get("properties", {}).get("result", {})
            if set(arguments or ()) == {"result"} and result.get("type") == "string":
                arguments = {"result": text}  # the report of a run without an output schema
            return Reply(text=text, tool_calls=(ScriptedToolCall(COMPLETE_TASK, arguments),))
    return Reply(text=text)


# -- the provider ----------------------------------------------------------------------------


@final
class SharedTimer:
    """Waits that share one Trio sleep per tick, for simulating latency at scale.

    ``trio.sleep`` costs a cancel scope and a raised-and-caught ``Cancelled``
    per call: 10,000 agents each waiting ten times spend seconds of CPU in that
    alone, which no real model call costs (a network wait parks the task in the
    I/O manager). Here a wait is rounded up to the next tick of ``resolution``
    seconds (a power of two, so the arithmetic is exact): the first waiter of a
    tick sleeps until it, the others park and wake with it. A wait is never
    shorter than asked and at most one tick longer. If the sleeping waiter is
    cancelled, the parked ones wake and one of them sleeps in its place.
    """

    __slots__ = ("_lots", "resolution")

    def __init__(self, resolution: float = 2.0**-10) -> None:
        self.resolution = resolution
        self._lots: dict[int, trio.lowlevel.ParkingLot] = {}

    async def sleep(self, seconds: float) -> None:
        """Wait at least ``seconds`` (cancellable)."""
        resolution = self.resolution
        tick = math.ceil((trio.current_time() + seconds) / resolution)
        wake = tick * resolution
        lots = self._lots
        while True:
            lot = lots.get(tick)
            if lot is None:
                lot = lots[tick] = trio.lowlevel.ParkingLot()
                try:
                    await trio.sleep_until(wake)
                finally:
                    if lots.get(tick) is lot:
                        del lots[tick]
                    lot.unpark_all()
                return
            await lot.park()
            if trio.current_time() >= wake:
                return


@final
class ScriptedProvider:
    """A provider whose replies come from policies, with simulated latency and usage.

    ``policy`` answers every agent type without an entry in ``policies``; it
    may be a callable, a :class:`Script` or a list of :class:`Reply`.
    ``latency`` (seconds) passes before each reply that sets none (waits go
    through a :class:`SharedTimer`, like network waits through the I/O
    manager, not a ``trio.sleep`` each); ``chunk_size`` splits text into that
    many characters per delta (0: one delta). Every call checkpoints, so it is
    cancellable even at zero latency.
    Usable with ``async with`` like providers that hold a client.
    """

    __slots__ = ("_chunk", "_default", "_latency", "_policies", "_timer", "calls")

    name = "scripted"

    def __init__(
        self,
        policy: ReplyPolicy | Sequence[Reply] | None = None,
        *,
        policies: Mapping[str, ReplyPolicy | Sequence[Reply]] | None = None,
        latency: float = 0.0,
        chunk_size: int = 0,
    ) -> None:
        self._default: ReplyPolicy = _as_policy(policy) if policy is not None else default_policy
        table = {k: _as_policy(v) for k, v in (policies or {}).items()}
        if "*" in table and policy is None:
            self._default = table.pop("*")
        self._policies = table
        self._latency = float(latency)
        self._chunk = int(chunk_size)
        self._timer = SharedTimer()
        #: Model calls answered so far.
        self.calls = 0

    @classmethod
    def from_file(cls, path: str | Path, **options: Any) -> ScriptedProvider:
        """A provider playing the scripts of a YAML/JSON file (see :func:`load_scripts`)."""
        return cls(policies=load_scripts(path), **options)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def stream(self, request: ModelRequest, sink: StreamSink | None) -> ModelResponse:
        """Answer ``request`` from its agent type's policy."""
        self.calls += 1
        policy = self._policies.get(request.agent_type, self._default)
        reply = policy(request)
        if type(reply) is not Reply and inspect.isawaitable(reply):
            reply = await reply
        if not isinstance(reply, Reply):
            raise ScriptError(
                f"The policy for {request.agent_type or 'this agent'} returned "
                f"{type(reply).__name__}, not a Reply."
            )
        delay = self._latency if reply.latency is None else reply.latency
        if delay > 0:
            await self._timer.sleep(delay)
        else:
            await trio.lowlevel.checkpoint()
        if sink is not None:
            if reply.thinking:
                sink(ThinkingDelta(reply.thinking))
            for piece in self._pieces(reply.text):
                sink(TextDelta(piece))
        if reply.hang:
            await trio.sleep_forever()
        if reply.error is not None:
            raise reply.error
        prepared = reply._prepared
        content: list[Block] = list(prepared.head)
        invalid: dict[str, str] = {}
        prefix = request.agent_id or "agent"
        for index, (fixed_id, name, arguments, problem) in enumerate(prepared.calls):
            call_id = fixed_id or f"toolu_{prefix}_{request.turn}_{index}"
            if problem is not None:
                invalid[call_id] = problem
            block = ToolUseBlock(call_id, name, dict(arguments))
            content.append(block)
            if sink is not None:
                sink(ToolCall(call_id, name, block.input, problem))
        usage = reply.usage
        if usage is None:
            usage = Usage(
                input_tokens=len(request.system) // 4 + 32 * len(request.messages),
                output_tokens=prepared.output_tokens,
            )
        return ModelResponse(
            content=tuple(content),
            stop_reason=prepared.stop_reason,
            usage=usage,
            model=request.model,
            invalid_tool_inputs=invalid,
        )

    def _pieces(self, text: str) -> Sequence[str]:
        if not text:
            return ()
        size = self._chunk
        if size <= 0 or len(text) <= size:
            return (text,)
        return [text[i : i + size] for i in range(0, len(text), size)]


def _as_policy(value: ReplyPolicy | Sequence[Reply]) -> ReplyPolicy:
    if callable(value):
        return value
    return Script(list(value))
