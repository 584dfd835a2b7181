"""What a progress tracker tells: an agent's row, its activities, subtree totals, counters.

These are the frozen values :class:`~subagents.runtime.ProgressTracker` hands
out (a snapshot as of a given time, never a live record); for an agent it
does not hold it raises :class:`~subagents.runtime.ProgressNotFound`.
"""

from __future__ import annotations

from typing import Final

import attrs

from subagents.actors import Status, kind_of
from subagents.runtime._providers.base import Usage

__all__ = [
    "ACTIVITY_LIMIT",
    "Activity",
    "AgentProgress",
    "ProgressStatistics",
    "SubtreeTotals",
]

#: How many recent activities each agent keeps (Claude Code shows the last five).
ACTIVITY_LIMIT: Final = 5


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
    """Events and lag markers handled, and the facts each agent's loop told the runtime's
    tracker directly (one per event it stands for, built or not)."""
    lagged: int
    """Events the subscription reported lost (the sum of every ``Lagged.dropped``)."""
    gaps: int
    """Lag markers seen: how many times the stream had a gap."""
    forgotten: int
    """Agents dropped by :meth:`ProgressTracker.forget`."""
    evicted: int
    """Agents dropped because more than ``max_agents`` were tracked."""
