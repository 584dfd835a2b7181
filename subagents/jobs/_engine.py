"""The job engine: create or resume a job, feed its rows to a backend, record every outcome.

The engine reads pending rows from the job's SQLite state a page at a time
and sends them, as :class:`RowRequest` values, into a channel whose capacity
is ``max_concurrency``: that capacity is the backpressure, no more rows are
taken than the backend can run. Each :class:`RowOutcome` is committed
(outcomes that arrive together in one transaction) before the row counts as
done and its :class:`RowFinished` event is published. A transient failure is
retried, after a doubling delay, until ``max_attempts``; any other failure
is recorded at once with its error. When every row is final the output CSV
is written atomically and the job is ``completed``.

A cancel (the ``cancel`` event, or ``cancel_job`` from another process, heard
at once through the job's doorbell, ``_doorbell.py``, or else at the next
commit) stops the rows under way at once and leaves them pending, so a resume
runs them; a crash leaves them pending the same way.
Codex's agent jobs (``codex-rs/core/src/tools/handlers/agent_jobs.rs``) are
the model: rows from a CSV, item ids, ``max_runtime``, the output columns.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.validators
import msgspec
import trio

from subagents._small_file import read_small_file
from subagents.actors import Event
from subagents.jobs._backend import ROWS_PER_PASS, JobBackend, RowOutcome, RowRequest
from subagents.jobs._doorbell import open_doorbell, wait_rung
from subagents.jobs._events import JOB_NICKNAME, JobFinished, JobStarted, RowFinished, RowRetried
from subagents.jobs._exceptions import JobError, JobInputError
from subagents.jobs._ids import job_folder, new_job_id
from subagents.jobs._input import JobInput, read_input
from subagents.jobs._lock import LOCK_NAME, hold_job_lock
from subagents.jobs._output import write_output
from subagents.jobs._spec import JobSpec
from subagents.jobs._state import DATABASE_NAME, JobStore, OutcomeRecord
from subagents.jobs._template import PromptTemplate

__all__ = ["JobSummary", "MAX_RETRY_DELAY", "run_job"]

#: The longest wait before a retry, however many attempts came before.
MAX_RETRY_DELAY: Final = 60.0
#: Pending rows read from the state at a time.
_PAGE: Final = 512
#: Outcomes committed in one transaction at most.
_BATCH: Final = 512
#: How long the first outcome of a commit waits for others to join it (a group commit): a
#: commit writes about the same pages for one row as for fifty, and its thread takes the
#: GIL back from a busy Trio thread at each statement, so rows that end hundreds a second
#: are committed a few times a second, not one by one. An outcome counts (``RowFinished``)
#: a twentieth of a second later at most; its row's slot was freed when the row ended.
_GROUP_WAIT: Final = 0.05
#: The largest output schema file read.
_SCHEMA_MAX_BYTES: Final = 1 << 20


@attrs.frozen
class JobSummary:
    """How a run of a job ended: ``completed`` (the output is written) or ``cancelled``."""

    job_id: str
    status: str
    total: int
    completed: int
    failed: int
    output_path: Path | None
    state_path: Path
    resumed: bool = False

    @property
    def pending(self) -> int:
        """Rows left to run (a cancelled job's, for a resume)."""
        return self.total - self.completed - self.failed


def _load_schema(spec: JobSpec) -> dict[str, Any] | None:
    raw = spec.output_schema
    if raw is None:
        return None
    where: str | None = None
    if isinstance(raw, Path):
        path = spec.resolve(raw)
        where = str(path)
        try:
            raw = json.loads(read_small_file(path, _SCHEMA_MAX_BYTES))
        except (OSError, ValueError) as exc:
            raise JobInputError(
                f"the output schema cannot be read as JSON: {exc}.",
                path=path,
                fix="Give a JSON file holding a JSON Schema.",
            ) from None
    if not isinstance(raw, dict):
        raise JobInputError(
            "the output schema is not a JSON object.", path=where, fix="Give a JSON Schema."
        )
    schema: dict[str, Any] = json.loads(json.dumps(raw))
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise JobInputError(
            f"the output schema is not a valid JSON Schema: {exc.message}.",
            path=where,
            fix="Fix the schema.",
        ) from None
    return schema


def _prepare(spec: JobSpec, job_id: str) -> tuple[JobSpec, JobInput]:
    """Read and check everything a new job needs before any row runs (blocking)."""
    input_path = spec.resolve(spec.input_path)
    template = PromptTemplate(spec.prompt)
    schema = _load_schema(spec)
    rows = read_input(input_path, id_column=spec.id_column, max_row_bytes=spec.max_row_bytes)
    template.check(rows.columns, path=str(input_path))
    for row in rows.rows:  # a JSONL row may lack a key another row has
        for name in template.placeholders:
            if name not in row.values:
                raise JobInputError(
                    f"the row has no {name!r}, which the prompt's placeholder {{{name}}} needs.",
                    path=input_path,
                    line=row.line,
                    column=name,
                    fix="Give every row that key, or change the prompt.",
                )
    output = (
        spec.resolve(spec.output_path)
        if spec.output_path is not None
        else input_path.with_name(f"{input_path.stem}.{job_id}.csv")
    )
    stored = attrs.evolve(
        spec,
        job_id=job_id,
        input_path=input_path,
        output_path=output,
        output_schema=schema,
        cwd=spec.cwd if spec.cwd is None else spec.resolve(spec.cwd),
    )
    return stored, rows


@attrs.define
class _Progress:
    total: int
    completed: int
    failed: int
    remaining: int
    cancelled: bool = False


def _envelope(job_id: str) -> dict[str, Any]:
    return {"agent_id": job_id, "parent_id": None, "depth": 0, "nickname": JOB_NICKNAME}


class _Run:
    """One run of a job: the feeder, the backend and the collector, sharing the state."""

    def __init__(
        self,
        spec: JobSpec,
        store: JobStore,
        backend: JobBackend,
        publish: Callable[[Event], None],
        progress: _Progress,
        scope: trio.CancelScope,
    ) -> None:
        assert spec.job_id is not None
        self.job_id: str = spec.job_id
        self.spec = spec
        self.store = store
        self.backend = backend
        self.publish = publish
        self.progress = progress
        self.scope = scope
        self.template = PromptTemplate(spec.prompt)
        schema = spec.output_schema
        self.schema: dict[str, Any] | None = dict(schema) if isinstance(schema, Mapping) else None
        size = spec.max_concurrency
        self.requests = trio.open_memory_channel[RowRequest](size)
        self.outcomes = trio.open_memory_channel[RowOutcome](size)
        self.retries = trio.open_memory_channel[RowRequest](size)
        #: Requests sent and not final yet, by item id (at most the rows in flight).
        self.in_flight: dict[str, RowRequest] = {}
        #: Requests sent since the feeder last let other tasks run.
        self._unyielded = 0

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._feed, name=f"job {self.job_id} feeder")
            nursery.start_soon(self._backend, name=f"job {self.job_id} backend")
            nursery.start_soon(self._collect, name=f"job {self.job_id} collector")

    async def _send(self, request: RowRequest) -> None:
        self.in_flight[request.item_id] = request
        send = self.requests[0]
        try:
            send.send_nowait(request)
        except trio.WouldBlock:  # full: wait for the backend to take some
            self._unyielded = 0
            await send.send(request)
            return
        self._unyielded += 1
        if self._unyielded == ROWS_PER_PASS:
            self._unyielded = 0
            await trio.lowlevel.checkpoint()

    async def _send_retries(self) -> None:
        while True:
            try:
                request = self.retries[1].receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return
            await self._send(request)

    async def _feed(self) -> None:
        send, spec, db = self.requests[0], self.spec, self.store.db
        async with send:
            after = -1
            while True:
                page = await self.store.call(db.pending, after, _PAGE)
                if not page:
                    break
                for item in page:
                    await self._send_retries()  # a retry goes before a new row
                    await self._send(
                        RowRequest(
                            job_id=self.job_id,
                            item_id=item.item_id,
                            index=item.index,
                            agent=spec.agent,
                            prompt=self.template.render(item.values),
                            attempt=item.attempts + 1,
                            max_runtime=spec.max_runtime,
                            output_schema=self.schema,
                        )
                    )
                after = page[-1].index
            async for request in self.retries[1]:  # closed once every row is final
                await self._send(request)

    async def _backend(self) -> None:
        receive, send = self.requests[1], self.outcomes[0]
        async with receive, send:
            await self.backend.run(receive, send, self.publish)

    def _record(self, outcome: RowOutcome) -> OutcomeRecord | None:
        sent = self.in_flight.get(outcome.item_id)
        if sent is None or sent.attempt != outcome.attempt:
            return None  # not a row of this run, or an attempt already answered
        retry = (
            outcome.status == "failed"
            and outcome.transient
            and outcome.attempt < self.spec.max_attempts
        )
        return OutcomeRecord(
            item_id=outcome.item_id,
            attempt=outcome.attempt,
            final=not retry,
            status=outcome.status,
            error=outcome.error,
            result_json=outcome.result_json if outcome.status == "completed" else None,
            started_at=outcome.started_at,
            completed_at=outcome.completed_at,
        )

    def _delay(self, attempt: int) -> float:
        return min(self.spec.retry_delay * 2.0 ** (attempt - 1), MAX_RETRY_DELAY)

    async def _retry_later(self, request: RowRequest, delay: float) -> None:
        await trio.sleep(delay)
        await self.retries[0].send(request)

    async def _collect(self) -> None:
        receive, progress, db = self.outcomes[1], self.progress, self.store.db
        async with self.retries[0], trio.open_nursery() as waits:
            while progress.remaining > 0:
                try:
                    batch = [await receive.receive()]
                except trio.EndOfChannel:
                    raise JobError(
                        f"The backend {self.backend.name!r} stopped before every row of job "
                        f"{self.job_id!r} had an outcome; resume the job to run the rest."
                    ) from None
                # the outcomes that follow within _GROUP_WAIT join the commit (no more than
                # the rows still to end: the last ones are not kept waiting)
                with trio.move_on_after(_GROUP_WAIT):
                    while len(batch) < min(_BATCH, progress.remaining):
                        try:
                            batch.append(await receive.receive())
                        except trio.EndOfChannel:
                            break
                pairs = [(o, r) for o in batch if (r := self._record(o)) is not None]
                if not pairs:
                    continue
                applied, status = await self.store.call(db.record, [r for _, r in pairs])
                for (outcome, record), changed in zip(pairs, applied, strict=True):
                    self._settle(outcome, record, changed, waits)
                if status == "cancelled":  # cancel_job from another process
                    progress.cancelled = True
                    self.scope.cancel()

    def _settle(
        self, outcome: RowOutcome, record: OutcomeRecord, changed: bool, waits: trio.Nursery
    ) -> None:
        progress = self.progress
        sent = self.in_flight.pop(outcome.item_id)
        if not changed:  # already final in the state: counted when it was
            progress.remaining -= 1
            return
        if not record.final:
            delay = self._delay(outcome.attempt)
            self.publish(
                RowRetried(
                    **_envelope(self.job_id),
                    job_id=self.job_id,
                    item_id=outcome.item_id,
                    attempt=outcome.attempt,
                    error=outcome.error or "",
                    delay=delay,
                )
            )
            retry = msgspec.structs.replace(sent, attempt=outcome.attempt + 1)
            self.in_flight[outcome.item_id] = retry
            waits.start_soon(self._retry_later, retry, delay)
            return
        progress.remaining -= 1
        if record.status == "completed":
            progress.completed += 1
        else:
            progress.failed += 1
        self.publish(
            RowFinished(
                **_envelope(self.job_id),
                job_id=self.job_id,
                item_id=outcome.item_id,
                status=record.status,
                attempts=outcome.attempt,
                completed=progress.completed,
                failed=progress.failed,
                total=progress.total,
                error=record.error,
            )
        )


def _forget(folder: Path) -> None:
    """Remove the folder of a job that was never created (its lock file only)."""
    with contextlib.suppress(OSError):
        (folder / LOCK_NAME).unlink()
        folder.rmdir()


def _ignore(_: Event) -> None:
    return None


async def run_job(
    spec: JobSpec,
    backend: JobBackend,
    *,
    state_dir: Path,
    publish: Callable[[Event], None] | None = None,
    cancel: trio.Event | None = None,
) -> JobSummary:
    """Run the job ``spec`` describes on ``backend`` to its end; resume it if its id exists.

    ``state_dir`` is the jobs' state directory (each job has a folder there).
    A new job's input, template and schema are checked before any row runs
    (:class:`JobInputError`); a job another process runs raises
    :class:`JobLocked`. On a resume the job's stored spec gives its rows,
    prompt, schema and output; ``spec`` gives how to run them (concurrency,
    attempts, ``max_runtime``). Setting ``cancel`` stops the job at once:
    its unfinished rows stay pending, and the summary says ``cancelled``.
    """
    emit = _ignore if publish is None else publish
    job_id = spec.job_id or new_job_id()
    folder = job_folder(state_dir, job_id)
    await trio.to_thread.run_sync(lambda: folder.mkdir(parents=True, exist_ok=True))
    with contextlib.ExitStack() as held:
        await trio.to_thread.run_sync(held.enter_context, hold_job_lock(folder, job_id))
        database = folder / DATABASE_NAME
        resumed = await trio.to_thread.run_sync(database.is_file)
        if resumed:
            store = await JobStore.open(database)
        else:
            try:
                stored, rows = await trio.to_thread.run_sync(_prepare, spec, job_id)
            except JobInputError:  # nothing was created: leave no empty job behind
                await trio.to_thread.run_sync(_forget, folder)
                raise
            store = await JobStore.open(database, create=True)
            await store.call(
                store.db.create,
                job_id,
                stored.to_json().decode(),
                rows.columns,
                [(r.index, r.item_id, dict(r.values), r.line) for r in rows.rows],
            )
        try:
            return await _run(spec, store, backend, emit, cancel, resumed, folder)
        finally:
            with trio.CancelScope(shield=True):
                await store.aclose()


async def _run(
    spec: JobSpec,
    store: JobStore,
    backend: JobBackend,
    emit: Callable[[Event], None],
    cancel: trio.Event | None,
    resumed: bool,
    folder: Path,
) -> JobSummary:
    record = await store.call(store.db.load)
    stored = JobSpec.from_json(record.spec_json)
    run_spec = attrs.evolve(
        stored,
        max_concurrency=spec.max_concurrency,
        max_runtime=spec.max_runtime,
        max_attempts=spec.max_attempts,
        retry_delay=spec.retry_delay,
        backend=spec.backend,
        backend_options=spec.backend_options,
    )
    job_id = record.job_id
    output = None if stored.output_path is None else Path(stored.output_path)

    def summary(status: str, progress: _Progress) -> JobSummary:
        return JobSummary(
            job_id=job_id,
            status=status,
            total=progress.total,
            completed=progress.completed,
            failed=progress.failed,
            output_path=output if status == "completed" else None,
            state_path=folder,
            resumed=resumed,
        )

    progress = _Progress(record.total, record.completed, record.failed, record.pending)
    if record.status == "completed" and record.pending == 0:
        return summary("completed", progress)
    if record.status != "running":
        await store.call(store.db.set_status, "running")
    emit(
        JobStarted(
            **_envelope(job_id),
            job_id=job_id,
            backend=backend.name,
            total=record.total,
            pending=record.pending,
            completed=record.completed,
            failed=record.failed,
            resumed=resumed,
        )
    )
    with open_doorbell(folder) as bell, trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            if cancel is not None:

                async def watch() -> None:
                    await cancel.wait()
                    progress.cancelled = True
                    scope.cancel()

                nursery.start_soon(watch, name=f"job {job_id} cancel")
            if bell is not None:

                async def answer(bell: int) -> None:
                    # cancel_job in another process rang: the state says whether to stop.
                    while True:
                        await wait_rung(bell)
                        if (await store.call(store.db.load)).status == "cancelled":
                            progress.cancelled = True
                            scope.cancel()
                            return

                nursery.start_soon(answer, bell, name=f"job {job_id} doorbell")
            if progress.remaining > 0:
                await _Run(run_spec, store, backend, emit, progress, scope).run()
            nursery.cancel_scope.cancel()
    if progress.cancelled:
        await store.call(store.db.set_status, "cancelled")
        emit(
            JobFinished(
                **_envelope(job_id),
                job_id=job_id,
                status="cancelled",
                total=progress.total,
                completed=progress.completed,
                failed=progress.failed,
            )
        )
        return summary("cancelled", progress)
    if output is not None:
        items = await store.call(store.db.items)
        await trio.to_thread.run_sync(write_output, output, job_id, record.columns, items)
    await store.call(
        store.db.set_status, "completed", output_path=None if output is None else str(output)
    )
    emit(
        JobFinished(
            **_envelope(job_id),
            job_id=job_id,
            status="completed",
            total=progress.total,
            completed=progress.completed,
            failed=progress.failed,
            output_path=None if output is None else str(output),
        )
    )
    return summary("completed", progress)
