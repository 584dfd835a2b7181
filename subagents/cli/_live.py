"""What ``subagents run`` shows in a terminal while agents work: the live agent tree.

:func:`open_live_view` draws the agent tree with ``rich``: one row per agent
(nickname, type, status, turns, tokens, tool uses, what it is doing, elapsed
time), redrawn at most ``refresh_per_second`` times a second::

    tracker = ProgressTracker()
    with bus.subscribe(capacity=512, policy="drop_oldest") as sub:
        async with open_live_view(tracker, sub, Console()) as view:
            ...  # run the lead and its team

Two tasks do the work: one drains a ``drop_oldest`` subscription into the
tracker (:func:`~subagents.runtime.follow`), one redraws on a timer.
The view never slows the agents: publishing to a dropping subscription never
waits, and when the terminal falls behind, events are dropped (and counted,
and the view says how many) instead of piling up.

When stdout is not a terminal, :mod:`subagents.cli._plain_printer` writes plain
lines instead; :mod:`subagents.cli._terminal_approver` asks for approvals and
pauses this view while it does. The end-of-run summary is in
:mod:`subagents.cli._report` and the ``--json`` stream in :mod:`subagents.cli._json_lines`.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Final, final

import trio
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from subagents._visible import visible
from subagents.actors import Errored, Subscription, is_final, is_live
from subagents.cli._formatting import format_duration, format_tokens, status_text, tree_prefixes
from subagents.runtime import AgentProgress, ProgressTracker, follow

__all__ = [
    "DEFAULT_REFRESH_PER_SECOND",
    "LiveView",
    "open_live_view",
    "render_progress",
]

#: How often the live view redraws, at most.
DEFAULT_REFRESH_PER_SECOND: Final = 8.0
#: Rows the live view keeps for its header and footer when it fits the terminal.
_CHROME_ROWS: Final = 6
#: The fewest agent rows the view shows, however small the terminal.
_MIN_ROWS: Final = 3


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
    """What the agent is doing (live), or how it ended and what it did last (final).

    Tool arguments, file names and errors are untrusted: shown by :func:`visible`.
    """
    if not is_final(row.status):
        text = Text(visible(row.status_message))
        last = row.last_activity
        if last and last not in row.status_message:
            text.append(f" · {visible(last)}", style="dim")
        return text
    if isinstance(row.status, Errored):
        return Text(visible(row.status_message), style="red")
    # The newest activity of a final agent is its final status; the one before says more.
    previous = [a.text for a in row.activities[:-1]]
    return Text(visible(previous[-1] if previous else row.status_message), style="dim")


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
    ``lagged`` events lost by the view are noted too. Names, types and
    activities are shown by :func:`~subagents._visible.visible`, as text, never
    as markup.
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
        name.append(visible(row.nickname or row.agent_id), style="bold")
        table.add_row(
            name,
            Text(visible(row.label or "-")),
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
        "side",
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
        #: What to draw beside the tree, if anything (``subagents team``: the board).
        self.side: Callable[[], RenderableType] | None = None
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
        tree = render_progress(
            self.tracker.tree(self.clock()),
            lagged=self.tracker.lagged,
            max_rows=max_rows,
            title=self.title,
        )
        if self.side is None:
            return tree
        grid = Table.grid(padding=(0, 2))
        grid.add_row(tree, self.side())
        return grid

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
