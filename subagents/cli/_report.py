"""The end of a run, for people: the summary of every agent and how it is printed.

:func:`summarize` folds what is known about every agent (the progress a
:class:`~subagents.runtime.ProgressTracker` kept, and each run's
outcome: an :class:`~subagents.runtime._result.AgentResult` or the
:class:`~subagents.runtime._events.RunFinished` event) into a
:class:`RunSummary`; :func:`print_summary` shows it (the lead's result, a table
of every agent, the session id and where the transcripts are) and
:func:`summary_table` is that table alone.

The same summary ends the ``--json`` stream, as its last ``run_finished``
line: see :mod:`subagents.cli._json_lines`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs
import msgspec
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from subagents._visible import visible
from subagents.actors import Completed, Errored, Status, kind_of
from subagents.cli._formatting import (
    STATUS_STYLES,
    format_duration,
    format_tokens,
    status_text,
    tree_prefixes,
)
from subagents.runtime import AgentProgress, AgentResult, ProgressTracker, RunFinished, Usage

__all__ = [
    "STATUS_KINDS",
    "AgentSummary",
    "RunSummary",
    "print_summary",
    "summarize",
    "summary_table",
]

#: The status kinds an agent can be reported in, in lifecycle order.
STATUS_KINDS: Final = ("pending_init", "running", "completed", "errored", "shutdown")


@attrs.frozen
class AgentSummary:
    """One agent at the end of a run: a row of the summary table and of the JSON summary."""

    agent_id: str
    nickname: str
    label: str
    """The agent's type; empty if its spawn event was never seen."""
    parent_id: str | None
    depth: int
    status: Status
    terminate_reason: str | None
    """Why its last run ended (``goal``, ``timeout``, ...); ``None`` if unknown."""
    turns: int
    tool_uses: int
    usage: Usage
    duration: float
    """Seconds its last run took, or from its spawn to its end when no outcome is known."""
    result: str | None
    """What it handed back: its structured output as JSON, else its final text."""
    error: str | None

    @property
    def kind(self) -> str:
        """The status kind: ``"completed"``, ``"errored"``, ..."""
        return kind_of(self.status)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``agent_type`` is the type: ``type`` names the line's kind)."""
        return {
            "agent_id": self.agent_id,
            "nickname": self.nickname,
            "agent_type": self.label,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "status": msgspec.to_builtins(self.status),
            "terminate_reason": self.terminate_reason,
            "turns": self.turns,
            "tool_uses": self.tool_uses,
            "usage": msgspec.to_builtins(self.usage),
            "duration": round(self.duration, 3),
            "result": self.result,
            "error": self.error,
        }


@attrs.frozen
class RunSummary:
    """Every agent of a session at its end, the lead's id, and where its transcripts are."""

    session_id: str
    lead_id: str | None
    agents: tuple[AgentSummary, ...]
    """In tree order: each agent before its children, children in spawn order."""
    transcripts_dir: Path | None = None
    events: int = 0
    """Bus events the summary was built from."""
    dropped: int = 0
    """Events known to be lost on the way (a lossy view's lag)."""

    @property
    def lead(self) -> AgentSummary | None:
        """The lead's row, if it is known."""
        return next((a for a in self.agents if a.agent_id == self.lead_id), None)

    def counts(self) -> dict[str, int]:
        """How many agents there are, how many in each status kind, and the event counts."""
        counts = {"agents": len(self.agents)} | dict.fromkeys(STATUS_KINDS, 0)
        for agent in self.agents:
            counts[agent.kind] = counts.get(agent.kind, 0) + 1
        return counts | {"events": self.events, "dropped": self.dropped}

    def totals(self) -> dict[str, Any]:
        """Turns, tool uses and tokens summed over every agent."""
        usage = Usage()
        for agent in self.agents:
            usage = usage + agent.usage
        return {
            "turns": sum(a.turns for a in self.agents),
            "tool_uses": sum(a.tool_uses for a in self.agents),
            "usage": msgspec.to_builtins(usage),
            "total_tokens": usage.total_tokens,
        }


def _outcome_fields(
    outcome: AgentResult | RunFinished,
) -> tuple[str, int, int, Usage, float, str | None, str | None]:
    """(reason, turns, tool uses, usage, duration, result, error) of a run's outcome."""
    if isinstance(outcome, AgentResult):
        return (
            outcome.terminate_reason.value,
            outcome.turns,
            outcome.tool_uses,
            outcome.usage,
            outcome.duration,
            outcome.report(),
            outcome.error,
        )
    return (
        outcome.terminate_reason,
        outcome.turns,
        outcome.tool_uses,
        outcome.usage,
        outcome.duration,
        None,
        outcome.error,
    )


def _agent_summary(
    row: AgentProgress, outcome: AgentResult | RunFinished | None, status: Status | None
) -> AgentSummary:
    status = row.status if status is None else status
    result = status.result if isinstance(status, Completed) else None
    error = status.message if isinstance(status, Errored) else None
    reason: str | None = None
    turns, tool_uses, usage, duration = row.turns, row.tool_uses, row.usage, row.elapsed
    if outcome is not None:
        reason, o_turns, o_tools, o_usage, duration, o_result, o_error = _outcome_fields(outcome)
        # The tracker counts every run of the agent but may have missed events; the
        # outcome counts its last run exactly. Counters only grow: take the larger.
        turns, tool_uses = max(turns, o_turns), max(tool_uses, o_tools)
        if o_usage.total_tokens > usage.total_tokens:
            usage = o_usage
        result = o_result if o_result is not None else result
        error = error or o_error
    return AgentSummary(
        agent_id=row.agent_id,
        nickname=row.nickname,
        label=row.label,
        parent_id=row.parent_id,
        depth=row.depth,
        status=status,
        terminate_reason=reason,
        turns=turns,
        tool_uses=tool_uses,
        usage=usage,
        duration=duration,
        result=result,
        error=error,
    )


def summarize(
    progress: ProgressTracker | Iterable[AgentProgress],
    *,
    session_id: str,
    lead_id: str | None = None,
    results: Mapping[str, AgentResult | RunFinished] | None = None,
    statuses: Mapping[str, Status] | None = None,
    transcripts_dir: str | os.PathLike[str] | None = None,
    events: int | None = None,
    dropped: int | None = None,
    now: float | None = None,
) -> RunSummary:
    """The summary of a session from its agents' progress and their runs' outcomes.

    ``progress`` is a tracker (its event and lag counts are used unless
    ``events``/``dropped`` are given) or its rows. ``results`` maps agent ids to
    the outcome of their last run, which gives the terminate reason and the
    exact counters; an agent without one is summarized from its progress alone.
    ``statuses`` maps agent ids to their status as the supervisor last knew it:
    it wins over the progress's, which misses the events published after its
    view stopped (a run cancelled by Ctrl-C stops it before its agents' shutdown).
    ``lead_id`` defaults to the first top-level agent.
    """
    if isinstance(progress, ProgressTracker):
        stats = progress.statistics()
        rows = progress.tree(now)
        events = stats.events if events is None else events
        dropped = stats.lagged if dropped is None else dropped
    else:
        rows = list(progress)
    outcomes = results or {}
    finals = statuses or {}
    agents = tuple(
        _agent_summary(row, outcomes.get(row.agent_id), finals.get(row.agent_id)) for row in rows
    )
    if lead_id is None:
        lead_id = next((a.agent_id for a in agents if a.parent_id is None), None)
        if lead_id is None and agents:
            lead_id = agents[0].agent_id
    return RunSummary(
        session_id=session_id,
        lead_id=lead_id,
        agents=agents,
        transcripts_dir=None if transcripts_dir is None else Path(transcripts_dir),
        events=events or 0,
        dropped=dropped or 0,
    )


def summary_table(summary: RunSummary) -> Table:
    """A table of every agent: status, terminate reason, turns, tokens, tool uses, duration."""
    table = Table(title=f"{len(summary.agents)} agents", title_justify="left", expand=False)
    table.add_column("agent", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("turns", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("tools", justify="right")
    table.add_column("duration", justify="right")
    prefixes = tree_prefixes(summary.agents)
    for agent in summary.agents:
        name = Text(prefixes.get(agent.agent_id, ""), style="dim")
        name.append(visible(agent.nickname or agent.agent_id), style="bold")
        reason = agent.terminate_reason or "-"
        table.add_row(
            name,
            Text(visible(agent.label or "-")),
            status_text(agent.kind),
            Text(visible(reason), style="" if reason in ("goal", "-") else "yellow"),
            str(agent.turns),
            format_tokens(agent.usage.total_tokens),
            str(agent.tool_uses),
            format_duration(agent.duration),
        )
    totals = summary.totals()
    table.add_section()
    table.add_row(
        Text("total", style="bold"),
        "",
        "",
        "",
        str(totals["turns"]),
        format_tokens(totals["total_tokens"]),
        str(totals["tool_uses"]),
        "",
    )
    return table


def _lead_renderables(summary: RunSummary) -> list[RenderableType]:
    lead = summary.lead
    if lead is None:
        return [Text("No lead agent was seen in this session.", style="yellow")]
    name = escape(visible(lead.nickname or lead.agent_id))
    kind = lead.kind
    style = STATUS_STYLES.get(kind, "")
    reason = f" ({escape(visible(lead.terminate_reason))})" if lead.terminate_reason else ""
    label = escape(visible(lead.label))
    out: list[RenderableType] = [
        Rule(
            f"[bold]{name}[/] [dim]{label}[/] [{style}]{escape(kind)}[/]{reason}",
            align="left",
        )
    ]
    if lead.result is not None:
        out.append(Text(visible(lead.result, newlines=True)))
    elif lead.error is not None:
        out.append(Text(visible(lead.error, newlines=True), style="red"))
    else:
        out.append(Text("(no result)", style="dim"))
    return out


def print_summary(console: Console, summary: RunSummary) -> None:
    """Print the lead's result, the table of every agent, the session id and transcripts dir."""
    parts: list[RenderableType] = [*_lead_renderables(summary), Text(), summary_table(summary)]
    footer = Text()
    footer.append("session ", style="dim")
    footer.append(visible(summary.session_id), style="bold")
    if summary.transcripts_dir is not None:
        footer.append("  transcripts ", style="dim")
        footer.append(visible(str(summary.transcripts_dir)))
    if summary.dropped:
        footer.append(f"  ({summary.dropped} events were not shown live)", style="dim")
    parts.append(footer)
    console.print(Group(*parts))
