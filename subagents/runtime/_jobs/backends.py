"""The backend a job names: ``local`` (rows as agents of this runtime) or ``ray``.

``ray`` takes its settings from the job's ``backend_options`` (``address``,
``workers``...: :class:`~subagents.runtime.RayOptions`), the job's
``max_concurrency`` shared among the workers; each worker opens a runtime in
this runtime's folder with its state dir, and its configured provider.
"""

from __future__ import annotations

from subagents.jobs import JobBackend, JobBackendUnavailable, JobSpec
from subagents.runtime._jobs.local import LocalBackend
from subagents.runtime._jobs.ray import RayBackend, RayOptions
from subagents.runtime._jobs.ray.worker import RuntimeOpener
from subagents.runtime._progress.tracker import agents_to_keep
from subagents.runtime._runtime import Runtime

__all__ = ["JOB_BACKENDS", "job_backend"]

#: The backends a job may name.
JOB_BACKENDS = ("local", "ray")


def job_backend(
    runtime: Runtime, spec: JobSpec, *, opener: RuntimeOpener | None = None
) -> JobBackend:
    """The backend ``spec.backend`` names, running rows as agents of ``runtime``.

    ``opener`` is ``open_runtime``, which the Ray backend's workers open
    their runtimes with (``open_runtime`` passes itself: the job backends
    are below it). The local backend runs no more rows at once than the runtime may hold
    agents (``limits.max_threads``), so a row never meets the agent limit
    because of its own job.
    """
    if spec.backend == "local":
        limit = min(spec.max_concurrency, runtime.config.limits.max_threads)
        return LocalBackend(runtime, limit)
    if spec.backend == "ray":
        if opener is None:
            raise JobBackendUnavailable(
                "The Ray backend needs open_runtime for its workers: run the job through "
                "a runtime made by open_runtime, or pass RayBackend(opener=open_runtime)."
            )
        services = runtime.services
        project = services.config.project
        options = RayOptions.from_backend_options(
            spec.backend_options, max_concurrency=spec.max_concurrency
        )
        # The workers' agents are not this runtime's, but their spawns and statuses come to
        # its bus: its tracker keeps every row the workers run at once (agents_to_keep).
        tracker = services.tracker
        tracker.max_agents = max(
            tracker.max_agents,
            agents_to_keep(options.concurrency * options.workers, services.config.limits.max_depth),
        )
        return RayBackend(
            options,
            opener=opener,
            cwd=spec.cwd or services.cwd,
            home=services.home,
            state_dir=services.config.state_dir,
            # each worker runs up to its share of the job's rows at once
            overrides={
                "limits.max_threads": max(services.config.limits.max_threads, options.concurrency)
            },
            trust_project=True if project is None else project.trusted,
        )
    raise JobBackendUnavailable(
        f"There is no job backend {spec.backend!r}: choose one of {', '.join(JOB_BACKENDS)}."
    )
