"""The events the agent loop publishes on the kernel's bus, and the publisher it uses.

Every kind subclasses :class:`subagents.actors.Event`, so it carries the same
envelope (sequence number, time, agent id, parent id, depth, nickname) and is
an immutable, JSON-encodable ``msgspec`` struct. The loop builds an event only
when the bus has a subscriber: a run nobody watches costs no event objects.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeVar, final

from subagents.actors import ActorContext, Bus, Event
from subagents.runtime._providers.base import Usage

__all__ = [
    "ActivationStarted",
    "ApprovalDecided",
    "ApprovalRequested",
    "GracePeriodEnded",
    "GracePeriodStarted",
    "Publisher",
    "RunFinished",
    "TextChunk",
    "ThoughtChunk",
    "ToolCallEnded",
    "ToolCallStarted",
    "TurnCompleted",
    "TurnStarted",
    "UsageReported",
]


class ActivationStarted(Event, frozen=True, kw_only=True, tag="activation_started"):
    """The runtime began an activation of the agent: its work from Running to its next
    final status (the first run, then one per revival by follow-up input).

    ``SubagentStart`` hooks and the loop's runs follow; its result is on disk
    before that final status is published. An agent revived and closed before
    its activation began has none, and no result for that Running period.
    ``activation`` counts from 1 per agent record.
    """

    activation: int


class TurnStarted(Event, frozen=True, kw_only=True, tag="turn_started"):
    """A model call is about to be made; ``grace`` marks the last turn."""

    turn: int
    model: str
    grace: bool = False


class TurnCompleted(Event, frozen=True, kw_only=True, tag="turn_completed"):
    """A turn ended: its model call and every tool call it asked for are done."""

    turn: int
    stop_reason: str
    tool_calls: int
    usage: Usage


class ToolCallStarted(Event, frozen=True, kw_only=True, tag="tool_call_started"):
    """A tool call began."""

    turn: int
    tool_use_id: str
    tool_name: str
    input: dict[str, Any]


class ToolCallEnded(Event, frozen=True, kw_only=True, tag="tool_call_ended"):
    """A tool call ended; ``duration`` is in seconds on the Trio clock."""

    turn: int
    tool_use_id: str
    tool_name: str
    is_error: bool
    duration: float


class ApprovalRequested(Event, frozen=True, kw_only=True, tag="approval_requested"):
    """A tool call of the agent waits for approval (it climbs the agent tree to the
    embedder's callback or the CLI prompt); ``summary`` is its arguments, maybe cut."""

    turn: int
    tool_use_id: str | None
    tool_name: str
    summary: str


class ApprovalDecided(Event, frozen=True, kw_only=True, tag="approval_decided"):
    """The answer to the agent's :class:`ApprovalRequested` of the same ``tool_use_id``
    (not published when the run stops first)."""

    turn: int
    tool_use_id: str | None
    tool_name: str
    approved: bool
    timed_out: bool
    reason: str


class TextChunk(Event, frozen=True, kw_only=True, tag="text_chunk"):
    """A piece of the model's text, as it streams."""

    text: str


class ThoughtChunk(Event, frozen=True, kw_only=True, tag="thought_chunk"):
    """A piece of the model's thinking, as it streams."""

    text: str


class UsageReported(Event, frozen=True, kw_only=True, tag="usage_reported"):
    """Token usage of one model call, and of the run so far."""

    turn: int
    usage: Usage
    total: Usage


class GracePeriodStarted(Event, frozen=True, kw_only=True, tag="grace_period_started"):
    """The run hit a limit; the model gets one last turn with only ``complete_task``."""

    reason: Literal["timeout", "max_turns"]
    grace_seconds: float


class GracePeriodEnded(Event, frozen=True, kw_only=True, tag="grace_period_ended"):
    """The grace turn ended: ``completed`` (a valid ``complete_task``), ``no_call``,
    ``invalid`` (the call failed validation), ``timed_out``, ``error`` or ``aborted``."""

    reason: Literal["timeout", "max_turns"]
    outcome: Literal["completed", "no_call", "invalid", "timed_out", "error", "aborted"]


class RunFinished(Event, frozen=True, kw_only=True, tag="run_finished"):
    """A run ended, with its terminate reason and counters."""

    terminate_reason: str
    turns: int
    tool_uses: int
    usage: Usage
    duration: float
    error: str | None = None


E = TypeVar("E", bound=Event)

_NO_BUS: Final[Any] = None


@final
class Publisher:
    """Publishes the loop's events for one agent, stamped with its envelope.

    Made from an actor's context (:meth:`for_actor`) or from a bus and an
    identity, for loops run outside the kernel; ``Publisher()`` publishes
    nothing. Ask :meth:`wants` before building an event's fields on a hot path.
    """

    __slots__ = ("agent_id", "bus", "depth", "nickname", "parent_id")

    def __init__(
        self,
        bus: Bus | None = _NO_BUS,
        *,
        agent_id: str = "",
        parent_id: str | None = None,
        depth: int = 0,
        nickname: str = "",
    ) -> None:
        self.bus = bus
        self.agent_id = agent_id
        self.parent_id = parent_id
        self.depth = depth
        self.nickname = nickname

    @classmethod
    def for_actor(cls, ctx: ActorContext) -> Publisher:
        """A publisher for the actor ``ctx``, on its supervisor's bus."""
        return cls(
            ctx.bus,
            agent_id=ctx.id,
            parent_id=ctx.parent_id,
            depth=ctx.depth,
            nickname=ctx.nickname,
        )

    def __repr__(self) -> str:
        return f"<Publisher {self.nickname or self.agent_id!r}>"

    def wants(self, kind: type[Event]) -> bool:
        """Whether an event of ``kind`` would reach anyone: build it only then."""
        bus = self.bus
        return bus is not None and bus.wants(kind)

    def make(self, kind: type[E], **fields: Any) -> E:
        """An event of ``kind`` with this agent's envelope."""
        return kind(
            agent_id=self.agent_id,
            parent_id=self.parent_id,
            depth=self.depth,
            nickname=self.nickname,
            **fields,
        )

    def publish_nowait(self, kind: type[Event], **fields: Any) -> None:
        """Publish without waiting (a full lossless subscriber loses its oldest event)."""
        bus = self.bus
        if bus is not None and bus.wants(kind):
            bus.publish_nowait(self.make(kind, **fields))

    async def publish(self, kind: type[Event], **fields: Any) -> None:
        """Publish, giving lossless subscribers their bounded time to make room."""
        bus = self.bus
        if bus is not None and bus.wants(kind):
            if bus.has_lossless_subscribers:
                await bus.make_room()
            bus.publish_nowait(self.make(kind, **fields))
