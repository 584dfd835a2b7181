"""README's "Batch jobs" examples run as written, offline: its CSV, its command and its Python.

The CSV, the ``subagents jobs run`` command and the Python example are taken
from README.md; the command runs in process, the Python in a subprocess, and
both must write a complete output CSV with the columns the section names.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from subagents.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
COLUMNS = "job_id, item_id, status, attempts, last_error, result_json, started_at, completed_at"


def _section() -> str:
    text = README.read_text()
    start = text.index("### Batch jobs\n")
    return text[start : text.index("\n### ", start + 1)]


def _block(section: str, language: str) -> str:
    (block,) = re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)
    return block


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        return list(reader.fieldnames or []), list(reader)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    section = _section()
    folder = tmp_path / "app"
    (folder / ".git").mkdir(parents=True)
    (folder / "tickets.csv").write_text(_block(section, "csv"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(folder)
    return folder


def test_the_section_names_the_output_columns() -> None:
    assert COLUMNS in " ".join(_section().split())


def test_the_readme_command_writes_every_ticket(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (command,) = [
        line for line in _block(_section(), "sh").splitlines() if line.startswith("$ subagents ")
    ]
    argv = shlex.split(command.removeprefix("$ subagents "))
    assert main([*argv, "--state-dir", str(project.parent / "state")]) == 0, capsys.readouterr()
    header, rows = _rows(project / "labels.csv")
    assert header == ["id", "text", *COLUMNS.split(", ")]
    assert [row["item_id"] for row in rows] == ["1", "2", "3"]
    assert {row["status"] for row in rows} == {"completed"}


def test_the_readme_python_example_runs(project: Path) -> None:
    (project / "example.py").write_text(_block(_section(), "python"))
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"completed 3 of 3 -> {project / 'labels.csv'}" in done.stdout
    _, rows = _rows(project / "labels.csv")
    assert [json.loads(row["result_json"]) for row in rows] == [{"label": "bug"}] * 3
