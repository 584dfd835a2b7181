"""What ``subagents jobs run`` and ``resume`` show while rows run, fed from the job's bus events.

Three outputs, one per audience, each fed only by the job events on the bus
(:class:`~subagents.jobs.JobStarted`, :class:`~subagents.jobs.RowFinished`,
:class:`~subagents.jobs.RowRetried`, :class:`~subagents.jobs.JobFinished`):

- on a terminal, a ``rich.progress`` bar with the rows done of the total, the
  rate in rows per second, the time left (ETA) and the failures so far;
- without a terminal, one plain line per event (a row finished, a retry, the
  job's start and end), for logs and pipes;
- with ``--json``, every job event as one JSON line, then one ``job_summary``
  line, for programs (the envelope and encoding of :mod:`subagents.cli._json_lines`).

Each job event carries the job's counts once its change is on disk, so the
bar and the plain lines follow a ``drop_oldest`` subscription (a slow
terminal never holds a row back: a dropped event only skips a redraw); the
JSON lines follow a ``block`` subscription, as ``subagents run --json`` does,
because that output must be lossless. :class:`JobWatch` keeps what the events
said (the job id, the counts, the output path) for the closing line.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final, TextIO, final

import trio
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from subagents._visible import visible
from subagents.actors import Bus, Event, Lagged, Subscription
from subagents.cli._json_lines import DEFAULT_JSON_CAPACITY, DEFAULT_JSON_MAX_BLOCK, JsonLinesWriter
from subagents.cli._line_sink import LineSink
from subagents.jobs import JobFinished, JobStarted, RowFinished, RowRetried

__all__ = ["JOB_EVENT_TYPES", "JobWatch", "open_job_progress"]

#: The bus events the job outputs follow.
JOB_EVENT_TYPES: Final = (JobStarted, RowFinished, RowRetried, JobFinished)
#: Events the bar's and the plain printer's subscriptions buffer (then the oldest go).
_CAPACITY: Final = 4096
#: How often the bar redraws, at most.
_REFRESH_PER_SECOND: Final = 8.0
#: How much of a row's error a plain line shows.
_ERROR_WIDTH: Final = 160


def _short(text: str, width: int = _ERROR_WIDTH) -> str:
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@final
class JobWatch:
    """What the job's events said so far: its id, counts, status and output path."""

    __slots__ = (
        "backend",
        "completed",
        "failed",
        "finished",
        "job_id",
        "output_path",
        "resumed",
        "retries",
        "status",
        "total",
    )

    def __init__(self) -> None:
        self.job_id: str | None = None
        self.backend: str | None = None
        self.total = 0
        self.completed = 0
        self.failed = 0
        self.retries = 0
        self.resumed = False
        self.status: str | None = None
        self.output_path: str | None = None
        self.finished = False

    def __repr__(self) -> str:
        return (
            f"<JobWatch {self.job_id} {self.completed}+{self.failed}/{self.total} "
            f"status={self.status}>"
        )

    @property
    def done(self) -> int:
        """Rows that have ended, completed or failed."""
        return self.completed + self.failed

    def handle(self, event: Event | Lagged) -> None:
        """Take what one job event says (other events are ignored)."""
        if isinstance(event, JobStarted):
            self.job_id, self.backend, self.resumed = event.job_id, event.backend, event.resumed
            self.total, self.completed, self.failed = event.total, event.completed, event.failed
            self.status = "running"
        elif isinstance(event, RowFinished):
            self.total, self.completed, self.failed = event.total, event.completed, event.failed
        elif isinstance(event, RowRetried):
            self.retries += 1
        elif isinstance(event, JobFinished):
            self.job_id = event.job_id
            self.total, self.completed, self.failed = event.total, event.completed, event.failed
            self.status, self.output_path, self.finished = event.status, event.output_path, True

    def summary(self) -> dict[str, Any]:
        """The ``job_summary`` line's fields."""
        return {
            "type": "job_summary",
            "job_id": self.job_id,
            "status": self.status,
            "total": self.total,
            "completed": self.completed,
            "failed": self.failed,
            "retries": self.retries,
            "output_path": self.output_path,
        }


class _RateColumn(ProgressColumn):
    """The rows finished per second, as ``rich`` measures it over its recent samples."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("- rows/s" if speed is None else f"{speed:.1f} rows/s", style="cyan")


class _FailedColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        failed = int(task.fields.get("failed", 0))
        return Text(f"{failed} failed", style="red" if failed else "dim")


def _bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TimeElapsedColumn(),
        _FailedColumn(),
        console=console,
        refresh_per_second=_REFRESH_PER_SECOND,
        transient=False,
        auto_refresh=True,
    )


async def _follow_bar(subscription: Subscription, watch: JobWatch, bar: Progress) -> None:
    task: TaskID | None = None
    async for event in subscription:
        watch.handle(event)
        if watch.job_id is None:
            continue
        if task is None:
            task = bar.add_task(f"job {visible(watch.job_id)}", total=watch.total or None)
        bar.update(
            task,
            total=watch.total or None,
            completed=watch.done,
            failed=watch.failed,
        )


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def plain_line(event: Event, watch: JobWatch) -> str | None:
    """The plain line for one job event (after ``watch`` has taken it), or ``None``."""
    counts = f"{watch.done}/{watch.total} done, {watch.failed} failed"
    if isinstance(event, JobStarted):
        verb = "resumed" if event.resumed else "started"
        return (
            f"{_clock()} job {visible(event.job_id)} {verb} on {visible(event.backend)}: "
            f"{event.pending} of {event.total} rows to run"
        )
    if isinstance(event, RowFinished):
        error = "" if event.error is None else f": {_short(event.error)}"
        tries = "" if event.attempts <= 1 else f" after {event.attempts} attempts"
        return f"{_clock()} row {visible(event.item_id)} {event.status}{tries}{error} ({counts})"
    if isinstance(event, RowRetried):
        return (
            f"{_clock()} row {visible(event.item_id)} attempt {event.attempt} failed, retrying "
            f"in {event.delay:g} s: {_short(event.error)}"
        )
    if isinstance(event, JobFinished):
        where = "" if event.output_path is None else f"; output {visible(event.output_path)}"
        return f"{_clock()} job {visible(event.job_id)} {event.status} ({counts}){where}"
    return None


async def _follow_plain(subscription: Subscription, watch: JobWatch, sink: LineSink) -> None:
    while True:
        try:
            first = await subscription.receive()
        except trio.EndOfChannel:
            return
        lines: list[str] = []
        for event in (first, *_ready(subscription)):
            if isinstance(event, Lagged):
                lines.append(f"{_clock()} ({event.dropped} job events not shown)")
                continue
            watch.handle(event)
            line = plain_line(event, watch)
            if line is not None:
                lines.append(line)
        if lines:
            await sink.write("\n".join(lines) + "\n")


def _ready(subscription: Subscription) -> list[Event | Lagged]:
    found: list[Event | Lagged] = []
    while len(found) < 256:
        try:
            found.append(subscription.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    return found


async def _follow_json(
    subscription: Subscription, watch: JobWatch, writer: JsonLinesWriter
) -> None:
    while True:
        try:
            first = await subscription.receive()
        except trio.EndOfChannel:
            return
        batch = [first, *_ready(subscription)]
        for event in batch:
            watch.handle(event)
        await writer.write_lines([writer.line(event) for event in batch])


@asynccontextmanager
async def _following(
    follow: Callable[[Subscription, JobWatch, Any], Awaitable[None]],
    subscription: Subscription,
    watch: JobWatch,
    out: Any,
) -> AsyncIterator[None]:
    """Run ``follow(subscription, watch, out)`` while the body runs; stop it after."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follow, subscription, watch, out)
        try:
            yield
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_job_progress(
    mode: str, bus: Bus, out: TextIO, console: Console, *, threaded: bool = True
) -> AsyncIterator[JobWatch]:
    """Follow the job events of ``bus`` while the body runs: ``mode`` is ``live``,
    ``plain`` or ``json``. On exit every event already published is shown; with
    ``json`` the ``job_summary`` line follows the last event (none when no job
    started: its error is on stderr)."""
    watch = JobWatch()
    if mode == "json":
        writer = JsonLinesWriter(out, threaded=threaded)
        with bus.subscribe(
            types=JOB_EVENT_TYPES,
            capacity=DEFAULT_JSON_CAPACITY,
            policy="block",
            max_block=DEFAULT_JSON_MAX_BLOCK,
        ) as subscription:
            try:
                async with _following(_follow_json, subscription, watch, writer):
                    yield watch
            finally:
                for event in _drain(subscription):
                    watch.handle(event)
                    writer.write_now(writer.line(event))
                if watch.job_id is not None:  # a job that never started has no summary
                    writer.write_object(watch.summary())
        return
    with bus.subscribe(types=JOB_EVENT_TYPES, capacity=_CAPACITY) as subscription:
        if mode == "live":
            bar = _bar(console)
            with bar:
                try:
                    async with _following(_follow_bar, subscription, watch, bar):
                        yield watch
                finally:
                    for event in _drain(subscription):
                        watch.handle(event)
                    for task in bar.tasks:
                        bar.update(
                            task.id,
                            total=watch.total or None,
                            completed=watch.done,
                            failed=watch.failed,
                        )
            return
        sink = LineSink(out, threaded=threaded)
        try:
            async with _following(_follow_plain, subscription, watch, sink):
                yield watch
        finally:
            sink.flush_pending()
            lines = []
            for event in _drain(subscription):
                if isinstance(event, Lagged):
                    continue
                watch.handle(event)
                line = plain_line(event, watch)
                if line is not None:
                    lines.append(line + "\n")
            if lines:
                sink.write_now("".join(lines))


def _drain(subscription: Subscription) -> list[Any]:
    found: list[Any] = []
    while True:
        try:
            found.append(subscription.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return found
