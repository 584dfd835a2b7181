"""``subagents team`` as a user runs it: a subprocess on a folder with known contents, offline.

Issue 18's bar: at least three teammates exchange messages and revise work, the
board's dependencies hold (a check is claimed only once its survey is done), the
lead writes the agreed figures, and ``--json`` streams the team's events with
``seq``, ending with ``run_finished``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

COMMAND = [sys.executable, "-m", "subagents.cli", "team"]
TIMEOUT = 120
MARKERS = re.compile(r"TODO|FIXME|XXX", re.IGNORECASE)


def make_tree(root: Path) -> dict[str, tuple[int, int]]:
    """Folders whose quick ``TODO`` count differs from the checker's wider one."""
    files = {
        "app/main.py": "def main():\n    # TODO: parse args\n    return 0  # fixme\n",
        "app/util.py": "X = 1\n# FIXME later\n",
        "docs/guide.md": "# Guide\n\nTODO write more\nXXX check the links\n",
        "web/index.js": "console.log('todo list')\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    expected: dict[str, tuple[int, int]] = {}
    for name, text in files.items():
        folder = name.split("/")[0]
        hits = sum(1 for line in text.splitlines() if MARKERS.search(line))
        markers, count = expected.get(folder, (0, 0))
        expected[folder] = (markers + hits, count + (1 if hits else 0))
    return expected


def run_team(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return subprocess.run(
        [*COMMAND, *args, "--state-dir", str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )


def test_an_offline_team_surveys_checks_corrects_and_agrees(tmp_path: Path) -> None:
    project = tmp_path / "project"
    expected = make_tree(project)
    done = run_team(tmp_path, "Count the markers", "--cwd", str(project), "--json")
    assert done.returncode == 0, done.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "run_finished"
    seqs = [e["seq"] for e in events[:-1]]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    kinds = {e["type"] for e in events}
    assert {"team_created", "message_sent", "teammate_idle", "task_created"} <= kinds
    assert {"task_claimed", "task_completed"} <= kinds
    messages = [e for e in events if e["type"] == "message_sent"]
    senders = {e["from_name"] for e in messages if e["from_name"] != "lead"}
    assert len(senders) >= 3  # three teammates talk
    assert all(m["delivered"] for m in messages)
    assert all(m["from_id"] and m["to_id"] for m in messages)
    # The board's order: each check is claimed only after its survey was completed.
    created = {e["task_id"]: e for e in events if e["type"] == "task_created"}
    for claim in (e for e in events if e["type"] == "task_claimed"):
        for blocker in created[claim["task_id"]]["blocked_by"]:
            finished = [
                e["seq"]
                for e in events
                if e["type"] == "task_completed" and e["task_id"] == blocker
            ]
            assert finished
            assert finished[0] < claim["seq"]
    # The lead's table holds the re-verified figures, after real revisions.
    summary = events[-1]
    lead = next(a for a in summary["agents"] if a["agent_type"] == "team-lead")
    table = lead["result"]
    for folder, (markers, files) in expected.items():
        assert f"| {folder} | {markers} | {files} |" in table
    revisions = [int(r) for r in re.findall(r"\| (\d+) \|$", table, re.MULTILINE)]
    assert sum(revisions) >= 2  # app and docs: the quick count missed fixme and XXX


def test_plain_output_names_the_messages_and_the_board(tmp_path: Path) -> None:
    project = tmp_path / "project"
    expected = make_tree(project)
    done = run_team(tmp_path, "Count", "--cwd", str(project), "--teammates", "2")
    assert done.returncode == 0, done.stderr
    assert re.search(r"task \d+ claimed by (ada|grace): Survey `app`", done.stdout)
    assert re.search(r"(ada|grace) -> (ada|grace|lead): message", done.stdout)
    total = sum(markers for markers, _files in expected.values())
    assert f"Total: {total} marker lines in 3 folders." in done.stdout


def test_bad_teammate_counts_are_one_clear_line(tmp_path: Path) -> None:
    done = run_team(tmp_path, "x", "--teammates", "0", "--cwd", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == "subagents team: --teammates must be between 1 and 8."


def test_the_live_view_draws_the_board_beside_the_tree() -> None:
    """``subagents team``'s live view: the agent tree, and the board (tasks, owners,
    blockers) beside it, drawn from the team's board as it stands."""
    import io

    import trio
    from rich.console import Console

    from subagents.cli._live import LiveView
    from subagents.cli._team import render_board
    from subagents.runtime import ProgressTracker
    from subagents.teams import open_board

    class FakeTeam:
        name = "team"
        board: Any = None

    async def main() -> str:
        async with open_board() as board:
            first = await board.create("Survey `src`", "count")
            await board.create("Check `src`", "again", blocked_by=[first.id])
            await board.claim(first.id, "ada")
            team = FakeTeam()
            team.board = board
            out = io.StringIO()
            console = Console(file=out, width=160, force_terminal=False)
            view = LiveView(ProgressTracker(), console)
            view.side = lambda: render_board(team)  # type: ignore[arg-type]
            console.print(view.render())
            return out.getvalue()

    drawn = trio.run(main)
    assert "board of team" in drawn
    assert re.search(r"1\s+│\s+in_progress\s+│\s+ada\s+│\s+Survey `src`", drawn)
    assert re.search(r"2\s+│\s+pending\s+│\s+-\s+│\s+Check `src`\s+│\s+1", drawn)


async def test_with_an_api_key_the_same_command_drives_the_messages_api(tmp_path: Path) -> None:
    """``ANTHROPIC_API_KEY`` set: the lead and every teammate talk to the Messages API.

    The real ``anthropic`` SDK in the subprocess, against the loopback server;
    each request carries the tools of its member (the lead's task tools, each
    teammate's board and message tools), and the run ends once all are idle.
    """
    import trio

    from subagents import testing

    project = tmp_path / "project"
    make_tree(project)
    seen: list[set[str]] = []

    def reply(request: testing.RecordedRequest) -> testing.LoopbackReply:
        seen.append({tool["name"] for tool in request.json().get("tools", [])})
        return testing.SSEReply(testing.message_events([testing.text("Nothing to do here.")]))

    async with testing.open_loopback_anthropic(reply, max_requests=50) as server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
            "ANTHROPIC_API_KEY": "sk-loopback",
            "ANTHROPIC_BASE_URL": server.base_url,
        }
        with trio.fail_after(TIMEOUT):
            done = await trio.run_process(
                [
                    *COMMAND,
                    *("Count", "--cwd", str(project), "--teammates", "2", "--json"),
                    *("--state-dir", str(tmp_path / "state")),
                ],
                capture_stdout=True,
                capture_stderr=True,
                env=env,
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    events = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert events[-1]["type"] == "run_finished"
    assert len(seen) >= 3  # the lead and both teammates asked the model
    assert any({"TaskCreate", "TaskList"} <= tools for tools in seen)
    assert sum(1 for tools in seen if {"SendMessage", "TaskUpdate"} <= tools) >= 2
