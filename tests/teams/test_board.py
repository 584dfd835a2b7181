"""The task board actor: create, claim, update, dependencies, caps, deadlines, checkpoints.

Behaviour follows Claude Code's task tools (https://code.claude.com/docs/en/tools-reference;
TaskUpdate's description: "Status progresses: ``pending`` → ``in_progress`` → ``completed``",
ids are sequential numbers, ``owner`` is an agent name, ``addBlockedBy`` lists the tasks
that must complete first), and issue 18 item 3: a claim is atomic, two teammates never
own one task, a task blocked by unfinished tasks cannot be claimed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
import trio

from subagents.teams import (
    BoardClosed,
    BoardConfig,
    BoardEvent,
    BoardFull,
    BoardTimeout,
    Checkpoint,
    CheckpointBlocked,
    DependencyCycle,
    FieldTooLong,
    InvalidOwner,
    TaskAlreadyClaimed,
    TaskBlocked,
    TaskBusy,
    TaskCompleted,
    TaskNotFound,
    open_board,
)


async def test_ids_are_sequential_and_tasks_start_pending_unowned() -> None:
    async with open_board() as board:
        first = await board.create("Survey", "Count modules")
        second = await board.create("Report", "Write it", blocked_by=[first.id])
        assert (first.id, second.id) == ("1", "2")
        assert first.status == "pending"
        assert first.owner is None
        assert second.blocked_by == ("1",)
        assert await board.list() == (first, second)
        assert await board.get("2") == second
        assert board.blocks("1") == ("2",)


async def test_a_claim_makes_one_owner_and_a_second_claim_names_it() -> None:
    async with open_board() as board:
        task = await board.create("Survey", "Count modules")
        claimed = await board.claim(task.id, "ada")
        assert (claimed.owner, claimed.status) == ("ada", "in_progress")
        assert await board.claim(task.id, "ada") == claimed  # a repeated claim is a no-op
        with pytest.raises(TaskAlreadyClaimed, match="already claimed by ada") as info:
            await board.claim(task.id, "grace")
        assert info.value.owner == "ada"
        with pytest.raises(InvalidOwner, match="must be a member's name"):
            await board.claim(task.id, " ")


async def test_many_concurrent_claims_of_one_task_give_it_exactly_one_owner() -> None:
    async with open_board() as board:
        task = await board.create("Survey", "Count modules")
        winners: list[str] = []
        refused: list[str] = []

        async def claim(name: str) -> None:
            try:
                await board.claim(task.id, name)
            except TaskAlreadyClaimed as exc:
                refused.append(exc.owner)
            else:
                winners.append(name)

        async with trio.open_nursery() as nursery:
            for n in range(50):
                nursery.start_soon(claim, f"m{n}")
        assert len(winners) == 1
        assert set(refused) == set(winners)
        assert len(refused) == 49
        assert (await board.get(task.id)).owner == winners[0]


async def test_a_blocked_task_cannot_be_claimed_until_its_blockers_complete() -> None:
    async with open_board() as board:
        first = await board.create("Survey", "Count modules")
        second = await board.create("Report", "Write it", blocked_by=[first.id])
        with pytest.raises(TaskBlocked, match="waits on unfinished task") as info:
            await board.claim(second.id, "grace")
        assert info.value.blockers == ("1",)
        with pytest.raises(TaskBlocked):
            await board.update(second.id, owner="grace")
        with pytest.raises(TaskBlocked):
            await board.update(second.id, status="in_progress", by="grace")
        await board.claim(first.id, "ada")
        done = await board.update(first.id, status="completed", by="ada")
        assert done.status == "completed"
        assert (await board.claim(second.id, "grace")).owner == "grace"


async def test_only_the_owner_changes_an_owned_task() -> None:
    async with open_board() as board:
        task = await board.create("Survey", "Count modules")
        await board.claim(task.id, "ada")
        for change in ({"status": "completed"}, {"owner": "grace"}, {"owner": ""}):
            with pytest.raises(TaskAlreadyClaimed):
                await board.update(task.id, by="grace", **change)  # type: ignore[arg-type]
        handed = await board.update(task.id, owner="grace", by="ada")
        assert handed.owner == "grace"
        released = await board.update(task.id, owner="", by="grace")
        assert (released.owner, released.status) == (None, "pending")


async def test_in_progress_without_an_owner_claims_for_the_caller() -> None:
    async with open_board() as board:
        task = await board.create("Survey", "Count modules")
        started = await board.update(task.id, status="in_progress", by="ada")
        assert (started.owner, started.status) == ("ada", "in_progress")


async def test_completed_is_final_and_cycles_are_refused() -> None:
    async with open_board() as board:
        a = await board.create("A", "a")
        b = await board.create("B", "b", blocked_by=[a.id])
        c = await board.create("C", "c", blocked_by=[b.id])
        with pytest.raises(DependencyCycle, match="1 -> 3 -> 2 -> 1"):
            await board.update(a.id, add_blocked_by=[c.id])
        with pytest.raises(DependencyCycle):
            await board.update(a.id, add_blocked_by=[a.id])
        with pytest.raises(TaskNotFound):
            await board.update(a.id, add_blocked_by=["99"])
        with pytest.raises(TaskNotFound):
            await board.create("D", "d", blocked_by=["99"])
        await board.update(a.id, status="completed")
        with pytest.raises(TaskCompleted):
            await board.update(a.id, status="pending")
        with pytest.raises(TaskCompleted):
            await board.claim(a.id, "ada")


async def test_a_claimed_task_cannot_be_given_unfinished_blockers() -> None:
    async with open_board() as board:
        a = await board.create("A", "a")
        b = await board.create("B", "b")
        await board.claim(b.id, "ada")
        with pytest.raises(TaskBlocked, match="release it first"):
            await board.update(b.id, add_blocked_by=[a.id])
        await board.update(a.id, status="completed")
        assert (await board.update(b.id, add_blocked_by=[a.id])).blocked_by == ("1",)


async def test_caps_are_typed_errors_that_say_what_to_do() -> None:
    config = BoardConfig(max_tasks=3, max_subject_chars=5, max_blockers=1, max_owner_chars=3)
    async with open_board(config=config) as board:
        with pytest.raises(FieldTooLong, match="subject is too large"):
            await board.create("x" * 6, "d")
        a = await board.create("A", "a")
        b = await board.create("B", "b", blocked_by=[a.id])
        c = await board.create("C", "c")
        with pytest.raises(BoardFull, match="raise the limit"):
            await board.create("D", "d")
        with pytest.raises(FieldTooLong, match="owner"):
            await board.claim(a.id, "abcd")
        with pytest.raises(FieldTooLong, match="blocked_by"):
            await board.update(b.id, add_blocked_by=[c.id])
        assert len(await board.list()) == 3


async def test_events_are_published_for_each_change_with_the_task() -> None:
    events: list[BoardEvent] = []
    async with open_board(publish=events.append) as board:
        task = await board.create("Survey", "Count", by="lead")
        await board.claim(task.id, "ada")
        await board.update(task.id, status="pending", by="ada")
        await board.update(task.id, status="completed", by="ada")
    kinds = [(e.kind, e.task.status, e.by) for e in events]
    assert kinds == [
        ("task_created", "pending", "lead"),
        ("task_claimed", "in_progress", "ada"),
        ("task_updated", "pending", "ada"),
        ("task_completed", "completed", "ada"),
    ]


async def test_a_gate_blocks_a_creation_and_a_completion_with_its_feedback() -> None:
    asked: list[Checkpoint] = []

    async def gate(checkpoint: Checkpoint) -> str | None:
        asked.append(checkpoint)
        if checkpoint.task.subject == "bad":
            return "subjects must say what to do"
        if checkpoint.kind == "task_completed" and checkpoint.by == "ada":
            return "run the tests first"
        return None

    events: list[BoardEvent] = []
    async with open_board(gate=gate, publish=events.append) as board:
        with pytest.raises(CheckpointBlocked, match="subjects must say what to do") as info:
            await board.create("bad", "d", by="lead")
        assert info.value.event == "task_created"
        assert await board.list() == ()
        task = await board.create("Survey", "Count", by="lead")
        await board.claim(task.id, "ada")
        with pytest.raises(CheckpointBlocked, match=r"(?s)stays open.*run the tests first"):
            await board.update(task.id, status="completed", by="ada")
        assert (await board.get(task.id)).status == "in_progress"
        await board.update(task.id, owner="grace", by="ada")
        done = await board.update(task.id, status="completed", by="grace")
        assert done.status == "completed"
    assert [(c.kind, c.task.subject, c.by) for c in asked] == [
        ("task_created", "bad", "lead"),
        ("task_created", "Survey", "lead"),
        ("task_completed", "Survey", "ada"),
        ("task_completed", "Survey", "grace"),
    ]
    assert [e.kind for e in events] == [
        "task_created",
        "task_claimed",
        "task_claimed",
        "task_completed",
    ]


async def test_a_slow_gate_does_not_hold_the_board_and_its_task_is_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    release = trio.Event()

    async def gate(checkpoint: Checkpoint) -> str | None:
        if checkpoint.kind == "task_completed":
            await release.wait()
        return None

    async with open_board(gate=gate) as board, trio.open_nursery() as nursery:
        task = await board.create("Survey", "Count")
        other = await board.create("Other", "o")
        await board.claim(task.id, "ada")
        nursery.start_soon(partial(board.update, task.id, status="completed", by="ada"))
        await trio.testing.wait_all_tasks_blocked()
        assert (await board.claim(other.id, "grace")).owner == "grace"  # the board serves
        with pytest.raises(TaskBusy):
            await board.update(task.id, owner="", by="ada")
        release.set()
        await trio.testing.wait_all_tasks_blocked()
        assert (await board.get(task.id)).status == "completed"


async def test_a_gate_past_the_deadline_leaves_the_task_uncreated(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def gate(checkpoint: Checkpoint) -> str | None:
        await trio.sleep_forever()

    async with open_board(gate=gate) as board:
        with pytest.raises(BoardTimeout, match="not applied"):
            await board.create("Survey", "Count", timeout=5)
        assert await board.list() == ()
        assert board.statistics().checks_running == 0


async def test_a_request_whose_deadline_passed_before_the_board_took_it_is_never_applied() -> None:
    async with open_board() as board:
        with pytest.raises(BoardTimeout, match="not applied") as info:
            await board.create("A", "a", timeout=0)
        assert info.value.applied is False
        await trio.testing.wait_all_tasks_blocked()
        assert await board.list() == ()


async def test_requests_after_close_and_waiting_ones_get_board_closed() -> None:
    async with open_board() as board:
        pass
    with pytest.raises(BoardClosed):
        await board.list()


async def test_a_journal_replays_to_the_same_board(tmp_path: Path) -> None:
    path = tmp_path / "state" / "board.jsonl"
    async with open_board(path) as board:
        a = await board.create("A", "a")
        b = await board.create("B", "b", blocked_by=[a.id])
        await board.claim(a.id, "ada")
        await board.update(a.id, status="completed", by="ada")
        before = board.snapshot()
    async with open_board(path) as again:
        assert again.snapshot() == before
        assert again.replay.skipped == ()
        assert (await again.create("C", "c")).id == "3"
        assert (await again.claim(b.id, "grace")).owner == "grace"


async def test_the_text_of_a_task_changes_by_its_owner_only_and_not_once_completed() -> None:
    async with open_board() as board:
        task = await board.create("Survey", "Count", active_form="Surveying")
        await board.claim(task.id, "ada")
        with pytest.raises(TaskAlreadyClaimed):
            await board.update(task.id, subject="Mine", by="grace")
        changed = await board.update(task.id, subject="Survey src", description="All", by="ada")
        assert (changed.subject, changed.description, changed.active_form) == (
            "Survey src",
            "All",
            "Surveying",
        )
        await board.update(task.id, status="completed", by="ada")
        with pytest.raises(TaskCompleted):
            await board.update(task.id, description="later")


async def test_a_cancelled_caller_s_request_is_never_applied_once_abandoned(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_board() as board:
        with trio.CancelScope() as scope:
            scope.cancel()
            await board.create("A", "a")  # cancelled before it is sent
        await trio.testing.wait_all_tasks_blocked()
        assert await board.list() == ()


async def test_a_request_waiting_on_a_stuck_journal_times_out_saying_it_may_be_applied(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = trio.Event()

    async def stuck(fn: object, *args: object, **kwargs: object) -> None:
        await release.wait()  # a disk that does not answer

    config = BoardConfig(request_timeout=5, write_grace=2)
    async with open_board(tmp_path / "board.jsonl", config=config) as board:
        monkeypatch.setattr(trio.to_thread, "run_sync", stuck)
        start = trio.current_time()
        with pytest.raises(BoardTimeout, match="may have been applied") as info:
            await board.create("A", "a")
        assert info.value.applied is None
        assert trio.current_time() - start == pytest.approx(7)  # deadline + write grace
        with pytest.raises(BoardTimeout, match="not applied"):  # queued behind it
            await board.create("B", "b", timeout=1)
        release.set()


async def test_a_full_mailbox_holds_a_request_at_most_until_its_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = trio.Event()

    async def stuck(fn: Callable[..., object], *args: object) -> object:
        await release.wait()  # a disk that does not answer, until released
        return fn(*args)  # then a write in this thread: the mock clock cannot jump past it

    config = BoardConfig(mailbox_size=1, request_timeout=50)
    async with open_board(tmp_path / "board.jsonl", config=config) as board:
        monkeypatch.setattr(trio.to_thread, "run_sync", stuck)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(board.create, "A", "a"))  # the board is stuck on it
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(partial(board.create, "B", "b"))  # fills the mailbox
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            with pytest.raises(BoardTimeout, match="not applied"):
                await board.create("C", "c", timeout=3)
            assert trio.current_time() - start == pytest.approx(3)
            release.set()
        assert [t.subject for t in await board.list()] == ["A", "B"]
