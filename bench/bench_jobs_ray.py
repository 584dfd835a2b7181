"""Agent jobs on Ray against the local backend: ``jobs_ray_10000`` and Ray's ``jobs_overhead``.

Each row of a job is one scripted agent of ``TURNS`` turns (nine ``Echo``
calls, then ``complete_task``), each model call taking ``latency`` seconds;
every row runs at once (``max_concurrency`` = rows), so the ideal is one
agent's time, ``TURNS * latency``. The same job runs on the local backend
(one process) and on Ray with ``workers`` workers (each a process hosting a
runtime with its share of the rows), in one run. The Ray cluster is started
before the clock (a running cluster is infrastructure); starting the job's
workers is timed, and reported apart. ``jobs_overhead`` is rows per second at
zero latency.

Run alone: ``python bench/bench_jobs_ray.py [--rows N] [--workers N] [--latency S]``.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import trio

from subagents import testing
from subagents.jobs import JobSpec
from subagents.runtime import (
    CollectorConfig,
    LimitsConfig,
    RayBackend,
    RayOptions,
    RuntimeConfig,
    ScriptedProvider,
    open_runtime,
)
from subagents.tools import Tool

TURNS = testing.ECHO_WORKER_TURNS
LATENCY = 0.1
WORKERS = 2
TIMEOUT = 3600.0


def echo_tools() -> list[Tool]:
    """The tools of every runtime here (a Ray worker's included)."""
    return [testing.EchoTool()]


def provider(latency: float) -> ScriptedProvider:
    """Nine Echo calls then complete_task, each model call ``latency`` seconds."""
    return testing.echo_worker_provider(latency=latency)


def _world(root: Path, rows: int) -> tuple[Path, Path, Path, Path]:
    project, home, state = testing.echo_worker_project(root)
    table = root / "rows.csv"
    table.write_text("n\n" + "".join(f"{i}\n" for i in range(rows)))
    return project, home, state, table


async def run_job(
    rows: int,
    *,
    backend: str,
    latency: float,
    root: Path,
    workers: int = WORKERS,
    collector: str = "default",
) -> tuple[float, float]:
    """Run a job of ``rows`` rows on ``backend``; (elapsed seconds, worker start seconds).

    ``collector`` is the ``[collector]`` policy of the runtime that runs the rows: the
    driver's on the local backend, each worker's on Ray.
    """
    project, home, state, table = _world(root, rows)
    limits = {"max_threads": rows, "max_time_seconds": TIMEOUT}
    config = RuntimeConfig(
        state_dir=state,
        limits=LimitsConfig(**limits),
        collector=CollectorConfig(policy=collector if backend == "local" else "default"),
    )
    spec = JobSpec(
        table,
        testing.ECHO_WORKER,
        "Ping nine times: row {n}",
        id_column="n",
        max_concurrency=rows,
        max_runtime=TIMEOUT,
        backend=backend,
    )
    job_backend = None
    if backend == "ray":
        share = math.ceil(rows / workers)
        job_backend = RayBackend(
            RayOptions(workers=workers, concurrency=share),
            opener=open_runtime,
            cwd=project,
            home=home,
            state_dir=state,
            overrides={
                "limits": {"max_threads": share, "max_time_seconds": TIMEOUT},
                "collector": {"policy": collector},
            },
            trust_project=True,
            provider_factory=functools.partial(provider, latency),
            tools_factory=echo_tools,
        )
    async with open_runtime(
        config,
        cwd=project,
        home=home,
        env={},
        provider=provider(latency),
        tools=echo_tools(),
        trust_project=True,
    ) as rt:
        start = time.perf_counter()
        summary = await rt.run_job(spec, backend=job_backend)
        elapsed = time.perf_counter() - start
    if (summary.status, summary.completed) != ("completed", rows):
        raise SystemExit(
            f"the {backend} job ended {summary.status} with {summary.completed} of {rows} rows"
        )
    started = job_backend.last.start_seconds if job_backend and job_backend.last else 0.0
    return elapsed, started


def ray_missing() -> str | None:
    """Why the Ray half cannot run here, or ``None``."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed: pip install 'subagents[ray]'"
    return None


@contextmanager
def ray_cluster(cpus: int | None = None) -> Iterator[ModuleType]:
    """A local Ray cluster for the measurements (joined as is if this process has one)."""
    import ray
    import ray.cloudpickle

    # the workers rebuild this module's tool and provider: send them by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = False
    if not ray.is_initialized():
        ray.init(
            num_cpus=cpus,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def measure(
    rows: int,
    *,
    backend: str,
    latency: float,
    workers: int = WORKERS,
    collector: str = "default",
) -> tuple[float, float]:
    """One run in a fresh folder and a fresh ``trio.run``."""
    with tempfile.TemporaryDirectory(prefix="subagents-bench-jobs-") as tmp:
        return trio.run(
            functools.partial(
                run_job,
                rows,
                backend=backend,
                latency=latency,
                root=Path(tmp),
                workers=workers,
                collector=collector,
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--latency", type=float, default=LATENCY)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument(
        "--collector", default="default", help="the [collector] policy of the runtime running rows"
    )
    args = parser.parse_args(argv)
    missing = ray_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 1
    ideal = TURNS * args.latency
    results: dict[str, Any] = {}
    if not args.skip_local:
        local, _ = measure(
            args.rows, backend="local", latency=args.latency, collector=args.collector
        )
        results["local"] = local
        print(f"local: {local:.2f} s ({local / ideal if ideal else 0:.2f}x ideal)", flush=True)
    with ray_cluster():
        ray_s, start_s = measure(
            args.rows,
            backend="ray",
            latency=args.latency,
            workers=args.workers,
            collector=args.collector,
        )
    print(
        f"ray ({args.workers} workers): {ray_s:.2f} s ({ray_s / ideal if ideal else 0:.2f}x ideal;"
        f" workers started in {start_s:.2f} s)",
        flush=True,
    )
    if "local" in results:
        print(f"ray / local speed-up: {results['local'] / ray_s:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
