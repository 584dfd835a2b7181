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
counters is added, as a delta, to every ancestor's subtree totals: O(depth),
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

**Bounded memory.** Activities are a ``deque(maxlen=5)`` and the tool calls in
flight per agent are capped. Agents are forgotten only when asked:
:meth:`ProgressTracker.forget` drops an agent with its subtree (for closed
agents), and past ``max_agents`` tracked agents the tracker drops those that
have been finished (and childless) the longest, and only when none is finished,
the oldest childless agent. The work of a dropped agent stays in its ancestors'
subtree totals, so a lead's token count never shrinks because a view forgot a
child; only its share of "agents running" goes.
"""

from __future__ import annotations

import collections
import time
from collections.abc import AsyncIterable, Callable, Iterable, Mapping
from typing import Any, Final, final

import attrs

from subagents.actors import (
    PENDING_INIT,
    AgentSpawned,
    Completed,
    Errored,
    Event,
    InvalidConfiguration,
    Lagged,
    PendingInit,
    Shutdown,
    Status,
    StatusChanged,
    is_final,
    is_live,
    kind_of,
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
from subagents.runtime._exceptions import AgentRuntimeError
from subagents.runtime._provider import Usage

__all__ = [
    "ACTIVITY_LIMIT",
    "DEFAULT_MAX_AGENTS",
    "Activity",
    "AgentProgress",
    "ProgressNotFound",
    "ProgressStatistics",
    "ProgressTracker",
    "SubtreeTotals",
    "describe_tool_call",
    "follow",
]

#: How many recent activities each agent keeps (Claude Code shows the last five).
ACTIVITY_LIMIT: Final = 5
#: How many agents a tracker keeps before it drops the longest-finished ones.
DEFAULT_MAX_AGENTS: Final = 4096
#: How long a tool-call description may be, in characters.
_DESCRIPTION_WIDTH: Final = 60
#: How much of an error message a status line or an activity shows.
_ERROR_WIDTH: Final = 80
#: Tool calls remembered as in flight per agent (a lost ``ToolCallEnded`` must not leak).
_INFLIGHT_LIMIT: Final = 64

_NO_USAGE: Final = Usage()


class ProgressNotFound(AgentRuntimeError, LookupError):
    """The tracker has no progress for this agent id."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"No progress is tracked for agent {agent_id!r}: no event about it has been "
            "seen, or it was forgotten (forget(), or dropped past max_agents after it "
            "finished). Check the id against roots() or tree(), and start following the "
            "bus before spawning agents you want to watch."
        )


@attrs.frozen
class Activity:
    """Something an agent did, with the bus time (seconds since the epoch) it happened."""

    time: float
    text: str

    def __str__(self) -> str:
        return self.text


@attrs.frozen
class SubtreeTotals:
    """Counters summed over an agent and every descendant (forgotten ones included).

    ``agents`` counts the agents of the subtree, the agent itself included;
    ``running`` those still live (starting or running) and still tracked.
    """

    turns: int
    tool_uses: int
    usage: Usage
    agents: int
    running: int


@attrs.frozen
class AgentProgress:
    """One agent's progress, as of ``now``: what a live view shows on its row."""

    agent_id: str
    nickname: str
    label: str
    """The agent's type (the kernel's spawn label); empty if its spawn event was lost."""
    parent_id: str | None
    depth: int
    status: Status
    status_message: str
    """A short sentence: "calling Grep", "waiting for the model (turn 3)", "completed"."""
    turns: int
    tool_uses: int
    usage: Usage
    activities: tuple[Activity, ...]
    """The last :data:`ACTIVITY_LIMIT` activities, newest last."""
    started_at: float
    ended_at: float | None
    """When it reached a final status; ``None`` while it is live."""
    elapsed: float
    """Seconds from start to end, or to ``now`` while it is live."""
    subtree: SubtreeTotals
    children: tuple[str, ...]
    """The ids of its tracked children, in spawn order."""

    @property
    def kind(self) -> str:
        """The status kind: ``"running"``, ``"completed"``, ..."""
        return kind_of(self.status)

    @property
    def last_activity(self) -> str | None:
        """The newest activity's text, or ``None`` before the first."""
        return self.activities[-1].text if self.activities else None


@attrs.frozen
class ProgressStatistics:
    """A snapshot of a tracker's counters."""

    agents: int
    """Agents tracked now."""
    events: int
    """Events and lag markers handled."""
    lagged: int
    """Events the subscription reported lost (the sum of every ``Lagged.dropped``)."""
    gaps: int
    """Lag markers seen: how many times the stream had a gap."""
    forgotten: int
    """Agents dropped by :meth:`ProgressTracker.forget`."""
    evicted: int
    """Agents dropped because more than ``max_agents`` were tracked."""


# -- describing tool calls ---------------------------------------------------------

_COMMAND_KEYS: Final = ("command", "cmd", "script")
_PATTERN_KEYS: Final = ("pattern", "query", "regex", "glob")
_PATH_KEYS: Final = ("file_path", "path", "notebook_path", "filename", "directory")
_URL_KEYS: Final = ("url", "uri")
_TYPE_KEYS: Final = ("subagent_type", "agent_type")
_TEXT_KEYS: Final = ("description", "prompt", "message", "text", "agent_id", "id")


def _clean(value: str) -> str:
    """``value`` on one line, runs of whitespace made single spaces."""
    return " ".join(value.split())


def _head(text: str, width: int) -> str:
    """``text`` cut at the end to ``width`` characters, with an ellipsis if cut."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def _tail(path: str, width: int) -> str:
    """``path`` cut at the start to ``width`` characters: the file name matters most."""
    if len(path) <= width:
        return path
    return "…" + path[len(path) - max(width - 1, 0) :]


def _first_text(arguments: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return _clean(value)
    return None


def describe_tool_call(
    name: str, arguments: Mapping[str, Any], *, width: int = _DESCRIPTION_WIDTH
) -> str:
    """A short description of a tool call, for activities: the tool and its telling argument.

    The argument shown is a command (``Bash: git status``), else a pattern and
    where it is searched (``Grep 'TODO' in src``), else a path (``Read
    src/app.py``, long paths keep their end), else an agent type and task
    (``spawn_agent Explore: find the entry point``), else a URL, else the
    first text argument. The whole is at most ``width`` characters.
    """
    name = _clean(name) or "tool"
    if len(name) >= width:
        return _head(name, width)
    room = width - len(name) - 1
    command = _first_text(arguments, _COMMAND_KEYS)
    if command is not None:
        return f"{name}: {_head(command, room - 1)}"
    pattern = _first_text(arguments, _PATTERN_KEYS)
    path = _first_text(arguments, _PATH_KEYS)
    if pattern is not None:
        text = f"{name} '{_head(pattern, room - 2)}'"
        if path is not None and width - len(text) - 4 >= 8:
            text += f" in {_tail(path, width - len(text) - 4)}"
        return text
    if path is not None:
        return f"{name} {_tail(path, room)}"
    url = _first_text(arguments, _URL_KEYS)
    if url is not None:
        return f"{name} {_head(url, room)}"
    kind = _first_text(arguments, _TYPE_KEYS)
    task = _first_text(arguments, _TEXT_KEYS)
    if kind is not None:
        text = f"{name} {_head(kind, room)}"
        if task is not None and width - len(text) - 2 >= 8:
            text += f": {_head(task, width - len(text) - 2)}"
        return text
    if task is None:
        task = next(
            (_clean(v) for v in arguments.values() if isinstance(v, str) and v.strip()), None
        )
    if task is None:
        return name
    return f"{name} {_head(task, room)}"


def _first_line(text: str, width: int = _ERROR_WIDTH) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return _head(line, width) or "no message"


def _status_activity(status: Status) -> str:
    if isinstance(status, Completed):
        return "completed"
    if isinstance(status, Errored):
        return f"errored: {_first_line(status.message)}"
    if isinstance(status, Shutdown):
        return "shut down"
    return kind_of(status)


# -- the tracker's own records -----------------------------------------------------


class _Tally:
    """Mutable counters: an agent's own, or its subtree's."""

    __slots__ = (
        "agents",
        "cache_read",
        "cache_write",
        "input",
        "output",
        "running",
        "tool_uses",
        "turns",
    )

    def __init__(self) -> None:
        self.turns = 0
        self.tool_uses = 0
        self.input = 0
        self.output = 0
        self.cache_read = 0
        self.cache_write = 0
        self.agents = 0
        self.running = 0

    def add(self, delta: _Tally, sign: int = 1) -> None:
        self.turns += sign * delta.turns
        self.tool_uses += sign * delta.tool_uses
        self.input += sign * delta.input
        self.output += sign * delta.output
        self.cache_read += sign * delta.cache_read
        self.cache_write += sign * delta.cache_write
        self.agents += sign * delta.agents
        self.running += sign * delta.running

    def usage(self) -> Usage:
        return Usage(self.input, self.output, self.cache_read, self.cache_write)


class _Node:
    """What the tracker knows about one agent."""

    __slots__ = (
        "activities",
        "agent_id",
        "children",
        "depth",
        "ended_at",
        "grace",
        "inflight",
        "label",
        "live",
        "nickname",
        "own",
        "parent",
        "parent_id",
        "phase",
        "reason",
        "run",
        "started_at",
        "status",
        "sub",
    )

    def __init__(self, event: Event, label: str) -> None:
        self.agent_id = event.agent_id
        self.nickname = event.nickname
        self.label = label
        self.parent_id = event.parent_id
        self.depth = event.depth
        self.status: Status = PENDING_INIT
        self.live = True
        self.started_at = event.time
        self.ended_at: float | None = None
        self.parent: _Node | None = None
        self.children: dict[str, _Node] = {}
        self.own = _Tally()
        # The current run's counters, as far as the events seen tell; ``own``
        # includes them. A run's counters only grow, so a new run is recognised
        # when they would shrink, and then they restart from zero.
        self.run = _Tally()
        self.sub = _Tally()
        self.activities: collections.deque[Activity] = collections.deque(maxlen=ACTIVITY_LIMIT)
        self.inflight: dict[str, str] = {}
        self.phase = ""
        self.grace = False
        self.reason = ""

    def note(self, when: float, text: str) -> None:
        self.activities.append(Activity(when, text))


def _turn_phrase(phase: str, turn: int, reason: str) -> str:
    if phase == "model":
        return f"waiting for the model (turn {turn})"
    if phase == "writing":
        return f"writing (turn {turn})"
    if phase == "thinking":
        return f"thinking (turn {turn})"
    if phase == "tools":
        return f"running turn {turn}"
    if phase == "done":
        return f"turn {turn} done"
    if phase == "finished":
        return f"finished its run ({reason})"
    return "running"


def _message(node: _Node) -> str:
    status = node.status
    if is_final(status):
        return _status_activity(status)
    if type(status) is PendingInit:
        return "starting"
    if not node.live:
        return kind_of(status)
    if node.grace:
        return "in grace period"
    if node.inflight:
        names = list(dict.fromkeys(node.inflight.values()))
        count = len(node.inflight)
        if count == 1:
            return f"calling {names[0]}"
        return f"calling {', '.join(names[:3])}{', …' if len(names) > 3 else ''} ({count} calls)"
    return _turn_phrase(node.phase, node.own.turns, node.reason)


@final
class ProgressTracker:
    """Per-agent progress and subtree totals, folded from bus events by :meth:`handle`.

    Feed it every event of a subscription (:func:`follow` does), then read
    :meth:`progress` for one agent or :meth:`tree` for a live view. It is not
    thread-safe; use it from the Trio thread that follows the bus.
    ``max_agents`` bounds how many agents it keeps (see the module docstring).
    """

    __slots__ = (
        "_dispatch",
        "_events",
        "_evicted",
        "_finished_leaves",
        "_forgotten",
        "_gaps",
        "_lagged",
        "_nodes",
        "_orphans",
        "_roots",
        "max_agents",
    )

    def __init__(self, *, max_agents: int = DEFAULT_MAX_AGENTS) -> None:
        if not isinstance(max_agents, int) or isinstance(max_agents, bool) or max_agents < 1:
            raise InvalidConfiguration(
                f"max_agents must be a whole number >= 1 (how many agents the tracker "
                f"keeps), not {max_agents!r}."
            )
        self.max_agents = max_agents
        self._nodes: dict[str, _Node] = {}
        self._roots: dict[str, _Node] = {}
        # Roots whose parent has not been seen yet, by that parent's id.
        self._orphans: dict[str, dict[str, None]] = {}
        # Final agents without tracked children, longest such first: eviction order.
        self._finished_leaves: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._events = 0
        self._lagged = 0
        self._gaps = 0
        self._forgotten = 0
        self._evicted = 0
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

    def _snapshot(self, node: _Node, now: float) -> AgentProgress:
        own, sub = node.own, node.sub
        end = now if node.ended_at is None else node.ended_at
        return AgentProgress(
            agent_id=node.agent_id,
            nickname=node.nickname,
            label=node.label,
            parent_id=node.parent_id,
            depth=node.depth,
            status=node.status,
            status_message=_message(node),
            turns=own.turns,
            tool_uses=own.tool_uses,
            usage=own.usage(),
            activities=tuple(node.activities),
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

    # -- forgetting ---------------------------------------------------------------

    def forget(self, agent_id: str) -> bool:
        """Drop ``agent_id`` and its tracked subtree; ``False`` if it was not tracked.

        Meant for closed agents. Their work stays in their ancestors' subtree
        totals. An agent forgotten while still live comes back (without its
        earlier counters) if it publishes again.
        """
        node = self._nodes.get(agent_id)
        if node is None:
            return False
        self._forgotten += self._remove(node)
        return True

    def _remove(self, node: _Node) -> int:
        """Drop ``node`` and its subtree, keeping their work in the ancestors; how many went."""
        parent = node.parent
        if parent is not None:
            del parent.children[node.agent_id]
            if node.sub.running:
                gone = _Tally()
                gone.running = node.sub.running
                self._add_up(parent, gone, -1)
            self._refresh_leaf(parent)
        else:
            del self._roots[node.agent_id]
            if node.parent_id is not None:
                waiting = self._orphans.get(node.parent_id)
                if waiting is not None:
                    waiting.pop(node.agent_id, None)
                    if not waiting:
                        del self._orphans[node.parent_id]
        count = 0
        stack = [node]
        while stack:
            gone_node = stack.pop()
            del self._nodes[gone_node.agent_id]
            self._finished_leaves.pop(gone_node.agent_id, None)
            stack.extend(gone_node.children.values())
            count += 1
        return count

    def _evict(self, keep: _Node) -> None:
        """Drop agents past ``max_agents``: the longest finished first, never ``keep``."""
        while len(self._nodes) > self.max_agents:
            victim: _Node | None = None
            for agent_id in self._finished_leaves:
                if agent_id != keep.agent_id:
                    victim = self._nodes[agent_id]
                    break
            if victim is None:
                victim = next(
                    (n for n in self._nodes.values() if not n.children and n is not keep), None
                )
            if victim is None:  # only ``keep`` and its ancestors are left
                return
            self._evicted += self._remove(victim)

    def _refresh_leaf(self, node: _Node) -> None:
        if is_final(node.status) and not node.children:
            if node.agent_id not in self._finished_leaves:
                self._finished_leaves[node.agent_id] = None
        else:
            self._finished_leaves.pop(node.agent_id, None)

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

    def _add_up(self, node: _Node | None, delta: _Tally, sign: int = 1) -> None:
        """Add ``delta`` to the subtree totals of ``node`` and every ancestor."""
        while node is not None:
            node.sub.add(delta, sign)
            node = node.parent

    def _work(self, node: _Node, delta: _Tally) -> None:
        """Count ``delta`` (never negative) as the agent's own work, and its ancestors'."""
        node.own.add(delta)
        node.run.add(delta)
        self._add_up(node, delta)

    def _node(self, event: Event, label: str = "") -> _Node:
        """The record of the event's agent, created if this is the first event seen about it."""
        node = self._nodes.get(event.agent_id)
        if node is not None:
            return node
        node = _Node(event, label)
        self._nodes[node.agent_id] = node
        parent = None if event.parent_id is None else self._nodes.get(event.parent_id)
        if parent is not None and not self._is_ancestor_or_self(node, parent):
            node.parent = parent
            parent.children[node.agent_id] = node
            self._finished_leaves.pop(parent.agent_id, None)
        else:
            self._roots[node.agent_id] = node
            if event.parent_id is not None:
                self._orphans.setdefault(event.parent_id, {})[node.agent_id] = None
        itself = _Tally()
        itself.agents = 1
        itself.running = 1
        self._add_up(node, itself)
        for orphan_id in self._orphans.pop(node.agent_id, {}):
            orphan = self._nodes[orphan_id]
            if self._is_ancestor_or_self(orphan, node):
                continue
            del self._roots[orphan_id]
            orphan.parent = node
            node.children[orphan_id] = orphan
            self._add_up(node, orphan.sub)
        if len(self._nodes) > self.max_agents:
            self._evict(node)
        return node

    @staticmethod
    def _is_ancestor_or_self(candidate: _Node, node: _Node) -> bool:
        """Whether ``candidate`` is ``node`` or above it (guards against cycles in bad input)."""
        walker: _Node | None = node
        while walker is not None:
            if walker is candidate:
                return True
            walker = walker.parent
        return False

    def _new_run(self, node: _Node) -> None:
        """A run certainly began or ended here: its counters restart (``own`` keeps the old)."""
        node.run = _Tally()
        node.inflight.clear()
        node.grace = False

    def _observe_turn(self, node: _Node, turn: int, *, starting: bool = False) -> None:
        """Account for an event of the run's turn ``turn``, catching up on lost turns.

        The run's turn counter is the highest turn number seen in it. A turn 1
        starting is a new run for sure. A lower number (or a turn starting
        again) means a new run began in a gap of a lossy stream: only the turn
        counter restarts then, because the highest number seen so far came
        from an earlier run, while the tool calls and usage already counted
        may belong to the new one (restarting them would count them twice).
        """
        run = node.run
        if starting and turn == 1:
            self._new_run(node)
            run = node.run
        elif run.turns and (turn < run.turns or (starting and turn == run.turns)):
            run.turns = 0
            node.inflight.clear()
            node.grace = False
        if turn > run.turns:
            delta = _Tally()
            delta.turns = turn - run.turns
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
            change = _Tally()
            change.running = 1
            self._add_up(node, change, 1 if live else -1)
        if is_final(status):
            node.ended_at = event.time
            node.inflight.clear()
            node.grace = False
            node.note(event.time, _status_activity(status))
        elif was_final and live:
            node.ended_at = None
            node.phase = ""
            node.note(event.time, "running again")
        self._refresh_leaf(node)

    def _on_turn_started(self, event: TurnStarted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn, starting=True)
        node.phase = "model"
        node.inflight.clear()
        if event.grace:
            node.grace = True

    def _on_usage(self, event: UsageReported) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        total, run = event.total, node.run
        if _shrinks(total, run):  # the run's usage only grows: this is a later run's
            run.input = run.output = run.cache_read = run.cache_write = 0
        delta = _Tally()
        delta.input = total.input_tokens - run.input
        delta.output = total.output_tokens - run.output
        delta.cache_read = total.cache_read_tokens - run.cache_read
        delta.cache_write = total.cache_write_tokens - run.cache_write
        self._work(node, delta)
        node.phase = "tools"

    def _on_tool_started(self, event: ToolCallStarted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        delta = _Tally()
        delta.tool_uses = 1
        self._work(node, delta)
        description = describe_tool_call(event.tool_name, event.input)
        inflight = node.inflight
        if len(inflight) >= _INFLIGHT_LIMIT:
            del inflight[next(iter(inflight))]
        inflight[event.tool_use_id] = event.tool_name
        node.phase = "tools"
        node.note(event.time, description)

    def _on_tool_ended(self, event: ToolCallEnded) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        node.inflight.pop(event.tool_use_id, None)
        if event.is_error:
            node.note(event.time, f"{event.tool_name} failed")

    def _on_turn_completed(self, event: TurnCompleted) -> None:
        node = self._node(event)
        self._observe_turn(node, event.turn)
        node.inflight.clear()
        node.phase = "done"
        node.note(event.time, f"turn {node.own.turns} done")

    def _on_text(self, event: TextChunk) -> None:
        node = self._nodes.get(event.agent_id)
        if node is not None:
            node.phase = "writing"

    def _on_thought(self, event: ThoughtChunk) -> None:
        node = self._nodes.get(event.agent_id)
        if node is not None:
            node.phase = "thinking"

    def _on_grace_started(self, event: GracePeriodStarted) -> None:
        node = self._node(event)
        node.grace = True
        node.note(event.time, f"grace period ({event.reason.replace('_', ' ')})")

    def _on_grace_ended(self, event: GracePeriodEnded) -> None:
        node = self._node(event)
        node.grace = False
        node.note(event.time, f"grace period ended: {event.outcome.replace('_', ' ')}")

    def _on_run_finished(self, event: RunFinished) -> None:
        node = self._node(event)
        run, usage = node.run, event.usage
        delta = _Tally()  # what the lost events of the run had not told
        delta.turns = max(0, event.turns - run.turns)
        delta.tool_uses = max(0, event.tool_uses - run.tool_uses)
        delta.input = max(0, usage.input_tokens - run.input)
        delta.output = max(0, usage.output_tokens - run.output)
        delta.cache_read = max(0, usage.cache_read_tokens - run.cache_read)
        delta.cache_write = max(0, usage.cache_write_tokens - run.cache_write)
        self._work(node, delta)
        self._new_run(node)
        node.phase = "finished"
        node.reason = event.terminate_reason
        text = f"finished: {event.terminate_reason}"
        if event.error:
            text += f" ({_first_line(event.error, _ERROR_WIDTH - len(text) - 3)})"
        node.note(event.time, text)


def _shrinks(total: Usage, run: _Tally) -> bool:
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
