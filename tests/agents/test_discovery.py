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
    load_paths,
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
    # Up to the project folder (the git root) only; above it, see test_discovery_links.py.
    (project / ".git").mkdir()
    src = project / "src"
    write(project / ".claude/agents/shared.md", agent_md("shared", "From the project root"))
    write(project / ".claude/agents/far.md", agent_md("far", "Only in the project root"))
    write(src / ".subagents/agents/shared.md", agent_md("shared", "From src"))
    deep = src / "pkg"
    deep.mkdir(parents=True)
    catalog = discover_agents(cwd=deep, home=home)
    assert catalog.get("shared").description == "From src"
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


def _marketplace_clone(write, home: Path) -> Path:
    """``~/.claude/plugins/marketplaces/acme``: a marketplace clone, as Claude Code keeps it.

    Three plugins with 12 agents, plus skills and commands; only what is installed
    and enabled may load from it (https://code.claude.com/docs/en/plugin-marketplaces).
    """
    clone = home / ".claude/plugins/marketplaces/acme"
    plugins = [{"name": n, "source": f"./plugins/{n}"} for n in ("review-kit", "deploy", "docs")]
    write(
        clone / ".claude-plugin/marketplace.json", json.dumps({"name": "acme", "plugins": plugins})
    )
    for plugin in ("review-kit", "deploy", "docs"):
        root = clone / "plugins" / plugin
        write(root / ".claude-plugin/plugin.json", json.dumps({"name": plugin}))
        for i in range(4):
            write(root / f"agents/{plugin}-{i}.md", agent_md(f"{plugin}-{i}", "From the clone"))
        write(root / "skills/s/SKILL.md", agent_md("a-skill", "A skill"))
        write(root / "commands/c.md", agent_md("a-command", "A command"))
    return clone


def _install(write, home: Path, plugin: str, agents: list[str], version: str = "1.0.0") -> Path:
    """Copy a plugin into Claude Code's cache, as ``claude plugin install`` does."""
    root = home / ".claude/plugins/cache/acme" / plugin / version
    write(root / ".claude-plugin/plugin.json", json.dumps({"name": plugin, "version": version}))
    for name in agents:
        write(root / f"agents/{name}.md", agent_md(name, f"Installed {name}"))
    write(root / "skills/s/SKILL.md", agent_md("a-skill", "A skill"))
    return root


def _record(write, home: Path, installs: dict[str, Path]) -> None:
    records = {
        plugin_id: [{"scope": "user", "installPath": str(path), "version": path.name}]
        for plugin_id, path in installs.items()
    }
    write(
        home / ".claude/plugins/installed_plugins.json",
        json.dumps({"version": 2, "plugins": records}),
    )


def test_only_installed_and_enabled_plugins_load_under_their_namespaced_names(
    write, home: Path, project: Path
) -> None:
    """Claude Code loads the agents of the one enabled plugin (4), not the clone's 12."""
    _marketplace_clone(write, home)
    review = _install(write, home, "review-kit", ["reviewer", "lint", "style", "security"])
    deploy = _install(write, home, "deploy", ["shipper"])
    _record(write, home, {"review-kit@acme": review, "deploy@acme": deploy})
    write(
        home / ".claude/settings.json",
        json.dumps({"enabledPlugins": {"review-kit@acme": True, "deploy@acme": False}}),
    )
    write(home / ".claude/agents/reviewer.md", agent_md("reviewer", "User reviewer"))
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    plugin_agents = sorted(d.name for d in catalog if d.source is AgentSource.PLUGIN)
    assert plugin_agents == [
        "review-kit:lint",
        "review-kit:reviewer",
        "review-kit:security",
        "review-kit:style",
    ]
    lint = catalog.get("review-kit:lint")
    assert (lint.plugin, lint.path) == ("review-kit", review / "agents/lint.md")
    # The bare name is the user's own agent; a name only a plugin has is not found by
    # its bare form, and the error names the namespaced one.
    assert catalog.get("reviewer").description == "User reviewer"
    with pytest.raises(UnknownAgentError, match="'review-kit:lint'"):
        catalog.get("lint")
    notes = [d.message for r in catalog.reports for d in r.diagnostics]
    assert "installed but not enabled (enabledPlugins), so not loaded: deploy@acme" in notes


def _two_plugins_and_project_settings(
    write, home: Path, project: Path, enables: dict[str, bool]
) -> None:
    """review-kit (enabled by the user) and deploy installed; the project's settings
    enable ``enables`` and its local settings turn review-kit off."""
    review = _install(write, home, "review-kit", ["reviewer"])
    deploy = _install(write, home, "deploy", ["shipper"])
    _record(write, home, {"review-kit@acme": review, "deploy@acme": deploy})
    write(home / ".claude/settings.json", json.dumps({"enabledPlugins": {"review-kit@acme": True}}))
    write(project / ".claude/settings.json", json.dumps({"enabledPlugins": enables}))
    write(
        project / ".claude/settings.local.json",
        json.dumps({"enabledPlugins": {"review-kit@acme": False}}),
    )


def test_project_settings_enable_and_disable_installed_plugins(
    write, home: Path, project: Path
) -> None:
    enables = {"deploy@acme": True, "ghost@acme": True}
    _two_plugins_and_project_settings(write, home, project, enables)
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    assert catalog.names() == ("deploy:shipper",)
    notes = [d.message for r in catalog.reports for d in r.diagnostics]
    assert any(m.startswith("ghost@acme is enabled in settings but not installed") for m in notes)


def test_an_untrusted_projects_settings_enable_and_disable_no_plugin(
    write, home: Path, project: Path
) -> None:
    """Until the user trusts the folder the user's settings alone decide; what the
    project would have enabled is named for the trust notice."""
    enables = {"deploy@acme": True, "review-kit@acme": True}
    _two_plugins_and_project_settings(write, home, project, enables)
    catalog = discover_agents(cwd=project, home=home, include_builtins=False, trusted_project=False)
    assert catalog.names() == ("review-kit:reviewer",)
    assert catalog.withheld == ("the plugin deploy@acme its settings enable",)
    trusted = discover_agents(cwd=project, home=home, include_builtins=False)
    assert trusted.names() == ("deploy:shipper",)
    assert trusted.withheld == ()


def test_an_enabled_plugin_without_a_record_loads_its_newest_cached_copy(
    write, home: Path, project: Path
) -> None:
    _install(write, home, "deploy", ["old"], version="1.0.0")
    _install(write, home, "deploy", ["shipper"], version="1.2.0")
    write(home / ".claude/settings.json", json.dumps({"enabledPlugins": {"deploy@acme": True}}))
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    assert catalog.names() == ("deploy:shipper",)


def test_a_marketplace_clone_alone_loads_nothing(write, home: Path, project: Path) -> None:
    _marketplace_clone(write, home)
    write(home / ".claude/settings.json", json.dumps({"enabledPlugins": {"docs@acme": False}}))
    catalog = discover_agents(cwd=project, home=home, include_builtins=False)
    assert len(catalog) == 0


def test_plugin_dirs_argument_loads_a_corpus_plugin(
    corpus: Path, home: Path, project: Path
) -> None:
    catalog = discover_agents(
        cwd=project, home=home, plugin_dirs=[corpus / "categories" / "01-core-development"]
    )
    plugin_agents = [d for d in catalog if d.source is AgentSource.PLUGIN]
    assert len(plugin_agents) == 11
    assert catalog.get("voltagent-core-dev:api-designer").plugin == "voltagent-core-dev"


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


def test_a_marketplace_given_as_a_path_loads_only_plugin_agents(write, home: Path) -> None:
    """``agents validate plugins/`` reads a plugin layout as Claude Code does: the agents
    of each plugin, and one note per other kind (https://code.claude.com/docs/en/plugins-reference,
    "Plugin directory structure": skills/, commands/, hooks/ are not agents)."""
    clone = _marketplace_clone(write, home)
    for plugin in ("review-kit", "deploy", "docs"):
        root = clone / "plugins" / plugin
        write(root / "templates/agent-template.md", agent_md("template", "A template"))
        write(root / "README.md", "# readme\n")
    write(clone / "docs/guide.md", agent_md("guide", "Not a plugin"))
    reports = load_paths([clone])
    names = sorted(d.name for r in reports for d in r.definitions)
    assert len(names) == 12
    assert all(n.split(":")[0] in {"review-kit", "deploy", "docs"} for n in names)
    assert {d.source for r in reports for d in r.definitions} == {AgentSource.PLUGIN}
    notes = [d.message for r in reports if r.kind is FileKind.SKIPPED for d in r.diagnostics]
    assert notes == [
        "3 file(s) under commands/ in 3 plugin folder(s) not read: Claude Code loads them "
        "as slash commands, not agents",
        "7 other file(s) in 4 plugin layout folder(s) not read (READMEs, templates, plugins "
        "no marketplace.json lists...): in a plugin, Claude Code loads agents only from "
        "<plugin>/agents/ and the manifest's 'agents'",
        "3 file(s) under skills/ in 3 plugin folder(s) not read: Claude Code loads them as "
        "skills, not agents",
    ]
    # One plugin folder alone, too.
    alone = load_paths([clone / "plugins" / "docs"])
    assert sorted(d.name for r in alone for d in r.definitions) == [
        f"docs:docs-{i}" for i in range(4)
    ]
