"""The job engine: rows to a backend, outcomes to SQLite, retries, cancel, resume, output.

Follows Codex's agent jobs (``codex-rs/core/src/tools/handlers/agent_jobs.rs``):
item ids from ``id_column`` or ``row-N``, failed rows recorded with their
last error, the output CSV with every input column first.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from subagents.actors import Event
from subagents.jobs import (
    JOB_COLUMNS,
    JobFinished,
    JobInputError,
    JobLocked,
    JobSpec,
    JobStarted,
    RowFinished,
    RowOutcome,
    RowRequest,
    RowRetried,
    cancel_job,
    list_jobs,
    run_job,
    show_job,
)
from subagents.jobs._doorbell import DOORBELL_NAME, open_doorbell, ring_doorbell, wait_rung
from subagents.jobs._lock import hold_job_lock
from tests.jobs.helpers import Answer, ScriptedBackend, write_csv


def read_output(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def spec_for(tmp_path: Path, **changes: object) -> JobSpec:
    fields: dict[str, object] = {
        "input_path": tmp_path / "tickets.csv",
        "agent": "classifier",
        "prompt": "Classify {title}",
        "output_path": tmp_path / "out.csv",
        "retry_delay": 1.0,
    }
    fields.update(changes)
    return JobSpec(**fields)  # type: ignore[arg-type]


TICKETS = 'id,title\nt1,Refund please\nt2,"Login, broken"\n,,\nt3,Slow\n'


async def test_a_job_runs_every_row_and_writes_the_output_csv(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    backend = ScriptedBackend()
    events: list[Event] = []
    summary = await run_job(
        spec_for(tmp_path, id_column="id"),
        backend,
        state_dir=tmp_path / "state",
        publish=events.append,
    )
    assert summary.status == "completed"
    assert (summary.total, summary.completed, summary.failed) == (3, 3, 0)
    assert summary.output_path == tmp_path / "out.csv"
    rows = read_output(tmp_path / "out.csv")
    with (tmp_path / "out.csv").open() as file:
        header = next(csv.reader(file))
    assert header == ["id", "title", *JOB_COLUMNS]
    assert [r["item_id"] for r in rows] == ["t1", "t2", "t3"]
    assert [r["title"] for r in rows] == ["Refund please", "Login, broken", "Slow"]
    assert {r["job_id"] for r in rows} == {summary.job_id}
    assert [json.loads(r["result_json"]) for r in rows] == [
        "Classify Refund please",
        "Classify Login, broken",
        "Classify Slow",
    ]
    assert all(r["status"] == "completed" and r["attempts"] == "1" for r in rows)
    assert all(r["last_error"] == "" and r["started_at"] and r["completed_at"] for r in rows)
    kinds = [type(e) for e in events]
    assert kinds[0] is JobStarted
    assert kinds[-1] is JobFinished
    finished = [e for e in events if isinstance(e, RowFinished)]
    assert [e.completed for e in finished] == [1, 2, 3]
    assert all(e.agent_id == summary.job_id and e.total == 3 for e in finished)


async def test_without_an_id_column_rows_are_numbered_and_the_output_sits_by_the_input(
    tmp_path: Path,
) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    summary = await run_job(
        spec_for(tmp_path, output_path=None), ScriptedBackend(), state_dir=tmp_path / "s"
    )
    expected = tmp_path / f"tickets.{summary.job_id}.csv"
    assert summary.output_path == expected
    assert [r["item_id"] for r in read_output(expected)] == ["row-1", "row-2", "row-3"]


async def test_a_transient_failure_is_retried_after_a_growing_delay(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    write_csv(tmp_path / "tickets.csv", "title\nA\nB\n")
    times: list[float] = []

    def answer(request: RowRequest) -> Answer:
        if request.item_id == "row-1":
            times.append(trio.current_time())
            if request.attempt < 3:
                return ("failed", f"Overloaded: attempt {request.attempt}", True)
        return ("completed", "1")

    events: list[Event] = []
    summary = await run_job(
        spec_for(tmp_path, max_attempts=3, retry_delay=2.0),
        ScriptedBackend(answer),
        state_dir=tmp_path / "s",
        publish=events.append,
    )
    assert summary.completed == 2
    row = read_output(tmp_path / "out.csv")[0]
    assert row["status"] == "completed"
    assert row["attempts"] == "3"
    assert [round(b - a) for a, b in itertools.pairwise(times)] == [2, 4]
    retried = [e for e in events if isinstance(e, RowRetried)]
    assert [(e.attempt, e.delay) for e in retried] == [(1, 2.0), (2, 4.0)]


async def test_a_row_failing_transiently_every_time_fails_with_its_last_error(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    write_csv(tmp_path / "tickets.csv", "title\nA\n")

    def answer(request: RowRequest) -> Answer:
        return ("failed", f"Overloaded: attempt {request.attempt}", True)

    summary = await run_job(
        spec_for(tmp_path, max_attempts=2), ScriptedBackend(answer), state_dir=tmp_path / "s"
    )
    assert (summary.completed, summary.failed) == (0, 1)
    row = read_output(tmp_path / "out.csv")[0]
    assert (row["status"], row["attempts"]) == ("failed", "2")
    assert row["last_error"] == "Overloaded: attempt 2"
    assert row["result_json"] == ""


async def test_a_final_failure_is_not_retried(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", "title\nA\nB\n")
    backend = ScriptedBackend(
        lambda r: ("failed", "BadRequest: no", False) if r.index == 0 else ("completed", "1")
    )
    summary = await run_job(spec_for(tmp_path), backend, state_dir=tmp_path / "s")
    assert (summary.completed, summary.failed) == (1, 1)
    assert len(backend.seen) == 2
    info = show_job(tmp_path / "s", summary.job_id)
    assert info.failures == (("row-1", "BadRequest: no"),)
    assert info.status == "completed"


async def test_a_placeholder_with_no_column_stops_the_job_before_any_row(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    backend = ScriptedBackend()
    with pytest.raises(JobInputError, match=r"\{body\}") as caught:
        await run_job(
            spec_for(tmp_path, prompt="Read {title} and {body}"),
            backend,
            state_dir=tmp_path / "s",
        )
    assert "tickets.csv" in str(caught.value)
    assert caught.value.column == "body"
    assert backend.seen == []
    assert list_jobs(tmp_path / "s") == []
    assert list((tmp_path / "s").iterdir()) == []  # no empty job folder left behind


async def test_a_jsonl_row_missing_a_placeholder_key_is_named_by_line(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"title": "a"}\n\n{"other": 1}\n')
    with pytest.raises(JobInputError, match="line 3") as caught:
        await run_job(
            spec_for(tmp_path, input_path=tmp_path / "rows.jsonl"),
            ScriptedBackend(),
            state_dir=tmp_path / "s",
        )
    assert caught.value.line == 3


async def test_a_bad_output_schema_is_refused_before_any_row(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    (tmp_path / "schema.json").write_text('{"type": 12}')
    backend = ScriptedBackend()
    with pytest.raises(JobInputError, match="not a valid JSON Schema"):
        await run_job(
            spec_for(tmp_path, output_schema=tmp_path / "schema.json"),
            backend,
            state_dir=tmp_path / "s",
        )
    (tmp_path / "schema.json").write_text("not json")
    with pytest.raises(JobInputError, match="cannot be read as JSON"):
        await run_job(
            spec_for(tmp_path, output_schema="schema.json", cwd=tmp_path),
            backend,
            state_dir=tmp_path / "s",
        )
    assert backend.seen == []


async def test_the_output_schema_reaches_every_row_request(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", "title\nA\n")
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    backend = ScriptedBackend()
    await run_job(
        spec_for(tmp_path, output_schema=tmp_path / "schema.json", max_runtime=7.0),
        backend,
        state_dir=tmp_path / "s",
    )
    assert backend.seen[0].output_schema == schema
    assert backend.seen[0].max_runtime == 7.0
    assert backend.seen[0].agent == "classifier"


async def test_a_cancelled_job_leaves_its_rows_pending_and_a_resume_redoes_none_done(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    write_csv(tmp_path / "tickets.csv", "title\n" + "".join(f"T{i}\n" for i in range(6)))
    first = ScriptedBackend(hold=frozenset({"row-5", "row-6"}))
    cancel = trio.Event()
    state = tmp_path / "s"
    events: list[Event] = []

    def publish(event: Event) -> None:
        events.append(event)
        if isinstance(event, RowFinished) and event.completed == 4:
            cancel.set()

    summary = await run_job(
        spec_for(tmp_path), first, state_dir=state, publish=publish, cancel=cancel
    )
    assert summary.status == "cancelled"
    assert (summary.completed, summary.pending) == (4, 2)
    assert summary.output_path is None
    assert show_job(state, summary.job_id).status == "cancelled"
    assert isinstance(events[-1], JobFinished)
    assert events[-1].status == "cancelled"

    second = ScriptedBackend()
    resumed = await run_job(
        spec_for(tmp_path, job_id=summary.job_id, prompt="ignored on a resume {nothing}"),
        second,
        state_dir=state,
    )
    assert resumed.resumed
    assert resumed.status == "completed"
    assert sorted(r.item_id for r in second.seen) == ["row-5", "row-6"]
    assert second.seen[0].prompt == "Classify T4"  # the stored template
    rows = read_output(tmp_path / "out.csv")
    assert [r["item_id"] for r in rows] == [f"row-{i}" for i in range(1, 7)]
    assert all(r["status"] == "completed" for r in rows)

    again = ScriptedBackend()
    done = await run_job(spec_for(tmp_path, job_id=summary.job_id), again, state_dir=state)
    assert done.status == "completed"
    assert again.seen == []


async def test_cancel_job_from_elsewhere_stops_the_running_job_at_its_next_row(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Each row takes a second, longer than a group commit waits (rows that end at once
    share one commit, so rows ending together would all be committed before any cancel
    is read): the cancel recorded as the second row counts stops the job."""
    write_csv(tmp_path / "tickets.csv", "title\n" + "".join(f"T{i}\n" for i in range(20)))
    state = tmp_path / "s"

    def publish(event: Event) -> None:
        if isinstance(event, RowFinished) and event.completed == 2:
            cancel_job(state, event.job_id)

    summary = await run_job(
        spec_for(tmp_path, max_concurrency=1),
        ScriptedBackend(limit=1, delay=1.0),
        state_dir=state,
        publish=publish,
    )
    assert summary.status == "cancelled"
    # the rows committed with the cancel are kept; the job stopped there, not at its end
    # (under autojump_clock, rows may end while a commit or the doorbell's check is in a
    # thread: how many is not fixed)
    assert 2 <= summary.completed < 20
    info = show_job(state, summary.job_id)
    assert (info.status, info.pending) == ("cancelled", 20 - summary.completed)


async def test_cancel_job_from_elsewhere_stops_a_job_whose_rows_never_end(
    tmp_path: Path,
) -> None:
    """No row has to commit for a cancel to land: ``cancel_job`` rings the running
    process's doorbell (a FIFO in the job's folder), which checks the state at once.
    Without it this job would run until its rows' ``max_runtime``."""
    write_csv(tmp_path / "tickets.csv", "title\nA\nB\n")
    state = tmp_path / "s"
    both_running = trio.Event()

    def answer(request: RowRequest) -> Answer:  # never reached: both rows hold
        raise AssertionError(request)

    class Holding(ScriptedBackend):
        async def _answer(
            self, request: RowRequest, outcomes: trio.MemorySendChannel[RowOutcome]
        ) -> None:
            if len(self.seen) == 1:
                both_running.set()
            await super()._answer(request, outcomes)

    backend = Holding(answer, hold=frozenset({"row-1", "row-2"}))
    started: list[str] = []

    def publish(event: Event) -> None:
        if isinstance(event, JobStarted):
            started.append(event.job_id)

    summaries = []
    done = trio.Event()

    async def job() -> None:
        summaries.append(
            await run_job(
                spec_for(tmp_path, max_runtime=3600.0), backend, state_dir=state, publish=publish
            )
        )
        done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(job)
        with trio.fail_after(30):
            await both_running.wait()
        cancel_job(state, started[0])
        with trio.fail_after(30):  # a bound: the doorbell answers in milliseconds
            await done.wait()
    (summary,) = summaries
    assert summary.status == "cancelled"
    assert (summary.completed, summary.failed) == (0, 0)
    info = show_job(state, summary.job_id)
    assert (info.status, info.pending) == ("cancelled", 2)
    assert not any(state.joinpath(summary.job_id).glob("*.fifo"))  # the doorbell is gone


@pytest.mark.parametrize("planted", ["file", "symlink"])
async def test_cancel_job_writes_to_nothing_but_a_doorbell(tmp_path: Path, planted: str) -> None:
    """A file, or a link to one, where the doorbell would be is left alone: the cancel is
    recorded in the state, and nothing is written through it."""
    write_csv(tmp_path / "tickets.csv", TICKETS)
    state = tmp_path / "s"
    stopped = trio.Event()
    stopped.set()  # a job stopped before its rows: not completed, so a cancel applies
    summary = await run_job(spec_for(tmp_path), ScriptedBackend(), state_dir=state, cancel=stopped)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    bell = state / summary.job_id / DOORBELL_NAME
    if planted == "file":
        bell.write_text("keep me")
        target = bell
    else:
        bell.symlink_to(target)
    info = cancel_job(state, summary.job_id)
    assert info.status == "cancelled"
    assert target.read_text() == "keep me"
    assert not ring_doorbell(state / summary.job_id)


async def test_a_job_whose_doorbell_cannot_be_made_still_runs(tmp_path: Path) -> None:
    """A folder where the doorbell would be: the job runs without one (a cancel from
    elsewhere then lands at its next committed row)."""
    write_csv(tmp_path / "tickets.csv", TICKETS)
    state = tmp_path / "s"
    (state / "job-b" / DOORBELL_NAME).mkdir(parents=True)
    summary = await run_job(spec_for(tmp_path, job_id="job-b"), ScriptedBackend(), state_dir=state)
    assert (summary.status, summary.completed) == ("completed", 3)


def test_a_doorbell_with_no_runner_is_not_heard(tmp_path: Path) -> None:
    """A FIFO left behind by a runner that was killed has no reader: ringing it neither
    blocks nor counts as heard."""
    os.mkfifo(tmp_path / DOORBELL_NAME)
    assert not ring_doorbell(tmp_path)


async def test_a_doorbell_rung_twice_before_it_is_read_wakes_its_runner_once(
    tmp_path: Path,
) -> None:
    with open_doorbell(tmp_path) as bell:
        assert bell is not None
        assert ring_doorbell(tmp_path)
        assert ring_doorbell(tmp_path)
        with trio.fail_after(5):
            await wait_rung(bell)
        with pytest.raises(BlockingIOError):  # both rings were read together
            os.read(bell, 1)
    assert not (tmp_path / DOORBELL_NAME).exists()


async def test_a_job_another_holder_runs_is_refused(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    state = tmp_path / "s"
    (state / "job-a").mkdir(parents=True)
    backend = ScriptedBackend()
    with hold_job_lock(state / "job-a", "job-a"), pytest.raises(JobLocked, match="job-a"):
        await run_job(spec_for(tmp_path, job_id="job-a"), backend, state_dir=state)
    assert backend.seen == []


async def test_list_and_show_read_the_state_dir(tmp_path: Path) -> None:
    write_csv(tmp_path / "tickets.csv", TICKETS)
    state = tmp_path / "s"
    (state / "not-a-job").mkdir(parents=True)
    one = await run_job(spec_for(tmp_path), ScriptedBackend(), state_dir=state)
    jobs = list_jobs(state)
    assert [j.job_id for j in jobs] == [one.job_id]
    info = jobs[0]
    assert (info.status, info.total, info.completed, info.failed) == ("completed", 3, 3, 0)
    assert info.agent == "classifier"
    assert info.output_path == str(tmp_path / "out.csv")
    assert info.holder is None


async def test_outcomes_that_end_close_together_share_a_commit(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: a commit writes about the same pages for one row as for fifty, so the first
    outcome of a commit waits a twentieth of a second for others (a group commit). Twenty
    rows ending 10 ms apart, one after another, take four or five commits, not twenty; each
    is counted (``RowFinished``) at most that twentieth of a second after its row ended.
    The database runs inline here, so the clock never moves on while a commit is in its
    thread."""
    from subagents.jobs._state import JobDatabase, JobStore

    async def inline(self: JobStore, function: Any, *args: Any, **kwargs: Any) -> Any:
        await trio.lowlevel.checkpoint()
        return function(*args, **kwargs)

    commits: list[int] = []
    record = JobDatabase.record

    def counting(self: JobDatabase, outcomes: Any) -> Any:
        commits.append(len(outcomes))
        return record(self, outcomes)

    monkeypatch.setattr(JobStore, "call", inline)
    monkeypatch.setattr(JobDatabase, "record", counting)
    write_csv(tmp_path / "tickets.csv", "title\n" + "".join(f"T{i}\n" for i in range(20)))
    ended: dict[str, float] = {}
    lags: list[float] = []

    class Timed(ScriptedBackend):
        async def _answer(
            self, request: RowRequest, outcomes: trio.MemorySendChannel[RowOutcome]
        ) -> None:
            await trio.sleep(0.01)
            ended[request.item_id] = trio.current_time()
            await super()._answer(request, outcomes)

    def publish(event: Event) -> None:
        if isinstance(event, RowFinished):
            lags.append(trio.current_time() - ended[event.item_id])

    summary = await run_job(
        spec_for(tmp_path, max_concurrency=1),
        Timed(limit=1),
        state_dir=tmp_path / "s",
        publish=publish,
    )
    assert summary.completed == 20
    assert sum(commits) == 20
    assert 4 <= len(commits) <= 5, commits
    assert len(lags) == 20
    assert max(lags) <= 0.05 + 1e-9
