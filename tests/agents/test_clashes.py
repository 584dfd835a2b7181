"""Two files of one folder defining one agent name: both named, the winner said.

Only one definition of a name can be spawned, and discovery keeps the one read
last (files are read in sorted order). Before issue 15, item 13, the loser was
dropped without a word in ``agents validate``.
"""

from __future__ import annotations

from pathlib import Path

from subagents.agents import DiagnosticCode, Severity, discover_agents, load_paths


def _agent(path: Path, name: str, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: d\n---\n{body}\n")
    return path


def test_a_name_defined_twice_in_one_folder_names_both_files_and_the_winner(
    tmp_path: Path,
) -> None:
    first = _agent(tmp_path / "agents" / "a.md", "reviewer", "first")
    second = _agent(tmp_path / "agents" / "sub" / "b.md", "reviewer", "second")
    _agent(tmp_path / "agents" / "c.md", "other", "alone")
    reports = {r.path: r for r in load_paths([tmp_path / "agents"])}
    (warning,) = reports[first].warnings
    assert (warning.code, warning.field, warning.line) == (DiagnosticCode.OVERRIDDEN, "name", 2)
    assert str(first) in warning.message
    assert f"also defined in {second}, read later, which wins" in warning.message
    (note,) = [d for d in reports[second].diagnostics if d.code is DiagnosticCode.OVERRIDDEN]
    assert note.severity is Severity.NOTE
    assert str(first) in note.message
    assert not any(
        d.code is DiagnosticCode.OVERRIDDEN
        for d in reports[tmp_path / "agents" / "c.md"].diagnostics
    )


def test_discovery_keeps_the_winner_the_diagnostic_names(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    folder = project / ".claude" / "agents"
    _agent(folder / "a.md", "reviewer", "first")
    second = _agent(folder / "b.md", "reviewer", "second")
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    assert catalog.get("reviewer").path == second
    assert catalog.get("reviewer").system_prompt == "second"
    flagged = [
        d for r in catalog.reports for d in r.diagnostics if d.code is DiagnosticCode.OVERRIDDEN
    ]
    assert [d.severity for d in flagged] == [Severity.WARNING, Severity.NOTE]
