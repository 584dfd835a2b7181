"""The tracker's records of agents, linked into a tree, with subtree totals kept up to date.

:class:`AgentTree` is the part of the
:class:`~subagents.runtime.ProgressTracker` that knows who is whose child: one
:class:`Node` per agent, the roots (and the orphans waiting for a parent not
seen yet), each node's own counters and its descendants' totals as :class:`Tally`
values (a subtree's totals are the two added, when read), and dropping agents
(forgetting and eviction) so that their work stays in their ancestors' totals.
Folding events into it is the tracker's job.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from subagents.actors import PENDING_INIT, Event, Status, is_final
from subagents.runtime._progress.values import ACTIVITY_LIMIT, Activity
from subagents.runtime._providers.base import Usage

__all__ = ["AgentTree", "LazyActivity", "Node", "Note", "Tally", "TurnDone"]


class LazyActivity(msgspec.Struct, frozen=True, gc=False):
    """An activity whose text is written when it is read (:meth:`Node.recent`), not when it
    happens: an agent keeps its last five, and most are never read before they go.

    A struct the cycle collector does not track (made in C, each tool call; nothing it
    holds leads back to it): an agent's rows of activities add nothing to the collections
    that walk every live agent.
    """

    time: float
    describe: Callable[[str, Mapping[str, Any]], str]
    name: str
    arguments: Mapping[str, Any]

    def activity(self) -> Activity:
        return Activity(self.time, self.describe(self.name, self.arguments))


class Note(msgspec.Struct, frozen=True, gc=False):
    """An activity whose text is known when it happens (a status, a failed call): an
    :class:`Activity` when read, untracked by the collector until then, as
    :class:`LazyActivity` is."""

    time: float
    text: str

    def activity(self) -> Activity:
        return Activity(self.time, self.text)


class TurnDone(msgspec.Struct, frozen=True, gc=False):
    """ "turn N done", written when it is read (:meth:`Node.recent`): every turn ends with
    one, and most are gone before anyone looks. Untracked by the collector, as
    :class:`LazyActivity` is."""

    time: float
    turn: int

    def activity(self) -> Activity:
        return Activity(self.time, f"turn {self.turn} done")


class Tally(msgspec.Struct, gc=False):
    """Mutable counters: an agent's own, or the totals of its descendants.

    A struct the cycle collector does not track (it holds only integers, so it is in no
    cycle), made in C: a row keeps three, and a collection walking every live agent
    walks none of them.
    """

    turns: int = 0
    tool_uses: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    agents: int = 0
    running: int = 0

    def add(self, delta: Tally, sign: int = 1) -> None:
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


#: What a new row's run starts from: the run's counters are ``own`` less this snapshot
#: (:attr:`Node.base`), never changed in place (a new snapshot replaces it).
_NO_WORK: Final = Tally()


class Node:
    """What the tracker knows about one agent."""

    __slots__ = (
        "activities",
        "agent_id",
        "base",
        "children",
        "depth",
        "ended_at",
        "grace",
        "inflight",
        "kids",
        "label",
        "live",
        "nickname",
        "own",
        "parent",
        "parent_id",
        "phase",
        "reason",
        "started_at",
        "status",
        "tracked",
    )

    def __init__(
        self,
        agent_id: str,
        nickname: str,
        label: str,
        parent_id: str | None,
        depth: int,
        started_at: float,
    ) -> None:
        self.agent_id = agent_id
        self.nickname = nickname
        self.label = label
        self.parent_id = parent_id
        self.depth = depth
        self.status: Status = PENDING_INIT
        self.live = True
        self.started_at = started_at
        self.ended_at: float | None = None
        self.parent: Node | None = None
        self.children: dict[str, Node] = {}
        # The agent's own counters; its subtree's are these, the agent itself (one
        # agent, running while live) and ``kids``, its descendants' totals. A fact
        # adds to ``own`` and to the ``kids`` of each ancestor: a top-level agent's
        # turn counts once, not in three tallies.
        self.own = Tally()
        self.kids = Tally()
        # ``own`` when the current run began (a snapshot, replaced, never changed in
        # place): the run's counters are ``own`` less it (:attr:`run`). A run's counters
        # only grow, so a new run is recognised when they would shrink.
        self.base = _NO_WORK
        # The last ACTIVITY_LIMIT, oldest first: a list (104 bytes at five) and not a
        # bounded deque, which allocates a 64-slot block (760 bytes) for every agent.
        self.activities: list[LazyActivity | Note | TurnDone] = []
        self.inflight: dict[str, str] = {}
        self.phase = ""
        self.grace = False
        self.reason = ""
        # False once the tree dropped it (forgotten or evicted): a feed holding it looks
        # the agent up again (facts.ProgressFeed).
        self.tracked = True

    @property
    def run(self) -> Tally:
        """The current run's counters, as far as the facts seen tell (a new tally: ``own``
        less :attr:`base`)."""
        own, base = self.own, self.base
        return Tally(
            own.turns - base.turns,
            own.tool_uses - base.tool_uses,
            own.input - base.input,
            own.output - base.output,
            own.cache_read - base.cache_read,
            own.cache_write - base.cache_write,
        )

    def subtree(self) -> Tally:
        """The subtree's totals: the agent's own counters, itself and its descendants'."""
        own, kids = self.own, self.kids
        return Tally(
            own.turns + kids.turns,
            own.tool_uses + kids.tool_uses,
            own.input + kids.input,
            own.output + kids.output,
            own.cache_read + kids.cache_read,
            own.cache_write + kids.cache_write,
            1 + kids.agents,
            self.live + kids.running,
        )

    def new_run(self) -> None:
        """A run certainly began or ended here: its counters restart (``own`` keeps the old)."""
        self.base = msgspec.structs.replace(self.own)
        self.inflight.clear()
        self.grace = False

    def note(self, when: float, text: str) -> None:
        self.remember(Note(when, text))

    def remember(self, activity: LazyActivity | Note | TurnDone) -> None:
        """Keep ``activity`` as the newest, forgetting the oldest past ``ACTIVITY_LIMIT``."""
        activities = self.activities
        if len(activities) >= ACTIVITY_LIMIT:
            del activities[0]
        activities.append(activity)

    def recent(self) -> tuple[Activity, ...]:
        """The last activities, oldest first, each with its text."""
        return tuple(a.activity() for a in self.activities)


class AgentTree:
    """The agents a tracker holds, as a tree: nodes, roots, orphans and eviction order.

    ``max_agents`` bounds how many agents it keeps; past it the longest
    finished (and childless) agents are dropped first.
    """

    __slots__ = (
        "_events",
        "_evicted",
        "_finished_leaves",
        "_forgotten",
        "_nodes",
        "_orphans",
        "_roots",
        "max_agents",
    )

    def __init__(self, max_agents: int) -> None:
        self.max_agents = max_agents
        self._nodes: dict[str, Node] = {}
        self._roots: dict[str, Node] = {}
        # Roots whose parent has not been seen yet, by that parent's id.
        self._orphans: dict[str, dict[str, None]] = {}
        # Final agents without tracked children, longest such first: eviction order.
        self._finished_leaves: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._forgotten = 0
        self._evicted = 0
        # Events, lag markers and facts fed directly (facts.ProgressFeed) handled.
        self._events = 0

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

    def _remove(self, node: Node) -> int:
        """Drop ``node`` and its subtree, keeping their work in the ancestors; how many went."""
        parent = node.parent
        if parent is not None:
            del parent.children[node.agent_id]
            running = node.subtree().running  # its live agents leave the ancestors' count
            if running:
                gone = Tally()
                gone.running = running
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
            # Marked for a feed that still holds it, and let go of its links: a row held
            # after its drop keeps no other row alive.
            gone_node.tracked = False
            gone_node.parent = None
            gone_node.children.clear()
            count += 1
        return count

    def _evict(self, keep: Node) -> None:
        """Drop agents past ``max_agents``: the longest finished first, never ``keep``."""
        while len(self._nodes) > self.max_agents:
            victim: Node | None = None
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

    def _refresh_leaf(self, node: Node) -> None:
        if is_final(node.status) and not node.children:
            if node.agent_id not in self._finished_leaves:
                self._finished_leaves[node.agent_id] = None
        else:
            self._finished_leaves.pop(node.agent_id, None)

    # -- growing ------------------------------------------------------------------

    def _add_up(self, node: Node | None, delta: Tally, sign: int = 1) -> None:
        """Add ``delta`` to the descendants' totals of ``node`` and every ancestor."""
        while node is not None:
            node.kids.add(delta, sign)
            node = node.parent

    def _work(self, node: Node, delta: Tally) -> None:
        """Count ``delta`` (never negative) as the agent's own work, and its ancestors'."""
        node.own.add(delta)
        self._add_up(node.parent, delta)

    # The loop's facts fed directly (facts.ProgressFeed) count one at a time: no delta made.

    @staticmethod
    def _count_usage(node: Node, usage: Usage) -> None:
        """One model call's tokens, in ``node``'s own totals and its ancestors'."""
        inp, out = usage.input_tokens, usage.output_tokens
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        own = node.own
        own.input += inp
        own.output += out
        cached = bool(read or write)  # a call with no cache tokens (no caching) adds none
        if cached:
            own.cache_read += read
            own.cache_write += write
        walker = node.parent
        while walker is not None:
            kids = walker.kids
            kids.input += inp
            kids.output += out
            if cached:
                kids.cache_read += read
                kids.cache_write += write
            walker = walker.parent

    def _node(self, event: Event, label: str = "") -> Node:
        """The record of the event's agent, created if this is the first event seen about it."""
        node = self._nodes.get(event.agent_id)
        if node is not None:
            return node
        return self._add_node(
            event.agent_id, event.parent_id, event.depth, event.nickname, label, event.time
        )

    def _add_node(
        self,
        agent_id: str,
        parent_id: str | None,
        depth: int,
        nickname: str,
        label: str,
        when: float,
    ) -> Node:
        """A record for an agent not tracked yet, linked under its parent when that is known."""
        node = Node(agent_id, nickname, label, parent_id, depth, when)
        self._nodes[agent_id] = node
        parent = None if parent_id is None else self._nodes.get(parent_id)
        if parent is not None and not self._is_ancestor_or_self(node, parent):
            node.parent = parent
            parent.children[agent_id] = node
            self._finished_leaves.pop(parent.agent_id, None)
        else:
            self._roots[agent_id] = node
            if parent_id is not None:
                self._orphans.setdefault(parent_id, {})[agent_id] = None
        walker = node.parent  # one agent more, running, below every ancestor
        while walker is not None:
            kids = walker.kids
            kids.agents += 1
            kids.running += 1
            walker = walker.parent
        for orphan_id in self._orphans.pop(node.agent_id, {}):
            orphan = self._nodes[orphan_id]
            if self._is_ancestor_or_self(orphan, node):
                continue
            del self._roots[orphan_id]
            orphan.parent = node
            node.children[orphan_id] = orphan
            self._add_up(node, orphan.subtree())
        if len(self._nodes) > self.max_agents:
            self._evict(node)
        return node

    @staticmethod
    def _is_ancestor_or_self(candidate: Node, node: Node) -> bool:
        """Whether ``candidate`` is ``node`` or above it (guards against cycles in bad input)."""
        walker: Node | None = node
        while walker is not None:
            if walker is candidate:
                return True
            walker = walker.parent
        return False
