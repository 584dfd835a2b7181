"""``subagents agents list|show|validate`` through a parser built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GOOD = (
    "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: haiku\n---\n"
    "Review.\n"
)


def test_list_shows_winners_with_source_model_tools_and_counts(
    cli, write, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / ".claude/agents/reviewer.md", GOOD)
    write(home / ".claude/agents/reviewer.md", GOOD.replace("haiku", "opus"))
    write(
        project / ".claude/agents/odd.md",
        "---\nname: odd\ndescription: d\ntools: Telepathy\n---\nx\n",
    )
    code = cli("list", "--cwd", str(project), "--home", str(home))
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "MODEL", "TOOLS", "DIAG", "PATH"]
    (row,) = [line for line in lines if line.startswith("reviewer ")]
    assert row.split()[:5] == ["reviewer", "project", "haiku", "Read,", "Grep"]
    assert str(project / ".claude/agents/reviewer.md") in row
    (odd,) = [line for line in lines if line.startswith("odd ")]
    assert odd.split()[4] == "1"  # one warning: the unknown tool
    assert any(line.startswith("Explore ") and "builtin" in line for line in lines)
    assert ", hidden)" not in out
    cli("list", "--all", "--cwd", str(project), "--home", str(home))
    assert "(reviewer, hidden)" in capsys.readouterr().out


def test_list_with_agents_json(
    cli, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = json.dumps(
        {"tester": {"description": "Runs tests", "prompt": "Test.", "tools": ["Bash"]}}
    )
    assert cli("list", "--cwd", str(project), "--home", str(home), "--agents", agents) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("tester ")]
    assert row.split() == ["tester", "cli", "inherit", "Bash", "0", "(--agents)"]


def test_show_prints_the_definition_and_which_scope_won(
    cli, write, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / ".claude/agents/reviewer.md", GOOD)
    write(home / ".claude/agents/reviewer.md", GOOD.replace("Reviews code", "User one"))
    assert cli("show", "reviewer", "--cwd", str(project), "--home", str(home)) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "reviewer"
    assert "model:              haiku -> claude-haiku-5-5" in out
    assert "Scope: project won" in out
    assert "the project scope overrides the user scope" in out
    assert "[tools] applied: allowed tools: Read, Grep" in out
    assert out.rstrip().endswith("Review.")


def test_show_unknown_agent_fails_with_a_suggestion(
    cli, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli("show", "explor", "--cwd", str(project), "--home", str(home)) == 1
    assert "Did you mean 'Explore'?" in capsys.readouterr().err


def test_validate_paths_prints_per_file_and_fails_on_errors(
    cli, write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "defs"
    good = write(folder / "good.md", GOOD)
    bad = write(folder / "bad.md", "---\nname: bad\ndescription: d\ntools: 5\n---\nx\n")
    write(folder / "README.md", "# readme\n")
    assert cli("validate", str(good)) == 0
    out = capsys.readouterr().out
    assert f"{good}: ok: 'reviewer'" in out
    assert "1 agents from 1 files" in out
    assert cli("validate", str(folder)) == 1
    out = capsys.readouterr().out
    assert f"{bad}: ERROR" in out
    assert f"{bad}:4: error: [tools] tools must be a list of names" in out
    assert "README.md: not an agent" in out
    assert "applied:" not in out
    cli("validate", "-v", str(good))
    assert "[model] applied: model 'haiku'" in capsys.readouterr().out


def test_validate_json_for_programs(
    cli, write, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "defs"
    write(folder / "good.md", GOOD)
    bad = write(folder / "bad.yaml", "agentType: bad\nwhenToUse: d\ntools: 3\n")
    write(folder / "README.md", "# readme\n")
    write(folder / "image.png", "not really")
    assert cli("validate", "--json", str(folder)) == 1
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"agents", "not_agents", "errors", "skipped"}
    (agent,) = data["agents"]
    assert {k: agent[k] for k in ("name", "source", "model", "tools")} == {
        "name": "reviewer",
        "source": "cli",
        "model": "haiku",
        "tools": ["Read", "Grep"],
    }
    assert agent["path"] == str(folder / "good.md")
    assert {d["field"] for d in agent["diagnostics"]} >= {"name", "description", "tools", "model"}
    assert data["not_agents"] == [str(folder / "README.md")]
    assert data["skipped"] == [str(folder / "image.png")]
    assert data["errors"] == [
        {"path": str(bad), "line": 3, "field": "tools", "message": data["errors"][0]["message"]}
    ]
    assert "comma-separated" in data["errors"][0]["message"]


def test_validate_corpus_json(cli, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("validate", "--json", str(corpus)) == 0
    data = json.loads(capsys.readouterr().out)
    # Ten plugins, read as Claude Code reads them: the agents their manifests list.
    assert len(data["agents"]) == 157
    assert data["not_agents"] == []  # the READMEs are not read, and noted in one line
    assert data["errors"] == []


def test_validate_without_paths_checks_every_scope(
    cli, write, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(home / ".subagents/agents/u.md", "---\nname: u\n---\nno description\n")
    write(project / ".claude/agents/reviewer.md", GOOD)
    assert cli("validate", "--cwd", str(project), "--home", str(home)) == 1
    out = capsys.readouterr().out
    assert "u.md:1: error: [description] no description" in out
    assert "reviewer.md: ok: 'reviewer'" in out


def test_list_and_show_print_the_validate_json_shape(
    cli, write, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / ".claude/agents/reviewer.md", GOOD.replace("haiku", "sonnet[1m]"))
    write(home / ".claude/agents/reviewer.md", GOOD.replace("haiku", "opusplan"))
    args = ("--cwd", str(project), "--home", str(home))
    assert cli("validate", "--json", *args) == 0
    validated = json.loads(capsys.readouterr().out)
    assert cli("list", "--json", *args) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(listed) == set(validated) == {"agents", "not_agents", "errors", "skipped"}
    (row,) = [a for a in listed["agents"] if a["name"] == "reviewer"]
    (same,) = [a for a in validated["agents"] if a["path"] == row["path"]]
    assert set(row) == set(same)
    assert (row["source"], row["model"], row["model_id"], row["context_1m"]) == (
        "project",
        "sonnet[1m]",
        "claude-sonnet-5-5",
        True,
    )
    assert row["tools"] == ["Read", "Grep"]
    assert row["hidden"] is False
    assert any(a["name"] == "Explore" and a["source"] == "builtin" for a in listed["agents"])
    assert cli("list", "--json", "--all", *args) == 0
    hidden = [a for a in json.loads(capsys.readouterr().out)["agents"] if a["hidden"]]
    assert [(a["name"], a["model"], a["plan_model_id"]) for a in hidden] == [
        ("reviewer", "opusplan", "claude-opus-5-5")
    ]
    assert cli("show", "reviewer", "--json", *args) == 0
    shown = json.loads(capsys.readouterr().out)
    assert set(shown) == set(validated)
    assert shown["agents"] == [row]
    assert cli("show", "nobody", "--json", *args) == 1
    missing = json.loads(capsys.readouterr().out)
    assert missing["agents"] == []
    assert "nobody" in missing["errors"][0]["message"]
