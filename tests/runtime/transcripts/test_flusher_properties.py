"""Property test of the transcripts' fast path: random operations with the flusher at work.

``test_runtime_stateful.py`` runs random operation sequences on a virtual clock,
where the flusher declines (waiting for its helper process or a worker thread
would let the clock jump): every line is written at once and every ``fsync``
made in the Trio thread. The path users take is the other one (issue 17): lines
held back for their turn, new files gathered over scheduler passes and made by
the helper process, results ``fsync``-ed in batches by it. This test draws the
same operations (spawn, send_input, wait, close, resume, cancel) and, between
them, how far the scheduler gets (no pass, one, a few, or until every task is
blocked) or a ``kill -9`` of the helper process, and runs them on the real
clock, so that closes, resumes, cancellations and the helper's death land while
files are being made and results synced. Nothing sleeps: the tools take no time
and the waits' timeouts are zero.

Statuses step by step depend on when the helper answers here, so they are not
checked; what must hold whatever the timing is: the event stream's invariants
(:class:`~subagents.testing.InvariantChecker`: one final status per run, every
run's result on disk before its final status), ``SubagentStart`` and
``SubagentStop`` paired, no transcript left open, and every agent's transcript
loading without a problem into the very conversation the runtime holds.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents import testing
from subagents.runtime import Runtime, ScriptedProvider
from subagents.runtime._transcripts.flusher import TranscriptFlusher
from subagents.runtime._transcripts.syncer import helper_available
from tests.runtime.helpers import SlowTool
from tests.runtime.operations import run_operations
from tests.runtime.world import World

MAX_THREADS = 4
_counter = itertools.count()

#: What happens between two operations: that many checkpoints; (``None``) until every
#: task is blocked (files made, results synced, or waiting for the helper's answer); or
#: (``KILL``) the helper process killed, with whatever it was making or syncing.
KILL = "kill the helper"
_PAUSES = st.sampled_from((0, 1, 3, None, KILL))


async def _pause(flusher: TranscriptFlusher, pause: int | str | None) -> None:
    if pause == KILL:
        pid = flusher.helper_pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return
    if pause is None:
        await trio.testing.wait_all_tasks_blocked()
        return
    assert isinstance(pause, int)
    for _ in range(pause):
        await trio.lowlevel.checkpoint()


async def _scenario(root: Path, ops: list[Any], pauses: list[int | str | None]) -> None:
    between = itertools.cycle(pauses)

    async def step(
        rt: Runtime, op: Any, agents: list[str], checker: testing.InvariantChecker
    ) -> None:
        # A refusal comes back as the SubagentsError it was; anything else is raised.
        await testing.apply_operation(rt, op, agents, agent_type="worker")
        await _pause(rt.services.flusher, next(between))

    await run_operations(root, ops, step, max_threads=MAX_THREADS)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    ops=testing.operations(max_size=14, timeouts=(0.0,)),
    pauses=st.lists(_PAUSES, min_size=1, max_size=14),
)
def test_random_operations_on_the_real_clock_keep_every_transcript_whole(
    ops: list[Any], pauses: list[int | str | None]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / f"example-{next(_counter)}"
        trio.run(_scenario, root, ops, pauses)


def test_the_fast_path_is_the_one_under_test(tmp_path: Path) -> None:
    """On the real clock the flusher works: its helper process made the files and synced
    the results (when it can run here), or its worker threads did; not the Trio thread."""

    async def main() -> None:
        world = World(tmp_path, limits={"max_threads": MAX_THREADS})
        world.agent("worker", tools="Note")
        provider = ScriptedProvider(testing.DirectivePolicy(tool="Note", arguments={"text": "n"}))
        async with world.open(provider, tools=[SlowTool("Note")]) as rt:
            ids = [
                (
                    await rt.spawn("worker", testing.directive(testing.ScriptedBehavior.TOOL))
                ).agent_id
                for _ in range(MAX_THREADS)
            ]
            await rt.wait(ids, timeout=30, mode="all")
            flusher = rt.services.flusher
            if helper_available():
                assert flusher.helper_pid is not None
            else:
                assert flusher.opened_files + flusher.synced > 0

    trio.run(main)
