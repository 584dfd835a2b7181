"""The driver's side of one job on Ray: hand rows out, collect outcomes, survive lost workers.

One task reads the engine's requests into a small internal channel
(``batch_size`` rows: with the workers' slots, the backpressure); each
worker slot runs a worker incarnation (:class:`WorkerLink`) with two tasks:

- the feeder (once every first worker has started, so rows spread evenly)
  takes a slot of the worker's ``concurrency`` (a semaphore), then
  a row, then as many more rows as both are free for at once, and hands the
  batch to the worker in one call: never more than ``workers * concurrency``
  rows are out on workers;
- the collector long-polls the worker (``collect``, up to ``collect_wait``)
  for outcomes and status events, sends each outcome to the engine, then
  frees its slot, and publishes the events on the driver's bus.

Every call to Ray blocks in a worker thread, bounded by ``ray.get``'s
timeout (never on the Trio thread). Any Ray error (``ActorDiedError`` when
the process died, ``GetTimeoutError`` when it stopped answering) makes the
worker lost: it is killed, the rows it held and had not reported go back to
the internal channel for any worker, and the slot starts a fresh worker while
``max_worker_restarts`` lasts. An outcome is sent to the engine before its row
leaves the worker's books, and a send is atomic under cancellation, so each
request gets exactly one outcome: a row is run again only if its outcome
never reached the engine. When every slot has given up, the job fails with
:class:`~subagents.jobs.JobBackendUnavailable`; rows without an outcome stay
pending in the job's state, for a resume.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, final

import msgspec
import trio

from subagents.actors import Event
from subagents.jobs import JobBackendUnavailable, RowOutcome, RowRequest
from subagents.runtime._jobs.ray.options import RayOptions
from subagents.runtime._jobs.ray.wire import (
    WorkerReport,
    WorkerSpec,
    decode_event,
    decode_report,
    encode_requests,
)
from subagents.runtime._jobs.ray.worker import (
    ProviderFactory,
    RowWorker,
    RunRow,
    RuntimeOpener,
    ToolsFactory,
)

__all__ = ["Dispatch", "WorkerLink"]

Key = tuple[str, int]
"""A row attempt: its item id and attempt number."""

#: Calls a worker actor serves at once: a submit, a collect, a close, one spare.
_ACTOR_CALLS = 4


def _key(value: RowRequest | RowOutcome) -> Key:
    return (value.item_id, value.attempt)


@final
class WorkerLink:
    """One worker incarnation as the driver sees it: its actor, its slots, its rows out."""

    def __init__(self, dispatch: Dispatch, handle: Any, pid: int) -> None:
        self.handle = handle
        self.pid = pid
        #: The rows handed to this worker whose outcome has not reached the engine.
        self.in_flight: dict[Key, RowRequest] = {}
        #: Why the worker was lost (``None`` while it is fine).
        self.lost: str | None = None
        self._dispatch = dispatch
        self._slots = trio.Semaphore(dispatch.options.concurrency)
        self._work = trio.Event()
        self._feeding_done = False
        self._scope = trio.CancelScope()

    async def serve(self) -> None:
        """Feed and collect until the job has no row left, or the worker is lost."""
        with self._scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._feed)
                nursery.start_soon(self._collect)

    async def _call(self, ref: Any, timeout: float) -> Any:
        try:
            return await self._dispatch.get(ref, timeout)
        except self._dispatch.ray.exceptions.RayError as exc:
            self.lost = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            self._scope.cancel()
            await trio.lowlevel.checkpoint()  # raises Cancelled: the worker's tasks unwind
            raise  # pragma: no cover - the checkpoint above always raises

    async def _feed(self) -> None:
        options = self._dispatch.options
        receive = self._dispatch.rows
        await self._dispatch.started.wait()
        while True:
            await self._slots.acquire()
            try:
                first = await receive.receive()
            except trio.EndOfChannel:
                self._slots.release()
                break
            batch = [first]
            self.in_flight[_key(first)] = first
            while len(batch) < options.batch_size:
                try:
                    self._slots.acquire_nowait()
                except trio.WouldBlock:
                    break
                try:
                    request = receive.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    self._slots.release()
                    break
                batch.append(request)
                self.in_flight[_key(request)] = request
            self._work.set()
            await self._call(
                self.handle.submit.remote(encode_requests(batch)), options.call_timeout
            )
        self._feeding_done = True
        self._work.set()

    async def _collect(self) -> None:
        options = self._dispatch.options
        wait = options.collect_wait
        while True:
            if not self.in_flight:
                if self._feeding_done:
                    return
                await self._work.wait()
                self._work = trio.Event()
                continue
            data = await self._call(self.handle.collect.remote(wait), wait + options.call_timeout)
            report = decode_report(data)
            self._dispatch.forward(report)
            for outcome in report.outcomes:
                key = _key(outcome)
                if key not in self.in_flight:
                    continue
                await self._dispatch.deliver(outcome)
                del self.in_flight[key]
                self._slots.release()


@final
class Dispatch:
    """Runs one job's rows on ``options.workers`` Ray workers (see the module docstring)."""

    def __init__(
        self,
        *,
        ray: ModuleType,
        options: RayOptions,
        spec: WorkerSpec,
        opener: RuntimeOpener,
        outcomes: trio.MemorySendChannel[RowOutcome],
        publish: Callable[[Event], None],
        run_row: RunRow | None = None,
        provider_factory: ProviderFactory | None = None,
        tools_factory: ToolsFactory | None = None,
    ) -> None:
        self.ray = ray
        self.options = options
        self._spec = spec
        self._opener = opener
        self._outcomes = outcomes
        self._publish = publish
        self._run_row = run_row
        self._provider_factory = provider_factory
        self._tools_factory = tools_factory
        self._actor = ray.remote(
            max_concurrency=_ACTOR_CALLS, max_restarts=0, num_cpus=options.num_cpus
        )(RowWorker)
        self._send, self.rows = trio.open_memory_channel[RowRequest](options.batch_size)
        self._outstanding = 0
        self._source_done = False
        self._drained = trio.Event()
        self._restarts_left = options.max_worker_restarts
        self._slots_left = options.workers
        self._handles: dict[int, Any] = {}
        self._failure: JobBackendUnavailable | None = None
        self._cancel = trio.CancelScope()
        self._starting = options.workers
        #: Set once every first worker has started (or failed to): rows go out evenly.
        self.started = trio.Event()
        self._began = time.perf_counter()
        #: Seconds from the start of the run until every first worker had started.
        self.start_seconds = 0.0
        #: The process id of every worker started, in order.
        self.pids: list[int] = []
        #: Workers lost (died or stopped answering), and rows they held that ran again.
        self.workers_lost = 0
        self.rows_reassigned = 0
        #: Worker events lost: dropped by a worker's buffer, or of a kind unknown here.
        self.events_dropped = 0

    async def get(self, ref: Any, timeout: float) -> Any:
        """``ray.get(ref)`` in a worker thread, raising ``GetTimeoutError`` past ``timeout``."""
        return await trio.to_thread.run_sync(
            functools.partial(self.ray.get, ref, timeout=timeout), abandon_on_cancel=True
        )

    async def run(self, requests: trio.MemoryReceiveChannel[RowRequest]) -> None:
        """Run every request to one outcome; raise when every worker is lost."""
        try:
            with self._cancel:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    nursery.start_soon(self._intake, requests)
                    for _ in range(self.options.workers):
                        nursery.start_soon(self._slot)
        finally:
            await self._close_all()
        if self._failure is not None:
            raise self._failure

    async def deliver(self, outcome: RowOutcome) -> None:
        """Send one outcome to the engine (the row then leaves its worker's books)."""
        await self._outcomes.send(outcome)
        self._outstanding -= 1
        if self._source_done and self._outstanding == 0:
            self._drained.set()

    def forward(self, report: WorkerReport) -> None:
        """Publish a worker's events on the driver's bus."""
        self.events_dropped += report.dropped_events
        for raw in report.events:
            try:
                event = decode_event(raw)
            except msgspec.DecodeError:
                self.events_dropped += 1
                continue
            self._publish(event)

    async def _intake(self, requests: trio.MemoryReceiveChannel[RowRequest]) -> None:
        async with self._send:
            async for request in requests:
                self._outstanding += 1
                await self._send.send(request)
            self._source_done = True
            if self._outstanding == 0:
                self._drained.set()
            await self._drained.wait()

    async def _slot(self) -> None:
        first = True
        while True:
            link = await self._start()
            if first:
                first = False
                self._starting -= 1
                if self._starting == 0:
                    self.start_seconds = time.perf_counter() - self._began
                    self.started.set()
            if isinstance(link, str):
                self._give_up(link)
                return
            await link.serve()
            if link.lost is None:
                return
            self.workers_lost += 1
            await self._kill(link.handle)
            orphans = list(link.in_flight.values())
            self.rows_reassigned += len(orphans)
            for request in orphans:
                self._nursery.start_soon(self._send.send, request)
            if self._restarts_left == 0:
                self._give_up(f"worker {link.pid} lost ({link.lost}) and no restart left")
                return
            self._restarts_left -= 1

    async def _start(self) -> WorkerLink | str:
        """A fresh worker, its runtime open; or why it could not start."""
        options = self.options
        handle = self._actor.remote(
            self._spec, self._opener, self._run_row, self._provider_factory, self._tools_factory
        )
        self._handles[id(handle)] = handle
        try:
            pid = await self.get(
                handle.ready.remote(options.start_timeout),
                options.start_timeout + options.call_timeout,
            )
        except self.ray.exceptions.RayError as exc:
            await self._kill(handle)
            first = str(exc).strip().splitlines()
            return f"a worker could not start: {type(exc).__name__}: {first[-1] if first else ''}"
        self.pids.append(pid)
        return WorkerLink(self, handle, pid)

    def _give_up(self, reason: str) -> None:
        self._slots_left -= 1
        if self._slots_left == 0:
            self._failure = JobBackendUnavailable(
                f"Every Ray worker is gone ({reason}; {self.workers_lost} lost in this job). "
                "The rows without an outcome stay pending: resume the job once the "
                "cluster is healthy."
            )
            self._cancel.cancel()

    async def _kill(self, handle: Any) -> None:
        self._handles.pop(id(handle), None)
        with trio.CancelScope(shield=True), trio.move_on_after(self.options.close_timeout):
            await trio.to_thread.run_sync(
                functools.partial(self.ray.kill, handle, no_restart=True), abandon_on_cancel=True
            )

    async def _close_all(self) -> None:
        """Close every worker's runtime (its agents with it), then end its process."""
        options = self.options

        async def close(handle: Any) -> None:
            with contextlib.suppress(self.ray.exceptions.RayError):  # gone: killed below anyway
                await self.get(handle.close.remote(options.close_timeout), options.close_timeout)
            await self._kill(handle)

        with trio.CancelScope(shield=True), trio.move_on_after(2 * options.close_timeout):
            async with trio.open_nursery() as nursery:
                for handle in list(self._handles.values()):
                    nursery.start_soon(close, handle)
