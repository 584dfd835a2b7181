"""From agent definitions to tool policies: the built-ins and user agents get the right tools."""

from __future__ import annotations

import pytest

from subagents.agents import AgentDefinition, AgentSource, PermissionMode, builtin_agents
from subagents.cli import main
from subagents.tools import builtin_tools, filter_tools, tool_policy


def kept(definition: AgentDefinition, **kwargs: object) -> set[str]:
    selection = filter_tools(builtin_tools(), tool_policy(definition, **kwargs))  # type: ignore[arg-type]
    return {tool.name for tool in selection.tools}


BUILTINS = {d.name: d for d in builtin_agents()}


def test_explore_and_plan_are_read_only_and_bash_is_bash_only() -> None:
    assert kept(BUILTINS["Explore"]) == {"Read", "Glob", "Grep", "LS", "Bash"}
    assert "Write" not in kept(BUILTINS["Plan"])
    assert "Edit" not in kept(BUILTINS["Plan"])
    assert kept(BUILTINS["Bash"]) == {"Bash"}
    assert kept(BUILTINS["statusline-setup"]) == {"Read", "Edit"}


def test_a_project_agent_with_all_tools_but_bash() -> None:
    agent = AgentDefinition(
        name="writer", description="d", tools=None, disallowed_tools=("Bash",),
        source=AgentSource.PROJECT,
    )  # fmt: skip
    assert kept(agent) == {
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Glob",
        "Grep",
        "LS",
        "WebFetch",
        "WebSearch",
    }


def test_a_user_agent_keeps_the_write_tool_it_lists() -> None:
    agent = AgentDefinition(
        name="reviewer", description="d", tools=("Read", "Edit"), source=AgentSource.USER
    )
    assert kept(agent) == {"Read", "Edit"}  # the user wrote it: trust follows the author


def test_plan_mode_and_background_narrow_the_tools() -> None:
    planner = AgentDefinition(
        name="p", description="d", permission_mode=PermissionMode.PLAN, source=AgentSource.PROJECT
    )
    assert kept(planner) == {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch"}
    policy = tool_policy(planner, background=True, depth=2, max_depth=3)
    assert (policy.background, policy.depth, policy.max_depth, policy.read_only) == (
        True,
        2,
        3,
        True,
    )


def test_agents_show_explains_every_tool_decision(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents", "show", "Explore", "--home", "/nonexistent-home"]) == 0
    out = capsys.readouterr().out
    assert "+ Read: kept" in out
    assert "- Write: removed by layer 2, deny list" in out
