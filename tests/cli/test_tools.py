"""``subagents tools list``: the tools an agent would get, their source, flags and reasons.

The JSON shape is the one issue 16 asks for:
``{"tools": [{"name", "source", "read_only", "needs_approval", "reason"}],
"servers": [{"name", "transport", "status", "error"}]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from subagents.cli import main
from subagents.tools import (
    ToolFlags,
    ToolPolicy,
    ToolResult,
    filter_tools,
    tool,
    tool_rows,
    tool_source,
)

REVIEWER = (
    "---\nname: reviewer\ndescription: Reviews code\n"
    "tools: Read, Grep, Bash, spawn_agent\ndisallowedTools: Grep\n---\nReview.\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / ".claude" / "agents").mkdir(parents=True)
    (folder / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["tools", "list", "--json", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_without_an_agent_every_offered_tool_is_listed_and_given(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--cwd", str(project), "--home", str(home))
    assert data["servers"] == []
    rows = {row["name"]: row for row in data["tools"]}  # type: ignore[attr-defined]
    assert rows["Read"] == {
        "name": "Read",
        "source": "builtin",
        "read_only": True,
        "needs_approval": False,
        "reason": None,
    }
    assert rows["Bash"]["needs_approval"] is True
    assert rows["spawn_agent"]["source"] == "lifecycle"
    assert all(row["reason"] is None for row in rows.values())


def test_an_agent_shows_what_each_layer_removed_and_why(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--agent", "reviewer", "--cwd", str(project), "--home", str(home))
    reasons = {row["name"]: row["reason"] for row in data["tools"]}  # type: ignore[attr-defined]
    assert reasons["Read"] is None
    assert reasons["Grep"] == "removed by layer 2, deny list: matches 'Grep' in disallowedTools"
    assert reasons["Write"].startswith("removed by layer 3, allow list")
    assert reasons["spawn_agent"].startswith("removed by layer 1, always removed: agent depth")
    # The project folder is not trusted: its own definition gets no tool that executes.
    assert reasons["Bash"].startswith("removed by layer 4, source policy")
    assert (
        main(["tools", "list", "--agent", "reviewer", "--cwd", str(project), "--home", str(home)])
        == 0
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "READ-ONLY", "APPROVAL", "GIVEN"]
    (grep,) = [line for line in lines if line.startswith("Grep ")]
    assert grep.split()[:4] == ["Grep", "builtin", "yes", "-"]
    assert "no: removed by layer 2, deny list" in grep
    assert "1 of 24 tools given." in out


def test_an_unknown_agent_is_a_clear_error(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["tools", "list", "--agent", "nobody", "--cwd", str(project), "--home", str(home)])
    assert code == 1
    err = capsys.readouterr().err
    assert "No agent named 'nobody'" in err
    assert "reviewer" in err


class _Args(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Declared:
    """A tool that says where it comes from (as MCP and provider-side tools do)."""

    name = "WebSearch"
    description = "Search the web."
    arguments_type = _Args
    flags = ToolFlags(read_only=True)
    source = "server"

    async def call(self, args: object, ctx: object, /) -> ToolResult:
        return ToolResult.ok("")


class _Mcp(_Declared):
    name = "mcp__github__list_issues"
    source = ""


def test_sources_of_python_mcp_and_declared_tools() -> None:
    @tool(needs_approval=True)
    def deploy(env: str) -> str:
        """Deploy."""
        return env

    assert tool_source(deploy) == "python"
    assert tool_source(_Declared()) == "server"
    assert tool_source(_Mcp()) == "mcp:github"
    tools = (deploy, _Declared(), _Mcp())
    rows = tool_rows(filter_tools(tools, ToolPolicy(allow=("deploy", "mcp__github__*"))), tools)
    assert [(r.name, r.source, r.needs_approval, r.reason is None) for r in rows] == [
        ("deploy", "python", True, True),
        ("WebSearch", "server", False, False),
        ("mcp__github__list_issues", "mcp:github", False, True),
    ]
