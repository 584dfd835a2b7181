"""The runtime's transcript flusher: the lines held back in one scheduler pass, written at its end.

A :class:`~subagents.runtime._transcripts.writer.TranscriptWriter` given a
flusher holds back the line that opens a turn (an assistant message with tool
calls) to write it with the turn's tool results, in one ``write``. Should the
tools take longer than this scheduler pass, the line must not wait for them:
the writer asks :meth:`TranscriptFlusher.want`, whose task, woken for the next
pass (never per line: the first line of a pass wakes it, the others join),
writes every line held back. Outside its task (before it starts, after it
stops) the flusher declines, and the writer writes at once, as without one.
"""

from __future__ import annotations

import contextlib
from typing import Protocol, final

import trio

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

    __slots__ = ("_lot", "_pending", "_running", "passes")

    def __init__(self) -> None:
        self._lot = trio.lowlevel.ParkingLot()
        self._pending: dict[Flushable, None] = {}
        self._running = False
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
                await self._lot.park()
                self.flush()
        finally:
            self._running = False
            self.flush()

    def stop(self) -> None:
        """Write what is held back and end :meth:`run`; later writers write at once."""
        self._running = False
        self._lot.unpark_all()
        self.flush()
