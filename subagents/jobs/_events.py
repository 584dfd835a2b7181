"""The events a job publishes on the kernel's bus, beside its agents' own.

Each subclasses :class:`subagents.actors.Event`, so it carries the same
envelope and crosses the CLI's JSON lines unchanged. A job is no agent: the
envelope's ``agent_id`` is the job id, at depth 0, without a parent, with the
nickname ``job``. ``completed``, ``failed`` and ``total`` are the job's counts
once the event's change is on disk, so a reader needs no other state to show
progress.
"""

from __future__ import annotations

from typing import Final

from subagents.actors import Event

__all__ = ["JOB_NICKNAME", "JobFinished", "JobStarted", "RowFinished", "RowRetried"]

#: The envelope nickname of every job event.
JOB_NICKNAME: Final = "job"


class JobStarted(Event, frozen=True, kw_only=True, tag="job_started"):
    """A job started (or resumed): ``pending`` rows are left to run of ``total``."""

    job_id: str
    backend: str
    total: int
    pending: int
    completed: int
    failed: int
    resumed: bool = False


class RowFinished(Event, frozen=True, kw_only=True, tag="job_row_finished"):
    """A row ended ``completed`` or ``failed`` (after ``attempts`` attempts), and is on disk."""

    job_id: str
    item_id: str
    status: str
    attempts: int
    completed: int
    failed: int
    total: int
    error: str | None = None


class RowRetried(Event, frozen=True, kw_only=True, tag="job_row_retried"):
    """An attempt at a row failed with a transient error; it runs again after ``delay`` s."""

    job_id: str
    item_id: str
    attempt: int
    error: str
    delay: float


class JobFinished(Event, frozen=True, kw_only=True, tag="job_finished"):
    """A job ended: ``completed`` (every row final, the output written) or ``cancelled``."""

    job_id: str
    status: str
    total: int
    completed: int
    failed: int
    output_path: str | None = None
