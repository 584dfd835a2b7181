"""The runtime's teams: which team each agent leads or belongs to, by name and by id.

One :class:`TeamDirectory` per runtime. A team name is open once at a time,
an agent leads at most one team, and a teammate belongs to exactly one; a team
that ends leaves the directory, so its name may be used again.
"""

from __future__ import annotations

import re
from typing import Final, final

from subagents.teams._exceptions import InvalidTeamName, TeamExists
from subagents.teams._team import Team, TeamRuntime

__all__ = ["TeamDirectory", "check_team_name"]

#: A team's name: what ``TeamCreate``'s ``team_name`` takes, and the board file's name.
_TEAM_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_team_name(name: object) -> None:
    """Raise :class:`InvalidTeamName` unless ``name`` is a safe team name."""
    if not isinstance(name, str) or not _TEAM_NAME.fullmatch(name):
        raise InvalidTeamName(name)


@final
class TeamDirectory:
    """Every open team of one runtime, found by name or by any member's agent id."""

    __slots__ = ("_by_agent", "_by_name")

    def __init__(self) -> None:
        self._by_name: dict[str, Team] = {}
        self._by_agent: dict[str, Team] = {}

    def __repr__(self) -> str:
        return f"<TeamDirectory teams={sorted(self._by_name)}>"

    def __len__(self) -> int:
        return len(self._by_name)

    def create(
        self,
        runtime: TeamRuntime,
        name: str,
        lead_id: str,
        *,
        description: str = "",
        forming: tuple[str, ...] = (),
    ) -> Team:
        """Open team ``name`` led by ``lead_id``; :class:`TeamExists` if the name or lead is taken,
        :class:`InvalidTeamName` for a name a file cannot safely carry (its board is one).

        ``forming`` holds the names of the teammates it starts with (see :class:`Team`).
        """
        check_team_name(name)
        if name in self._by_name:
            raise TeamExists(name)
        led = self._by_agent.get(lead_id)
        if led is not None:
            raise TeamExists(led.name, lead=led.lead_id == lead_id)
        team = Team(
            runtime, name, lead_id, description=description, directory=self, forming=forming
        )
        self._by_name[name] = team
        self._by_agent[lead_id] = team
        return team

    def get(self, name: str) -> Team | None:
        """The open team called ``name``."""
        return self._by_name.get(name)

    def of(self, agent_id: str) -> Team | None:
        """The open team ``agent_id`` leads or belongs to."""
        return self._by_agent.get(agent_id)

    def teams(self) -> tuple[Team, ...]:
        """Every open team, oldest first."""
        return tuple(self._by_name.values())

    def joined(self, team: Team, agent_id: str) -> None:
        """Called by :meth:`Team.add`: ``agent_id`` is a member of ``team`` now."""
        self._by_agent[agent_id] = team

    def left(self, agent_id: str) -> None:
        """Called by :meth:`Team.add` when a teammate that joined failed to start."""
        self._by_agent.pop(agent_id, None)

    def removed(self, team: Team) -> None:
        """Called by :meth:`Team.close`: the team and its members leave the directory."""
        if self._by_name.get(team.name) is team:
            del self._by_name[team.name]
        for agent_id in (team.lead_id, *team):
            if self._by_agent.get(agent_id) is team:
                del self._by_agent[agent_id]
