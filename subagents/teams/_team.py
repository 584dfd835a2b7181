"""A team: a lead and named teammates, each a full agent, in one supervised subtree.

As Claude Code's agent teams (https://code.claude.com/docs/en/agent-teams): a
lead starts teammates by name; teammates message each other and the lead by
name (``SendMessage {to, message}``, ``to`` a name, ``"*"`` or ``"lead"``); a
teammate that finishes its work is *idle* until a message or a new task wakes
it; the lead ends the team. Claude Code builds this on JSON inbox files, file
locks and polling; here it rests on the kernel:

- every teammate is a child of the lead, so closing the lead (or the scope
  that opened the team) closes every teammate, and the kernel's ``max_depth``
  and ``max_threads`` apply as to any agent;
- an idle teammate is an open agent whose run is final: it holds no
  ``max_threads`` slot, and input to it revives it with its context kept, so
  nothing polls and nothing waits on a timer;
- a peer message goes into the recipient's bounded mailbox: a busy teammate
  reads it at its next turn boundary, an idle one wakes on it. One sender's
  messages go out one at a time, in the order it sent them (a lock per
  sender), and each reaches its recipient exactly once or is reported
  undeliverable with the reason (it has ended, its mailbox stayed full, no
  slot was free to wake it): nothing is half delivered, because the kernel
  refuses before it enqueues.

The team drives agents only through :class:`TeamRuntime`, a ``Protocol``
that :class:`subagents.runtime.Runtime` satisfies, so this package needs
nothing above ``tools``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, final

import attrs
import trio

from subagents._exceptions import SubagentsError
from subagents.actors import (
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    Bus,
    Event,
    MailboxFull,
    NotFound,
    Shutdown,
    Status,
    WaitResult,
    is_final,
)
from subagents.teams._board import TaskBoard
from subagents.teams._events import BOARD_EVENT_TYPES, MessageSent, TeamDeleted, TeammateIdle
from subagents.teams._exceptions import TeamClosed, TeammateNameTaken, UnknownTeammate
from subagents.teams._messages import format_peer_message
from subagents.teams._task import BoardEvent
from subagents.teams._tools import format_board_data
from subagents.tools import (
    BROADCAST,
    LEAD_NAME,
    SEND_INPUT_WAIT_SECONDS,
    PeerDelivery,
    TeamInfo,
)

if TYPE_CHECKING:
    from subagents.teams._directory import TeamDirectory

__all__ = ["FORMING_WAIT_SECONDS", "AgentIdentity", "Team", "TeamRuntime", "TeamStatistics"]

#: A teammate's name: what ``SendMessage``'s ``to`` takes.
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: How long a message sent while the team is still starting its first teammates
#: waits for them (:meth:`Team.formed`) before it is sent to whoever is there.
FORMING_WAIT_SECONDS: Final = 60.0
#: The longest single kernel wait of :meth:`Team.settled` (it waits again after).
SETTLE_STEP_SECONDS: Final = 3600.0
#: Names no teammate may take: the lead's (ours and Claude Code's) and the broadcast.
_RESERVED: Final = frozenset({LEAD_NAME, "team-lead", BROADCAST})


class AgentIdentity(Protocol):
    """Who an agent is, as the runtime reports it (:class:`~subagents.runtime.AgentHandle`)."""

    @property
    def agent_id(self) -> str: ...
    @property
    def nickname(self) -> str: ...
    @property
    def depth(self) -> int: ...
    @property
    def parent_id(self) -> str | None: ...


class TeamRuntime(Protocol):
    """What a team needs from the runtime that runs its agents (``Runtime`` has it all)."""

    @property
    def bus(self) -> Bus: ...

    async def spawn(
        self,
        agent_type: str,
        prompt: str,
        *,
        description: str | None = None,
        model: str | None = None,
        parent: str | None = None,
        on_init: Callable[[str], None] | None = None,
        nickname: str | None = None,
    ) -> AgentIdentity: ...

    async def send_input(
        self, agent_id: str, text: str, *, timeout: float | None = None
    ) -> Status: ...

    def status(self, agent_id: str) -> Status: ...

    async def wait(
        self, agent_ids: Iterable[str], *, timeout: float, mode: Literal["any", "all"] = "any"
    ) -> WaitResult: ...

    def handle(self, agent_id: str) -> AgentIdentity: ...

    async def close(self, agent_id: str) -> Status: ...


@attrs.frozen
class TeamStatistics:
    """A team's counters: peer messages delivered and reported undeliverable, idles."""

    members: int
    delivered: int
    undeliverable: int
    idles: int


def _ended(status: Status) -> bool:
    return isinstance(status, Shutdown | NotFound)


@final
class Team:
    """One team: its lead, its named teammates, its peer messages and idle notices.

    Made by :meth:`TeamDirectory.create` (or :meth:`subagents.runtime.Runtime.team`);
    valid until :meth:`close`. Every method is safe from any task of the Trio
    run that made it.
    """

    __slots__ = (
        "_board_change",
        "_by_id",
        "_claimable",
        "_delivered",
        "_directory",
        "_formed",
        "_idles",
        "_locks",
        "_members",
        "_offered",
        "_reserved",
        "_runtime",
        "_undeliverable",
        "_waking",
        "board",
        "board_file",
        "closed",
        "deleted",
        "description",
        "lead_id",
        "name",
        "on_close",
        "on_join",
    )

    def __init__(
        self,
        runtime: TeamRuntime,
        name: str,
        lead_id: str,
        *,
        description: str = "",
        directory: TeamDirectory | None = None,
        forming: tuple[str, ...] = (),
        board_file: str | None = None,
    ) -> None:
        self._runtime = runtime
        self.name = name
        self.lead_id = lead_id
        self.description = description
        self._directory = directory
        #: Teammate name -> agent id, in the order they joined.
        self._members: dict[str, str] = {}
        #: Agent id -> name, the lead's included.
        self._by_id: dict[str, str] = {lead_id: LEAD_NAME}
        #: Sender id -> the lock that keeps its messages in order (one per member).
        self._locks: dict[str, trio.Lock] = {}
        self._delivered = 0
        self._undeliverable = 0
        self._idles = 0
        self.closed = False
        #: Set when the team was ended on purpose (:meth:`close`): it does not come back
        #: when its lead is resumed. A team that ended with its lead does.
        self.deleted = False
        #: The board's journal, relative to the state directory (``None``: in memory).
        self.board_file = board_file
        #: Names held for the teammates the team starts with (``forming``): the lead
        #: may name them before they run, and its messages wait for :meth:`formed`.
        self._reserved: set[str] = set()
        self._formed = trio.Event()
        #: The team's task board, when it has one (:meth:`Runtime.team` opens it).
        self.board: TaskBoard | None = None
        #: Called with ``(agent_id, name)`` as each teammate joins, before its first
        #: turn (the runtime seats it at the board there).
        self.on_join: Callable[[str, str], object] | None = None
        #: Called once when the team ends (the runtime closes its board there).
        self.on_close: Callable[[], None] | None = None
        #: Set when a task may have become claimable; :meth:`run_waker` wakes idle teammates.
        self._claimable = trio.Event()
        #: Wake-ups under way (:meth:`wake_idle`): the team is not settled meanwhile.
        self._waking = 0
        #: Counts the board changes that may have made a task claimable; with
        #: ``_offered`` (teammate name -> the count last offered to it) a teammate
        #: busy when a change landed is offered it as it goes idle, once.
        self._board_change = 0
        self._offered: dict[str, int] = {}
        for name in forming:
            self._check_name(name)
            self._members[name] = ""
            self._reserved.add(name)
        if not forming:
            self._formed.set()

    def __repr__(self) -> str:
        return f"<Team {self.name!r} lead={self.lead_id} members={len(self._members)}>"

    # -- who is in it ---------------------------------------------------------------------

    @property
    def members(self) -> tuple[tuple[str, str], ...]:
        """``(name, agent_id)`` of every teammate (not the lead), in the order they joined."""
        return tuple((name, agent_id) for name, agent_id in self._members.items() if agent_id)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._by_id

    def __iter__(self) -> Iterator[str]:
        """The teammates' agent ids (not the lead's)."""
        return iter(tuple(agent_id for agent_id in self._members.values() if agent_id))

    def name_of(self, agent_id: str) -> str | None:
        """The member's name (``"lead"`` for the lead); ``None`` for an agent not in the team."""
        return self._by_id.get(agent_id)

    def agent_id(self, name: str) -> str:
        """The agent id of the member called ``name`` (``"lead"`` for the lead)."""
        if name in (LEAD_NAME, "team-lead"):
            return self.lead_id
        try:
            return self._members[name]
        except KeyError:
            raise UnknownTeammate(name, self.name, list(self._members)) from None

    def peer_names(self, agent_id: str) -> tuple[str, ...]:
        """What ``SendMessage``'s ``to`` may be for member ``agent_id``: names, lead, ``*``."""
        me = self._by_id.get(agent_id)
        names = [name for name in self._members if name != me]
        if me != LEAD_NAME:
            names += [LEAD_NAME, "team-lead"]
        return (*names, BROADCAST)

    def idle_members(self) -> tuple[str, ...]:
        """The teammates that are idle now: open, their last run over (no slot held)."""
        return tuple(
            name
            for name, agent_id in self._members.items()
            if agent_id
            and is_final(status := self._runtime.status(agent_id))
            and not _ended(status)
        )

    def running_members(self) -> tuple[str, ...]:
        """The teammates working now (each holding a ``max_threads`` slot)."""
        return tuple(
            name
            for name, agent_id in self._members.items()
            if agent_id
            and not is_final(status := self._runtime.status(agent_id))
            and not _ended(status)
        )

    def info(self) -> TeamInfo:
        """The team as the tools report it."""
        return TeamInfo(self.name, self.lead_id, self.description, self.members)

    def statistics(self) -> TeamStatistics:
        """The team's counters now."""
        return TeamStatistics(
            members=len(self.members),
            delivered=self._delivered,
            undeliverable=self._undeliverable,
            idles=self._idles,
        )

    # -- growing it -----------------------------------------------------------------------

    async def add(
        self,
        name: str,
        agent_type: str,
        prompt: str,
        *,
        model: str | None = None,
    ) -> str:
        """Start teammate ``name`` (an ``agent_type`` agent, a child of the lead) on ``prompt``.

        Returns its agent id once it runs. The prompt is preceded by a line
        telling it its name, its team and how to message its peers. Raises
        :class:`TeammateNameTaken` for a taken, reserved or malformed name,
        :class:`TeamClosed` once the team has ended, and the runtime's errors
        (unknown type, limit reached) as they are.
        """
        if self.closed:
            raise TeamClosed(self.name)
        if name in self._reserved:
            self._reserved.discard(name)
        else:
            self._check_name(name)
        others = ", ".join(n for n, agent_id in self._members.items() if agent_id) or "none yet"
        note = (
            f"You are {name}, a teammate in team {self.name}. Message a teammate or the lead "
            "with SendMessage (to: a teammate's name, 'lead', or '*' for everyone); messages "
            f"from them reach you between your turns. Teammates so far: {others}.\n\n"
        )
        # Reserved before the spawn, so two concurrent adds cannot take one name.
        self._members[name] = ""

        def joined(agent_id: str) -> None:
            # Before the teammate's first turn: its first SendMessage finds its team.
            self._members[name] = agent_id
            self._by_id[agent_id] = name
            if self._directory is not None:
                self._directory.joined(self, agent_id)
            if self.on_join is not None:
                self.on_join(agent_id, name)

        try:
            spawned = await self._runtime.spawn(
                agent_type,
                note + prompt,
                description=name,
                model=model,
                parent=self.lead_id,
                on_init=joined,
                nickname=name,
            )
        except BaseException:  # re-raised: the name is free again
            agent_id = self._members.pop(name, "")
            self._by_id.pop(agent_id, None)
            if self._directory is not None and agent_id:
                self._directory.left(agent_id)
            raise
        return spawned.agent_id

    def formed(self) -> None:
        """The teammates the team started with are all running (or failed to start):
        messages held for them go out now. A reserved name never added is dropped."""
        for name in self._reserved:
            if self._members.get(name) == "":
                del self._members[name]
        self._reserved.clear()
        self._formed.set()

    def rejoin(self, name: str, agent_id: str) -> None:
        """Take teammate ``name`` (agent ``agent_id``) back into a resumed team, as it was.

        Called when a lead is resumed, before its teammates are reopened, so each
        finds its team and its seat at the board from its first turn. A teammate
        that does not come back stays a member that has ended: a message to it is
        reported undeliverable, not refused as an unknown name.
        """
        if self.closed:
            raise TeamClosed(self.name)
        self._check_name(name)
        self._members[name] = agent_id
        self._by_id[agent_id] = name
        if self._directory is not None:
            self._directory.joined(self, agent_id)
        if self.on_join is not None:
            self.on_join(agent_id, name)

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise TeammateNameTaken(
                str(name),
                self.name,
                "a teammate's name is 1-64 letters, digits, '_', '.' or '-', starting with a "
                "letter or digit",
            )
        if name in _RESERVED:
            raise TeammateNameTaken(name, self.name, f"{name!r} is reserved; choose another")
        if name in self._members:
            raise TeammateNameTaken(name, self.name, "a teammate has that name already")

    # -- messages ---------------------------------------------------------------------------

    def recipients(self, from_id: str, to: str) -> list[tuple[str, str]]:
        """``(name, agent_id)`` of each member ``to`` names for sender ``from_id``.

        ``"*"`` is every member but the sender, the lead included; ``"lead"`` the
        lead; anything else a teammate's name (:class:`UnknownTeammate` if none).
        """
        if to == BROADCAST:
            everyone = [(LEAD_NAME, self.lead_id), *self._members.items()]
            return [(name, agent_id) for name, agent_id in everyone if agent_id != from_id]
        return [(LEAD_NAME if to == "team-lead" else to, self.agent_id(to))]

    async def send(self, from_id: str, to: str, message: str) -> list[PeerDelivery]:
        """Send ``message`` from member ``from_id`` to ``to``; one delivery per recipient.

        Each recipient gets the message once, inside a delimited block naming
        the sender, at its next turn boundary (an idle one wakes on it), or the
        delivery says why not. One sender's messages keep their order.
        ``from_id`` need not be a member (the embedding program may speak for
        the lead with the lead's id). Raises :class:`UnknownTeammate` for a name
        not in the team.
        """
        if not self._formed.is_set():
            with trio.move_on_after(FORMING_WAIT_SECONDS):
                await self._formed.wait()
        sender = self._by_id.get(from_id, from_id)
        targets = self.recipients(from_id, to)
        framed = format_peer_message(self.name, sender, from_id, message)
        lock = self._locks.get(from_id)
        if lock is None:
            lock = self._locks[from_id] = trio.Lock()
        deliveries: list[PeerDelivery] = []
        async with lock:
            for name, agent_id in targets:
                delivery = await self._deliver(name, agent_id, framed)
                deliveries.append(delivery)
                if delivery.delivered:
                    self._delivered += 1
                else:
                    self._undeliverable += 1
                await self._publish(
                    MessageSent,
                    from_id,
                    team_name=self.name,
                    from_id=from_id,
                    from_name=sender,
                    to_id=agent_id,
                    to_name=name,
                    delivered=delivery.delivered,
                    reason=delivery.reason,
                )
        return deliveries

    async def _deliver(
        self, name: str, agent_id: str, framed: str, *, timeout: float = SEND_INPUT_WAIT_SECONDS
    ) -> PeerDelivery:
        if agent_id == "":
            return PeerDelivery(name, agent_id, False, f"{name} is still starting; try again")
        if _ended(self._runtime.status(agent_id)):
            return PeerDelivery(name, agent_id, False, f"{name} has ended")
        try:
            await self._runtime.send_input(agent_id, framed, timeout=timeout)
        except (AgentClosed, AgentNotFound):
            return PeerDelivery(name, agent_id, False, f"{name} has ended")
        except MailboxFull:
            return PeerDelivery(
                name,
                agent_id,
                False,
                f"{name}'s mailbox stayed full for {timeout:g} s; try again later",
            )
        except AgentLimitReached:
            return PeerDelivery(
                name,
                agent_id,
                False,
                f"{name} is idle and no slot is free to wake it; try again once a teammate is idle",
            )
        except SubagentsError as exc:
            return PeerDelivery(name, agent_id, False, str(exc))
        return PeerDelivery(name, agent_id, True)

    async def redeliver(self, agent_id: str, framed: str) -> PeerDelivery:
        """Deliver ``framed`` (a message :meth:`send` framed before the process ended, which
        its recipient never read) to member ``agent_id`` again, once; as :meth:`send`
        counts it. Called when a team is resumed."""
        name = self._by_id.get(agent_id, agent_id)
        delivery = await self._deliver(name, agent_id, framed)
        if delivery.delivered:
            self._delivered += 1
        else:
            self._undeliverable += 1
        return delivery

    # -- idle -------------------------------------------------------------------------------

    async def went_idle(self, agent_id: str) -> None:
        """Teammate ``agent_id`` finished its work: say so on the bus (``teammate_idle``).

        The runtime calls this once per idle, after the ``TeammateIdle`` hooks
        let it go idle.
        """
        name = self._members_name(agent_id)
        if name is None:
            return
        self._idles += 1
        await self._publish(TeammateIdle, agent_id, team_name=self.name, teammate_name=name)
        # A task made claimable while this teammate was busy found it not idle, so the
        # waker passed it by: offer it now (the note waits in its mailbox and wakes it
        # as its run ends). Once per board change, so an offer it ignores is not repeated.
        change = self._board_change
        if self._offered.get(name, 0) < change and not self.closed:
            tasks = self.claimable()
            if tasks:
                # Without waiting for room: this teammate's own task is the one that
                # would make it (a full mailbox wakes it anyway, and it comes back here).
                note = _claimable_note(tasks)
                if (await self._deliver(name, agent_id, note, timeout=0)).delivered:
                    self._offered[name] = change

    async def wake_idle(self, note: str) -> tuple[str, ...]:
        """Give ``note`` to every idle teammate, which wakes it; the names woken.

        What the board calls when a task becomes claimable: idle teammates
        wake on it instead of polling for it. A teammate that cannot be woken
        now (no slot free) stays idle and is left out.
        """
        woken = []
        change = self._board_change
        self._waking += 1
        try:
            for name in self.idle_members():
                delivery = await self._deliver(name, self._members[name], note)
                if delivery.delivered:
                    self._offered[name] = change
                    woken.append(name)
        finally:
            self._waking -= 1
        return tuple(woken)

    async def settled(self, *, step: float = SETTLE_STEP_SECONDS) -> None:
        """Return once the whole team is at rest: the lead and every teammate final (idle),
        with no wake-up pending. Each wait is a kernel wait for a status change (bounded
        by ``step`` seconds, then waited again), never a poll."""
        while not self.closed:
            # A teammate that has ended (one not brought back by a resume) waits for nothing.
            ids = [a for a in (self.lead_id, *self) if not _ended(self._runtime.status(a))]
            if all(is_final(self._runtime.status(agent_id)) for agent_id in ids):
                # A wake-up just asked for (or under way) gets its turn before deciding.
                await trio.lowlevel.checkpoint()
                quiet = not self._claimable.is_set() and not self._waking
                if quiet and all(is_final(self._runtime.status(a)) for a in ids):
                    return
                continue
            await self._runtime.wait(ids, timeout=step, mode="all")

    # -- the board ----------------------------------------------------------------------

    def on_board_event(self, event: BoardEvent) -> None:
        """The board's ``publish``: its change on the bus, and idle teammates woken if a
        task may have become claimable (created, or unblocked by a completion).

        Synchronous and never blocking, as the board requires: the waking is done
        by :meth:`run_waker`.
        """
        kind = BOARD_EVENT_TYPES[event.kind]
        task = event.task
        who = self.lead_id if event.by is None else self._members.get(event.by, self.lead_id)
        bus = self._runtime.bus
        if bus.wants(kind):
            bus.publish_nowait(
                kind(
                    **self._envelope(who),
                    team_name=self.name,
                    task_id=task.id,
                    subject=task.subject,
                    status=task.status,
                    owner=task.owner,
                    blocked_by=task.blocked_by,
                    by=event.by,
                )
            )
        if event.kind in ("task_created", "task_completed") or (
            event.kind == "task_updated" and task.owner is None and task.status == "pending"
        ):
            self._board_change += 1
            self._claimable.set()

    def claimable(self) -> tuple[dict[str, object], ...]:
        """The board's tasks a member may claim now: pending, unowned, with no open blocker."""
        board = self.board
        if board is None:
            return ()
        return tuple(
            {"id": task.id, "subject": task.subject}
            for task in board.snapshot()
            if task.status == "pending" and task.owner is None and not board.blockers(task)
        )

    async def run_waker(self) -> None:
        """Wake the idle teammates each time a task may have become claimable; runs until
        cancelled (by the scope that opened the team). Nothing polls: it waits on an event
        :meth:`on_board_event` sets, and several changes in a row wake each teammate once."""
        while True:
            await self._claimable.wait()
            self._claimable = trio.Event()
            tasks = self.claimable()
            if tasks and not self.closed:
                await self.wake_idle(_claimable_note(tasks))

    def _members_name(self, agent_id: str) -> str | None:
        name = self._by_id.get(agent_id)
        return None if name is None or name == LEAD_NAME else name

    # -- ending -----------------------------------------------------------------------------

    async def close(self) -> None:
        """End the team: every teammate still open is closed; idempotent.

        The lead is left as it is (its ``TeamDelete`` ends its team, not itself).
        A team ended this way is deleted: resuming its lead does not bring it back.
        """
        if self.closed:
            return
        self.closed = True
        self.deleted = True
        for agent_id in tuple(self._members.values()):
            if agent_id and not _ended(self._runtime.status(agent_id)):
                with contextlib.suppress(AgentNotFound, AgentClosed):
                    await self._runtime.close(agent_id)
        self.ended()
        await self._publish(TeamDeleted, self.lead_id, team_name=self.name)

    def ended(self) -> None:
        """Mark the team ended without closing any agent (the runtime is closing them all):
        it leaves the directory and its board closes; idempotent. Unless :meth:`close`
        ended it, its record stays, and resuming its lead brings it back."""
        self.closed = True
        if self._directory is not None:
            self._directory.removed(self)
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()

    # -- events -----------------------------------------------------------------------------

    async def _publish(self, kind: type[Event], agent_id: str, **fields: Any) -> None:
        bus = self._runtime.bus
        if not bus.wants(kind):
            return
        envelope = self._envelope(agent_id)
        if bus.has_lossless_subscribers:
            await bus.make_room()
        bus.publish_nowait(kind(**envelope, **fields))

    def _envelope(self, agent_id: str) -> dict[str, Any]:
        try:
            who = self._runtime.handle(agent_id)
        except AgentNotFound:
            return {"agent_id": agent_id, "parent_id": None, "depth": 0, "nickname": ""}
        return {
            "agent_id": agent_id,
            "parent_id": who.parent_id,
            "depth": who.depth,
            "nickname": who.nickname,
        }


def _claimable_note(tasks: tuple[dict[str, object], ...]) -> str:
    """What an idle teammate is told when tasks on its board can be claimed."""
    return (
        "New tasks on your team's board can be claimed (TaskUpdate with status "
        "in_progress makes you the owner; TaskList shows them all):\n"
        + format_board_data(list(tasks))
    )
