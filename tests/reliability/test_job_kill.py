"""``kill -9`` in the middle of a job, then a resume: no completed row redone, none lost.

A real subprocess (``job_crash.py``) runs a 120-row job on the local backend;
it is killed with SIGKILL once ten rows are reported done, so rows are under
way and rows are committed. While it runs, a second runner of the same job is
refused (one process per job: the job's lock, as agent resume's). After the
kill the lock is free (the OS released it with the process) and the job shows
``interrupted``; a resume runs exactly the rows that were not committed, and
the output holds every row once. The issue's durability items (issue 19).
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from subagents.jobs import JobLocked, show_job
from subagents.jobs._state import DATABASE_NAME
from subagents.runtime import ModelRequest, Reply, RuntimeConfig, ScriptedProvider, open_runtime
from tests.jobs.helpers import completed_items, read_event

HARNESS = Path(__file__).with_name("job_crash.py")
ROWS = 120
#: Bound on the child reaching the state the kill interrupts.
TIMEOUT = 60.0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_job_killed_mid_run_resumes_without_redoing_or_losing_a_row(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    state = tmp_path / "state"
    rows = tmp_path / "rows.csv"
    rows.write_text("n\n" + "".join(f"{i}\n" for i in range(ROWS)))
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    process = subprocess.Popen(
        [sys.executable, str(HARNESS), str(rows), str(state), str(cwd)],
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

        async def second_runner() -> None:
            async with open_runtime(
                RuntimeConfig(state_dir=state), cwd=cwd, home=cwd, env={}, trust_project=True
            ) as rt:
                with pytest.raises(JobLocked, match=job_id):
                    await rt.resume_job(job_id)

        trio.run(second_runner)
        assert show_job(state / "jobs", job_id).status == "running"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL

    folder = state / "jobs" / job_id
    done_before = completed_items(folder / DATABASE_NAME)
    assert reported <= done_before  # a row reported done was committed first
    assert len(done_before) < ROWS  # the kill came mid-job
    info = show_job(state / "jobs", job_id)
    assert info.status == "interrupted"
    assert info.holder is None

    prompts: list[str] = []

    def answer(request: ModelRequest) -> Reply:
        prompts.append(request.messages[0].text.splitlines()[0])  # the template; then the ids
        return Reply(text="done again")

    async def resume() -> None:
        async with open_runtime(
            RuntimeConfig(state_dir=state),
            cwd=cwd,
            home=cwd,
            env={},
            provider=ScriptedProvider(answer),
            trust_project=True,
        ) as rt:
            summary = await rt.resume_job(job_id)
            assert summary.status == "completed"
            assert (summary.completed, summary.failed) == (ROWS, 0)

    trio.run(resume)
    redone = {prompt.removeprefix("row ") for prompt in prompts}
    assert len(prompts) == len(redone)  # each left row run once
    assert redone == {str(i) for i in range(ROWS)} - done_before
    output = rows.with_name(f"rows.{job_id}.csv")
    with output.open(newline="") as file:
        written = list(csv.DictReader(file))
    assert [r["item_id"] for r in written] == [str(i) for i in range(ROWS)]
    assert all(r["status"] == "completed" for r in written)
    assert show_job(state / "jobs", job_id).status == "completed"
