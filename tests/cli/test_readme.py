"""The README's promises: its embedding example runs, and CI runs its test command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_embedding_example_runs_and_reports_correct_facts(tmp_path: Path) -> None:
    section = README.split("### Embedding in a Trio program", 1)[1]
    code = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert code is not None
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def main():\n    # TODO: more\n    return 0\n")
    (tmp_path / "example.py").write_text(code.group(1))
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "spawned Ada at depth 0" in done.stdout
    assert "goal after" in done.stdout
    assert '"files": 1' in done.stdout
    assert '"lines": 3' in done.stdout
    assert '"todo_fixme": 1' in done.stdout


def test_the_quick_start_is_two_lines_and_ci_runs_the_second() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", quick_start, re.DOTALL)
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    assert "subagents run" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_the_configuration_example_loads(tmp_path: Path) -> None:
    from subagents.runtime import load_config

    toml = re.search(r"```toml\n(.*?)\n```", README, re.DOTALL)
    assert toml is not None
    (tmp_path / "subagents.toml").write_text(toml.group(1))
    config = load_config(cwd=tmp_path, home=tmp_path / "home", env={})
    assert config.limits.max_threads == 4
    assert config.transcripts.retention_days == 30


def test_the_teams_example_runs_offline_and_the_team_agrees(tmp_path: Path) -> None:
    """The README's "Teams" example: three teammates survey, check, correct and agree."""
    section = README.split("### Teams", 1)[1]
    code = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert code is not None
    project = tmp_path / "project"  # the home (and its state dir) outside the survey
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("# TODO: one\n# fixme: two\n")
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("XXX three\n")
    (tmp_path / "example.py").write_text(code.group(1))
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "example.py")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| src | 2 | 1 |" in done.stdout
    assert "| docs | 1 | 1 |" in done.stdout
    assert "Total: 3 marker lines in 2 folders." in done.stdout
    assert "TeamStatistics(members=3" in done.stdout
