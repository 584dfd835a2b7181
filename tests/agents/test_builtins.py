"""The six built-in agents: names, tool sets, models, prompts."""

from __future__ import annotations

from subagents.agents import (
    BUILTIN_AGENT_NAMES,
    KNOWN_TOOLS,
    LIFECYCLE_TOOLS,
    AgentSource,
    build_system_prompt,
    builtin_agents,
    classify_tool,
)

WRITING_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}


def by_name() -> dict[str, object]:
    return {d.name: d for d in builtin_agents()}


def test_the_six_builtins() -> None:
    assert BUILTIN_AGENT_NAMES == (
        "general-purpose",
        "Explore",
        "Plan",
        "Bash",
        "statusline-setup",
        "claude-code-guide",
    )
    for definition in builtin_agents():
        assert definition.source is AgentSource.BUILTIN
        assert definition.path is None
        assert len(definition.description) > 40
        assert len(definition.system_prompt) > 600
        assert "${cwd}" in definition.system_prompt
        assert all(classify_tool(t).kind in ("known", "wildcard") for t in definition.tools or ())
        assert set(definition.disallowed_tools) <= set(KNOWN_TOOLS)


def test_tool_sets() -> None:
    agents = {d.name: d for d in builtin_agents()}
    general = agents["general-purpose"]
    assert general.tools == ("*",)
    assert set(LIFECYCLE_TOOLS) <= set(general.disallowed_tools)
    # No built-in forks the parent's conversation (issue 15: Codex's fork_context
    # defaults to false, and Claude Code's general-purpose starts from its prompt).
    assert general.fork_context is False
    assert agents["Bash"].tools == ("Bash",)
    assert agents["statusline-setup"].tools == ("Read", "Edit")
    assert agents["Plan"].tools == ("Glob", "Grep", "Read", "LS", "Bash")
    assert agents["claude-code-guide"].tools == ("Glob", "Grep", "Read", "WebFetch", "WebSearch")
    for name in ("Explore", "Plan", "claude-code-guide"):
        definition = agents[name]
        assert not WRITING_TOOLS & set(definition.tools or ())
        assert set(definition.disallowed_tools) >= WRITING_TOOLS
        assert "READ-ONLY" in (definition.critical_reminder or "")
        assert "READ-ONLY" in definition.system_prompt
        assert definition.fork_context is False


def test_models_follow_the_claude_code_table() -> None:
    models = {d.name: d.model for d in builtin_agents()}
    assert models == {
        "general-purpose": "inherit",
        "Explore": "haiku",
        "Plan": "inherit",
        "Bash": "inherit",
        "statusline-setup": "sonnet",
        "claude-code-guide": "haiku",
    }


def test_explore_thoroughness_is_a_typed_input() -> None:
    explore = {d.name: d for d in builtin_agents()}["Explore"]
    (spec,) = explore.inputs
    assert (spec.name, spec.default, spec.choices) == (
        "thoroughness",
        "medium",
        ("quick", "medium", "very thorough"),
    )
    schema = explore.input_schema()
    assert schema["properties"]["thoroughness"]["enum"] == ["quick", "medium", "very thorough"]
    default = build_system_prompt(explore, cwd="/repo")
    assert "Thoroughness requested: medium" in default
    assert "Working directory: /repo" in default
    thorough = build_system_prompt(explore, cwd="/repo", inputs={"thoroughness": "very thorough"})
    assert "Thoroughness requested: very thorough" in thorough
    assert "${" not in thorough
