"""Writing batches of lines to a stream without blocking the Trio loop or losing a batch.

The plain printer and the JSON-lines writer both write to stdout, which may be
a slow pipe: :class:`LineSink` writes each batch from a worker thread and keeps
a batch whose write was cancelled, so the owners can write it before their
last, synchronous lines.
"""

from __future__ import annotations

from typing import TextIO, final

import trio

__all__ = ["LineSink"]


@final
class LineSink:
    """Writes text to a stream, from a worker thread when ``threaded``, never losing a batch.

    A write that was cancelled before its thread started stays pending and is
    written by :meth:`flush_pending` (the owners call it before their final,
    synchronous writes), so lines keep their order and none is lost on exit.
    A thread write itself is not abandoned on cancel: its batch is always
    written whole, so lines never interleave.
    """

    __slots__ = ("_pending", "out", "threaded")

    def __init__(self, out: TextIO, *, threaded: bool = True) -> None:
        self.out = out
        self.threaded = threaded
        self._pending: str | None = None

    def write_now(self, text: str) -> None:
        """Write ``text`` and flush, in this thread."""
        self.out.write(text)
        self.out.flush()

    async def write(self, text: str) -> None:
        """Write ``text`` and flush, in a worker thread when ``threaded``."""
        if not self.threaded:
            self.write_now(text)
            await trio.lowlevel.checkpoint()
            return
        self._pending = text
        await trio.to_thread.run_sync(self.write_now, text)
        self._pending = None

    def flush_pending(self) -> None:
        """Write, in this thread, a batch whose write was cancelled before it started."""
        text, self._pending = self._pending, None
        if text is not None:
            self.write_now(text)
