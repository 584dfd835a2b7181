"""What ``subagents run`` prints when stdout is not a terminal: one plain line per event.

:class:`PlainPrinter` writes one readable line per significant event (a spawn,
a status change, a tool call, a grace period, a finished run), without ANSI
codes, for logs and pipes; :func:`open_plain_printer` runs one while the body
runs. In a terminal the live tree of :mod:`subagents.cli._live` is shown instead.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final, TextIO, final

import trio

from subagents._visible import visible
from subagents.actors import (
    AgentSpawned,
    Completed,
    Errored,
    Event,
    Lagged,
    StatusChanged,
    Subscription,
    kind_of,
)
from subagents.cli._formatting import format_duration, format_tokens, plural
from subagents.cli._line_sink import LineSink
from subagents.runtime import GracePeriodStarted, RunFinished, ToolCallStarted, describe_tool_call
from subagents.teams import (
    MessageSent,
    TaskClaimedEvent,
    TaskCompletedEvent,
    TaskCreatedEvent,
    TeamCreated,
    TeammateIdle,
)

__all__ = ["PlainPrinter", "open_plain_printer"]

#: Lines a plain printer writes in one go.
_BATCH: Final = 256
#: How much of a result or an error a plain line shows.
_LINE_WIDTH: Final = 100


def _clock_text(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when)) if when > 0 else "--:--:--"


def _one_line(text: str, width: int = _LINE_WIDTH) -> str:
    """``text`` flattened to one line, cut to ``width``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _first_line(text: str, width: int = _LINE_WIDTH) -> str:
    """The first non-blank line of ``text`` (an error's message, not its traceback)."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return _one_line(line or "no message", width)


@final
class PlainPrinter:
    """One readable line per significant event, for logs and pipes (no ANSI codes).

    Lines look like ``12:03:04   Ada: Grep 'TODO' in src``: the time, the
    agent indented by depth, what happened (with any control character of a
    name, an argument or a result shown by :func:`~subagents._visible.visible`).
    Spawns, status changes (but ``pending_init``, which the spawn line
    covers), tool calls, grace periods and finished runs are printed;
    streaming chunks and usage are not. Lines are written in batches, from a
    worker thread when ``threaded``, so a slow pipe never blocks the Trio loop.
    """

    __slots__ = ("_names", "_sink", "lagged", "lines")

    def __init__(self, out: TextIO, *, threaded: bool = True) -> None:
        self._sink = LineSink(out, threaded=threaded)
        self._names: dict[str, str] = {}
        #: Lines written so far.
        self.lines = 0
        #: Events the subscription reported lost.
        self.lagged = 0

    def __repr__(self) -> str:
        return f"<PlainPrinter lines={self.lines} lagged={self.lagged}>"

    def format(self, event: Event | Lagged) -> str | None:
        """The line for ``event`` (without a newline), or ``None`` if it is not worth one."""
        if isinstance(event, Lagged):
            self.lagged += event.dropped
            return f"{_clock_text(time.time())} … {event.dropped} events not shown (fell behind)"
        what = self._describe(event)
        if what is None:
            return None
        indent = "  " * max(event.depth, 0)
        # Names, tool arguments, results and errors are untrusted: controls shown as signs.
        return f"{_clock_text(event.time)} {indent}{visible(what)}"

    def _describe(self, event: Event) -> str | None:
        name = event.nickname or event.agent_id
        if isinstance(event, AgentSpawned):
            if len(self._names) >= 4096:
                del self._names[next(iter(self._names))]
            self._names[event.agent_id] = name
            parent = None if event.parent_id is None else self._names.get(event.parent_id)
            by = f" by {parent}" if parent else ""
            verb = "started" if event.parent_id is None else "spawned"
            return f"{name} ({event.label}) {verb}{by}"
        if isinstance(event, StatusChanged):
            status = event.status
            kind = kind_of(status)
            if kind == "pending_init":
                return None
            if isinstance(status, Completed) and status.result:
                return f"{name}: completed: {_one_line(status.result)}"
            if isinstance(status, Errored):
                return f"{name}: errored: {_first_line(status.message)}"
            return f"{name}: {kind}"
        if isinstance(event, ToolCallStarted):
            return f"{name}: {describe_tool_call(event.tool_name, event.input)}"
        if isinstance(event, GracePeriodStarted):
            return f"{name}: grace period ({event.reason.replace('_', ' ')})"
        if isinstance(event, RunFinished):
            text = (
                f"{name}: finished: {event.terminate_reason} after "
                f"{plural(event.turns, 'turn')}, {plural(event.tool_uses, 'tool use')}, "
                f"{format_tokens(event.usage.total_tokens)} tokens, "
                f"{format_duration(event.duration)}"
            )
            if event.error:
                text += f" ({_first_line(event.error, 60)})"
            return text
        return self._describe_team(event, name)

    @staticmethod
    def _describe_team(event: Event, name: str) -> str | None:
        """A team's events: its creation, peer messages, idles and board changes."""
        if isinstance(event, TeamCreated):
            return f"{name}: leads team {event.team_name}"
        if isinstance(event, MessageSent):
            how = "" if event.delivered else f" (not delivered: {event.reason})"
            return f"{event.from_name} -> {event.to_name}: message{how}"
        if isinstance(event, TeammateIdle):
            return f"{event.teammate_name}: idle"
        if isinstance(event, TaskCreatedEvent):
            after = f" after {', '.join(event.blocked_by)}" if event.blocked_by else ""
            return f"task {event.task_id} created: {_one_line(event.subject, 60)}{after}"
        if isinstance(event, TaskClaimedEvent):
            return f"task {event.task_id} claimed by {event.owner}: {_one_line(event.subject, 60)}"
        if isinstance(event, TaskCompletedEvent):
            return f"task {event.task_id} completed by {event.by or event.owner}"
        return None

    def _batch(self, first: Event | Lagged, subscription: Subscription) -> list[str]:
        lines: list[str] = []
        event: Event | Lagged | None = first
        while event is not None and len(lines) < _BATCH:
            line = self.format(event)
            if line is not None:
                lines.append(line + "\n")
            try:
                event = subscription.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                event = None
        return lines

    async def run(self, subscription: Subscription) -> None:
        """Print the subscription's events until it is closed and drained."""
        while True:
            try:
                first = await subscription.receive()
            except trio.EndOfChannel:
                return
            lines = self._batch(first, subscription)
            if lines:
                self.lines += len(lines)
                await self._sink.write("".join(lines))

    def drain(self, subscription: Subscription) -> int:
        """Print, synchronously, what the subscription still holds; how many lines."""
        self._sink.flush_pending()
        total = 0
        while True:
            try:
                first = subscription.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return total
            lines = self._batch(first, subscription)
            if lines:
                self._sink.write_now("".join(lines))
                self.lines += len(lines)
                total += len(lines)


@asynccontextmanager
async def open_plain_printer(
    subscription: Subscription, out: TextIO, *, threaded: bool = True
) -> AsyncIterator[PlainPrinter]:
    """Print ``subscription``'s significant events to ``out`` while the body runs.

    Use a ``drop_oldest`` subscription: a stalled reader of ``out`` then loses
    lines (with a note) instead of slowing the agents. On exit the printer
    finishes its batch and prints what is still buffered.
    """
    printer = PlainPrinter(out, threaded=threaded)
    body_error: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(printer.run, subscription)
            try:
                yield printer
            except BaseException as exc:  # raised again below, not wrapped in an ExceptionGroup
                body_error = exc
            finally:
                nursery.cancel_scope.cancel()
    finally:
        printer.drain(subscription)
    if body_error is not None:
        raise body_error
