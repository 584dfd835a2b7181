"""The actor's own handle: its identity, its mailbox, and the supervisor's calls.

One object per actor serves both as the supervisor's record of it and as the
context its behavior receives, which keeps an idle actor small.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias, final

import trio

from ._exceptions import AgentClosed
from ._messages import ActorRef, ChildFinished, Request, WaitResult
from ._status import PENDING_INIT, Status

if TYPE_CHECKING:
    from ._bus import Bus
    from ._supervisor import Supervisor

__all__ = ["ActorContext", "Behavior", "Init", "Prepare"]

Behavior: TypeAlias = Callable[["ActorContext"], Awaitable[str | None]]
"""What an actor runs: it gets its context and returns its result (or raises)."""

Init: TypeAlias = Callable[["ActorContext"], Awaitable[None]]
"""Optional start-up code, run before ``spawn`` returns; if it raises, spawn fails."""

Prepare: TypeAlias = Callable[["ActorContext"], None]
"""The same, synchronous: it runs in the spawner's task, with no handshake to wait for."""

_EMPTY: Final[Any] = object()
_LEAF_CHILDREN: Final[dict[str, ActorContext]] = {}


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
        "_on_stop",
        "_parent",
        "_plain",
        "_ready",
        "_recv",
        "_scope",
        "_send",
        "_settled",
        "_start_error",
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
        # Not open_memory_channel[Any](...): the subscript builds a typing alias per call.
        self._send: trio.MemorySendChannel[Any]
        self._recv: trio.MemoryReceiveChannel[Any]
        self._send, self._recv = trio.open_memory_channel(mailbox_size)
        leaf = self.depth >= sup.config.max_depth
        # A leaf can never have children: it shares one empty dict that is never written.
        self._children: dict[str, ActorContext] = _LEAF_CHILDREN if leaf else {}
        self._nursery: trio.Nursery | None = None
        self._head: Any = _EMPTY
        self._notices: dict[str, ChildFinished] | None = None
        self._inflight: set[Request] | None = None
        self._stopping = False
        self._settled = False
        self._on_stop: Callable[[], object] | None = None
        self._start_error: Exception | None = None
        self._done: trio.Event | None = None
        self._task: trio.lowlevel.Task | None = None
        # An actor at max_depth can have no children, so it needs no nursery:
        # a cancel scope made now (cancellable before its task starts) is enough.
        self._scope: trio.CancelScope | None = trio.CancelScope() if leaf else None
        # Hot-path flags, kept up to date by the supervisor:
        # _ready: live and not stopping, so a send needs no further checks;
        # _plain: no pushed-back message, no notices, not stopping, so a receive
        # goes straight to the mailbox.
        self._ready = False
        self._plain = True

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

    def settle(self) -> None:
        """Declare this activation's outcome decided: the behavior only finishes up now.

        A stop asked from here until the behavior returns no longer turns its
        outcome into ``Shutdown`` (the actor still stops right after reporting
        it). The runtime calls this once an agent's result is written with the
        status ``stopping`` gave then, and it waits for that result's ``fsync``:
        the status published must be the one on disk.
        """
        self._settled = True

    def on_stop(self, callback: Callable[[], object] | None) -> None:
        """Have ``callback`` called once, synchronously, when this actor is asked to stop.

        ``close`` (of this actor or an ancestor, or of the supervisor) asks it to
        stop before the grace period starts; the callback lets a behavior that is
        busy, not reading its mailbox, wind up at once (cancel its own work)
        instead of waiting to be cancelled. It is called at once when the actor
        is stopping already; ``None`` removes it. It must not raise or block.
        """
        if callback is not None and self._stopping:
            callback()
            return
        self._on_stop = callback

    # -- mailbox ----------------------------------------------------------------

    def receive_nowait(self) -> Any:
        """The next message, without waiting: ``trio.WouldBlock`` when there is none.

        Raises :class:`AgentClosed` once this actor has been asked to close.
        """
        message = self._poll()
        if message is _EMPTY:
            raise trio.WouldBlock
        return message

    async def receive(self) -> Any:
        """The next message, waiting while the mailbox is empty.

        Messages already in the mailbox are returned without yielding, so a busy
        actor drains its mailbox in one go. Raises :class:`AgentClosed` once this
        actor has been asked to close.
        """
        message = self._poll()
        if message is _EMPTY:
            try:
                message = await self._recv.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                raise AgentClosed(self.id, self.nickname) from None
            if type(message) is Request:
                self._track(message)
        return message

    def _poll(self) -> Any:
        """The next message, or ``_EMPTY`` when there is none.

        ``WouldBlock`` is caught here, in a plain function, so it never passes
        through the caller's coroutine frame: a traceback would give that frame
        a frame object that lives as long as the (idle) actor.
        """
        if not self._plain:
            return self._receive_special()
        try:
            message = self._recv.receive_nowait()
        except trio.WouldBlock:
            return _EMPTY
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise AgentClosed(self.id, self.nickname) from None
        if type(message) is Request:
            self._track(message)
        return message

    def _receive_special(self) -> Any:
        """The slow path: a pushed-back message, then child notices, then the mailbox."""
        try:
            if self._head is not _EMPTY:
                message, self._head = self._head, _EMPTY
            elif self._notices:
                return self._notices.pop(next(iter(self._notices)))
            elif self._stopping:
                raise AgentClosed(self.id, self.nickname)
            else:
                try:
                    message = self._recv.receive_nowait()
                except trio.WouldBlock:
                    return _EMPTY
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    raise AgentClosed(self.id, self.nickname) from None
        finally:
            self._update_plain()
        if type(message) is Request:
            self._track(message)
        return message

    def _update_plain(self) -> None:
        self._plain = self._head is _EMPTY and not self._notices and not self._stopping

    def _track(self, request: Request) -> None:
        """Remember a request until it is answered, so it fails if we end without replying."""
        if self._inflight is None:
            self._inflight = set()
        self._inflight.add(request)
        request._holder = self._inflight

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        # receive(), inlined so that ``async for`` costs no extra frame per message.
        try:
            message = self._poll()
            if message is _EMPTY:
                message = await self._recv.receive()
                if type(message) is Request:
                    self._track(message)
        except (AgentClosed, trio.EndOfChannel, trio.ClosedResourceError):
            raise StopAsyncIteration from None
        return message

    # -- the supervisor's calls, made as this actor ---------------------------------
    # Plain functions that return the supervisor's coroutine: awaiting them costs
    # no extra coroutine frame on the hot paths (send, ask).

    def spawn(
        self,
        behavior: Behavior,
        *,
        label: str = "actor",
        nickname: str | None = None,
        agent_id: str | None = None,
        init: Init | None = None,
        prepare: Prepare | None = None,
        auto_close: bool = False,
        mailbox_size: int | None = None,
    ) -> Coroutine[Any, Any, ActorRef]:
        """Spawn a child of this actor; see :meth:`Supervisor.spawn`."""
        return self._sup.spawn(
            behavior,
            parent=self,
            label=label,
            nickname=nickname,
            agent_id=agent_id,
            init=init,
            prepare=prepare,
            auto_close=auto_close,
            mailbox_size=mailbox_size,
        )

    def send(self, agent_id: str, message: Any) -> Coroutine[Any, Any, None]:
        """Send to another actor; see :meth:`Supervisor.send`."""
        return self._sup.send(agent_id, message)

    def send_nowait(self, agent_id: str, message: Any) -> None:
        """Send without waiting; see :meth:`Supervisor.send_nowait`."""
        target = self._sup._actors.get(agent_id)
        if target is not None and target._ready:  # the fast path, without a second call
            try:
                target._send.send_nowait(message)
            except trio.WouldBlock:
                pass
            else:
                return
        self._sup.send_nowait(agent_id, message)

    def ask(self, agent_id: str, payload: Any, *, timeout: float) -> Coroutine[Any, Any, Any]:
        """Send a request and wait for its reply; see :meth:`Supervisor.ask`."""
        return self._sup.ask(agent_id, payload, timeout=timeout)

    def wait(
        self,
        agent_ids: Iterable[str],
        *,
        timeout: float,
        mode: Literal["any", "all"] = "any",
    ) -> Coroutine[Any, Any, WaitResult]:
        """Wait for other actors; see :meth:`Supervisor.wait`."""
        return self._sup.wait(agent_ids, timeout=timeout, mode=mode)

    def close(self, agent_id: str, *, grace: float | None = None) -> Coroutine[Any, Any, Status]:
        """Close another actor (and its subtree); see :meth:`Supervisor.close`."""
        return self._sup.close(agent_id, grace=grace)

    def children(self) -> tuple[ActorRef, ...]:
        """This actor's open children."""
        return tuple(child.ref for child in self._children.values())
