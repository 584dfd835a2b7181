"""The runtime's transcript flusher: lines held back and results to ``fsync``, once per pass.

A :class:`~subagents.runtime._transcripts.writer.TranscriptWriter` given a
flusher holds back the line that opens a turn (an assistant message with tool
calls) to write it with the turn's tool results, in one ``write``. Should the
tools take longer than this scheduler pass, the line must not wait for them:
the writer asks :meth:`TranscriptFlusher.want`, whose task, woken for the next
pass (never per line: the first line of a pass wakes it, the others join),
writes every line held back. Outside its task (before it starts, after it
stops) the flusher declines, and the writer writes at once, as without one.

**Results.** A result must be on disk (``fsync``) before its completion is
announced. One ``fsync`` costs milliseconds on a busy disk, and made in the
Trio thread it stalls every agent: 1,000 agents ending together waited for
1,000 ``fsync`` calls in a row (8.5x the ideal time in runtime_efficiency_1000).
:meth:`TranscriptFlusher.sync` waits for its file's ``fsync``, which the
flusher's task makes with those of every result of the same pass, at once, in
worker threads (the file system commits them together: about 0.2 ms each
instead of 3 ms on this machine's disk). The wait is shielded, so the result is
on disk before the caller goes on, however it is cancelled. Under a virtual
clock (``trio.testing.MockClock``), where waiting for a thread would let the
clock jump, and when the task is not running, the ``fsync`` is made at once, in
the caller's thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Protocol, final

import trio
import trio.testing

from subagents.runtime._exceptions import TranscriptError

__all__ = ["Flushable", "Flusher", "TranscriptFlusher"]


class Flushable(Protocol):
    """What a flusher flushes: a writer with a line held back."""

    def flush(self) -> None: ...


class Flusher(Protocol):
    """What a writer asks to flush it at the end of the scheduler pass."""

    def want(self, writer: Flushable, /) -> bool: ...


@final
class TranscriptFlusher:
    """Flushes, once per scheduler pass, the writers that held a line back in it."""

    __slots__ = ("_lot", "_pending", "_running", "_syncs", "passes", "synced")

    def __init__(self) -> None:
        self._lot = trio.lowlevel.ParkingLot()
        self._pending: dict[Flushable, None] = {}
        self._syncs: dict[int, _Sync] = {}
        self._running = False
        #: How many results' ``fsync`` calls the task made in worker threads.
        self.synced = 0
        #: How many passes had lines to write (each wrote every line held back in it).
        self.passes = 0

    def want(self, writer: Flushable, /) -> bool:
        """Flush ``writer`` at the end of this pass; ``False`` when the flusher is not running."""
        if not self._running:
            return False
        if not self._pending:
            self._lot.unpark()
        self._pending[writer] = None
        return True

    async def sync(self, fd: int) -> None:
        """``fsync`` the file ``fd`` (a result was just written), with the results of this pass.

        Returns once it is done; raises its ``OSError``. Shielded from cancellation.
        """
        if not self._running or isinstance(trio.lowlevel.current_clock(), trio.testing.MockClock):
            os.fsync(fd)
            return
        waiting = self._syncs.get(fd)
        if waiting is None:
            if not self._pending and not self._syncs:
                self._lot.unpark()
            waiting = self._syncs[fd] = _Sync()
        with trio.CancelScope(shield=True):
            await waiting.done.wait()
        if waiting.error is not None:
            raise waiting.error

    async def _sync_all(self) -> None:
        syncs, self._syncs = self._syncs, {}
        if not syncs:
            return

        async def one(fd: int, waiting: _Sync) -> None:
            try:
                await trio.to_thread.run_sync(os.fsync, fd)
            except OSError as exc:
                waiting.error = exc
            finally:
                self.synced += 1
                waiting.done.set()

        with trio.CancelScope(shield=True):  # the callers wait, shielded, for every one
            async with trio.open_nursery() as nursery:
                for fd, waiting in syncs.items():
                    nursery.start_soon(one, fd, waiting)

    def flush(self) -> None:
        """Write every line held back now (a writer's error stays the writer's: its next line
        raises it, or its policy holds the line in memory)."""
        pending, self._pending = self._pending, {}
        if pending:
            self.passes += 1
        for writer in pending:
            with contextlib.suppress(TranscriptError):
                writer.flush()

    async def run(self) -> None:
        """Flush at the end of each pass with lines held back, until cancelled or :meth:`stop`."""
        self._running = True
        try:
            while self._running:
                # What came while the last fsync calls ran is handled without parking.
                if not self._pending and not self._syncs:
                    await self._lot.park()
                self.flush()
                await self._sync_all()
        finally:
            self._running = False
            self.flush()
            self._sync_now()

    def _sync_now(self) -> None:
        """The flusher stops: the results still waiting are synced here, at once."""
        syncs, self._syncs = self._syncs, {}
        for fd, waiting in syncs.items():
            try:
                os.fsync(fd)
            except OSError as exc:
                waiting.error = exc
            waiting.done.set()

    def stop(self) -> None:
        """Write what is held back and end :meth:`run`; later writers write at once."""
        self._running = False
        self._lot.unpark_all()
        self.flush()
        self._sync_now()


@final
class _Sync:
    """One file waiting for its ``fsync``: set when done, with its error if it failed."""

    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.error: OSError | None = None
