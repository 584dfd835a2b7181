"""What travels through mailboxes besides the user's own messages, and what the
supervisor hands back: requests with a reply slot, child notices, references.
"""

from __future__ import annotations

from typing import Any, Literal, final

import msgspec
import trio

from ._exceptions import ActorError
from ._status import Status

__all__ = ["ActorInfo", "ActorRef", "ChildFinished", "Request", "WaitResult"]


@final
class Request:
    """A message that expects one reply, made by ``ask``.

    The receiving actor calls :meth:`reply` (or :meth:`fail`); the asker is
    woken through a :class:`trio.Event` slot rather than a reply channel.
    """

    __slots__ = ("_done", "_error", "_event", "_holder", "_value", "payload")

    def __init__(self, payload: Any) -> None:
        self.payload = payload
        self._event = trio.Event()
        self._done = False  # answered; read on hot paths instead of the event
        self._value: Any = None
        self._error: ActorError | None = None
        # The receiving actor's set of unanswered requests, once it has taken this one.
        self._holder: set[Request] | None = None

    @property
    def answered(self) -> bool:
        """Whether a reply (or a failure) was already given."""
        return self._done

    def reply(self, value: Any) -> None:
        """Answer the request; later replies are ignored (the first one wins)."""
        if not self._done:
            self._done = True
            self._value = value
            self._event.set()
            if self._holder is not None:
                self._holder.discard(self)

    def fail(self, error: ActorError) -> None:
        """Answer the request with an error that ``ask`` raises in the asker."""
        if not self._done:
            self._done = True
            self._error = error
            self._event.set()
            if self._holder is not None:
                self._holder.discard(self)


class ActorRef(msgspec.Struct, frozen=True):
    """Who an agent is: what ``spawn`` returns and what events are stamped with."""

    id: str
    nickname: str
    parent_id: str | None
    depth: int
    label: str


class ChildFinished(msgspec.Struct, frozen=True):
    """Put in a parent's mailbox when one of its children reaches a final status."""

    agent_id: str
    nickname: str
    status: Status


class ActorInfo(msgspec.Struct, frozen=True):
    """One row of :meth:`Supervisor.list`."""

    id: str
    nickname: str
    parent_id: str | None
    depth: int
    label: str
    status: Status
    closed: bool


class WaitResult(msgspec.Struct, frozen=True):
    """What :meth:`Supervisor.wait` returns: every asked id's status at return time."""

    statuses: dict[str, Status]
    timed_out: bool
    mode: Literal["any", "all"] = "any"
