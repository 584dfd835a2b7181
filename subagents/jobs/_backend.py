"""What the job engine hands a backend, and what a backend hands back.

A backend runs rows: the engine sends :class:`RowRequest` values into a
bounded channel (its capacity is the backpressure: no more rows are read
from the job's state than a backend can take), and the backend sends one
:class:`RowOutcome` per request back. The local backend runs each row as an
agent of this process's runtime; the Ray backend hands batches to worker
processes, each hosting its own Trio runtime. Both values are
``msgspec.Struct`` because they cross a process boundary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal, Protocol

import msgspec
import trio

from subagents.actors import Event

__all__ = ["ROWS_PER_PASS", "JobBackend", "RowOutcome", "RowRequest", "RowStatus"]

#: Ready rows the engine sends, and a backend starts, in one go before letting other tasks
#: run. More than one, so that rows started together share their runtime's file helper
#: round trips (a checkpoint per row started one row per pass of the scheduler); few, so
#: that rows do not move in lockstep (a convoy waiting for one batch of ``fsync`` calls).
ROWS_PER_PASS: Final = 8

RowStatus = Literal["completed", "failed"]
"""A row ends ``completed`` (its result is valid) or ``failed`` (with its error)."""


class RowRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One row to run: an agent of ``agent`` on ``prompt`` (the template filled in).

    ``attempt`` counts from 1. ``max_runtime`` bounds the row's agent in
    seconds (``None``: the definition's own limits). ``output_schema`` is the
    JSON Schema the row's ``complete_task`` result must satisfy, when the job
    has one.
    """

    job_id: str
    item_id: str
    index: int
    agent: str
    prompt: str
    attempt: int = 1
    max_runtime: float | None = None
    output_schema: dict[str, Any] | None = None


class RowOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """How one attempt at a row ended.

    ``transient`` says the error may pass on a retry (a provider overload, a
    worker lost); the engine retries such a row up to the job's attempts and
    records any other failure at once. ``result_json`` is the row's result as
    JSON text (the structured output, or the final text as a JSON string).
    ``started_at`` and ``completed_at`` are wall-clock seconds since the epoch.
    """

    job_id: str
    item_id: str
    attempt: int
    status: RowStatus
    result_json: str | None = None
    error: str | None = None
    transient: bool = False
    agent_id: str | None = None
    started_at: float = 0.0
    completed_at: float = 0.0


class JobBackend(Protocol):
    """Runs the rows a job sends it, until the request channel is closed and drained.

    ``run`` receives requests and sends exactly one outcome per request it
    received (a row whose worker was lost is run again inside the backend,
    so the engine never sees two outcomes for one attempt), then returns; it
    closes neither channel. ``publish`` forwards the backend's status events
    (a remote worker's included) to the driver's bus.
    """

    name: str

    async def run(
        self,
        requests: trio.MemoryReceiveChannel[RowRequest],
        outcomes: trio.MemorySendChannel[RowOutcome],
        publish: Callable[[Event], None],
    ) -> None: ...
