"""A team comes back when its lead is resumed: same name, teammates, conversations, board.

Issue 18: "a team that resumes after a crash", with its board persisted in the
session's state dir. As Codex's ``resume_agent_from_rollout`` reopens the spawn
edges still open (openai/codex ``codex-rs/core/src/agent/control.rs``), resuming
the lead reopens its teammates (its children), and the team's record
(``subagents.teams._record``) brings the team itself back around them, its board
replayed from the same journal. A team ended on purpose (``TeamDelete``, the
``rt.team`` block left normally) stays ended, as Claude Code's ``TeamDelete``
removes a team's files (https://code.claude.com/docs/en/agent-teams).

These run on the real clock: the journal's fsync runs in a worker thread, which
an autojump clock would take for idleness.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from subagents import testing
from subagents.runtime import ModelRequest, Reply, Runtime, ScriptedProvider, Teammate
from subagents.teams import Task, Team, TeamRecord, read_team_record
from tests.runtime.world import World, tool_results
from tests.teams.test_team import TEAM, scripted, world_with_team

STEP = 30.0


async def settle(rt: Runtime, team: Team) -> None:
    with trio.fail_after(STEP):
        await team.settled()


async def fill_board(team: Team) -> tuple[Task, ...]:
    """Tasks in every state: completed, in progress (owned), pending and blocked."""
    board = team.board
    assert board is not None
    survey = await board.create("Survey src/", "Count the modules")
    check = await board.create("Check the survey", "Grep again", blocked_by=[survey.id])
    report = await board.create("Write the report", "From the check", blocked_by=[check.id])
    tests = await board.create("Survey tests/", "Count the tests")
    await board.claim(survey.id, "alice")
    await board.update(survey.id, status="completed", by="alice")
    await board.claim(tests.id, "bob")
    del report
    return await board.list()


def mentions(rt: Runtime, agent_id: str, token: str) -> int:
    """How many of the agent's inputs hold ``token`` (its replies, which may quote it, not)."""
    messages = rt.conversation(agent_id).messages
    return sum(m.text.count(token) for m in messages if m.role == "user")


async def test_a_team_comes_back_with_its_lead_from_the_same_journal(tmp_path: Path) -> None:
    world = world_with_team(tmp_path)
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
        rt.team("survey", "lead", "Lead the survey.", teammates=TEAM) as team,
    ):
        await settle(rt, team)
        before = await fill_board(team)
        delivered = await team.send(team.lead_id, "alice", "token-before-the-crash")
        assert [d.delivered for d in delivered] == [True]
        await settle(rt, team)
        lead_id, members = team.lead_id, team.members
        board_file = team.board_file
        # The lead closed with its team open: the team ends with it, not on purpose.
        await rt.close(lead_id)
        assert rt.services.teams.of(lead_id) is None
        assert team.closed
        assert not team.deleted
    assert board_file is not None
    record = read_team_record(world.state / "teams" / "records", lead_id)
    assert record == TeamRecord(
        name="survey",
        lead_id=lead_id,
        description="",
        board=board_file,
        members=members,
    )

    # Another runtime on the same state directory (another process, as `subagents resume`).
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        back = rt.services.teams.of(lead_id)
        assert back is not None
        await settle(rt, back)
        assert back.name == "survey"
        assert back.lead_id == lead_id
        assert back.members == members
        assert back.board_file == board_file
        assert back.board is not None
        assert await back.board.list() == before
        alice = back.agent_id("alice")
        for name, agent_id in members:  # each teammate reopened, under the lead
            assert rt.handle(agent_id).parent_id == lead_id
            assert rt.services.teams.of(agent_id) is back
            assert (seat := rt.board_seats.lookup(agent_id)) is not None
            assert seat.member == name
            assert seat.board is back.board
        # Delivered before the crash: in alice's conversation once, not delivered again.
        assert mentions(rt, alice, "token-before-the-crash") == 1
        # The team goes on: a new message is delivered once, the unblocked task claimable.
        again = await back.send(lead_id, "alice", "token-after-the-resume")
        assert [d.delivered for d in again] == [True]
        await settle(rt, back)
        assert mentions(rt, alice, "token-after-the-resume") == 1
        assert mentions(rt, alice, "token-before-the-crash") == 1
        check = next(t for t in before if t.subject == "Check the survey")
        claimed = await back.board.claim(check.id, "carol")
        assert claimed.owner == "carol"
        assert back.board_file == board_file


async def test_a_team_left_by_a_cancellation_comes_back(tmp_path: Path) -> None:
    """Ctrl-C (a cancelled ``rt.team`` block) does not delete the team: the lead resumes it."""
    world = world_with_team(tmp_path)
    seen: dict[str, object] = {}
    with trio.CancelScope() as cancelled:
        async with (
            ScriptedProvider(policies={"*": scripted()}) as provider,
            world.open(provider) as rt,
            rt.team("survey", "lead", "Lead the survey.", teammates=TEAM) as team,
        ):
            await settle(rt, team)
            seen["board"] = await fill_board(team)
            seen["lead"], seen["members"] = team.lead_id, team.members
            cancelled.cancel()
            await trio.sleep_forever()
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        lead_id = seen["lead"]
        assert isinstance(lead_id, str)
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        back = rt.services.teams.of(lead_id)
        assert back is not None
        assert back.members == seen["members"]
        assert back.board is not None
        assert await back.board.list() == seen["board"]


async def test_a_team_ended_on_purpose_stays_ended(tmp_path: Path) -> None:
    """Leaving ``rt.team`` normally deletes the team (its record goes): its lead comes back
    alone, and its teammates, closed with the team, stay closed."""
    world = world_with_team(tmp_path)
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        async with rt.team("survey", "lead", "Lead the survey.", teammates=TEAM) as team:
            await settle(rt, team)
        lead_id = team.lead_id
        assert team.deleted
        assert read_team_record(world.state / "teams" / "records", lead_id) is None
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        assert rt.services.teams.of(lead_id) is None
        assert [a.id for a in rt.list()] == [lead_id]


async def test_a_team_record_that_points_outside_the_teams_folder_is_ignored(
    tmp_path: Path,
) -> None:
    """The record is state-dir content: a board path that leaves ``teams/`` is refused."""
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "lead-1.json").write_text(
        json.dumps({"name": "x", "lead_id": "lead-1", "board": "teams/../../etc/passwd.jsonl"})
    )
    assert read_team_record(folder, "lead-1") is None
    assert read_team_record(folder, "../lead-1") is None
    (folder / "lead-2.json").write_text("{not json")
    assert read_team_record(folder, "lead-2") is None


@pytest.mark.parametrize("mates", [(), TEAM[:1]])
async def test_a_resumed_team_keeps_its_name_taken(
    tmp_path: Path, mates: tuple[Teammate, ...]
) -> None:
    """While a resumed team is open its name is taken, as any open team's."""
    world = world_with_team(tmp_path)
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
        rt.team("survey", "lead", "Lead.", teammates=mates) as team,
    ):
        await settle(rt, team)
        lead_id = team.lead_id
        await rt.close(lead_id)
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        back = rt.services.teams.of(lead_id)
        assert back is not None
        assert back is not team
        assert rt.services.teams.get("survey") is back
        assert [n for n, _ in back.members] == [m.name for m in mates]


async def test_a_team_a_lead_model_created_comes_back_with_it(tmp_path: Path) -> None:
    """``TeamCreate`` then ``Agent {name}``: the lead's own team, closed with it, comes back
    when it is resumed, teammate and task included; ``TaskList`` works again."""
    world = World(tmp_path)
    world.agent("lead", tools="TeamCreate, Agent, TaskCreate, TaskList")
    world.agent("alice")
    lead = scripted(
        testing.call("TeamCreate", team_name="review", description="Review the parser"),
        testing.call("Agent", description="a", prompt="Read.", subagent_type="alice", name="alice"),
        testing.call("TaskCreate", subject="Read parser.py", description="And list the bugs"),
    )
    async with (
        ScriptedProvider(policies={"lead": lead, "*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        handle = await rt.spawn("lead", "Lead.")
        await rt.wait([handle.agent_id], timeout=STEP)
        team = rt.services.teams.of(handle.agent_id)
        assert team is not None
        await settle(rt, team)
        assert team.board is not None
        before, members = await team.board.list(), team.members
        assert [t.subject for t in before] == ["Read parser.py"]
        assert [name for name, _ in members] == ["alice"]
    resumed = scripted(testing.call("TaskList"))
    async with (
        ScriptedProvider(policies={"lead": resumed, "*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        with trio.fail_after(STEP):
            await rt.resume(handle.agent_id, "Go on.")
        back = rt.services.teams.of(handle.agent_id)
        assert back is not None
        await settle(rt, back)
        assert (back.name, back.description, back.members) == (
            "review",
            "Review the parser",
            members,
        )
        assert back.board is not None
        assert await back.board.list() == before
        listed = tool_results(rt.conversation(handle.agent_id).messages)[-1]
        assert not listed.is_error
        assert "Read parser.py" in listed.content


async def test_a_message_still_in_a_mailbox_at_the_crash_is_delivered_once_after(
    tmp_path: Path,
) -> None:
    """The lead's ``SendMessage`` to a busy teammate was delivered to its mailbox, and the
    process ended before the teammate read it: resuming the lead delivers it again, once
    (the lead's transcript says it was delivered; alice's does not hold it)."""
    world = world_with_team(tmp_path)
    lead = scripted(testing.call("SendMessage", to="alice", message="token-in-the-mailbox"))

    def busy(request: ModelRequest) -> Reply:
        return testing.hang("Working.")

    async with (
        ScriptedProvider(policies={"lead": lead, "*": busy}) as provider,
        world.open(provider) as rt,
        rt.team("survey", "lead", "Lead.", teammates=TEAM[:1]) as team,
    ):
        lead_id = team.lead_id
        alice = team.agent_id("alice")
        await rt.wait([lead_id], timeout=STEP)
        sent = tool_results(rt.conversation(lead_id).messages)[0]
        assert json.loads(sent.content)["recipients"][0]["delivered"] is True
        assert mentions(rt, alice, "token-in-the-mailbox") == 0  # busy: still in its mailbox
        await rt.close(lead_id, grace=0)  # the mailbox goes with the process
    async with (
        ScriptedProvider(policies={"*": scripted()}) as provider,
        world.open(provider) as rt,
    ):
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        back = rt.services.teams.of(lead_id)
        assert back is not None
        await settle(rt, back)
        assert mentions(rt, alice, "token-in-the-mailbox") == 1
        # A second resume finds it read: not delivered a third time.
        await rt.close(lead_id)
        with trio.fail_after(STEP):
            await rt.resume(lead_id)
        again = rt.services.teams.of(lead_id)
        assert again is not None
        await settle(rt, again)
        assert mentions(rt, alice, "token-in-the-mailbox") == 1
