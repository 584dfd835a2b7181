"""The pub/sub bus: every status change and progress event, fanned out to subscribers.

Publishing never waits for a slow subscriber. Each subscription owns a bounded
buffer and a policy for when it is full:

- ``drop_oldest`` (UIs, dashboards): the oldest buffered event is dropped, the
  loss is counted, and a :class:`Lagged` marker is delivered where the gap is.
- ``block`` (lossless consumers such as a JSON-lines writer): :meth:`Bus.publish`
  waits for room, but at most ``max_block`` seconds; past that bound the
  subscription falls back to dropping (with a marker), so a stalled consumer can
  slow publishers down but never stop them.

Subscriptions are pulled by their consumer, so a consumer that raises or never
reads cannot break a publisher.

A :class:`Listener` is the synchronous alternative for an in-process consumer
whose handling is cheap and O(1), such as a progress tracker: :meth:`Bus.listen`
registers a callable that :meth:`Bus.publish_nowait` calls with each stamped
event before offering it to the subscriptions. It never lags, never holds a
publisher and costs no task switch or buffer; a listener that raises is
detached (its error kept on the handle) so it cannot break a publisher either.
A subscription or a listener may ask for some kinds only (``types``): it then
does not count in :attr:`Bus.has_subscribers`, and a publisher asks
:meth:`Bus.wants` before building an event of a kind such a consumer follows.
The runtime's progress follower listens so to the kernel's spawns and status
changes, while the agent loop tells the runtime's tracker its turns directly: a
turn nobody subscribes to builds no event, and neither does one whose only
subscribers follow other kinds (a job's progress bar, a Ray worker's forwarding).
"""

from __future__ import annotations

import collections
import enum
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Final, Self, final

import attrs
import msgspec
import trio

from ._config import check_count, check_seconds
from ._events import AgentSpawned, Event, Lagged
from ._exceptions import InvalidConfiguration

__all__ = [
    "Bus",
    "BusStatistics",
    "Listener",
    "OverflowPolicy",
    "Subscription",
    "SubscriptionStatistics",
]

_force_setattr: Final = msgspec.structs.force_setattr
_CAPACITY: Final = "how many events a subscription may hold unread"
_MAX_BLOCK: Final = "how long a lossless subscriber may hold publishers"


class OverflowPolicy(enum.Enum):
    """What a subscription does when its buffer is full."""

    DROP_OLDEST = "drop_oldest"
    BLOCK = "block"


@attrs.frozen
class BusStatistics:
    """A snapshot of the bus's counters."""

    published: int
    """Events published since the bus was made."""
    delivered: int
    """Events placed in a subscription buffer (one event counts once per subscriber)."""
    dropped: int
    """Events dropped from full buffers (drop_oldest, or block past its bound)."""
    subscribers: int
    """Subscriptions open now."""
    blocked_publishes: int
    """Publishes that had to wait for a ``block`` subscriber to make room."""
    block_timeouts: int
    """Of those, how many gave up after ``max_block`` and dropped instead."""
    listeners: int
    """Listeners attached now (:meth:`Bus.listen`); they are not counted in ``subscribers``."""


@attrs.frozen
class SubscriptionStatistics:
    """A snapshot of one subscription's counters."""

    buffered: int
    capacity: int
    policy: OverflowPolicy
    delivered: int
    """Events that passed the filters and were placed in the buffer."""
    dropped: int
    """Events lost because the buffer was full."""
    closed: bool


@final
class Subscription:
    """One consumer's bounded, filtered view of the bus.

    Use it as a context manager so that it is always removed from the bus, and
    read it with ``async for`` or :meth:`receive`. Reading does not yield while
    events are buffered (a consumer drains its buffer in one go, as an actor
    drains its mailbox); it parks only when the buffer is empty.
    """

    __slots__ = (
        "_agents",
        "_buffer",
        "_bus",
        "_capacity",
        "_closed",
        "_delivered",
        "_dropped",
        "_lag",
        "_members",
        "_policy",
        "_reader",
        "_room",
        "_type_cache",
        "_types",
        "max_block",
    )

    def __init__(
        self,
        bus: Bus,
        *,
        capacity: int,
        policy: OverflowPolicy,
        max_block: float,
        types: tuple[type[Event], ...] | None,
        agents: frozenset[str] | None,
        subtree: set[str] | None,
    ) -> None:
        self._bus = bus
        self._capacity = capacity
        self._policy = policy
        self.max_block = max_block
        self._types = types
        self._type_cache: dict[type[Event], bool] = {}
        self._agents = agents
        self._members = subtree
        self._buffer: collections.deque[Event] = collections.deque()
        self._lag = 0
        self._delivered = 0
        self._dropped = 0
        self._closed = False
        self._reader = trio.lowlevel.ParkingLot()
        self._room = trio.lowlevel.ParkingLot()

    # -- publisher side -------------------------------------------------------

    def _wants(self, kind: type[Event]) -> bool:
        """Whether an event of ``kind`` may pass this subscription's filters: its types
        (or any), and a spawn when it follows a subtree (spawns grow the subtree)."""
        types = self._types
        if types is None or issubclass(kind, types):
            return True
        return self._members is not None and issubclass(kind, AgentSpawned)

    def _offer(self, event: Event) -> int:
        """Buffer ``event`` if it passes the filters; return how many were dropped."""
        members = self._members
        if members is not None:
            if type(event) is AgentSpawned and event.parent_id in members:
                members.add(event.agent_id)
            if event.agent_id not in members:
                return 0
        if self._agents is not None and event.agent_id not in self._agents:
            return 0
        if self._types is not None:
            wanted = self._type_cache.get(type(event))
            if wanted is None:
                wanted = self._type_cache[type(event)] = issubclass(type(event), self._types)
            if not wanted:
                return 0
        buffer = self._buffer
        dropped = 0
        if len(buffer) >= self._capacity:
            buffer.popleft()
            self._lag += 1
            self._dropped += 1
            dropped = 1
        buffer.append(event)
        self._delivered += 1
        if self._reader:
            self._reader.unpark()
        return dropped

    def _full(self, count: int = 1) -> bool:
        """Whether ``count`` more events (at most a full buffer's worth) would not fit."""
        need = min(count, self._capacity)
        return len(self._buffer) > self._capacity - need and not self._closed

    async def _wait_for_room(self, deadline: float, count: int) -> bool:
        """Wait until ``count`` events fit; ``False`` if ``deadline`` passed first."""
        with trio.move_on_at(deadline):
            while self._full(count):
                await self._room.park()
            return True
        return False

    # -- consumer side --------------------------------------------------------

    def receive_nowait(self) -> Event | Lagged:
        """The next event, or a :class:`Lagged` marker; ``trio.WouldBlock`` if none.

        Raises ``trio.EndOfChannel`` once the subscription is closed and drained.
        """
        if self._lag:
            lag, self._lag = self._lag, 0
            return Lagged(dropped=lag)
        if self._buffer:
            event = self._buffer.popleft()
            if self._room:
                self._room.unpark()
            return event
        if self._closed:
            raise trio.EndOfChannel
        raise trio.WouldBlock

    async def receive(self) -> Event | Lagged:
        """The next event or marker, waiting while the buffer is empty."""
        while True:
            try:
                return self.receive_nowait()
            except trio.WouldBlock:
                pass
            # Parked outside the handler: a waiting subscriber keeps no exception alive.
            await self._reader.park()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event | Lagged:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Leave the bus; buffered events can still be read, then iteration ends."""
        if self._closed:
            return
        self._closed = True
        self._bus._remove(self)
        self._reader.unpark_all()
        self._room.unpark_all()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def dropped(self) -> int:
        """How many events this subscription lost to a full buffer."""
        return self._dropped

    def statistics(self) -> SubscriptionStatistics:
        """A snapshot of this subscription's counters."""
        return SubscriptionStatistics(
            buffered=len(self._buffer),
            capacity=self._capacity,
            policy=self._policy,
            delivered=self._delivered,
            dropped=self._dropped,
            closed=self._closed,
        )


@final
class Listener:
    """A synchronous consumer of every event (or of some kinds), attached with :meth:`Bus.listen`.

    Its callable runs inside :meth:`Bus.publish_nowait`, after the event is
    stamped with its ``seq`` and ``time`` and before any subscription sees it,
    so it gets every event (of its ``types``, when it has some), in order,
    without a buffer or a task. It must be quick and must not wait. If it
    raises an :class:`Exception`, it is detached and the exception kept in
    :attr:`error`; the publisher carries on.
    """

    __slots__ = ("_bus", "_callback", "_type_cache", "_types", "closed", "error")

    def __init__(
        self,
        bus: Bus,
        callback: Callable[[Event], object],
        types: tuple[type[Event], ...] | None = None,
    ) -> None:
        self._bus = bus
        self._callback = callback
        self._types = types
        self._type_cache: dict[type[Event], bool] = {}
        self.closed = False
        self.error: Exception | None = None
        """The exception that detached this listener, if one did."""

    @property
    def types(self) -> tuple[type[Event], ...] | None:
        """The kinds this listener gets (and their subclasses); ``None``: every kind."""
        return self._types

    def wants(self, kind: type[Event]) -> bool:
        """Whether events of ``kind`` reach this listener."""
        types = self._types
        if types is None:
            return True
        wanted = self._type_cache.get(kind)
        if wanted is None:
            wanted = self._type_cache[kind] = issubclass(kind, types)
        return wanted

    def _deliver(self, event: Event) -> None:
        if self._types is not None and not self.wants(type(event)):
            return
        try:
            self._callback(event)
        except Exception as exc:  # a broken listener must not break the publisher
            self.error = exc
            self.close()

    def close(self) -> None:
        """Detach from the bus; no event reaches the callable after this."""
        if self.closed:
            return
        self.closed = True
        self._bus._remove_listener(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@final
class Bus:
    """Publishes events to every matching subscription, stamping order and time.

    ``seq`` is global and strictly increasing in publish order, so events about
    one agent reach every subscriber in the order they happened.
    """

    __slots__ = (
        "_block_subs",
        "_block_timeouts",
        "_blocked_publishes",
        "_closed_delivered",
        "_closed_dropped",
        "_dropped",
        "_listeners",
        "_seq",
        "_subs",
        "_wanted",
        "_wanted_any",
        "default_capacity",
        "default_max_block",
        "has_subscribers",
    )

    def __init__(self, *, default_capacity: int = 1024, default_max_block: float = 1.0) -> None:
        check_count("default_capacity", default_capacity, 1, _CAPACITY)
        check_seconds("default_max_block", default_max_block, _MAX_BLOCK)
        self.default_capacity = default_capacity
        self.default_max_block = default_max_block
        self._subs: tuple[Subscription, ...] = ()
        self._block_subs: tuple[Subscription, ...] = ()
        self._listeners: tuple[Listener, ...] = ()
        #: Whether a subscription or a listener of every kind is open: publishers may skip
        #: building events if not (:meth:`wants` also counts those of some kinds).
        #: A plain attribute, kept current by the bus (read it; never set it).
        self.has_subscribers = False
        # Kind -> whether a subscription or listener of some kinds wants it (wants), while
        # none of every kind is open.
        self._wanted: dict[type[Event], bool] = {}
        # The same for a group of kinds (wants_any), by the set a publisher names it with.
        self._wanted_any: dict[frozenset[type[Event]], bool] = {}
        self._seq = 0
        self._dropped = 0
        self._blocked_publishes = 0
        self._block_timeouts = 0
        self._closed_delivered = 0
        self._closed_dropped = 0

    def subscribe(
        self,
        *,
        types: Iterable[type[Event]] | None = None,
        agents: Iterable[str] | None = None,
        subtree: Iterable[str] | None = None,
        capacity: int | None = None,
        policy: OverflowPolicy | str = OverflowPolicy.DROP_OLDEST,
        max_block: float | None = None,
    ) -> Subscription:
        """Open a subscription; every filter given must match for an event to pass.

        ``types`` keeps events of those classes (and subclasses); ``agents`` keeps
        events about those agent ids; ``subtree`` keeps events about those ids
        and about every agent later spawned below them. ``capacity`` bounds the
        buffer; ``policy`` says what happens when it is full.
        """
        try:
            policy = OverflowPolicy(policy)
        except ValueError:
            raise InvalidConfiguration(
                f"Unknown subscription policy {policy!r}: use 'drop_oldest' or 'block'."
            ) from None
        capacity = self.default_capacity if capacity is None else capacity
        max_block = self.default_max_block if max_block is None else max_block
        check_count("capacity", capacity, 1, _CAPACITY)
        check_seconds("max_block", max_block, _MAX_BLOCK)
        sub = Subscription(
            self,
            capacity=capacity,
            policy=policy,
            max_block=max_block,
            types=None if types is None else tuple(types),
            agents=None if agents is None else frozenset(agents),
            subtree=None if subtree is None else set(subtree),
        )
        self._subs = (*self._subs, sub)
        if policy is OverflowPolicy.BLOCK:
            self._block_subs = (*self._block_subs, sub)
        self._update_subscribers()
        return sub

    def listen(
        self,
        callback: Callable[[Event], object],
        *,
        types: Iterable[type[Event]] | None = None,
    ) -> Listener:
        """Call ``callback`` with every event from now on, synchronously, as it is published.

        For cheap in-process consumers only (see :class:`Listener`); anything
        that may wait or fall behind should :meth:`subscribe` instead. ``types``
        keeps events of those classes (and subclasses) only; such a listener
        does not make :attr:`has_subscribers` true, so publishers that check it
        build no event of other kinds for it. Close the returned handle (or use
        it as a context manager) to detach.
        """
        listener = Listener(self, callback, None if types is None else tuple(types))
        self._listeners = (*self._listeners, listener)
        self._update_subscribers()
        return listener

    def _update_subscribers(self) -> None:
        self.has_subscribers = any(x._types is None for x in self._subs) or any(
            x._types is None for x in self._listeners
        )
        self._wanted.clear()
        self._wanted_any.clear()

    def _remove_listener(self, listener: Listener) -> None:
        self._listeners = tuple(x for x in self._listeners if x is not listener)
        self._update_subscribers()

    def _remove(self, sub: Subscription) -> None:
        self._subs = tuple(s for s in self._subs if s is not sub)
        self._block_subs = tuple(s for s in self._block_subs if s is not sub)
        self._closed_delivered += sub._delivered
        self._closed_dropped += sub._dropped
        self._update_subscribers()

    def publish_nowait(self, event: Event) -> None:
        """Stamp ``event`` and hand it to every subscription, never waiting.

        A full ``block`` subscription loses its oldest event here (with a marker);
        use :meth:`publish` to give it time to catch up first.
        """
        self._seq += 1
        _force_setattr(event, "seq", self._seq)
        _force_setattr(event, "time", time.time())
        for listener in self._listeners:
            listener._deliver(event)
        for sub in self._subs:
            if sub._offer(event):
                self._dropped += 1

    async def make_room(self, count: int = 1) -> None:
        """Wait until every lossless subscriber can take ``count`` more events.

        Each full ``block`` subscription gets at most its ``max_block`` seconds;
        past that it will drop its oldest event instead. Returns at once, without
        a checkpoint, when no lossless subscriber is full, so callers can make
        room and then change state and publish without yielding in between.
        """
        if not self._block_subs:
            return
        if count == 1:  # the hot path (every publish): inlined, no call per subscriber
            full = [s for s in self._block_subs if len(s._buffer) >= s._capacity and not s._closed]
        else:
            full = [s for s in self._block_subs if s._full(count)]
        if full:
            self._blocked_publishes += 1
            now = trio.current_time()
            for sub in full:
                if not await sub._wait_for_room(now + sub.max_block, count):
                    self._block_timeouts += 1

    async def publish(self, event: Event) -> None:
        """:meth:`make_room`, then :meth:`publish_nowait`."""
        await self.make_room()
        self.publish_nowait(event)

    def wants(self, kind: type[Event]) -> bool:
        """Whether an event of ``kind`` would reach anyone: :attr:`has_subscribers`, or a
        subscription or listener of that kind is open. Publishers check it before building
        one, so a subscriber of a few kinds (a job's progress, a Ray worker's forwarding)
        does not make every agent build every kind of event for it."""
        if self.has_subscribers:
            return True
        wanted = self._wanted.get(kind)
        if wanted is None:
            wanted = self._wanted[kind] = any(x.wants(kind) for x in self._listeners) or any(
                x._wants(kind) for x in self._subs
            )
        return wanted

    def wants_any(self, kinds: frozenset[type[Event]]) -> bool:
        """Whether an event of any of ``kinds`` would reach anyone (:meth:`wants`), in one
        call: a publisher of several kinds asks it once before asking for each kind. Give
        the same set each time (a constant): the answer is kept by it, and a frozenset
        keeps its hash."""
        if self.has_subscribers:
            return True
        wanted = self._wanted_any.get(kinds)
        if wanted is None:
            wanted = self._wanted_any[kinds] = any(self.wants(kind) for kind in kinds)
        return wanted

    @property
    def has_lossless_subscribers(self) -> bool:
        """Whether a ``block`` subscription is open, so :meth:`make_room` may wait."""
        return bool(self._block_subs)

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event published (0 before the first)."""
        return self._seq

    def statistics(self) -> BusStatistics:
        """A snapshot of the bus's counters."""
        return BusStatistics(
            published=self._seq,
            delivered=self._closed_delivered + sum(s._delivered for s in self._subs),
            dropped=self._dropped,
            subscribers=len(self._subs),
            blocked_publishes=self._blocked_publishes,
            block_timeouts=self._block_timeouts,
            listeners=len(self._listeners),
        )
