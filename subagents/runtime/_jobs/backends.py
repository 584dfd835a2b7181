"""The backend a job names: ``local`` here; other backends add their branch."""

from __future__ import annotations

from subagents.jobs import JobBackend, JobBackendUnavailable, JobSpec
from subagents.runtime._jobs.local import LocalBackend
from subagents.runtime._runtime import Runtime

__all__ = ["JOB_BACKENDS", "job_backend"]

#: The backends a job may name.
JOB_BACKENDS = ("local",)


def job_backend(runtime: Runtime, spec: JobSpec) -> JobBackend:
    """The backend ``spec.backend`` names, running rows as agents of ``runtime``.

    The local backend runs no more rows at once than the runtime may hold
    agents (``limits.max_threads``), so a row never meets the agent limit
    because of its own job.
    """
    if spec.backend == "local":
        limit = min(spec.max_concurrency, runtime.config.limits.max_threads)
        return LocalBackend(runtime, limit)
    raise JobBackendUnavailable(
        f"There is no job backend {spec.backend!r}: choose one of {', '.join(JOB_BACKENDS)}."
    )
