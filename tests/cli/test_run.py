"""``subagents run`` as a user runs it: a subprocess on a directory with known contents."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from subagents.runtime import load_transcript
from tests.cli.helpers import rest_of

COMMAND = [sys.executable, "-m", "subagents.cli"]
TIMEOUT = 120


def make_tree(root: Path) -> dict[str, dict[str, int]]:
    """A small project; returns what a correct survey must find per folder."""
    files = {
        "app/main.py": "import sys\n\n\ndef main():\n    # TODO: parse args\n    return 0\n",
        "app/util.py": "X = 1\n# FIXME later\n",
        "app/tests/test_util.py": "def test_x():\n    assert True\n",
        "docs/guide.md": "# Guide\n\nTODO write more\n",
        "web/index.js": "console.log('hi')\n",
        "web/style.css": "body {}\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    expected: dict[str, dict[str, int]] = {}
    for name, text in files.items():
        folder = name.split("/")[0]
        entry = expected.setdefault(folder, {"files": 0, "lines": 0, "todo_fixme": 0})
        entry["files"] += 1
        entry["lines"] += text.count("\n")
        entry["todo_fixme"] += sum(
            1 for line in text.splitlines() if "TODO" in line or "FIXME" in line
        )
    return expected


def run(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    environment.update(env or {})
    return subprocess.run(
        [*COMMAND, "run", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=environment,
        cwd=tmp_path,
        check=False,
    )


def facts_of(text: str) -> dict[str, Any]:
    """The fenced JSON block at the end of the lead's summary."""
    blocks = re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert blocks, text
    return json.loads(blocks[-1])  # type: ignore[no-any-return]


def test_an_offline_run_surveys_the_directory_correctly(tmp_path: Path) -> None:
    project = tmp_path / "project"
    expected = make_tree(project)
    done = run(tmp_path, "Survey this project", "--cwd", str(project), "--state-dir",
               str(tmp_path / "state"), "--max-threads", "3", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    required = {"seq", "type", "agent_id", "parent_id", "depth", "nickname", "time"}
    assert all(required <= set(line) for line in lines)
    assert {e["status"]["kind"] for e in lines if e["type"] == "status_changed"} <= {
        "pending_init", "running", "completed", "errored", "shutdown",
    }  # fmt: skip
    summary = lines[-1]
    assert summary["type"] == "run_finished"
    lead = next(a for a in summary["agents"] if a["agent_id"] == summary["agent_id"])
    facts = facts_of(lead["result"])
    found = {
        f["folder"]: {k: f[k] for k in ("files", "lines", "todo_fixme")} for f in facts["folders"]
    }
    assert found == expected
    explorers = [a for a in summary["agents"] if a["agent_type"] == "Explore"]
    assert len(explorers) == len(expected)
    assert all(a["status"]["kind"] == "completed" for a in summary["agents"])
    # every agent's transcript is on disk and loads
    for path in (tmp_path / "state").rglob("agent-*.jsonl"):
        assert load_transcript(path).results


def test_plain_output_when_stdout_is_not_a_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_tree(project)
    done = run(tmp_path, "Survey", "--cwd", str(project), "--state-dir", str(tmp_path / "s"))
    assert done.returncode == 0, done.stderr
    assert "provider: scripted" in done.stdout
    assert "\x1b[" not in done.stdout  # no terminal escapes
    for folder in ("app/", "docs/", "web/"):
        assert folder in done.stdout
    assert "session " in done.stdout


def test_an_unwritable_state_dir_is_reported_and_the_run_goes_on_in_memory(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    make_tree(project)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the state directory should be\n")
    state = blocker / "state"
    done = run(tmp_path, "Survey", "--cwd", str(project), "--state-dir", str(state))
    assert done.returncode == 0, done.stderr
    assert "Not a directory (ENOTDIR). Check the state directory." in done.stderr
    assert "kept in memory" in done.stderr
    assert facts_of(done.stdout)["totals"]["files"] == 6  # the work itself is intact
    assert "session " in done.stdout
    assert "transcripts " not in done.stdout  # no pointer to files that were never written
    assert blocker.read_text() == "a file where the state directory should be\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "no-such-type"], "No agent named 'no-such-type'"),
        (["--agents", "{not json"], "--agents is not valid JSON"),
        (["--agents", "[1, 2]"], "--agents must be a JSON object"),
        (["--cwd", "/no/such/dir"], "is not a readable directory"),
        (["--max-threads", "0"], "--max-threads must be at least 1"),
        (["--provider", "anthropic"], "--provider anthropic needs ANTHROPIC_API_KEY"),
    ],
)
def test_user_errors_are_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = run(tmp_path, "Survey", "--state-dir", str(tmp_path / "s"), *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_ctrl_c_stops_every_agent_and_keeps_the_transcripts(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_tree(project)
    state = tmp_path / "state"
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    process = subprocess.Popen(
        [*COMMAND, "run", "Survey", "--cwd", str(project), "--state-dir", str(state), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # see rest_of
        env=environment,
    )
    assert process.stdout is not None
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    for line in process.stdout:  # until an Explore agent is running, then interrupt
        seen.append(json.loads(line))
        event = seen[-1]
        if event["type"] == "agent_spawned" and event["label"] == "Explore":
            process.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline
    rest, _ = rest_of(process, TIMEOUT)
    seen += [json.loads(line) for line in rest.splitlines()]
    assert process.returncode == 130
    finals: dict[str, str] = {}
    for event in seen:
        if event["type"] == "status_changed":
            finals[event["agent_id"]] = event["status"]["kind"]
    assert finals
    assert all(kind in {"shutdown", "completed", "errored"} for kind in finals.values())
    assert "shutdown" in finals.values()
    assert seen[-1]["type"] == "run_finished"
    transcripts = list(state.rglob("agent-*.jsonl"))
    assert len(transcripts) == len(finals)
    for path in transcripts:
        assert load_transcript(path).meta is not None


def test_the_live_view_shows_every_agent_in_a_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_tree(project)
    primary, secondary = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    environment.update({"COLUMNS": "160", "LINES": "50", "TERM": "xterm-256color"})
    process = subprocess.Popen(
        [*COMMAND, "run", "Survey", "--cwd", str(project), "--state-dir", str(tmp_path / "s")],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=environment,
        close_fds=True,
    )
    os.close(secondary)
    output = bytearray()
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed: the command exited
            break
        if not chunk:
            break
        output += chunk
    process.wait(timeout=TIMEOUT)
    os.close(primary)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode("utf-8", "replace"))
    assert process.returncode == 0, text[-2000:]
    assert "Explore" in text
    assert "lead" in text
    assert "completed" in text
    assert text.count("Explore") >= 3  # every Explore agent appears
