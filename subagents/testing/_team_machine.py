"""A Hypothesis state machine for teams: peer messages, idle teammates, closing, with the board.

:class:`TeamMachine` extends :class:`~subagents.testing.BoardMachine` (whose
rules keep driving a board of their own: create, claim, race, complete,
release, block, crash) with a real runtime and a real team, open in a Trio
loop on a thread of its own (:class:`TeamRunner`): a lead and three teammates,
each a full agent on a scripted provider. Its rules send peer messages (one
sender, or several senders at once, each sending two in order; to a name,
``"*"`` or ``"lead"``), put tasks on the team's board and claim or complete
them (also while teammates are busy), let the team go idle, close a teammate,
close the lead, and crash and
resume: the lead is closed at once (no grace: the team object is dropped, its
board closed, as when its process dies) and resumed from disk (its transcript,
the team's record, the board's journal). After every step the team is at
rest, and the invariants of issue 18 are checked:

- every message is delivered once, or reported undeliverable: a delivered
  message is in its recipient's conversation exactly once, an undeliverable
  one is not there and went to an agent that had ended; one sender's
  messages reach each recipient in the order they were sent;
- idle teammates use no slot: with the team at rest, no agent holds a
  ``max_threads`` slot;
- no idle teammate misses a claimable task: every task open to claim has been
  offered to every idle teammate, even one made while they were all busy;
- closing the lead leaves no teammate or board writer running: every agent
  is closed, the team has left the runtime's directory and its board refuses
  requests (:class:`~subagents.teams.BoardClosed`);
- a resumed team's board equals the board before the crash, and the team
  comes back with its name and its teammates by name and id (the message
  invariant above then also shows no message is delivered twice by a resume).

Run it as a test::

    from hypothesis import settings
    from subagents.testing import TeamMachine

    TestTeam = TeamMachine.TestCase
    TestTeam.settings = settings(max_examples=200, stateful_step_count=20, deadline=None)

Override :meth:`TeamMachine.reply` to try your own teammates' policy (it must
end each run without calling tools that message others, so a step can settle).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import attrs
import trio
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from subagents.actors import is_final
from subagents.runtime import (
    LimitsConfig,
    ModelRequest,
    Reply,
    Runtime,
    RuntimeConfig,
    ScriptedProvider,
    Teammate,
    TranscriptsConfig,
    open_runtime,
)
from subagents.teams import BoardClosed, BoardError, Task, Team
from subagents.testing._board_machine import BoardMachine

__all__ = ["Crash", "Sent", "TeamRunner", "TeamMachine"]

T = TypeVar("T")

#: Seconds a step may take before the machine gives up on it (a hang is a failure).
_STEP_TIMEOUT = 30.0


@attrs.frozen
class Crash:
    """One crash and resume: the team (board, name, members) before it and after."""

    board_before: tuple[Task, ...]
    board_after: tuple[Task, ...]
    team_before: tuple[str, tuple[tuple[str, str], ...]]
    team_after: tuple[str, tuple[tuple[str, str], ...]]


@attrs.frozen
class Sent:
    """One peer message as the machine sent it, and what the team said became of it."""

    token: str
    sender: str
    to_id: str
    delivered: bool
    reason: str | None
    order: int
    """When it was sent: one sender's messages have increasing orders."""


class TeamRunner:
    """A runtime with one team open in a Trio loop on a thread of its own.

    :meth:`run` runs an async function with the runtime and the team in that
    loop; :meth:`close` ends the team and the runtime and joins the thread.
    """

    def __init__(
        self, folder: Path, names: tuple[str, ...], reply: Callable[[ModelRequest], Reply]
    ) -> None:
        self.folder = folder
        self.names = names
        self.reply = reply
        self.rt: Runtime | None = None
        self.team: Team | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="team host", daemon=True)
        self._thread.start()
        if not self._ready.wait(_STEP_TIMEOUT):
            raise RuntimeError("the team host's event loop did not start")
        if self._error is not None:
            raise self._error

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:  # reported to the test thread by close()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        agents = {
            "lead": {"description": "The lead.", "prompt": "Lead.", "tools": ["SendMessage"]},
            "mate": {"description": "A teammate.", "prompt": "Work.", "tools": ["SendMessage"]},
        }
        # Transcripts on: a crash rule resumes the team from disk (transcripts, the
        # team's record, the board's journal), as after a real crash.
        config = RuntimeConfig(
            state_dir=self.folder,
            transcripts=TranscriptsConfig(enabled=True),
            limits=LimitsConfig(max_threads=len(self.names) + 1, close_grace_period=1.0),
        )
        async with (
            ScriptedProvider(policy=self.reply) as provider,
            open_runtime(
                config,
                cwd=self.folder,
                home=self.folder,
                env={},
                provider=provider,
                agents_json=json.dumps(agents),
            ) as rt,
            rt.team(
                "machine",
                "lead",
                "Lead the team.",
                teammates=[Teammate(name, "mate", "Wait for messages.") for name in self.names],
            ) as team,
        ):
            self.rt, self.team = rt, team
            await team.settled()
            self._ready.set()
            await self._stop.wait()

    def run(self, step: Callable[[Runtime, Team], Awaitable[T]]) -> T:
        """Run ``step(runtime, team)`` in the host's loop and return what it returns."""
        rt, team = self.rt, self.team
        assert rt is not None
        assert team is not None
        assert self._token is not None

        async def bounded() -> T:
            with trio.fail_after(_STEP_TIMEOUT):
                return await step(rt, team)

        return trio.from_thread.run(bounded, trio_token=self._token)

    def close(self) -> None:
        """End the team and the runtime, join the thread; raise what the loop raised."""
        if self._token is not None and self._stop is not None:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(_STEP_TIMEOUT)
        if self._thread.is_alive():
            raise RuntimeError("the team host did not stop")
        if self._error is not None:
            raise self._error


def _echo(request: ModelRequest) -> Reply:
    return Reply(text="noted")


class TeamMachine(BoardMachine):
    """Peer messages, idle teammates and closes against a real team, with the board's rules."""

    #: The teammates' names (the lead is ``"lead"``).
    teammates: ClassVar[tuple[str, ...]] = ("ada", "grace", "linus")

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Sent] = []
        self.ended: set[str] = set()
        self.lead_closed = False
        self.crashes: list[Crash] = []
        self._tokens = itertools.count()
        self.team_host = TeamRunner(self.folder / "team", self.teammates, self.reply)

    def teardown(self) -> None:
        try:
            self.team_host.close()
        finally:
            super().teardown()

    def reply(self, request: ModelRequest) -> Reply:
        """The teammates' (and lead's) policy: end each run at once with a short answer."""
        return _echo(request)

    # -- helpers ------------------------------------------------------------------------

    def _senders(self) -> list[str]:
        return ["lead", *self.teammates]

    def _send_all(self, plan: list[tuple[str, str]]) -> None:
        """Send each ``(sender, to)`` of ``plan``, senders at once, each sender's in order;
        then let the team settle."""
        numbers = [next(self._tokens) for _ in plan]  # increasing across steps: the send order
        tokens = [f"msg-{number}" for number in numbers]

        async def step(rt: Runtime, team: Team) -> list[tuple[int, Any]]:
            results: list[tuple[int, Any]] = []
            by_sender: dict[str, list[int]] = {}
            for index, (sender, _to) in enumerate(plan):
                by_sender.setdefault(sender, []).append(index)

            async def one_sender(indexes: list[int]) -> None:
                for index in indexes:
                    sender, to = plan[index]
                    deliveries = await team.send(team.agent_id(sender), to, tokens[index])
                    results.append((index, deliveries))

            async with trio.open_nursery() as nursery:
                for indexes in by_sender.values():
                    nursery.start_soon(one_sender, indexes)
            await team.settled()
            return results

        for index, deliveries in self.team_host.run(step):
            sender = plan[index][0]
            for delivery in deliveries:
                self.sent.append(
                    Sent(
                        tokens[index],
                        sender,
                        delivery.agent_id,
                        delivery.delivered,
                        delivery.reason,
                        numbers[index],
                    )
                )
                # An agent that has ended is reported, and only such an agent.
                assert delivery.delivered == (delivery.agent_id not in self.ended), delivery

    # -- rules ----------------------------------------------------------------------------

    @precondition(lambda self: not self.lead_closed)
    @rule(data=st.data())
    def message(self, data: st.DataObject) -> None:
        """One sender sends to a teammate by name, to ``"*"`` or to ``"lead"``."""
        sender = data.draw(st.sampled_from(self._senders()))
        to = data.draw(st.sampled_from([*self.teammates, "lead", "*"]))
        self._send_all([(sender, to)])

    @precondition(lambda self: not self.lead_closed)
    @rule(data=st.data())
    def burst(self, data: st.DataObject) -> None:
        """Several senders at once, each sending two messages in order."""
        senders = data.draw(
            st.lists(st.sampled_from(self._senders()), min_size=2, max_size=4, unique=True)
        )
        plan = []
        for sender in senders:
            to = data.draw(st.sampled_from([*self.teammates, "lead", "*"]))
            plan += [(sender, to), (sender, to)]
        self._send_all(plan)

    @precondition(lambda self: not self.lead_closed)
    @rule(data=st.data())
    def task_while_busy(self, data: st.DataObject) -> None:
        """Wake some teammates, then create a task while they run: the waker finds them
        busy, so each must be offered it as it goes idle (no lost wake-up)."""
        names = data.draw(st.lists(st.sampled_from(self.teammates), min_size=1, unique=True))

        async def step(rt: Runtime, team: Team) -> None:
            idle = team.idle_members()
            for name in names:
                if name in idle:
                    await rt.send_input(team.agent_id(name), "Check your work.", timeout=5.0)
            assert team.board is not None
            with contextlib.suppress(BoardError):  # a full board: the property still holds
                await team.board.create("a task made while they work", "machine")
            await team.settled()

        self.team_host.run(step)

    @precondition(lambda self: not self.lead_closed)
    @rule()
    def idle(self) -> None:
        """Let the team come to rest: every teammate idle."""

        async def step(rt: Runtime, team: Team) -> None:
            await team.settled()

        self.team_host.run(step)

    @precondition(lambda self: not self.lead_closed)
    @rule(data=st.data())
    def close_teammate(self, data: st.DataObject) -> None:
        """Close one teammate: messages to it are reported undeliverable from now on."""
        name = data.draw(st.sampled_from(self.teammates))

        async def step(rt: Runtime, team: Team) -> str:
            agent_id = team.agent_id(name)
            await rt.close(agent_id)
            await team.settled()
            return agent_id

        self.ended.add(self.team_host.run(step))

    @precondition(lambda self: not self.lead_closed)
    @rule()
    def close_lead(self) -> None:
        """Close the lead: its teammates and its board go with it."""

        async def step(rt: Runtime, team: Team) -> list[str]:
            await rt.close(team.lead_id)
            return [team.lead_id, *team]

        self.ended.update(self.team_host.run(step))
        self.lead_closed = True

    @precondition(lambda self: not self.lead_closed)
    @rule(data=st.data())
    def team_task(self, data: st.DataObject) -> None:
        """Change the team's board: create a task (maybe blocked), claim one, or complete one.

        What the board refuses (a blocked or owned task) is left as it is: the board's
        own rules are :class:`BoardMachine`'s; here the board only needs contents.
        """
        action = data.draw(st.sampled_from(["create", "claim", "complete"]))
        name = data.draw(st.sampled_from(self.teammates))
        pick = data.draw(st.integers(min_value=0, max_value=1 << 16))

        async def step(rt: Runtime, team: Team) -> None:
            board = team.board
            assert board is not None
            tasks = await board.list()
            try:
                if action == "create" or not tasks:
                    blocked_by = [tasks[pick % len(tasks)].id] if tasks and pick % 2 else []
                    await board.create(f"task {pick}", "machine", blocked_by=blocked_by)
                elif action == "claim":
                    await board.claim(tasks[pick % len(tasks)].id, name)
                else:
                    task = tasks[pick % len(tasks)]
                    if task.owner is not None:
                        await board.update(task.id, status="completed", by=task.owner)
            except BoardError:
                pass
            await team.settled()

        self.team_host.run(step)

    @precondition(lambda self: not self.lead_closed)
    @rule()
    def crash_and_resume(self) -> None:
        """Drop the team at once (its lead closed with no grace, as a dying process leaves
        it) and resume the lead from disk: the team must come back as it was."""

        async def step(rt: Runtime, team: Team) -> tuple[Crash, Team]:
            board = team.board
            assert board is not None
            before = await board.list()
            lead_id = team.lead_id
            team_before = (team.name, team.members)
            await rt.close(lead_id, grace=0)
            await rt.resume(lead_id)
            back = rt.services.teams.of(lead_id)
            assert back is not None, "the lead came back without its team"
            assert back is not team
            await back.settled()
            assert back.board is not None
            crash = Crash(before, await back.board.list(), team_before, (back.name, back.members))
            return crash, back

        crash, back = self.team_host.run(step)
        self.crashes.append(crash)
        self.team_host.team = back

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def a_resumed_team_is_the_team_before_the_crash(self) -> None:
        for crash in self.crashes:
            assert crash.board_after == crash.board_before, crash
            assert crash.team_after == crash.team_before, crash

    @invariant()
    def every_message_is_delivered_once_or_reported(self) -> None:
        sent = self.sent

        async def check(rt: Runtime, team: Team) -> None:
            texts = {
                agent_id: [m.text for m in rt.conversation(agent_id).messages]
                for agent_id in {s.to_id for s in sent}
            }
            for item in sent:
                seen = sum(1 for text in texts[item.to_id] if f"\n{item.token}\n" in text)
                if item.delivered:
                    assert seen == 1, f"{item} was read {seen} times"
                else:
                    assert seen == 0, f"{item} was reported undeliverable yet read"
                    assert item.reason, item
            # One sender's messages keep their order at each recipient.
            for to_id, lines in texts.items():
                positions = {
                    s.token: next(i for i, t in enumerate(lines) if f"\n{s.token}\n" in t)
                    for s in sent
                    if s.to_id == to_id and s.delivered
                }
                for sender in {s.sender for s in sent}:
                    mine = sorted(
                        (s.order, positions[s.token])
                        for s in sent
                        if s.to_id == to_id and s.delivered and s.sender == sender
                    )
                    assert [p for _o, p in mine] == sorted(p for _o, p in mine), (sender, to_id)

        if sent:
            self.team_host.run(check)

    @invariant()
    def no_idle_teammate_misses_a_claimable_task(self) -> None:
        """Every task open to claim has been offered to every idle teammate: none was
        created (or unblocked) while a teammate was busy and then never told of it."""

        async def check(rt: Runtime, team: Team) -> None:
            open_ids = {str(task["id"]) for task in team.claimable()}
            if not open_ids:
                return
            for name in team.idle_members():
                offered: set[str] = set()
                for message in rt.conversation(team.agent_id(name)).messages:
                    text = message.text
                    if "can be claimed" in text and "<task_board>" in text:
                        board = text.split("<task_board>", 1)[1].split("</task_board>", 1)[0]
                        offered |= {str(task["id"]) for task in json.loads(board)}
                assert open_ids <= offered, (name, sorted(open_ids - offered))

        self.team_host.run(check)

    @invariant()
    def idle_teammates_use_no_slot(self) -> None:
        async def check(rt: Runtime, team: Team) -> None:
            statuses = [rt.status(agent_id) for agent_id in [team.lead_id, *team]]
            assert all(is_final(s) for s in statuses), statuses
            assert rt.supervisor.statistics().live == 0

        self.team_host.run(check)

    @invariant()
    def closing_the_lead_leaves_nothing_running(self) -> None:
        if not self.lead_closed:
            return

        async def check(rt: Runtime, team: Team) -> None:
            assert rt.list() == [], rt.list()
            assert team.closed
            assert rt.services.teams.of(team.lead_id) is None
            board = team.board
            assert board is not None
            try:
                await board.list()
            except BoardClosed:
                return
            raise AssertionError("the team's board still answers after its lead was closed")

        self.team_host.run(check)
