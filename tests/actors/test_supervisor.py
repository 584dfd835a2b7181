"""The supervisor: spawn, limits, routing, wait, the close ladder, failure isolation, exit."""

from __future__ import annotations

import gc
import re
import weakref
from typing import Any

import pytest
import trio
import trio.testing

from subagents.actors import (
    NOT_FOUND,
    RUNNING,
    SHUTDOWN,
    ActorContext,
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    AgentSpawned,
    AgentStartFailed,
    Bus,
    ChildFinished,
    Completed,
    DepthLimitReached,
    Errored,
    InvalidConfiguration,
    Lagged,
    MailboxFull,
    NoReply,
    OverflowPolicy,
    ReplyTimeout,
    StatusChanged,
    Supervisor,
    SupervisorClosed,
    SupervisorConfig,
    _supervisor,
    is_final,
    open_supervisor,
)
from tests.actors.helpers import drain, idle, kinds, scripted, stubborn
from tests.steps import steps_of


def config(**kwargs: Any) -> SupervisorConfig:
    return SupervisorConfig(**{"max_threads": 4, "max_depth": 2, **kwargs})


# -- spawn ----------------------------------------------------------------------


async def test_spawn_returns_a_registered_running_actor(sup: Supervisor) -> None:
    with sup.subscribe(policy="block") as sub:
        ref = await sup.spawn(scripted, label="worker")
        assert sup.status(ref.id) == RUNNING
        assert (ref.depth, ref.parent_id, ref.label, ref.nickname) == (0, None, "worker", "Ada")
        events = drain(sub)
    assert isinstance(events[0], AgentSpawned)
    assert events[0].label == "worker"
    assert kinds(events, ref.id) == ["pending_init", "running"]
    assert sup.info(ref.id).nickname == "Ada"


async def test_spawn_with_init_is_a_handshake(sup: Supervisor) -> None:
    order: list[str] = []

    async def init(ctx: ActorContext) -> None:
        order.append(f"init {ctx.status.__struct_config__.tag}")
        await trio.sleep(0)

    async def behavior(ctx: ActorContext) -> None:
        order.append("behavior")
        await ctx.receive()

    ref = await sup.spawn(behavior, init=init)
    order.append("spawn returned")
    await trio.testing.wait_all_tasks_blocked()
    # init ran while PendingInit and before spawn returned; the behavior starts as soon
    # as the actor reports it is running (here, before spawn's caller resumes)
    assert order == ["init pending_init", "behavior", "spawn returned"]
    assert sup.status(ref.id) == RUNNING


async def test_an_idle_actor_keeps_neither_its_start_up_code_nor_the_handshake(
    sup: Supervisor,
) -> None:
    # Both live as long as the actor otherwise: the start-up code (often a bound method of
    # a large object) and the start's status, which holds the finished start nursery.
    class StartUp:
        async def __call__(self, ctx: ActorContext) -> None:
            await trio.sleep(0)

    init = StartUp()
    gone = weakref.ref(init)
    ref = await sup.spawn(idle, init=init)
    del init
    await trio.testing.wait_all_tasks_blocked()
    gc.collect()
    assert gone() is None
    task = next(t for t in sup._by_task if sup._by_task[t].id == ref.id)
    assert task.coro.cr_frame.f_locals["task_status"] is trio.TASK_STATUS_IGNORED
    assert not any(
        type(obj).__name__ == "_TaskStatus" for obj in gc.get_referents(task.coro.cr_frame)
    )


async def test_an_actor_final_and_waiting_for_input_keeps_no_exception(sup: Supervisor) -> None:
    # Its empty mailbox raised WouldBlock; waiting inside that handler had kept the
    # exception, its traceback and a frame alive for as long as the actor waited.
    runs: list[str] = []

    async def answer(ctx: ActorContext) -> str:
        runs.append(ctx.id)
        return "done"

    refs = [await sup.spawn(answer) for _ in range(3)]
    await trio.testing.wait_all_tasks_blocked()
    assert all(is_final(sup.status(ref.id)) for ref in refs)
    gc.collect()
    assert not [obj for obj in gc.get_objects() if isinstance(obj, trio.WouldBlock)]
    await sup.send(refs[0].id, "again")  # and the next message still finds it
    await trio.testing.wait_all_tasks_blocked()
    assert runs.count(refs[0].id) == 2
    assert is_final(sup.status(refs[0].id))


async def test_prepare_runs_in_the_spawners_task_with_no_handshake(sup: Supervisor) -> None:
    # sup's config has max_depth 2: a top-level actor has a nursery, opened by its own
    # task once that runs (after spawn returned).
    order: list[str] = []
    spawner = trio.lowlevel.current_task()

    def prepare(ctx: ActorContext) -> None:
        assert trio.lowlevel.current_task() is spawner
        order.append(f"prepare {ctx.id} {ctx.status.__struct_config__.tag}")

    async def behavior(ctx: ActorContext) -> None:
        order.append("behavior")
        await ctx.receive()

    with sup.subscribe(policy="block") as sub:
        ref = await sup.spawn(behavior, prepare=prepare)
        order.append("spawn returned")
        assert sup.status(ref.id) == RUNNING
        await trio.testing.wait_all_tasks_blocked()
        assert kinds(drain(sub), ref.id) == ["pending_init", "running"]
    assert order[0] == f"prepare {ref.id} pending_init"
    assert order[1:] in (["spawn returned", "behavior"], ["behavior", "spawn returned"])
    # A child spawned at once waits for the parent's nursery instead of failing.
    parent = await sup.spawn(idle, prepare=lambda ctx: None)
    child = await sup.spawn(idle, parent=parent.id)
    assert (child.parent_id, sup.status(child.id)) == (parent.id, RUNNING)
    await sup.close(parent.id)
    assert sup.statistics().tasks == 1
    # A parent closed before its task ran refuses a child; nothing waits for it.
    closed = await sup.spawn(idle, prepare=lambda ctx: sup._request_stop(ctx))
    with trio.fail_after(1), pytest.raises(AgentClosed):
        await sup.spawn(idle, parent=closed.id)


async def test_a_prepare_error_raises_from_spawn_and_the_actor_never_runs(
    sup: Supervisor,
) -> None:
    ran: list[str] = []

    def prepare(ctx: ActorContext) -> None:
        raise OSError("no room")

    async def behavior(ctx: ActorContext) -> None:
        ran.append(ctx.id)

    with sup.subscribe(policy="block") as sub:
        with pytest.raises(AgentStartFailed, match="failed to start: OSError") as info:
            await sup.spawn(behavior, prepare=prepare, nickname="Zed")
        assert isinstance(info.value.__cause__, OSError)
        agent_id = info.value.agent_id
        assert kinds(drain(sub), agent_id) == ["pending_init", "errored"]
    await trio.testing.wait_all_tasks_blocked()
    assert ran == []
    assert sup.status(agent_id) == Errored("failed to start: OSError: no room")
    stats = sup.statistics()
    assert (stats.live, stats.failed_spawns, stats.tasks) == (0, 1, 0)
    assert (await sup.spawn(idle, nickname="Zed")).nickname == "Zed"  # the name was freed


async def test_an_actor_closed_before_its_task_ran_still_runs_its_behavior_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Running since spawn, so it gets to wind up: its behavior sees ``stopping`` and
    its stop callback at once (the runtime writes its result there)."""
    seen: list[tuple[bool, bool]] = []

    async def behavior(ctx: ActorContext) -> str:
        called: list[bool] = []
        ctx.on_stop(lambda: called.append(True))
        seen.append((ctx.stopping, bool(called)))
        return "wound up"

    def stop_at_once(ctx: ActorContext) -> None:
        sup._request_stop(ctx)  # close()'s synchronous first step, before the task can run

    async with open_supervisor(config(max_depth=1, close_grace_period=5)) as sup:
        top = await sup.spawn(behavior, prepare=stop_at_once)  # has a nursery: not a leaf
        leaf = await sup.spawn(behavior, parent=await sup.spawn(idle), prepare=stop_at_once)
        start = trio.current_time()
        await sup.close(top.id)
        await sup.close(leaf.id)
        assert trio.current_time() - start < 1
        assert sup.status(top.id) == sup.status(leaf.id) == SHUTDOWN
    assert seen == [(True, True), (True, True)]


async def test_spawning_in_a_loop_yields_to_the_actors_spawned(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Near max_threads each spawn is a scheduling point (no burst): quick actors end
    while the loop goes on, and none of the 20 spawns is refused."""

    async def quick(ctx: ActorContext) -> str:
        await trio.sleep(0)
        return "done"

    async with open_supervisor(config(max_threads=3, max_depth=0)) as sup:
        for _ in range(20):
            await sup.spawn(quick, auto_close=True)
        assert sup.statistics().spawned == 20


async def done(ctx: ActorContext) -> str:
    return "done"


@pytest.mark.parametrize("max_depth", [0, 1])
async def test_a_loop_of_spawns_yields_once_a_burst_while_there_is_room(max_depth: int) -> None:
    """With room under max_threads, a loop of spawns yields once every SPAWN_BURST spawns
    (the first of each burst), and every actor it spawned runs: leaves (``max_depth`` 0),
    and actors with no start-up code that have a nursery for children (1; issue 17: no
    ``nursery.start`` handshake for them)."""
    burst = _supervisor.SPAWN_BURST
    assert burst > 1
    async with open_supervisor(config(max_threads=4 * burst, max_depth=max_depth)) as sup:

        async def loop() -> None:
            for _ in range(2 * burst + 1):
                await sup.spawn(done, auto_close=True)

        assert await steps_of(loop) == 3
        await trio.testing.wait_all_tasks_blocked()
        assert sup.statistics().spawned == 2 * burst + 1
        assert sup.statistics().live == 0


async def test_an_actor_with_no_start_up_code_below_max_depth_starts_at_once() -> None:
    """Issue 17: an actor with neither ``init`` nor ``prepare`` that may have children (below
    ``max_depth``: its own nursery) is marked Running and scheduled at once, as a leaf is,
    not started through a ``nursery.start`` handshake: a spawn in a burst does not yield at
    all, and a child spawned under one before its task ran waits for its nursery."""
    async with open_supervisor(config(max_threads=64, max_depth=1)) as sup:
        await sup.spawn(idle)  # the first of a burst: yields
        with trio.testing.assert_no_checkpoints():
            parent = await sup.spawn(idle)  # in the burst: its task has not run
        assert sup.status(parent.id) == RUNNING
        with trio.fail_after(1):  # waits for the parent's nursery, not forever
            child = await sup.spawn(idle, parent=parent.id)
        assert (child.parent_id, child.depth, sup.status(child.id)) == (parent.id, 1, RUNNING)
        await sup.close(parent.id)
        assert is_final(sup.status(child.id))


async def test_every_spawn_yields_without_room_for_a_burst() -> None:
    """Without room under max_threads for a whole burst more, each spawn yields."""
    async with open_supervisor(config(max_threads=_supervisor.SPAWN_BURST, max_depth=0)) as sup:

        async def loop() -> None:
            for _ in range(5):
                await sup.spawn(done, auto_close=True)

        assert await steps_of(loop) == 5


async def test_a_spawn_after_its_caller_yielded_yields_again() -> None:
    """A burst is spawns in one step of the caller: once it yielded elsewhere, its next
    spawn yields as the first one did."""
    async with open_supervisor(config(max_threads=64, max_depth=0)) as sup:

        async def spawns() -> None:
            await sup.spawn(done, auto_close=True)  # yields
            await sup.spawn(done, auto_close=True)  # in the burst: does not
            await trio.sleep(0)  # yields
            await sup.spawn(done, auto_close=True)  # yields: a new burst

        assert await steps_of(spawns) == 3


async def test_a_start_up_error_raises_from_spawn_and_releases_the_slot(sup: Supervisor) -> None:
    async def init(ctx: ActorContext) -> None:
        raise OSError("disk on fire")

    with sup.subscribe(policy="block") as sub:
        with pytest.raises(AgentStartFailed, match="failed to start: OSError") as info:
            await sup.spawn(scripted, init=init)
        assert isinstance(info.value.__cause__, OSError)
        agent_id = info.value.agent_id
        assert kinds(drain(sub), agent_id) == ["pending_init", "errored"]
    assert sup.status(agent_id) == Errored("failed to start: OSError: disk on fire")
    stats = sup.statistics()
    assert (stats.live, stats.failed_spawns, stats.tasks) == (0, 1, 0)


async def test_children_get_depth_and_run_in_their_parent(sup: Supervisor) -> None:
    parent = await sup.spawn(scripted)
    child = await sup.spawn(scripted, parent=parent.id)
    grandchild = await sup.spawn(scripted, parent=child.id)
    assert (child.depth, child.parent_id) == (1, parent.id)
    assert (grandchild.depth, grandchild.parent_id) == (2, child.id)
    rows = {row.id: row for row in sup.list()}
    assert rows[grandchild.id].parent_id == child.id


# -- limits -----------------------------------------------------------------------


async def test_max_threads_fails_fast_with_what_to_do() -> None:
    async with open_supervisor(config(max_threads=2)) as sup:
        await sup.spawn(scripted)
        await sup.spawn(scripted)
        with pytest.raises(AgentLimitReached, match=re.escape("max_threads=2")) as info:
            await sup.spawn(scripted)
        assert "Wait for one to finish or close one" in str(info.value)
        assert sup.statistics().failed_spawns == 1


async def test_max_depth_fails_fast_with_the_design_message() -> None:
    async with open_supervisor(config(max_depth=1)) as sup:
        lead = await sup.spawn(scripted)
        child = await sup.spawn(scripted, parent=lead.id)
        with pytest.raises(DepthLimitReached) as info:
            await sup.spawn(scripted, parent=child.id)
        assert str(info.value) == (
            "Agent depth limit reached (max_depth=1). Solve the task yourself."
        )


async def test_a_slot_is_released_exactly_once_on_every_path(sup: Supervisor) -> None:
    done = await sup.spawn(scripted)
    failed = await sup.spawn(scripted)
    closed = await sup.spawn(scripted)
    hung = await sup.spawn(scripted)
    assert sup.statistics().live == 4
    await sup.send(done.id, ("finish", "ok"))
    await sup.send(failed.id, ("fail", "boom"))
    await sup.send(hung.id, ("hang",))
    await sup.close(closed.id)
    await trio.testing.wait_all_tasks_blocked()
    assert sup.statistics().live == 1
    await sup.close(hung.id, grace=0)
    await sup.close(done.id)  # final already: no slot to give back, and it ends Shutdown
    stats = sup.statistics()
    assert (stats.live, stats.peak_live, stats.completed, stats.errored, stats.shutdown) == (
        0,
        4,
        1,
        1,
        3,
    )


async def test_revival_takes_a_slot_and_can_hit_the_limit() -> None:
    async with open_supervisor(config(max_threads=1)) as sup:
        first = await sup.spawn(scripted)
        await sup.send(first.id, ("finish", "one"))
        await trio.testing.wait_all_tasks_blocked()
        second = await sup.spawn(scripted)  # the slot came back
        with pytest.raises(AgentLimitReached):
            await sup.send(first.id, ("finish", "again"))
        with pytest.raises(AgentLimitReached):
            sup.send_nowait(first.id, ("finish", "again"))
        await sup.close(second.id)
        await sup.send(first.id, ("finish", "two"))
        result = await sup.wait([first.id], timeout=1)
        assert result.statuses[first.id] == Completed("two")
        assert sup.statistics().revived == 1


# -- routing ----------------------------------------------------------------------------


async def test_unknown_and_closed_ids_get_typed_errors(sup: Supervisor) -> None:
    with pytest.raises(AgentNotFound, match="No agent with id 'nope'"):
        await sup.send("nope", "x")
    with pytest.raises(AgentNotFound):
        sup.send_nowait("nope", "x")
    with pytest.raises(AgentNotFound):
        await sup.close("nope")
    with pytest.raises(AgentNotFound):
        sup.info("nope")
    assert sup.status("nope") == NOT_FOUND
    ref = await sup.spawn(scripted)
    await sup.close(ref.id)
    with pytest.raises(AgentClosed, match="is closed and takes no more input"):
        await sup.send(ref.id, "x")
    with pytest.raises(AgentClosed):
        await sup.spawn(scripted, parent=ref.id)


async def test_send_waits_when_the_mailbox_is_full_and_send_nowait_raises() -> None:
    async with open_supervisor(config(mailbox_size=2)) as sup:
        ref = await sup.spawn(stubborn)
        await sup.send(ref.id, 1)
        sup.send_nowait(ref.id, 2)
        with pytest.raises(MailboxFull, match="full \\(2 messages\\)"):
            sup.send_nowait(ref.id, 3)
        with trio.move_on_after(1) as scope:
            await sup.send(ref.id, 3)  # backpressure: waits for room
        assert scope.cancelled_caught
        await sup.close(ref.id, grace=0)


async def test_a_blocked_sender_is_released_when_the_agent_closes() -> None:
    async with open_supervisor(config(mailbox_size=1)) as sup:
        ref = await sup.spawn(stubborn)
        await sup.send(ref.id, 1)
        errors: list[BaseException] = []

        async def sender() -> None:
            try:
                await sup.send(ref.id, 2)
            except AgentClosed as exc:
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            await trio.testing.wait_all_tasks_blocked()
            await sup.close(ref.id, grace=0)
        assert len(errors) == 1


async def test_ask_gets_the_reply_through_the_actor(sup: Supervisor) -> None:
    ref = await sup.spawn(scripted)
    assert await sup.ask(ref.id, 7, timeout=1) == ("pong", 7)


async def test_ask_times_out_at_its_deadline(autojump_clock: trio.abc.Clock) -> None:
    async with open_supervisor(config()) as sup:
        ref = await sup.spawn(stubborn)
        start = trio.current_time()
        with pytest.raises(ReplyTimeout, match=re.escape("did not reply within 2.5 s")):
            await sup.ask(ref.id, "anyone?", timeout=2.5)
        assert trio.current_time() - start == pytest.approx(2.5)
        await sup.close(ref.id, grace=0)


async def test_ask_fails_fast_when_the_agent_ends_without_replying(sup: Supervisor) -> None:
    async def rude(ctx: ActorContext) -> str:
        await ctx.receive()
        return "ignored it"

    ref = await sup.spawn(rude)
    with pytest.raises(NoReply, match="finished without replying"):
        await sup.ask(ref.id, "hello?", timeout=60)
    closing = await sup.spawn(stubborn)
    async with trio.open_nursery() as nursery:

        async def ask() -> None:
            with pytest.raises(NoReply):
                await sup.ask(closing.id, "hello?", timeout=60)

        nursery.start_soon(ask)
        await trio.testing.wait_all_tasks_blocked()
        await sup.close(closing.id, grace=0)


async def test_a_childs_completion_reaches_its_parents_mailbox(sup: Supervisor) -> None:
    notices: list[ChildFinished] = []

    async def parent(ctx: ActorContext) -> None:
        child = await ctx.spawn(scripted)
        await ctx.send(child.id, ("finish", "42"))
        notice = await ctx.receive()
        assert isinstance(notice, ChildFinished)
        notices.append(notice)

    ref = await sup.spawn(parent)
    await sup.wait([ref.id], timeout=1)
    (notice,) = notices
    assert notice.status == Completed("42")
    assert notice.nickname == "Alan"


async def test_notices_wait_for_an_idle_parent_without_reviving_it(sup: Supervisor) -> None:
    parent = await sup.spawn(scripted)
    child = await sup.spawn(scripted, parent=parent.id)
    await sup.send(parent.id, ("finish", "parent done"))
    await trio.testing.wait_all_tasks_blocked()
    await sup.send(child.id, ("finish", "child done"))
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(parent.id) == Completed("parent done")  # not revived by the notice


async def test_input_queued_while_running_starts_a_new_run(sup: Supervisor) -> None:
    async def slow(ctx: ActorContext) -> str:
        message = await ctx.receive()
        await trio.sleep(0)
        return str(message)

    with sup.subscribe(policy="block") as sub:
        ref = await sup.spawn(slow)
        sup.send_nowait(ref.id, "first")
        sup.send_nowait(ref.id, "second")
        await trio.testing.wait_all_tasks_blocked()
        assert kinds(drain(sub), ref.id) == [
            "pending_init",
            "running",
            "completed",
            "running",
            "completed",
        ]
    assert sup.status(ref.id) == Completed("second")


async def test_an_actor_with_queued_input_is_never_seen_final_by_another_task(
    sup: Supervisor,
) -> None:
    """A run that ends with input already queued revives in the same step: a task woken
    by the final status (a ``wait`` for ``all``) finds the actor running again, not at
    rest with work waiting (what a team's ``settled`` would take for done)."""
    seen: list[object] = []
    # Trio runs a batch of woken tasks in either order, so one round could pass by luck.
    for _ in range(20):
        release = trio.Event()

        async def held(ctx: ActorContext, release: trio.Event = release) -> str:
            message = await ctx.receive()
            if message == "first":
                await release.wait()
            return str(message)

        ref = await sup.spawn(held)
        sup.send_nowait(ref.id, "first")
        await trio.testing.wait_all_tasks_blocked()
        sup.send_nowait(ref.id, "second")  # queued: the actor is in its first run

        async def watcher(agent_id: str = ref.id) -> None:
            await sup.wait([agent_id], timeout=60, mode="all")
            seen.append(sup.status(agent_id))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watcher)
            await trio.testing.wait_all_tasks_blocked()
            release.set()
        await sup.close(ref.id)
    assert seen == [Completed("second")] * 20


# -- wait -------------------------------------------------------------------------------


async def test_wait_any_all_and_unknown_ids(autojump_clock: trio.abc.Clock) -> None:
    async with open_supervisor(config()) as sup:
        a = await sup.spawn(scripted)
        b = await sup.spawn(scripted)

        async def finish_later() -> None:
            await trio.sleep(1)
            await sup.send(a.id, ("finish", "a"))
            await trio.sleep(1)
            await sup.send(b.id, ("fail", "b"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(finish_later)
            start = trio.current_time()
            first = await sup.wait([a.id, b.id], timeout=10)
            assert (first.timed_out, trio.current_time() - start) == (False, 1)
            assert first.statuses == {a.id: Completed("a"), b.id: RUNNING}
            both = await sup.wait([a.id, b.id], timeout=10, mode="all")
            assert both.statuses[b.id] == Errored("RuntimeError: b")
        unknown = await sup.wait(["ghost"], timeout=10)
        assert unknown.statuses == {"ghost": NOT_FOUND}
        assert not unknown.timed_out
        assert (await sup.wait([], timeout=10)).timed_out is False


async def test_wait_has_a_hard_deadline(autojump_clock: trio.abc.Clock) -> None:
    async with open_supervisor(config()) as sup:
        ref = await sup.spawn(scripted)
        start = trio.current_time()
        result = await sup.wait([ref.id], timeout=30)
        assert result.timed_out
        assert result.statuses == {ref.id: RUNNING}
        assert trio.current_time() - start == pytest.approx(30)


async def test_wait_counts_an_end_even_when_the_agent_is_revived_at_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Each end is counted as it happens: an agent that finished, then took its queued
    input in the same step (so it was never seen final by a scan), still counts."""
    async with open_supervisor(config()) as sup:
        a = await sup.spawn(scripted)
        b = await sup.spawn(scripted)

        async def later() -> None:
            await trio.sleep(1)
            sup.send_nowait(a.id, ("finish", "a"))
            sup.send_nowait(a.id, ("hang",))  # revives it the moment it is final
            await trio.sleep(1)
            await sup.send(b.id, ("finish", "b"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(later)
            start = trio.current_time()
            both = await sup.wait([a.id, b.id], timeout=10, mode="all")
        assert (both.timed_out, trio.current_time() - start) == (False, 2)
        assert both.statuses == {a.id: RUNNING, b.id: Completed("b")}
        assert sup._watchers == {}  # nothing left behind


async def test_waits_that_end_or_time_out_leave_no_watch_behind(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_supervisor(config()) as sup:
        refs = [await sup.spawn(scripted) for _ in range(3)]
        ids = [r.id for r in refs]
        results: list[Any] = []

        async def waiter(mode: str, timeout: float) -> None:
            results.append(await sup.wait(ids, timeout=timeout, mode=mode))  # type: ignore[arg-type]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter, "any", 10)
            nursery.start_soon(waiter, "all", 5)  # two waits watch the same agents
            await trio.testing.wait_all_tasks_blocked()
            assert set(sup._watchers) == set(ids)
            await sup.send(ids[0], ("finish", "x"))
        assert [r.timed_out for r in results] == [False, True]
        assert sup._watchers == {}


@pytest.mark.parametrize("timeout", [-1, float("inf"), float("nan"), 10**400, "5", None])
async def test_wait_rejects_timeouts_that_are_not_a_deadline(
    sup: Supervisor, timeout: object
) -> None:
    with pytest.raises(InvalidConfiguration, match="every wait in subagents has one"):
        await sup.wait(["x"], timeout=timeout)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfiguration):
        await sup.wait(["x"], timeout=1, mode="some")  # type: ignore[arg-type]


# -- close ---------------------------------------------------------------------------------


async def test_close_lets_a_cooperative_agent_stop_within_grace(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_supervisor(config(close_grace_period=5)) as sup:
        ref = await sup.spawn(scripted)
        start = trio.current_time()
        assert await sup.close(ref.id) == RUNNING
        assert trio.current_time() == start  # it stopped at once: its receive ended
        assert sup.status(ref.id) == SHUTDOWN


async def test_a_settled_outcome_stands_when_a_stop_comes_before_the_behavior_returns(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Issue 17: an agent whose result is on disk as completed, waiting for its fsync, is
    reported completed even if it is closed meanwhile (then it stops); unsettled, Shutdown."""
    release = trio.Event()

    async def settles(ctx: ActorContext) -> str:
        ctx.settle()
        with trio.CancelScope(shield=True):
            await release.wait()
        return "done"

    async def does_not(ctx: ActorContext) -> str:
        with trio.CancelScope(shield=True):
            await release.wait()
        return "done"

    async with open_supervisor(config(close_grace_period=5)) as sup:
        settled = await sup.spawn(settles)
        plain = await sup.spawn(does_not)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sup.close, settled.id)
            nursery.start_soon(sup.close, plain.id)
            await trio.testing.wait_all_tasks_blocked()
            release.set()
        assert sup.status(settled.id) == Completed("done")
        assert sup.status(plain.id) == SHUTDOWN


async def test_close_cancels_an_agent_that_ignores_it_after_the_grace_period(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_supervisor(config(close_grace_period=5)) as sup:
        ref = await sup.spawn(stubborn)
        start = trio.current_time()
        assert await sup.close(ref.id) == RUNNING
        assert trio.current_time() - start == pytest.approx(5)
        assert sup.status(ref.id) == SHUTDOWN
        assert sup.statistics().tasks == 0


async def test_the_close_ladder_is_shielded_from_the_callers_cancellation(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_supervisor(config(close_grace_period=5)) as sup:
        ref = await sup.spawn(stubborn)
        with trio.move_on_after(1):
            await sup.close(ref.id)
        assert sup.status(ref.id) == SHUTDOWN  # the ladder finished before the cancel landed


async def test_on_stop_lets_a_busy_actor_stop_at_once_through_its_subtree(
    autojump_clock: trio.abc.Clock,
) -> None:
    calls: list[str] = []

    async def busy(ctx: ActorContext) -> str:
        # Never reads its mailbox: only the stop callback can end its work early.
        with trio.CancelScope() as scope:
            ctx.on_stop(lambda: (calls.append(ctx.id), scope.cancel()))
            await trio.sleep_forever()
        ctx.on_stop(lambda: calls.append("late"))  # stopping already: called at once
        return "stopped"

    async def unregisters(ctx: ActorContext) -> str:
        ctx.on_stop(lambda: calls.append("removed"))
        ctx.on_stop(None)
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with open_supervisor(config(close_grace_period=5)) as sup:
        parent = await sup.spawn(busy)
        child = await sup.spawn(busy, parent=parent.id)
        removed = await sup.spawn(unregisters)
        start = trio.current_time()
        await sup.close(parent.id)
        assert trio.current_time() == start  # no grace period spent, no cancel needed
        assert sorted(calls) == sorted([parent.id, child.id, "late", "late"])
        await sup.close(parent.id)  # called once: a second close calls nothing
        await sup.close(removed.id, grace=0)
        assert "removed" not in calls
        assert len(calls) == 4


async def test_close_ends_the_whole_subtree_and_is_idempotent(sup: Supervisor) -> None:
    with sup.subscribe(policy="block") as sub:
        parent = await sup.spawn(scripted)
        child = await sup.spawn(scripted, parent=parent.id)
        grandchild = await sup.spawn(stubborn, parent=child.id)
        done = await sup.spawn(scripted, parent=parent.id)
        await sup.send(done.id, ("finish", "kept"))
        await trio.testing.wait_all_tasks_blocked()
        assert await sup.close(parent.id, grace=0.1) == RUNNING
        assert await sup.close(parent.id) == SHUTDOWN
        events = drain(sub)
    for agent in (parent, child, grandchild):
        assert sup.status(agent.id) == SHUTDOWN
        assert kinds(events, agent.id)[-1] == "shutdown"
    assert sup.status(done.id) == SHUTDOWN  # a finished agent closed ends Shutdown too
    assert kinds(events, done.id)[-2:] == ["completed", "shutdown"]
    finals = [e.agent_id for e in events if isinstance(e, StatusChanged) and e.status == SHUTDOWN]
    assert finals.index(grandchild.id) < finals.index(child.id) < finals.index(parent.id)
    assert sup.statistics().open == 0


async def test_closing_a_finished_agent_records_shutdown(sup: Supervisor) -> None:
    """Codex's ``close_agent`` returns the previous status and shuts the thread down, a
    finished one included (openai/codex ``codex-rs/core/src/tools/handlers/multi_agents/
    close_agent.rs``: ``previous_status``; ``agent/control.rs``: ``shutdown_live_agent``
    sends ``Op::Shutdown`` unless the status is Shutdown already)."""
    with sup.subscribe(policy="block") as sub:
        ref = await sup.spawn(scripted)
        failed = await sup.spawn(scripted)
        await sup.send(ref.id, ("finish", "result"))
        await sup.send(failed.id, ("fail", "boom"))
        await trio.testing.wait_all_tasks_blocked()
        assert await sup.close(ref.id) == Completed("result")
        assert isinstance(await sup.close(failed.id), Errored)
        events = drain(sub)
    assert sup.status(ref.id) == SHUTDOWN
    assert sup.status(failed.id) == SHUTDOWN
    assert sup.info(ref.id).closed
    assert kinds(events, ref.id)[-2:] == ["completed", "shutdown"]
    assert kinds(events, failed.id)[-2:] == ["errored", "shutdown"]
    assert await sup.close(ref.id) == SHUTDOWN  # idempotent
    assert sup.statistics().live == 0


async def test_a_closed_child_sends_its_parent_no_finished_notice(sup: Supervisor) -> None:
    """The parent closed it: a notice would tell it what it already knows."""
    seen: list[object] = []

    async def parent(ctx: ActorContext) -> None:
        while True:
            seen.append(await ctx.receive())

    lead = await sup.spawn(parent)
    running = await sup.spawn(scripted, parent=lead.id)
    finished = await sup.spawn(scripted, parent=lead.id)
    await sup.send(finished.id, ("finish", "done"))
    await trio.testing.wait_all_tasks_blocked()
    assert [type(m).__name__ for m in seen] == ["ChildFinished"]  # the one that finished
    await sup.close(running.id)
    await sup.close(finished.id)
    await trio.testing.wait_all_tasks_blocked()
    assert len(seen) == 1


async def test_an_actor_may_close_itself(sup: Supervisor) -> None:
    async def quitter(ctx: ActorContext) -> None:
        await ctx.close(ctx.id)
        await trio.sleep_forever()

    ref = await sup.spawn(quitter)
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(ref.id) == SHUTDOWN


async def test_auto_close_retires_the_actor_when_it_returns(sup: Supervisor) -> None:
    ref = await sup.spawn(idle, auto_close=True)
    await sup.send(ref.id, "go")
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(ref.id) == Completed(None)
    with pytest.raises(AgentClosed):
        await sup.send(ref.id, "again")


# -- failure isolation and exit ---------------------------------------------------------------


async def test_an_error_in_one_actor_leaves_the_others_running(sup: Supervisor) -> None:
    bad = await sup.spawn(scripted)
    good = await sup.spawn(scripted)
    await sup.send(bad.id, ("fail", "kaput"))
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(bad.id) == Errored("RuntimeError: kaput")
    assert await sup.ask(good.id, "still there?", timeout=1) == ("pong", "still there?")


async def test_a_behavior_returning_a_non_string_is_an_error(sup: Supervisor) -> None:
    async def wrong(ctx: ActorContext) -> Any:
        return 42

    ref = await sup.spawn(wrong)
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(ref.id) == Errored(
        "the behavior returned a int; an actor's result must be a str or None"
    )


async def test_keyboard_interrupt_is_never_swallowed() -> None:
    async def interrupt(ctx: ActorContext) -> None:
        raise KeyboardInterrupt

    with pytest.RaisesGroup(KeyboardInterrupt, flatten_subgroups=True):
        async with open_supervisor(config()) as sup:
            await sup.spawn(interrupt)
            await trio.sleep_forever()


async def test_leaving_the_scope_ends_every_actor_with_shutdown() -> None:
    bus = Bus()
    with bus.subscribe(policy="block") as sub:
        async with open_supervisor(config(close_grace_period=0.1), bus=bus) as sup:
            ids = [(await sup.spawn(scripted)).id for _ in range(2)]
            ids.append((await sup.spawn(stubborn, parent=ids[0])).id)
            done = await sup.spawn(scripted)
            await sup.send(done.id, ("finish", "r"))
            await sup.wait([done.id], timeout=1)
        events = drain(sub)
    for agent_id in ids:
        assert kinds(events, agent_id)[-1] == "shutdown"
    assert kinds(events, done.id)[-1] == "completed"
    stats = sup.statistics()
    assert (stats.tasks, stats.live, stats.open) == (0, 0, 0)
    with pytest.raises(SupervisorClosed):
        await sup.spawn(scripted)


async def test_cancelling_the_scope_ends_every_actor_and_the_cancel_propagates() -> None:
    bus = Bus()
    sub = bus.subscribe(policy="block")
    with trio.CancelScope() as outer:
        async with open_supervisor(config(), bus=bus) as sup:
            ref = await sup.spawn(stubborn)
            outer.cancel()
            await trio.sleep_forever()
    assert outer.cancelled_caught
    assert kinds(drain(sub), ref.id)[-1] == "shutdown"
    assert sup.statistics().tasks == 0


async def test_an_error_in_the_body_propagates_unchanged_after_the_actors_end() -> None:
    with pytest.raises(LookupError, match="from the body"):
        async with open_supervisor(config()) as sup:
            ref = await sup.spawn(stubborn)
            raise LookupError("from the body")
    assert sup.status(ref.id) == SHUTDOWN


async def test_lossless_subscribers_see_every_event_in_order(sup: Supervisor) -> None:
    with sup.subscribe(policy=OverflowPolicy.BLOCK, capacity=10_000) as sub:
        refs = [await sup.spawn(scripted) for _ in range(4)]
        for ref in refs:
            await sup.send(ref.id, ("finish", ref.id))
        await trio.testing.wait_all_tasks_blocked()
        events = drain(sub)
    seqs = [e.seq for e in events]  # type: ignore[union-attr]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    for ref in refs:
        assert kinds(events, ref.id) == ["pending_init", "running", "completed"]


async def test_subtree_subscription_follows_descendants(sup: Supervisor) -> None:
    parent = await sup.spawn(scripted)
    child = await sup.spawn(scripted, parent=parent.id)
    other = await sup.spawn(scripted)
    with sup.subscribe(subtree=parent.id, types=[StatusChanged]) as sub:
        grandchild = await sup.spawn(scripted, parent=child.id)
        for ref in (child, other, grandchild):
            await sup.send(ref.id, ("finish", "x"))
        await trio.testing.wait_all_tasks_blocked()
        seen = {e.agent_id for e in drain(sub)}  # type: ignore[union-attr]
    assert seen == {child.id, grandchild.id}


async def test_list_and_statistics(sup: Supervisor) -> None:
    a = await sup.spawn(scripted, label="explore")
    b = await sup.spawn(scripted)
    await sup.close(b.id)
    assert [(row.id, row.label, row.closed) for row in sup.list()] == [(a.id, "explore", False)]
    everything = sup.list(include_closed=True)
    assert {row.id for row in everything} == {a.id, b.id}
    stats = sup.statistics()
    assert (stats.spawned, stats.open, stats.live, stats.max_threads) == (2, 1, 1, 4)


async def test_retired_records_are_bounded() -> None:
    async with open_supervisor(config(retain_closed=2)) as sup:
        ids = []
        for _ in range(4):
            ref = await sup.spawn(scripted)
            await sup.close(ref.id)
            ids.append(ref.id)
        assert [row.id for row in sup.list(include_closed=True)] == ids[2:]
        assert sup.status(ids[0]) == NOT_FOUND


async def test_a_closed_actors_nickname_comes_back_only_to_a_resume() -> None:
    """Codex: nicknames are not reused until the pool resets; a resume restores its own."""
    async with open_supervisor(config(nicknames=["Solo"])) as sup:
        first = await sup.spawn(scripted)
        second = await sup.spawn(scripted)
        assert (first.nickname, second.nickname) == ("Solo", "Solo the 2nd")
        await sup.close(first.id)
        assert (await sup.spawn(scripted)).nickname == "Solo the 3rd"
        back = await sup.spawn(scripted, nickname="Solo", agent_id=first.id)
        assert back.nickname == "Solo"
        assert (await sup.spawn(scripted, nickname="Solo")).nickname == "Solo the 4th"


async def test_ask_deadlines_out_of_order_each_expire_on_time(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with open_supervisor(config()) as sup:
        ref = await sup.spawn(stubborn)
        expired: dict[float, float] = {}

        async def ask(timeout: float) -> None:
            start = trio.current_time()
            with pytest.raises(ReplyTimeout):
                await sup.ask(ref.id, timeout, timeout=timeout)
            expired[timeout] = trio.current_time() - start

        async with trio.open_nursery() as nursery:
            for timeout in (5.0, 2.0, 7.0, 1.0):  # later deadlines first, then earlier ones
                nursery.start_soon(ask, timeout)
        assert expired == {5.0: 5.0, 2.0: 2.0, 7.0: 7.0, 1.0: 1.0}
        await sup.close(ref.id, grace=0)


async def test_close_cancels_a_leaf_that_ignores_it(autojump_clock: trio.abc.Clock) -> None:
    """A leaf (at max_depth) has no nursery; the ladder must cancel its own scope."""
    async with open_supervisor(config(max_depth=0, close_grace_period=2)) as sup:
        ref = await sup.spawn(stubborn)
        await trio.testing.wait_all_tasks_blocked()  # inside its behavior, ignoring stops
        start = trio.current_time()
        assert await sup.close(ref.id) == RUNNING
        assert trio.current_time() - start == pytest.approx(2)
        assert sup.status(ref.id) == SHUTDOWN
        assert sup.statistics().unresponsive == 0


async def test_a_leaf_may_close_itself(sup: Supervisor) -> None:
    async def quitter(ctx: ActorContext) -> None:
        await ctx.close(ctx.id)
        await trio.sleep_forever()

    lead = await sup.spawn(scripted)
    child = await sup.spawn(scripted, parent=lead.id)
    leaf = await sup.spawn(quitter, parent=child.id)  # depth 2 == max_depth
    await trio.testing.wait_all_tasks_blocked()
    assert sup.status(leaf.id) == SHUTDOWN


async def test_an_unread_child_notice_does_not_revive_a_completed_parent(
    sup: Supervisor,
) -> None:
    async def parent(ctx: ActorContext) -> str:
        child = await ctx.spawn(idle)
        await ctx.send(child.id, "go")  # the child finishes; its notice lands unread
        await ctx.wait([child.id], timeout=5)
        return "parent done"

    with sup.subscribe(policy="block") as sub:
        ref = await sup.spawn(parent)
        await trio.testing.wait_all_tasks_blocked()
        assert kinds(drain(sub), ref.id) == ["pending_init", "running", "completed"]
    assert sup.status(ref.id) == Completed("parent done")


async def test_a_lossless_subscriber_with_a_small_buffer_sees_every_spawn_event() -> None:
    bus = Bus()
    got: list[Any] = []
    # a spawn publishes a burst of three events: a lossless buffer holds a burst
    with bus.subscribe(policy="block", capacity=3, max_block=60) as sub:

        async def reader() -> None:
            async for event in sub:
                got.append(event)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            async with open_supervisor(config(), bus=bus) as sup:
                for _ in range(3):
                    await sup.spawn(scripted)
            sub.close()
    assert sub.dropped == 0
    assert not any(isinstance(e, Lagged) for e in got)
    assert sum(isinstance(e, AgentSpawned) for e in got) == 3


async def test_current_agent_names_the_agent_whose_task_is_running(sup: Supervisor) -> None:
    seen: list[str | None] = []

    async def looks(ctx: ActorContext) -> None:
        seen.append(sup.current_agent())
        async with trio.open_nursery() as nursery:  # a task the agent started, as a tool call
            nursery.start_soon(lambda: _record(seen, sup))

    ref = await sup.spawn(looks)
    await trio.testing.wait_all_tasks_blocked()
    assert seen == [ref.id, ref.id]
    assert sup.current_agent() is None  # the test's own task is no agent's


async def _record(seen: list[str | None], sup: Supervisor) -> None:
    seen.append(sup.current_agent())
