"""Agent-job benchmarks: rows through ``Runtime.run_job`` on the local backend.

Each row is one agent of the bench type: 10 turns (nine calls to a read-only
``Echo`` tool, then ``complete_task``), on the scripted provider.

- ``jobs_overhead``: rows per second at zero model latency through
  ``run_job`` (CSV read, SQLite state, one committed outcome per row, the
  output CSV) against the same rows run directly through ``open_runtime``
  (``run_row`` under the same concurrency, no job state). The ratio is the
  job state's overhead (target: under 10%).
- ``jobs_local_10000``: 10,000 rows, every one at once, each model call
  taking 100 ms: elapsed against the ideal of 1.0 s (10 x 100 ms).

    python bench/bench_jobs.py              # full sizes
    python bench/bench_jobs.py --quick      # small sizes
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import tempfile
import time
from pathlib import Path

import trio

from subagents import testing
from subagents.jobs import JobSpec, RowRequest
from subagents.runtime import (
    LimitsConfig,
    Runtime,
    RuntimeConfig,
    TranscriptsConfig,
    open_runtime,
    run_row,
)

TURNS = testing.ECHO_WORKER_TURNS
LATENCY = 0.1
IDEAL = TURNS * LATENCY
#: Rows at once in jobs_overhead, on both sides.
OVERHEAD_CONCURRENCY = 256
TIMEOUT = 600.0
PROMPT = "Ping nine times for row {n}."


def _world(root: Path, rows: int) -> tuple[RuntimeConfig, Path, Path, Path]:
    """The bench agent type, a configuration for ``rows`` agents at once, and the input CSV."""
    project, home, state = testing.echo_worker_project(root)
    rows_csv = root / "rows.csv"
    rows_csv.write_text("n\n" + "".join(f"{i}\n" for i in range(rows)))
    config = RuntimeConfig(
        state_dir=state,
        limits=LimitsConfig(max_threads=max(rows, 1), max_time_seconds=TIMEOUT),
        transcripts=TranscriptsConfig(enabled=True),
    )
    return config, project, home, rows_csv


def _open(
    config: RuntimeConfig, project: Path, home: Path, latency: float
) -> contextlib.AbstractAsyncContextManager[Runtime]:
    """The bench's runtime: its project and home, the scripted provider, the Echo tool."""
    tools = [testing.EchoTool()]
    return open_runtime(
        config,
        cwd=project,
        home=home,
        env={},
        provider=testing.echo_worker_provider(latency=latency),
        tools=tools,
    )


async def run_job_rows(rows: int, *, root: Path, latency: float, concurrency: int) -> float:
    """Seconds for ``run_job`` to run ``rows`` rows (every one must complete)."""
    config, project, home, rows_csv = _world(root, rows)
    async with _open(config, project, home, latency) as rt:
        start = time.perf_counter()
        summary = await rt.run_job(
            JobSpec(
                input_path=rows_csv,
                agent=testing.ECHO_WORKER,
                prompt=PROMPT,
                output_path=root / "out.csv",
                max_concurrency=concurrency,
                max_runtime=TIMEOUT,
            )
        )
        elapsed = time.perf_counter() - start
    if summary.completed != rows:
        raise SystemExit(f"the job completed {summary.completed} of {rows} rows")
    return elapsed


async def run_direct_rows(rows: int, *, root: Path, latency: float, concurrency: int) -> float:
    """Seconds for the same rows run directly (``run_row``, same concurrency, no job state)."""
    config, project, home, _ = _world(root, rows)
    failed: list[str] = []
    async with _open(config, project, home, latency) as rt:
        slots = trio.Semaphore(concurrency)

        async def one(index: int) -> None:
            try:
                outcome = await run_row(
                    rt,
                    RowRequest(
                        job_id="direct",
                        item_id=f"row-{index + 1}",
                        index=index,
                        agent=testing.ECHO_WORKER,
                        prompt=PROMPT.format(n=index),
                        max_runtime=TIMEOUT,
                    ),
                )
            finally:
                slots.release()
            if outcome.status != "completed":
                failed.append(outcome.error or "failed")

        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for index in range(rows):
                await slots.acquire()
                nursery.start_soon(one, index)
        elapsed = time.perf_counter() - start
    if failed:
        raise SystemExit(f"{len(failed)} rows failed: {failed[0]}")
    return elapsed


def in_tmp(fn: functools.partial[object]) -> float:
    """``fn(root=<a fresh temporary folder>)`` in a fresh ``trio.run``."""
    with tempfile.TemporaryDirectory(prefix="subagents-bench-jobs-") as tmp:
        return float(trio.run(functools.partial(fn, root=Path(tmp))))  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    overhead_rows = 500 if args.quick else 2_000
    local_rows = 1_000 if args.quick else 10_000
    job = in_tmp(
        functools.partial(
            run_job_rows, overhead_rows, latency=0.0, concurrency=OVERHEAD_CONCURRENCY
        )
    )
    direct = in_tmp(
        functools.partial(
            run_direct_rows, overhead_rows, latency=0.0, concurrency=OVERHEAD_CONCURRENCY
        )
    )
    print(
        f"jobs_overhead: {overhead_rows / job:,.0f} rows/s through run_job, "
        f"{overhead_rows / direct:,.0f} rows/s directly: overhead {job / direct - 1:+.1%}"
    )
    local = in_tmp(
        functools.partial(run_job_rows, local_rows, latency=LATENCY, concurrency=local_rows)
    )
    print(f"jobs_local_{local_rows}: {local:.2f} s, {local / IDEAL:.2f}x ideal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
