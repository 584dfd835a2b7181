"""The errors of agent jobs, each saying what went wrong and what to do::

SubagentsError
└── JobError                  a job could not be created, run or read
    ├── JobInputError         a bad input file or template: names the file, line, column
    ├── JobLocked             another process runs the job now
    ├── UnknownJob            no job of that id in the state directory
    └── JobBackendUnavailable the backend cannot start (an extra missing, an address)
"""

from __future__ import annotations

from pathlib import Path

from subagents._exceptions import SubagentsError

__all__ = ["JobBackendUnavailable", "JobError", "JobInputError", "JobLocked", "UnknownJob"]


class JobError(SubagentsError):
    """An agent job could not be created, run or read."""


class JobInputError(JobError):
    """The job's input (its CSV or JSONL file, its template, its schema) cannot be used.

    ``path`` is the file, ``line`` its 1-based line (``None`` for the whole
    file), ``column`` the column or placeholder concerned. Nothing has run yet
    when it is raised: the input is checked before any row starts.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        column: str | None = None,
        fix: str = "",
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}" + (f", line {line}" if line is not None else "") + ": "
        super().__init__(f"{where}{problem}" + (f" {fix}" if fix else ""))
        self.path = None if path is None else str(path)
        self.line = line
        self.column = column


class JobLocked(JobError):
    """Another process runs the job now: two processes never run one job at once."""

    def __init__(self, job_id: str, path: Path, holder: str | None = None) -> None:
        by = f" (process {holder})" if holder else ""
        super().__init__(
            f"Job {job_id!r} is running in another process{by}: its lock {path} is held. "
            "Wait for it to finish, or cancel it with `subagents jobs cancel "
            f"{job_id}`, then resume it."
        )
        self.job_id = job_id
        self.path = str(path)
        self.holder = holder


class UnknownJob(JobError, LookupError):
    """No job of that id in the state directory."""

    def __init__(self, job_id: str, state_dir: Path) -> None:
        super().__init__(
            f"No job {job_id!r} in {state_dir}. List the jobs with `subagents jobs list` "
            "(and pass the same --state-dir the job was started with)."
        )
        self.job_id = job_id
        self.state_dir = str(state_dir)


class JobBackendUnavailable(JobError):
    """The job's backend cannot start: the message names the extra to install or the address."""
