"""The scripted provider: deterministic, offline replies from policies.

A policy gets the :class:`ModelRequest` and returns a :class:`Reply` (or an
awaitable of one): text, thinking, tool calls, token usage, latency, and
faults (an error to raise, a hang, a malformed tool call). Policies are chosen
per agent type, with a default. A :class:`Script` is a policy that plays a
list of replies in order, one per turn of the agent (``request.turn``), read
from YAML or JSON::

    - text: Looking for the entry point.
      tool_calls:
        - {name: Glob, input: {pattern: "**/main.py"}}
    - error: {type: overloaded_error, message: busy}       # a fault
    - tool_calls: [{name: Read, raw_input: "{not json"}]    # a malformed call
    - hang: true                                            # never answers
    - complete_task: {report: {summary: done, issues: []}}

A file may also map agent types to such lists (``"*"`` for every other type).
With no policy at all the provider answers with :func:`default_policy`. It is
what runs when no API key is set, and what tests and benchmarks use.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeAlias, final

import attrs
import msgspec
import trio
import yaml

from subagents.runtime._config import COMPLETE_TASK
from subagents.runtime._exceptions import ProviderError, ScriptError, provider_error
from subagents.runtime._messages import (
    Block,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from subagents.runtime._provider import (
    ModelRequest,
    ModelResponse,
    StreamSink,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)

__all__ = [
    "Policy",
    "Reply",
    "Script",
    "ScriptedProvider",
    "ScriptedToolCall",
    "SharedTimer",
    "default_policy",
    "load_scripts",
    "sample_for_schema",
]

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
        head: list[Block] = []
        if reply.thinking:
            head.append(ThinkingBlock(reply.thinking, _SIGNATURE))
        if reply.text:
            head.append(TextBlock(reply.text))
        self.head = tuple(head)
        calls: list[tuple[str | None, str, dict[str, Any], str | None]] = []
        written = len(reply.text) + len(reply.thinking)
        for call in reply.tool_calls:
            arguments, problem = call.input, None
            if isinstance(arguments, str):
                written += len(arguments)
                arguments, problem = _parse_arguments(arguments)
            else:
                written += len(_encoder.encode(arguments))
            written += len(call.name)
            calls.append((call.id, call.name, dict(arguments), problem))
        self.calls = tuple(calls)
        self.output_tokens = max(1, written // 4)
        self.stop_reason = reply.stop_reason or ("tool_use" if calls else "end_turn")


_encoder = msgspec.json.Encoder()


Policy: TypeAlias = Callable[[ModelRequest], Reply | Awaitable[Reply]]
"""Chooses the reply to a request (it may be async)."""


# -- scripts -------------------------------------------------------------------------


class _CallSpec(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    input: dict[str, Any] | None = None
    raw_input: str | None = None
    id: str | None = None


class _ErrorSpec(msgspec.Struct, forbid_unknown_fields=True):
    type: str = "api_error"
    message: str = "scripted provider error"
    status: int | None = None


class _UsageSpec(msgspec.Struct, forbid_unknown_fields=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class _TurnSpec(msgspec.Struct, forbid_unknown_fields=True):
    text: str = ""
    thinking: str = ""
    tool_calls: list[_CallSpec] = []
    complete_task: dict[str, Any] | None = None
    usage: _UsageSpec | None = None
    latency: float | None = None
    error: _ErrorSpec | None = None
    hang: bool = False
    stop_reason: str | None = None

    def reply(self) -> Reply:
        calls = [
            ScriptedToolCall(c.name, c.raw_input if c.raw_input is not None else c.input, c.id)
            for c in self.tool_calls
        ]
        if self.complete_task is not None:
            calls.append(ScriptedToolCall(COMPLETE_TASK, self.complete_task))
        error = None
        if self.error is not None:
            error = provider_error(
                self.error.message, error_type=self.error.type, status_code=self.error.status
            )
        usage = None
        if self.usage is not None:
            usage = Usage(
                self.usage.input_tokens,
                self.usage.output_tokens,
                self.usage.cache_read_tokens,
                self.usage.cache_write_tokens,
            )
        return Reply(
            text=self.text,
            thinking=self.thinking,
            tool_calls=tuple(calls),
            usage=usage,
            latency=self.latency,
            error=error,
            hang=self.hang,
            stop_reason=self.stop_reason,
        )


def _parse_turns(document: Any, where: str) -> tuple[Reply, ...]:
    try:
        specs = msgspec.convert(document, type=list[_TurnSpec])
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{where}: not a valid script ({exc}).") from None
    return tuple(spec.reply() for spec in specs)


@final
class Script:
    """A policy that plays ``replies`` in order: reply ``n`` answers the agent's turn ``n``.

    The agent's turn is ``request.turn`` (its own assistant messages so far), so
    one script serves any number of agents, and a resumed agent picks up where
    it was. Past the end it raises :class:`ScriptError`, or with ``repeat_last``
    plays the last reply again.
    """

    __slots__ = ("repeat_last", "replies")

    def __init__(self, replies: Sequence[Reply], *, repeat_last: bool = False) -> None:
        self.replies = tuple(replies)
        self.repeat_last = repeat_last

    def __repr__(self) -> str:
        return f"<Script {len(self.replies)} replies>"

    def __len__(self) -> int:
        return len(self.replies)

    def __call__(self, request: ModelRequest) -> Reply:
        turn = request.turn
        replies = self.replies
        if turn < len(replies):
            return replies[turn]
        if self.repeat_last and replies:
            return replies[-1]
        raise ScriptError(
            f"The script of {len(replies)} replies has no reply for turn {turn + 1} of agent "
            f"{request.agent_id or request.agent_type or '?'}; add replies or end it with a "
            "final message."
        )

    @classmethod
    def from_data(cls, document: Any, *, where: str = "script") -> Script:
        """A script from a parsed YAML/JSON list of turns."""
        return cls(_parse_turns(document, where))

    @classmethod
    def from_text(cls, text: str, *, where: str = "script") -> Script:
        """A script from YAML (or JSON, which is YAML) text."""
        return cls.from_data(_load_yaml(text, where), where=where)


def _load_yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScriptError(f"{where}: not valid YAML or JSON ({exc}).") from None


def load_scripts(source: str | Path) -> dict[str, Script]:
    """Scripts by agent type from a file: a list (for every type, key ``*``) or a mapping."""
    path = Path(source)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{where}: cannot read the script ({exc.strerror}).") from None
    document = _load_yaml(text, where)
    if isinstance(document, list):
        return {"*": Script.from_data(document, where=where)}
    if isinstance(document, dict):
        return {
            str(agent_type): Script.from_data(turns, where=f"{where}: {agent_type}")
            for agent_type, turns in document.items()
        }
    raise ScriptError(
        f"{where}: a script is a list of turns, or a mapping of agent types to lists."
    )


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
            arguments = sample_for_schema(spec.get("input_schema", {}))
            if isinstance(arguments, dict) and set(arguments) == {"result"}:
                arguments = {"result": text}
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
        policy: Policy | Sequence[Reply] | None = None,
        *,
        policies: Mapping[str, Policy | Sequence[Reply]] | None = None,
        latency: float = 0.0,
        chunk_size: int = 0,
    ) -> None:
        self._default: Policy = _as_policy(policy) if policy is not None else default_policy
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


def _as_policy(value: Policy | Sequence[Reply]) -> Policy:
    if callable(value):
        return value
    return Script(list(value))


def _parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        return {}, f"invalid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None
