"""Progress of every agent, folded from the bus: turns, tool uses, tokens, activities, time.

A :class:`ProgressTracker` reads the events the kernel and the agent loop
publish and keeps, per agent, what a person watching the run wants to see: its
status and a short sentence saying what it is doing now ("calling Grep",
"waiting for the model (turn 3)"), its turns, tool uses and token usage, its
last five activities ("Read src/app.py", "turn 2 done", "spawned Ada
(Explore)"), when it started and ended, and the same counters summed over its
whole subtree, so a lead's row shows what its children cost too::

    tracker = ProgressTracker()
    with sup.bus.subscribe(capacity=256, policy="drop_oldest") as sub:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow, tracker, sub)
            ...
            for row in tracker.tree(now=time.time()):
                print("  " * row.depth, row.nickname, row.status_message)

Handling an event is synchronous and O(1), except that a change of an agent's
counters is added, as a delta, to every ancestor's totals: O(depth),
never a walk of a subtree.

**Lossy streams.** A live view reads the bus with a ``drop_oldest``
subscription and may miss events (a :class:`~subagents.actors.Lagged` marker
says how many). The tracker stays consistent anyway: a status only ever comes
from a :class:`~subagents.actors.StatusChanged`; counters only grow (the loop's
events carry the run's running totals: the turn number, the run's usage so far,
and at the end of a run its turns, tool uses and usage, so a later event makes
up for a lost one); an event about an agent whose spawn was lost creates its
row, and an agent whose parent is not known yet is shown as a root until the
parent appears. What a lossy stream can cost is precision, and only by
counting short (a tool call whose start was lost in a run whose end was lost
too is not counted): a gap is never counted twice, and no total goes negative
or disagrees with the totals below it.

**Bounded memory.** An agent keeps its last five activities, and its tool
calls in flight are capped. Agents are forgotten only when asked:
:meth:`ProgressTracker.forget` drops an agent with its subtree (for closed
agents), and past ``max_agents`` tracked agents the tracker drops those that
have been finished (and childless) the longest, and only when none is finished,
the oldest childless agent. The work of a dropped agent stays in its ancestors'
subtree totals, so a lead's token count never shrinks because a view forgot a
child; only its share of "agents running" goes. A runtime's own tracker (and
``subagents run``'s) keeps :func:`agents_to_keep` agents for its ``max_threads``
and ``max_depth``, so that it never drops an agent that runs; size a tracker of
your own that follows a runtime's bus the same way.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, Callable
from typing import Any, Final, final

from msgspec.structs import replace

from subagents.actors import (
    AgentSpawned,
    Event,
    InvalidConfiguration,
    Lagged,
    StatusChanged,
    is_final,
    is_live,
)
from subagents.runtime._events import (
    GracePeriodEnded,
    GracePeriodStarted,
    RunFinished,
    TextChunk,
    ThoughtChunk,
    ToolCallEnded,
    ToolCallStarted,
    TurnCompleted,
    TurnStarted,
    UsageReported,
)
from subagents.runtime._exceptions import ProgressNotFound
from subagents.runtime._progress import facts
from subagents.runtime._progress.text import status_activity, status_message
from subagents.runtime._progress.tree import AgentTree, Node, Tally
from subagents.runtime._progress.values import AgentProgress, ProgressStatistics, SubtreeTotals
from subagents.runtime._providers.base import Usage

__all__ = ["DEFAULT_MAX_AGENTS", "ProgressTracker", "agents_to_keep", "follow"]

#: How many agents a tracker keeps before it drops the longest-finished ones.
DEFAULT_MAX_AGENTS: Final = 4096


def agents_to_keep(max_live: int, max_depth: int, *, floor: int = DEFAULT_MAX_AGENTS) -> int:
    """A ``max_agents`` (at least ``floor``) past which a tracker still finds a finished,
    childless agent to drop whenever at most ``max_live`` agents are live at once and none
    is deeper than ``max_depth``: it never drops a live agent.

    Dropped while it runs, an agent's row comes back at its next fact with its counters
    from zero, and it pushes out another live row: with more live agents than the tracker
    keeps, every turn of theirs did so (a runtime of 10,000 agents at once, 96,659 drops
    in one run). The bound: with no finished leaf, every finished agent has a live
    descendant, and a live agent has at most ``max_depth`` ancestors, so finished agents
    number at most ``max_depth`` times the live ones; one more ``max_live`` is headroom
    for actors that take no slot (a team's board).
    """
    return max(floor, (max_depth + 2) * max_live)


@final
class ProgressTracker(AgentTree):
    """Per-agent progress and subtree totals, folded from bus events by :meth:`handle`.

    Feed it every event of a subscription (:func:`follow` does), then read
    :meth:`progress` for one agent or :meth:`tree` for a live view. It is not
    thread-safe; use it from the Trio thread that follows the bus.
    ``max_agents`` bounds how many agents it keeps (see the module docstring).
    """

    __slots__ = (
        "_dispatch",
        "_gaps",
        "_lagged",
    )

    def __init__(self, *, max_agents: int = DEFAULT_MAX_AGENTS) -> None:
        if not isinstance(max_agents, int) or isinstance(max_agents, bool) or max_agents < 1:
            raise InvalidConfiguration(
                f"max_agents must be a whole number >= 1 (how many agents the tracker "
                f"keeps), not {max_agents!r}."
            )
        super().__init__(max_agents)
        self._lagged = 0
        self._gaps = 0
        self._dispatch: dict[type, Callable[[Any], None]] = {
            AgentSpawned: self._on_spawned,
            StatusChanged: self._on_status,
            TurnStarted: self._on_turn_started,
            UsageReported: self._on_usage,
            ToolCallStarted: self._on_tool_started,
            ToolCallEnded: self._on_tool_ended,
            TurnCompleted: self._on_turn_completed,
            TextChunk: self._on_text,
            ThoughtChunk: self._on_thought,
            GracePeriodStarted: self._on_grace_started,
            GracePeriodEnded: self._on_grace_ended,
            RunFinished: self._on_run_finished,
            Lagged: self._on_lagged,
        }

    def __repr__(self) -> str:
        return f"<ProgressTracker agents={len(self._nodes)} lagged={self._lagged}>"

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._nodes

    # -- reading ------------------------------------------------------------------

    @property
    def lagged(self) -> int:
        """How many events the followed subscription reported lost."""
        return self._lagged

    def progress(self, agent_id: str, *, now: float | None = None) -> AgentProgress:
        """The progress of ``agent_id`` as of ``now`` (default: the wall clock, as on the bus).

        Raises :class:`ProgressNotFound` for an id the tracker does not hold.
        """
        node = self._nodes.get(agent_id)
        if node is None:
            raise ProgressNotFound(agent_id)
        return self._snapshot(node, time.time() if now is None else now)

    def tree(self, now: float | None = None) -> list[AgentProgress]:
        """Every tracked agent, depth-first from the roots, children in spawn order."""
        when = time.time() if now is None else now
        rows: list[AgentProgress] = []
        stack = list(reversed(self._roots.values()))
        while stack:
            node = stack.pop()
            rows.append(self._snapshot(node, when))
            stack.extend(reversed(node.children.values()))
        return rows

    def roots(self) -> list[str]:
        """The ids of the top-level agents (and of agents whose parent is unknown), oldest first."""
        return list(self._roots)

    def statistics(self) -> ProgressStatistics:
        """A snapshot of the tracker's counters."""
        return ProgressStatistics(
            agents=len(self._nodes),
            events=self._events,
            lagged=self._lagged,
            gaps=self._gaps,
            forgotten=self._forgotten,
            evicted=self._evicted,
        )

    def _snapshot(self, node: Node, now: float) -> AgentProgress:
        own, sub = node.own, node.subtree()
        end = now if node.ended_at is None else node.ended_at
        return AgentProgress(
            agent_id=node.agent_id,
            nickname=node.nickname,
            label=node.label,
            parent_id=node.parent_id,
            depth=node.depth,
            status=node.status,
            status_message=status_message(node),
            turns=own.turns,
            tool_uses=own.tool_uses,
            usage=own.usage(),
            activities=node.recent(),
            started_at=node.started_at,
            ended_at=node.ended_at,
            elapsed=max(0.0, end - node.started_at),
            subtree=SubtreeTotals(
                turns=sub.turns,
                tool_uses=sub.tool_uses,
                usage=sub.usage(),
                agents=sub.agents,
                running=sub.running,
            ),
            children=tuple(node.children),
        )

    # -- folding events -----------------------------------------------------------

    def handle(self, event: Event | Lagged) -> None:
        """Fold one bus event (or lag marker) in; kinds that say nothing of progress are ignored."""
        self._events += 1
        kind = type(event)
        handler = self._dispatch.get(kind)
        if handler is None:
            handler = self._dispatch[kind] = self._handler_for(kind)
        handler(event)

    def _handler_for(self, kind: type) -> Callable[[Any], None]:
        """The handler of a subclass of a known kind, or one that ignores the event."""
        for known, handler in list(self._dispatch.items()):
            if issubclass(kind, known):
                return handler
        return _ignore

    def _observe_turn(self, node: Node, turn: int, *, starting: bool = False) -> None:
        """Account for an event of the run's turn ``turn``, catching up on lost turns.

        The run's turn counter is the highest turn number seen in it. A turn 1
        starting is a new run for sure. A lower number (or a turn starting
        again) means a new run began in a gap of a lossy stream: only the turn
        counter restarts then, because the highest number seen so far came
        from an earlier run, while the tool calls and usage already counted
        may belong to the new one (restarting them would count them twice).
        """
        run_turns = node.own.turns - node.base.turns
        if starting and turn == 1:
            node.new_run()
            run_turns = 0
        elif run_turns and (turn < run_turns or (starting and turn == run_turns)):
            node.base = replace(node.base, turns=node.own.turns)
            run_turns = 0
            node.inflight.clear()
            node.grace = False
        if turn > run_turns:
            delta = Tally()
            delta.turns = turn - run_turns
            self._work(node, delta)

    def _on_lagged(self, marker: Lagged) -> None:
        self._lagged += marker.dropped
        self._gaps += 1

    def _on_spawned(self, event: AgentSpawned) -> None:
        known = event.agent_id in self._nodes
        node = self._node(event, event.label)
        if known:  # spawned again with its identity: a resume
            node.label = event.label
            node.nickname = event.nickname
        parent = node.parent
        if parent is not None:
            verb = "resumed" if known else "spawned"
            parent.note(event.time, f"{verb} {event.nickname} ({event.label})")

    def _on_status(self, event: StatusChanged) -> None:
        node = self._node(event)
        status = event.status
        was_final = is_final(node.status)
        node.status = status
        live = is_live(status)
        if live != node.live:
            node.live = live
            step = 1 if live else -1  # below every ancestor, no delta made
            walker = node.parent
            while walker is not None:
                walker.kids.running += step
                walker = walker.parent
        if is_final(status):
            node.ended_at = event.time
            node.inflight.clear()
            node.grace = False
            node.note(event.time, status_activity(status))
        elif was_final and live:
            node.ended_at = None
            node.phase = ""
            node.note(event.time, "running again")
        self._refresh_leaf(node)

    def _on_turn_started(self, event: TurnStarted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn, starting=True)
        facts.turn_started(node, event.grace)

    def _on_usage(self, event: UsageReported) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        total, run = event.total, node.run
        if _shrinks(total, run):  # the run's usage only grows: this is a later run's
            own = node.own
            node.base = replace(
                node.base,
                input=own.input,
                output=own.output,
                cache_read=own.cache_read,
                cache_write=own.cache_write,
            )
            run = node.run  # its usage now counts from zero
        delta = Tally()
        delta.input = total.input_tokens - run.input
        delta.output = total.output_tokens - run.output
        delta.cache_read = total.cache_read_tokens - run.cache_read
        delta.cache_write = total.cache_write_tokens - run.cache_write
        self._work(node, delta)
        node.phase = "tools"

    def _on_tool_started(self, event: ToolCallStarted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        delta = Tally()
        delta.tool_uses = 1
        self._work(node, delta)
        facts.tool_started(node, event.time, event.tool_use_id, event.tool_name, event.input)

    def _on_tool_ended(self, event: ToolCallEnded) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        facts.tool_ended(node, event.time, event.tool_use_id, event.tool_name, event.is_error)

    def _on_turn_completed(self, event: TurnCompleted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        facts.turn_completed(node, event.time)

    def _on_text(self, event: TextChunk) -> None:
        node = self._nodes.get(event.agent_id)
        if node is not None:
            node.phase = "writing"

    def _on_thought(self, event: ThoughtChunk) -> None:
        node = self._nodes.get(event.agent_id)
        if node is not None:
            node.phase = "thinking"

    def _on_grace_started(self, event: GracePeriodStarted) -> None:
        facts.grace_started(self._node(event), event.time, event.reason)

    def _on_grace_ended(self, event: GracePeriodEnded) -> None:
        facts.grace_ended(self._node(event), event.time, event.outcome)

    def _on_run_finished(self, event: RunFinished) -> None:
        node = self._node(event)
        run, usage = node.run, event.usage
        delta = Tally()  # what the lost events of the run had not told
        delta.turns = max(0, event.turns - run.turns)
        delta.tool_uses = max(0, event.tool_uses - run.tool_uses)
        delta.input = max(0, usage.input_tokens - run.input)
        delta.output = max(0, usage.output_tokens - run.output)
        delta.cache_read = max(0, usage.cache_read_tokens - run.cache_read)
        delta.cache_write = max(0, usage.cache_write_tokens - run.cache_write)
        self._work(node, delta)
        facts.run_finished(node, event.time, event.terminate_reason, event.error)


def _shrinks(total: Usage, run: Tally) -> bool:
    """Whether a run's usage total is below what was counted for the current run."""
    return (
        total.input_tokens < run.input
        or total.output_tokens < run.output
        or total.cache_read_tokens < run.cache_read
        or total.cache_write_tokens < run.cache_write
    )


def _ignore(event: object) -> None:
    """The handler of event kinds that say nothing about progress."""


async def follow(tracker: ProgressTracker, subscription: AsyncIterable[Event | Lagged]) -> None:
    """Feed every event of ``subscription`` to ``tracker`` until the subscription ends.

    Run it in a nursery next to the work being watched; it returns when the
    subscription is closed and drained (or is cancelled with its nursery). A
    ``drop_oldest`` subscription keeps a live view from ever slowing the
    agents; its lag markers are counted in :attr:`ProgressTracker.lagged`.
    """
    async for event in subscription:
        tracker.handle(event)
