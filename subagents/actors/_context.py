"""The actor's own handle: its identity, its mailbox, and the supervisor's calls.

One object per actor serves both as the supervisor's record of it and as the
context its behavior receives, which keeps an idle actor small.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias, final

import trio

from ._exceptions import AgentClosed
from ._messages import ActorRef, ChildFinished, Request, WaitResult
from ._status import PENDING_INIT, Status

if TYPE_CHECKING:
    from ._bus import Bus
    from ._supervisor import Supervisor

__all__ = ["ActorContext", "Behavior", "Init"]

Behavior: TypeAlias = Callable[["ActorContext"], Awaitable[str | None]]
"""What an actor runs: it gets its context and returns its result (or raises)."""

Init: TypeAlias = Callable[["ActorContext"], Awaitable[None]]
"""Optional start-up code, run before ``spawn`` returns; if it raises, spawn fails."""

_EMPTY: Final[Any] = object()


@final
class ActorContext:
    """An actor as its behavior sees it, and as the supervisor tracks it.

    The behavior reads its mailbox with :meth:`receive` (or ``async for``),
    spawns children with :meth:`spawn` (they run in this actor's own nursery,
    so closing it ends them), and talks to other actors through the supervisor.
    """

    __slots__ = (
        "_auto_close",
        "_behavior",
        "_children",
        "_done",
        "_head",
        "_inflight",
        "_init",
        "_notices",
        "_nursery",
        "_parent",
        "_recv",
        "_send",
        "_stopping",
        "_sup",
        "_task",
        "depth",
        "id",
        "label",
        "nickname",
        "status",
    )

    def __init__(
        self,
        sup: Supervisor,
        *,
        agent_id: str,
        nickname: str,
        parent: ActorContext | None,
        label: str,
        behavior: Behavior,
        init: Init | None,
        auto_close: bool,
        mailbox_size: int,
    ) -> None:
        self._sup = sup
        self.id = agent_id
        self.nickname = nickname
        self._parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.label = label
        self.status: Status = PENDING_INIT
        self._behavior = behavior
        self._init = init
        self._auto_close = auto_close
        self._send, self._recv = trio.open_memory_channel[Any](mailbox_size)
        self._children: dict[str, ActorContext] = {}
        self._nursery: trio.Nursery | None = None
        self._head: Any = _EMPTY
        self._notices: dict[str, ChildFinished] | None = None
        self._inflight: set[Request] | None = None
        self._stopping = False
        self._done: trio.Event | None = None
        self._task: trio.lowlevel.Task | None = None

    def __repr__(self) -> str:
        return f"<ActorContext {self.nickname} ({self.id}) depth={self.depth} {self.status!r}>"

    # -- identity ---------------------------------------------------------------

    @property
    def parent_id(self) -> str | None:
        """The id of the actor that spawned this one (None for a top-level actor)."""
        return None if self._parent is None else self._parent.id

    @property
    def ref(self) -> ActorRef:
        """This actor's identity as a value."""
        return ActorRef(self.id, self.nickname, self.parent_id, self.depth, self.label)

    @property
    def supervisor(self) -> Supervisor:
        """The supervisor this actor runs under."""
        return self._sup

    @property
    def bus(self) -> Bus:
        """The supervisor's event bus, for actors that publish their own events."""
        return self._sup.bus

    @property
    def stopping(self) -> bool:
        """Whether this actor was asked to close; it should wind up promptly."""
        return self._stopping

    # -- mailbox ----------------------------------------------------------------

    def receive_nowait(self) -> Any:
        """The next message, without waiting: ``trio.WouldBlock`` when there is none.

        Raises :class:`AgentClosed` once this actor has been asked to close.
        """
        if self._head is not _EMPTY:
            message, self._head = self._head, _EMPTY
        elif self._notices:
            message = self._notices.pop(next(iter(self._notices)))
        elif self._stopping:
            raise AgentClosed(self.id, self.nickname)
        else:
            try:
                message = self._recv.receive_nowait()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                raise AgentClosed(self.id, self.nickname) from None
        if type(message) is Request:
            self._track(message)
        return message

    async def receive(self) -> Any:
        """The next message, waiting while the mailbox is empty.

        Messages already in the mailbox are returned without yielding, so a busy
        actor drains its mailbox in one go. Raises :class:`AgentClosed` once this
        actor has been asked to close.
        """
        try:
            return self.receive_nowait()
        except trio.WouldBlock:
            pass
        try:
            message = await self._recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise AgentClosed(self.id, self.nickname) from None
        if type(message) is Request:
            self._track(message)
        return message

    def _track(self, request: Request) -> None:
        if self._inflight is None:
            self._inflight = set()
        self._inflight.add(request)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except AgentClosed:
            raise StopAsyncIteration from None

    # -- the supervisor's calls, made as this actor ----------------------------

    async def spawn(
        self,
        behavior: Behavior,
        *,
        label: str = "actor",
        nickname: str | None = None,
        agent_id: str | None = None,
        init: Init | None = None,
        auto_close: bool = False,
        mailbox_size: int | None = None,
    ) -> ActorRef:
        """Spawn a child of this actor; see :meth:`Supervisor.spawn`."""
        return await self._sup.spawn(
            behavior,
            parent=self,
            label=label,
            nickname=nickname,
            agent_id=agent_id,
            init=init,
            auto_close=auto_close,
            mailbox_size=mailbox_size,
        )

    async def send(self, agent_id: str, message: Any) -> None:
        """Send to another actor; see :meth:`Supervisor.send`."""
        await self._sup.send(agent_id, message)

    def send_nowait(self, agent_id: str, message: Any) -> None:
        """Send without waiting; see :meth:`Supervisor.send_nowait`."""
        self._sup.send_nowait(agent_id, message)

    async def ask(self, agent_id: str, payload: Any, *, timeout: float) -> Any:
        """Send a request and wait for its reply; see :meth:`Supervisor.ask`."""
        return await self._sup.ask(agent_id, payload, timeout=timeout)

    async def wait(
        self,
        agent_ids: Iterable[str],
        *,
        timeout: float,
        mode: Literal["any", "all"] = "any",
    ) -> WaitResult:
        """Wait for other actors; see :meth:`Supervisor.wait`."""
        return await self._sup.wait(agent_ids, timeout=timeout, mode=mode)

    async def close(self, agent_id: str, *, grace: float | None = None) -> Status:
        """Close another actor (and its subtree); see :meth:`Supervisor.close`."""
        return await self._sup.close(agent_id, grace=grace)

    def children(self) -> tuple[ActorRef, ...]:
        """This actor's open children."""
        return tuple(child.ref for child in self._children.values())
