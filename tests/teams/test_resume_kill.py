"""``kill -9`` in the middle of ``subagents team``, then the lead resumed: the team is back.

A real subprocess runs the real command line (``team_crash_cli.py``: the
offline team with a fixed script) until the team is mid-work (a teammate in a
model call, a task hers and in progress), and is killed with SIGKILL: nothing
of the process runs after it. Resuming the lead from the same state directory
(what ``subagents resume`` calls) must bring back the same team: its name, its
teammates by name and id, each under the lead with its conversation, its board
from the same journal (same tasks, owners, statuses, blockers), and the
message delivered before the kill delivered once, not again.

As tests/reliability/test_signals.py runs ``subagents run`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from subagents import testing
from subagents.runtime import RuntimeConfig, ScriptedProvider, open_runtime
from subagents.teams import TaskAlreadyClaimed, TaskBlocked, open_board, read_team_record
from tests.teams.team_crash_cli import EXPECTED_BOARD, TOKEN

HARNESS = Path(__file__).with_name("team_crash_cli.py")
#: Bound on the team reaching the state the kill interrupts.
TIMEOUT = 60.0


def _board(tasks: object) -> tuple[tuple[object, ...], ...]:
    return tuple(
        (t.id, t.subject, t.status, t.owner, tuple(t.blocked_by))  # type: ignore[attr-defined]
        for t in tasks  # type: ignore[attr-defined]
    )


def _lead_id(stdout: Path) -> str:
    for line in stdout.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "team_created":
            return str(event["agent_id"])
    raise AssertionError(f"no team_created event in:\n{stdout.read_text()[:2000]}")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_team_killed_mid_work_resumes_with_the_same_board(tmp_path: Path) -> None:
    state = tmp_path / "state"
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# A project\n")
    ready = tmp_path / "ready"
    stdout = tmp_path / "stdout.jsonl"
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    with stdout.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                str(HARNESS),
                str(ready),
                "Survey the folder",
                "--teammates",
                "3",
                "--cwd",
                str(folder),
                "--state-dir",
                str(state),
                "--json",
            ],
            stdout=out,
            stderr=subprocess.PIPE,
            env=environment,
            cwd=tmp_path,
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            while not ready.exists():  # the harness writes it once; the process may fail first
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the team never reached its mid-work state"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            assert process.wait(TIMEOUT) == -signal.SIGKILL
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stderr is not None:
                process.stderr.close()
    lead_id = _lead_id(stdout)
    record = read_team_record(state / "teams" / "records", lead_id)
    assert record is not None, "the team's record was not on disk at the kill"
    assert record.name == "team"
    assert [name for name, _ in record.members] == ["ada", "grace", "linus"]
    assert record.board is not None
    trio.run(_resume_and_check, state, folder, lead_id, record.members, state / record.board)


async def _resume_and_check(
    state: Path,
    folder: Path,
    lead_id: str,
    members: tuple[tuple[str, str], ...],
    journal: Path,
) -> None:
    """Resume the lead in a runtime of this process; the team must be as it was."""
    # The board before: the journal as the kill left it, replayed on its own.
    async with open_board(journal) as board:
        before = await board.list()
    assert _board(before) == EXPECTED_BOARD
    agents = {
        "team-lead": {"description": "Lead.", "prompt": "Lead.", "tools": ["SendMessage"]},
        "teammate": {"description": "Mate.", "prompt": "Work.", "tools": ["SendMessage"]},
    }
    async with (
        # Resumed agents answer without tools: the board stays as the kill left it.
        ScriptedProvider(policy=lambda request: testing.say("Resumed.")) as provider,
        open_runtime(
            RuntimeConfig(state_dir=state),
            cwd=folder,
            home=folder,
            env={},
            provider=provider,
            agents_json=json.dumps(agents),
        ) as rt,
    ):
        with trio.fail_after(TIMEOUT):
            await rt.resume(lead_id)
        team = rt.services.teams.of(lead_id)
        assert team is not None, "the lead came back without its team"
        with trio.fail_after(TIMEOUT):
            await team.settled()
        assert team.name == "team"
        assert team.members == members
        assert team.board is not None
        assert await team.board.list() == before
        ada = team.agent_id("ada")
        for name, agent_id in members:
            assert rt.handle(agent_id).parent_id == lead_id, name
            seat = rt.board_seats.lookup(agent_id)
            assert seat is not None
            assert seat.member == name
        # ada was in a model call: she carried on, and the message reached her once.
        texts = [m.text for m in rt.conversation(ada).messages]
        assert sum(TOKEN in t for t in texts) == 1, texts
        assert texts[-1] == "Resumed."
        # The board's rules hold across the kill: ada's task cannot be claimed by another.
        with pytest.raises(TaskAlreadyClaimed):
            await team.board.claim("2", "grace", timeout=TIMEOUT)
        with pytest.raises(TaskBlocked):
            await team.board.claim("3", "grace", timeout=TIMEOUT)
