"""Reliability under cancellation storms: nothing outlives the runtime, whatever is cancelled.

Scripted agents spawn children of their own (the ``spawn_agent`` tool, down to
``max_depth`` 3, hitting ``max_threads`` on the way) while Hypothesis draws a
storm: top-level spawns, time passing, bursts of concurrent ``Runtime.close``
calls on random subtrees with a random grace (0, short, the default), and a
cancel of the scope that owns the runtime after a random delay, which can land
in the middle of a close ladder, a spawn or a turn. After the runtime's block,
left normally or by that cancellation, nothing is left: no task (the task tree
is the size it was before), no slot, no bus subscription, no open transcript,
and no file descriptor pointing into the state directory (read from
``/proc/self/fd``; skipped where there is none). Throughout,
:class:`~subagents.testing.InvariantChecker` reads every event as it is
published: slots within bounds, one final status per run, every run's result
on disk before its final status.

The model-based property test of single operations is
``tests/runtime/test_runtime_stateful.py``; the kernel's own stateful
test is ``tests/actors/test_supervisor_stateful.py``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import attrs
import hypothesis.strategies as st
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings

from subagents import SubagentsError, testing
from subagents.actors import Bus
from subagents.runtime import (
    ModelRequest,
    Origin,
    Reply,
    ScriptedProvider,
    ScriptedToolCall,
)
from tests.runtime.helpers import SlowTool
from tests.runtime.world import World

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="counts open files through /proc/self/fd (Linux)"
)

MAX_THREADS = 8
MAX_DEPTH = 3
CHILDREN = 2
HANG = "[hang]"
_counter = itertools.count()


def node_policy(request: ModelRequest) -> Reply:
    """Spawn two children (if this depth may), use a tool, then answer, or hang if told to."""
    task = next(m.text for m in request.messages if m.origin is Origin.TASK)
    may_spawn = any(tool["name"] == "spawn_agent" for tool in request.tools)
    if request.turn == 0 and may_spawn:
        return Reply(
            text="Splitting the work.",
            tool_calls=tuple(
                ScriptedToolCall(
                    "spawn_agent",
                    {"agent_type": "node", "message": f"Part {n}. {HANG if n == 0 else ''}"},
                )
                for n in range(CHILDREN)
            ),
        )
    if request.turn < 2:
        return Reply.call("Note", text="n", seconds=0.5)
    if HANG in task:
        return Reply(hang=True)
    return Reply(text="Done.")


# -- the storm -----------------------------------------------------------------------------


@attrs.frozen
class SpawnTop:
    """A top-level agent (it spawns its own subtree)."""

    hang: bool


@attrs.frozen
class Advance:
    """Let ``seconds`` pass: agents spawn, call tools, finish."""

    seconds: float


@attrs.frozen
class CloseBurst:
    """Close the agents at ``targets`` (indexes into every agent seen), all at once."""

    targets: tuple[int, ...]
    grace: float | None


@attrs.frozen
class CancelLater:
    """Cancel the scope owning the runtime ``delay`` seconds from now (whatever runs then)."""

    delay: float


Storm = SpawnTop | Advance | CloseBurst | CancelLater

_advance = st.builds(Advance, st.sampled_from((0.0, 0.25, 0.5, 1.0, 2.0)))
_steps = st.one_of(
    st.builds(SpawnTop, st.booleans()),
    _advance,
    _advance,  # twice as likely: trees grow while time passes
    st.builds(
        CloseBurst,
        st.lists(st.integers(0, 20), min_size=1, max_size=3).map(tuple),
        st.sampled_from((0.0, 0.1, None)),
    ),
    st.builds(CancelLater, st.sampled_from((0.0, 0.1, 0.5, 1.5, 3.0))),
)


def _one_cancel(steps: list[Storm]) -> list[Storm]:
    """Keep the first ``CancelLater`` only: one cancel ends the runtime."""
    seen = False
    kept: list[Storm] = []
    for step in steps:
        if isinstance(step, CancelLater):
            if seen:
                continue
            seen = True
        kept.append(step)
    return kept


storms = st.tuples(st.builds(SpawnTop, st.booleans()), st.lists(_steps, max_size=10)).map(
    lambda pair: _one_cancel([pair[0], *pair[1]])
)


# -- what is left ----------------------------------------------------------------------------


def task_count() -> int:
    """Every task of this Trio run, from the root down."""
    count, stack = 0, [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        count += 1
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return count


def fds_into(folder: Path) -> list[str]:
    """The targets of this process's open file descriptors that lie under ``folder``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since the listing (the listing's own descriptor)
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


async def close_burst(rt: Any, step: CloseBurst) -> None:
    agents = [row.id for row in rt.list(include_closed=True)]
    if not agents:
        return

    async def close(agent: str) -> None:
        with contextlib.suppress(SubagentsError):  # a record forgotten already
            await rt.close(agent, grace=step.grace)

    async with trio.open_nursery() as burst:
        for index in step.targets:
            burst.start_soon(close, agents[index % len(agents)])


async def cancel_later(scope: trio.CancelScope, delay: float) -> None:
    await trio.sleep(delay)
    scope.cancel()


@attrs.define
class Seen:
    """What the storm saw while it blew (kept when the cancel cuts it short)."""

    deepest: int = 0
    open_files: bool = False


async def blow(rt: Any, steps: list[Storm], scope: trio.CancelScope, seen: Seen) -> None:
    """Play ``steps`` on ``rt``, noting the deepest agent and whether transcripts were open."""
    async with trio.open_nursery() as storm:
        for step in steps:
            if isinstance(step, SpawnTop):
                with contextlib.suppress(SubagentsError):  # over max_threads: refused
                    await rt.spawn("node", f"Lead the work. {HANG if step.hang else ''}")
                seen.open_files |= bool(fds_into(rt.config.state_dir))
            elif isinstance(step, Advance):
                await trio.sleep(step.seconds)
            elif isinstance(step, CloseBurst):
                await close_burst(rt, step)
            else:
                storm.start_soon(cancel_later, scope, step.delay)
            seen.deepest = max([seen.deepest, *(row.depth for row in rt.list())])


async def play(root: Path, steps: list[Storm]) -> tuple[int, bool]:
    """Play ``steps``, check nothing is left; return the deepest depth and whether cancelled."""
    world = World(root, limits={"max_threads": MAX_THREADS, "max_depth": MAX_DEPTH})
    world.agent("node", tools="spawn_agent, Note")
    provider = ScriptedProvider(policies={"node": node_policy}, latency=0.25)
    tasks_before = task_count()
    bus = Bus()
    checker = testing.InvariantChecker(max_threads=MAX_THREADS, state_dir=world.state)
    seen = Seen()
    # The checker reads each event as it is published (a reader task falls behind).
    with checker.listen(bus):
        with trio.CancelScope() as scope:
            async with world.open(provider, bus=bus, tools=[SlowTool("Note")]) as rt:
                await blow(rt, steps, scope, seen)
        await trio.testing.wait_all_tasks_blocked()

        stats = rt.statistics()
        checker.check_after_exit(stats.supervisor)
        assert (stats.supervisor.live, stats.supervisor.open, stats.supervisor.tasks) == (0, 0, 0)
        assert stats.bus.subscribers == 0  # the runtime's are gone
        assert stats.transcripts_open == 0
        assert fds_into(root) == []
        assert task_count() == tasks_before  # nothing left running
    checker.assert_ok()
    assert seen.open_files  # the descriptor count does see open transcripts
    return seen.deepest, scope.cancelled_caught


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=storms)
def test_a_cancellation_storm_leaves_no_task_slot_subscription_or_open_file(
    steps: list[Storm],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / f"storm-{next(_counter)}"
        trio.run(play, root, steps, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_deep_tree_with_a_subtree_closed_and_the_runtime_cancelled_leaves_nothing() -> None:
    """One storm spelled out: the tree at full depth, two subtrees closed, then a cancel."""
    steps: list[Storm] = [
        SpawnTop(hang=True),
        Advance(2.0),
        CancelLater(0.05),
        CloseBurst((1, 2), grace=None),
        Advance(1.0),
    ]
    with tempfile.TemporaryDirectory() as folder:
        clock = trio.testing.MockClock(autojump_threshold=0)
        deepest, cancelled = trio.run(play, Path(folder), steps, clock=clock)
    assert deepest == MAX_DEPTH
    assert cancelled
