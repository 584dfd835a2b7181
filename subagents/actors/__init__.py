"""The actor kernel: supervised Trio actors with mailboxes, limits, nicknames and a bus.

It knows nothing about LLMs. An actor is an async behavior with a bounded
mailbox, running under a :class:`Supervisor` that enforces ``max_threads`` and
``max_depth``, names it, routes ``send`` / ``ask`` / ``wait`` / ``close`` to it
and publishes every status change on a :class:`Bus`::

    async with open_supervisor(SupervisorConfig(max_threads=4)) as sup:
        ref = await sup.spawn(echo, label="echo")
        await sup.send(ref.id, "hello")
        result = await sup.wait([ref.id], timeout=5)
"""

import typing as _typing
import warnings as _warnings

from ._bus import (
    Bus,
    BusStatistics,
    Listener,
    OverflowPolicy,
    Subscription,
    SubscriptionStatistics,
)
from ._config import SupervisorConfig, is_count, is_seconds
from ._context import ActorContext, Behavior, Init, Prepare
from ._events import AgentSpawned, Event, Lagged, StatusChanged
from ._exceptions import (
    ActorError,
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    AgentStartFailed,
    DepthLimitReached,
    IllegalTransition,
    InvalidConfiguration,
    MailboxFull,
    NoReply,
    ReplyTimeout,
    SupervisorClosed,
)
from ._messages import ActorInfo, ActorRef, ChildFinished, Request, WaitResult
from ._nicknames import DEFAULT_NICKNAMES, NicknamePool, ordinal
from ._status import (
    NOT_FOUND,
    PENDING_INIT,
    RUNNING,
    SHUTDOWN,
    Completed,
    Errored,
    NotFound,
    PendingInit,
    Running,
    Shutdown,
    Status,
    check_transition,
    is_final,
    is_live,
    kind_of,
)
from ._supervisor import Supervisor, SupervisorStatistics, open_supervisor

__all__ = [
    "DEFAULT_NICKNAMES",
    "NOT_FOUND",
    "PENDING_INIT",
    "RUNNING",
    "SHUTDOWN",
    "ActorContext",
    "ActorError",
    "ActorInfo",
    "ActorRef",
    "AgentClosed",
    "AgentLimitReached",
    "AgentNotFound",
    "AgentSpawned",
    "AgentStartFailed",
    "Behavior",
    "Bus",
    "BusStatistics",
    "ChildFinished",
    "Completed",
    "DepthLimitReached",
    "Errored",
    "Event",
    "IllegalTransition",
    "Init",
    "InvalidConfiguration",
    "Lagged",
    "Listener",
    "MailboxFull",
    "NicknamePool",
    "NoReply",
    "NotFound",
    "PendingInit",
    "Prepare",
    "OverflowPolicy",
    "ReplyTimeout",
    "Request",
    "Running",
    "Shutdown",
    "Status",
    "StatusChanged",
    "Subscription",
    "SubscriptionStatistics",
    "Supervisor",
    "SupervisorClosed",
    "SupervisorConfig",
    "SupervisorStatistics",
    "WaitResult",
    "check_transition",
    "is_count",
    "is_final",
    "is_live",
    "is_seconds",
    "kind_of",
    "open_supervisor",
    "ordinal",
]


#: The bus's overflow policy was ``Policy`` (the scripted provider's reply
#: callable is :data:`subagents.runtime.ReplyPolicy`): old name -> new name.
_RENAMED: _typing.Final = {"Policy": "OverflowPolicy"}


def __getattr__(name: str) -> _typing.Any:
    # Old names, still served with a DeprecationWarning that gives the new one.
    if name in _RENAMED:
        new = _RENAMED[name]
        _warnings.warn(
            f"subagents.actors.{name} is deprecated: it is subagents.actors.{new} now",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module 'subagents.actors' has no attribute {name!r}")
