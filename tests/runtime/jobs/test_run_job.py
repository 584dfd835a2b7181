"""``Runtime.run_job``: a job's rows as agents of the runtime, its events on the runtime's bus."""

from __future__ import annotations

import collections
import csv
import json
from pathlib import Path

import pytest
import trio
import trio.testing

import subagents.runtime._jobs.local
from subagents import testing
from subagents.actors import Bus
from subagents.jobs import (
    JobBackendUnavailable,
    JobFinished,
    JobSpec,
    JobStarted,
    RowFinished,
    RowOutcome,
    RowRequest,
    UnknownJob,
    list_jobs,
)
from subagents.runtime import ModelRequest, Reply, ScriptedProvider
from tests.runtime.world import World, drain

SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string"}},
    "required": ["label"],
    "additionalProperties": False,
}


def classify(request: ModelRequest) -> Reply:
    """Label a ticket with the last word of its prompt; fail ticket 'boom' for good."""
    prompt = request.messages[0].text.splitlines()[0]  # the filled template; then the ids
    if "boom" in prompt:
        return testing.fail("invalid_request_error", status=400)
    return testing.finish(result={"label": prompt.split()[-1]})


async def test_run_job_runs_each_row_as_an_agent_and_publishes_its_events(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    (tmp_path / "in.csv").write_text("id,text\na,about billing\nb,boom\nc,about login\n")
    bus = Bus()
    with bus.subscribe(capacity=1000) as sub:
        async with world.open(ScriptedProvider(classify), bus=bus) as rt:
            summary = await rt.run_job(
                JobSpec(
                    input_path=tmp_path / "in.csv",
                    agent="general-purpose",
                    prompt="Label the ticket {id}: {text}",
                    output_schema=SCHEMA,
                    id_column="id",
                    max_concurrency=2,
                )
            )
            assert rt.list() == []  # every row's agent was closed
            assert [j.job_id for j in list_jobs(rt.jobs_dir())] == [summary.job_id]
            assert (world.state / "jobs" / summary.job_id / "job.sqlite").is_file()
        events = drain(sub)
    assert (summary.completed, summary.failed) == (2, 1)
    assert summary.output_path is not None
    with summary.output_path.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["id"], r["status"]) for r in rows] == [
        ("a", "completed"),
        ("b", "failed"),
        ("c", "completed"),
    ]
    assert json.loads(rows[0]["result_json"]) == {"label": "billing"}
    assert "BadRequest" in rows[1]["last_error"]
    assert rows[1]["attempts"] == "1"  # a bad request is not transient
    job_events = [e for e in events if isinstance(e, JobStarted | RowFinished | JobFinished)]
    assert isinstance(job_events[0], JobStarted)
    assert isinstance(job_events[-1], JobFinished)
    assert sum(isinstance(e, RowFinished) for e in job_events) == 3


async def test_a_transient_provider_error_is_retried_through_the_runtime(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    (tmp_path / "in.csv").write_text("text\nhello\n")
    calls: list[int] = []

    def flaky(request: ModelRequest) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return testing.fail("overloaded_error", status=529)
        return testing.say("done")

    async with world.open(ScriptedProvider(flaky)) as rt:
        summary = await rt.run_job(
            JobSpec(input_path=tmp_path / "in.csv", agent="general-purpose", prompt="{text}")
        )
    assert summary.completed == 1
    assert summary.output_path is not None
    with summary.output_path.open(newline="") as file:
        row = next(csv.DictReader(file))
    assert row["attempts"] == "2"
    assert json.loads(row["result_json"]) == "done"


async def test_an_unknown_backend_and_an_unknown_job_are_clear_errors(tmp_path: Path) -> None:
    world = World(tmp_path)
    (tmp_path / "in.csv").write_text("text\nhello\n")
    async with world.open(ScriptedProvider([testing.say("x")])) as rt:
        with pytest.raises(JobBackendUnavailable, match="'mainframe'"):
            await rt.run_job(
                JobSpec(
                    input_path=tmp_path / "in.csv",
                    agent="general-purpose",
                    prompt="{text}",
                    backend="mainframe",
                )
            )
        with pytest.raises(UnknownJob, match="no-such-job"):
            await rt.resume_job("no-such-job")


async def test_resume_job_runs_what_a_cancel_left_pending(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    rows = 8
    world = World(tmp_path)
    (tmp_path / "in.csv").write_text("text\n" + "".join(f"t{i}\n" for i in range(rows)))
    prompts: list[str] = []

    def slow(request: ModelRequest) -> Reply:
        prompts.append(request.messages[0].text.splitlines()[0])
        return Reply(text="ok", latency=1.0)

    cancel = trio.Event()
    bus = Bus()
    bus.listen(lambda e: cancel.set() if isinstance(e, RowFinished) and e.completed == 2 else None)
    async with world.open(ScriptedProvider(slow), bus=bus) as rt:
        first = await rt.run_job(
            JobSpec(
                input_path=tmp_path / "in.csv",
                agent="general-purpose",
                prompt="{text}",
                max_concurrency=1,
            ),
            cancel=cancel,
        )
        assert first.status == "cancelled"
        # Rows run one after another. The cancel comes with the second row's commit; rows
        # that ended before it landed are kept (autojump_clock moves time on while a commit
        # is in its thread, so how many is not fixed). No unfinished row is counted.
        assert 2 <= first.completed < rows
        done_before = list(prompts)
        second = await rt.resume_job(first.job_id, max_concurrency=4)
    assert second.status == "completed"
    assert second.completed == rows
    redone = prompts[len(done_before) :]
    assert sorted(redone) == [f"t{i}" for i in range(first.completed, rows)]


async def test_the_local_backend_runs_no_more_rows_than_the_runtime_may_hold(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_threads": 2})
    (tmp_path / "in.csv").write_text("text\n" + "".join(f"t{i}\n" for i in range(6)))
    running: list[int] = []
    peak: list[int] = [0]

    async def slow(request: ModelRequest) -> Reply:
        running.append(1)
        peak[0] = max(peak[0], len(running))
        await trio.sleep(1.0)
        running.pop()
        return testing.say("ok")

    async with world.open(ScriptedProvider(slow)) as rt:
        summary = await rt.run_job(
            JobSpec(
                input_path=tmp_path / "in.csv",
                agent="general-purpose",
                prompt="{text}",
                max_concurrency=50,
            )
        )
    assert (summary.completed, summary.failed) == (6, 0)
    assert peak[0] == 2
    assert summary.output_path is not None
    with summary.output_path.open(newline="") as file:
        attempts = [row["attempts"] for row in csv.DictReader(file)]
    assert attempts == ["1"] * 6  # no row met the agent limit and had to be retried


async def test_rows_that_are_ready_together_start_together(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: the feeder and the local backend start up to eight ready rows in one pass
    of the scheduler, so their agents make their transcript files, and sync their results,
    in one round trip of the runtime's file helper; a row per pass (a checkpoint at each
    send and each take) made a round trip for every row or two."""

    class Passes(trio.abc.Instrument):
        """Counts the scheduler's passes: each waits for I/O once."""

        count = 0

        def after_io_wait(self, timeout: float) -> None:
            self.count += 1

    passes = Passes()
    started_in: list[int] = []

    async def run_row(rt: object, request: RowRequest) -> RowOutcome:
        started_in.append(passes.count)
        await trio.sleep(1)
        return RowOutcome(
            job_id=request.job_id,
            item_id=request.item_id,
            attempt=request.attempt,
            status="completed",
            result_json='"ok"',
        )

    monkeypatch.setattr(subagents.runtime._jobs.local, "run_row", run_row)
    world = World(tmp_path, limits={"max_threads": 32})  # a slot for every row
    (tmp_path / "in.csv").write_text("text\n" + "".join(f"t{i}\n" for i in range(32)))
    async with world.open(ScriptedProvider(classify)) as rt:
        trio.lowlevel.add_instrument(passes)
        try:
            summary = await rt.run_job(
                JobSpec(
                    input_path=tmp_path / "in.csv",
                    agent="general-purpose",
                    prompt="{text}",
                    max_concurrency=32,
                )
            )
        finally:
            trio.lowlevel.remove_instrument(passes)
    assert (summary.completed, summary.failed) == (32, 0)
    per_pass = collections.Counter(started_in)
    assert sorted(per_pass.values()) == [8, 8, 8, 8]


async def test_a_row_that_reports_its_result_is_done_with_it_and_knows_its_ids(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Codex's worker contract: the prompt names the job and the item, and the result the
    worker reports with report_agent_job_result is the row's, even with no complete_task."""
    world = World(tmp_path)
    (tmp_path / "in.csv").write_text("id,text\nT1,first\nT2,second\n")
    seen: list[str] = []

    def worker(request: ModelRequest) -> Reply:
        if request.messages[-1].role == "user" and len(request.messages) > 1:
            return Reply(text="reported")  # after the report: an answer, no complete_task
        prompt = request.messages[0].text
        seen.append(prompt)
        ids = dict(
            line.split(": ", 1)
            for line in prompt.splitlines()
            if line.startswith(("Job ID: ", "Item ID: "))
        )
        return testing.call(
            "report_agent_job_result",
            job_id=ids["Job ID"],
            item_id=ids["Item ID"],
            result={"word": prompt.split()[0]},
        )

    async with world.open(ScriptedProvider(worker)) as rt:
        summary = await rt.run_job(
            JobSpec(
                input_path=tmp_path / "in.csv",
                agent="general-purpose",
                prompt="{text}",
                id_column="id",
            )
        )
    assert summary.status == "completed"
    rows = list(csv.DictReader(summary.output_path.open()))
    assert {r["item_id"]: json.loads(r["result_json"]) for r in rows} == {
        "T1": {"word": "first"},
        "T2": {"word": "second"},
    }
    assert all(f"Job ID: {summary.job_id}" in prompt for prompt in seen)
