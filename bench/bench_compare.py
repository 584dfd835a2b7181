"""request_reply and fan_out on plain asyncio and on autogen-core, for the same workloads.

The workloads are those of ``bench_kernel.py``: ``n`` request/reply round trips
between two actors, and ``n`` messages round-robin over ``k`` actors that are
already started, timed until every actor has all of its messages. Each side is
written in its fastest correct idiom:

- asyncio: bounded ``asyncio.Queue`` (64, like the Trio channels), ``put_nowait``
  and awaiting ``put`` only when full, receivers draining with ``get_nowait``
  before awaiting; replies through a ``Future``.
- autogen-core: one ``SingleThreadedAgentRuntime``; request/reply is
  ``await runtime.send_message(...)`` to a ``RoutedAgent`` whose
  ``@message_handler`` returns the reply; fan-out is ``publish_message`` to a
  ``TopicId`` whose source is the receiving agent's key, through one
  ``TypeSubscription`` (each message is delivered to one agent), with every
  agent instantiated before the clock starts.

autogen-core is optional (the ``bench`` extra): :func:`autogen_available` says
whether it is installed, and the autogen functions import it when called.

    python bench/bench_compare.py            # 10,000 round trips, 10,000 messages over 100 agents
"""

# No ``from __future__ import annotations``: autogen-core reads the handlers' type hints
# with ``get_type_hints``, which cannot see names imported inside a function.
import asyncio
import importlib.util
import sys
import time
from dataclasses import dataclass
from typing import Any

TIMEOUT = 600.0


def autogen_available() -> bool:
    """Whether autogen-core can be imported."""
    return importlib.util.find_spec("autogen_core") is not None


def autogen_version() -> str | None:
    """The installed autogen-core version, or ``None``."""
    if not autogen_available():
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("autogen-core")
    except PackageNotFoundError:
        return "unknown"


# -- plain asyncio ------------------------------------------------------------------------


async def asyncio_request_reply(n: int) -> float:
    queue: asyncio.Queue[tuple[int, asyncio.Future[int]] | None] = asyncio.Queue(64)
    loop = asyncio.get_running_loop()

    async def server() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                item = await queue.get()
            if item is None:
                return
            payload, future = item
            future.set_result(payload)

    start = time.perf_counter()
    task = asyncio.create_task(server())
    for i in range(n):
        future: asyncio.Future[int] = loop.create_future()
        try:
            queue.put_nowait((i, future))
        except asyncio.QueueFull:
            await queue.put((i, future))
        await future
    await queue.put(None)
    await task
    return time.perf_counter() - start


async def _asyncio_receive(queue: asyncio.Queue[int], n: int) -> None:
    for _ in range(n):
        try:
            queue.get_nowait()
        except asyncio.QueueEmpty:
            await queue.get()


async def asyncio_fan_out(n: int, k: int) -> float:
    per = n // k
    queues: list[asyncio.Queue[int]] = [asyncio.Queue(64) for _ in range(k)]
    tasks = [asyncio.create_task(_asyncio_receive(q, per)) for q in queues]
    await asyncio.sleep(0)  # every receiver started and waiting
    start = time.perf_counter()
    for i in range(per * k):
        queue = queues[i % k]
        try:
            queue.put_nowait(i)
        except asyncio.QueueFull:
            await queue.put(i)
    await asyncio.gather(*tasks)
    return time.perf_counter() - start


# -- autogen-core ----------------------------------------------------------------------------


@dataclass
class Ping:
    """The message both autogen scenarios send."""

    i: int


async def autogen_request_reply(n: int) -> float:
    from autogen_core import (
        AgentId,
        MessageContext,
        RoutedAgent,
        SingleThreadedAgentRuntime,
        message_handler,
    )

    class Echo(RoutedAgent):
        def __init__(self) -> None:
            super().__init__("echo")

        @message_handler
        async def on_ping(self, message: Ping, ctx: MessageContext) -> Ping:
            return message

    runtime = SingleThreadedAgentRuntime()
    await Echo.register(runtime, "echo", Echo)
    target = AgentId("echo", "default")
    await runtime.try_get_underlying_agent_instance(target)  # instantiated before the clock
    runtime.start()
    start = time.perf_counter()
    for i in range(n):
        await runtime.send_message(Ping(i), target)
    elapsed = time.perf_counter() - start
    await runtime.stop()
    return elapsed


async def autogen_fan_out(n: int, k: int) -> float:
    from autogen_core import (
        AgentId,
        MessageContext,
        RoutedAgent,
        SingleThreadedAgentRuntime,
        TopicId,
        TypeSubscription,
        message_handler,
    )

    per = n // k
    done = asyncio.Event()
    received = 0
    total = per * k

    class Worker(RoutedAgent):
        def __init__(self) -> None:
            super().__init__("worker")

        @message_handler
        async def on_ping(self, message: Ping, ctx: MessageContext) -> None:
            nonlocal received
            received += 1
            if received == total:
                done.set()

    runtime = SingleThreadedAgentRuntime()
    await Worker.register(runtime, "worker", Worker)
    await runtime.add_subscription(TypeSubscription(topic_type="fan", agent_type="worker"))
    for key in range(k):  # every agent instantiated before the clock starts
        await runtime.try_get_underlying_agent_instance(AgentId("worker", str(key)))
    topics = [TopicId("fan", str(key)) for key in range(k)]
    runtime.start()
    start = time.perf_counter()
    for i in range(total):
        await runtime.publish_message(Ping(i), topics[i % k])
    await asyncio.wait_for(done.wait(), TIMEOUT)
    elapsed = time.perf_counter() - start
    await runtime.stop()
    return elapsed


def run_async(fn: Any, *args: Any) -> float:
    """Run one asyncio measurement in a fresh event loop; its elapsed seconds."""
    result: float = asyncio.run(fn(*args))
    return result


def main() -> int:
    n, k = 10_000, 100
    print(f"asyncio request_reply x{n:,}: {run_async(asyncio_request_reply, n):.3f} s")
    print(f"asyncio fan_out x{n:,} over {k}: {run_async(asyncio_fan_out, n, k):.3f} s")
    if autogen_available():
        print(f"autogen request_reply x{n:,}: {run_async(autogen_request_reply, n):.3f} s")
        print(f"autogen fan_out x{n:,} over {k}: {run_async(autogen_fan_out, n, k):.3f} s")
    else:
        print("autogen-core is not installed (pip install 'subagents[bench]'): skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
