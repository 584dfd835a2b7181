"""The runtime's teams: which team each agent leads or belongs to, by name and by id.

One :class:`TeamDirectory` per runtime. A team name is open once at a time,
an agent leads at most one team, and a teammate belongs to exactly one; a team
that ends leaves the directory, so its name may be used again.

With a records folder (:meth:`TeamDirectory.keep_records`; the runtime gives
one when transcripts are on), each team's :class:`TeamRecord` is kept there,
rewritten as teammates join, and removed when the team is ended on purpose:
:meth:`TeamDirectory.stored` and :meth:`TeamDirectory.restore` bring a team
back when its lead is resumed, after a crash included.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, final

from subagents.teams._exceptions import InvalidTeamName, TeamError, TeamExists
from subagents.teams._record import (
    TeamRecord,
    read_team_record,
    remove_team_record,
    write_team_record,
)
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

    __slots__ = ("_by_agent", "_by_name", "_records", "record_problem")

    def __init__(self) -> None:
        self._by_name: dict[str, Team] = {}
        self._by_agent: dict[str, Team] = {}
        self._records: Path | None = None
        #: Why the last team record could not be written (``None``: every write worked).
        self.record_problem: str | None = None

    def keep_records(self, folder: Path) -> None:
        """Keep each team's record in ``folder`` from now on (see the module docstring)."""
        self._records = folder

    def stored(self, lead_id: str) -> TeamRecord | None:
        """The record of the team ``lead_id`` led and that was not ended on purpose."""
        if self._records is None:
            return None
        return read_team_record(self._records, lead_id)

    def restore(self, runtime: TeamRuntime, record: TeamRecord) -> Team:
        """Open again the team ``record`` describes (:class:`TeamExists` as :meth:`create`).

        Its teammates are not members yet: the caller gives it its board first, then
        calls :meth:`rejoin_all`, so each teammate is seated as it rejoins.
        """
        return self.create(
            runtime,
            record.name,
            record.lead_id,
            description=record.description,
            board_file=record.board,
        )

    @staticmethod
    def rejoin_all(team: Team, record: TeamRecord) -> None:
        """Every teammate ``record`` names joins ``team`` again (a bad or repeated name,
        which only a hand-edited record holds, is skipped)."""
        for name, agent_id in record.members:
            try:
                team.rejoin(name, agent_id)
            except TeamError:
                continue

    def _write(self, team: Team) -> None:
        """Rewrite ``team``'s record; a disk that refuses it leaves the team running,
        only not resumable, and :attr:`record_problem` says why."""
        if self._records is None:
            return
        try:
            write_team_record(
                self._records,
                TeamRecord(
                    name=team.name,
                    lead_id=team.lead_id,
                    description=team.description,
                    board=team.board_file,
                    members=team.members,
                ),
            )
        except OSError as exc:
            self.record_problem = f"team {team.name!r} cannot be resumed: {exc}"

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
        board_file: str | None = None,
    ) -> Team:
        """Open team ``name`` led by ``lead_id``; :class:`TeamExists` if the name or lead is taken,
        :class:`InvalidTeamName` for a name a file cannot safely carry (its board is one).

        ``forming`` holds the names of the teammates it starts with (see :class:`Team`);
        ``board_file`` is its board's journal, relative to the state directory.
        """
        check_team_name(name)
        if name in self._by_name:
            raise TeamExists(name)
        led = self._by_agent.get(lead_id)
        if led is not None:
            raise TeamExists(led.name, lead=led.lead_id == lead_id)
        team = Team(
            runtime,
            name,
            lead_id,
            description=description,
            directory=self,
            forming=forming,
            board_file=board_file,
        )
        self._by_name[name] = team
        self._by_agent[lead_id] = team
        self._write(team)
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
        self._write(team)

    def left(self, agent_id: str) -> None:
        """Called by :meth:`Team.add` when a teammate that joined failed to start."""
        team = self._by_agent.pop(agent_id, None)
        if team is not None:
            self._write(team)

    def removed(self, team: Team) -> None:
        """Called by :meth:`Team.close`: the team and its members leave the directory."""
        if self._by_name.get(team.name) is team:
            del self._by_name[team.name]
        for agent_id in (team.lead_id, *team):
            if self._by_agent.get(agent_id) is team:
                del self._by_agent[agent_id]
        if team.deleted and self._records is not None:
            remove_team_record(self._records, team.lead_id)
