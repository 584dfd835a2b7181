"""Kernel benchmarks: each scenario on `subagents.actors` and on raw Trio, in one process.

The raw-Trio side is written in the fastest correct idiom (try ``send_nowait``
and await only when the channel is full, replies through a ``trio.Event`` slot,
receivers drain what is buffered before yielding), so the ratio is the cost of
the kernel's layer over Trio itself.

    python bench/bench_kernel.py            # full sizes, 5 repetitions
    python bench/bench_kernel.py --quick    # a tenth of the sizes, 3 repetitions
    python bench/bench_kernel.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import trio
import trio.testing

from subagents.actors import (
    ActorContext,
    Bus,
    Event,
    MailboxFull,
    SupervisorConfig,
    open_supervisor,
)

# Sizes of the full run (the figures); --quick divides them by 10.
SIZES = {
    "spawn_exit": 10_000,
    "request_reply": 100_000,
    "fan_out": 100_000,
    "fan_out_actors": 1_000,
    "pubsub_events": 10_000,
    "pubsub_subscribers": 1_000,
    "tree_cancel": 10_000,
    "idle_memory": 10_000,
}

# (scenario, unit, the ratio subagents/trio must not exceed, how the figure reads)
TARGETS = {
    "spawn_exit": 2.0,
    "request_reply": 1.25,
    "fan_out": 2.0,  # >= 0.5x the raw rate
    "pubsub": 2.0,  # >= 0.5x the raw rate
    "tree_cancel": 1.5,
    "idle_memory": 1.5,
}

TIMEOUT = 600.0  # every wait in the kernel has a deadline; this one is never reached


@dataclass
class Record:
    """One scenario on one implementation, as `subagents bench --json` writes it."""

    scenario: str
    impl: str
    n: int
    unit: str
    min: float
    median: float
    reps: int


class _Ping(Event, frozen=True, kw_only=True, tag="bench_ping"):
    """The event both pub/sub sides publish, so only the delivery differs."""

    i: int


def _config(max_threads: int, max_depth: int = 1) -> SupervisorConfig:
    return SupervisorConfig(max_threads=max_threads, max_depth=max_depth, close_grace_period=0)


# -- spawn + one message + exit ---------------------------------------------------


async def raw_spawn_exit(n: int) -> float:
    async def actor(receive: trio.MemoryReceiveChannel[Any]) -> None:
        await receive.receive()

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for i in range(n):
            send, receive = trio.open_memory_channel[Any](64)
            nursery.start_soon(actor, receive)
            send.send_nowait(i)
    return time.perf_counter() - start


async def kernel_spawn_exit(n: int) -> float:
    async def actor(ctx: ActorContext) -> None:
        await ctx.receive()

    async def lead(ctx: ActorContext) -> None:
        ids = []
        for i in range(n):
            ref = await ctx.spawn(actor, auto_close=True)
            ctx.send_nowait(ref.id, i)
            ids.append(ref.id)
        await ctx.wait(ids, timeout=TIMEOUT, mode="all")

    start = time.perf_counter()
    async with open_supervisor(_config(n + 1)) as sup:
        await _run_lead(sup, lead)
    return time.perf_counter() - start


async def _run_lead(sup: Any, lead: Callable[[ActorContext], Awaitable[None]]) -> None:
    """Run ``lead`` as a top-level actor and wait for it to finish.

    Its children are subagents: leaves under the default ``max_depth`` of 1,
    the shape of a lead agent and its team.
    """
    ref = await sup.spawn(lead)
    await sup.wait([ref.id], timeout=TIMEOUT)


# -- request / reply between two actors ----------------------------------------------


class _Slot:
    __slots__ = ("event", "value")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.value: Any = None


async def raw_request_reply(n: int) -> float:
    send, receive = trio.open_memory_channel[tuple[int, _Slot]](64)

    async def server() -> None:
        async with receive:
            while True:
                try:
                    payload, slot = receive.receive_nowait()
                except trio.WouldBlock:
                    try:
                        payload, slot = await receive.receive()
                    except trio.EndOfChannel:
                        return
                except trio.EndOfChannel:
                    return
                slot.value = payload
                slot.event.set()

    async def client() -> None:
        async with send:
            for i in range(n):
                slot = _Slot()
                try:
                    send.send_nowait((i, slot))
                except trio.WouldBlock:
                    await send.send((i, slot))
                await slot.event.wait()

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        nursery.start_soon(client)
    return time.perf_counter() - start


async def kernel_request_reply(n: int) -> float:
    async def server(ctx: ActorContext) -> None:
        async for request in ctx:
            request.reply(request.payload)

    async def client(ctx: ActorContext) -> None:
        target = ctx.children()[0].id
        for i in range(n):
            await ctx.ask(target, i, timeout=TIMEOUT)

    async def pair(ctx: ActorContext) -> None:
        await ctx.spawn(server)
        await client(ctx)

    start = time.perf_counter()
    async with open_supervisor(_config(2)) as sup:
        ref = await sup.spawn(pair)
        await sup.wait([ref.id], timeout=TIMEOUT)
    return time.perf_counter() - start


async def _raw_receive(receive: trio.MemoryReceiveChannel[Any], n: int) -> None:
    """Take ``n`` messages, draining what is buffered before yielding (the raw idiom)."""
    for _ in range(n):
        try:
            receive.receive_nowait()
        except trio.WouldBlock:
            await receive.receive()


# -- fan-out: n messages round-robin over k actors --------------------------------------


async def raw_fan_out(n: int, k: int) -> float:
    per = n // k

    async with trio.open_nursery() as nursery:
        sends = []
        for _ in range(k):
            send, receive = trio.open_memory_channel[int](64)
            nursery.start_soon(_raw_receive, receive, per)
            sends.append(send)
        await trio.testing.wait_all_tasks_blocked()  # every receiver started and waiting
        start = time.perf_counter()
        for i in range(per * k):
            send = sends[i % k]
            try:
                send.send_nowait(i)
            except trio.WouldBlock:
                await send.send(i)
    return time.perf_counter() - start


async def kernel_fan_out(n: int, k: int) -> float:
    per = n // k
    elapsed = math.nan

    async def actor(ctx: ActorContext) -> None:
        for _ in range(per):
            await ctx.receive()

    async def lead(ctx: ActorContext) -> None:
        nonlocal elapsed
        ids = [(await ctx.spawn(actor)).id for _ in range(k)]
        await trio.testing.wait_all_tasks_blocked()  # every receiver started and waiting
        start = time.perf_counter()
        for i in range(per * k):
            try:  # the same idiom as the raw side: await only when the mailbox is full
                ctx.send_nowait(ids[i % k], i)
            except MailboxFull:
                await ctx.send(ids[i % k], i)
        await ctx.wait(ids, timeout=TIMEOUT, mode="all")
        elapsed = time.perf_counter() - start

    async with open_supervisor(_config(k + 1)) as sup:
        await _run_lead(sup, lead)
    return elapsed


# -- pub/sub: e events to s subscribers, lossless ---------------------------------------


def _ping(i: int) -> _Ping:
    return _Ping(agent_id="bench", parent_id=None, depth=0, nickname="bench", i=i)


async def raw_pubsub(e: int, s: int) -> float:
    async with trio.open_nursery() as nursery:
        sends = []
        for _ in range(s):
            send, receive = trio.open_memory_channel[Any](1024)
            nursery.start_soon(_raw_receive, receive, e)
            sends.append(send)
        await trio.testing.wait_all_tasks_blocked()  # every subscriber started and waiting
        start = time.perf_counter()
        for i in range(e):
            event = _ping(i)
            for send in sends:
                try:
                    send.send_nowait(event)
                except trio.WouldBlock:
                    await send.send(event)
    return time.perf_counter() - start


async def kernel_pubsub(e: int, s: int) -> float:
    bus = Bus()

    async def subscriber(sub: Any) -> None:
        got = 0
        with sub:
            async for _ in sub:
                got += 1
                if got == e:
                    return

    async with trio.open_nursery() as nursery:
        for _ in range(s):
            nursery.start_soon(subscriber, bus.subscribe(capacity=1024, policy="block"))
        await trio.testing.wait_all_tasks_blocked()  # every subscriber started and waiting
        start = time.perf_counter()
        for i in range(e):
            await bus.publish(_ping(i))
    return time.perf_counter() - start


# -- cancel of a running tree of depth 3 -------------------------------------------------


def _tree_shape(n: int) -> tuple[int, int, int]:
    """Top-level actors, children per top, grandchildren per child: about n in all."""
    top = max(1, round(n ** (1 / 3) / 2))
    mid = max(1, round(n ** (1 / 3) / 2))
    leaves = max(1, (n - top - top * mid) // (top * mid))
    return top, mid, leaves


async def raw_tree_cancel(n: int) -> float:
    top, mid, leaves = _tree_shape(n)

    async def leaf(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        # a leaf has no children, so in the fastest idiom it opens no nursery
        send, receive = trio.open_memory_channel[Any](64)
        task_status.started()
        with send, receive:
            await receive.receive()

    async def node(
        level: int, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        send, receive = trio.open_memory_channel[Any](64)
        async with trio.open_nursery() as nursery:
            for _ in range((mid, leaves)[level]):
                if level == 0:
                    await nursery.start(node, 1)
                else:
                    await nursery.start(leaf)
            task_status.started()
            with send, receive:
                await receive.receive()

    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            for _ in range(top):
                await nursery.start(node, 0)
            start = time.perf_counter()
            scope.cancel()
    return time.perf_counter() - start


async def kernel_tree_cancel(n: int) -> float:
    top, mid, leaves = _tree_shape(n)
    total = top + top * mid + top * mid * leaves

    async def node(ctx: ActorContext) -> None:
        await ctx.receive()

    async def build(ctx: ActorContext) -> None:
        fan = (mid, leaves)[ctx.depth]
        for _ in range(fan):
            await ctx.spawn(build if ctx.depth + 1 < 2 else node)
        await ctx.receive()

    start = math.nan
    with trio.CancelScope() as scope:
        async with open_supervisor(_config(total, max_depth=2)) as sup:
            for _ in range(top):
                await sup.spawn(build)
            await trio.testing.wait_all_tasks_blocked()
            assert sup.statistics().live == total
            start = time.perf_counter()
            scope.cancel()
    return time.perf_counter() - start


# -- memory per idle actor -----------------------------------------------------------------


async def _measure(n: int, make: Callable[[trio.Nursery], Awaitable[None]]) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            await make(nursery)
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - before
            scope.cancel()
    tracemalloc.stop()
    return used / n


async def raw_idle_memory(n: int) -> float:
    async def actor(receive: trio.MemoryReceiveChannel[Any]) -> None:
        await receive.receive()

    keep: list[Any] = []

    async def make(nursery: trio.Nursery) -> None:
        for _ in range(n):
            send, receive = trio.open_memory_channel[Any](64)
            nursery.start_soon(actor, receive)
            keep.append(send)

    return await _measure(n, make)


async def kernel_idle_memory(n: int) -> float:
    async def actor(ctx: ActorContext) -> None:
        await ctx.receive()

    async def lead(ctx: ActorContext) -> None:
        for _ in range(n):
            await ctx.spawn(actor)
        await ctx.receive()

    async def make(nursery: trio.Nursery) -> None:
        sup = await nursery.start(_hold_supervisor, n + 1)
        await sup.spawn(lead)

    return await _measure(n, make)


async def _hold_supervisor(n: int, task_status: trio.TaskStatus[Any]) -> None:
    async with open_supervisor(_config(n)) as sup:
        task_status.started(sup)
        await trio.sleep_forever()


# -- driver ------------------------------------------------------------------------------------


def scenarios(
    sizes: dict[str, int],
) -> list[tuple[str, str, int, Callable[..., Any], Callable[..., Any]]]:
    """(scenario, unit, n, raw, kernel) for every scenario."""
    fan_k = sizes["fan_out_actors"]
    subs = sizes["pubsub_subscribers"]
    return [
        ("spawn_exit", "s", sizes["spawn_exit"], raw_spawn_exit, kernel_spawn_exit),
        ("request_reply", "s", sizes["request_reply"], raw_request_reply, kernel_request_reply),
        (
            "fan_out",
            "s",
            sizes["fan_out"],
            lambda n: raw_fan_out(n, fan_k),
            lambda n: kernel_fan_out(n, fan_k),
        ),
        (
            "pubsub",
            "s",
            sizes["pubsub_events"] * subs,
            lambda n: raw_pubsub(n // subs, subs),
            lambda n: kernel_pubsub(n // subs, subs),
        ),
        ("tree_cancel", "s", sizes["tree_cancel"], raw_tree_cancel, kernel_tree_cancel),
        ("idle_memory", "bytes/actor", sizes["idle_memory"], raw_idle_memory, kernel_idle_memory),
    ]


def run(quick: bool, reps: int, only: set[str] | None = None) -> list[Record]:
    """Run every scenario, alternating raw and kernel repetitions, and return the records."""
    sizes = {k: (max(1, v // 10) if quick else v) for k, v in SIZES.items()}
    if quick:
        sizes["fan_out_actors"] = 100
        sizes["pubsub_subscribers"] = 100
    records: list[Record] = []
    for name, unit, n, raw, kernel in scenarios(sizes):
        if only and name not in only:
            continue
        times: dict[str, list[float]] = {"trio": [], "subagents": []}
        for _ in range(reps):
            for impl, fn in (("trio", raw), ("subagents", kernel)):
                gc.collect()
                times[impl].append(trio.run(fn, n))
        for impl, values in times.items():
            records.append(
                Record(name, impl, n, unit, min(values), statistics.median(values), reps)
            )
    return records


def table(records: list[Record]) -> str:
    """A Markdown table: both implementations and the ratio against its target."""
    by = {(r.scenario, r.impl): r for r in records}
    lines = [
        "| scenario | n | raw Trio (min) | subagents (min) | ratio (min) | ratio (median) "
        "| target | met |",
        "|---|---:|---:|---:|---:|---:|---:|:-:|",
    ]
    for scenario in dict.fromkeys(r.scenario for r in records):
        raw, ours = by[(scenario, "trio")], by[(scenario, "subagents")]
        ratio = ours.min / raw.min
        ratio_median = ours.median / raw.median
        target = TARGETS[scenario]
        lines.append(
            f"| {scenario} | {raw.n:,} | {_fmt(raw)} | {_fmt(ours)} | {ratio:.2f}x "
            f"| {ratio_median:.2f}x | <= {target}x | {'yes' if ratio <= target else 'NO'} |"
        )
    return "\n".join(lines)


def _fmt(r: Record) -> str:
    if r.unit == "s":
        per = r.min / r.n * 1e6
        return f"{r.min:.3f} s ({per:.2f} us/op)"
    return f"{r.min / 1024:.2f} KiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (5, or 3 with --quick)")
    parser.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="write the records as JSON")
    args = parser.parse_args(argv)
    reps = args.reps or (3 if args.quick else 5)
    records = run(args.quick, reps, set(args.only) if args.only else None)
    print(table(records))
    if args.json:
        versions = {
            "python": platform.python_version(),
            "trio": trio.__version__,
            "platform": platform.platform(),
        }
        with open(args.json, "w") as f:
            json.dump({"versions": versions, "records": [asdict(r) for r in records]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
