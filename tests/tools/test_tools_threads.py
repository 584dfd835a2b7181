"""Blocking file work runs in a worker thread that is stopped, never abandoned, on cancellation."""

from __future__ import annotations

import threading

import pytest
import trio

from subagents.tools._builtin.threads import StopFlag, run_in_thread


async def test_the_result_comes_back() -> None:
    assert await run_in_thread(lambda stop: 41 + 1) == 42


async def test_an_exception_is_raised_as_itself() -> None:
    def fail(stop: StopFlag) -> None:
        raise ValueError("bad file")

    with pytest.raises(ValueError, match="bad file"):
        await run_in_thread(fail)


async def test_cancellation_stops_the_worker_before_propagating() -> None:
    started = threading.Event()
    finished = threading.Event()

    def work(stop: StopFlag) -> bool:
        started.set()
        stopped = stop.wait(30)
        finished.set()
        return stopped

    results: list[bool] = []
    with trio.move_on_after(0.05) as scope:
        results.append(await run_in_thread(work))
    assert scope.cancelled_caught
    assert results == []
    assert started.is_set()
    assert finished.is_set()
