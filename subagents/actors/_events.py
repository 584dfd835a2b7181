"""The events the kernel publishes on the bus.

Every event is an immutable ``msgspec`` struct tagged by ``type`` that carries
the same envelope: a global sequence number and a timestamp (both stamped by
the bus when it is published) and the agent it is about. Later layers (the agent
loop, hooks, approvals) subclass :class:`Event` for their own kinds.
"""

from __future__ import annotations

import msgspec

from ._status import Status

__all__ = ["AgentSpawned", "Event", "Lagged", "StatusChanged"]


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Envelope shared by every bus event.

    ``seq`` and ``time`` are set by :meth:`Bus.publish`; leave them at their
    defaults when constructing an event.
    """

    seq: int = 0
    time: float = 0.0
    agent_id: str
    parent_id: str | None
    depth: int
    nickname: str


class AgentSpawned(Event, frozen=True, kw_only=True, tag="agent_spawned"):
    """An agent was registered; ``label`` says what kind of agent (its type)."""

    label: str


class StatusChanged(Event, frozen=True, kw_only=True, tag="status_changed"):
    """An agent moved to ``status``."""

    status: Status


class Lagged(msgspec.Struct, frozen=True, tag_field="type", tag="lagged"):
    """Delivered to a subscription in place of ``dropped`` events it lost.

    It arrives where the lost events would have been, so a consumer knows the
    stream has a gap and how large it is.
    """

    dropped: int
