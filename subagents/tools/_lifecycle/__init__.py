"""The lifecycle tools: Codex's ``spawn_agent`` family and Claude Code's ``Task`` family.

Each tool is a thin layer over an :class:`AgentHost`: it validates nothing the
registry has not already validated, asks the host, and writes the answer as
compact JSON (or, for a foreground ``Task``, the child's report followed by a
``<usage>`` line). A refusal from the host (limit reached, depth reached,
unknown id, closed agent, unknown agent type, any other ``SubagentsError``)
comes back as a tool error whose text says what to do; any other exception is
left to the registry's dispatch, and cancellation always propagates.

The host contract the runtime implements is in :mod:`.host`, the tools in
:mod:`.codex` (Codex's five), :mod:`.task` (``Task``/``Agent``,
``TaskOutput``) and :mod:`.send_message` (``SendMessage``), their arguments in
:mod:`.args` (``SendMessage``'s in its own module), what they share in
:mod:`.shared`; Claude Code's team tools and the :class:`TeamHost` contract in
:mod:`.team`; Codex's agent-job tools (``spawn_agents_on_csv``,
``report_agent_job_result``) and the :class:`JobHost` contract in :mod:`.jobs`;
:func:`lifecycle_tools` binds them all to a host.
"""

from __future__ import annotations

from subagents.tools._lifecycle.args import (
    CloseAgentArgs,
    ResumeAgentArgs,
    SendInputArgs,
    SpawnAgentArgs,
    TaskArgs,
    TaskOutputArgs,
    WaitArgs,
)
from subagents.tools._lifecycle.codex import (
    CloseAgentTool,
    ResumeAgentTool,
    SendInputTool,
    SpawnAgentTool,
    WaitTool,
)
from subagents.tools._lifecycle.host import (
    CALLER_RESERVE_SECONDS,
    DEFAULT_AGENT_TYPE,
    FORK_NOTE,
    SEND_INPUT_WAIT_SECONDS,
    AgentHost,
    AgentReport,
    SpawnedAgent,
    WaitBounds,
    format_agent_result,
)
from subagents.tools._lifecycle.jobs import (
    JOB_FAILED_ITEMS_SHOWN,
    JOB_MAX_CONCURRENCY,
    REPORT_AGENT_JOB_RESULT,
    SPAWN_AGENTS_ON_CSV,
    CsvJobRequest,
    CsvJobSummary,
    FailedItem,
    JobHost,
    ReportAgentJobResultArgs,
    ReportAgentJobResultTool,
    SpawnAgentsOnCsvArgs,
    SpawnAgentsOnCsvTool,
    job_tools,
)
from subagents.tools._lifecycle.send_message import SendMessageArgs, SendMessageTool
from subagents.tools._lifecycle.task import TaskOutputTool, TaskTool
from subagents.tools._lifecycle.team import (
    BROADCAST,
    LEAD_NAME,
    TEAM_CREATE,
    TEAM_DELETE,
    PeerDelivery,
    TeamCreateArgs,
    TeamCreateTool,
    TeamDeleteArgs,
    TeamDeleteTool,
    TeamHost,
    TeamInfo,
)
from subagents.tools._protocol import Tool

__all__ = [
    "JOB_FAILED_ITEMS_SHOWN",
    "JOB_MAX_CONCURRENCY",
    "REPORT_AGENT_JOB_RESULT",
    "SPAWN_AGENTS_ON_CSV",
    "CsvJobRequest",
    "CsvJobSummary",
    "FailedItem",
    "JobHost",
    "ReportAgentJobResultArgs",
    "ReportAgentJobResultTool",
    "SpawnAgentsOnCsvArgs",
    "SpawnAgentsOnCsvTool",
    "job_tools",
    "BROADCAST",
    "LEAD_NAME",
    "TEAM_CREATE",
    "TEAM_DELETE",
    "PeerDelivery",
    "TeamCreateArgs",
    "TeamCreateTool",
    "TeamDeleteArgs",
    "TeamDeleteTool",
    "TeamHost",
    "TeamInfo",
    "DEFAULT_AGENT_TYPE",
    "CALLER_RESERVE_SECONDS",
    "FORK_NOTE",
    "SEND_INPUT_WAIT_SECONDS",
    "AgentHost",
    "AgentReport",
    "CloseAgentArgs",
    "CloseAgentTool",
    "ResumeAgentArgs",
    "ResumeAgentTool",
    "SendInputArgs",
    "SendInputTool",
    "SendMessageArgs",
    "SendMessageTool",
    "SpawnAgentArgs",
    "SpawnAgentTool",
    "SpawnedAgent",
    "TaskArgs",
    "TaskOutputArgs",
    "TaskOutputTool",
    "TaskTool",
    "WaitArgs",
    "WaitBounds",
    "WaitTool",
    "format_agent_result",
    "lifecycle_tools",
]


def lifecycle_tools(
    host: AgentHost, teams: TeamHost | None = None, jobs: JobHost | None = None
) -> tuple[Tool, ...]:
    """Every lifecycle tool bound to ``host``: Codex's five, then Claude Code's four.

    Claude Code's are ``Task``, ``Agent``, ``TaskOutput`` and ``SendMessage``;
    with ``teams``, ``SendMessage`` also takes teammates' names, and
    ``TeamCreate`` and ``TeamDelete`` follow; with ``jobs``, Codex's
    ``spawn_agents_on_csv`` and ``report_agent_job_result`` come last.
    """
    team_tools: tuple[Tool, ...] = (
        () if teams is None else (TeamCreateTool(teams), TeamDeleteTool(teams))
    )
    agent_jobs: tuple[Tool, ...] = () if jobs is None else job_tools(jobs)
    return (
        SpawnAgentTool(host),
        SendInputTool(host),
        WaitTool(host),
        CloseAgentTool(host),
        ResumeAgentTool(host),
        TaskTool(host, teams=teams),
        TaskTool(host, name="Agent", teams=teams),
        TaskOutputTool(host),
        SendMessageTool(host, teams),
        *team_tools,
        *agent_jobs,
    )
