"""The backend a job names: ``local`` here; other backends add their branch."""

from __future__ import annotations

from subagents.jobs import JobBackend, JobBackendUnavailable, JobSpec
from subagents.runtime._jobs.local import LocalBackend
from subagents.runtime._runtime import Runtime

__all__ = ["JOB_BACKENDS", "job_backend"]

#: The backends a job may name.
JOB_BACKENDS = ("local",)


def job_backend(runtime: Runtime, spec: JobSpec) -> JobBackend:
    """The backend ``spec.backend`` names, running rows as agents of ``runtime``."""
    if spec.backend == "local":
        return LocalBackend(runtime, spec.max_concurrency)
    raise JobBackendUnavailable(
        f"There is no job backend {spec.backend!r}: choose one of {', '.join(JOB_BACKENDS)}."
    )
