"""The supervisor: starts actors in a tree of nurseries, enforces limits, routes calls.

Top-level actors run in the supervisor's root nursery; an actor's children run
in that actor's own nursery, so cancelling an actor reaches its whole subtree by
construction. Every status change goes through :meth:`Supervisor._set_status`,
which checks the transition table, takes or releases the ``max_threads`` slot
exactly once, and publishes the change on the bus.
"""

from __future__ import annotations

import collections
import itertools
import math
import secrets
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Final, Literal, final

import attrs
import trio

from ._bus import Bus, OverflowPolicy, Subscription
from ._config import SupervisorConfig, check_count, check_seconds
from ._context import ActorContext, Behavior, Init, Prepare
from ._events import AgentSpawned, Event, StatusChanged
from ._exceptions import (
    ActorError,
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    AgentStartFailed,
    DepthLimitReached,
    InvalidConfiguration,
    MailboxFull,
    NoReply,
    SupervisorClosed,
)
from ._messages import ActorInfo, ActorRef, ChildFinished, Request, WaitResult
from ._nicknames import NicknamePool
from ._status import (
    NOT_FOUND,
    RUNNING,
    SHUTDOWN,
    Completed,
    Errored,
    Shutdown,
    Status,
    check_transition,
    is_final,
    is_live,
)
from ._timer import RequestTimer

__all__ = ["Supervisor", "SupervisorStatistics", "open_supervisor"]

_MAX_MESSAGE = 2000
_CLOSED: Final[Any] = object()  # an idle actor's mailbox was closed
_WAIT: Final[Any] = object()  # nothing queued: an idle actor waits for its next message
_TIMEOUT = "the deadline of this wait; every wait in subagents has one"
#: Spawns one task may make in a row, in one step, before one of them yields (see "Bursts"
#: in :meth:`Supervisor.spawn`); 1 makes every spawn yield.
SPAWN_BURST: Final = 16


@attrs.frozen
class SupervisorStatistics:
    """A snapshot of the supervisor's counters."""

    live: int
    """Agents holding a slot now (PendingInit or Running)."""
    peak_live: int
    """The most agents that ever held a slot at once."""
    open: int
    """Agents not closed yet (live ones and final ones that can take follow-up input)."""
    tasks: int
    """Actor tasks running now; 0 once the supervisor has exited."""
    spawned: int
    revived: int
    """Final agents brought back to Running by follow-up input."""
    completed: int
    errored: int
    shutdown: int
    failed_spawns: int
    """Spawns refused (limits, closed parent) or whose start-up failed."""
    unresponsive: int
    """Closes that gave up because an agent ignored cancellation past ``cancel_timeout``."""
    max_threads: int
    max_depth: int


@final
class _Watch:
    """One :meth:`Supervisor.wait` under way: the agents it still waits for, and how few
    of them may remain for it to be done (``done`` is set then)."""

    __slots__ = ("done", "need", "pending")

    def __init__(self, pending: set[str], need: int) -> None:
        self.pending = pending  # the caller's set: each end seen is taken out of it
        self.need = need
        self.done = trio.Event()


@final
class Supervisor:
    """Runs actors under ``max_threads`` and ``max_depth`` and routes calls to them.

    Made by :func:`open_supervisor`; every method is safe to call from any task
    of the Trio run that opened it.
    """

    __slots__ = (
        "_actors",
        "_burst",
        "_by_task",
        "_changed",
        "_closing",
        "_counter",
        "_live",
        "_nicknames",
        "_opened",
        "_prefix",
        "_retired",
        "_root",
        "_slots",
        "_stats",
        "_tasks",
        "_timer",
        "_watchers",
        "bus",
        "config",
    )

    def __init__(self, config: SupervisorConfig, bus: Bus) -> None:
        self.config = config
        self.bus = bus
        self._actors: dict[str, ActorContext] = {}
        self._by_task: dict[trio.lowlevel.Task, ActorContext] = {}  # open actors' own tasks
        # Closed agents' last word, bounded by config.retain_closed (oldest forgotten first).
        self._retired: collections.OrderedDict[str, ActorInfo] = collections.OrderedDict()
        self._live = 0
        self._tasks = 0
        self._nicknames = NicknamePool(config.nicknames)
        self._root: trio.Nursery | None = None
        self._closing = False
        self._changed = trio.lowlevel.ParkingLot()  # a final status, or an actor task ended
        self._opened = trio.lowlevel.ParkingLot()  # an actor's task began (its nursery is open)
        self._slots = trio.lowlevel.ParkingLot()  # a max_threads slot was released
        self._prefix = secrets.token_hex(4)
        self._counter = itertools.count(1)
        self._stats = collections.Counter[str]()
        self._timer = RequestTimer()
        # The waits (wait()) watching each agent that is not final yet.
        self._watchers: dict[str, list[_Watch]] = {}
        # The last spawn that yielded: its task (by id: no task kept alive), the task's
        # schedule points after it, and the spawns made since without yielding.
        self._burst: tuple[int, int, int] = (0, -1, 0)

    # -- spawning ---------------------------------------------------------------

    async def spawn(
        self,
        behavior: Behavior,
        *,
        parent: str | ActorContext | None = None,
        label: str = "actor",
        nickname: str | None = None,
        agent_id: str | None = None,
        init: Init | None = None,
        prepare: Prepare | None = None,
        auto_close: bool = False,
        mailbox_size: int | None = None,
    ) -> ActorRef:
        """Start an actor running ``behavior`` and return once it is registered and Running.

        ``parent`` (an id or a context) makes it a child that runs in the
        parent's nursery at the parent's depth + 1; otherwise it is top-level.
        ``nickname`` and ``agent_id`` restore a known identity (resume); a taken
        nickname gets an ordinal. Start-up code runs before spawn returns, and if
        it raises, spawn raises :class:`AgentStartFailed` and the actor never runs:
        ``prepare`` is synchronous and runs here, in the caller's task, once the
        actor is registered; ``init`` is a coroutine and runs in the actor's own
        task, through a ``nursery.start`` handshake, which also waits for the
        actor's nursery (one below ``max_depth``, for its children) to open.
        Without ``init`` (``prepare`` or no start-up code) the actor is marked
        Running and scheduled at once: a leaf (an actor at ``max_depth``) in its
        bare cancel scope, any other in a nursery that opens when its task first
        runs (a spawn under it waits for that). With nothing to fail before its
        behavior, a handshake would guard nothing, and make every spawn wait for the
        actor's task (about 22 us more CPU a spawn, and no bursts). An actor marked
        Running at spawn runs its behavior even when it is closed before its task
        runs: the behavior sees ``stopping`` (and its
        :meth:`~ActorContext.on_stop` callback is called) at once. With
        ``auto_close`` the actor is closed when its behavior returns instead of
        waiting for follow-up input.

        **Bursts.** A spawn is a schedule point, as every Trio call is: the actors
        already running get their turn before its caller goes on. A loop of spawns
        yields once every ``SPAWN_BURST`` (16) spawns instead, while ``max_threads``
        has room for that many more: each spawn's start-up code (and the first and
        last steps of the actors it starts) then runs next to the same code of its
        burst, rather than after every running actor's turn has pushed that code out
        of the CPU's caches (half the cache misses of an agent spawned in a loop of
        1,000: bench/README.md, twenty-first round). Near the limit every spawn
        yields again, so quick actors end and free their slots while the loop goes on.

        Fails at once with :class:`AgentLimitReached` or
        :class:`DepthLimitReached` when a limit would be exceeded.
        """
        if self._root is None or self._closing:
            raise SupervisorClosed
        if mailbox_size is None:
            mailbox_size = self.config.mailbox_size
        else:
            check_count("mailbox_size", mailbox_size, 1, "how many unread messages it may hold")
        parent_ctx = self._parent_context(parent)
        while parent_ctx is not None and parent_ctx._task is None and not parent_ctx._stopping:
            # Spawned, its task not run yet: its nursery opens then (a scheduler pass).
            await self._opened.park()
            parent_ctx = self._parent_context(parent)
        if self.bus.has_lossless_subscribers:
            await self.bus.make_room(3)  # spawned, pending_init, running
            parent_ctx = self._parent_context(parent)  # it may have closed meanwhile
        if self._root is None or self._closing:  # closed while this spawn waited
            raise SupervisorClosed
        # From here until the actor is started nothing yields: checks and
        # registration happen atomically.
        depth = 0 if parent_ctx is None else parent_ctx.depth + 1
        self._refuse_over_limits(depth)
        nursery = self._root if parent_ctx is None else parent_ctx._nursery
        if nursery is None:
            assert parent_ctx is not None
            self._stats["failed_spawns"] += 1
            raise AgentClosed(parent_ctx.id, parent_ctx.nickname)
        if agent_id is None:
            agent_id = f"{self._prefix}-{next(self._counter)}"
        elif agent_id in self._actors:
            raise ActorError(
                f"Agent id {agent_id!r} belongs to an open agent; close it first or "
                "let the supervisor choose an id."
            )
        else:
            self._retired.pop(agent_id, None)
        ctx = ActorContext(
            self,
            agent_id=agent_id,
            nickname=self._nicknames.take(nickname),
            parent=parent_ctx,
            label=label,
            behavior=behavior,
            init=init,
            auto_close=auto_close,
            mailbox_size=mailbox_size,
        )
        self._actors[agent_id] = ctx
        if parent_ctx is not None:
            parent_ctx._children[agent_id] = ctx
        self._stats["spawned"] += 1
        self._live += 1
        if self._live > self._stats["peak_live"]:
            self._stats["peak_live"] = self._live
        ctx._ready = True
        bus = self.bus
        if bus.wants(AgentSpawned):
            bus.publish_nowait(
                AgentSpawned(
                    agent_id=agent_id,
                    parent_id=ctx.parent_id,
                    depth=depth,
                    nickname=ctx.nickname,
                    label=label,
                )
            )
        if bus.wants(StatusChanged):
            bus.publish_nowait(
                StatusChanged(
                    agent_id=agent_id,
                    parent_id=ctx.parent_id,
                    depth=depth,
                    nickname=ctx.nickname,
                    status=ctx.status,
                )
            )
        if prepare is not None:
            try:
                prepare(ctx)
            except Exception as exc:
                self._failed_start(ctx, exc)
                raise AgentStartFailed(ctx.id, ctx.nickname, exc) from exc
        if init is None:
            # Nothing can fail before its behavior runs: it is Running as of now (a leaf
            # or not: an actor with children opens its nursery when its task first runs).
            self._set_status(ctx, RUNNING)
            nursery.start_soon(self._run, ctx, name=label)
            # Yield, as every Trio call does: the new actor's task and the others get their
            # turn before the caller spawns again. Not a cancellation point: the actor is
            # spawned, and its caller must get its handle. A burst (see the docstring) yields
            # once every SPAWN_BURST spawns.
            task = trio.lowlevel.current_task()
            if not self._in_burst(task):
                await trio.lowlevel.cancel_shielded_checkpoint()
                # The next spawns of this task in the same step may go on (a burst).
                self._burst = (id(task), getattr(task, "_schedule_points", -1), 1)
        else:
            await nursery.start(self._run, ctx, name=label)
        return ctx.ref

    def _in_burst(self, task: trio.lowlevel.Task) -> bool:
        """Whether this spawn may go on without yielding: the caller has not yielded since
        its last spawn that did, fewer than ``SPAWN_BURST`` spawns ago, and ``max_threads``
        has room for a whole burst more.

        Trio counts the times a task yielded in ``Task._schedule_points`` (what
        ``trio.testing.assert_checkpoints`` reads); a Trio without it makes every spawn
        yield, as before bursts (``tests/actors/test_supervisor.py`` fails then)."""
        last, points, made = self._burst
        if (
            made < SPAWN_BURST
            and last == id(task)
            and points == getattr(task, "_schedule_points", None)
            and self._live + SPAWN_BURST <= self.config.max_threads
        ):
            self._burst = (last, points, made + 1)
            return True
        return False

    def check_room(self, parent: str | None = None) -> None:
        """Raise now what :meth:`spawn` under ``parent`` would raise for a limit
        (:class:`AgentLimitReached`, :class:`DepthLimitReached`) or a parent that is
        not open: for a caller whose start-up costs something (MCP servers to start)
        before it spawns. ``spawn`` checks again, with the registration."""
        if self._root is None or self._closing:
            raise SupervisorClosed
        parent_ctx = self._parent_context(parent)
        self._refuse_over_limits(0 if parent_ctx is None else parent_ctx.depth + 1)

    def _refuse_over_limits(self, depth: int) -> None:
        """Refuse a spawn at ``depth`` past ``max_depth``, or one more live actor past
        ``max_threads`` (counted as a failed spawn)."""
        if depth > self.config.max_depth:
            self._stats["failed_spawns"] += 1
            raise DepthLimitReached(self.config.max_depth)
        if self._live >= self.config.max_threads:
            self._stats["failed_spawns"] += 1
            raise AgentLimitReached(self.config.max_threads)

    def _failed_start(self, ctx: ActorContext, error: Exception) -> None:
        """An actor whose start-up code raised before its task ran: final, and forgotten."""
        self._stats["failed_spawns"] += 1
        self._set_status(ctx, _start_failed(error))
        self._retire(ctx)

    def _parent_context(self, parent: str | ActorContext | None) -> ActorContext | None:
        if parent is None:
            return None
        ctx = self._open_actor(parent if isinstance(parent, str) else parent.id)
        if ctx._stopping:
            self._stats["failed_spawns"] += 1
            raise AgentClosed(ctx.id, ctx.nickname)
        return ctx

    async def _run(
        self, ctx: ActorContext, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The actor's task: start-up (if any), the behavior, then follow-up input.

        A leaf runs inside its bare cancel scope; any other actor inside its own
        nursery, where its children run. One frame for the whole lifecycle keeps
        an idle actor small.
        """
        self._tasks += 1
        ctx._task = trio.lowlevel.current_task()
        self._by_task[ctx._task] = ctx
        if self._opened:
            self._opened.unpark_all()  # spawns under it waited: its nursery opens below
        started = ctx.status is RUNNING  # a leaf without init: spawn marked it Running
        scope = ctx._scope
        try:
            async with trio.open_nursery() if scope is None else _Entered(scope) as nursery:
                if nursery is not None:
                    ctx._nursery = nursery
                    ctx._scope = nursery.cancel_scope
                if not started and not ctx._stopping:  # the handshake
                    try:
                        if ctx._init is not None:
                            try:
                                await ctx._init(ctx)
                            finally:
                                ctx._init = None  # it runs once: an idle actor need not keep it
                    except Exception as exc:
                        ctx._start_error = exc
                    else:
                        if self.bus.has_lossless_subscribers:
                            await self.bus.make_room()
                        if not ctx._stopping:
                            self._set_status(ctx, RUNNING)
                            task_status.started()
                            # The status holds the start's finished nursery (its scope,
                            # statuses and sets): ten objects an idle actor need not keep.
                            task_status = trio.TASK_STATUS_IGNORED
                            started = True
                # Running since spawn (no handshake): its behavior runs even if a stop came
                # before its task did, and sees ``stopping`` (and its on_stop callback) at once.
                first = started
                while first or (started and not ctx._stopping):
                    first = False
                    outcome: Status
                    ctx._settled = False
                    try:
                        outcome = _outcome(await ctx._behavior(ctx))
                    except Exception as exc:
                        outcome = Errored(_describe(exc))
                    # ``stopping`` (not ``_stopping``): it changes while the behavior runs;
                    # once the behavior settled its outcome (ActorContext.settle), it stands.
                    if ctx.stopping and not (ctx._settled and type(outcome) is not Errored):
                        outcome = SHUTDOWN
                    elif ctx._auto_close:
                        self._request_stop(ctx)
                    if ctx.stopping and ctx._children:
                        # A subtree ends before its root reports final.
                        await self._wind_down_children(ctx)
                    if self.bus.has_lossless_subscribers:
                        await self.bus.make_room()
                    self._finish(ctx, outcome)
                    if ctx.stopping:
                        break
                    message = await self._next_input(ctx)
                    if message is _CLOSED:
                        break
                    ctx._head = message
                    ctx._plain = False
                    if not is_live(ctx.status):
                        # Input that arrived without reviving us (queued while we ran, or
                        # a sender that waited for room): take a slot once one frees.
                        while self._live >= self.config.max_threads:
                            await self._slots.park()
                        if self.bus.has_lossless_subscribers:
                            await self.bus.make_room()
                        if _asked_to_stop(ctx):  # closed while it waited: it stays closed
                            break
                        self._revive(ctx)
                if ctx._children:
                    await self._wind_down_children(ctx)
        finally:
            self._tasks -= 1
            self._by_task.pop(ctx._task, None)
            ctx._nursery = None
            if is_live(ctx.status):
                error = ctx._start_error
                self._set_status(
                    ctx,
                    SHUTDOWN if error is None else _start_failed(error),
                )
            self._retire(ctx)
        if not started:
            self._stats["failed_spawns"] += 1
            if ctx._start_error is not None:
                raise AgentStartFailed(ctx.id, ctx.nickname, ctx._start_error) from ctx._start_error
            raise AgentClosed(ctx.id, ctx.nickname)

    async def _next_input(self, ctx: ActorContext) -> Any:
        """The next message for an idle actor, or ``_CLOSED``; child notices are filed
        away for its next run rather than starting one.

        Input already queued (sent while the run was under way) is taken without a
        checkpoint, so the actor revives in the same step that made it final: no
        other task sees it final with input waiting (a team's ``settled``, a wait
        for ``all``), which would take it for being at rest.
        """
        while True:
            try:
                message = ctx._recv.receive_nowait()
            except trio.WouldBlock:
                # Waited for outside this handler: an idle actor does not keep the
                # exception, its traceback and their frame alive while it waits.
                message = _WAIT
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return _CLOSED
            if message is _WAIT:
                try:
                    message = await ctx._recv.receive()
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    return _CLOSED
            if type(message) is not ChildFinished:
                return message
            self._file_notice(ctx, message)

    async def _wind_down_children(self, ctx: ActorContext) -> None:
        """Give ``ctx``'s stopping children the grace period, then cancel them."""
        with trio.CancelScope(shield=True):
            with trio.move_on_after(self.config.close_grace_period):
                while ctx._children:
                    await self._changed.park()
            if ctx._children and ctx._nursery is not None:
                ctx._nursery.cancel_scope.cancel()

    # -- status bookkeeping -------------------------------------------------------

    def _set_status(self, ctx: ActorContext, new: Status) -> None:
        """The one place statuses change: table check, slot accounting, event."""
        old = ctx.status
        check_transition(ctx.id, old, new)
        ctx.status = new
        if is_live(new):
            ctx._ready = not ctx._stopping
            if not is_live(old):
                self._live += 1
                if self._live > self._stats["peak_live"]:
                    self._stats["peak_live"] = self._live
        else:
            ctx._ready = False
            self._stats[_COUNTER[type(new)]] += 1
            if is_live(old):  # else a final agent closed: Completed/Errored -> Shutdown
                self._live -= 1
                if self._slots:
                    self._slots.unpark()
            if self._changed:
                self._changed.unpark_all()
            if self._watchers:
                self._settle_watches(ctx.id)
        if self.bus.wants(StatusChanged):
            self.bus.publish_nowait(
                StatusChanged(
                    agent_id=ctx.id,
                    parent_id=ctx.parent_id,
                    depth=ctx.depth,
                    nickname=ctx.nickname,
                    status=new,
                )
            )

    def _finish(self, ctx: ActorContext, outcome: Status) -> None:
        """End a run: final status, unanswered requests failed, parent told."""
        self._set_status(ctx, outcome)
        if ctx._inflight:
            for request in list(ctx._inflight):
                request.fail(NoReply(ctx.id))
        parent = ctx._parent
        if parent is None or parent._stopping or ctx._stopping:
            # A closed agent sends no notice: whoever closed it (its parent, most
            # often) knows already.
            return
        notice = ChildFinished(ctx.id, ctx.nickname, outcome)
        if is_live(parent.status):
            try:
                parent._send.send_nowait(notice)
            except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                pass
            else:
                return
        self._file_notice(parent, notice)

    def _file_notice(self, parent: ActorContext, notice: ChildFinished) -> None:
        """Keep a notice for the parent's next receive without starting a run: the
        latest per child, so bounded by its number of children."""
        if parent._notices is None:
            parent._notices = {}
        parent._notices[notice.agent_id] = notice
        parent._plain = False

    def _revive(self, ctx: ActorContext) -> None:
        self._stats["revived"] += 1
        self._set_status(ctx, RUNNING)

    def _request_stop(self, ctx: ActorContext) -> None:
        """Ask ``ctx`` and its open descendants to stop: no more input is accepted."""
        stack = [ctx]
        while stack:
            node = stack.pop()
            if not node._stopping:
                node._stopping = True
                node._ready = False
                node._plain = False
                node._send.close()
                callback, node._on_stop = node._on_stop, None
                if callback is not None:
                    callback()
            stack.extend(node._children.values())

    def _retire(self, ctx: ActorContext) -> None:
        """Forget a finished actor task: fail what it left unanswered, free its name."""
        ctx._stopping = True
        ctx._ready = False
        ctx._on_stop = None
        ctx._send.close()
        leftovers = [ctx._head] if type(ctx._head) is Request else []
        if ctx._recv.statistics().current_buffer_used:
            while True:
                try:
                    leftovers.append(ctx._recv.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
        ctx._recv.close()
        if leftovers or ctx._inflight:
            for message in itertools.chain(leftovers, list(ctx._inflight or ())):
                if type(message) is Request:
                    message.fail(NoReply(ctx.id))
        del self._actors[ctx.id]
        if self._watchers:
            self._settle_watches(ctx.id)  # unknown now: as good as final to a wait
        if ctx._parent is not None:
            ctx._parent._children.pop(ctx.id, None)
        self._nicknames.release(ctx.nickname)
        if self.config.retain_closed:
            self._retired[ctx.id] = ActorInfo(
                ctx.id, ctx.nickname, ctx.parent_id, ctx.depth, ctx.label, ctx.status, True
            )
            if len(self._retired) > self.config.retain_closed:
                self._retired.popitem(last=False)
        if ctx._done is not None:
            ctx._done.set()
        if self._changed:
            self._changed.unpark_all()

    # -- routing ----------------------------------------------------------------------

    def _open_actor(self, agent_id: str) -> ActorContext:
        ctx = self._actors.get(agent_id)
        if ctx is not None:
            return ctx
        retired = self._retired.get(agent_id)
        if retired is not None:
            raise AgentClosed(agent_id, retired.nickname)
        raise AgentNotFound(agent_id)

    async def send(self, agent_id: str, message: Any) -> None:
        """Put ``message`` in the agent's mailbox, waiting while it is full.

        A final agent that is still open is brought back to Running (it takes a
        slot again, so this can raise :class:`AgentLimitReached`). Raises
        :class:`AgentNotFound` for an unknown id and :class:`AgentClosed` for a
        closed agent. Does not yield when the mailbox has room.
        """
        ctx = self._actors.get(agent_id)
        revive = False
        if ctx is None or not ctx._ready:  # unknown, closing, or final: the checks
            ctx = self._sendable(agent_id)
            revive = not is_live(ctx.status)
        try:
            ctx._send.send_nowait(message)
        except trio.WouldBlock:
            try:
                await ctx._send.send(message)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                raise AgentClosed(ctx.id, ctx.nickname) from None
            return  # a final actor revives itself when it takes this message
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise AgentClosed(ctx.id, ctx.nickname) from None
        if revive:
            self._revive(ctx)

    def send_nowait(self, agent_id: str, message: Any) -> None:
        """Like :meth:`send`, but raise :class:`MailboxFull` instead of waiting."""
        ctx = self._actors.get(agent_id)
        if ctx is not None and ctx._ready:
            try:
                ctx._send.send_nowait(message)
            except trio.WouldBlock:
                raise MailboxFull(ctx.id, self.config.mailbox_size) from None
            return
        ctx = self._sendable(agent_id)
        revive = not is_live(ctx.status)
        try:
            ctx._send.send_nowait(message)
        except trio.WouldBlock:
            raise MailboxFull(ctx.id, self.config.mailbox_size) from None
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise AgentClosed(ctx.id, ctx.nickname) from None
        if revive:
            self._revive(ctx)

    def _sendable(self, agent_id: str) -> ActorContext:
        """The open actor ``agent_id``, checked to take input (and a slot, if final)."""
        ctx = self._open_actor(agent_id)
        if ctx._stopping:
            raise AgentClosed(ctx.id, ctx.nickname)
        if not is_live(ctx.status):
            if self._closing:
                raise SupervisorClosed
            if self._live >= self.config.max_threads:
                raise AgentLimitReached(self.config.max_threads)
        return ctx

    async def ask(self, agent_id: str, payload: Any, *, timeout: float) -> Any:
        """Send ``payload`` as a :class:`Request` and return the agent's reply.

        Raises :class:`ReplyTimeout` past ``timeout`` seconds, and
        :class:`NoReply` if the agent ends its run or closes without replying.
        The deadline is kept in the supervisor's timer rather than a cancel
        scope per request, which would cost more than the round trip itself.
        """
        if not (type(timeout) is float or type(timeout) is int) or not 0 <= timeout < math.inf:
            check_seconds("timeout", timeout, _TIMEOUT)  # raises, with the reason
        request = Request(payload)
        target = self._actors.get(agent_id)
        if target is not None and target._ready:  # the fast path of send(), inlined
            try:
                target._send.send_nowait(request)
            except trio.WouldBlock:
                await self.send(agent_id, request)
        else:
            await self.send(agent_id, request)
        if not request._done:
            self._timer.add(trio.current_time() + timeout, request, agent_id, timeout)
            await request._event.wait()
        if request._error is not None:
            raise request._error
        return request._value

    async def wait(
        self,
        agent_ids: Iterable[str],
        *,
        timeout: float,
        mode: Literal["any", "all"] = "any",
    ) -> WaitResult:
        """Wait until any (or all) of the agents are final, or until ``timeout``.

        The deadline is a hard wall-clock bound. Unknown ids count as final and
        map to NotFound. Returns every asked id's status at return time.
        """
        check_seconds("timeout", timeout, _TIMEOUT)
        if mode not in ("any", "all"):
            raise InvalidConfiguration(f"wait mode must be 'any' or 'all' (got {mode!r}).")
        ids = list(dict.fromkeys(agent_ids))
        for agent_id in ids:
            if not isinstance(agent_id, str):
                raise AgentNotFound(repr(agent_id))
        pending = {i for i in ids if not self._settled(i)}
        # "any" is done once fewer than all are pending; "all" once none are.
        need = max(len(ids) - 1, 0) if mode == "any" else 0
        if len(pending) <= need:
            await trio.lowlevel.checkpoint()
        else:
            # Each pending agent's own end ticks the watch off (_settle_watches): one step
            # per end, where a scan of every pending id per end made a wait for all of
            # 10,000 agents quadratic.
            watch = _Watch(pending, need)
            watchers = self._watchers
            for agent_id in pending:
                watchers.setdefault(agent_id, []).append(watch)
            try:
                with trio.move_on_after(timeout):
                    await watch.done.wait()
            finally:
                for agent_id in watch.pending:  # those it still watches
                    waits = watchers.get(agent_id)
                    if waits is not None and watch in waits:
                        waits.remove(watch)
                        if not waits:
                            del watchers[agent_id]
        timed_out = len(pending) > need
        return WaitResult({i: self.status(i) for i in ids}, timed_out=timed_out, mode=mode)

    def _settle_watches(self, agent_id: str) -> None:
        """``agent_id`` is final (or gone): every wait watching it counts it off, once."""
        waits = self._watchers.pop(agent_id, None)
        if waits is None:
            return
        for watch in waits:
            watch.pending.discard(agent_id)
            if len(watch.pending) <= watch.need:
                watch.done.set()

    def _settled(self, agent_id: str) -> bool:
        """Final, closed, or unknown: nothing more will happen to it without new input."""
        ctx = self._actors.get(agent_id)
        return ctx is None or is_final(ctx.status)

    async def close(self, agent_id: str, *, grace: float | None = None) -> Status:
        """Close the agent and its open descendants; return its previous status.

        The ladder is bounded: the agents are asked to stop (their mailboxes
        close and ``receive`` raises :class:`AgentClosed`), given ``grace``
        seconds (default ``close_grace_period``, shielded from the caller's own
        cancellation), then cancelled. Every agent closed ends Shutdown, a
        finished one included (Codex's ``close_agent`` shuts a finished thread
        down the same way); none of them sends its parent a
        :class:`ChildFinished` notice. Closing a closed agent returns its final
        status.
        """
        if grace is not None:
            check_seconds("grace", grace, "how long the agent may take to stop")
        ctx = self._actors.get(agent_id)
        if ctx is None:
            retired = self._retired.get(agent_id)
            if retired is None:
                raise AgentNotFound(agent_id)
            await trio.lowlevel.checkpoint()
            return retired.status
        previous = ctx.status
        if grace is None:
            grace = self.config.close_grace_period
        if self.bus.has_lossless_subscribers:
            await self.bus.make_room(len(self._finished_in(ctx)))
        finished = self._finished_in(ctx)
        self._request_stop(ctx)
        for node in finished:  # idle agents end Shutdown too, as Codex's close_agent does
            self._set_status(node, SHUTDOWN)
        await self._await_exit(ctx, grace)
        return previous

    def _finished_in(self, ctx: ActorContext) -> list[ActorContext]:
        """The agents of ``ctx``'s subtree that are final but not Shutdown, and not closing."""
        found = []
        stack = [ctx]
        while stack:
            node = stack.pop()
            if not node._stopping and is_final(node.status) and type(node.status) is not Shutdown:
                found.append(node)
            stack.extend(node._children.values())
        return found

    async def _await_exit(self, ctx: ActorContext, grace: float) -> None:
        if ctx._done is None:
            ctx._done = trio.Event()
        done = ctx._done
        if trio.lowlevel.current_task() is ctx._task:
            # An actor closing itself: it cannot wait for its own exit.
            if ctx._scope is not None:
                ctx._scope.cancel()
            await trio.lowlevel.checkpoint()
            return
        with trio.CancelScope(shield=True):
            if grace > 0:
                with trio.move_on_after(grace):
                    await done.wait()
            if not done.is_set():
                # The actor's own scope: its nursery's, or a leaf's bare scope. (None
                # only before its task first runs, and then it sees ``_stopping``.)
                if ctx._scope is not None:
                    ctx._scope.cancel()
                with trio.move_on_after(self.config.cancel_timeout):
                    await done.wait()
                if not done.is_set():
                    self._stats["unresponsive"] += 1

    async def _close_all(self) -> None:
        """Ask every actor to stop and give them the grace period together."""
        for ctx in list(self._actors.values()):
            if ctx._parent is None:
                self._request_stop(ctx)
        with trio.CancelScope(shield=True), trio.move_on_after(self.config.close_grace_period):
            while self._tasks:
                await self._changed.park()

    # -- queries ----------------------------------------------------------------------

    def status(self, agent_id: str) -> Status:
        """The agent's status; NotFound for an id this supervisor does not know."""
        ctx = self._actors.get(agent_id)
        if ctx is not None:
            return ctx.status
        retired = self._retired.get(agent_id)
        return NOT_FOUND if retired is None else retired.status

    def current_agent(self) -> str | None:
        """The open agent running the calling task, itself or through a task it started
        (a tool call in a nursery of its own); ``None`` outside every agent."""
        task: trio.lowlevel.Task | None = trio.lowlevel.current_task()
        while task is not None:
            ctx = self._by_task.get(task)
            if ctx is not None:
                return ctx.id
            nursery = task.parent_nursery
            task = None if nursery is None else nursery.parent_task
        return None

    def info(self, agent_id: str) -> ActorInfo:
        """One agent's row of :meth:`list`; raises :class:`AgentNotFound` if unknown."""
        ctx = self._actors.get(agent_id)
        if ctx is not None:
            return _info(ctx)
        retired = self._retired.get(agent_id)
        if retired is None:
            raise AgentNotFound(agent_id)
        return retired

    def subtree(self, agent_id: str) -> list[str]:
        """``agent_id`` and its open descendants, each parent before its children.

        Empty when ``agent_id`` is not open. It walks that subtree only, so
        closing one agent among thousands (a job's rows) does not cost a pass
        over every open agent, as building the tree from :meth:`list` did.
        """
        root = self._actors.get(agent_id)
        if root is None:
            return []
        found: list[str] = []
        stack = [root]
        while stack:
            node = stack.pop()
            found.append(node.id)
            stack.extend(node._children.values())
        return found

    def list(self, *, include_closed: bool = False) -> list[ActorInfo]:
        """Every open agent (and, if asked, remembered closed ones), oldest first."""
        rows = [_info(ctx) for ctx in self._actors.values()]
        if include_closed:
            rows = list(self._retired.values()) + rows
        return rows

    def subscribe(
        self,
        *,
        types: Iterable[type[Event]] | None = None,
        agents: Iterable[str] | None = None,
        subtree: str | None = None,
        capacity: int | None = None,
        policy: OverflowPolicy | str = OverflowPolicy.DROP_OLDEST,
        max_block: float | None = None,
    ) -> Subscription:
        """Subscribe to the bus; ``subtree`` follows that agent and all below it."""
        members: list[str] | None = None
        if subtree is not None:
            members = [subtree]
            root = self._actors.get(subtree)
            stack = [] if root is None else list(root._children.values())
            while stack:
                node = stack.pop()
                members.append(node.id)
                stack.extend(node._children.values())
        return self.bus.subscribe(
            types=types,
            agents=agents,
            subtree=members,
            capacity=capacity,
            policy=policy,
            max_block=max_block,
        )

    def statistics(self) -> SupervisorStatistics:
        """A snapshot of the supervisor's counters."""
        stats = self._stats
        return SupervisorStatistics(
            live=self._live,
            peak_live=stats["peak_live"],
            open=len(self._actors),
            tasks=self._tasks,
            spawned=stats["spawned"],
            revived=stats["revived"],
            completed=stats["completed"],
            errored=stats["errored"],
            shutdown=stats["shutdown"],
            failed_spawns=stats["failed_spawns"],
            unresponsive=stats["unresponsive"],
            max_threads=self.config.max_threads,
            max_depth=self.config.max_depth,
        )


@final
class _Entered:
    """``async with`` for a leaf's bare cancel scope, so both kinds share one code path."""

    __slots__ = ("_scope",)

    def __init__(self, scope: trio.CancelScope) -> None:
        self._scope = scope

    async def __aenter__(self) -> None:
        self._scope.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        return self._scope.__exit__(exc_type, exc, tb)


_COUNTER: dict[type[Status], str] = {
    Completed: "completed",
    Errored: "errored",
    Shutdown: "shutdown",
}


def _info(ctx: ActorContext) -> ActorInfo:
    return ActorInfo(ctx.id, ctx.nickname, ctx.parent_id, ctx.depth, ctx.label, ctx.status, False)


def _asked_to_stop(ctx: ActorContext) -> bool:
    """``ctx.stopping``, read afresh after an ``await`` (a checker keeps an earlier reading)."""
    return ctx.stopping


def _outcome(result: object) -> Status:
    """Completed with the behavior's result; Errored if it is not a str or None
    (behaviors are typed to return one, but untyped code may not)."""
    if result is None or isinstance(result, str):
        return Completed(result)
    return Errored(
        f"the behavior returned a {type(result).__name__}; an actor's result must be a str or None"
    )


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _start_failed(error: Exception) -> Errored:
    """The final status of an actor whose start-up code raised ``error``."""
    return Errored(f"failed to start: {_describe(error)}")


@asynccontextmanager
async def open_supervisor(
    config: SupervisorConfig | None = None, *, bus: Bus | None = None
) -> AsyncIterator[Supervisor]:
    """Open a supervisor whose actors live no longer than this ``async with`` block.

    Leaving the block normally asks every actor to stop and gives them the
    grace period together, then cancels what is left; leaving it by an
    exception or cancellation cancels them at once. Either way every live actor
    ends with a published Shutdown status before the block is left.
    """
    config = SupervisorConfig() if config is None else config
    if bus is None:
        bus = Bus(default_capacity=config.bus_capacity, default_max_block=config.bus_max_block)
    sup = Supervisor(config, bus)
    body_error: BaseException | None = None
    async with trio.open_nursery() as root:
        sup._root = root
        root.start_soon(sup._timer.run, name="subagents request timer")
        try:
            yield sup
        except BaseException as exc:  # re-raised below, once every actor has ended
            body_error = exc
            sup._closing = True
            root.cancel_scope.cancel()
        else:
            sup._closing = True
            await sup._close_all()
            root.cancel_scope.cancel()
    sup._root = None
    if body_error is not None:
        raise body_error
