"""Markdown agent files: Claude Code fields, diagnostics with lines, safety, leniency."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from subagents.agents import (
    AgentSource,
    DefinitionError,
    DiagnosticCode,
    FileKind,
    FileReport,
    HookSpec,
    McpServerRef,
    MemoryScope,
    PermissionMode,
    Severity,
    load_file,
    parse_markdown,
)

PATH = Path("/agents/reviewer.md")


def md(text: str) -> FileReport:
    return parse_markdown(textwrap.dedent(text).lstrip("\n"), path=PATH)


def codes(report: FileReport, severity: Severity | None = None) -> list[tuple[str | None, str]]:
    return [
        (d.field, d.code.value)
        for d in report.diagnostics
        if severity is None or d.severity is severity
    ]


def test_claude_code_fields_are_applied() -> None:
    report = md(
        """
        ---
        name: code-reviewer
        description: Expert code reviewer. Use proactively after code changes.
        tools: Read, Grep, Glob, Bash
        disallowedTools: [Write, Edit]
        model: opus
        permissionMode: acceptEdits
        maxTurns: 12
        skills: [review, lint]
        memory: project
        background: true
        color: purple
        initialPrompt: Review the last commit.
        hooks:
          PreToolUse:
            - matcher: Bash
              hooks:
                - type: command
                  command: ./check.sh
                  timeout: 5
        ---

        You are a senior code reviewer.

        Review thoroughly.
        """
    )
    assert report.ok
    assert report.kind is FileKind.DEFINITION
    (d,) = report.definitions
    assert d.name == "code-reviewer"
    assert d.description == "Expert code reviewer. Use proactively after code changes."
    assert d.tools == ("Read", "Grep", "Glob", "Bash")
    assert d.disallowed_tools == ("Write", "Edit")
    assert d.model == "opus"
    assert d.permission_mode is PermissionMode.ACCEPT_EDITS
    assert d.run_limits.max_turns == 12
    assert d.skills == ("review", "lint")
    assert d.memory is MemoryScope.PROJECT
    assert d.background is True
    assert d.color == "purple"
    assert d.initial_prompt == "Review the last commit."
    assert d.hooks == (HookSpec("PreToolUse", "./check.sh", "Bash", 5.0),)
    assert d.system_prompt == "You are a senior code reviewer.\n\nReview thoroughly."
    assert d.path == PATH
    assert d.source is AgentSource.CLI
    assert report.warnings == ()
    applied = [d.field for d in report.diagnostics if d.code is DiagnosticCode.APPLIED]
    assert applied[:4] == ["name", "description", "tools", "disallowedTools"]
    lines = {d.field: d.line for d in report.diagnostics}
    assert lines["name"] == 2
    assert lines["maxTurns"] == 8
    assert lines["hooks"] == 14


def test_tools_as_list_or_comma_string_are_the_same() -> None:
    as_list = md("---\nname: a\ndescription: d\ntools:\n  - Read\n  - Grep\n---\nx\n")
    as_text = md("---\nname: a\ndescription: d\ntools: Read,Grep\n---\nx\n")
    assert as_list.definitions[0].tools == as_text.definitions[0].tools == ("Read", "Grep")


def test_no_tools_field_inherits_all_and_empty_list_means_none() -> None:
    (inherit,) = md("---\nname: a\ndescription: d\n---\nx\n").definitions
    assert inherit.tools is None
    assert inherit.inherits_all_tools
    empty = md("---\nname: a\ndescription: d\ntools: []\n---\nx\n")
    assert empty.definitions[0].tools == ()
    assert ("tools", "empty") in codes(empty, Severity.WARNING)


def test_markdown_without_frontmatter_is_not_an_agent() -> None:
    report = md("# Some README\n\nname: not-a-field\n")
    assert report.kind is FileKind.NOT_AN_AGENT
    assert report.definitions == ()
    assert report.ok
    assert codes(report) == [(None, "not-an-agent")]


def test_unclosed_frontmatter_is_an_error_on_line_one() -> None:
    report = md("---\nname: a\ndescription: d\n")
    (error,) = report.errors
    assert error.line == 1
    assert "never closed" in error.message


def test_missing_name_skips_the_file_as_claude_code_does() -> None:
    """Claude Code skips a Markdown agent without ``name`` (name and description are
    the required fields: https://code.claude.com/docs/en/sub-agents); it is not
    named after its file (issue 15, item 13)."""
    report = md("---\ndescription: Reviews Python.\n---\nYou review.\n")
    assert report.definitions == ()
    (error,) = report.errors
    assert (error.code, error.field) == (DiagnosticCode.MISSING_FIELD, "name")
    assert "Claude Code skips" in error.message


def test_missing_description_is_an_error_with_a_location() -> None:
    report = md("---\nname: a\n---\nbody\n")
    assert report.definitions == ()
    (error,) = report.errors
    assert (error.field, error.line, error.code) == ("description", 1, DiagnosticCode.MISSING_FIELD)
    with pytest.raises(DefinitionError) as caught:
        report.raise_for_errors()
    assert caught.value.path == PATH
    assert caught.value.field == "description"
    assert str(caught.value).startswith("/agents/reviewer.md:1 [description]")


def test_wrong_types_are_errors_naming_field_and_line() -> None:
    """``tools: 42`` stops the agent; values Claude Code drops are warnings."""
    report = md(
        """
        ---
        name: a
        description: d
        maxTurns: many
        background: "yes"
        tools: 42
        ---
        body
        """
    )
    assert report.definitions == ()
    assert sorted((e.field, e.line) for e in report.errors) == [("tools", 6)]
    ignored = [(w.field, w.line) for w in report.warnings if w.code is DiagnosticCode.IGNORED]
    assert sorted(ignored) == [("background", 5), ("maxTurns", 4)]
    (tools_error,) = [e for e in report.errors if e.field == "tools"]
    assert "comma-separated" in tools_error.message


def test_unknown_and_ignored_fields_are_reported_but_not_fatal() -> None:
    report = md(
        """
        ---
        name: a
        description: d
        mcpServers: [github]
        isolation: worktree
        effort: high
        colour: red
        ---
        body
        """
    )
    assert report.ok
    assert len(report.definitions) == 1
    warnings = codes(report, Severity.WARNING)
    assert ("mcpServers", "ignored") not in warnings  # applied since issue 16
    assert report.definitions[0].mcp_servers == (McpServerRef("github"),)
    assert ("isolation", "ignored") in warnings
    assert ("effort", "ignored") in warnings
    (unknown,) = [d for d in report.diagnostics if d.code is DiagnosticCode.UNKNOWN_FIELD]
    assert unknown.field == "colour"
    assert unknown.line == 7
    assert "'color'" in unknown.message


def test_mcp_servers_name_configured_servers_or_inline_ones() -> None:
    """Claude Code's subagent ``mcpServers``: names, or ``{name: {command, args}}`` inline."""
    report = md(
        """
        ---
        name: a
        description: d
        mcpServers:
          - github
          - clock:
              command: python
              args: [-m, mcp_server_time]
        ---
        body
        """
    )
    assert report.ok
    (definition,) = report.definitions
    assert definition.mcp_servers is not None
    github, clock = definition.mcp_servers
    assert (github.name, github.config) == ("github", None)
    assert clock.name == "clock"
    assert dict(clock.config or {}) == {"command": "python", "args": ["-m", "mcp_server_time"]}
    bad = md("---\nname: a\ndescription: d\nmcpServers: [mcp__x__y]\n---\nbody\n")
    assert [e.field for e in bad.errors] == ["mcpServers.0"]


def test_unknown_model_is_a_warning_and_kept() -> None:
    report = md("---\nname: a\ndescription: d\nmodel: gpt-9-turbo\n---\nbody\n")
    assert report.definitions[0].model == "gpt-9-turbo"
    (warning,) = report.warnings
    assert warning.code is DiagnosticCode.UNKNOWN_MODEL
    assert warning.line == 4


def test_unsafe_yaml_tag_is_an_error_for_that_file() -> None:
    report = md(
        """
        ---
        name: a
        description: !!python/object/apply:os.system ["echo pwned"]
        ---
        body
        """
    )
    assert report.definitions == ()
    (error,) = report.errors
    assert error.code is DiagnosticCode.UNSAFE_YAML
    assert error.line == 3
    assert "safe YAML loader" in error.message


def test_lenient_fallback_reads_simple_lines_and_says_so() -> None:
    report = md(
        """
        ---
        name: growth
        description: Use it. Triggers on: 'growth loop', 'flywheel'
        tools: Read, Grep
        maxTurns: 5
        ---
        body
        """
    )
    assert report.ok
    (d,) = report.definitions
    assert d.description == "Use it. Triggers on: 'growth loop', 'flywheel'"
    assert d.tools == ("Read", "Grep")
    assert d.run_limits.max_turns == 5
    lenient = [
        (x.field, x.line) for x in report.diagnostics if x.code is DiagnosticCode.LENIENT_YAML
    ]
    assert lenient == [(None, 3), ("description", 3)]


def test_a_value_that_is_not_yaml_is_quoted_and_the_structure_kept() -> None:
    """Claude Code quotes a frontmatter value that breaks the YAML and parses again,
    so the list under ``tools`` keeps its structure (issue 15, item 12)."""
    report = md(
        """
        ---
        name: a
        description: Triggers on: x
        tools:
          - Read
        ---
        body
        """
    )
    assert report.ok
    (d,) = report.definitions
    assert (d.description, d.tools) == ("Triggers on: x", ("Read",))
    flagged = [
        (x.field, x.line) for x in report.diagnostics if x.code is DiagnosticCode.LENIENT_YAML
    ]
    assert flagged == [(None, 3), ("description", 3)]


def test_a_document_still_broken_after_quoting_is_an_error() -> None:
    report = md("---\nname: a\ndescription: Triggers on: x\ntools: [Read, Grep\n---\nb\n")
    assert report.definitions == ()
    (error,) = report.errors
    assert error.code is DiagnosticCode.SYNTAX


def test_body_and_prompt_field_together_are_a_conflict() -> None:
    report = md("---\nname: a\ndescription: d\nprompt: other\n---\nbody\n")
    (error,) = report.errors
    assert error.code is DiagnosticCode.CONFLICT


def test_name_and_agent_type_must_agree() -> None:
    same = md("---\nname: a\nagentType: a\ndescription: d\n---\nb\n")
    assert same.ok
    differ = md("---\nname: a\nagentType: b\ndescription: d\n---\nb\n")
    (error,) = differ.errors
    assert error.field == "agentType"
    assert "name" in error.message


def test_duplicate_keys_warn_and_last_wins() -> None:
    report = md("---\nname: a\ndescription: one\ndescription: two\n---\nb\n")
    assert report.definitions[0].description == "two"
    (dup,) = [d for d in report.diagnostics if d.code is DiagnosticCode.DUPLICATE_KEY]
    assert dup.line == 4


def test_stop_hook_becomes_subagent_stop_and_other_types_are_ignored() -> None:
    report = md(
        """
        ---
        name: a
        description: d
        hooks:
          Stop:
            - hooks:
                - type: command
                  command: echo done
                - type: prompt
                  prompt: are you sure?
          Notification:
            - hooks: [{type: command, command: x}]
        ---
        b
        """
    )
    assert report.ok
    assert report.definitions[0].hooks == (HookSpec("SubagentStop", "echo done"),)
    ignored = [(d.field, d.line) for d in report.warnings if d.code is DiagnosticCode.IGNORED]
    assert ignored == [("hooks.Stop.0.hooks.1.type", 9), ("hooks.Notification", 11)]


def test_alias_bomb_and_recursive_alias_are_refused() -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        levels.append(f"a{i}: &a{i} [{refs}]")
    bomb = "---\nname: a\ndescription: d\n" + "\n".join(levels) + "\n---\nb\n"
    report = parse_markdown(bomb, path=PATH)
    (error,) = report.errors
    assert error.code is DiagnosticCode.TOO_LARGE
    recursive = parse_markdown("---\nname: a\ndescription: d\nx: &x [*x]\n---\nb\n", path=PATH)
    (error,) = recursive.errors
    assert error.code is DiagnosticCode.TOO_LARGE
    assert "recursive" in error.message


def test_huge_number_is_an_error_not_a_crash() -> None:
    report = md(f"---\nname: a\ndescription: d\nmaxTurns: {'9' * 5000}\n---\nb\n")
    assert report.definitions == ()
    assert report.errors[0].line is not None


def test_bom_and_crlf_are_accepted() -> None:
    report = parse_markdown("\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nline one\r\n")
    assert report.ok
    assert report.definitions[0].system_prompt == "line one"


def test_load_file_reports_bad_encoding_with_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(b"---\nname: a\ndescription: caf\xe9\n---\nb\n")
    report = load_file(path)
    (error,) = report.errors
    assert error.code is DiagnosticCode.UNREADABLE
    assert error.line == 3


def test_load_file_skips_other_file_types_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("---\nname: a\n---\n")
    report = load_file(path)
    assert report.kind is FileKind.SKIPPED
    assert report.definitions == ()
    assert report.diagnostics[0].severity is Severity.NOTE


# -- issue 15, items 12 and 13: read what Claude Code reads, skip what it skips ------------------
# Claude Code's fields and their types: https://code.claude.com/docs/en/sub-agents
# ("Supported frontmatter fields": name and description required; maxTurns a number,
# background a flag, memory user/project/local, permissionMode one of five modes).
# Its frontmatter parser quotes a value that breaks the YAML and parses again
# (anthropics/claude-code#16916: a description holding ': ' loads once quoted).


def test_a_description_opening_with_bold_markup_is_read_as_text() -> None:
    """``**`` opens a YAML alias, so the frontmatter is not YAML; Claude Code quotes
    the value and parses again, and the agent loads."""
    report = md(
        """
        ---
        name: bold
        description: **Expert** reviewer: use it after every change
        tools: [Read, Grep]
        ---
        body
        """
    )
    assert report.ok
    (d,) = report.definitions
    assert d.description == "**Expert** reviewer: use it after every change"
    assert d.tools == ("Read", "Grep")
    (warning,) = [w for w in report.warnings if w.field == "description"]
    assert (warning.code, warning.line) == (DiagnosticCode.LENIENT_YAML, 3)
    assert "as Claude Code reads it" in warning.message


@pytest.mark.parametrize("rule", ["----", "-----", "------------------------------"])
def test_a_frontmatter_closed_by_a_longer_rule_of_dashes_loads(rule: str) -> None:
    report = parse_markdown(f"---\nname: a\ndescription: d\n{rule}\nThe body.\n", path=PATH)
    assert report.ok
    (d,) = report.definitions
    assert (d.name, d.system_prompt) == ("a", "The body.")


@pytest.mark.parametrize(
    ("line", "attribute", "expected"),
    [
        ('background: "true"', "background", True),
        ("background: 'false'", "background", False),
        ('maxTurns: "7"', "max_turns", 7),
    ],
)
def test_flags_and_numbers_written_as_text_are_coerced_with_a_warning(
    line: str, attribute: str, expected: object
) -> None:
    report = parse_markdown(f"---\nname: a\ndescription: d\n{line}\n---\nb\n", path=PATH)
    assert report.ok
    (d,) = report.definitions
    value = d.run_limits.max_turns if attribute == "max_turns" else getattr(d, attribute)
    assert value == expected
    (warning,) = report.warnings
    assert (warning.line, warning.field) == (4, line.split(":")[0])
    assert f"read as {expected!r}" in warning.message


@pytest.mark.parametrize(
    "line",
    [
        "maxTurns: 0",
        "maxTurns: -2",
        'maxTurns: "seven"',
        "memory: global",
        "permissionMode: yolo",
        "background: sometimes",
    ],
)
def test_values_claude_code_drops_are_ignored_and_the_agent_still_loads(line: str) -> None:
    report = parse_markdown(f"---\nname: a\ndescription: d\n{line}\n---\nb\n", path=PATH)
    assert report.ok
    (d,) = report.definitions
    assert d.run_limits.max_turns is None
    assert d.memory is None
    assert d.permission_mode is None
    assert d.background is False
    (warning,) = report.warnings
    key = line.split(":")[0]
    assert (warning.code, warning.line, warning.field) == (DiagnosticCode.IGNORED, 4, key)
    assert warning.message.startswith(f"ignored: {key} ")


def test_tools_with_no_value_gives_no_tools_with_a_warning() -> None:
    """``tools:`` alone is no tools in Claude Code; omitting the field inherits all."""
    report = md("---\nname: a\ndescription: d\ntools:\n---\nb\n")
    (d,) = report.definitions
    assert d.tools == ()
    (warning,) = report.warnings
    assert (warning.code, warning.field, warning.line) == (DiagnosticCode.EMPTY, "tools", 4)
    omitted = md("---\nname: a\ndescription: d\n---\nb\n")
    assert omitted.definitions[0].tools is None
