"""Running blocking file work in a worker thread that stops when the caller is cancelled.

``trio.to_thread.run_sync`` either abandons a thread on cancellation (which
then outlives the scope that started it) or ignores cancellation, and Ctrl-C,
until the thread returns. Here the thread is let go of only long enough for
the cancellation or ``KeyboardInterrupt`` to reach the caller: the stop flag
is set, the caller waits (shielded) until the work function, which checks the
flag between files and chunks, has returned, and only then does the
cancellation or interrupt propagate. So a worker never outlives the call, and
the call ends as soon as the worker sees its flag.

A cancellation can also arrive before the worker has started (Trio checks for
one while it takes a thread token). Then there is nothing to wait for: the
call is marked given up, and a worker that starts later returns at once
without running the work.
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


class _GivenUp(Exception):
    """The caller left before the worker started; the work was never run."""


async def run_in_thread(fn: Callable[[StopFlag], T]) -> T:
    """Run ``fn(stop)`` in a worker thread; set ``stop`` if the caller is cancelled."""
    stop = StopFlag()
    finished = threading.Event()
    lock = threading.Lock()
    started = False
    given_up = False

    def work(stop: StopFlag) -> T:
        nonlocal started
        with lock:
            if given_up:
                raise _GivenUp
            started = True
        try:
            return fn(stop)
        finally:
            finished.set()

    try:
        # Abandoning lets a Cancelled or a KeyboardInterrupt (which cannot be
        # refused the way a cancellation can) leave this wait at once...
        return await trio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    except BaseException:
        # ...and here the worker is told to stop and waited for, if it ever
        # started, then it is raised on.
        stop.set()
        with lock:
            given_up = True
            running = started
        if running and not finished.is_set():
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(finished.wait)
        raise
