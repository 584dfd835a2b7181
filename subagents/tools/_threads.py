"""Running blocking file work in a worker thread that stops when the caller is cancelled.

``trio.to_thread.run_sync`` either abandons a thread on cancellation (which
then outlives the scope that started it) or ignores cancellation until the
thread returns. Here the thread is never abandoned: a watcher task sets a
``threading.Event`` when the caller is cancelled, the work function checks it
between files and chunks and returns early, and only then does the
cancellation propagate.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import trio

__all__ = ["StopFlag", "run_in_thread"]

T = TypeVar("T")

#: Set when the caller has been cancelled; work functions check ``is_set()``.
StopFlag = threading.Event


async def run_in_thread(fn: Callable[[StopFlag], T]) -> T:
    """Run ``fn(stop)`` in a worker thread; set ``stop`` if the caller is cancelled."""
    stop = StopFlag()
    failure: Exception | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_set_on_cancel, stop)
        try:
            result = await trio.to_thread.run_sync(fn, stop)
        except Exception as exc:
            # Raised again below, outside the nursery, so callers see the
            # exception itself rather than an ExceptionGroup around it.
            failure = exc
        nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


async def _set_on_cancel(stop: StopFlag) -> None:
    try:
        await trio.sleep_forever()
    finally:
        stop.set()
