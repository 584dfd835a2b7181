"""Claude Code's team tools, ``TeamCreate`` and ``TeamDelete``, and the contract behind them.

Claude Code's agent teams (https://code.claude.com/docs/en/agent-teams) have a
lead that creates a team (``TeamCreate {team_name, description, agent_type}``),
teammates that message each other by name with ``SendMessage {to, message}``
(``to`` a teammate's name, ``"*"`` for everyone, ``"lead"`` for the lead), and a
lead that ends the team (``TeamDelete``, no arguments). Here the tools talk to
the runtime through :class:`TeamHost`, a ``Protocol`` the runtime implements,
as the other lifecycle tools talk through :class:`AgentHost`; the values that
cross that boundary (:class:`TeamInfo`, :class:`PeerDelivery`) are here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Final, Protocol, final

import attrs
import msgspec

from subagents._exceptions import SubagentsError
from subagents.tools._context import ToolContext
from subagents.tools._lifecycle.host import SpawnedAgent, encode_json
from subagents.tools._lifecycle.shared import FLAGS
from subagents.tools._protocol import ToolResult

__all__ = [
    "BROADCAST",
    "LEAD_NAME",
    "TEAM_CREATE",
    "TEAM_DELETE",
    "PeerDelivery",
    "TeamCreateArgs",
    "TeamCreateTool",
    "TeamDeleteArgs",
    "TeamDeleteTool",
    "TeamHost",
    "TeamInfo",
]

#: The tools' names, as Claude Code spells them.
TEAM_CREATE: Final = "TeamCreate"
TEAM_DELETE: Final = "TeamDelete"
#: ``SendMessage``'s ``to`` for every member of the sender's team but the sender.
BROADCAST: Final = "*"
#: ``SendMessage``'s ``to`` for the team's lead (Claude Code's ``team-lead`` is accepted too).
LEAD_NAME: Final = "lead"


@attrs.frozen
class TeamInfo:
    """A team as the tools report it: its name, its lead, its members' names and ids."""

    team_name: str
    lead_id: str
    description: str = ""
    members: tuple[tuple[str, str], ...] = ()
    """``(name, agent_id)`` of each teammate, in the order they joined."""


@attrs.frozen
class PeerDelivery:
    """What became of a peer message to one recipient.

    ``delivered`` is true once the message is in the recipient's mailbox (it
    reads it at its next turn boundary, or wakes if it was idle); otherwise
    ``reason`` says why nothing was delivered (it has ended, its mailbox stayed
    full, no slot was free to wake it), and the sender may try again.
    """

    to: str
    agent_id: str
    delivered: bool
    reason: str | None = None


class TeamHost(Protocol):
    """What the team tools and ``SendMessage`` need from the runtime; ``runtime`` implements it.

    Each method takes the caller's :class:`ToolContext` first and reports a
    refusal with a ``SubagentsError`` whose message says what to do.
    """

    def peer_names(self, caller: ToolContext) -> Sequence[str] | None:
        """The names ``SendMessage``'s ``to`` may take for the caller: its teammates'
        names, ``"lead"`` and ``"*"``; ``None`` when the caller is in no team."""
        ...

    async def send_peer(self, caller: ToolContext, to: str, message: str) -> Sequence[PeerDelivery]:
        """Send ``message`` to a teammate by name, ``"*"`` or ``"lead"``: one delivery each."""
        ...

    async def create_team(self, caller: ToolContext, team_name: str, description: str) -> TeamInfo:
        """Make the caller the lead of a new team named ``team_name``."""
        ...

    async def delete_team(self, caller: ToolContext) -> TeamInfo:
        """End the caller's team: its teammates are closed; the team as it was."""
        ...

    async def add_teammate(
        self,
        caller: ToolContext,
        name: str,
        *,
        agent_type: str,
        prompt: str,
        model: str | None = None,
    ) -> SpawnedAgent:
        """Start teammate ``name`` of the team the caller leads, on ``prompt``."""
        ...


class TeamCreateArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``TeamCreate``'s arguments: Claude Code's ``team_name``, ``description``, ``agent_type``."""

    team_name: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=64,
            pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
            description="The team's name: letters, digits, '_', '.', '-'.",
        ),
    ]
    description: (
        Annotated[str, msgspec.Meta(max_length=1000, description="What the team is for.")] | None
    ) = None
    agent_type: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=256, description="The lead's own agent type (accepted, not used)."
            ),
        ]
        | None
    ) = None


class TeamDeleteArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``TeamDelete`` takes no arguments: it ends the caller's own team."""


def _info_json(info: TeamInfo, **extra: object) -> str:
    return encode_json(
        {
            "team_name": info.team_name,
            "lead_id": info.lead_id,
            "description": info.description,
            "members": [{"name": name, "agent_id": agent_id} for name, agent_id in info.members],
            **extra,
        }
    )


@final
@attrs.frozen
class TeamCreateTool:
    """``TeamCreate``: the caller becomes the lead of a new team."""

    host: TeamHost
    description: str = (
        "Create a team that you lead. Then start each teammate with the Agent tool, giving it "
        "a name (and team_name); teammates message each other and you with SendMessage "
        "(to: a teammate's name, '*' for everyone, 'lead' for you). An idle teammate wakes "
        "when a message or a new task reaches it. End the team with TeamDelete."
    )

    name = TEAM_CREATE
    arguments_type = TeamCreateArgs
    flags = FLAGS

    async def call(self, args: TeamCreateArgs, ctx: ToolContext, /) -> ToolResult:
        """Ask the host for the team; a refusal is a tool error saying why."""
        try:
            info = await self.host.create_team(ctx, args.team_name, args.description or "")
        except SubagentsError as exc:
            return ToolResult.error(str(exc), error=type(exc).__name__)
        return ToolResult.ok(_info_json(info), team_name=info.team_name)


@final
@attrs.frozen
class TeamDeleteTool:
    """``TeamDelete``: the caller's team ends, and its teammates are closed."""

    host: TeamHost
    description: str = (
        "End the team you lead: every teammate is closed (their transcripts stay), and "
        "messages to them are reported undeliverable from then on."
    )

    name = TEAM_DELETE
    arguments_type = TeamDeleteArgs
    flags = FLAGS

    async def call(self, args: TeamDeleteArgs, ctx: ToolContext, /) -> ToolResult:
        """Ask the host to end the caller's team; a refusal is a tool error saying why."""
        try:
            info = await self.host.delete_team(ctx)
        except SubagentsError as exc:
            return ToolResult.error(str(exc), error=type(exc).__name__)
        return ToolResult.ok(_info_json(info, deleted=True), team_name=info.team_name)
