"""``subagents transcripts list|show`` and ``subagents resume``, run as a user runs them.

Each test runs the command line as a subprocess on a temporary directory with
known contents: a small project surveyed by an offline ``subagents run``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from subagents.runtime import (
    Origin,
    Transcript,
    find_transcript,
    list_transcripts,
    load_transcript,
)

COMMAND = [sys.executable, "-m", "subagents.cli"]
TIMEOUT = 120
PROMPT = "Survey this project"
FILES = {
    "app/main.py": "import sys\n\n\ndef main():\n    # TODO: parse args\n    return 0\n",
    "app/util.py": "X = 1\n# FIXME later\n",
    "docs/guide.md": "# Guide\n\nTODO write more\n",
    "web/index.js": "console.log('hi')\n",
}


def make_tree(root: Path) -> None:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=environment(),
        cwd=cwd,
        check=False,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def one_line_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 1, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@dataclass(frozen=True)
class Surveyed:
    """A finished offline run: where it ran, its state directory and its summary line."""

    root: Path
    project: Path
    state: Path
    summary: dict[str, Any]

    @property
    def lead_id(self) -> str:
        return str(self.summary["agent_id"])

    def explorers(self) -> list[dict[str, Any]]:
        return [a for a in self.summary["agents"] if a["agent_type"] == "Explore"]

    def transcript(self, agent_id: str) -> Transcript:
        return load_transcript(find_transcript(self.state, agent_id))


@pytest.fixture(scope="module")
def surveyed(tmp_path_factory: pytest.TempPathFactory) -> Surveyed:
    root = tmp_path_factory.mktemp("surveyed")
    project, state = root / "project", root / "state"
    make_tree(project)
    done = cli(root, "run", PROMPT, "--cwd", str(project), "--state-dir", str(state), "--json")
    assert done.returncode == 0, done.stderr
    summary = json_lines(done.stdout)[-1]
    assert summary["type"] == "run_finished"
    return Surveyed(root, project, state, summary)


def test_list_shows_every_agent_of_the_run(surveyed: Surveyed) -> None:
    done = cli(surveyed.root, "transcripts", "list", "--state-dir", "state")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "SESSION", "AGENT", "ID", "TYPE", "NICKNAME", "MSGS", "SIZE", "MODIFIED", "LAST", "RESULT",
    ]  # fmt: skip
    for agent in surveyed.summary["agents"]:
        row = next(line for line in lines if f" {agent['agent_id']} " in line)
        assert surveyed.summary["session_id"] in row
        assert agent["agent_type"] in row
        assert agent["nickname"] in row
        assert row.endswith("completed")
    assert f"{len(surveyed.summary['agents'])} transcripts in 1 session" in done.stdout

    as_json = cli(surveyed.root, "transcripts", "list", "--state-dir", "state", "--json")
    assert as_json.returncode == 0, as_json.stderr
    records = json.loads(as_json.stdout)
    assert {r["agent_id"] for r in records} == {a["agent_id"] for a in surveyed.summary["agents"]}
    modified = [r["modified"] for r in records]
    assert modified == sorted(modified, reverse=True)  # newest first
    for record in records:
        transcript = surveyed.transcript(record["agent_id"])
        assert record["messages"] == len(transcript.messages)
        assert record["last_result"]["status"] == "completed"
        assert record["agent_type"] == transcript.meta.agent_type


def test_show_renders_the_lead_s_prompt_tool_calls_and_summary(surveyed: Surveyed) -> None:
    done = cli(surveyed.root, "transcripts", "show", surveyed.lead_id, "--state-dir", "state")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(f"Agent {surveyed.lead_id}\n")
    assert "type:        lead" in text
    assert "#0 user (task)" in text
    assert PROMPT in text
    assert '-> LS {"path": "."}' in text
    assert "-> spawn_agent " in text
    assert "<- spawn_agent (1 line): " in text
    summary = surveyed.summary["result"]
    assert summary.splitlines()[0] in text  # the summary's first line...
    assert '"folder": "docs"' in text  # ...and its facts
    transcript = surveyed.transcript(surveyed.lead_id)
    assert f"Results ({len(transcript.results)})\nrun 1: completed (goal)" in text
    assert "Problems" not in text

    as_json = cli(
        surveyed.root, "transcripts", "show", surveyed.lead_id, "--state-dir", "state", "--json"
    )
    assert as_json.returncode == 0, as_json.stderr
    record = json.loads(as_json.stdout)
    assert record["meta"]["agent_id"] == surveyed.lead_id
    assert len(record["messages"]) == len(transcript.messages)
    assert record["messages"][0]["message"]["content"][0]["text"] == PROMPT
    assert summary in [result["text"] for result in record["results"]]
    assert record["problems"] == []
    assert record["notes"] == []


def test_show_reports_bad_lines_with_their_numbers(surveyed: Surveyed, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(surveyed.state, state)
    agent_id = surveyed.explorers()[0]["agent_id"]
    path = find_transcript(state, agent_id)
    lines = path.read_text().count("\n")
    with path.open("a") as file:
        file.write('{"record": "message", not json\n{"record":"mess')
    done = cli(tmp_path, "transcripts", "show", agent_id, "--state-dir", "state")
    assert done.returncode == 0, done.stderr
    assert f"Problems (1)\n  line {lines + 1}: not valid JSON" in done.stdout
    assert f"Notes (1)\n  line {lines + 2}: torn last line" in done.stdout


@pytest.mark.parametrize("command", [["transcripts", "show"], ["resume"]])
def test_an_unknown_id_is_one_clear_line(surveyed: Surveyed, command: list[str]) -> None:
    done = cli(surveyed.root, *command, "no-such-agent", "--state-dir", "state")
    one_line_error(
        done,
        f"no transcript for agent 'no-such-agent' under {surveyed.state}; "
        "run `subagents transcripts list` to see them",
    )
    assert done.stdout == ""


def test_list_of_an_empty_state_directory(tmp_path: Path) -> None:
    done = cli(tmp_path, "transcripts", "list", "--state-dir", "nothing-here")
    assert done.returncode == 0, done.stderr
    assert f"No transcripts under {tmp_path / 'nothing-here'}." in done.stdout
    as_json = cli(tmp_path, "transcripts", "list", "--state-dir", "nothing-here", "--json")
    assert json.loads(as_json.stdout) == []


def test_resume_of_a_finished_agent(surveyed: Surveyed, tmp_path: Path) -> None:
    state = tmp_path / "state"
    shutil.copytree(surveyed.state, state)
    explorer = surveyed.explorers()[0]
    agent_id = explorer["agent_id"]
    base = ["--cwd", str(surveyed.project), "--state-dir", str(state)]
    before = load_transcript(find_transcript(state, agent_id)).results
    # without a prompt it comes back idle, with its last (successful) result: nothing runs
    idle = cli(tmp_path, "resume", agent_id, *base)
    assert idle.returncode == 0, idle.stderr
    assert f"{explorer['nickname']} Explore completed (goal)" in idle.stdout
    assert load_transcript(find_transcript(state, agent_id)).results == before
    # with a prompt it runs on it, and its transcript gets a second result
    asked = cli(tmp_path, "resume", agent_id, "Which are the 2 largest files?", *base, "--json")
    assert asked.returncode == 0, asked.stderr
    summary = json_lines(asked.stdout)[-1]
    assert summary["type"] == "run_finished"
    assert summary["agent_id"] == agent_id
    assert summary["status"]["kind"] == "completed"
    assert "largest files" in summary["result"]
    transcript = load_transcript(find_transcript(state, agent_id))
    assert transcript.results[: len(before)] == before
    assert [r.status for r in transcript.results[len(before) :]] == ["completed"]
    inputs = [r.message.text for r in transcript.messages if r.message.origin is Origin.INPUT]
    assert inputs[-1] == "Which are the 2 largest files?"


def test_ctrl_c_then_transcripts_load_and_resume_finishes_the_work(tmp_path: Path) -> None:
    project, state = tmp_path / "project", tmp_path / "state"
    make_tree(project)
    process = subprocess.Popen(
        [*COMMAND, "run", PROMPT, "--cwd", str(project), "--state-dir", str(state), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        cwd=tmp_path,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + TIMEOUT
    for line in process.stdout:  # until an Explore agent was spawned, then interrupt
        event = json.loads(line)
        if event["type"] == "agent_spawned" and event["label"] == "Explore":
            process.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline
    _, errors = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 130, errors
    assert "Traceback" not in errors

    infos = list_transcripts(state)
    assert infos
    transcripts = {info.agent_id: load_transcript(info.path) for info in infos}
    assert all(t.meta is not None and not t.problems for t in transcripts.values())
    lead = next(t for t in transcripts.values() if t.meta.parent_id is None)
    stopped = [
        t
        for t in transcripts.values()
        if t.meta.agent_type == "Explore"
        and (t.last_result is None or t.last_result.status != "completed")
    ]
    assert stopped, "no Explore agent was interrupted"

    listed = cli(tmp_path, "transcripts", "list", "--state-dir", "state")
    assert listed.returncode == 0, listed.stderr
    assert "shutdown" in listed.stdout

    base = ["--cwd", str(project), "--state-dir", str(state)]
    explorer = stopped[0]
    done = cli(tmp_path, "resume", explorer.agent_id, *base, "--json")
    assert done.returncode == 0, done.stderr
    summary = json_lines(done.stdout)[-1]
    assert summary["agent_id"] == explorer.agent_id
    assert summary["status"]["kind"] == "completed"
    facts = summary["result"].split("```json\n")[-1].split("\n```")[0]
    folder = json.loads(facts)
    assert folder["folder"] in {"app", "docs", "web"}
    assert folder["files"] == sum(1 for name in FILES if name.startswith(folder["folder"] + "/"))
    after = load_transcript(find_transcript(state, explorer.agent_id))
    assert after.last_result is not None
    assert after.last_result.status == "completed"
    assert len(after.metas) == 2  # the resume appended to the same file
    assert after.messages[: len(explorer.messages)] == explorer.messages

    done = cli(tmp_path, "resume", lead.agent_id, *base)
    assert done.returncode == 0, done.stderr
    assert "lead completed (goal)" in done.stdout
    after = load_transcript(find_transcript(state, lead.agent_id))
    assert after.last_result is not None
    assert after.last_result.status == "completed"
    assert after.runs == lead.runs + 1


COMMANDS = [
    [],
    ["run"],
    ["resume"],
    ["transcripts"],
    ["transcripts", "list"],
    ["transcripts", "show"],
    ["transcripts", "prune"],
    ["demo"],
    ["agents"],
    ["agents", "list"],
    ["agents", "show"],
    ["agents", "validate"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "subagents")
def test_every_command_has_help_with_examples(tmp_path: Path, command: list[str]) -> None:
    done = cli(tmp_path, *command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: subagents")
    assert "examples:\n  subagents " in done.stdout
    assert done.stderr == ""
