"""Blocking file work runs in a worker thread that is stopped, never abandoned, on cancellation."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

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


def _finishes(main: Callable[[], Awaitable[object]]) -> bool:
    """Run ``main`` under Trio in a helper thread; whether it ended within 20 s.

    A regression here is a hang (a shielded wait for a worker that never
    started), so the test must not wait on it forever.
    """
    runner = threading.Thread(target=trio.run, args=(main,), daemon=True)
    runner.start()
    runner.join(20)
    return not runner.is_alive()


def test_a_call_cancelled_before_its_worker_starts_returns_without_running_the_work() -> None:
    ran: list[int] = []

    async def main() -> None:
        with trio.CancelScope() as scope:
            scope.cancel()
            await run_in_thread(lambda stop: ran.append(1))
        assert scope.cancelled_caught

    assert _finishes(main)
    assert ran == []


def test_a_call_cancelled_while_every_thread_token_is_taken_neither_hangs_nor_runs_later() -> None:
    """Forty busy threads hold the default limiter; a call cancelled behind them just leaves."""
    ran: list[int] = []

    async def main() -> None:
        limiter = trio.to_thread.current_default_thread_limiter()
        holders = [object() for _ in range(int(limiter.total_tokens))]
        for holder in holders:
            limiter.acquire_on_behalf_of_nowait(holder)
        try:
            with trio.move_on_after(0.05) as scope:
                await run_in_thread(lambda stop: ran.append(1))
            assert scope.cancelled_caught
        finally:
            for holder in holders:
                limiter.release_on_behalf_of(holder)
        assert await run_in_thread(lambda stop: 7) == 7

    assert _finishes(main)
    assert ran == []
