"""Errors raised by teams.

Every message says what happened and what to do, because a model reads them
through ``SendMessage``, ``TeamCreate`` and ``TeamDelete``::

    SubagentsError
    └── TeamError
        ├── TeamExists          a team of that name is open, or the lead leads one already
        ├── NotInTeam           the caller leads no team and belongs to none
        ├── UnknownTeammate     no member of the team has that name
        ├── TeammateNameTaken   a member of the team has that name already, or it is reserved
        └── TeamClosed          the team has ended
"""

from __future__ import annotations

from collections.abc import Sequence

from subagents._exceptions import SubagentsError

__all__ = [
    "NotInTeam",
    "TeamClosed",
    "TeamError",
    "TeamExists",
    "TeammateNameTaken",
    "UnknownTeammate",
]


class TeamError(SubagentsError):
    """Base class of the errors raised by :mod:`subagents.teams`."""


class TeamExists(TeamError):
    """A team of this name is open already, or the agent leads a team already."""

    def __init__(self, team_name: str, *, lead: bool = False) -> None:
        self.team_name = team_name
        if lead:
            message = (
                f"You lead team {team_name!r} already. Use it, or end it with TeamDelete "
                "before creating another."
            )
        else:
            message = f"A team named {team_name!r} is open already. Choose another name."
        super().__init__(message)


class NotInTeam(TeamError):
    """The agent leads no team and belongs to none."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"Agent {agent_id!r} is in no team. Create one with TeamCreate first (a lead), "
            "or send to an agent_id instead."
        )


class UnknownTeammate(TeamError, LookupError):
    """No member of the team has this name."""

    def __init__(self, name: str, team_name: str, names: Sequence[str]) -> None:
        self.name = name
        self.team_name = team_name
        self.names = tuple(names)
        listed = ", ".join(repr(n) for n in names) or "none yet"
        super().__init__(
            f"Team {team_name!r} has no member named {name!r}. Its names: {listed} "
            "(and 'lead', or '*' for everyone)."
        )


class TeammateNameTaken(TeamError, ValueError):
    """The name is taken by a member already, reserved, or not a valid name."""

    def __init__(self, name: str, team_name: str, why: str) -> None:
        self.name = name
        self.team_name = team_name
        super().__init__(f"Cannot add {name!r} to team {team_name!r}: {why}")


class TeamClosed(TeamError):
    """The team has ended: nothing more joins it."""

    def __init__(self, team_name: str) -> None:
        self.team_name = team_name
        super().__init__(
            f"Team {team_name!r} has ended. Create a new team with TeamCreate to go on."
        )
