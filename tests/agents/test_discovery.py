"""Scope discovery with real files: priorities, config.json override, plugins, aliases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subagents.agents import (
    BUILTIN_AGENT_NAMES,
    AgentSource,
    FileKind,
    UnknownAgentError,
    discover_agents,
)


def agent_md(name: str, description: str, body: str = "You help.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def config(**agents: dict[str, object]) -> str:
    return json.dumps({"agents": agents}, indent=2)


def test_seed_example_project_config_beats_project_file_beats_user_file(
    write, home: Path, project: Path
) -> None:
    # User level (the seed's ~/.neovate is ~/.claude and ~/.subagents here).
    write(home / ".claude/agents/personal.md", agent_md("personal", "Personal helper"))
    write(home / ".claude/agents/debugger.md", agent_md("debugger", "Debugger v1"))
    write(
        home / ".subagents/config.json",
        config(helper={"description": "Helper from user config", "prompt": "Help."}),
    )
    # Project level.
    write(project / ".claude/agents/code-reviewer.md", agent_md("code-reviewer", "Reviewer"))
    write(project / ".claude/agents/debugger.md", agent_md("debugger", "Debugger v2"))
    write(
        project / ".claude/config.json",
        config(debugger={"description": "Debugger v3", "prompt": "Debug.", "model": "haiku"}),
    )

    catalog = discover_agents(cwd=project, home=home)

    custom = {n: catalog.get(n) for n in catalog.names() if n not in BUILTIN_AGENT_NAMES}
    assert {n: (d.description, d.source) for n, d in custom.items()} == {
        "code-reviewer": ("Reviewer", AgentSource.PROJECT),
        "debugger": ("Debugger v3", AgentSource.PROJECT),
        "helper": ("Helper from user config", AgentSource.USER),
        "personal": ("Personal helper", AgentSource.USER),
    }
    assert catalog.get("debugger").path == project / ".claude/config.json"
    assert [d.description for d in catalog.candidates["debugger"]] == [
        "Debugger v1",
        "Debugger v2",
        "Debugger v3",
    ]
    reasons = [o.reason for o in catalog.overrides if o.name == "debugger"]
    assert reasons[0].startswith("the project scope overrides the user scope")
    assert reasons[1].startswith("in the project scope, config.json overrides files")
    assert catalog.errors == ()


def test_cli_agents_beat_project_and_user_beats_builtin(write, home: Path, project: Path) -> None:
    write(home / ".claude/agents/explore.md", agent_md("Explore", "My own explorer"))
    write(project / ".claude/agents/rev.md", agent_md("reviewer", "Project reviewer"))
    catalog = discover_agents(
        cwd=project,
        home=home,
        agents_json=json.dumps({"reviewer": {"description": "CLI reviewer", "prompt": "x"}}),
    )
    assert catalog.get("reviewer").description == "CLI reviewer"
    assert catalog.get("reviewer").source is AgentSource.CLI
    explore = catalog.get("Explore")
    assert (explore.description, explore.source) == ("My own explorer", AgentSource.USER)
    (override,) = [o for o in catalog.overrides if o.name == "Explore"]
    assert override.loser.source is AgentSource.BUILTIN
    assert "user scope overrides the builtin scope" in override.reason


def test_project_folders_are_searched_upward_nearest_wins(write, home: Path, project: Path) -> None:
    parent = project.parent
    write(parent / ".claude/agents/shared.md", agent_md("shared", "From the parent"))
    write(parent / ".claude/agents/far.md", agent_md("far", "Only in the parent"))
    write(project / ".subagents/agents/shared.md", agent_md("shared", "From the project"))
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    catalog = discover_agents(cwd=deep, home=home)
    assert catalog.get("shared").description == "From the project"
    assert catalog.get("far").source is AgentSource.PROJECT


def test_subagents_folder_wins_a_tie_with_claude_folder(write, home: Path, project: Path) -> None:
    write(project / ".claude/agents/a.md", agent_md("a", "claude folder"))
    write(project / ".subagents/agents/a.md", agent_md("a", "subagents folder"))
    catalog = discover_agents(cwd=project, home=home)
    assert catalog.get("a").description == "subagents folder"
    (override,) = [o for o in catalog.overrides if o.name == "a"]
    assert "found later" in override.reason


def test_folders_are_scanned_recursively_and_bad_files_do_not_stop_others(
    write, home: Path, project: Path
) -> None:
    agents = project / ".claude/agents"
    write(agents / "team/backend/api.md", agent_md("api", "API agent"))
    write(agents / "broken.md", "---\nname: broken\ndescription: [unclosed\n---\nx\n")
    write(agents / "unsafe.yaml", "agentType: u\nwhenToUse: !!python/name:os.system\n")
    write(agents / "notes.md", "# just notes\n")
    write(agents / "zeta.yml", "agentType: zeta\nwhenToUse: Last one\n")
    catalog = discover_agents(cwd=project, home=home)
    assert "api" in catalog
    assert "zeta" in catalog
    assert "broken" not in catalog
    assert "u" not in catalog
    failed = sorted(r.path.name for r in catalog.reports if not r.ok and r.path)
    assert failed == ["broken.md", "unsafe.yaml"]
    kinds = {r.path.name: r.kind for r in catalog.reports if r.path}
    assert kinds["notes.md"] is FileKind.NOT_AN_AGENT


def test_installed_plugins_load_below_user_agents(write, home: Path, project: Path) -> None:
    plugin = home / ".claude/plugins/review-kit"
    write(
        plugin / ".claude-plugin/plugin.json",
        json.dumps({"name": "review-kit", "agents": ["./extra/lint.md"]}),
    )
    write(plugin / "agents/reviewer.md", agent_md("reviewer", "Plugin reviewer"))
    write(plugin / "extra/lint.md", agent_md("lint", "Plugin linter"))
    write(plugin / "README.md", "# review kit\n")
    write(home / ".claude/agents/reviewer.md", agent_md("reviewer", "User reviewer"))
    catalog = discover_agents(cwd=project, home=home)
    lint = catalog.get("lint")
    assert (lint.source, lint.plugin) == (AgentSource.PLUGIN, "review-kit")
    assert catalog.get("reviewer").description == "User reviewer"
    assert [d.source for d in catalog.candidates["reviewer"]] == [
        AgentSource.PLUGIN,
        AgentSource.USER,
    ]
    read = {r.path for r in catalog.reports}
    assert plugin / "README.md" not in read


def test_plugin_dirs_argument_loads_a_corpus_plugin(
    corpus: Path, home: Path, project: Path
) -> None:
    catalog = discover_agents(
        cwd=project, home=home, plugin_dirs=[corpus / "categories" / "01-core-development"]
    )
    plugin_agents = [d for d in catalog if d.source is AgentSource.PLUGIN]
    assert len(plugin_agents) == 11
    assert catalog.get("api-designer").plugin == "voltagent-core-dev"


def test_config_model_aliases_override_the_table(write, home: Path, project: Path) -> None:
    write(home / ".claude/config.json", json.dumps({"modelAliases": {"sonnet": "claude-x-1"}}))
    write(
        project / ".subagents/config.json",
        json.dumps({"modelAliases": {"fast": "claude-haiku-4-5-20251001"}}),
    )
    write(project / ".claude/agents/a.md", "---\nname: a\ndescription: d\nmodel: fast\n---\nx\n")
    catalog = discover_agents(cwd=project, home=home)
    assert catalog.aliases.resolve("sonnet") == "claude-x-1"
    assert catalog.aliases.resolve("fast") == "claude-haiku-4-5-20251001"
    (report,) = [r for r in catalog.reports if r.path and r.path.name == "a.md"]
    assert report.warnings == ()  # 'fast' is a known alias once configured


def test_home_is_injectable_and_the_real_home_is_not_read(
    tmp_path: Path, home: Path, project: Path
) -> None:
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    assert len(catalog) == 0
    user_places = [p.path for p in catalog.searched if p.source is AgentSource.USER]
    assert user_places
    assert all(p.is_relative_to(home) for p in user_places)
    assert all(p.path.is_relative_to(tmp_path) for p in catalog.searched)


def test_unknown_agent_error_suggests_close_names(home: Path, project: Path) -> None:
    catalog = discover_agents(cwd=project, home=home)
    with pytest.raises(UnknownAgentError) as caught:
        catalog.get("explore")
    assert "'Explore'" in str(caught.value)
    assert caught.value.available == catalog.names()
