"""The Ray backend on a real local cluster (2 CPUs, 2 worker processes), not a mock.

Issue 19 item 2: each worker is a Ray actor hosting its own Trio runtime and
running many rows at once; the driver hands rows out in batches with
backpressure and forwards the workers' status events; a worker process killed
mid-row has its rows run again elsewhere, with exactly one outcome per row.
The engine's side is played by :func:`drive`: it sends requests into a bounded
channel, as ``subagents.jobs`` does, and reads outcomes until ``run`` returns.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import ModuleType

import pytest
import trio

from subagents.actors import AgentSpawned, Event, StatusChanged, is_final
from subagents.jobs import JobBackendUnavailable, RowOutcome, RowRequest
from subagents.runtime import ScriptedProvider, open_runtime
from subagents.runtime._jobs.ray import RayBackend, RayOptions
from subagents.runtime._jobs.ray.worker import RunRow
from tests.runtime.jobs.ray import rows

pytestmark = pytest.mark.timeout(120)


def requests(count: int, *, extra: tuple[str, ...] = ()) -> list[RowRequest]:
    ids = [f"row-{i}" for i in range(count)] + list(extra)
    return [
        RowRequest(job_id="job", item_id=item, index=i, agent="general-purpose", prompt=item)
        for i, item in enumerate(ids)
    ]


def backend(tmp_path: Path, run_row: RunRow | None = None, **options: object) -> RayBackend:
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    return RayBackend(
        RayOptions(**{"workers": 2, "concurrency": 4, "batch_size": 2, **options}),  # type: ignore[arg-type]
        opener=open_runtime,
        cwd=tmp_path / "project",
        home=tmp_path / "home",
        state_dir=tmp_path / "state",
        trust_project=True,
        provider_factory=ScriptedProvider,
        run_row=run_row,
    )


class Engine:
    """The engine's half of the protocol: bounded requests in, outcomes out, events kept."""

    def __init__(self) -> None:
        self.outcomes: list[RowOutcome] = []
        self.events: list[Event] = []
        self.most_outstanding = 0
        self.error: Exception | None = None

    async def drive(self, backend: RayBackend, rows_in: list[RowRequest]) -> None:
        send_requests, receive_requests = trio.open_memory_channel[RowRequest](1)
        send_outcomes, receive_outcomes = trio.open_memory_channel[RowOutcome](1)
        sent = 0

        async def feed() -> None:
            nonlocal sent
            async with send_requests:
                for request in rows_in:
                    try:
                        await send_requests.send(request)
                    except trio.BrokenResourceError:  # the backend failed: no more rows
                        return
                    sent += 1
                    self.most_outstanding = max(self.most_outstanding, sent - len(self.outcomes))

        async def run() -> None:
            async with send_outcomes, receive_requests:
                try:
                    await backend.run(receive_requests, send_outcomes, self.events.append)
                except JobBackendUnavailable as exc:
                    self.error = exc

        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed)
            nursery.start_soon(run)
            async for outcome in receive_outcomes:
                self.outcomes.append(outcome)


async def test_rows_run_on_both_workers_with_backpressure_and_each_comes_back_once(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    engine = Engine()
    ray_backend = backend(tmp_path, rows.pid_row)
    with trio.fail_after(90):
        await engine.drive(ray_backend, requests(40))
    assert sorted(o.item_id for o in engine.outcomes) == sorted(f"row-{i}" for i in range(40))
    pids = {json.loads(o.result_json or "") for o in engine.outcomes}
    assert ray_backend.last is not None
    assert pids == set(ray_backend.last.pids)
    assert len(pids) == 2
    # never more rows out than 2 workers x 4 slots, plus the internal channel (2) and
    # the row the intake holds and the engine's channel (1 each)
    assert engine.most_outstanding <= 2 * 4 + 2 + 1 + 1


async def test_real_rows_forward_their_status_events_and_write_transcripts_to_the_shared_dir(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    engine = Engine()
    with trio.fail_after(90):
        await engine.drive(backend(tmp_path), requests(6))
    assert {o.status for o in engine.outcomes} == {"completed"}, engine.outcomes
    agents = {o.agent_id for o in engine.outcomes}
    assert {e.agent_id for e in engine.events if isinstance(e, AgentSpawned)} == agents
    finals = [e for e in engine.events if isinstance(e, StatusChanged) and is_final(e.status)]
    assert {e.agent_id for e in finals} == agents
    names = {p.name for p in (tmp_path / "state").rglob("*.jsonl")}
    assert all(any(str(a) in name for name in names) for a in agents), names


async def test_a_worker_killed_mid_row_has_its_rows_reassigned_with_no_duplicate_and_no_loss(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    marker = tmp_path / "killed"
    engine = Engine()
    ray_backend = backend(tmp_path, functools.partial(rows.killing_row, marker))
    rows_in = requests(1, extra=("victim",)) + requests(20)[1:]
    with trio.fail_after(90):
        await engine.drive(ray_backend, rows_in)
    ids = [o.item_id for o in engine.outcomes]
    assert sorted(ids) == sorted(r.item_id for r in rows_in)  # each row once: none lost, none twice
    assert {o.status for o in engine.outcomes} == {"completed"}
    killed = int(marker.read_text())
    dispatch = ray_backend.last
    assert dispatch is not None
    assert dispatch.workers_lost == 1
    # the victim, and whichever rows were running beside it then (none, on a loaded machine)
    assert dispatch.rows_reassigned >= 1
    assert killed in dispatch.pids
    assert len(dispatch.pids) == 3  # a fresh worker took its slot
    assert all(json.loads(o.result_json or "") != killed for o in engine.outcomes)


async def test_when_every_worker_is_lost_the_job_fails_with_one_clear_line(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    engine = Engine()
    ray_backend = backend(
        tmp_path,
        functools.partial(rows.killing_row, None),  # the victim kills every worker
        workers=1,
        max_worker_restarts=1,
    )
    with trio.fail_after(90):
        await engine.drive(ray_backend, requests(0, extra=("victim",)))
    assert isinstance(engine.error, JobBackendUnavailable)
    message = str(engine.error)
    assert "\n" not in message
    assert "Every Ray worker is gone" in message
    assert "resume the job" in message
    assert engine.outcomes == []
