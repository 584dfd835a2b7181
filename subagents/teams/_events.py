"""The events a team publishes on the kernel's bus, beside the agents' own, its board's included.

Each subclasses :class:`subagents.actors.Event`, so it carries the same
envelope (``seq`` and ``time`` stamped by the bus, and the agent it is about)
and crosses the CLI's JSON lines unchanged. Names follow issue 18 and Claude
Code's agent teams (https://code.claude.com/docs/en/agent-teams).
"""

from __future__ import annotations

from subagents.actors import Event

__all__ = [
    "BOARD_EVENT_TYPES",
    "MessageSent",
    "TaskClaimedEvent",
    "TaskCompletedEvent",
    "TaskCreatedEvent",
    "TaskUpdatedEvent",
    "TeamCreated",
    "TeamDeleted",
    "TeammateIdle",
]


class TeamCreated(Event, frozen=True, kw_only=True, tag="team_created"):
    """A team was created; the envelope's agent is its lead."""

    team_name: str
    description: str = ""


class TeamDeleted(Event, frozen=True, kw_only=True, tag="team_deleted"):
    """A team ended (its lead's ``TeamDelete``, or the scope that opened it closed)."""

    team_name: str


class TeammateIdle(Event, frozen=True, kw_only=True, tag="teammate_idle"):
    """A teammate finished its work and is idle: it holds no slot, and a message or a
    new claimable task wakes it. The envelope's agent is the teammate."""

    team_name: str
    teammate_name: str


class MessageSent(Event, frozen=True, kw_only=True, tag="message_sent"):
    """A peer message reached one recipient's mailbox (``delivered``) or did not (``reason``).

    The envelope's agent is the sender; ``from_id`` repeats it and ``to_id`` is
    the recipient, so a reader of the stream needs no lookup.
    """

    team_name: str
    from_id: str
    from_name: str
    to_id: str
    to_name: str
    delivered: bool
    reason: str | None = None


class _BoardChange(Event, frozen=True, kw_only=True):
    """A change of the team's task board, once it is on disk (the board's :class:`BoardEvent`).

    The envelope's agent is the member that made it (the lead when the program
    did); ``by`` is that member's name, ``None`` for the program.
    """

    team_name: str
    task_id: str
    subject: str
    status: str
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()
    by: str | None = None


class TaskCreatedEvent(_BoardChange, frozen=True, kw_only=True, tag="task_created"):
    """A task was added to the board."""


class TaskClaimedEvent(_BoardChange, frozen=True, kw_only=True, tag="task_claimed"):
    """A member claimed a task: it owns it now (``owner``), and no one else can."""


class TaskUpdatedEvent(_BoardChange, frozen=True, kw_only=True, tag="task_updated"):
    """A task's fields, owner or blockers changed (not a claim, not a completion)."""


class TaskCompletedEvent(_BoardChange, frozen=True, kw_only=True, tag="task_completed"):
    """A task was completed (its ``TaskCompleted`` hooks let it)."""


#: The bus event for each kind of board change.
BOARD_EVENT_TYPES: dict[str, type[_BoardChange]] = {
    "task_created": TaskCreatedEvent,
    "task_claimed": TaskClaimedEvent,
    "task_updated": TaskUpdatedEvent,
    "task_completed": TaskCompletedEvent,
}
