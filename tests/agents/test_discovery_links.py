"""Discovery stays inside the project: symbolic links, walk bounds, folders above the git root.

A repository is data until its folder is trusted, and discovery runs before any
trust decision. A committed link ``.claude/agents/x -> /`` made discovery walk
and read the whole file system; a ``.claude/agents`` in ``/tmp``, above the
git root, loaded as the project's own agents. Each check that could hang runs
in a helper thread joined with a deadline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from subagents.agents import AgentSource, DiagnosticCode, FileKind, Severity, discover_agents
from tests.deadlines import within_deadline


def agent_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nYou help.\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git project (its ``.git`` makes it the project folder), outside ``home``."""
    folder = tmp_path / "work" / "repo"
    (folder / ".git").mkdir(parents=True)
    return folder


def _messages(catalog: Any, path: Path) -> list[str]:
    return [d.message for r in catalog.reports if r.path == path for d in r.diagnostics]


def test_a_link_out_of_the_project_is_reported_once_and_not_read(
    write, home: Path, repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "stranger.md", agent_md("stranger", "Outside the repository"))
    write(elsewhere / "sub" / "deeper.md", agent_md("deeper", "Outside too"))
    agents = repo / ".claude" / "agents"
    write(agents / "mine.md", agent_md("mine", "The repository's own"))
    (agents / "out").symlink_to(elsewhere)
    (agents / "one.md").symlink_to(elsewhere / "stranger.md")

    catalog = discover_agents(cwd=repo, home=home)

    assert "mine" in catalog
    assert "stranger" not in catalog
    assert "deeper" not in catalog
    for link in (agents / "out", agents / "one.md"):
        (report,) = [r for r in catalog.reports if r.path == link]
        assert report.kind is FileKind.SKIPPED
        (diagnostic,) = report.diagnostics
        assert (diagnostic.severity, diagnostic.code) == (Severity.WARNING, DiagnosticCode.SKIPPED)
        assert f"outside {repo}" in diagnostic.message
        assert "symbolic link" in diagnostic.message
    inside_link = [r for r in catalog.reports if r.path and r.path.parent == agents / "out"]
    assert inside_link == []

    # The user's own links are the user's: the same link from ~/.claude/agents is followed.
    (home / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "shared").symlink_to(elsewhere)
    catalog = discover_agents(cwd=repo, home=home)
    assert catalog.get("stranger").source is AgentSource.USER
    assert "deeper" in catalog


def test_a_link_to_the_root_of_the_file_system_is_one_report(home: Path, repo: Path) -> None:
    """The reproduction: ``.claude/agents/x -> /`` walked and read every file."""
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "x").symlink_to("/")
    catalog = within_deadline(lambda: discover_agents(cwd=repo, home=home))
    assert [r.path for r in catalog.reports] == [agents / "x"]
    assert "outside" in _messages(catalog, agents / "x")[0]


def test_a_project_config_json_linked_out_of_the_project_is_not_read(
    write, home: Path, repo: Path, tmp_path: Path
) -> None:
    outside_config = write(
        tmp_path / "elsewhere" / "config.json",
        json.dumps({"agents": {"planted": {"description": "Outside", "prompt": "x"}}}),
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "config.json").symlink_to(outside_config)
    catalog = discover_agents(cwd=repo, home=home)
    assert "planted" not in catalog
    assert "outside" in _messages(catalog, repo / ".claude" / "config.json")[0]


def test_a_link_to_a_folder_inside_the_project_is_followed(write, home: Path, repo: Path) -> None:
    write(repo / "shared-agents" / "helper.md", agent_md("helper", "Shared inside the repo"))
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "shared").symlink_to(Path("..") / ".." / "shared-agents")
    (agents / "helper-too.md").symlink_to(repo / "shared-agents" / "helper.md")
    catalog = discover_agents(cwd=repo, home=home)
    helper = catalog.get("helper")
    assert helper.source is AgentSource.PROJECT
    loaded = sorted(str(r.path) for r in catalog.reports if r.definitions)
    assert loaded == [str(agents / "helper-too.md"), str(agents / "shared" / "helper.md")]
    assert not [d for r in catalog.reports for d in r.diagnostics if "outside" in d.message]


def test_link_cycles_terminate_in_agents_folders_and_plugins(
    write, home: Path, repo: Path, tmp_path: Path
) -> None:
    agents = repo / ".claude" / "agents"
    write(agents / "team" / "a.md", agent_md("a", "In a cycle"))
    (agents / "team" / "up").symlink_to("..")
    (agents / "team" / "again").symlink_to(agents)
    (agents / "self").symlink_to(".")
    # A plugin's agents/ with two links to itself: 2**40 paths for a walk that follows them.
    plugin = tmp_path / "plugin"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "p"}))
    write(plugin / "agents" / "b.md", agent_md("b", "In a plugin cycle"))
    (plugin / "agents" / "loop1").symlink_to(".")
    (plugin / "agents" / "loop2").symlink_to(".")

    catalog = within_deadline(lambda: discover_agents(cwd=repo, home=home, plugin_dirs=[plugin]))

    assert catalog.get("a").path == agents / "team" / "a.md"
    assert catalog.get("p:b").path == plugin / "agents" / "b.md"
    assert [r.path for r in catalog.reports if r.definitions] == [
        plugin / "agents" / "b.md",
        agents / "team" / "a.md",
    ]
    again = [agents / "self", agents / "team" / "again", agents / "team" / "up"]
    for path in again:
        assert _messages(catalog, path) == [
            "already scanned through another path (a symbolic link)"
        ]


def test_an_agents_folder_is_read_up_to_the_caps_with_one_report_each(
    write, home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("subagents.agents._scan.MAX_TREE_ENTRIES", 5)
    agents = repo / ".claude" / "agents"
    for i in range(8):
        write(agents / f"a{i}.md", agent_md(f"a{i}", "One of many"))

    catalog = discover_agents(cwd=repo, home=home)

    assert [n for n in catalog.names() if n.startswith("a") and n[1:].isdigit()] == [
        f"a{i}" for i in range(5)
    ]
    (capped,) = [r for r in catalog.reports if r.path == agents]
    assert capped.kind is FileKind.SKIPPED
    (diagnostic,) = capped.diagnostics
    assert diagnostic.severity is Severity.WARNING
    assert diagnostic.message.startswith("stopped after 5 files and folders")
    assert str(agents / "a5.md") in diagnostic.message
    assert len(catalog.reports) == 6

    monkeypatch.setattr("subagents.agents._scan.MAX_TREE_ENTRIES", 100)
    monkeypatch.setattr("subagents.agents._scan.MAX_TREE_DEPTH", 2)
    deep = agents / "l1" / "l2"
    write(deep / "two.md", agent_md("two", "Two folders down"))
    write(deep / "l3" / "three.md", agent_md("three", "Three folders down"))
    write(deep / "l3b" / "other.md", agent_md("other", "Three folders down too"))
    catalog = discover_agents(cwd=repo, home=home)
    assert "two" in catalog
    assert "three" not in catalog
    assert "other" not in catalog
    (too_deep,) = [r for r in catalog.reports if r.path == deep / "l3"]
    (diagnostic,) = too_deep.diagnostics
    assert diagnostic.message.startswith("not scanned: 2 folder(s) more than 2 levels below")
    assert not [r for r in catalog.reports if r.path == deep / "l3b"]


def test_agent_folders_above_the_project_folder_are_not_the_projects(
    write, home: Path, repo: Path
) -> None:
    """Another user's ``/tmp/.claude/agents/Explore.md`` is not the trusted ``/tmp/repo``'s."""
    above = repo.parent
    write(above / ".claude" / "agents" / "Explore.md", agent_md("Explore", "Planted above"))
    write(above / ".subagents" / "agents" / "planted.md", agent_md("planted", "Planted above"))
    write(
        above / ".claude" / "config.json",
        json.dumps({"agents": {"planted-config": {"description": "Above", "prompt": "x"}}}),
    )
    src = repo / "src"
    write(repo / ".claude" / "agents" / "root.md", agent_md("root", "In the project root"))
    write(src / ".claude" / "agents" / "between.md", agent_md("between", "Between root and cwd"))
    cwd = src / "pkg"
    cwd.mkdir()

    catalog = discover_agents(cwd=cwd, home=home)

    assert catalog.get("Explore").source is AgentSource.BUILTIN
    assert "planted" not in catalog
    assert "planted-config" not in catalog
    assert catalog.get("root").source is AgentSource.PROJECT
    assert catalog.get("between").source is AgentSource.PROJECT
    assert not [r for r in catalog.reports if r.path and not r.path.is_relative_to(repo)]
    searched_elsewhere = [p.path for p in catalog.searched if not p.path.is_relative_to(repo)]
    assert all(path.is_relative_to(home) for path in searched_elsewhere)
