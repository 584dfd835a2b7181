"""Teams: a lead and named teammates that message each other, as Claude Code's agent teams.

A :class:`Team` is a lead and named teammates, each a full agent in one
supervised subtree (every teammate is a child of the lead). Teammates message
each other by name (``SendMessage {to, message}``; ``"*"`` for everyone,
``"lead"`` for the lead), exactly once and in order per sender, as data in a
delimited block (:func:`format_peer_message`). A teammate whose work is done
is idle: it holds no ``max_threads`` slot, and a message or a new claimable
task wakes it; nothing polls. A :class:`TeamDirectory` holds a runtime's open
teams. The team reports on the bus with :class:`TeamCreated`,
:class:`TeammateIdle`, :class:`MessageSent` and :class:`TeamDeleted`.

The package sits between ``tools`` and ``runtime``: it drives agents through
:class:`TeamRuntime`, which :class:`subagents.runtime.Runtime` satisfies, and
``Runtime.team`` opens a team from Python.
"""

from __future__ import annotations

from subagents.teams._directory import TeamDirectory
from subagents.teams._events import MessageSent, TeamCreated, TeamDeleted, TeammateIdle
from subagents.teams._exceptions import (
    NotInTeam,
    TeamClosed,
    TeamError,
    TeamExists,
    TeammateNameTaken,
    UnknownTeammate,
)
from subagents.teams._messages import PEER_MESSAGE_TAG, format_peer_message
from subagents.teams._team import AgentIdentity, Team, TeamRuntime, TeamStatistics

__all__ = [
    "PEER_MESSAGE_TAG",
    "AgentIdentity",
    "MessageSent",
    "NotInTeam",
    "Team",
    "TeamClosed",
    "TeamCreated",
    "TeamDeleted",
    "TeamDirectory",
    "TeamError",
    "TeamExists",
    "TeamRuntime",
    "TeamStatistics",
    "TeammateIdle",
    "TeammateNameTaken",
    "UnknownTeammate",
    "format_peer_message",
]
