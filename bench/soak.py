"""Soak test: thousands of scripted agents under random operations and faults, invariants checked.

For a bounded time (``--seconds``, default 120) one driver picks random
operations with a seeded ``random.Random``: spawn (top-level or under an open
agent, foreground or background), send input (with or without interrupt),
wait (short timeouts), close, resume of a closed agent, cancel of a random
subtree (a close with no grace period), and, every fifth of the run (at most
every ``EPOCH_MAX`` seconds), closing the whole runtime and opening a new one
on the same state directory (agents of earlier runtimes are then resumed from
their transcripts). Agents follow
:class:`subagents.testing.DirectivePolicy` (they finish, fail, hang, call a
tool, or make a malformed tool call, as told), and the provider injects faults
on top: provider errors of every kind and malformed tool calls.

:class:`subagents.testing.InvariantChecker` listens to the bus and checks every
event as it is published (so each transcript is read at the moment its event
describes, however loaded the machine): slots within bounds, one final
status per run, events in order and none lost, every run's result on disk
before its final status, and nothing left running after each runtime exits.
Every operation has a deadline (missing it is a violation). Memory (RSS, after
``gc.collect()``) is read once the first runtime has closed (the warm-up: a
runtime keeps up to ``retain_closed`` closed agents' records while it is open,
so its working set grows with the agents it has run) and at the end; growing
more than ``RSS_BOUND`` bytes is a violation. RSS keeps the allocator's
high-water mark, so the live Python objects are counted too
(``sys.getallocatedblocks()`` after ``gc.collect()``, at the same two points),
and growing more than ``BLOCKS_BOUND`` (a fraction) is a violation as well.
Both readings are taken when no runtime is open or referenced by the soak, and
after the checker has let go of the agents it checked
(:meth:`~subagents.testing.InvariantChecker.forget_finished`): what they count
is what outlives a runtime, so a leak of what the runtime holds per agent shows,
and the soak's own bookkeeping (at most ``KNOWN_AGENTS`` ids) barely does.

Progress goes to stderr every ~10 s; the last line of stdout is a JSON object
(``operations``, ``peak_live``, ``events``, ``dropped``, ``rss_start``,
``rss_end``, ``violations``, ...). The exit status is 1 when there was a
violation::

    .venv/bin/python bench/soak.py --seconds 60 --seed 7
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import trio

from subagents import SubagentsError, testing
from subagents.actors import Bus
from subagents.runtime import (
    LimitsConfig,
    ModelRequest,
    Reply,
    Runtime,
    RuntimeConfig,
    ScriptedProvider,
    ScriptedToolCall,
    open_runtime,
    provider_error,
)
from subagents.testing import ScriptedBehavior

#: The most RSS may grow between the warm-up and the end (after ``gc.collect()``).
RSS_BOUND = 64 * 1024 * 1024
#: The most the live Python objects may grow between the warm-up and the end (a fraction).
#: Both readings see only what outlives a runtime (see the module docstring): about
#: 215,000 blocks, growing well under 1% in two minutes (the driver's remembered ids).
#: An agent's record, task and conversation are over 100 blocks, so a runtime that
#: kept its agents would break the bound within seconds.
BLOCKS_BOUND = 0.05
#: The longest any single operation may take before it counts as a violation.
OP_DEADLINE = 20.0
#: The longest a blocking subscriber of the soak's bus may hold a publisher up.
MAX_BLOCK = 30.0
PROGRESS_EVERY = 10.0
#: The longest one runtime is driven before it is closed and a new one opened.
EPOCH_MAX = 12.0
AGENT_TYPE = "worker"
#: Agent ids the driver remembers as targets (the oldest forgotten first).
KNOWN_AGENTS = 2000
FAULT_RATE = 0.08
_FAULT_KINDS = (
    "overloaded_error",
    "rate_limit_error",
    "api_error",
    "invalid_request_error",
    "authentication_error",
    "timeout_error",
)
_BEHAVIORS = tuple(ScriptedBehavior)
_BEHAVIOR_WEIGHTS = (50, 12, 8, 20, 10)  # finish, fail, hang, tool, malformed
_OPERATIONS = ("spawn", "send_input", "wait", "close", "resume", "cancel")
_OPERATION_WEIGHTS = (30, 16, 14, 12, 16, 8)


def rss_bytes() -> int:
    """This process's resident set size, from ``/proc/self/statm`` (``ru_maxrss`` elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def python_blocks() -> int:
    """The memory blocks Python objects hold now, after a full collection."""
    gc.collect()
    return sys.getallocatedblocks()


@attrs.define(eq=False)
class FaultyPolicy:
    """:class:`~subagents.testing.DirectivePolicy`, with provider faults injected at random."""

    rng: random.Random
    rate: float = FAULT_RATE
    inner: testing.DirectivePolicy = attrs.field(factory=testing.DirectivePolicy)
    faults: int = 0

    def __call__(self, request: ModelRequest) -> Reply:
        if not request.grace and self.rng.random() < self.rate:
            self.faults += 1
            if self.rng.random() < 0.75:
                kind = self.rng.choice(_FAULT_KINDS)
                return Reply(error=provider_error(f"injected {kind}", error_type=kind))
            raw = self.rng.choice(('{"path": ', "[1, 2]", "not json", '"text"'))
            return Reply(tool_calls=(ScriptedToolCall(self.inner.tool, raw),))
        reply = self.inner(request)
        if reply.error is not None or reply.hang:
            self.faults += 1
        return reply


@attrs.define
class Counters:
    operations: int = 0
    refused: int = 0
    agents_spawned: int = 0
    resumes: int = 0
    closes: int = 0
    cancels: int = 0
    waits: int = 0
    inputs: int = 0
    reopens: int = 0
    peak_live: int = 0
    by_error: collections.Counter[str] = attrs.field(factory=collections.Counter)


def _write_agent(project: Path) -> None:
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{AGENT_TYPE}.md").write_text(
        f"---\nname: {AGENT_TYPE}\ndescription: A scripted soak-test agent.\n"
        "tools: LS\n---\n\nYou are a soak-test agent.\n"
    )


class Soak:
    """One soak run: the driver, its counters and its own violations."""

    def __init__(self, *, seconds: float, seed: int, max_threads: int, root: Path) -> None:
        self.seconds = seconds
        self.seed = seed
        self.max_threads = max_threads
        self.root = root
        self.project = root / "project"
        self.home = root / "home"
        self.state = root / "state"
        self.rng = random.Random(seed)
        self.policy = FaultyPolicy(random.Random(seed + 1))
        self.counters = Counters()
        self.known: collections.deque[str] = collections.deque(maxlen=KNOWN_AGENTS)
        self.violations: list[str] = []
        self.bus = Bus(default_capacity=1024, default_max_block=MAX_BLOCK)
        self.checker = testing.InvariantChecker(max_threads=max_threads, state_dir=self.state)
        self.rss_start: int | None = None
        self.blocks_start: int | None = None
        self.runtime: Runtime | None = None
        self.started = 0.0

    # -- setup -------------------------------------------------------------------------------

    def config(self) -> RuntimeConfig:
        return RuntimeConfig(
            state_dir=self.state,
            limits=LimitsConfig(
                max_threads=self.max_threads,
                max_depth=3,
                close_grace_period=0.2,
                cancel_timeout=5.0,
                max_time_seconds=5.0,
                grace_period_seconds=0.5,
            ),
        )

    # -- operations ----------------------------------------------------------------------------

    def _behavior(self) -> ScriptedBehavior:
        return self.rng.choices(_BEHAVIORS, weights=_BEHAVIOR_WEIGHTS)[0]

    def _pick_known(self) -> str | None:
        return self.rng.choice(self.known) if self.known else None

    def _pick_open(self, rt: Runtime) -> str | None:
        agents = rt.list()
        return self.rng.choice(agents).id if agents else None

    async def _spawn(self, rt: Runtime) -> None:
        parent = self._pick_open(rt) if self.rng.random() < 0.3 else None
        handle = await rt.spawn(
            AGENT_TYPE,
            testing.directive(self._behavior()),
            background=self.rng.random() < 0.5,
            parent=parent,
        )
        self.known.append(handle.agent_id)
        self.counters.agents_spawned += 1

    async def _send_input(self, rt: Runtime) -> None:
        target = self._pick_open(rt) if self.rng.random() < 0.8 else self._pick_known()
        if target is not None:
            self.counters.inputs += 1
            await rt.send_input(
                target, testing.directive(self._behavior()), interrupt=self.rng.random() < 0.3
            )

    async def _wait(self, rt: Runtime) -> None:
        if self.known:
            targets = [self.rng.choice(self.known) for _ in range(self.rng.randint(1, 3))]
            self.counters.waits += 1
            await rt.wait(
                targets,
                timeout=self.rng.choice((0.0, 0.01, 0.05)),
                mode=self.rng.choice(("any", "all")),
            )

    async def _close(self, rt: Runtime) -> None:
        target = self._pick_open(rt)
        if target is not None:
            self.counters.closes += 1
            await rt.close(target)

    async def _resume(self, rt: Runtime) -> None:
        open_ids = {info.id for info in rt.list()}
        closed = [a for a in self.known if a not in open_ids]
        target = self.rng.choice(closed) if closed else self._pick_known()
        if target is not None:
            behavior = self._behavior() if self.rng.random() < 0.6 else None
            self.counters.resumes += 1
            await rt.resume(target, None if behavior is None else testing.directive(behavior))

    async def _cancel(self, rt: Runtime) -> None:
        """Cancel a random subtree: close it with no grace period."""
        target = self._pick_open(rt)
        if target is not None:
            self.counters.cancels += 1
            await rt.close(target, grace=0)

    async def _one(self, rt: Runtime) -> None:
        name = self.rng.choices(_OPERATIONS, weights=_OPERATION_WEIGHTS)[0]
        operation: Callable[[Runtime], Any] = getattr(self, f"_{name}")
        self.counters.operations += 1
        with trio.move_on_after(OP_DEADLINE) as scope:
            try:
                await operation(rt)
            except SubagentsError as exc:
                self.counters.refused += 1
                self.counters.by_error[type(exc).__name__] += 1
        if scope.cancelled_caught:
            self._violate(f"{name} took longer than {OP_DEADLINE} s")

    def _violate(self, text: str) -> None:
        if len(self.violations) < 200:
            self.violations.append(text)

    # -- the run ---------------------------------------------------------------------------------

    async def _drive(self, rt: Runtime, until: float) -> None:
        while time.monotonic() < until:
            await self._one(rt)
            stats = rt.supervisor.statistics()
            self.checker.check_statistics(stats)
            self.counters.peak_live = max(self.counters.peak_live, stats.peak_live)

    async def _progress(self) -> None:
        while True:
            await trio.sleep(PROGRESS_EVERY)
            # Read through self, never kept in a local across the sleep: a closed
            # runtime must not be held alive into a memory reading.
            live = 0 if self.runtime is None else self.runtime.supervisor.statistics().live
            print(
                f"[soak {time.monotonic() - self.started:6.1f}s] ops={self.counters.operations} "
                f"spawned={self.counters.agents_spawned} live={live} "
                f"events={self.bus.statistics().published} "
                f"violations={len(self.checker.violations) + len(self.violations)} "
                f"rss={rss_bytes() / 2**20:.1f} MiB",
                file=sys.stderr,
                flush=True,
            )

    async def _epoch(self, until: float) -> None:
        """Open a runtime, drive it until ``until``, close it, and check what it left.

        Its own method so that, once it returns, nothing of the soak refers to the
        runtime any more: the memory readings then see only what outlives it.
        """
        provider = ScriptedProvider(self.policy, latency=0.002)
        # opening, driving (each operation bounded) and closing, all bounded
        with trio.move_on_after(until - time.monotonic() + 3 * OP_DEADLINE) as bound:
            async with open_runtime(
                self.config(),
                cwd=self.project,
                home=self.home,
                env={},
                provider=provider,
                bus=self.bus,
            ) as rt:
                self.runtime = rt
                await self._drive(rt, until)
        if bound.cancelled_caught:
            self._violate("a runtime's epoch (open, drive, close) missed its deadline")
        self.runtime = None
        self.counters.reopens += 1
        stats = rt.supervisor.statistics()
        self.checker.check_after_exit(stats)
        self.counters.peak_live = max(self.counters.peak_live, stats.peak_live)
        # Every agent of this runtime is checked and over: the checker lets them go, so
        # the memory readings measure the runtime, not the checker's records.
        self.checker.forget_finished()

    async def run(self) -> dict[str, Any]:
        _write_agent(self.project)
        self.home.mkdir(parents=True, exist_ok=True)
        self.started = time.monotonic()
        deadline = self.started + self.seconds
        epoch = min(EPOCH_MAX, max(1.0, self.seconds / 5))
        with self.checker.listen(self.bus):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._progress)
                while time.monotonic() < deadline:
                    await self._epoch(min(deadline, time.monotonic() + epoch))
                    if self.rss_start is None:  # the warm-up: the first runtime, open to closed
                        self.blocks_start = python_blocks()
                        self.rss_start = rss_bytes()
                nursery.cancel_scope.cancel()
        return self._report(time.monotonic() - self.started)

    def _report(self, elapsed: float) -> dict[str, Any]:
        blocks_end = python_blocks()
        rss_end = rss_bytes()
        rss_start = rss_end if self.rss_start is None else self.rss_start
        blocks_start = blocks_end if self.blocks_start is None else self.blocks_start
        if rss_end - rss_start > RSS_BOUND:
            self._violate(
                f"RSS grew {(rss_end - rss_start) / 2**20:.1f} MiB "
                f"(bound {RSS_BOUND / 2**20:.0f} MiB)"
            )
        if blocks_end > blocks_start * (1 + BLOCKS_BOUND):
            self._violate(
                f"live Python objects grew {blocks_end / blocks_start - 1:.1%} "
                f"(from {blocks_start} to {blocks_end} blocks; bound {BLOCKS_BOUND:.0%})"
            )
        bus = self.bus.statistics()
        violations = [*self.checker.violations, *self.violations]
        c = self.counters
        return {
            "seed": self.seed,
            "seconds": round(elapsed, 2),
            "max_threads": self.max_threads,
            "operations": c.operations,
            "refused": c.refused,
            "agents_spawned": c.agents_spawned,
            "resumes": c.resumes,
            "closes": c.closes,
            "cancels": c.cancels,
            "waits": c.waits,
            "inputs": c.inputs,
            "reopens": c.reopens,
            "faults": self.policy.faults,
            "peak_live": c.peak_live,
            "events": bus.published,
            "checked_events": self.checker.events,
            "dropped": bus.dropped,
            "rss_start": rss_start,
            "rss_end": rss_end,
            "rss_bound": RSS_BOUND,
            "blocks_start": blocks_start,
            "blocks_end": blocks_end,
            "blocks_bound": BLOCKS_BOUND,
            "refusals": dict(sorted(c.by_error.items())),
            "violations": len(violations),
            "violation_list": violations[:20],
        }


async def run_soak(*, seconds: float, seed: int, max_threads: int) -> dict[str, Any]:
    """Run one soak for ``seconds`` and return its report (a JSON-able dict)."""
    with tempfile.TemporaryDirectory(prefix="subagents-soak-") as folder:
        soak = Soak(seconds=seconds, seed=seed, max_threads=max_threads, root=Path(folder))
        return await soak.run()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="how long to run (120)")
    parser.add_argument("--seed", type=int, default=0, help="the random seed (0)")
    parser.add_argument("--max-threads", type=int, default=16, help="the slot limit (16)")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        parser.error("--seconds must be a positive number")
    if args.max_threads < 1:
        parser.error("--max-threads must be at least 1")
    report = trio.run(
        lambda: run_soak(seconds=args.seconds, seed=args.seed, max_threads=args.max_threads)
    )
    for violation in report["violation_list"]:
        print(f"violation: {violation}", file=sys.stderr)
    print(json.dumps(report), flush=True)
    return 1 if report["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
