"""Agent jobs: one agent per row of a CSV or JSONL file, with durable state.

The package sits between ``teams`` and ``runtime``: the job engine reads
rows, hands them to a :class:`JobBackend` as :class:`RowRequest` values over a
bounded channel, and records each :class:`RowOutcome`. The runtime supplies the
backends (local agents, or Ray workers that each host a runtime) and
``Runtime.run_job``. One concept per module:

- ``_spec.py``: :class:`JobSpec` and the defaults; ``_ids.py``: job ids;
- ``_input.py``: reading CSV/JSONL rows; ``_template.py``: the ``{column}`` template;
- ``_state.py``: the job's SQLite state; ``_lock.py``: one process per job;
- ``_engine.py``: :func:`run_job`, the scheduler; ``_output.py``: the output CSV;
- ``_catalog.py``: list, show and cancel the jobs of a state directory;
- ``_backend.py``: what a backend receives and returns; ``_events.py``: the bus
  events; ``_exceptions.py``: the :class:`JobError` tree.
"""

from subagents.jobs._backend import ROWS_PER_PASS, JobBackend, RowOutcome, RowRequest, RowStatus
from subagents.jobs._catalog import JobInfo, cancel_job, list_jobs, load_job_spec, show_job
from subagents.jobs._engine import MAX_RETRY_DELAY, JobSummary, run_job
from subagents.jobs._events import JOB_NICKNAME, JobFinished, JobStarted, RowFinished, RowRetried
from subagents.jobs._exceptions import (
    JobBackendUnavailable,
    JobError,
    JobInputError,
    JobLocked,
    UnknownJob,
)
from subagents.jobs._ids import new_job_id
from subagents.jobs._input import InputRow, JobInput, read_input
from subagents.jobs._output import JOB_COLUMNS, write_output
from subagents.jobs._spec import (
    DEFAULT_BACKEND,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_ROW_BYTES,
    DEFAULT_MAX_RUNTIME,
    DEFAULT_RETRY_DELAY,
    JobSpec,
)
from subagents.jobs._template import PromptTemplate

__all__ = [
    # the job
    "JobSpec",
    "DEFAULT_BACKEND",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_MAX_ROW_BYTES",
    "DEFAULT_MAX_RUNTIME",
    "DEFAULT_RETRY_DELAY",
    "MAX_RETRY_DELAY",
    "run_job",
    "JobSummary",
    "new_job_id",
    # reading and writing rows
    "read_input",
    "JobInput",
    "InputRow",
    "PromptTemplate",
    "write_output",
    "JOB_COLUMNS",
    # the jobs of a state directory
    "JobInfo",
    "list_jobs",
    "show_job",
    "cancel_job",
    "load_job_spec",
    # backends
    "JobBackend",
    "ROWS_PER_PASS",
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
