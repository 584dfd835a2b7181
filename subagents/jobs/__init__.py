"""Agent jobs: one agent per row of a CSV or JSONL file, with durable state.

The package sits between ``teams`` and ``runtime``: the job engine reads
rows, hands them to a :class:`JobBackend` as :class:`RowRequest` values over a
bounded channel, and records each :class:`RowOutcome`. The runtime supplies the
backends (local agents, or Ray workers that each host a runtime).
"""

from subagents.jobs._backend import JobBackend, RowOutcome, RowRequest, RowStatus
from subagents.jobs._events import JOB_NICKNAME, JobFinished, JobStarted, RowFinished, RowRetried
from subagents.jobs._exceptions import (
    JobBackendUnavailable,
    JobError,
    JobInputError,
    JobLocked,
    UnknownJob,
)
from subagents.jobs._spec import (
    DEFAULT_BACKEND,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_ROW_BYTES,
    DEFAULT_MAX_RUNTIME,
    DEFAULT_RETRY_DELAY,
    JobSpec,
)

__all__ = [
    # the job
    "JobSpec",
    "DEFAULT_BACKEND",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_ROW_BYTES",
    "DEFAULT_MAX_RUNTIME",
    "DEFAULT_RETRY_DELAY",
    # backends
    "JobBackend",
    "RowOutcome",
    "RowRequest",
    "RowStatus",
    # events
    "JOB_NICKNAME",
    "JobFinished",
    "JobStarted",
    "RowFinished",
    "RowRetried",
    # errors
    "JobBackendUnavailable",
    "JobError",
    "JobInputError",
    "JobLocked",
    "UnknownJob",
]
