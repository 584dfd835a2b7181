"""``RowWorker`` on its own, in this process: the Trio thread, the bridge, the close.

A Ray actor is this class run on Ray's threads; here the test's worker threads
play Ray's, so the bridge (``trio.from_thread`` with the worker's token) and the
shutdown are tested without a cluster.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import msgspec
import pytest
import trio

from subagents.actors import StatusChanged
from subagents.jobs import RowRequest
from subagents.runtime import ScriptedProvider, open_runtime
from subagents.runtime._jobs.ray.wire import (
    WorkerSpec,
    decode_event,
    decode_report,
    encode_requests,
)
from subagents.runtime._jobs.ray.worker import RowWorker
from tests.runtime.jobs.ray import rows


def spec(tmp_path: Path, concurrency: int = 4) -> WorkerSpec:
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    return WorkerSpec(
        cwd=str(tmp_path / "project"),
        home=str(tmp_path / "home"),
        overrides={"state_dir": str(tmp_path / "state")},
        trust_project=True,
        concurrency=concurrency,
    )


def requests(count: int, agent: str = "general-purpose") -> list[RowRequest]:
    return [
        RowRequest(job_id="j", item_id=f"row-{i}", index=i, agent=agent, prompt=f"Row {i}")
        for i in range(count)
    ]


async def call(fn: object, *args: object) -> object:
    return await trio.to_thread.run_sync(functools.partial(fn, *args))  # type: ignore[arg-type]


async def test_a_worker_runs_real_rows_on_its_own_runtime_and_forwards_their_statuses(
    tmp_path: Path,
) -> None:
    worker = RowWorker(spec(tmp_path), opener=open_runtime, provider_factory=ScriptedProvider)
    with trio.fail_after(30):
        await call(worker.ready, 20.0)
        assert await call(worker.submit, encode_requests(requests(3))) == 3
        outcomes = []
        events = []
        while len(outcomes) < 3:
            report = decode_report(await call(worker.collect, 5.0))  # type: ignore[arg-type]
            outcomes.extend(report.outcomes)
            events.extend(decode_event(raw) for raw in report.events)
        assert await call(worker.close, 10.0) is True
    assert sorted(o.item_id for o in outcomes) == ["row-0", "row-1", "row-2"]
    assert {o.status for o in outcomes} == {"completed"}, outcomes
    statuses = [e for e in events if isinstance(e, StatusChanged)]
    assert {e.agent_id for e in statuses} == {o.agent_id for o in outcomes}
    # the transcripts are in the state dir the spec named
    transcripts = {p.stem for p in (tmp_path / "state").rglob("*.jsonl")}
    assert all(any(o.agent_id in name for name in transcripts) for o in outcomes), transcripts
    # closing ended the runtime's thread (Trio's idle thread cache aside)
    assert "subagents-ray-worker" not in {t.name for t in threading.enumerate()}


async def test_a_row_that_raises_is_a_failed_outcome_and_the_worker_goes_on(
    tmp_path: Path,
) -> None:
    worker = RowWorker(
        spec(tmp_path),
        opener=open_runtime,
        run_row=rows.crashing_row,
        provider_factory=ScriptedProvider,
    )
    with trio.fail_after(30):
        await call(worker.ready, 20.0)
        await call(worker.submit, encode_requests(requests(2)))
        got = []
        while len(got) < 2:
            got.extend(decode_report(await call(worker.collect, 5.0)).outcomes)  # type: ignore[arg-type]
        await call(worker.submit, encode_requests(requests(1)))  # still serving
        again = decode_report(await call(worker.collect, 5.0)).outcomes  # type: ignore[arg-type]
        assert await call(worker.close, 10.0) is True
    assert {o.status for o in got + again} == {"failed"}
    assert got[0].error is not None
    assert got[0].error.startswith("ValueError: no row")


async def test_a_worker_refuses_rows_past_its_concurrency(tmp_path: Path) -> None:
    worker = RowWorker(spec(tmp_path, concurrency=2), opener=open_runtime, run_row=rows.pid_row)
    with trio.fail_after(30):
        await call(worker.ready, 20.0)
        with pytest.raises(ValueError, match="past this worker's concurrency of 2"):
            await call(worker.submit, encode_requests(requests(3)))
        assert await call(worker.close, 10.0) is True


async def test_a_collect_with_nothing_finished_waits_at_most_its_bound(tmp_path: Path) -> None:
    worker = RowWorker(spec(tmp_path), opener=open_runtime, run_row=rows.pid_row)
    with trio.fail_after(30):
        await call(worker.ready, 20.0)
        report = decode_report(await call(worker.collect, 0.05))  # type: ignore[arg-type]
        assert report.outcomes == []
        assert await call(worker.close, 10.0) is True
    assert isinstance(msgspec.msgpack.encode(report), bytes)
