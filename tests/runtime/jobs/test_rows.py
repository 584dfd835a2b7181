"""``run_row``: one row as one agent, mapped into a :class:`RowOutcome`.

Follows Codex's agent jobs (``codex-rs/core/src/tools/handlers/agent_jobs.rs``):
a row's result is its structured ``result``, a worker past ``max_runtime``
fails with that reason, and a worker that ends without its result fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import _supervisor as supervisor_module
from subagents.jobs import RowRequest
from subagents.runtime import ModelRequest, Reply, RuntimeClosed, ScriptedProvider, run_row
from tests.runtime.world import World

SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string"}},
    "required": ["label"],
    "additionalProperties": False,
}


def request(**changes: object) -> RowRequest:
    fields: dict[str, object] = {
        "job_id": "job-1",
        "item_id": "row-1",
        "index": 0,
        "agent": "general-purpose",
        "prompt": "Classify ticket 7",
    }
    fields.update(changes)
    return RowRequest(**fields)  # type: ignore[arg-type]


async def test_a_row_without_a_schema_completes_with_its_final_text(tmp_path: Path) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("billing")])) as rt:
        outcome = await run_row(rt, request())
        assert rt.list() == []  # the row's agent was closed: it holds no slot
    assert outcome.status == "completed"
    assert json.loads(outcome.result_json or "") == "billing"
    assert outcome.error is None
    assert not outcome.transient
    assert outcome.job_id == "job-1"
    assert outcome.item_id == "row-1"
    assert outcome.attempt == 1
    assert outcome.started_at <= outcome.completed_at


async def test_with_a_schema_the_result_is_the_validated_complete_task_output(
    tmp_path: Path,
) -> None:
    seen: list[ModelRequest] = []

    def policy(model_request: ModelRequest) -> Reply:
        seen.append(model_request)
        if len(seen) == 1:  # an invalid result first: the model is told and fixes it
            return testing.finish(result={"label": 3})
        return testing.finish(result={"label": "billing"})

    world = World(tmp_path)
    async with world.open(ScriptedProvider(policy)) as rt:
        outcome = await run_row(rt, request(output_schema=SCHEMA))
    assert outcome.status == "completed", outcome.error
    assert json.loads(outcome.result_json or "") == {"label": "billing"}
    offered = {spec["name"]: spec for spec in seen[0].tools}
    offered_schema = offered["complete_task"]["input_schema"]["properties"]["result"]
    assert {k: v for k, v in offered_schema.items() if k != "description"} == SCHEMA


async def test_a_row_that_ends_without_its_result_fails(tmp_path: Path) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("no tool call")])) as rt:
        outcome = await run_row(rt, request(output_schema=SCHEMA))
    assert outcome.status == "failed"
    assert "complete_task" in (outcome.error or "")
    assert not outcome.transient


async def test_an_overloaded_provider_is_a_transient_failure(tmp_path: Path) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider([testing.fail("overloaded_error", status=529)])
    async with world.open(provider) as rt:
        outcome = await run_row(rt, request())
    assert outcome.status == "failed"
    assert outcome.transient, outcome.error
    assert "Overloaded" in (outcome.error or "")


async def test_a_bad_request_is_a_final_failure(tmp_path: Path) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider([testing.fail("invalid_request_error", status=400)])
    async with world.open(provider) as rt:
        outcome = await run_row(rt, request())
    assert outcome.status == "failed"
    assert not outcome.transient


async def test_a_row_past_max_runtime_is_stopped_and_fails(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        start = trio.current_time()
        outcome = await run_row(rt, request(max_runtime=5.0))
        assert trio.current_time() - start < 6.0
        assert rt.list() == []
    assert outcome.status == "failed"
    assert "max_runtime of 5 s" in (outcome.error or "")
    assert not outcome.transient


async def test_an_unknown_agent_type_fails_the_row_naming_the_types(tmp_path: Path) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("x")])) as rt:
        outcome = await run_row(rt, request(agent="no-such-agent"))
    assert outcome.status == "failed"
    assert not outcome.transient
    assert "no-such-agent" in (outcome.error or "")


async def test_a_closed_runtime_is_no_failure_of_the_row(tmp_path: Path) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("x")])) as rt:
        pass
    with pytest.raises(RuntimeClosed):
        await run_row(rt, request())


async def test_closing_a_row_s_agent_walks_its_subtree_not_every_open_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job closes each row's agent as the row ends, with thousands open beside it:
    building the tree from ``Supervisor.list`` made each close O(open agents), a job
    O(rows^2) (10,000 rows: 153 s, 150x the ideal, measured in ``jobs_ray_10000``)."""
    world = World(tmp_path, limits={"max_threads": 64})
    async with world.open(ScriptedProvider(lambda request: testing.say("done"))) as rt:
        first = await rt.spawn("general-purpose", "one")

        for _ in range(20):
            await rt.spawn("general-purpose", "more")
        described: list[str] = []
        describe = supervisor_module._info

        def counted(ctx: Any) -> Any:
            described.append(ctx.id)
            return describe(ctx)

        monkeypatch.setattr(supervisor_module, "_info", counted)
        await rt.close(first.agent_id, grace=0)
        # its own description (is it open?), not the 22 open agents'
        assert set(described) == {first.agent_id}
        assert rt.supervisor.subtree(first.agent_id) == []
