"""A Ray worker's body: a Trio runtime in a thread of its own, running many rows at once.

Ray calls an actor's methods on threads of its own (the actor is threaded:
``max_concurrency`` calls at once), while a runtime lives in one Trio run.
So :class:`RowWorker` starts a thread that runs ``trio.run``, opens the
runtime there (``open_runtime`` with the job's cwd, settings and state dir)
and keeps it open until :meth:`RowWorker.close` (``opener`` is ``open_runtime``,
handed in). Ray's calls cross into that thread with ``trio.from_thread`` and
its token:

- :meth:`RowWorker.submit` starts rows (never more than ``concurrency`` at once:
  the driver holds the same bound, so a breach is the driver's bug and refused);
- :meth:`RowWorker.collect` waits up to ``max_wait`` seconds for finished rows,
  then hands back their outcomes and the status events published meanwhile
  (a ``drop_oldest`` subscription of ``event_capacity``: a slow driver loses
  events, never rows);
- :meth:`RowWorker.close` cancels what runs and closes the runtime (its agents
  with it), then joins the thread, within ``timeout``.

Every row is :func:`~subagents.runtime._jobs.rows.run_row` unless a test
injects another function of the same signature. A row that raises is a failed
outcome; the worker goes on.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

import trio

from subagents.actors import AgentSpawned, Event, Lagged, StatusChanged
from subagents.jobs import RowOutcome, RowRequest
from subagents.runtime._jobs.ray.wire import (
    WorkerReport,
    WorkerSpec,
    decode_requests,
    encode_event,
    encode_report,
)

if TYPE_CHECKING:
    from subagents.runtime._providers.base import Provider
    from subagents.runtime._runtime import Runtime
    from subagents.tools import Tool

__all__ = [
    "FORWARDED_EVENTS",
    "ProviderFactory",
    "RowWorker",
    "RunRow",
    "RuntimeOpener",
    "ToolsFactory",
]

RunRow = Callable[["Runtime", RowRequest], Awaitable[RowOutcome]]
"""Runs one row as an agent of a runtime (``rows.run_row``'s signature)."""

ProviderFactory = Callable[[], contextlib.AbstractAsyncContextManager["Provider"]]
"""Makes a worker's provider in the worker's process, which opens and closes it
(``async with``); without one the worker's runtime makes the configured provider."""

RuntimeOpener = Callable[..., contextlib.AbstractAsyncContextManager["Runtime"]]
"""``open_runtime``: given to the worker (by reference, as Ray pickles a module's function),
not imported, since ``open_runtime`` itself wires the job backends, this one included."""

ToolsFactory = Callable[[], Iterable["Tool"]]
"""Makes, in the worker's process, the tools its runtime offers every agent (``open_runtime``'s
``tools``)."""

#: The bus events a worker forwards to the driver: its agents' statuses.
FORWARDED_EVENTS: Final[tuple[type[Event], ...]] = (AgentSpawned, StatusChanged)


def _default_run_row() -> RunRow:
    from subagents.runtime._jobs.rows import run_row

    return run_row


@final
class RowWorker:
    """One worker process's runtime and the rows it runs (wrapped by ``ray.remote``)."""

    def __init__(
        self,
        spec: WorkerSpec,
        opener: RuntimeOpener,
        run_row: RunRow | None = None,
        provider_factory: ProviderFactory | None = None,
        tools_factory: ToolsFactory | None = None,
    ) -> None:
        self._spec = spec
        self._opener = opener
        self._tools_factory = tools_factory
        self._run_row = run_row if run_row is not None else _default_run_row()
        self._provider_factory = provider_factory
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._running = 0
        self._done: list[RowOutcome] = []
        self._thread = threading.Thread(
            target=self._thread_main, name="subagents-ray-worker", daemon=True
        )
        self._thread.start()

    # -- Ray's calls (on Ray's threads) -------------------------------------------------

    def ready(self, timeout: float) -> int:
        """Wait until the runtime is open (or failed to open); return this process's id."""
        if not self._ready.wait(timeout):
            raise TimeoutError(f"The worker's runtime did not open within {timeout:g} s.")
        if self._failure is not None:
            raise RuntimeError(
                f"The worker's runtime could not open: {self._failure}"
            ) from self._failure
        return os.getpid()

    def submit(self, payload: bytes) -> int:
        """Start the rows of ``payload`` (encoded requests); return how many now run."""
        requests = decode_requests(payload)
        result: int = trio.from_thread.run_sync(self._start, requests, trio_token=self._live())
        return result

    def collect(self, max_wait: float) -> bytes:
        """Outcomes and events since the last collect, waiting up to ``max_wait`` for one."""
        result: bytes = trio.from_thread.run(self._take, max_wait, trio_token=self._live())
        return result

    def close(self, timeout: float) -> bool:
        """Cancel the rows, close the runtime and join its thread; whether it ended in time."""
        token = self._token
        if token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._stop.set, trio_token=token)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _live(self) -> trio.lowlevel.TrioToken:
        if self._token is None or not self._thread.is_alive():
            raise RuntimeError("The worker's runtime is not running.")
        return self._token

    # -- the Trio thread ------------------------------------------------------------------

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except Exception as exc:  # the thread's end: kept for ready(), never re-raised here
            self._failure = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        from subagents.runtime._config.loader import load_config

        spec = self._spec
        self._stop = trio.Event()
        self._has_done = trio.Event()
        cwd = Path(spec.cwd)
        home = None if spec.home is None else Path(spec.home)
        config = await trio.to_thread.run_sync(
            lambda: load_config(
                cwd=cwd, home=home, overrides=spec.overrides, trust_project=spec.trust_project
            )
        )
        async with contextlib.AsyncExitStack() as stack:
            provider: Provider | None = None
            if self._provider_factory is not None:
                provider = await stack.enter_async_context(self._provider_factory())
            rt = await stack.enter_async_context(
                self._opener(
                    config,
                    cwd=cwd,
                    home=home,
                    provider=provider,
                    tools=() if self._tools_factory is None else self._tools_factory(),
                    trust_project=spec.trust_project,
                )
            )
            self._events = stack.enter_context(
                rt.bus.subscribe(
                    types=FORWARDED_EVENTS, capacity=spec.event_capacity, policy="drop_oldest"
                )
            )
            self._rt = rt
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()
                await self._stop.wait()
                nursery.cancel_scope.cancel()

    def _start(self, requests: list[RowRequest]) -> int:
        if self._running + len(requests) > self._spec.concurrency:
            raise ValueError(
                f"{self._running} rows run and {len(requests)} more were sent: past this "
                f"worker's concurrency of {self._spec.concurrency}."
            )
        for request in requests:
            self._running += 1
            self._nursery.start_soon(self._run_one, request)
        return self._running

    async def _run_one(self, request: RowRequest) -> None:
        started = time.time()
        try:
            outcome = await self._run_row(self._rt, request)
        except Exception as exc:  # a row's crash is its outcome; the worker goes on
            outcome = RowOutcome(
                job_id=request.job_id,
                item_id=request.item_id,
                attempt=request.attempt,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                started_at=started,
                completed_at=time.time(),
            )
        self._running -= 1
        self._done.append(outcome)
        self._has_done.set()

    async def _take(self, max_wait: float) -> bytes:
        if not self._done:
            with trio.move_on_after(max_wait):
                await self._has_done.wait()
        outcomes, self._done = self._done, []
        self._has_done = trio.Event()
        events: list[Any] = []
        dropped = 0
        for _ in range(self._spec.event_capacity):
            try:
                item = self._events.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            if isinstance(item, Lagged):
                dropped += item.dropped
            else:
                events.append(encode_event(item))
        return encode_report(WorkerReport(outcomes=outcomes, events=events, dropped_events=dropped))
