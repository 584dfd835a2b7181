"""Whole jobs on Ray: ``Runtime.run_job`` on the local cluster, and the driver killed mid-job.

Issue 19 item 2: "the driver killed mid-job resumes from SQLite". The driver
runs in a real subprocess (``ray_job_crash.py``) that joins this session's
cluster; it is SIGKILLed once ten rows are committed, which also ends its Ray
workers (an actor dies with its owner). A resume from this process, on Ray
too, runs exactly the rows not committed, and the output holds every row once.
"""

from __future__ import annotations

import csv
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
import trio

from subagents.actors import Bus
from subagents.jobs import JobSpec, RowFinished, show_job
from subagents.jobs._state import DATABASE_NAME
from subagents.runtime import (
    RayBackend,
    RayOptions,
    RuntimeConfig,
    ScriptedProvider,
    open_runtime,
)
from tests.jobs.helpers import completed_items, read_event
from tests.runtime.jobs.ray import rows

pytestmark = pytest.mark.timeout(180)

HARNESS = Path(__file__).with_name("ray_job_crash.py")
ROWS = 120
#: Bound on the child reaching the state the kill interrupts (it starts Ray workers).
TIMEOUT = 90.0


def ray_backend(cwd: Path, state: Path) -> RayBackend:
    return RayBackend(
        RayOptions(workers=2, concurrency=4),
        opener=open_runtime,
        cwd=cwd,
        home=cwd,
        state_dir=state,
        trust_project=True,
        provider_factory=functools.partial(ScriptedProvider, rows.answer),
    )


def write_rows(path: Path, count: int) -> None:
    path.write_text("n\n" + "".join(f"{i}\n" for i in range(count)))


async def test_a_job_on_ray_writes_its_whole_output(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    cwd, state, table = tmp_path / "project", tmp_path / "state", tmp_path / "rows.csv"
    cwd.mkdir()
    write_rows(table, 30)
    bus = Bus()
    finished: list[RowFinished] = []
    bus.listen(lambda e: finished.append(e) if isinstance(e, RowFinished) else None)
    async with open_runtime(
        RuntimeConfig(state_dir=state), cwd=cwd, home=cwd, env={}, bus=bus, trust_project=True
    ) as rt:
        spec = JobSpec(table, "general-purpose", "row {n}", id_column="n", backend="ray")
        with trio.fail_after(120):
            summary = await rt.run_job(spec, backend=ray_backend(cwd, state))
    assert (summary.status, summary.completed, summary.failed) == ("completed", 30, 0)
    assert summary.output_path is not None
    with summary.output_path.open(newline="") as file:
        written = list(csv.DictReader(file))
    assert [r["item_id"] for r in written] == [str(i) for i in range(30)]
    assert all(r["result_json"] == f'"again: row {r["n"]}"' for r in written)
    assert len(finished) == 30


def test_the_driver_killed_mid_job_resumes_from_sqlite_on_ray(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    cwd, state, table = tmp_path / "project", tmp_path / "state", tmp_path / "rows.csv"
    cwd.mkdir()
    write_rows(table, ROWS)
    address = ray_cluster.get_runtime_context().gcs_address
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    process = subprocess.Popen(
        [sys.executable, str(HARNESS), str(table), str(state), str(cwd), address],
        stdout=subprocess.PIPE,
        env=environment,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        started = read_event(process, deadline)
        assert started["type"] == "job_started"
        job_id = str(started["job_id"])
        reported: set[str] = set()
        while len(reported) < 10:
            event = read_event(process, deadline)
            assert event["type"] == "job_row_finished"
            reported.add(str(event["item_id"]))
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL

    done_before = completed_items(state / "jobs" / job_id / DATABASE_NAME)
    assert reported <= done_before
    assert len(done_before) < ROWS
    assert show_job(state / "jobs", job_id).status == "interrupted"

    finished: list[RowFinished] = []

    async def resume() -> None:
        bus = Bus()
        bus.listen(lambda e: finished.append(e) if isinstance(e, RowFinished) else None)
        async with open_runtime(
            RuntimeConfig(state_dir=state), cwd=cwd, home=cwd, env={}, bus=bus, trust_project=True
        ) as rt:
            with trio.fail_after(120):
                summary = await rt.resume_job(job_id, backend=ray_backend(cwd, state))
            assert summary.status == "completed"
            assert (summary.completed, summary.failed) == (ROWS, 0)

    trio.run(resume)
    redone = [e.item_id for e in finished]
    assert len(redone) == len(set(redone))  # each row left run once
    assert set(redone) == {str(i) for i in range(ROWS)} - done_before
    output = table.with_name(f"rows.{job_id}.csv")
    with output.open(newline="") as file:
        written = list(csv.DictReader(file))
    assert [r["item_id"] for r in written] == [str(i) for i in range(ROWS)]
    assert all(r["status"] == "completed" for r in written)
