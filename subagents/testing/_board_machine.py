"""A Hypothesis state machine for the shared task board: claims, blockers, checkpoints, crashes.

:class:`BoardMachine` drives a real :func:`~subagents.teams.open_board` (its
journal in a fresh folder, in memory where ``/dev/shm`` exists) with random
sequences of create, claim (one member, or many at once racing for one task),
complete, release, block (add blockers) and crash (the board stops without
warning and is opened again from its journal, sometimes with a torn last line
appended, as a crash in the middle of a write leaves it). It keeps a plain
model of what every task must be and checks, after every step:

- no task has two owners: every claim race has at most one winner, and each
  task's owner is the one the model expects;
- no blocked task is claimed: a task with an owner (or in progress) has no
  unfinished blockers;
- a reopened board equals the board before the crash;
- the board equals the model (ids, subjects, statuses, owners, blockers).

The checkpoints run through a gate: :meth:`BoardMachine.refuses` says which
creations and completions a hook would block (by default, subjects that start
with ``"vague"`` are refused at creation, and tasks whose subject ends with
``"!"`` at completion); override it to try your own rule. Run it as a test::

    from hypothesis import settings
    from subagents.testing import BoardMachine

    TestBoard = BoardMachine.TestCase
    TestBoard.settings = settings(max_examples=200, stateful_step_count=30, deadline=None)

A subclass may add rules (messages, idle teammates) and invariants; the board
runs in a Trio thread of its own, reached with :meth:`BoardMachine.run`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import attrs
import trio
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from subagents.teams import (
    BoardConfig,
    BoardError,
    Checkpoint,
    CheckpointBlocked,
    DependencyCycle,
    Task,
    TaskAlreadyClaimed,
    TaskBlocked,
    TaskBoard,
    TaskCompleted,
    open_board,
)

__all__ = ["BoardHost", "BoardMachine", "ModelTask"]

T = TypeVar("T")

#: Seconds a step may take before the machine gives up on it (a hang is a failure).
_STEP_TIMEOUT = 30.0


@attrs.define
class ModelTask:
    """What the model says one task must be."""

    subject: str
    status: str = "pending"
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()


class BoardHost:
    """A board open in a Trio event loop on a thread of its own, for synchronous tests.

    :meth:`run` runs an async function with the board in that loop;
    :meth:`crash` stops the board at once (no clean shutdown of anything that
    was waiting) and :meth:`reopen` opens it again from its journal.
    """

    def __init__(self, path: Path, config: BoardConfig, gate: Any = None) -> None:
        self.path = path
        self.config = config
        self.gate = gate
        self.board: TaskBoard | None = None
        self._scope: trio.CancelScope | None = None
        self._closed: trio.Event | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="board host", daemon=True)
        self._thread.start()
        if not self._ready.wait(_STEP_TIMEOUT):
            raise RuntimeError("the board host's event loop did not start")
        self.reopen()

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:  # reported to the test thread by close()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    async def _hold(self, *, task_status: trio.TaskStatus[TaskBoard]) -> None:
        closed = self._closed = trio.Event()
        try:
            with trio.CancelScope() as scope:
                self._scope = scope
                async with open_board(self.path, config=self.config, gate=self.gate) as board:
                    task_status.started(board)
                    await trio.sleep_forever()
        finally:
            closed.set()

    def run(self, step: Callable[[TaskBoard], Awaitable[T]]) -> T:
        """Run ``step(board)`` in the board's loop and return what it returns (or raise)."""
        board = self.board
        assert board is not None
        assert self._token is not None

        async def bounded() -> T:
            with trio.fail_after(_STEP_TIMEOUT):
                return await step(board)

        return trio.from_thread.run(bounded, trio_token=self._token)

    def crash(self) -> None:
        """Stop the board at once, as a crash would (its journal stays as it is)."""

        async def stop() -> None:
            assert self._scope is not None
            assert self._closed is not None
            self._scope.cancel()
            await self._closed.wait()

        assert self._token is not None
        trio.from_thread.run(stop, trio_token=self._token)
        self.board = None

    def reopen(self) -> TaskBoard:
        """Open the board from its journal (after :meth:`crash`, or at the start)."""

        async def start() -> TaskBoard:
            assert self._nursery is not None
            board: TaskBoard = await self._nursery.start(self._hold)
            return board

        assert self._token is not None
        self.board = trio.from_thread.run(start, trio_token=self._token)
        return self.board

    def close(self) -> None:
        """Stop the loop and join its thread; raise what it raised."""
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(_STEP_TIMEOUT)
        if self._thread.is_alive():
            raise RuntimeError("the board host did not stop")
        if self._error is not None:
            raise self._error


def _scratch_folder() -> Path:
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="subagents-board-", dir=base))


class BoardMachine(RuleBasedStateMachine):
    """Random claims, blockers, checkpoints and crashes against a model of the board."""

    #: The members who claim tasks.
    members: ClassVar[tuple[str, ...]] = ("ada", "grace", "linus", "barbara")
    #: The board's caps: small, so ``BoardFull`` is reached too.
    config: ClassVar[BoardConfig] = BoardConfig(max_tasks=12, max_blockers=4)

    def __init__(self) -> None:
        super().__init__()
        self.folder = _scratch_folder()
        self.model: dict[str, ModelTask] = {}
        self.next_id = 1
        self.claim_winners: list[tuple[str, list[str]]] = []
        self.host = BoardHost(self.folder / "board.jsonl", self.config, self._gate)

    def teardown(self) -> None:
        try:
            self.host.close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- the checkpoint ---------------------------------------------------------------

    def refuses(self, kind: str, subject: str) -> str | None:
        """The feedback a hook gives for this checkpoint, or ``None`` to let it through."""
        if kind == "task_created" and subject.startswith("vague"):
            return "Say what done looks like."
        if kind == "task_completed" and subject.endswith("!"):
            return "Run the tests first."
        return None

    async def _gate(self, checkpoint: Checkpoint) -> str | None:
        return self.refuses(checkpoint.kind, checkpoint.task.subject)

    # -- helpers ------------------------------------------------------------------------

    def call(self, step: Callable[[TaskBoard], Awaitable[T]]) -> T | BoardError:
        """Run a board call; a board error is returned, not raised."""

        async def guarded(board: TaskBoard) -> T | BoardError:
            try:
                return await step(board)
            except BoardError as exc:
                return exc

        return self.host.run(guarded)

    def open_blockers(self, task: ModelTask) -> tuple[str, ...]:
        return tuple(b for b in task.blocked_by if self.model[b].status != "completed")

    def ids(self) -> list[str]:
        return list(self.model)

    def _reaches(self, start: str, goal: str) -> bool:
        stack, seen = [start], set()
        while stack:
            current = stack.pop()
            if current == goal:
                return True
            if current not in seen:
                seen.add(current)
                stack.extend(self.model[current].blocked_by)
        return False

    # -- rules --------------------------------------------------------------------------

    @rule(
        subject=st.sampled_from(["survey", "count", "report", "vague idea", "check!"]),
        data=st.data(),
    )
    def create(self, subject: str, data: st.DataObject) -> None:
        blockers = (
            data.draw(st.lists(st.sampled_from(self.ids()), max_size=3)) if self.model else []
        )
        outcome = self.call(lambda board: board.create(subject, "do it", blockers, by="lead"))
        if len(self.model) >= self.config.max_tasks:
            assert isinstance(outcome, BoardError), outcome
            return
        task_id = str(self.next_id)
        self.next_id += 1  # taken even when the checkpoint refuses it
        if self.refuses("task_created", subject) is not None:
            assert isinstance(outcome, CheckpointBlocked), outcome
            return
        assert isinstance(outcome, Task), outcome
        assert outcome.id == task_id
        self.model[task_id] = ModelTask(subject, blocked_by=tuple(dict.fromkeys(blockers)))

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def claim(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from(self.ids()))
        member = data.draw(st.sampled_from(self.members))
        outcome = self.call(lambda board: board.claim(task_id, member))
        self._expect_claim(task_id, member, outcome)

    def _expect_claim(self, task_id: str, member: str, outcome: object) -> None:
        task = self.model[task_id]
        if task.status == "completed":
            assert isinstance(outcome, TaskCompleted), outcome
        elif task.owner is not None and task.owner != member:
            assert isinstance(outcome, TaskAlreadyClaimed), outcome
            assert outcome.owner == task.owner
        elif task.owner is None and self.open_blockers(task):
            assert isinstance(outcome, TaskBlocked), outcome
        else:
            assert isinstance(outcome, Task), outcome
            task.owner, task.status = member, "in_progress"

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def race(self, data: st.DataObject) -> None:
        """Every member claims one task at the same time: at most one wins."""
        task_id = data.draw(st.sampled_from(self.ids()))
        task = self.model[task_id]
        claimable = task.status != "completed" and task.owner is None
        claimable = claimable and not self.open_blockers(task)

        async def all_claim(board: TaskBoard) -> list[str]:
            winners: list[str] = []

            async def one(member: str) -> None:
                try:
                    await board.claim(task_id, member)
                except BoardError:
                    return
                winners.append(member)

            async with trio.open_nursery() as nursery:
                for member in self.members:
                    nursery.start_soon(one, member)
            return winners

        winners = self.host.run(all_claim)
        self.claim_winners.append((task_id, winners))
        if claimable:
            assert len(winners) == 1, winners
            task.owner, task.status = winners[0], "in_progress"
        elif task.owner is not None and task.status != "completed":
            assert winners == [task.owner], (winners, task.owner)
        else:
            assert winners == [], winners

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from(self.ids()))
        task = self.model[task_id]
        # Whether the owner completes it is drawn, not found by chance. Which member wins
        # a race depends on timing (the journal's worker threads, and in TeamMachine a
        # second Trio loop drawing from the scheduler's random, which Trio shares), and
        # Hypothesis replays a case only if its draws do not depend on who won.
        by_owner = data.draw(st.booleans())
        pick = data.draw(st.integers(min_value=0, max_value=len(self.members) - 1))
        others = [m for m in self.members if m != task.owner]
        member = task.owner if task.owner and by_owner else others[pick % len(others)]
        outcome = self.call(lambda board: board.update(task_id, status="completed", by=member))
        if task.status == "completed":
            assert isinstance(outcome, Task), outcome
        elif task.owner is not None and task.owner != member:
            assert isinstance(outcome, TaskAlreadyClaimed), outcome
        elif self.open_blockers(task):
            assert isinstance(outcome, TaskBlocked), outcome
        elif self.refuses("task_completed", task.subject) is not None:
            assert isinstance(outcome, CheckpointBlocked), outcome
        else:
            assert isinstance(outcome, Task), outcome
            task.status = "completed"

    @precondition(lambda self: any(t.owner for t in self.model.values()))
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from([i for i, t in self.model.items() if t.owner]))
        task = self.model[task_id]
        outcome = self.call(lambda board: board.update(task_id, owner="", by=task.owner))
        if task.status == "completed":
            assert isinstance(outcome, TaskCompleted), outcome
            return
        assert isinstance(outcome, Task), outcome
        task.owner, task.status = None, "pending"

    @precondition(lambda self: len(self.model) >= 2)
    @rule(data=st.data())
    def block(self, data: st.DataObject) -> None:
        task_id = data.draw(st.sampled_from(self.ids()))
        added = data.draw(st.lists(st.sampled_from(self.ids()), min_size=1, max_size=2))
        outcome = self.call(lambda board: board.update(task_id, add_blocked_by=added))
        task = self.model[task_id]
        new = tuple(b for b in dict.fromkeys(added) if b not in task.blocked_by)
        if task.status == "completed":
            expected: type[BaseException] | None = None if not new else TaskCompleted
        elif task_id in new:
            expected = DependencyCycle
        elif len(task.blocked_by) + len(new) > self.config.max_blockers:
            expected = BoardError
        elif any(self._reaches(b, task_id) for b in new):
            expected = DependencyCycle
        elif task.owner is not None and any(self.model[b].status != "completed" for b in new):
            expected = TaskBlocked
        else:
            expected = None
        if expected is None:
            assert isinstance(outcome, Task), outcome
            task.blocked_by = (*task.blocked_by, *new)
        else:
            assert isinstance(outcome, expected), (outcome, expected)

    @rule(torn=st.booleans())
    def crash(self, torn: bool) -> None:
        """The board stops without warning and is opened again from its journal."""
        before = self.host.run(_snapshot)
        self.host.crash()
        if torn:
            with open(self.host.path, "ab") as journal:
                journal.write(b'{"v":1,"task":{"id":"99","subj')
        board = self.host.reopen()
        assert self.host.run(_snapshot) == before
        assert len(board.replay.skipped) == int(torn)

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def no_task_has_two_owners(self) -> None:
        for task_id, winners in self.claim_winners:
            assert len(winners) <= 1, (task_id, winners)
        self.claim_winners.clear()

    @invariant()
    def no_blocked_task_is_claimed(self) -> None:
        board = self.host.board
        assert board is not None
        for task in board.snapshot():
            if task.owner is not None or task.status == "in_progress":
                assert board.blockers(task) == (), task

    @invariant()
    def the_board_is_the_model(self) -> None:
        board = self.host.board
        assert board is not None
        seen = {
            t.id: ModelTask(t.subject, t.status, t.owner, t.blocked_by) for t in board.snapshot()
        }
        assert seen == self.model


async def _snapshot(board: TaskBoard) -> tuple[Task, ...]:
    return await board.list()
