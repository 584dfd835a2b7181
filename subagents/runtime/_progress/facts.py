"""The agent loop's facts about one agent, and what each does to the agent's progress.

The loop tells the world a turn's facts: a turn started, the model's usage, a
tool call started and ended, the turn completed, text and thoughts streaming,
a grace period, the run finished. Anyone may follow them as bus events
(:class:`~subagents.runtime.TurnStarted` and the others), and a
:class:`~subagents.runtime.ProgressTracker` folds those events with
:meth:`~subagents.runtime.ProgressTracker.handle`, catching up on what a lossy
stream lost. The runtime's own tracker does not need events: each agent's loop
is handed a :class:`ProgressFeed`, which applies every fact to the agent's
:class:`~.tree.Node` as it happens, in O(depth) and without an event object,
a dispatch table or catch-up arithmetic (a direct feed loses nothing). A turn
nobody subscribes to then builds no event at all.

The functions here are what a fact does to a node besides its counters (its
phase, its tool calls in flight, its activities), so that both ways of
feeding a tracker word and record a fact the same.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final, final

from msgspec.structs import replace

from subagents.runtime._progress.text import ERROR_WIDTH, describe_tool_call, first_line
from subagents.runtime._progress.tree import (
    AgentTree,
    LazyActivity,
    Node,
    TurnDone,
)
from subagents.runtime._progress.values import ACTIVITY_LIMIT
from subagents.runtime._providers.base import Usage

__all__ = [
    "INFLIGHT_LIMIT",
    "ProgressFeed",
    "grace_ended",
    "grace_started",
    "run_finished",
    "tool_ended",
    "tool_started",
    "turn_completed",
    "turn_started",
]

#: Tool calls remembered as in flight per agent (a lost ``ToolCallEnded`` must not leak).
INFLIGHT_LIMIT: Final = 64


def turn_started(node: Node, grace: bool) -> None:
    """A model call is about to be made (``grace``: the last turn)."""
    node.phase = "model"
    if node.inflight:  # an empty table is kept for the next call, not freed and made again
        node.inflight.clear()
    if grace:
        node.grace = True


def tool_started(
    node: Node, when: float, tool_use_id: str, tool_name: str, arguments: Mapping[str, Any]
) -> None:
    """A tool call began: in flight, and an activity described when read."""
    inflight = node.inflight
    if len(inflight) >= INFLIGHT_LIMIT:
        del inflight[next(iter(inflight))]
    inflight[tool_use_id] = tool_name
    node.phase = "tools"
    # Described when read: most calls leave the last five before anyone looks.
    node.remember(LazyActivity(when, describe_tool_call, tool_name, arguments))


def tool_ended(node: Node, when: float, tool_use_id: str, tool_name: str, is_error: bool) -> None:
    """A tool call ended: no longer in flight, and an activity if it failed."""
    node.inflight.pop(tool_use_id, None)
    if is_error:
        node.note(when, f"{tool_name} failed")


def turn_completed(node: Node, when: float) -> None:
    """A turn ended with every tool call it asked for."""
    if node.inflight:
        node.inflight.clear()
    node.phase = "done"
    node.remember(TurnDone(when, node.own.turns))


def grace_started(node: Node, when: float, reason: str) -> None:
    """The run hit a limit; its grace turn comes."""
    node.grace = True
    node.note(when, f"grace period ({reason.replace('_', ' ')})")


def grace_ended(node: Node, when: float, outcome: str) -> None:
    """The grace turn ended with ``outcome``."""
    node.grace = False
    node.note(when, f"grace period ended: {outcome.replace('_', ' ')}")


def run_finished(node: Node, when: float, terminate_reason: str, error: str | None) -> None:
    """A run ended: its counters restart, and its reason is the row's phase."""
    node.new_run()
    node.phase = "finished"
    node.reason = terminate_reason
    text = f"finished: {terminate_reason}"
    if error:
        text += f" ({first_line(error, ERROR_WIDTH - len(text) - 3)})"
    node.note(when, text)


#: What a feed holds before its first fact: a record no tree keeps.
_UNTRACKED: Final = Node("", "", "", None, 0, 0.0)
_UNTRACKED.tracked = False


@final
class ProgressFeed:
    """One agent's loop facts, applied straight to a tracker's record of the agent.

    The runtime makes one per agent, with the agent's identity, and hands it to
    the agent's loop beside its :class:`~subagents.runtime.Publisher`; the loop
    calls it where it publishes (or would publish, when nobody subscribes) the
    matching event, and before it does, so a subscriber reading the event finds
    the tracker already past it. Each call is O(depth): it takes the agent's
    record (held from the last call while the tree keeps it; forgotten or
    evicted, it is found by id or made again, as an event would make it) and adds
    to its counters, and to each ancestor's totals of its descendants, one fact at
    a time. Use it from the Trio thread that runs the loop.
    """

    __slots__ = ("_held", "_nodes", "_tree", "agent_id", "depth", "nickname", "parent_id")

    def __init__(
        self,
        tree: AgentTree,
        *,
        agent_id: str,
        parent_id: str | None = None,
        depth: int = 0,
        nickname: str = "",
    ) -> None:
        self._tree = tree
        self._nodes = tree._nodes
        # The record the last fact went to: no lookup by id while the tree keeps it.
        self._held = _UNTRACKED
        self.agent_id = agent_id
        self.parent_id = parent_id
        self.depth = depth
        self.nickname = nickname

    def __repr__(self) -> str:
        return f"<ProgressFeed {self.nickname or self.agent_id!r}>"

    def _node(self) -> Node:
        """The agent's record, found by id, or made again if it was forgotten or evicted (no
        event counted); held for the next facts."""
        node = self._nodes.get(self.agent_id)
        if node is None:
            node = self._tree._add_node(
                self.agent_id, self.parent_id, self.depth, self.nickname, "", time.time()
            )
        self._held = node
        return node

    # The five facts of every turn are inlined (one call each, no helper): they are most
    # of what a turn costs the runtime's progress. They do what the functions above do.

    def turn_started(self, turn: int, *, grace: bool = False) -> None:
        """Turn ``turn`` of the run begins (turn 1: a new run)."""
        node = self._held
        if not node.tracked:
            node = self._node()
        self._tree._events += 1
        own = node.own
        if turn == 1:  # a new run: its counters start from here
            node.base = replace(own)
            node.grace = False
        own.turns += 1
        walker = node.parent
        while walker is not None:
            walker.kids.turns += 1
            walker = walker.parent
        node.phase = "model"
        if node.inflight:  # an empty table is kept for the next call, not freed and made again
            node.inflight.clear()
        if grace:
            node.grace = True

    def usage(self, usage: Usage) -> None:
        """The model call of the turn under way used ``usage``."""
        node = self._held
        if not node.tracked:
            node = self._node()
        self._tree._events += 1
        AgentTree._count_usage(node, usage)
        node.phase = "tools"

    def tool_started(self, tool_use_id: str, tool_name: str, arguments: Mapping[str, Any]) -> None:
        """A tool call began."""
        node = self._held
        if not node.tracked:
            node = self._node()
        self._tree._events += 1
        node.own.tool_uses += 1
        walker = node.parent
        while walker is not None:
            walker.kids.tool_uses += 1
            walker = walker.parent
        inflight = node.inflight
        if len(inflight) >= INFLIGHT_LIMIT:
            del inflight[next(iter(inflight))]
        inflight[tool_use_id] = tool_name
        node.phase = "tools"
        activities = node.activities  # node.remember, inline
        if len(activities) >= ACTIVITY_LIMIT:
            del activities[0]
        activities.append(LazyActivity(time.time(), describe_tool_call, tool_name, arguments))

    def tool_ended(self, tool_use_id: str, tool_name: str, *, is_error: bool) -> None:
        """A tool call ended."""
        node = self._held
        if not node.tracked:
            node = self._node()
        self._tree._events += 1
        node.inflight.pop(tool_use_id, None)
        if is_error:
            node.note(time.time(), f"{tool_name} failed")

    def turn_completed(self) -> None:
        """The turn under way ended."""
        node = self._held
        if not node.tracked:
            node = self._node()
        self._tree._events += 1
        if node.inflight:
            node.inflight.clear()
        node.phase = "done"
        activities = node.activities  # node.remember, inline
        if len(activities) >= ACTIVITY_LIMIT:
            del activities[0]
        activities.append(TurnDone(time.time(), node.own.turns))

    def text(self) -> None:
        """The model is writing its answer."""
        self._tree._events += 1
        node = self._tracked()
        if node is not None:
            node.phase = "writing"

    def thought(self) -> None:
        """The model is thinking."""
        self._tree._events += 1
        node = self._tracked()
        if node is not None:
            node.phase = "thinking"

    def _tracked(self) -> Node | None:
        """The agent's record if the tree keeps it (not made again: a phase alone does not
        bring a forgotten agent back)."""
        held = self._held
        if held.tracked:
            return held
        node = self._nodes.get(self.agent_id)
        if node is not None:
            self._held = node
        return node

    def grace_started(self, reason: str) -> None:
        """The run hit a limit (``reason``); the model gets one last turn."""
        self._tree._events += 1
        grace_started(self._node(), time.time(), reason)

    def grace_ended(self, outcome: str) -> None:
        """The grace turn ended with ``outcome``."""
        self._tree._events += 1
        grace_ended(self._node(), time.time(), outcome)

    def run_finished(self, terminate_reason: str, error: str | None = None) -> None:
        """The run ended with ``terminate_reason`` (and ``error``, if it failed). The feed
        lets its row go: an agent between runs holds none (the tree may drop it)."""
        self._tree._events += 1
        run_finished(self._node(), time.time(), terminate_reason, error)
        self._held = _UNTRACKED
