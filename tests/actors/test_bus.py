"""The bus: bounded subscriptions, drop-oldest with lag markers, bounded blocking, filters."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from subagents.actors import (
    RUNNING,
    AgentSpawned,
    Bus,
    Event,
    InvalidConfiguration,
    Lagged,
    OverflowPolicy,
    StatusChanged,
)
from tests.actors.helpers import drain


class Tick(Event, frozen=True, kw_only=True, tag="tick"):
    n: int


def tick(n: int, agent: str = "a") -> Tick:
    return Tick(agent_id=agent, parent_id=None, depth=0, nickname="Ada", n=n)


def spawned(agent: str, parent: str | None) -> AgentSpawned:
    return AgentSpawned(agent_id=agent, parent_id=parent, depth=1, nickname=agent, label="x")


def test_publish_stamps_a_global_increasing_sequence_and_a_time() -> None:
    bus = Bus()
    with bus.subscribe() as sub:
        for n in range(3):
            bus.publish_nowait(tick(n))
        events = drain(sub)
    assert [e.seq for e in events] == [1, 2, 3]  # type: ignore[union-attr]
    assert all(e.time > 0 for e in events)  # type: ignore[union-attr]
    assert bus.last_seq == 3


def test_drop_oldest_never_blocks_counts_losses_and_marks_the_gap() -> None:
    bus = Bus()
    with bus.subscribe(capacity=3, policy="drop_oldest") as sub:
        for n in range(10):
            bus.publish_nowait(tick(n))
        events = drain(sub)
        assert sub.dropped == 7
    assert events[0] == Lagged(dropped=7)
    assert [e.n for e in events[1:]] == [7, 8, 9]  # type: ignore[union-attr]
    stats = bus.statistics()
    assert (stats.published, stats.dropped, stats.delivered) == (10, 7, 10)


def test_a_subscriber_that_never_reads_does_not_slow_the_others() -> None:
    bus = Bus()
    with bus.subscribe(capacity=2) as stalled, bus.subscribe(capacity=1000) as reader:
        for n in range(100):
            bus.publish_nowait(tick(n))
        assert [e.n for e in drain(reader)] == list(range(100))  # type: ignore[union-attr]
        assert stalled.statistics().buffered == 2
        assert stalled.dropped == 98


async def test_block_policy_holds_the_publisher_until_there_is_room() -> None:
    bus = Bus()
    got: list[int] = []
    with bus.subscribe(capacity=2, policy=OverflowPolicy.BLOCK, max_block=60) as sub:

        async def consumer() -> None:
            async for event in sub:
                assert isinstance(event, Tick)
                got.append(event.n)
                if event.n == 49:
                    return

        async with trio.open_nursery() as nursery:
            nursery.start_soon(consumer)
            for n in range(50):
                await bus.publish(tick(n))
    assert got == list(range(50))  # lossless and in order
    assert sub.dropped == 0
    assert bus.statistics().blocked_publishes > 0


async def test_block_policy_gives_up_after_max_block(autojump_clock: trio.abc.Clock) -> None:
    bus = Bus()
    with bus.subscribe(capacity=1, policy="block", max_block=0.5) as sub:
        await bus.publish(tick(0))
        start = trio.current_time()
        await bus.publish(tick(1))  # nobody reads: waits 0.5 s, then drops the oldest
        assert trio.current_time() - start == pytest.approx(0.5)
        lag, last = drain(sub)
        assert lag == Lagged(dropped=1)
        assert isinstance(last, Tick)
        assert last.n == 1
    stats = bus.statistics()
    assert (stats.blocked_publishes, stats.block_timeouts, stats.dropped) == (1, 1, 1)


def test_filters_by_type_and_agent() -> None:
    bus = Bus()
    with (
        bus.subscribe(types=[StatusChanged]) as statuses,
        bus.subscribe(agents=["b"]) as only_b,
        bus.subscribe(types=[Event], agents=["a"]) as subclass_match,
    ):
        bus.publish_nowait(tick(1, "a"))
        bus.publish_nowait(tick(2, "b"))
        bus.publish_nowait(
            StatusChanged(agent_id="a", parent_id=None, depth=0, nickname="A", status=RUNNING)
        )
        assert [type(e) for e in drain(statuses)] == [StatusChanged]
        assert [e.agent_id for e in drain(only_b)] == ["b"]  # type: ignore[union-attr]
        assert len(drain(subclass_match)) == 2


def test_subtree_filter_follows_agents_spawned_below() -> None:
    bus = Bus()
    with bus.subscribe(subtree=["root"]) as sub:
        bus.publish_nowait(spawned("child", "root"))
        bus.publish_nowait(spawned("grandchild", "child"))
        bus.publish_nowait(spawned("stranger", "other"))
        bus.publish_nowait(tick(1, "grandchild"))
        bus.publish_nowait(tick(2, "stranger"))
        seen = [e.agent_id for e in drain(sub)]  # type: ignore[union-attr]
    assert seen == ["child", "grandchild", "grandchild"]


async def test_closing_a_subscription_ends_iteration_after_the_buffer() -> None:
    bus = Bus()
    sub = bus.subscribe()
    bus.publish_nowait(tick(1))
    sub.close()
    sub.close()  # idempotent
    bus.publish_nowait(tick(2))  # no longer delivered
    assert [e.n async for e in sub] == [1]  # type: ignore[union-attr]
    assert bus.statistics().subscribers == 0
    assert sub.statistics().closed


async def test_a_waiting_reader_is_woken_by_close() -> None:
    bus = Bus()
    sub = bus.subscribe()
    outcome: list[str] = []

    async def reader() -> None:
        try:
            await sub.receive()
        except trio.EndOfChannel:
            outcome.append("ended")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        sub.close()
    assert outcome == ["ended"]


@pytest.mark.parametrize(
    "kwargs",
    [{"capacity": 0}, {"capacity": 1.5}, {"max_block": -1}, {"policy": "lossy"}],
)
def test_bad_subscription_settings_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidConfiguration):
        Bus().subscribe(**kwargs)  # type: ignore[arg-type]


def test_a_second_of_a_thousand_agents_tokens_passes_losslessly_in_order() -> None:
    """50,000 events (a second of 1,000 agents' tokens; its speed is measured in bench/)
    through 4 subscribers large enough to hold it: none lost, each in publish order."""
    bus = Bus()
    subs = [bus.subscribe(capacity=50_000) for _ in range(4)]
    for n in range(50_000):
        bus.publish_nowait(tick(n, f"a{n % 1000}"))
    for sub in subs:
        assert sub.dropped == 0
        assert [e.n for e in drain(sub)] == list(range(50_000))  # type: ignore[union-attr]


def test_a_listener_gets_every_event_stamped_before_any_subscriber() -> None:
    bus = Bus()
    assert not bus.has_subscribers
    seen: list[tuple[int, int]] = []
    with bus.subscribe(capacity=1) as sub:
        # what the subscriber had been handed when the listener ran: nothing newer
        with bus.listen(lambda e: seen.append((e.seq, sub.statistics().delivered))) as listener:
            assert bus.has_subscribers
            for n in range(5):
                bus.publish_nowait(tick(n))
            stats = bus.statistics()
            assert (stats.subscribers, stats.listeners) == (1, 1)
        assert listener.closed
        bus.publish_nowait(tick(9))
    assert seen == [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)]  # none lost, in order, first
    stats = bus.statistics()
    assert (stats.listeners, stats.blocked_publishes, stats.dropped) == (0, 0, 5)
    assert not bus.has_subscribers


def test_a_listener_of_some_kinds_gets_only_those_and_is_no_subscriber() -> None:
    """Issue 17: the runtime's follower listens to spawns and status changes only, so a
    publisher asking ``has_subscribers`` builds nothing else for it, and one asking
    :meth:`Bus.wants` builds exactly the kinds it follows (subclasses included)."""

    class Restarted(StatusChanged, frozen=True, kw_only=True, tag="restarted"):
        pass

    bus = Bus()
    got: list[str] = []
    with bus.listen(lambda e: got.append(type(e).__name__), types=[StatusChanged]) as listener:
        assert listener.types == (StatusChanged,)
        assert not bus.has_subscribers
        assert (bus.wants(StatusChanged), bus.wants(Restarted)) == (True, True)
        assert (bus.wants(Tick), bus.wants(AgentSpawned)) == (False, False)
        status = StatusChanged(agent_id="a", parent_id=None, depth=0, nickname="A", status=RUNNING)
        bus.publish_nowait(tick(1))
        bus.publish_nowait(status)
        bus.publish_nowait(
            Restarted(agent_id="a", parent_id=None, depth=0, nickname="A", status=RUNNING)
        )
        with bus.subscribe() as sub:  # a subscriber wants every kind; the listener still not
            assert (bus.has_subscribers, bus.wants(Tick)) == (True, True)
            bus.publish_nowait(tick(2))
            bus.publish_nowait(status)
            assert len(drain(sub)) == 2
        assert not bus.has_subscribers
        with bus.listen(lambda e: None):  # a listener of every kind counts as a subscriber
            assert (bus.has_subscribers, bus.wants(Tick)) == (True, True)
        assert not bus.has_subscribers
        assert bus.statistics().listeners == 1
    assert got == ["StatusChanged", "Restarted", "StatusChanged"]
    assert not bus.wants(StatusChanged)


def test_a_subscription_of_some_kinds_is_no_subscriber_of_the_others() -> None:
    """Issue 19: a Ray worker forwards spawns and status changes, and a job's progress bar
    follows job events; neither makes publishers build every other kind for it. A
    subscription following a subtree also wants spawns, which grow its subtree."""
    bus = Bus()
    with bus.subscribe(types=[StatusChanged]) as sub:
        assert not bus.has_subscribers
        assert (bus.wants(StatusChanged), bus.wants(Tick), bus.wants(AgentSpawned)) == (
            True,
            False,
            False,
        )
        status = StatusChanged(agent_id="a", parent_id=None, depth=0, nickname="A", status=RUNNING)
        bus.publish_nowait(status)
        assert drain(sub) == [status]
        with bus.subscribe(types=[StatusChanged], subtree=["a"]) as below:
            assert (bus.wants(AgentSpawned), bus.wants(Tick)) == (True, False)
            bus.publish_nowait(
                AgentSpawned(agent_id="b", parent_id="a", depth=1, nickname="B", label="")
            )
            child = StatusChanged(
                agent_id="b", parent_id="a", depth=1, nickname="B", status=RUNNING
            )
            bus.publish_nowait(child)
            assert drain(below) == [child]  # the spawn grew the subtree, and was not kept
        assert not bus.wants(AgentSpawned)
        # a publisher of several kinds asks once whether any of them is wanted
        assert bus.wants_any(frozenset((Tick, StatusChanged)))
        assert not bus.wants_any(frozenset((Tick, AgentSpawned)))
        with bus.subscribe() as every:
            assert (bus.has_subscribers, bus.wants(Tick)) == (True, True)
            assert bus.wants_any(frozenset((Tick, AgentSpawned)))
            bus.publish_nowait(tick(1))
            assert len(drain(every)) == 1
        assert (bus.has_subscribers, bus.wants(Tick), bus.wants(StatusChanged)) == (
            False,
            False,
            True,
        )
    assert not bus.wants(StatusChanged)
    assert not bus.wants_any(frozenset((Tick, StatusChanged)))
    assert bus.statistics().subscribers == 0


async def test_a_listener_never_holds_a_publisher() -> None:
    bus = Bus()
    got: list[int] = []
    with bus.listen(lambda e: got.append(e.seq)):
        for n in range(10_000):
            await bus.publish(tick(n))  # no lossless subscriber: never waits for room
    assert got == list(range(1, 10_001))
    assert bus.statistics().blocked_publishes == 0


def test_a_listener_that_raises_is_detached_and_the_publisher_carries_on() -> None:
    bus = Bus()
    calls: list[int] = []

    def broken(event: Event) -> None:
        calls.append(event.seq)
        raise RuntimeError("tracker bug")

    listener = bus.listen(broken)
    with bus.listen(lambda e: calls.append(-e.seq)), bus.subscribe() as sub:
        bus.publish_nowait(tick(1))
        bus.publish_nowait(tick(2))
        assert [e.n for e in drain(sub)] == [1, 2]  # type: ignore[union-attr]
    assert calls == [1, -1, -2]
    assert listener.closed
    assert isinstance(listener.error, RuntimeError)
    listener.close()  # closing again is harmless
