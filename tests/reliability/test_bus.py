"""Reliability of the bus under a real runtime: stuck, slow and crashing subscribers.

A lead agent fans out to three workers through the ``spawn_agent`` tool while
the test hangs misbehaving subscribers on the runtime's bus:

- a ``drop_oldest`` subscriber that never reads costs the run no (virtual)
  time at all; it keeps its newest events, counts what it lost and marks the
  gap with one :class:`~subagents.actors.Lagged`, while a lossless subscriber
  beside it sees every event, in strictly increasing ``seq``, with no gap;
- ``block`` subscribers that never read hold each publish at most
  ``max_block`` seconds (not the sum over stuck subscribers), then fall back
  to dropping with a marker, as DESIGN.md says, and the agents finish;
- a consumer that raises keeps its exception in its own task: the agents and
  the other subscribers carry on, and leaving its ``with`` block releases the
  subscription, so it holds no publisher afterwards.

The unit tests of the bus itself (policies, filters, markers, close) are in
``tests/actors/test_bus.py``; this file proves the same promises end to
end, with agents publishing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import (
    Bus,
    Completed,
    Event,
    Lagged,
    Subscription,
)
from subagents.runtime import (
    ModelRequest,
    Reply,
    ScriptedProvider,
    ScriptedToolCall,
    TurnStarted,
)
from tests.runtime.helpers import SlowTool
from tests.runtime.world import World, tool_results

WORKERS = 3
STALLED_CAPACITY = 4


def lead_policy(request: ModelRequest) -> Reply:
    """Spawn the workers, then answer (their end notices wait for a next run that never comes)."""
    if request.turn == 0:
        return Reply(
            text="Fanning out.",
            tool_calls=tuple(
                ScriptedToolCall("spawn_agent", {"agent_type": "worker", "message": f"Job {n}."})
                for n in range(WORKERS)
            ),
        )
    spawned = [json.loads(r.content)["agent_id"] for r in tool_results(request.messages)]
    return Reply(text=f"Spawned {len(spawned)} workers.")


def make_world(root: Path) -> World:
    world = World(root)
    world.agent("lead", tools="spawn_agent, wait", maxTurns=10)
    world.agent("worker", tools="Note")
    return world


def make_provider(latency: float = 1.0, tool_seconds: float = 0.5) -> ScriptedProvider:
    worker = testing.tool_loop("Note", {"text": "n", "seconds": tool_seconds}, turns=3, final="ok")
    return ScriptedProvider(policies={"lead": lead_policy, "worker": worker}, latency=latency)


async def collect(subscription: Subscription, into: list[tuple[float, Event | Lagged]]) -> None:
    """Read ``subscription`` until it is closed, noting the (virtual) time of each arrival."""
    async for event in subscription:
        into.append((trio.current_time(), event))


async def run_lead(
    root: Path, bus: Bus, provider: ScriptedProvider
) -> tuple[float, list[tuple[float, Event | Lagged]], Any]:
    """Run the lead to the end with a lossless reader on ``bus``: (duration, arrivals, runtime)."""
    arrivals: list[tuple[float, Event | Lagged]] = []
    with bus.subscribe(policy="block", capacity=100_000) as lossless:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(collect, lossless, arrivals)
            async with make_world(root).open(provider, bus=bus, tools=[SlowTool("Note")]) as rt:
                start = trio.current_time()
                lead = await rt.spawn("lead", "Lead the work.")
                await finish_all(rt, lead.agent_id)
                duration = trio.current_time() - start
            lossless.close()
    return duration, arrivals, rt


async def finish_all(rt: Any, lead: str) -> None:
    """Wait until the lead and its workers are all final, and check they all succeeded."""
    waited = await rt.wait([lead], timeout=1000)
    assert not waited.timed_out
    assert rt.status(lead) == Completed(f"Spawned {WORKERS} workers.")
    workers = [row.id for row in rt.list() if row.parent_id == lead]
    assert len(workers) == WORKERS
    waited = await rt.wait(workers, timeout=1000, mode="all")
    assert not waited.timed_out
    assert [rt.status(w) for w in workers] == [Completed("ok")] * WORKERS


def assert_complete_and_ordered(bus: Bus, arrivals: list[tuple[float, Event | Lagged]]) -> None:
    events = [event for _, event in arrivals]
    assert not any(isinstance(e, Lagged) for e in events)
    seqs = [e.seq for e in events]  # type: ignore[union-attr]
    assert seqs == list(range(1, bus.statistics().published + 1))  # every event, in order


async def test_a_subscriber_that_never_reads_costs_the_run_nothing_and_loses_only_its_own(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    quiet_bus = Bus()
    baseline, _, _ = await run_lead(tmp_path / "baseline", quiet_bus, make_provider())

    bus = Bus()
    with bus.subscribe(capacity=STALLED_CAPACITY, policy="drop_oldest") as stalled:
        duration, arrivals, _ = await run_lead(tmp_path / "stalled", bus, make_provider())
        published = bus.statistics().published
        assert published > 10 * STALLED_CAPACITY  # a real run, with far more than it can hold

        assert duration == baseline  # not a single virtual tick longer
        assert_complete_and_ordered(bus, arrivals)
        assert stalled.dropped == published - STALLED_CAPACITY
        assert stalled.statistics().delivered == published
        assert bus.statistics().dropped == stalled.dropped
        assert bus.statistics().blocked_publishes == 0

        marker = stalled.receive_nowait()
        assert marker == Lagged(dropped=published - STALLED_CAPACITY)  # one marker for the gap
        kept = [stalled.receive_nowait() for _ in range(STALLED_CAPACITY)]
        assert kept == [event for _, event in arrivals[-STALLED_CAPACITY:]]  # the newest ones
        with pytest.raises(trio.WouldBlock):
            stalled.receive_nowait()


class TimedBus(Bus):
    """A bus that notes how long each publisher waited for room (every publish asks)."""

    def __init__(self) -> None:
        super().__init__()
        self.holds: list[float] = []

    async def make_room(self, count: int = 1) -> None:
        start = trio.current_time()
        await super().make_room(count)
        self.holds.append(trio.current_time() - start)


async def test_stuck_lossless_subscribers_hold_each_publish_at_most_max_block(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    max_block = 0.5
    instant = make_provider(latency=0.0, tool_seconds=0.0)  # no time passes but by blocking
    baseline, _, _ = await run_lead(tmp_path / "baseline", Bus(), instant)
    assert baseline == 0

    bus = TimedBus()
    with (
        bus.subscribe(policy="block", capacity=1, max_block=max_block) as first,
        bus.subscribe(policy="block", capacity=1, max_block=max_block) as second,
    ):
        duration, arrivals, _ = await run_lead(tmp_path / "stuck", bus, instant)
        stats = bus.statistics()

        assert duration > 0  # the stuck subscribers did slow the run down...
        held = [hold for hold in bus.holds if hold > 0]
        assert len(held) == stats.blocked_publishes > 0
        # ...but each blocked publisher waited for both of them together, max_block once.
        assert max(held) == pytest.approx(max_block)
        assert stats.block_timeouts == 2 * stats.blocked_publishes
        assert_complete_and_ordered(bus, arrivals)  # the reading subscriber lost nothing

        # Past the bound the stuck ones fall back to dropping, with a marker at the gap.
        for stuck in (first, second):
            assert stuck.dropped == stats.published - 1
            assert stuck.receive_nowait() == Lagged(dropped=stats.published - 1)
            assert stuck.receive_nowait() == arrivals[-1][1]


class Boom(Exception):
    """The consumer's own bug."""


async def test_a_subscriber_that_raises_keeps_the_error_and_releases_its_subscription(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    baseline, _, _ = await run_lead(tmp_path / "baseline", Bus(), make_provider())

    bus = Bus()
    arrivals: list[tuple[float, Event | Lagged]] = []
    consumed: list[Event | Lagged] = []

    async def crashing_consumer(rt: Any, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        # block policy, a buffer of one, a long bound: if it were left on the bus,
        # every later publish would wait 30 s.
        with rt.subscribe(policy="block", capacity=1, max_block=30.0) as mine:
            task_status.started()
            async for event in mine:
                consumed.append(event)
                if isinstance(event, TurnStarted):
                    raise Boom("the consumer broke")

    with bus.subscribe(policy="block", capacity=100_000) as lossless:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(collect, lossless, arrivals)
            async with make_world(tmp_path / "crash").open(
                make_provider(), bus=bus, tools=[SlowTool("Note")]
            ) as rt:
                before = rt.statistics().bus.subscribers
                start = trio.current_time()
                caught: list[BaseException] = []
                try:
                    async with trio.open_nursery() as consumers:
                        await consumers.start(crashing_consumer, rt)
                        assert rt.statistics().bus.subscribers == before + 1
                        lead = await rt.spawn("lead", "Lead the work.")
                except* Boom as group:
                    caught.extend(group.exceptions)
                assert [str(e) for e in caught] == ["the consumer broke"]
                assert rt.statistics().bus.subscribers == before  # released with its block
                crashed_at = trio.current_time() - start
                assert crashed_at < baseline  # it broke while the agents were at work

                await finish_all(rt, lead.agent_id)
                duration = trio.current_time() - start
            lossless.close()

    assert isinstance(consumed[-1], TurnStarted)
    assert duration == baseline  # the dead subscription held no publisher
    stats = bus.statistics()
    assert stats.block_timeouts == 0  # it was waited for only while it was reading
    assert_complete_and_ordered(bus, arrivals)  # the other subscriber was not disturbed
