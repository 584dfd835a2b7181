"""The runtime's side of Codex's agent-job tools: the :class:`~subagents.tools.JobHost`.

``spawn_agents_on_csv`` becomes :meth:`Runtime.run_job` with the model's
arguments as a :class:`~subagents.jobs.JobSpec`, after the checks
``spawn_agent`` makes: the caller below ``max_depth`` (Codex's "agent depth
limit reached; this session cannot spawn more subagents"), a known agent
type, and one its scoped grant allows (``spawn_agents_on_csv(a, b)`` in its
``tools``). The concurrency is capped, as Codex caps it by
``agent_max_threads``, to the slots the caller leaves free.

``report_agent_job_result`` is accepted only from the agent that runs that row
of that job (:attr:`AgentRecord.job_item`, set when a backend starts the row
with ``job_item``); from any other agent it answers ``accepted: false``, as
Codex's does for a wrong thread. An accepted result is validated against the
job's output schema (the row's output spec), then kept on the agent's record,
where the row's backend reads it when the run ends
(:meth:`Runtime.job_report`). ``stop`` marks the job cancelled (as ``subagents
jobs cancel`` does): the job starts no more rows, and its pending rows stay
for a resume.
"""

from __future__ import annotations

from typing import Any, Final, final

import jsonschema.validators
import trio

from subagents.actors import DepthLimitReached
from subagents.jobs import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RUNTIME,
    JobSpec,
    cancel_job,
    show_job,
)
from subagents.runtime._exceptions import InvalidJobResult, SpawnNotAllowed
from subagents.runtime._runtime import Runtime
from subagents.tools import (
    SPAWN_AGENTS_ON_CSV,
    CsvJobRequest,
    CsvJobSummary,
    FailedItem,
    ToolContext,
)

__all__ = ["JobToolHost"]

#: Problems of a rejected result listed at most (as ``complete_task``'s refusal).
_MAX_PROBLEMS: Final = 8


def _where(path: Any) -> str:
    parts = list(path)
    return "/".join(str(p) for p in parts) if parts else "the top level"


@final
class JobToolHost:
    """The job tools' view of the runtime: every call made on behalf of the calling agent."""

    __slots__ = ("_runtime",)

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def __repr__(self) -> str:
        return f"<JobToolHost of {self._runtime!r}>"

    def _check_scope(self, caller: ToolContext, agent_type: str) -> None:
        record = self._runtime.services.records.get(caller.agent_id)
        if record is None or record.tools is None:
            return
        decision = record.tools.decision(SPAWN_AGENTS_ON_CSV)
        if decision is None or decision.scope is None:
            return
        if agent_type not in decision.scope:
            raise SpawnNotAllowed(agent_type, decision.scope)

    def _concurrency(self, requested: int | None) -> int:
        """The model's number (or the default), within the slots the caller leaves free."""
        slots = max(1, self._runtime.config.limits.max_threads - 1)
        return max(1, min(requested or DEFAULT_MAX_CONCURRENCY, slots))

    async def run_csv_job(self, caller: ToolContext, request: CsvJobRequest) -> CsvJobSummary:
        """Run the model's job to its end; its rows are agents of ``request.agent_type``."""
        runtime = self._runtime
        max_depth = runtime.config.limits.max_depth
        if caller.depth >= max_depth:
            raise DepthLimitReached(max_depth)
        runtime.catalog.get(request.agent_type)  # UnknownAgentError lists the known types
        self._check_scope(caller, request.agent_type)
        spec = JobSpec(
            input_path=request.csv_path,
            agent=request.agent_type,
            prompt=request.instruction,
            output_path=request.output_csv_path,
            max_concurrency=self._concurrency(request.max_concurrency),
            max_runtime=request.max_runtime_seconds or DEFAULT_MAX_RUNTIME,
            output_schema=request.output_schema,
            id_column=request.id_column,
            cwd=caller.workspace_root,
        )
        summary = await runtime.run_job(spec)
        failures: tuple[FailedItem, ...] = ()
        if summary.failed:
            info = await trio.to_thread.run_sync(
                show_job, runtime.jobs_dir(spec.state_dir), summary.job_id
            )
            failures = tuple(FailedItem(item, error) for item, error in info.failures)
        return CsvJobSummary(
            job_id=summary.job_id,
            status=summary.status,
            output_csv_path="" if summary.output_path is None else str(summary.output_path),
            total_items=summary.total,
            completed_items=summary.completed,
            failed_items=summary.failed,
            failed_item_errors=failures,
        )

    async def report_job_result(
        self,
        caller: ToolContext,
        job_id: str,
        item_id: str,
        result: dict[str, Any],
        *,
        stop: bool = False,
    ) -> bool:
        """Keep ``result`` as the caller's row's result when the row is the caller's."""
        record = self._runtime.services.records.get(caller.agent_id)
        if record is None or record.job_item != (job_id, item_id):
            return False
        output = record.definition.output
        if output is not None:
            _check(output.schema, result)
        record.job_report = dict(result)
        if stop:
            await trio.to_thread.run_sync(cancel_job, self._runtime.jobs_dir(), job_id)
        return True


def _check(schema: Any, result: dict[str, Any]) -> None:
    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = sorted(
        validator.iter_errors(result), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    if not problems:
        return
    lines = [f"- at {_where(e.absolute_path)}: {e.message}" for e in problems[:_MAX_PROBLEMS]]
    if len(problems) > _MAX_PROBLEMS:
        lines.append(f"- ... and {len(problems) - _MAX_PROBLEMS} more")
    raise InvalidJobResult(
        "result does not match the job's output schema:\n"
        + "\n".join(lines)
        + "\nFix these problems and report the complete result again."
    )
