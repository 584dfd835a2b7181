"""Templates, memory, the model alias table and tool-name classification."""

from __future__ import annotations

from pathlib import Path

import pytest

from subagents.agents import (
    DEFAULT_MODEL_ALIASES,
    IMPLEMENTED_TOOLS,
    AgentDefinition,
    DiagnosticCode,
    MemoryScope,
    ModelAliases,
    Severity,
    build_system_prompt,
    classify_tool,
    load_file,
    memory_file,
    read_memory,
    render_template,
)
from subagents.agents._tools import split_tool_list


def test_render_template_substitutes_known_names_only() -> None:
    text = "cwd=${cwd} type=${agent_type} x=${x} shell=${HOME} $cwd ${ not a var }"
    out = render_template(text, {"cwd": "/r", "agent_type": "a", "x": ["p", "q"]})
    assert out == "cwd=/r type=a x=p, q shell=${HOME} $cwd ${ not a var }"
    assert render_template("${flag}/${none}", {"flag": True, "none": None}) == "true/"


@pytest.mark.parametrize(
    ("scope", "relative"),
    [
        (MemoryScope.USER, "home/.claude/agent-memory/keeper/MEMORY.md"),
        (MemoryScope.PROJECT, "proj/.claude/agent-memory/keeper/MEMORY.md"),
        (MemoryScope.LOCAL, "proj/.claude/agent-memory-local/keeper/MEMORY.md"),
    ],
)
def test_memory_first_200_lines_are_added(
    tmp_path: Path, scope: MemoryScope, relative: str
) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    definition = AgentDefinition("keeper", "keeps notes", "You keep notes in ${cwd}.", memory=scope)
    path = memory_file(definition, home=home, project_root=proj)
    assert path == tmp_path / relative
    assert read_memory(definition, home=home, project_root=proj) is None
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"fact {i}\n" for i in range(1, 301)))
    memory = read_memory(definition, home=home, project_root=proj)
    assert memory is not None
    assert memory.splitlines()[0] == "fact 1"
    assert memory.splitlines()[-1] == "fact 200"
    prompt = build_system_prompt(definition, cwd=proj, home=home)
    assert prompt.startswith(f"You keep notes in {proj}.")
    assert "fact 200" in prompt
    assert "fact 201" not in prompt
    assert str(path) in prompt


def test_agent_without_memory_reads_nothing(tmp_path: Path) -> None:
    definition = AgentDefinition("a", "d", "plain")
    assert memory_file(definition, home=tmp_path, project_root=tmp_path) is None
    assert build_system_prompt(definition, cwd=tmp_path, home=tmp_path) == "plain"


def test_memory_folder_name_cannot_escape(tmp_path: Path) -> None:
    definition = AgentDefinition("../../etc", "d", memory=MemoryScope.USER)
    path = memory_file(definition, home=tmp_path, project_root=tmp_path)
    assert path is not None
    assert path.is_relative_to(tmp_path / ".claude" / "agent-memory")


def test_model_aliases_resolve_and_can_be_overridden() -> None:
    aliases = ModelAliases()
    assert aliases.resolve("sonnet") == DEFAULT_MODEL_ALIASES["sonnet"]
    assert aliases.resolve("Haiku") == "claude-haiku-5-5"
    assert (
        aliases.resolve("inherit", parent="claude-opus-4-5-20251101") == "claude-opus-4-5-20251101"
    )
    assert aliases.resolve(None, parent="p") == "p"
    assert aliases.check("claude-3-5-haiku-latest").kind == "model-id"
    assert aliases.check("gpt-4o").kind == "unknown"
    assert aliases.resolve("gpt-4o") == "gpt-4o"
    custom = aliases.with_overrides({"SONNET": "claude-sonnet-custom", "fast": "m-1"})
    assert custom.resolve("sonnet") == "claude-sonnet-custom"
    assert custom.resolve("fast") == "m-1"
    assert aliases.resolve("sonnet") == DEFAULT_MODEL_ALIASES["sonnet"]


def test_tool_names_are_classified() -> None:
    assert classify_tool("Read").kind == "known"
    assert classify_tool("*").kind == "wildcard"
    mcp = classify_tool("mcp__github__create_issue")
    assert (mcp.kind, mcp.server) == ("mcp", "github")
    assert classify_tool("mcp__github__*").kind == "mcp"
    assert classify_tool("Agent(Explore, Plan)").kind == "known"
    assert classify_tool("Todo*").kind == "pattern"
    assert classify_tool("chrome-mcp").kind == "unknown"
    assert classify_tool("Zzz*").kind == "unknown"


#: Claude Code's current tool names (https://code.claude.com/docs/en/tools-reference).
CLAUDE_CODE_TOOLS = (
    "Agent",
    "AskUserQuestion",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "ListMcpResourcesTool",
    "LSP",
    "Monitor",
    "NotebookEdit",
    "PowerShell",
    "Read",
    "ReadMcpResourceTool",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TeamCreate",
    "TeamDelete",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "WebSearch",
    "Write",
)


@pytest.mark.parametrize("name", CLAUDE_CODE_TOOLS)
def test_claude_code_current_tool_names_are_known(name: str) -> None:
    kind = classify_tool(name)
    assert kind.kind == "known"
    assert kind.implemented is (name in IMPLEMENTED_TOOLS)


def test_send_message_the_task_tools_and_the_team_tools_are_implemented() -> None:
    assert classify_tool("SendMessage").implemented
    for name in ("TaskCreate", "TaskList", "TaskGet", "TaskUpdate", "TeamCreate", "TeamDelete"):
        assert classify_tool(name).implemented


def test_unimplemented_claude_code_tools_get_a_note_naming_them(write, tmp_path: Path) -> None:
    path = write(
        tmp_path / "lead.md",
        """
        ---
        name: lead
        description: Leads a team.
        tools: Read, SendMessage, TaskCreate, TaskUpdate, TaskList, TeamCreate, TaskStop
        ---
        Lead.
        """,
    )
    report = load_file(path)
    (definition,) = report.definitions
    assert definition.tools == (
        "Read",
        "SendMessage",
        "TaskCreate",
        "TaskUpdate",
        "TaskList",
        "TeamCreate",
        "TaskStop",
    )
    assert not [d for d in report.diagnostics if d.code is DiagnosticCode.UNKNOWN_TOOL]
    notes = [d for d in report.diagnostics if d.code is DiagnosticCode.NOT_IMPLEMENTED_TOOL]
    named = [d.message.split("'")[1] for d in notes]
    assert named == ["TaskStop"]  # the task and team tools are implemented (issue 18)
    assert all("not implement" in d.message for d in notes)
    assert all(d.severity is Severity.NOTE for d in notes)


def test_web_multiedit_and_todowrite_are_implemented_and_notebookedit_says_why_not(
    write, tmp_path: Path
) -> None:
    path = write(
        tmp_path / "a.md",
        """
        ---
        name: a
        description: Edits.
        tools: WebFetch, WebSearch, MultiEdit, TodoWrite, NotebookEdit
        ---
        A.
        """,
    )
    report = load_file(path)
    notes = [d for d in report.diagnostics if d.code is DiagnosticCode.NOT_IMPLEMENTED_TOOL]
    assert [d.message.split("'")[1] for d in notes] == ["NotebookEdit"]
    assert "Edit or Write change the .ipynb file as text" in notes[0].message


def test_comma_strings_keep_parenthesised_arguments_together() -> None:
    assert split_tool_list("Read, Agent(Explore, Plan),, Bash ") == (
        "Read",
        "Agent(Explore, Plan)",
        "Bash",
    )
