"""What ``subagents run`` shows while agents work: a live tree, plain log lines, approval prompts.

In a terminal, :func:`open_live_view` draws the agent tree with ``rich``: one
row per agent (nickname, type, status, turns, tokens, tool uses, what it is
doing, elapsed time), redrawn at most ``refresh_per_second`` times a second::

    tracker = ProgressTracker()
    with bus.subscribe(capacity=512, policy="drop_oldest") as sub:
        async with open_live_view(tracker, sub, Console()) as view:
            ...  # run the lead and its team

Two tasks do the work: one drains a ``drop_oldest`` subscription into the
tracker (:func:`~subagents.runtime._progress.follow`), one redraws on a timer.
The view never slows the agents: publishing to a dropping subscription never
waits, and when the terminal falls behind, events are dropped (and counted,
and the view says how many) instead of piling up.

When stdout is not a terminal, :class:`PlainPrinter` writes one readable line
per significant event instead, without ANSI codes. :class:`TerminalApprover`
asks the person at the terminal to approve tool calls, labelled by agent.
The end-of-run summary and the ``--json`` stream are in :mod:`subagents._report`.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Final, TextIO, final

import outcome
import trio
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from subagents._report import (
    LineSink,
    format_duration,
    format_tokens,
    plural,
    status_text,
    tree_prefixes,
)
from subagents.actors import (
    AgentSpawned,
    Completed,
    Errored,
    Event,
    Lagged,
    StatusChanged,
    Subscription,
    is_final,
    is_live,
    kind_of,
)
from subagents.runtime._events import GracePeriodStarted, RunFinished, ToolCallStarted
from subagents.runtime._progress import ProgressTracker, follow
from subagents.runtime._progress_text import describe_tool_call
from subagents.runtime._progress_values import AgentProgress, ProgressNotFound
from subagents.tools._approval import ApprovalDecision, ApprovalRequest

__all__ = [
    "DEFAULT_REFRESH_PER_SECOND",
    "LiveView",
    "PlainPrinter",
    "TerminalApprover",
    "open_live_view",
    "open_plain_printer",
    "render_progress",
]

#: How often the live view redraws, at most.
DEFAULT_REFRESH_PER_SECOND: Final = 8.0
#: Rows the live view keeps for its header and footer when it fits the terminal.
_CHROME_ROWS: Final = 6
#: The fewest agent rows the view shows, however small the terminal.
_MIN_ROWS: Final = 3
#: Lines a plain printer writes in one go.
_BATCH: Final = 256
#: How much of a result or an error a plain line shows.
_LINE_WIDTH: Final = 100


# -- rendering the tree --------------------------------------------------------------


def _select(rows: Sequence[AgentProgress], max_rows: int) -> list[AgentProgress]:
    """At most about ``max_rows`` rows, in tree order: live agents first, then errored, then
    the rest, each with its ancestors so the tree still reads."""
    if len(rows) <= max_rows:
        return list(rows)
    by_id = {row.agent_id: row for row in rows}
    keep: set[str] = set()

    def rank(row: AgentProgress) -> int:
        if is_live(row.status):
            return 0
        return 1 if isinstance(row.status, Errored) else 2

    for row in sorted(rows, key=rank):  # stable: tree order within a rank
        if len(keep) >= max_rows:
            break
        chain: list[str] = []
        walker: AgentProgress | None = row
        while walker is not None and walker.agent_id not in keep:
            chain.append(walker.agent_id)
            walker = None if walker.parent_id is None else by_id.get(walker.parent_id)
        if len(keep) + len(chain) <= max_rows:
            keep.update(chain)
    return [row for row in rows if row.agent_id in keep]


def _activity(row: AgentProgress) -> Text:
    """What the agent is doing (live), or how it ended and what it did last (final)."""
    if not is_final(row.status):
        text = Text(row.status_message)
        last = row.last_activity
        if last and last not in row.status_message:
            text.append(f" · {last}", style="dim")
        return text
    if isinstance(row.status, Errored):
        return Text(row.status_message, style="red")
    # The newest activity of a final agent is its final status; the one before says more.
    previous = [a.text for a in row.activities[:-1]]
    return Text(previous[-1] if previous else row.status_message, style="dim")


def render_progress(
    rows: Sequence[AgentProgress],
    *,
    lagged: int = 0,
    max_rows: int | None = None,
    title: str = "subagents",
) -> RenderableType:
    """The agent tree as a ``rich`` renderable: a header of totals, one row per agent, notes.

    ``rows`` are in tree order (:meth:`ProgressTracker.tree`). Past ``max_rows``
    agents, live ones are kept first and a note says how many are not shown.
    ``lagged`` events lost by the view are noted too.
    """
    ids = {row.agent_id for row in rows}
    roots = [row for row in rows if row.parent_id is None or row.parent_id not in ids]
    running = sum(r.subtree.running for r in roots)
    tokens = sum(r.subtree.usage.total_tokens for r in roots)
    header = Text()
    header.append(title, style="bold")
    header.append(f"  {len(rows)} agents", style="")
    header.append(f" · {running} running", style="yellow" if running else "dim")
    header.append(f" · {sum(r.subtree.turns for r in roots)} turns", style="dim")
    header.append(f" · {sum(r.subtree.tool_uses for r in roots)} tool uses", style="dim")
    header.append(f" · {format_tokens(tokens)} tokens", style="dim")

    shown = rows if max_rows is None else _select(rows, max(max_rows, _MIN_ROWS))
    table = Table(box=None, pad_edge=False, show_edge=False, expand=True, header_style="dim")
    table.add_column("agent", no_wrap=True, max_width=40)
    table.add_column("type", no_wrap=True, max_width=20)
    table.add_column("status", no_wrap=True)
    table.add_column("turns", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("tools", justify="right")
    table.add_column("elapsed", justify="right")
    table.add_column("activity", no_wrap=True, overflow="ellipsis", ratio=1)
    prefixes = tree_prefixes(shown)
    for row in shown:
        name = Text(prefixes.get(row.agent_id, ""), style="dim")
        name.append(row.nickname or row.agent_id, style="bold")
        table.add_row(
            name,
            row.label or "-",
            status_text(row.kind),
            str(row.turns),
            format_tokens(row.usage.total_tokens),
            str(row.tool_uses),
            format_duration(row.elapsed, tenths=False),
            _activity(row),
        )
    parts: list[RenderableType] = [header, table]
    hidden = len(rows) - len(shown)
    if hidden:
        parts.append(Text(f"… {hidden} more agents not shown", style="dim"))
    if lagged:
        parts.append(Text(f"{lagged} events not shown (view fell behind)", style="yellow"))
    return Group(*parts)


# -- the live view -------------------------------------------------------------------


@final
class LiveView:
    """A ``rich.live.Live`` display of a tracker's agent tree, redrawn on a timer.

    :meth:`run` owns the ``Live`` and redraws at most ``refresh_per_second``
    times a second, and only when something changed (an event was folded in,
    or the elapsed seconds ticked), so an idle view costs nothing. ``max_rows``
    bounds the agent rows drawn (default: what fits the terminal). ``clock``
    gives "now" for elapsed times, on the bus's clock (``time.time``).
    """

    __slots__ = (
        "_last_key",
        "_live",
        "_pauses",
        "_resume",
        "_running",
        "clock",
        "console",
        "frames",
        "interval",
        "max_rows",
        "redirect_io",
        "title",
        "tracker",
    )

    def __init__(
        self,
        tracker: ProgressTracker,
        console: Console,
        *,
        refresh_per_second: float = DEFAULT_REFRESH_PER_SECOND,
        max_rows: int | None = None,
        title: str = "subagents",
        clock: Callable[[], float] = time.time,
        redirect_io: bool = True,
    ) -> None:
        if not (math.isfinite(refresh_per_second) and refresh_per_second > 0):
            raise ValueError(
                f"refresh_per_second must be a positive number of redraws per second, "
                f"not {refresh_per_second!r}."
            )
        self.tracker = tracker
        self.console = console
        self.interval = 1.0 / refresh_per_second
        self.max_rows = max_rows
        self.title = title
        self.clock = clock
        self.redirect_io = redirect_io
        #: Frames drawn so far.
        self.frames = 0
        self._live: Live | None = None
        self._pauses = 0
        self._resume = False
        self._running = False
        self._last_key: tuple[int, int, int, int] | None = None

    def __repr__(self) -> str:
        return f"<LiveView frames={self.frames} agents={len(self.tracker)}>"

    def render(self) -> RenderableType:
        """The tree as it stands now."""
        max_rows = self.max_rows
        if max_rows is None:
            max_rows = self.console.size.height - _CHROME_ROWS
        return render_progress(
            self.tracker.tree(self.clock()),
            lagged=self.tracker.lagged,
            max_rows=max_rows,
            title=self.title,
        )

    def _new_live(self) -> Live:
        return Live(
            console=self.console,
            auto_refresh=False,
            transient=False,
            redirect_stdout=self.redirect_io,
            redirect_stderr=self.redirect_io,
        )

    def refresh(self, *, force: bool = False) -> bool:
        """Redraw if something changed since the last frame (or ``force``); whether it drew."""
        live = self._live
        if live is None:
            return False
        stats = self.tracker.statistics()
        key = (stats.events, stats.agents, stats.lagged, int(self.clock()))
        if not force and key == self._last_key:
            return False
        self._last_key = key
        live.update(self.render(), refresh=True)
        self.frames += 1
        return True

    async def run(
        self,
        subscription: Subscription | None = None,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Show the view and redraw it until cancelled; then draw one final frame and stop.

        Before the final frame, what ``subscription`` still buffers is folded
        in (synchronously: at most its capacity), so the last frame is the
        run's end, not a frame behind it.
        """
        if self._running:
            raise RuntimeError("This live view is already running: make one view per display.")
        self._running = True
        try:
            self._live = self._new_live()
            self._live.start()
            self.refresh(force=True)
            task_status.started()
            while True:
                await trio.sleep(self.interval)
                self.refresh()
        finally:
            self._running = False
            self._resume = False  # a prompt still on screen must not restart the display
            if subscription is not None:
                _drain_into(self.tracker, subscription)
            live = self._live
            if live is not None:
                try:
                    self.refresh(force=True)
                finally:
                    self._live = None
                    live.stop()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing while the body runs (a prompt needs the terminal), then resume.

        The frame on screen stays; a new display starts below whatever the body
        printed. Pauses may nest; the view resumes when the last one ends.
        """
        self._pauses += 1
        if self._pauses == 1 and self._live is not None:
            live, self._live = self._live, None
            live.stop()
            self._resume = True
        try:
            yield
        finally:
            self._pauses -= 1
            if self._pauses == 0 and self._resume and self._running:
                self._resume = False
                self._live = self._new_live()
                self._live.start()
                self.refresh(force=True)


def _drain_into(tracker: ProgressTracker, subscription: Subscription) -> int:
    """Fold what ``subscription`` buffers into ``tracker`` without waiting; how many."""
    count = 0
    while True:
        try:
            tracker.handle(subscription.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return count
        count += 1


@asynccontextmanager
async def open_live_view(
    tracker: ProgressTracker,
    subscription: Subscription,
    console: Console,
    *,
    refresh_per_second: float = DEFAULT_REFRESH_PER_SECOND,
    max_rows: int | None = None,
    title: str = "subagents",
    clock: Callable[[], float] = time.time,
    redirect_io: bool = True,
) -> AsyncIterator[LiveView]:
    """Show ``tracker``'s agent tree live on ``console`` while the body runs.

    ``subscription`` should be a ``drop_oldest`` one (the bus never waits for
    it). Two tasks run in the view's own nursery: one follows the subscription
    into the tracker, one redraws. On exit both stop, the buffered rest of the
    subscription is folded in, and one final frame is drawn and left on screen.
    """
    view = LiveView(
        tracker,
        console,
        refresh_per_second=refresh_per_second,
        max_rows=max_rows,
        title=title,
        clock=clock,
        redirect_io=redirect_io,
    )
    body_error: BaseException | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(follow, tracker, subscription)
        await nursery.start(view.run, subscription)
        try:
            yield view
        except BaseException as exc:  # raised again below, not wrapped in an ExceptionGroup
            body_error = exc
        finally:
            nursery.cancel_scope.cancel()
    if body_error is not None:
        raise body_error


# -- plain lines ---------------------------------------------------------------------


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
    agent indented by depth, what happened. Spawns, status changes (but
    ``pending_init``, which the spawn line covers), tool calls, grace periods
    and finished runs are printed; streaming chunks and usage are not. Lines
    are written in batches, from a worker thread when ``threaded``, so a slow
    pipe never blocks the Trio loop.
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
        return f"{_clock_text(event.time)} {indent}{what}"

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


# -- approvals -----------------------------------------------------------------------


@final
class _LineReader:
    """Reads lines from a blocking stream in a worker thread, at most one read at a time.

    A blocking ``readline`` cannot be cancelled, so a prompt that times out
    leaves its read running; the next prompt waits on that same read instead
    of starting a second one. A line that arrives while nobody is asking (the
    answer to a prompt that already timed out) is stale and dropped.
    """

    __slots__ = ("_reading", "_result", "_stream", "_waiter")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._reading = False
        self._waiter: trio.Event | None = None
        self._result: outcome.Outcome[str] | None = None

    async def readline(self) -> str:
        """The next line typed ('' at end of input); cancellable, the read itself is not."""
        if not self._reading:
            self._reading = True
            token = trio.lowlevel.current_trio_token()

            def deliver(result: outcome.Outcome[str]) -> None:
                # RunFinishedError: the program ended while the line was being typed.
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(self._deliver, result)

            trio.lowlevel.start_thread_soon(self._stream.readline, deliver)
        waiter = self._waiter = trio.Event()
        try:
            await waiter.wait()
        finally:
            if self._waiter is waiter:
                self._waiter = None
        result, self._result = self._result, None
        assert result is not None
        return result.unwrap()

    def _deliver(self, result: outcome.Outcome[str]) -> None:
        self._reading = False
        if self._waiter is not None:
            self._result = result
            self._waiter.set()


@final
class TerminalApprover:
    """The CLI's approval callback: asks at the terminal, labelled by agent; ``auto_yes`` approves.

    Use it as an :data:`~subagents.tools._approval.ApprovalCallback`. Each
    request is printed with the agent's nickname and type (from ``tracker``),
    the tool and what it would do, and answered ``y``/``yes`` to approve,
    anything else to deny. Prompts are asked one at a time; each, waiting in
    line included, is bounded by the request's deadline (then it is a denial
    that says it timed out). With ``live``, the live view is paused while a
    prompt is on screen. End of input denies every later request.
    """

    __slots__ = ("_eof", "_lock", "_reader", "auto_yes", "console", "live", "tracker")

    def __init__(
        self,
        console: Console,
        *,
        auto_yes: bool = False,
        tracker: ProgressTracker | None = None,
        live: LiveView | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        self.console = console
        self.auto_yes = auto_yes
        self.tracker = tracker
        self.live = live
        self._reader = _LineReader(sys.stdin if stdin is None else stdin)
        self._lock = trio.Lock()
        self._eof = False

    def label(self, agent_id: str) -> str:
        """How an agent is named in a prompt: ``Ada (Explore)``, or its id if unknown."""
        if self.tracker is not None:
            try:
                row = self.tracker.progress(agent_id)
            except ProgressNotFound:
                return agent_id
            name = row.nickname or agent_id
            return f"{name} ({row.label})" if row.label else name
        return agent_id

    def _describe(self, req: ApprovalRequest) -> Text:
        text = Text()
        text.append(self.label(req.agent_id), style="bold")
        text.append(" wants to run ")
        text.append(req.tool_name, style="bold cyan")
        if req.summary:
            text.append(f": {req.summary}")
        return text

    async def __call__(self, req: ApprovalRequest) -> ApprovalDecision:
        """Answer ``req``: at once with ``auto_yes``, else by asking, within its deadline."""
        if self.auto_yes:
            line = Text("approved (--yes): ", style="dim")
            line.append_text(self._describe(req))
            self.console.print(line)
            return ApprovalDecision.approve("approved by --yes")
        if self._eof:
            return ApprovalDecision.deny("nobody can answer: the terminal input is closed")
        with trio.move_on_at(req.deadline):
            async with self._lock:
                return await self._ask(req)
        self.console.print(
            Text(f"\n  no answer in time: denied {req.tool_name} for {self.label(req.agent_id)}")
        )
        return ApprovalDecision.timeout("nobody answered the approval prompt before the deadline")

    async def _ask(self, req: ApprovalRequest) -> ApprovalDecision:
        context = self.live.paused() if self.live is not None else _nothing()
        with context:
            prompt = Text("approval needed: ", style="bold yellow")
            prompt.append_text(self._describe(req))
            self.console.print(prompt)
            if math.isfinite(req.deadline):
                left = max(0.0, req.deadline - trio.current_time())
                self.console.print(f"allow? \\[y/N] (within {left:.0f}s) ", end="")
            else:
                self.console.print("allow? \\[y/N] ", end="")
            line = await self._reader.readline()
        if not line:
            self._eof = True
            self.console.print()
            return ApprovalDecision.deny("nobody can answer: the terminal input is closed")
        answer = line.strip().lower()
        who = escape(self.label(req.agent_id))
        if answer in ("y", "yes"):
            self.console.print(f"  [green]approved[/] {escape(req.tool_name)} for {who}")
            return ApprovalDecision.approve("approved at the terminal")
        self.console.print(f"  [red]denied[/] {escape(req.tool_name)} for {who}")
        return ApprovalDecision.deny("the user denied this tool call at the terminal")


@contextmanager
def _nothing() -> Iterator[None]:
    yield
