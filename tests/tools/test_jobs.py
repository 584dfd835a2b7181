"""Codex's agent-job tools against a fake JobHost: schemas, Codex's refusals, confinement, filter.

The spec is codex-rs's (``codex-rs/tools/src/agent_job_tool.rs`` for the two
tool specs, ``codex-rs/core/src/tools/handlers/agent_jobs.rs`` for the
handlers); the module docstring of ``subagents/tools/_lifecycle/jobs.py``
quotes what is followed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from subagents._exceptions import SubagentsError
from subagents.agents import LIFECYCLE_TOOLS, AgentDefinition, AgentSource, builtin_agents
from subagents.tools import (
    JOB_MAX_CONCURRENCY,
    REPORT_AGENT_JOB_RESULT,
    SPAWN_AGENTS_ON_CSV,
    SPAWN_TOOL_NAMES,
    CsvJobRequest,
    CsvJobSummary,
    FailedItem,
    FilterLayer,
    Tool,
    ToolContext,
    ToolResult,
    TrustPolicy,
    WaitBounds,
    dispatch,
    filter_tools,
    input_schema,
    lifecycle_tools,
    tool_policy,
)

SUMMARY = CsvJobSummary(
    job_id="job-1",
    status="completed",
    output_csv_path="/w/out.csv",
    total_items=3,
    completed_items=2,
    failed_items=1,
    failed_item_errors=(FailedItem("row-2", "worker exceeded max runtime", source_id=None),),
)


@attrs.define
class FakeJobs:
    """A JobHost (and the AgentHost half the other tools need) that records its calls."""

    summary: CsvJobSummary = SUMMARY
    accepted: bool = True
    error: SubagentsError | None = None
    requests: list[CsvJobRequest] = attrs.field(factory=list)
    reports: list[tuple[str, str, dict[str, Any], bool]] = attrs.field(factory=list)

    async def run_csv_job(self, caller: ToolContext, request: CsvJobRequest) -> CsvJobSummary:
        await trio.lowlevel.checkpoint()
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return self.summary

    async def report_job_result(
        self,
        caller: ToolContext,
        job_id: str,
        item_id: str,
        result: dict[str, Any],
        *,
        stop: bool = False,
    ) -> bool:
        await trio.lowlevel.checkpoint()
        if self.error is not None:
            raise self.error
        self.reports.append((job_id, item_id, result, stop))
        return self.accepted

    def agent_types(self) -> list[tuple[str, str]]:
        return [("general-purpose", "General.")]

    wait_bounds: WaitBounds = attrs.field(factory=WaitBounds)


@pytest.fixture
def jobs() -> FakeJobs:
    return FakeJobs()


@pytest.fixture
def tools(jobs: FakeJobs) -> dict[str, Tool]:
    every = lifecycle_tools(jobs, jobs=jobs)  # type: ignore[arg-type]
    return {tool.name: tool for tool in every}


@pytest.fixture
def ctx(make_ctx: Callable[..., ToolContext]) -> ToolContext:
    return make_ctx()


async def run(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await dispatch(tool, arguments, ctx)


# -- schemas ---------------------------------------------------------------------------------


def test_the_job_tools_come_last_and_only_with_a_job_host(jobs: FakeJobs) -> None:
    without = [t.name for t in lifecycle_tools(jobs)]  # type: ignore[arg-type]
    with_jobs = [t.name for t in lifecycle_tools(jobs, jobs=jobs)]  # type: ignore[arg-type]
    assert SPAWN_AGENTS_ON_CSV not in without
    assert REPORT_AGENT_JOB_RESULT not in without
    assert with_jobs == [*without, SPAWN_AGENTS_ON_CSV, REPORT_AGENT_JOB_RESULT]


def test_spawn_agents_on_csv_takes_codexs_arguments(tools: dict[str, Tool]) -> None:
    """codex-rs create_spawn_agents_on_csv_tool: these properties, csv_path and instruction
    required, nothing else accepted (agent_type is ours)."""
    schema = input_schema(tools[SPAWN_AGENTS_ON_CSV].arguments_type)
    assert set(schema["properties"]) == {
        "csv_path",
        "instruction",
        "id_column",
        "output_csv_path",
        "max_concurrency",
        "max_workers",
        "max_runtime_seconds",
        "output_schema",
        "agent_type",
    }
    assert sorted(schema["required"]) == ["csv_path", "instruction"]
    assert schema.get("additionalProperties") is False


def test_report_agent_job_result_takes_codexs_arguments(tools: dict[str, Tool]) -> None:
    schema = input_schema(tools[REPORT_AGENT_JOB_RESULT].arguments_type)
    assert set(schema["properties"]) == {"job_id", "item_id", "result", "stop"}
    assert sorted(schema["required"]) == ["item_id", "job_id", "result"]
    assert schema.get("additionalProperties") is False
    assert "Worker-only" in tools[REPORT_AGENT_JOB_RESULT].description


# -- spawn_agents_on_csv ---------------------------------------------------------------------


async def test_a_job_runs_on_confined_paths_and_answers_as_codex(
    tools: dict[str, Tool], jobs: FakeJobs, ctx: ToolContext
) -> None:
    (ctx.workspace_root / "in.csv").write_text("id,name\n1,a\n")
    result = await run(
        tools[SPAWN_AGENTS_ON_CSV],
        {
            "csv_path": "in.csv",
            "instruction": "Review {name}",
            "id_column": "id",
            "output_csv_path": "out/result.csv",
            "max_runtime_seconds": 60,
            "output_schema": {"type": "object", "required": ["verdict"]},
        },
        ctx,
    )
    assert not result.is_error, result.content
    root = Path(os.path.realpath(ctx.workspace_root))
    (request,) = jobs.requests
    assert request == CsvJobRequest(
        csv_path=root / "in.csv",
        instruction="Review {name}",
        agent_type="general-purpose",
        id_column="id",
        output_csv_path=root / "out" / "result.csv",
        output_schema={"type": "object", "required": ["verdict"]},
        max_concurrency=None,
        max_runtime_seconds=60.0,
    )
    answer = json.loads(result.content)
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
    assert answer["failed_item_errors"] == [
        {"item_id": "row-2", "source_id": None, "last_error": "worker exceeded max runtime"}
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"max_concurrency": 0}, 1),
        ({"max_concurrency": 10_000}, JOB_MAX_CONCURRENCY),
        ({"max_workers": 3}, 3),
        ({"max_concurrency": 2, "max_workers": 9}, 2),
    ],
)
async def test_concurrency_is_clamped_and_max_workers_is_its_alias(
    tools: dict[str, Tool],
    jobs: FakeJobs,
    ctx: ToolContext,
    arguments: dict[str, int],
    expected: int,
) -> None:
    """Codex's normalize_concurrency: 1 to 64; max_workers when there is no max_concurrency."""
    result = await run(
        tools[SPAWN_AGENTS_ON_CSV], {"csv_path": "in.csv", "instruction": "x", **arguments}, ctx
    )
    assert not result.is_error, result.content
    assert jobs.requests[-1].max_concurrency == expected


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"instruction": "   \n"}, "instruction must be non-empty"),
        ({"instruction": "x", "max_runtime_seconds": 0}, "max_runtime_seconds must be >= 1"),
    ],
)
async def test_codexs_refusals_are_word_for_word(
    tools: dict[str, Tool],
    jobs: FakeJobs,
    ctx: ToolContext,
    arguments: dict[str, Any],
    message: str,
) -> None:
    result = await run(tools[SPAWN_AGENTS_ON_CSV], {"csv_path": "in.csv", **arguments}, ctx)
    assert result.is_error
    assert result.content == message
    assert jobs.requests == []


@pytest.mark.parametrize(
    "field",
    ["csv_path", "output_csv_path"],
)
@pytest.mark.parametrize("path", ["../outside.csv", "/etc/passwd", "link/escape.csv"])
async def test_a_path_outside_the_workspace_is_refused_before_anything_runs(
    tools: dict[str, Tool],
    jobs: FakeJobs,
    make_ctx: Callable[..., ToolContext],
    tmp_path: Path,
    field: str,
    path: str,
) -> None:
    """A model's paths are confined as every file tool's are (DESIGN.md, Trust)."""
    root = tmp_path / "work"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    arguments = {"csv_path": "in.csv", "instruction": "x", field: path}
    result = await run(tools[SPAWN_AGENTS_ON_CSV], arguments, make_ctx(root))
    assert result.is_error
    assert "outside the workspace" in result.content
    assert jobs.requests == []


async def test_a_host_refusal_is_a_tool_error(
    tools: dict[str, Tool], jobs: FakeJobs, ctx: ToolContext
) -> None:
    jobs.error = SubagentsError("instruction placeholder {nmae} is not a column of in.csv")
    result = await run(tools[SPAWN_AGENTS_ON_CSV], {"csv_path": "in.csv", "instruction": "x"}, ctx)
    assert result.is_error
    assert "{nmae}" in result.content


# -- report_agent_job_result -----------------------------------------------------------------


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None])
async def test_a_result_that_is_not_an_object_is_refused(
    tools: dict[str, Tool], jobs: FakeJobs, ctx: ToolContext, value: Any
) -> None:
    arguments = {"job_id": "j", "item_id": "i", "result": value}
    result = await run(tools[REPORT_AGENT_JOB_RESULT], arguments, ctx)
    assert result.is_error
    assert result.content == "result must be a JSON object"
    assert jobs.reports == []


@pytest.mark.parametrize("accepted", [True, False])
async def test_a_report_answers_accepted(
    tools: dict[str, Tool], jobs: FakeJobs, ctx: ToolContext, accepted: bool
) -> None:
    jobs.accepted = accepted
    arguments = {"job_id": "j", "item_id": "i", "result": {"ok": 1}, "stop": True}
    result = await run(tools[REPORT_AGENT_JOB_RESULT], arguments, ctx)
    assert not result.is_error
    assert json.loads(result.content) == {"accepted": accepted}
    assert jobs.reports == [("j", "i", {"ok": 1}, True)]


async def test_a_report_the_host_refuses_says_which_item(
    tools: dict[str, Tool], jobs: FakeJobs, ctx: ToolContext
) -> None:
    jobs.error = SubagentsError("at verdict: 'maybe' is not one of ['yes', 'no']")
    arguments = {"job_id": "j", "item_id": "row-1", "result": {"verdict": "maybe"}}
    result = await run(tools[REPORT_AGENT_JOB_RESULT], arguments, ctx)
    assert result.is_error
    assert result.content.startswith("failed to record agent job result for j / row-1: ")
    assert "'maybe'" in result.content


# -- the filter ------------------------------------------------------------------------------


def _definition(**fields: Any) -> AgentDefinition:
    fields.setdefault("description", "d")
    fields.setdefault("system_prompt", "p")
    return AgentDefinition(name="worker", **fields)


def _decision(
    tools: dict[str, Tool],
    name: str,
    definition: AgentDefinition,
    *,
    depth: int = 1,
    job_row: bool = False,
    trust: TrustPolicy | None = None,
) -> Any:
    policy = tool_policy(definition, depth=depth, max_depth=2, job_row=job_row)
    decision = filter_tools(tools.values(), policy, trust).decision(name)
    assert decision is not None
    return decision


def test_spawn_agents_on_csv_is_a_spawn_tool() -> None:
    assert SPAWN_AGENTS_ON_CSV in LIFECYCLE_TOOLS
    assert SPAWN_AGENTS_ON_CSV in SPAWN_TOOL_NAMES
    assert REPORT_AGENT_JOB_RESULT not in SPAWN_TOOL_NAMES


def test_report_agent_job_result_is_offered_only_to_a_job_row(tools: dict[str, Tool]) -> None:
    """Codex registers it only in a worker's session (agent_job:<id>); ours, by layer 1."""
    lead = _decision(tools, REPORT_AGENT_JOB_RESULT, _definition(), depth=0)
    assert not lead.kept
    assert lead.layer is FilterLayer.ALWAYS_REMOVED
    row = _decision(tools, REPORT_AGENT_JOB_RESULT, _definition(), job_row=True)
    assert row.kept


def test_a_row_keeps_the_report_tool_whatever_its_allow_list_unless_denied(
    tools: dict[str, Tool],
) -> None:
    """Like complete_task, the report tool is the row's contract; the deny list still wins."""
    listed = _definition(tools=("Read",))
    assert _decision(tools, REPORT_AGENT_JOB_RESULT, listed, job_row=True).kept
    denied = _definition(disallowed_tools=(REPORT_AGENT_JOB_RESULT,))
    decision = _decision(tools, REPORT_AGENT_JOB_RESULT, denied, job_row=True)
    assert not decision.kept
    assert decision.layer is FilterLayer.DENY_LIST
    # The built-in workers deny the lifecycle tools, and still report their rows.
    general = next(d for d in builtin_agents() if d.name == "general-purpose")
    assert _decision(tools, REPORT_AGENT_JOB_RESULT, general, job_row=True).kept


def test_spawn_agents_on_csv_is_filtered_as_every_spawn_tool(tools: dict[str, Tool]) -> None:
    general = next(d for d in builtin_agents() if d.name == "general-purpose")
    denied = _decision(tools, SPAWN_AGENTS_ON_CSV, general)
    assert not denied.kept
    assert denied.layer is FilterLayer.DENY_LIST
    at_limit = _decision(tools, SPAWN_AGENTS_ON_CSV, _definition(), depth=2)
    assert not at_limit.kept
    assert at_limit.layer is FilterLayer.ALWAYS_REMOVED
    unlisted = _decision(tools, SPAWN_AGENTS_ON_CSV, _definition(tools=("Read",)))
    assert not unlisted.kept
    assert unlisted.layer is FilterLayer.ALLOW_LIST
    project = _definition(source=AgentSource.PROJECT)
    untrusted = TrustPolicy(withheld={"project": "the folder is not trusted"})
    withheld = _decision(tools, SPAWN_AGENTS_ON_CSV, project, trust=untrusted)
    assert not withheld.kept
    assert withheld.layer is FilterLayer.SOURCE_POLICY
    scoped = _decision(tools, SPAWN_AGENTS_ON_CSV, _definition(tools=("spawn_agents_on_csv(a)",)))
    assert scoped.kept
    assert scoped.scope == ("a",)
