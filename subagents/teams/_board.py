"""The task board: an actor that owns the board's state, so claims are atomic without locks.

One Trio task (the board) holds the :class:`~subagents.teams._state.BoardState`
and the journal. Members talk to it through :class:`TaskBoard`, whose methods
put a request on a bounded channel (the board's mailbox, as an actor's in
:mod:`subagents.actors`) and wait for that request's own reply, each until its
deadline. Since only the board changes the state, and it handles one request at
a time, two claims of one task can never both succeed: the second sees the
first's owner.

The board takes the requests waiting in its mailbox as one batch, applies
them in order, writes the batch's changes to the journal with one fsync, then
publishes their events and answers (group commit): an answer, and an event,
always describe a change that is on disk.

Creating and completing a task pass a checkpoint first when the board has a
``gate`` (the runtime's ``TaskCreated``/``TaskCompleted`` hooks). A gate may
take a while, so it runs in a task of its own, and the board goes on serving
other requests meanwhile: the task being created holds its id and its place
under ``max_tasks``, the task being completed is ``busy`` (other changes to it
are refused until the gate answers). When the gate lets it through, the change
comes back to the board and is applied and written like any other; when it
blocks, the caller gets :class:`CheckpointBlocked` with the gate's feedback
and nothing changes.

A request that the board has not started by its deadline is never applied,
and its caller gets :class:`BoardTimeout` (``applied=False``). A request the
board has started is answered once its change is on disk; its caller waits up
to ``write_grace`` past the deadline for that.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import heapq
import itertools
import math
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, final

import attrs
import trio

from subagents.actors import is_seconds
from subagents.teams._config import BoardConfig
from subagents.teams._exceptions import (
    BoardClosed,
    BoardError,
    BoardFull,
    BoardTimeout,
    BoardWriteError,
    CheckpointBlocked,
    InvalidBoardConfig,
)
from subagents.teams._journal import Journal, JournalReplay
from subagents.teams._state import BoardState
from subagents.teams._task import (
    BoardEvent,
    BoardEventKind,
    Checkpoint,
    Gate,
    Publish,
    Task,
    TaskStatus,
)

__all__ = ["BoardStatistics", "TaskBoard", "open_board"]

#: The most requests the board applies and writes as one batch.
_BATCH: Final = 512
#: The deadline table is compacted when it holds more entries than this (or twice
#: the calls waiting at the last compaction).
_MIN_ENTRIES: Final = 1024
_NOT_SET: Final[Any] = object()

_Op = Literal["create", "list", "get", "update", "claim", "commit"]


@final
class _Call:
    """One request and its reply slot (the board's counterpart of an actor ``Request``)."""

    __slots__ = (
        "abandoned",
        "args",
        "deadline",
        "error",
        "event",
        "graced",
        "op",
        "taken",
        "timeout",
        "value",
    )

    def __init__(self, op: _Op, args: tuple[Any, ...], deadline: float, timeout: float) -> None:
        self.op = op
        self.args = args
        self.deadline = deadline
        self.timeout = timeout
        self.graced = False  # past its deadline, taken: given the write grace
        self.event = trio.Event()
        self.value: Any = None
        self.error: BoardError | None = None
        self.taken = False  # the board has started on it: it will be answered
        self.abandoned = False  # its caller gave up before the board started: skip it

    def reply(self, value: Any) -> None:
        if not self.event.is_set():
            self.value = value
            self.event.set()

    def fail(self, error: BoardError) -> None:
        if not self.event.is_set():
            self.error = error
            self.event.set()


@final
class _Deadlines:
    """Fails each waiting call at its deadline: one timer task per board, as the kernel's.

    A cancel scope per request would cost more than the round trip itself, so
    the calls' deadlines are kept here (a FIFO, since most calls share one
    timeout, and a heap for the others) and one task wakes at the earliest. A
    call the board has not taken by its deadline is abandoned (never applied)
    and fails with ``BoardTimeout(applied=False)``; one it has taken gets
    ``grace`` seconds more to be answered (its change is being written), then
    fails with ``BoardTimeout(applied=None)``.
    """

    __slots__ = ("_counter", "_fifo", "_heap", "_limit", "_scope", "grace")

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self._fifo: collections.deque[tuple[float, int, _Call]] = collections.deque()
        self._heap: builtins.list[tuple[float, int, _Call]] = []
        self._counter = itertools.count()
        self._scope: trio.CancelScope | None = None
        self._limit = _MIN_ENTRIES

    def add(self, call: _Call, deadline: float) -> None:
        fifo = self._fifo
        while fifo and fifo[0][2].event.is_set():
            fifo.popleft()
        entry = (deadline, next(self._counter), call)
        if not fifo or fifo[-1][0] <= deadline:
            fifo.append(entry)
        else:
            heapq.heappush(self._heap, entry)
        if len(fifo) + len(self._heap) > self._limit:
            # Answered calls behind a slow one (a long hook check) are dropped here,
            # so the entries stay about as many as the calls still waiting.
            self._fifo = collections.deque(e for e in fifo if not e[2].event.is_set())
            self._heap = [e for e in self._heap if not e[2].event.is_set()]
            heapq.heapify(self._heap)
            self._limit = max(_MIN_ENTRIES, 2 * (len(self._fifo) + len(self._heap)))
        scope = self._scope
        if scope is not None and deadline < scope.deadline:
            scope.deadline = deadline

    def pending(self) -> builtins.list[_Call]:
        """Every call not answered yet."""
        return [e[2] for e in (*self._fifo, *self._heap) if not e[2].event.is_set()]

    def _next(self) -> float:
        fifo, heap = self._fifo, self._heap
        return min(fifo[0][0] if fifo else math.inf, heap[0][0] if heap else math.inf)

    async def run(self) -> None:
        while True:
            with trio.CancelScope(deadline=self._next()) as scope:
                self._scope = scope
                await trio.sleep_forever()
            self._scope = None
            now = trio.current_time()
            expired: builtins.list[_Call] = []
            fifo, heap = self._fifo, self._heap
            while fifo and fifo[0][0] <= now:
                expired.append(fifo.popleft()[2])
            while heap and heap[0][0] <= now:
                expired.append(heapq.heappop(heap)[2])
            for call in expired:
                if call.event.is_set():
                    continue
                if not call.taken:
                    call.abandoned = True
                    call.fail(BoardTimeout(call.timeout, applied=False))
                elif not call.graced:
                    call.graced = True
                    self.add(call, now + self.grace)
                else:
                    call.fail(BoardTimeout(call.timeout, applied=None))


@attrs.frozen
class _Change:
    """A change to write: the task as it becomes, its event, and who asked."""

    task: Task
    kind: BoardEventKind
    by: str | None


@attrs.frozen
class _Refused:
    """A creation a checkpoint refused: the next id to record, and the caller's error."""

    next_id: int
    error: BoardError


@attrs.frozen
class BoardStatistics:
    """Counters of a board: tasks by status, and the work done since it opened."""

    tasks: int
    pending: int
    in_progress: int
    completed: int
    requests: int
    batches: int
    writes: int
    checks_running: int


@final
class TaskBoard:
    """A member's handle on the board: every call is a request with a deadline.

    Use :func:`open_board` to get one. The methods raise the board's errors
    (:class:`~subagents.teams.TaskNotFound`, :class:`~subagents.teams.TaskAlreadyClaimed`,
    :class:`~subagents.teams.TaskBlocked`, :class:`~subagents.teams.CheckpointBlocked`,
    :class:`~subagents.teams.BoardTimeout`, ...), whose messages say what to do.
    ``timeout`` (seconds) defaults to the config's ``request_timeout``.
    """

    __slots__ = (
        "_batches",
        "_broken",
        "_checks",
        "_deadlines",
        "_gate",
        "_journal",
        "_nursery",
        "_publish",
        "_recv",
        "_requests",
        "_send",
        "_state",
        "_writes",
        "config",
        "path",
        "replay",
    )

    def __init__(
        self,
        config: BoardConfig,
        *,
        path: Path | None,
        journal: Journal | None,
        replay: JournalReplay,
        gate: Gate | None,
        publish: Publish | None,
    ) -> None:
        self.config = config
        self.path = path
        self.replay = replay
        self._journal = journal
        self._gate = gate
        self._publish = publish
        self._state = BoardState(config)
        for task in replay.tasks:
            self._state.put(task)
        self._state.next_id = max(self._state.next_id, replay.next_id)
        self._send: trio.MemorySendChannel[_Call]
        self._recv: trio.MemoryReceiveChannel[_Call]
        self._send, self._recv = trio.open_memory_channel(config.mailbox_size)
        self._nursery: trio.Nursery | None = None
        self._checks: set[_Call] = set()
        self._deadlines = _Deadlines(config.write_grace)
        self._broken: BoardWriteError | None = None
        self._requests = 0
        self._batches = 0
        self._writes = 0

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else str(self.path)
        return f"<TaskBoard {len(self._state.tasks)} task(s), {where}>"

    # -- the members' calls -------------------------------------------------------------

    async def create(
        self,
        subject: str,
        description: str,
        blocked_by: Sequence[str] = (),
        *,
        active_form: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        by: str | None = None,
        timeout: float | None = None,
    ) -> Task:
        """Add a pending, unowned task; it waits on the ``blocked_by`` tasks.

        ``metadata`` is Claude Code's: a JSON object of the caller's own keys (a key
        set to ``None`` is left out), kept with the task and bounded by the config.
        Passes the ``TaskCreated`` checkpoint first (:class:`CheckpointBlocked`
        if a hook blocks it: the task is not created).
        """
        args = (subject, description, tuple(blocked_by), active_form, metadata, by)
        result: Task = await self._ask("create", args, timeout)
        return result

    async def list(self, *, timeout: float | None = None) -> tuple[Task, ...]:
        """Every task, in id order."""
        result: tuple[Task, ...] = await self._ask("list", (), timeout)
        return result

    async def get(self, task_id: str, *, timeout: float | None = None) -> Task:
        """The task ``task_id`` (:class:`TaskNotFound` if there is none)."""
        result: Task = await self._ask("get", (task_id,), timeout)
        return result

    async def update(
        self,
        task_id: str,
        status: TaskStatus | None = None,
        owner: str | None = None,
        add_blocked_by: Sequence[str] = (),
        *,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        by: str | None = None,
        timeout: float | None = None,
    ) -> Task:
        """Change a task's status, owner, blockers or text, all at once or not at all.

        ``owner=""`` releases it. Setting an owner on an unowned task, or
        ``in_progress`` on one (which makes ``by`` its owner), is a claim, with a
        claim's rules. ``by`` is the member asking (``None``: the program); only
        the owner may change a task another member owns. ``completed`` passes
        the ``TaskCompleted`` checkpoint first and is final. ``metadata`` is merged
        into the task's (Claude Code's rule: a key set to ``None`` is removed).
        """
        text = (subject, description, active_form, metadata)
        args = (task_id, status, owner, tuple(add_blocked_by), by, text)
        result: Task = await self._ask("update", args, timeout)
        return result

    async def claim(self, task_id: str, owner: str, *, timeout: float | None = None) -> Task:
        """Make ``owner`` the task's one owner and set it in progress, atomically.

        Raises :class:`TaskAlreadyClaimed` (naming the owner) when another
        member owns it, :class:`TaskBlocked` while it waits on unfinished tasks,
        :class:`TaskCompleted` once it is done. Claiming a task one already
        owns returns it unchanged.
        """
        result: Task = await self._ask("claim", (task_id, owner), timeout)
        return result

    def snapshot(self) -> tuple[Task, ...]:
        """Every task, read without a request (for views and tests; in id order)."""
        return self._state.snapshot()

    def blocks(self, task_id: str) -> tuple[str, ...]:
        """The ids of the tasks waiting on ``task_id`` (Claude Code's ``blocks``)."""
        return self._state.blocks(task_id)

    def blockers(self, task: Task) -> tuple[str, ...]:
        """The unfinished tasks ``task`` still waits on."""
        return self._state.blockers(task)

    def statistics(self) -> BoardStatistics:
        """Counts of the tasks by status and of the board's work."""
        tasks = self._state.tasks.values()
        count = dict.fromkeys(("pending", "in_progress", "completed"), 0)
        for task in tasks:
            count[task.status] += 1
        return BoardStatistics(
            tasks=len(self._state.tasks),
            pending=count["pending"],
            in_progress=count["in_progress"],
            completed=count["completed"],
            requests=self._requests,
            batches=self._batches,
            writes=self._writes,
            checks_running=len(self._checks),
        )

    async def _ask(self, op: _Op, args: tuple[Any, ...], timeout: float | None) -> Any:
        if timeout is None:
            timeout = self.config.request_timeout
        elif not is_seconds(timeout):
            raise InvalidBoardConfig(
                f"timeout must be a finite number of seconds, 0 or more (got {timeout!r})"
            )
        deadline = trio.current_time() + timeout
        call = _Call(op, args, deadline, timeout)
        await trio.lowlevel.checkpoint_if_cancelled()  # a cancelled caller asks nothing
        try:
            self._send.send_nowait(call)
        except trio.WouldBlock:  # the mailbox is full: wait for room, until the deadline
            with trio.move_on_at(deadline):
                await self._send.send(call)
            if not call.event.is_set() and trio.current_time() >= deadline:
                call.abandoned = True
                raise BoardTimeout(timeout, applied=False) from None
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise BoardClosed() from None
        self._deadlines.add(call, deadline)
        try:
            await call.event.wait()
        finally:
            if not call.taken:  # cancelled before the board took it: it never happens
                call.abandoned = True
        error = call.error
        if error is None:
            return call.value
        call.error = None
        try:
            raise error
        finally:
            del error, call  # no cycle through this frame's traceback

    # -- the board itself -----------------------------------------------------------------

    async def _run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        recv = self._recv
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._deadlines.run)
                task_status.started()
                while True:
                    try:
                        first = await recv.receive()
                    except trio.EndOfChannel:
                        break
                    batch = [first]
                    while len(batch) < _BATCH:
                        try:
                            batch.append(recv.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await self._handle(batch)
                nursery.cancel_scope.cancel()
        finally:
            self._close_out()

    def _close_out(self) -> None:
        """Fail what is waiting, so no caller waits for a board that has stopped."""
        self._send.close()
        while True:
            try:
                self._recv.receive_nowait().fail(BoardClosed())
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
        self._recv.close()
        for call in self._checks:
            call.fail(BoardClosed())
        self._checks.clear()
        for call in self._deadlines.pending():
            call.fail(BoardClosed())
        if self._journal is not None:
            self._journal.close()

    async def _handle(self, batch: builtins.list[_Call]) -> None:
        """Apply a batch, write its changes with one fsync, then publish and answer."""
        written, undo, events, answers = self._apply_batch(batch)
        journal = self._journal
        if written and journal is not None:
            try:
                await trio.to_thread.run_sync(journal.append, written)
            except BoardWriteError as exc:
                # Not on disk, so not made: the state goes back to what the journal holds.
                tasks = self._state.tasks
                for task_id, previous in reversed(undo):
                    if previous is None:
                        del tasks[task_id]
                    else:
                        tasks[task_id] = previous
                self._broken = exc
                for call, _ in answers:
                    call.fail(exc)
                return
            self._writes += 1
            state = self._state
            if journal.wants_compaction(len(state.tasks)):
                try:
                    await trio.to_thread.run_sync(journal.compact, state.snapshot(), state.next_id)
                except BoardWriteError as exc:
                    # This batch is on disk (answered below); later changes are refused.
                    self._broken = exc
        publish = self._publish
        if publish is not None:
            for event in events:
                publish(event)
        for call, value in answers:
            if isinstance(value, BoardError):
                call.fail(value)
            else:
                call.reply(value)

    def _apply_batch(
        self, batch: builtins.list[_Call]
    ) -> tuple[
        builtins.list[Task | int],
        builtins.list[tuple[str, Task | None]],
        builtins.list[BoardEvent],
        builtins.list[tuple[_Call, Any]],
    ]:
        """Apply each request in order: what to write, how to undo it, the events, the answers.

        A plain function, so the errors raised and caught here for refused
        requests never hold the board's coroutine frame in a traceback.
        """
        self._batches += 1
        state = self._state
        written: builtins.list[Task | int] = []
        undo: builtins.list[tuple[str, Task | None]] = []
        events: builtins.list[BoardEvent] = []
        answers: builtins.list[tuple[_Call, Any]] = []
        now = trio.current_time()
        for call in batch:
            if call.abandoned:
                continue
            if call.deadline <= now and call.op != "commit":  # too late: never applied
                call.abandoned = True
                answers.append((call, BoardTimeout(call.timeout, applied=False)))
                continue
            call.taken = True
            self._requests += call.op != "commit"
            if self._broken is not None and call.op not in ("list", "get"):
                answers.append((call, self._broken))
                continue
            try:
                outcome = self._apply(call)
            except BoardError as exc:
                # Without its traceback (this frame, which holds ``answers``), the
                # error makes no reference cycle: a crowd of refusals leaves no work
                # for the cycle collector.
                answers.append((call, exc.with_traceback(None)))
                continue
            if outcome is _NOT_SET:  # handed to a checkpoint; answered later
                continue
            if type(outcome) is _Refused:  # the id it took is kept taken, on disk too
                written.append(outcome.next_id)
                answers.append((call, outcome.error))
            elif type(outcome) is _Change:
                undo.append((outcome.task.id, state.tasks.get(outcome.task.id)))
                state.put(outcome.task)
                written.append(outcome.task)
                events.append(BoardEvent(kind=outcome.kind, task=outcome.task, by=outcome.by))
                answers.append((call, outcome.task))
            else:
                answers.append((call, outcome))
        return written, undo, events, answers

    def _apply(self, call: _Call) -> Any:
        """Do one request on the state: a value to answer, a change to write, or a check started."""
        state = self._state
        op, args = call.op, call.args
        if op == "get":
            return state.get(args[0])
        if op == "list":
            return state.snapshot()
        if op == "create":
            subject, description, blocked_by, active_form, metadata, by = args
            task = state.plan_create(subject, description, blocked_by, active_form, metadata)
            if self._gate is None:
                return _Change(task, "task_created", by)
            self._check(call, Checkpoint(kind="task_created", task=task, by=by), reserve=True)
            return _NOT_SET
        if op == "commit":
            return args[0]
        if op == "claim":
            task_id, owner = args
            plan = state.plan_claim(task_id, owner)
            by = owner
        else:
            task_id, status, owner, add_blocked_by, by, (subject, description, form, meta) = args
            plan = state.plan_update(
                task_id,
                status=status,
                owner=owner,
                add_blocked_by=add_blocked_by,
                by=by,
                subject=subject,
                description=description,
                active_form=form,
                metadata=meta,
            )
        if plan is None:
            return state.get(task_id)
        task, kind = plan
        if kind == "task_completed" and self._gate is not None:
            self._check(call, Checkpoint(kind="task_completed", task=task, by=by), reserve=False)
            return _NOT_SET
        return _Change(task, kind, by)

    def _check(self, call: _Call, checkpoint: Checkpoint, *, reserve: bool) -> None:
        """Start the gate on ``checkpoint`` in a task of its own."""
        if len(self._checks) >= self.config.max_checks:
            raise BoardFull("as many hook checks are running as may", self.config.max_checks)
        state = self._state
        task = checkpoint.task
        if reserve:
            state.reserved += 1
        else:
            state.busy.add(task.id)
        self._checks.add(call)
        assert self._nursery is not None
        self._nursery.start_soon(self._run_check, call, checkpoint, reserve)

    async def _run_check(self, call: _Call, checkpoint: Checkpoint, reserve: bool) -> None:
        assert self._gate is not None
        verdict: str | None = None
        failure: BoardError | None = None
        with trio.CancelScope(deadline=call.deadline) as scope:
            try:
                verdict = await self._gate(checkpoint)
            except Exception as exc:  # a broken gate blocks: it never lets a change through
                verdict = f"the checkpoint failed ({type(exc).__name__}: {exc})"
        if scope.cancelled_caught:
            failure = BoardTimeout(max(0.0, call.deadline - trio.current_time()), applied=False)
        elif verdict is not None:
            failure = CheckpointBlocked(checkpoint.kind, checkpoint.task.id, str(verdict))
        state = self._state
        if reserve:
            state.reserved -= 1
        else:
            state.busy.discard(checkpoint.task.id)
        self._checks.discard(call)
        if failure is not None and reserve:
            # The id the creation took must stay taken after a restart: the board
            # writes that down before it answers.
            call.op = "commit"
            call.args = (_Refused(int(checkpoint.task.id) + 1, failure),)
            try:
                await self._send.send(call)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                call.fail(BoardClosed())
            return
        if failure is not None:
            call.fail(failure)
            return
        # The change goes back to the board as the same call, now a commit: the board
        # applies and writes it in order with everything else, then answers it.
        kind: BoardEventKind = (
            "task_created" if checkpoint.kind == "task_created" else "task_completed"
        )
        call.op = "commit"
        call.args = (_Change(checkpoint.task, kind, checkpoint.by),)
        try:
            await self._send.send(call)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            call.fail(BoardClosed())


@contextlib.asynccontextmanager
async def open_board(
    path: str | Path | None = None,
    *,
    config: BoardConfig | None = None,
    gate: Gate | None = None,
    publish: Publish | None = None,
) -> AsyncIterator[TaskBoard]:
    """Open the board kept in the journal ``path`` (``None``: in memory only) for the block.

    Replays the journal first (``board.replay`` says what it found, and which
    lines it skipped); the board serves requests until the block ends, then
    fails any request still waiting with :class:`BoardClosed` and closes the
    journal. ``gate`` is the checkpoint for creating and completing tasks,
    ``publish`` receives a :class:`BoardEvent` per change.
    """
    config = BoardConfig() if config is None else config
    journal: Journal | None = None
    replay = JournalReplay(None)
    where = None if path is None else Path(path)
    if where is not None:
        journal, replay = await trio.to_thread.run_sync(Journal.open, where)
    board = TaskBoard(
        config, path=where, journal=journal, replay=replay, gate=gate, publish=publish
    )
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(board._run)
            try:
                yield board
            finally:
                board._send.close()
    finally:
        if journal is not None:
            journal.close()
