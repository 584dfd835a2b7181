"""The local backend: each row an agent of this process's runtime, ``max_concurrency`` at a time.

It runs :func:`~subagents.runtime._jobs.rows.run_row` for each request it
receives, in a task of its own, never more at once than its limit (a
semaphore taken before the next request is read, so the request channel
stays the backpressure), and sends each outcome back. It returns once the
request channel is closed and every row it took has its outcome.

Rows that are ready (a free slot, a request waiting) are started several in
one go (:data:`~subagents.jobs.ROWS_PER_PASS`), not one per pass of the
scheduler: the agents started together make their transcript files and
``fsync`` their results in the same batch of the runtime's file helper, where
one row per pass sent it one or two files at a time (a round trip each).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

import trio

from subagents.actors import Event
from subagents.jobs import ROWS_PER_PASS, RowOutcome, RowRequest
from subagents.runtime._jobs.rows import run_row
from subagents.runtime._runtime import Runtime

__all__ = ["LocalBackend"]


@final
class LocalBackend:
    """Rows as agents of ``runtime``, at most ``max_concurrency`` at once."""

    name = "local"

    def __init__(self, runtime: Runtime, max_concurrency: int) -> None:
        self._runtime = runtime
        self._slots = trio.Semaphore(max_concurrency)

    async def run(
        self,
        requests: trio.MemoryReceiveChannel[RowRequest],
        outcomes: trio.MemorySendChannel[RowOutcome],
        publish: Callable[[Event], None],
    ) -> None:
        """Run every request until the channel is closed; one outcome each."""
        slots = self._slots
        async with trio.open_nursery() as nursery:
            started = 0
            while True:
                if started == ROWS_PER_PASS:  # the rows started so far run now
                    started = 0
                    await trio.lowlevel.checkpoint()
                try:
                    slots.acquire_nowait()
                except trio.WouldBlock:
                    started = 0
                    await slots.acquire()
                try:
                    try:
                        request = requests.receive_nowait()
                    except trio.WouldBlock:
                        started = 0
                        request = await requests.receive()
                except trio.EndOfChannel:
                    slots.release()
                    break
                except BaseException:
                    slots.release()
                    raise
                nursery.start_soon(self._row, request, outcomes)
                started += 1

    async def _row(self, request: RowRequest, outcomes: trio.MemorySendChannel[RowOutcome]) -> None:
        try:
            outcome = await run_row(self._runtime, request)
        finally:
            self._slots.release()
        await outcomes.send(outcome)
