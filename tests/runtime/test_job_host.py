"""The job tools through a real runtime and a scripted model: ``spawn_agents_on_csv`` runs a job
whose rows are agents, and ``report_agent_job_result`` records a row's result.

Codex's behaviour followed (``codex-rs/core/src/tools/handlers/agent_jobs.rs``):
the lead's call blocks until every row has finished and answers ``{job_id,
status, output_csv_path, total_items, completed_items, failed_items,
job_error, failed_item_errors}``; a worker's report is accepted only from the
worker that owns the item (``accepted: false`` otherwise); ``report_agent_job_result``
exists only in a worker's session.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import attrs

from subagents import testing
from subagents.agents import OutputSpec
from subagents.runtime import ModelRequest, Reply, ScriptedProvider
from tests.runtime.world import World

LEAD = "job-lead"


def lead_world(tmp_path: Path, **limits: Any) -> World:
    world = World(tmp_path, limits=limits)
    world.agent(LEAD, tools=["spawn_agents_on_csv", "Read"])
    with (world.project / "tickets.csv").open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["id", "text"])
        writer.writerows([["t1", "cannot log in"], ["t2", "refund please"]])
    return world


def tool_answers(request: ModelRequest) -> list[tuple[str, bool]]:
    """The tool results of the request's last message: ``(content, is_error)``."""
    last = request.messages[-1]
    return [
        (block.content if isinstance(block.content, str) else str(block.content), block.is_error)
        for block in last.content
        if type(block).__name__ == "ToolResultBlock"
    ]


async def test_a_lead_runs_a_csv_job_and_gets_codexs_answer(tmp_path: Path) -> None:
    world = lead_world(tmp_path)
    answers: list[tuple[str, bool]] = []

    def lead(request: ModelRequest) -> Reply:
        if len(request.messages) == 1:
            return testing.call(
                "spawn_agents_on_csv",
                csv_path="tickets.csv",
                instruction="Classify ticket {id}: {text}",
                id_column="id",
                output_csv_path="out/labels.csv",
                output_schema={
                    "type": "object",
                    "required": ["label"],
                    "properties": {"label": {"type": "string"}},
                },
            )
        answers.extend(tool_answers(request))
        return testing.say("done")

    def worker(request: ModelRequest) -> Reply:
        prompt = request.messages[0].text
        label = "auth" if "log in" in prompt else "billing"
        return testing.finish(result={"label": label})

    provider = ScriptedProvider(policies={LEAD: lead, "general-purpose": worker})
    async with world.open(provider) as rt:
        handle = await rt.spawn(LEAD, "Label the tickets")
        await rt.wait([handle.agent_id], timeout=60)
    ((content, is_error),) = answers
    assert not is_error, content
    answer = json.loads(content)
    assert list(answer) == [
        "job_id",
        "status",
        "output_csv_path",
        "total_items",
        "completed_items",
        "failed_items",
        "job_error",
        "failed_item_errors",
    ]
    assert answer["status"] == "completed"
    assert (answer["total_items"], answer["completed_items"], answer["failed_items"]) == (2, 2, 0)
    output = Path(answer["output_csv_path"])
    assert output == world.project / "out" / "labels.csv"
    with output.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(r["item_id"], json.loads(r["result_json"])) for r in rows] == [
        ("t1", {"label": "auth"}),
        ("t2", {"label": "billing"}),
    ]


async def test_a_lead_may_not_write_the_output_outside_its_workspace(tmp_path: Path) -> None:
    world = lead_world(tmp_path)
    answers: list[tuple[str, bool]] = []
    outside = tmp_path / "elsewhere.csv"

    def lead(request: ModelRequest) -> Reply:
        if len(request.messages) == 1:
            return testing.call(
                "spawn_agents_on_csv",
                csv_path="tickets.csv",
                instruction="x {id}",
                output_csv_path=str(outside),
            )
        answers.extend(tool_answers(request))
        return testing.say("done")

    provider = ScriptedProvider(policies={LEAD: lead})
    async with world.open(provider) as rt:
        handle = await rt.spawn(LEAD, "Label the tickets")
        await rt.wait([handle.agent_id], timeout=60)
        assert len(rt.list(include_closed=True)) == 1  # no row ran
    ((content, is_error),) = answers
    assert is_error
    assert "outside the workspace" in content
    assert not outside.exists()


async def test_a_bad_template_is_refused_before_any_row_runs(tmp_path: Path) -> None:
    world = lead_world(tmp_path)
    answers: list[tuple[str, bool]] = []

    def lead(request: ModelRequest) -> Reply:
        if len(request.messages) == 1:
            return testing.call(
                "spawn_agents_on_csv", csv_path="tickets.csv", instruction="Look at {nmae}"
            )
        answers.extend(tool_answers(request))
        return testing.say("done")

    async with world.open(ScriptedProvider(policies={LEAD: lead})) as rt:
        handle = await rt.spawn(LEAD, "Label the tickets")
        await rt.wait([handle.agent_id], timeout=60)
        assert len(rt.list(include_closed=True)) == 1
    ((content, is_error),) = answers
    assert is_error
    assert "nmae" in content


async def test_only_a_job_row_is_offered_report_agent_job_result(tmp_path: Path) -> None:
    world = World(tmp_path)
    offered: dict[str, list[str]] = {}

    def policy(request: ModelRequest) -> Reply:
        offered[request.messages[0].text] = [spec["name"] for spec in request.tools]
        return testing.say("ok")

    async with world.open(ScriptedProvider(policy)) as rt:
        plain = await rt.spawn("general-purpose", "plain agent")
        await rt.wait([plain.agent_id], timeout=60)
        row = await rt._spawn(
            "general-purpose",
            "row agent",
            description=None,
            model=None,
            inputs=None,
            background=False,
            parent=None,
            fork_context=None,
            job_item=("job-1", "row-1"),
        )
        await rt.wait([row.agent_id], timeout=60)
    assert "report_agent_job_result" not in offered["plain agent"]
    assert "report_agent_job_result" in offered["row agent"]
    assert "spawn_agents_on_csv" not in offered["row agent"]  # general-purpose: no spawning


async def _row(rt: Any, prompt: str, item: tuple[str, str], definition: Any = None) -> str:
    record = await rt._spawn(
        "general-purpose",
        prompt,
        description=None,
        model=None,
        inputs=None,
        background=False,
        parent=None,
        fork_context=None,
        definition=definition,
        job_item=item,
    )
    await rt.wait([record.agent_id], timeout=60)
    return str(record.agent_id)


async def test_a_rows_report_is_accepted_only_for_its_own_item(tmp_path: Path) -> None:
    world = World(tmp_path)
    answers: dict[str, list[tuple[str, bool]]] = {}

    def policy(request: ModelRequest) -> Reply:
        prompt = request.messages[0].text
        if len(request.messages) == 1:
            item = "row-1" if prompt == "mine" else "row-9"
            return testing.call(
                "report_agent_job_result", job_id="job-1", item_id=item, result={"label": "a"}
            )
        answers[prompt] = tool_answers(request)
        return testing.say("reported")

    async with world.open(ScriptedProvider(policy)) as rt:
        mine = await _row(rt, "mine", ("job-1", "row-1"))
        other = await _row(rt, "other", ("job-1", "row-2"))
        assert rt.job_report(mine) == {"label": "a"}
        assert rt.job_report(other) is None
    assert [json.loads(c) for c, _ in answers["mine"]] == [{"accepted": True}]
    assert [json.loads(c) for c, _ in answers["other"]] == [{"accepted": False}]


async def test_a_report_that_breaks_the_jobs_schema_goes_back_to_the_row(tmp_path: Path) -> None:
    world = World(tmp_path)
    answers: list[tuple[str, bool]] = []
    schema = {"type": "object", "required": ["label"], "properties": {"label": {"enum": ["a"]}}}

    def policy(request: ModelRequest) -> Reply:
        if len(request.messages) == 1:
            return testing.call(
                "report_agent_job_result", job_id="j", item_id="r", result={"label": "zzz"}
            )
        answers.extend(tool_answers(request))
        return testing.finish(result={"label": "a"})

    async with world.open(ScriptedProvider(policy)) as rt:
        definition = attrs.evolve(
            rt.catalog.get("general-purpose"), output=OutputSpec("result", "the row", schema)
        )
        agent = await _row(rt, "row", ("j", "r"), definition)
        assert rt.job_report(agent) is None
    ((content, is_error),) = answers
    assert is_error
    assert content.startswith("failed to record agent job result for j / r: ")
    assert "at label: 'zzz' is not one of" in content
