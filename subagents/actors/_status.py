"""Agent statuses and the one table of legal transitions between them.

Statuses are immutable ``msgspec`` structs tagged by ``kind`` so that they cross
the bus, the CLI's JSON lines and transcripts unchanged.
"""

from __future__ import annotations

from typing import Final, TypeAlias

import msgspec

from ._exceptions import IllegalTransition

__all__ = [
    "PENDING_INIT",
    "RUNNING",
    "SHUTDOWN",
    "NOT_FOUND",
    "Completed",
    "Errored",
    "NotFound",
    "PendingInit",
    "Running",
    "Shutdown",
    "Status",
    "check_transition",
    "is_final",
    "is_live",
    "kind_of",
]


class PendingInit(msgspec.Struct, frozen=True, tag_field="kind", tag="pending_init"):
    """Registered, holding a slot, not yet running its start-up code."""


class Running(msgspec.Struct, frozen=True, tag_field="kind", tag="running"):
    """Running its behavior (or waiting for messages inside it)."""


class Completed(msgspec.Struct, frozen=True, tag_field="kind", tag="completed"):
    """The behavior returned; ``result`` is what it returned."""

    result: str | None = None


class Errored(msgspec.Struct, frozen=True, tag_field="kind", tag="errored"):
    """The behavior raised; ``message`` describes the exception."""

    message: str


class Shutdown(msgspec.Struct, frozen=True, tag_field="kind", tag="shutdown"):
    """Closed or cancelled before it could finish."""


class NotFound(msgspec.Struct, frozen=True, tag_field="kind", tag="not_found"):
    """The answer for an id that no agent has."""


Status: TypeAlias = PendingInit | Running | Completed | Errored | Shutdown | NotFound

PENDING_INIT: Final = PendingInit()
RUNNING: Final = Running()
SHUTDOWN: Final = Shutdown()
NOT_FOUND: Final = NotFound()

_FINAL: Final = (Completed, Errored, Shutdown)
_LIVE: Final = (PendingInit, Running)

# The one transition table. A final agent goes back to Running when it takes
# follow-up input, and to Shutdown when it is closed (as Codex's close_agent
# shuts down a finished thread); Shutdown is only left by a resume, which
# starts a new record.
_ALLOWED: Final[dict[type[Status], tuple[type[Status], ...]]] = {
    PendingInit: (Running, Errored, Shutdown),
    Running: (Completed, Errored, Shutdown),
    Completed: (Running, Shutdown),
    Errored: (Running, Shutdown),
    Shutdown: (),
    NotFound: (),
}


def is_final(status: Status) -> bool:
    """Whether ``status`` ends a run (Completed, Errored or Shutdown)."""
    return isinstance(status, _FINAL)


def is_live(status: Status) -> bool:
    """Whether ``status`` holds a ``max_threads`` slot (PendingInit or Running)."""
    return isinstance(status, _LIVE)


def check_transition(agent_id: str, old: Status, new: Status) -> None:
    """Raise :class:`IllegalTransition` unless the table allows ``old -> new``."""
    if type(new) not in _ALLOWED[type(old)]:
        raise IllegalTransition(agent_id, kind_of(old), kind_of(new))


def kind_of(status: Status) -> str:
    """The ``kind`` tag of ``status`` (``"running"``, ``"completed"``, ...)."""
    tag = type(status).__struct_config__.tag
    assert isinstance(tag, str)
    return tag
