"""Counting a task's steps: how many times Trio ran it again after it yielded.

A step is one scheduler pass a task was woken in, so the count says how often a
call yielded (a spawn's schedule point, a round trip's sleep) without reading
Trio's internals: ``trio.abc.Instrument.before_task_step`` sees every step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio


class Steps(trio.abc.Instrument):
    """Counts the steps of one task (each a scheduler pass it was woken in), or of all."""

    def __init__(self, task: trio.lowlevel.Task | None) -> None:
        self.task = task
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if self.task is None or task is self.task:
            self.steps += 1


async def steps_of(call: Callable[[], Awaitable[object]], *, every_task: bool = False) -> int:
    """The steps the calling task (or, with ``every_task``, every task) takes while ``call()``
    runs: how many times it yielded."""
    counter = Steps(None if every_task else trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(counter)
    try:
        await call()
    finally:
        trio.lowlevel.remove_instrument(counter)
    return counter.steps
