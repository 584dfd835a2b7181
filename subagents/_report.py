"""The end of a run, for people and for programs: the summary and the JSON-lines stream.

:func:`summarize` folds what is known about every agent (the progress a
:class:`~subagents.runtime._progress.ProgressTracker` kept, and each run's
outcome: an :class:`~subagents.runtime._result.AgentResult` or the
:class:`~subagents.runtime._events.RunFinished` event) into a
:class:`RunSummary`; :func:`print_summary` shows it (the lead's result, a table
of every agent, the session id and where the transcripts are) and
:func:`summary_table` is that table alone.

:class:`JsonLinesWriter` is ``subagents run --json``: every bus event as one
JSON line, losslessly, then one last ``run_finished`` line with the summary::

    async with open_json_lines(bus, sys.stdout) as writer:
        ...  # run the lead and its team
    writer.write_summary(session_id=sid, lead_id=lead, transcripts_dir=path)

Every line carries ``type``, ``seq``, ``time``, ``agent_id``, ``parent_id``,
``depth`` and ``nickname``; a ``status_changed`` line has a ``status`` object
whose ``kind`` is ``pending_init``, ``running``, ``completed`` (with
``result``), ``errored`` (with ``message``) or ``shutdown``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, TextIO, final

import attrs
import msgspec
import trio
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from subagents.actors import (
    NOT_FOUND,
    Bus,
    Completed,
    Errored,
    Event,
    Lagged,
    Status,
    Subscription,
    kind_of,
)
from subagents.runtime._events import RunFinished
from subagents.runtime._progress import DEFAULT_MAX_AGENTS, ProgressTracker
from subagents.runtime._progress_values import AgentProgress
from subagents.runtime._provider import Usage
from subagents.runtime._result import AgentResult

__all__ = [
    "DEFAULT_JSON_CAPACITY",
    "DEFAULT_JSON_MAX_BLOCK",
    "STATUS_KINDS",
    "STATUS_STYLES",
    "AgentSummary",
    "JsonLinesWriter",
    "LineSink",
    "RunSummary",
    "format_duration",
    "format_tokens",
    "plural",
    "open_json_lines",
    "print_summary",
    "status_text",
    "summarize",
    "summary_table",
    "tree_prefixes",
]

#: The status kinds an agent can be reported in, in lifecycle order.
STATUS_KINDS: Final = ("pending_init", "running", "completed", "errored", "shutdown")
#: How each status kind is coloured, in the live view and the summary.
STATUS_STYLES: Final[Mapping[str, str]] = {
    "pending_init": "blue",
    "running": "bold yellow",
    "completed": "green",
    "errored": "bold red",
    "shutdown": "magenta",
    "not_found": "dim",
}
#: What a status kind is called on screen.
_STATUS_WORDS: Final[Mapping[str, str]] = {"pending_init": "starting", "not_found": "unknown"}
#: Events a JSON-lines writer may buffer before publishers wait for it.
DEFAULT_JSON_CAPACITY: Final = 1024
#: How long a stalled JSON reader may hold each publish before the bus drops instead.
DEFAULT_JSON_MAX_BLOCK: Final = 1.0
#: Lines written to the stream in one go (one thread hop).
_BATCH: Final = 256


# -- formatting ----------------------------------------------------------------------


def format_tokens(count: int) -> str:
    """A token count, short: ``950``, ``12.3k``, ``4.56M``."""
    if count < 1000:
        return str(count)
    if count < 999_950:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def format_duration(seconds: float, *, tenths: bool = True) -> str:
    """A duration, short: ``4.2s`` (``4s`` without ``tenths``), ``3m05s``, ``1h02m``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s" if tenths else f"{int(seconds)}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def plural(count: int, noun: str) -> str:
    """``1 turn``, ``3 turns``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def status_text(kind: str) -> Text:
    """A status kind as coloured text (``pending_init`` reads "starting")."""
    return Text(_STATUS_WORDS.get(kind, kind), style=STATUS_STYLES.get(kind, ""))


def _first_line(text: str | None, width: int = 120) -> str:
    line = next((part.strip() for part in (text or "").splitlines() if part.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


# -- the summary ---------------------------------------------------------------------


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


def _agent_summary(row: AgentProgress, outcome: AgentResult | RunFinished | None) -> AgentSummary:
    status = row.status
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
    agents = tuple(_agent_summary(row, outcomes.get(row.agent_id)) for row in rows)
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


def tree_prefixes(agents: Iterable[AgentSummary | AgentProgress]) -> dict[str, str]:
    """Tree guides (``├─ ``, ``└─ ``, ``│  ``) for rows given in tree order."""
    rows = list(agents)
    ids = {row.agent_id for row in rows}
    last_child: dict[str, str] = {}
    for row in rows:
        if row.parent_id is not None and row.parent_id in ids:
            last_child[row.parent_id] = row.agent_id
    prefix: dict[str, str] = {}
    carry: dict[str, str] = {}
    for row in rows:
        parent = row.parent_id
        if parent is None or parent not in carry:
            prefix[row.agent_id] = carry[row.agent_id] = ""
            continue
        last = last_child.get(parent) == row.agent_id
        prefix[row.agent_id] = carry[parent] + ("└─ " if last else "├─ ")
        carry[row.agent_id] = carry[parent] + ("   " if last else "│  ")
    return prefix


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
        name.append(agent.nickname or agent.agent_id, style="bold")
        reason = agent.terminate_reason or "-"
        table.add_row(
            name,
            agent.label or "-",
            status_text(agent.kind),
            Text(reason, style="" if reason in ("goal", "-") else "yellow"),
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
    name = escape(lead.nickname or lead.agent_id)
    kind = lead.kind
    style = STATUS_STYLES.get(kind, "")
    reason = f" ({escape(lead.terminate_reason)})" if lead.terminate_reason else ""
    out: list[RenderableType] = [
        Rule(
            f"[bold]{name}[/] [dim]{escape(lead.label)}[/] [{style}]{escape(kind)}[/]{reason}",
            align="left",
        )
    ]
    if lead.result is not None:
        out.append(Text(lead.result))
    elif lead.error is not None:
        out.append(Text(lead.error, style="red"))
    else:
        out.append(Text("(no result)", style="dim"))
    return out


def print_summary(console: Console, summary: RunSummary) -> None:
    """Print the lead's result, the table of every agent, the session id and transcripts dir."""
    parts: list[RenderableType] = [*_lead_renderables(summary), Text(), summary_table(summary)]
    footer = Text()
    footer.append("session ", style="dim")
    footer.append(summary.session_id, style="bold")
    if summary.transcripts_dir is not None:
        footer.append("  transcripts ", style="dim")
        footer.append(str(summary.transcripts_dir))
    if summary.dropped:
        footer.append(f"  ({summary.dropped} events were not shown live)", style="dim")
    parts.append(footer)
    console.print(Group(*parts))


# -- JSON lines ----------------------------------------------------------------------


def _fallback(value: object) -> object:
    """How a value msgspec cannot encode is written: its ``str``."""
    return str(value)


@final
class LineSink:
    """Writes text to a stream, from a worker thread when ``threaded``, never losing a batch.

    A write that was cancelled before its thread started stays pending and is
    written by :meth:`flush_pending` (the owners call it before their final,
    synchronous writes), so lines keep their order and none is lost on exit.
    A thread write itself is not abandoned on cancel: its batch is always
    written whole, so lines never interleave.
    """

    __slots__ = ("_pending", "out", "threaded")

    def __init__(self, out: TextIO, *, threaded: bool = True) -> None:
        self.out = out
        self.threaded = threaded
        self._pending: str | None = None

    def write_now(self, text: str) -> None:
        """Write ``text`` and flush, in this thread."""
        self.out.write(text)
        self.out.flush()

    async def write(self, text: str) -> None:
        """Write ``text`` and flush, in a worker thread when ``threaded``."""
        if not self.threaded:
            self.write_now(text)
            await trio.lowlevel.checkpoint()
            return
        self._pending = text
        await trio.to_thread.run_sync(self.write_now, text)
        self._pending = None

    def flush_pending(self) -> None:
        """Write, in this thread, a batch whose write was cancelled before it started."""
        text, self._pending = self._pending, None
        if text is not None:
            self.write_now(text)


_ENVELOPE: Final = ("seq", "time", "agent_id", "parent_id", "depth", "nickname")


@final
class JsonLinesWriter:
    """Writes every bus event as one JSON line to ``out``, then a ``run_finished`` summary.

    Feed it a ``block`` subscription (:func:`open_json_lines` makes one) so
    nothing is lost unless the reader of ``out`` stalls past the bus's
    ``max_block``; a gap is then written as a ``lagged`` line (with ``dropped``,
    and ``null`` agent fields). It keeps its own lossless :attr:`tracker` and the
    last :class:`RunFinished` of each agent, from which the summary line is built.
    With ``threaded`` (the default) each batch is written from a worker thread,
    so a slow pipe holds back the writer, never the Trio loop.
    """

    __slots__ = (
        "_encoder",
        "_finished",
        "_sink",
        "_slow_types",
        "lagged",
        "last_seq",
        "tracker",
        "written",
    )

    def __init__(
        self, out: TextIO, *, threaded: bool = True, max_agents: int = DEFAULT_MAX_AGENTS
    ) -> None:
        self._sink = LineSink(out, threaded=threaded)
        self.tracker = ProgressTracker(max_agents=max_agents)
        self._finished: dict[str, RunFinished] = {}
        self._encoder = msgspec.json.Encoder(enc_hook=_fallback)
        self._slow_types: dict[type, bool] = {}
        #: Event lines written (lag markers and the summary not counted).
        self.written = 0
        #: Events the subscription reported lost.
        self.lagged = 0
        #: The ``seq`` of the last event written.
        self.last_seq = 0

    def __repr__(self) -> str:
        return f"<JsonLinesWriter written={self.written} lagged={self.lagged}>"

    def line(self, event: Event | Lagged) -> str:
        """The JSON line (newline included) for ``event``, recording what it says."""
        if isinstance(event, Lagged):
            self.lagged += event.dropped
            self.tracker.handle(event)
            marker = {"type": "lagged", "dropped": event.dropped, "seq": self.last_seq}
            marker |= {"time": time.time(), "agent_id": None, "parent_id": None}
            marker |= {"depth": None, "nickname": None}
            return self._encoder.encode(marker).decode() + "\n"
        self.tracker.handle(event)
        if isinstance(event, RunFinished):
            finished = self._finished
            finished.pop(event.agent_id, None)
            finished[event.agent_id] = event
            if len(finished) > self.tracker.max_agents:
                del finished[next(iter(finished))]
        self.written += 1
        self.last_seq = event.seq
        return self._encode(event) + "\n"

    def _encode(self, event: Event) -> str:
        kind = type(event)
        slow = self._slow_types.get(kind)
        if slow is None:
            slow = self._slow_types[kind] = bool(kind.__struct_config__.omit_defaults)
        if not slow:
            return self._encoder.encode(event).decode()
        # A kind that omits defaults would drop a null parent_id: rebuild the envelope.
        data = msgspec.to_builtins(event, enc_hook=_fallback)
        for name in _ENVELOPE:
            data.setdefault(name, getattr(event, name))
        return self._encoder.encode(data).decode()

    async def run(self, subscription: Subscription) -> None:
        """Write the subscription's events, in batches, until it is closed and drained."""
        while True:
            try:
                first = await subscription.receive()
            except trio.EndOfChannel:
                return
            lines = [self.line(first)]
            while len(lines) < _BATCH:
                try:
                    lines.append(self.line(subscription.receive_nowait()))
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await self._sink.write("".join(lines))

    def drain(self, subscription: Subscription) -> int:
        """Write, synchronously, what the subscription still holds; how many lines."""
        self._sink.flush_pending()
        lines: list[str] = []
        while True:
            try:
                lines.append(self.line(subscription.receive_nowait()))
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        if lines:
            self._sink.write_now("".join(lines))
        return len(lines)

    def summary(
        self,
        *,
        session_id: str,
        lead_id: str | None = None,
        results: Mapping[str, AgentResult | RunFinished] | None = None,
        transcripts_dir: str | os.PathLike[str] | None = None,
    ) -> RunSummary:
        """The run's summary from every event written (``results`` win over the events)."""
        outcomes: dict[str, AgentResult | RunFinished] = dict(self._finished)
        outcomes.update(results or {})
        return summarize(
            self.tracker,
            session_id=session_id,
            lead_id=lead_id,
            results=outcomes,
            transcripts_dir=transcripts_dir,
            events=self.written,
            dropped=self.lagged,
        )

    def summary_line(self, summary: RunSummary) -> dict[str, Any]:
        """The last line's object: ``type`` ``run_finished``, ``summary`` true, the lead's
        envelope, status and result, every agent, the transcripts dir and the counts."""
        lead = summary.lead
        line: dict[str, Any] = {
            "type": "run_finished",
            "seq": self.last_seq + 1,
            "time": time.time(),
            "agent_id": summary.lead_id,
            "parent_id": None if lead is None else lead.parent_id,
            "depth": 0 if lead is None else lead.depth,
            "nickname": None if lead is None else lead.nickname,
            "summary": True,
            "session_id": summary.session_id,
            "status": msgspec.to_builtins(NOT_FOUND if lead is None else lead.status),
            "terminate_reason": None if lead is None else lead.terminate_reason,
            "result": None if lead is None else lead.result,
            "error": None if lead is None else lead.error,
            "transcripts_dir": (
                None if summary.transcripts_dir is None else str(summary.transcripts_dir)
            ),
            "agents": [agent.to_dict() for agent in summary.agents],
            "totals": summary.totals(),
            "counts": summary.counts(),
        }
        return line

    def write_summary(
        self,
        *,
        session_id: str,
        lead_id: str | None = None,
        results: Mapping[str, AgentResult | RunFinished] | None = None,
        transcripts_dir: str | os.PathLike[str] | None = None,
    ) -> RunSummary:
        """Write the final ``run_finished`` summary line (synchronously) and return the summary."""
        summary = self.summary(
            session_id=session_id,
            lead_id=lead_id,
            results=results,
            transcripts_dir=transcripts_dir,
        )
        self._sink.flush_pending()
        self._sink.write_now(self._encoder.encode(self.summary_line(summary)).decode() + "\n")
        return summary


@asynccontextmanager
async def open_json_lines(
    bus: Bus,
    out: TextIO,
    *,
    capacity: int = DEFAULT_JSON_CAPACITY,
    max_block: float = DEFAULT_JSON_MAX_BLOCK,
    threaded: bool = True,
) -> AsyncIterator[JsonLinesWriter]:
    """Subscribe to ``bus`` losslessly and write every event to ``out`` while the body runs.

    The subscription is a ``block`` one: publishers wait for the writer when its
    ``capacity`` is full, each publish at most ``max_block`` seconds (then the
    bus drops instead, and a ``lagged`` line says so). On exit the writer
    finishes its batch, writes what is still buffered, and leaves the bus; write
    the summary line with :meth:`JsonLinesWriter.write_summary` afterwards.
    """
    writer = JsonLinesWriter(out, threaded=threaded)
    body_error: BaseException | None = None
    with bus.subscribe(capacity=capacity, policy="block", max_block=max_block) as subscription:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer.run, subscription)
                try:
                    yield writer
                except BaseException as exc:  # raised again below, not in an ExceptionGroup
                    body_error = exc
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            writer.drain(subscription)
    if body_error is not None:
        raise body_error
