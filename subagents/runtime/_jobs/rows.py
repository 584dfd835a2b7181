"""One row of a job as one agent: spawn it, bound it, wait for it, map its result.

:func:`run_row` takes nothing but the runtime and the :class:`RowRequest`, so
a Ray worker runs the same function in its own runtime. The row's agent is
one of ``request.agent``; with an output schema its definition's output spec
becomes that schema, named ``result`` as Codex's ``report_agent_job_result``
names it (``codex-rs/core/src/tools/handlers/agent_jobs.rs``), so the agent
must finish with a ``complete_task`` whose ``result`` is valid (checked by
``runtime/_complete_task.py`` as for every output spec). The row is bounded by
``request.max_runtime``: past it the agent is closed and the row fails (Codex:
"worker exceeded max runtime"). The agent is closed once its row has ended, so
it holds no slot of the runtime. The agent is the row's worker (``job_item``):
it is offered ``report_agent_job_result``, its prompt names the job and item ids
(:func:`worker_prompt`), and a report the runtime accepted from it is the row's
result, as Codex's worker result is; without one, its ``complete_task`` is.

An outcome is ``transient`` when the error may pass on a retry: a provider
error whose type is retryable (rate limit, overload, server error, timeout,
connection), or the runtime's agent limit reached. Everything else is final.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from typing import Final

import attrs
import trio

from subagents.actors import AgentLimitReached
from subagents.agents import OutputSpec, UnknownAgentError
from subagents.jobs import RowOutcome, RowRequest
from subagents.runtime._config.defaults import DEFAULT_CANCEL_TIMEOUT
from subagents.runtime._exceptions import ProviderError, RuntimeClosed
from subagents.runtime._result import AgentResult
from subagents.runtime._runtime import Runtime

__all__ = ["ROW_OUTPUT_NAME", "is_transient_error", "run_row", "worker_prompt"]

#: The name of a row's structured result in its ``complete_task`` call (Codex's ``result``).
ROW_OUTPUT_NAME: Final = "result"


def _retryable_names() -> frozenset[str]:
    """The names of every provider error type a retry may get past (``retryable``)."""
    found: set[str] = set()
    stack: list[type[ProviderError]] = [ProviderError]
    while stack:
        kind = stack.pop()
        if kind.retryable:
            found.add(kind.__name__)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


_RETRYABLE: Final = _retryable_names()


def is_transient_error(error: str | None) -> bool:
    """Whether a run's error text (``"Overloaded: ..."``) is a retryable provider error."""
    if not error:
        return False
    name = error.split(":", 1)[0].strip()
    return name in _RETRYABLE


def _outcome(
    request: RowRequest,
    started: float,
    *,
    error: str | None = None,
    result_json: str | None = None,
    transient: bool = False,
    agent_id: str | None = None,
) -> RowOutcome:
    return RowOutcome(
        job_id=request.job_id,
        item_id=request.item_id,
        attempt=request.attempt,
        status="failed" if error is not None else "completed",
        result_json=result_json,
        error=error,
        transient=transient,
        agent_id=agent_id,
        started_at=started,
        completed_at=time.time(),
    )


def _from_result(
    request: RowRequest, started: float, agent_id: str, result: AgentResult | None
) -> RowOutcome:
    if result is None:
        return _outcome(
            request, started, error="the agent ended without a result", agent_id=agent_id
        )
    if not result.succeeded:
        return _outcome(
            request,
            started,
            error=result.describe(),
            transient=is_transient_error(result.error),
            agent_id=agent_id,
        )
    value = result.output if request.output_schema is not None else result.text
    return _outcome(
        request,
        started,
        result_json=json.dumps(value, ensure_ascii=False, sort_keys=True),
        agent_id=agent_id,
    )


def worker_prompt(request: RowRequest) -> str:
    """The row's prompt as its agent gets it: the filled template, then the ids it reports
    with (Codex's worker prompt names the job and the item the same way)."""
    return (
        f"{request.prompt}\n\n"
        f"Job ID: {request.job_id}\n"
        f"Item ID: {request.item_id}\n"
        "When you are done, report this item's result with report_agent_job_result "
        "(this job_id and item_id, and your result as a JSON object), or finish with "
        "complete_task."
    )


async def run_row(rt: Runtime, request: RowRequest) -> RowOutcome:
    """Run one row as one agent of ``rt`` and say how it ended (never raises for the row).

    Errors of the row itself (an unknown agent type, a provider failure, a
    run past ``max_runtime``) become a failed outcome; cancellation passes,
    and so does :class:`RuntimeClosed` (the row is not done: a resume runs it).
    """
    started = time.time()
    try:
        definition = rt.catalog.get(request.agent)
    except UnknownAgentError as exc:
        return _outcome(request, started, error=str(exc))
    if request.output_schema is not None:
        definition = attrs.evolve(
            definition,
            output=OutputSpec(
                ROW_OUTPUT_NAME,
                "This row's result, as the job's output schema requires.",
                request.output_schema,
            ),
        )
    try:
        record = await rt._spawn(
            request.agent,
            worker_prompt(request),
            description=f"job {request.job_id}, row {request.item_id}",
            model=None,
            inputs=None,
            background=False,
            parent=None,
            fork_context=None,
            definition=definition,
            job_item=(request.job_id, request.item_id),
        )
    except AgentLimitReached as exc:
        return _outcome(request, started, error=str(exc), transient=True)
    except ProviderError as exc:
        return _outcome(request, started, error=str(exc), transient=exc.retryable)
    except RuntimeClosed:  # not the row's fault: it stays pending for a resume
        raise
    except Exception as exc:  # a row that cannot start fails; the job goes on
        return _outcome(request, started, error=f"{type(exc).__name__}: {exc}")
    agent_id = record.agent_id
    try:
        limit = math.inf if request.max_runtime is None else request.max_runtime
        with trio.move_on_after(limit) as scope:
            await rt._wait_run(agent_id, math.inf)
        if scope.cancelled_caught:
            return _outcome(
                request,
                started,
                error=f"the row ran past its max_runtime of {limit:g} s and was stopped",
                agent_id=agent_id,
            )
        report = rt.job_report(agent_id)
        if report is not None:  # an accepted report is the row's result, however the run ended
            return _outcome(
                request,
                started,
                result_json=json.dumps(report, ensure_ascii=False, sort_keys=True),
                agent_id=agent_id,
            )
        return _from_result(request, started, agent_id, rt.result(agent_id))
    finally:
        with trio.move_on_after(DEFAULT_CANCEL_TIMEOUT) as closing:
            closing.shield = True
            with contextlib.suppress(RuntimeClosed):  # the runtime closes it with the rest
                await rt.close(agent_id, grace=0)
