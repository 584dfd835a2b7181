"""YAML and JSON definitions: the richer fields, config maps, --agents, locations."""

from __future__ import annotations

import json
from pathlib import Path

from subagents.agents import (
    AgentSource,
    ApprovalMode,
    DiagnosticCode,
    FileKind,
    InputSpec,
    InputType,
    Severity,
    load_file,
    parse_agents_json,
    parse_document,
    render_query,
    render_template,
)

# The YAML example of the design document (seed 003, section 3.1.4), verbatim.
SEED_YAML = """\
agentType: code-reviewer
displayName: "Code Reviewer Agent"  # NEW: Human-readable name
whenToUse: "Use for reviewing code changes and suggesting improvements"
tools:
  - read_file
  - glob_files
  - grep_files
disallowedTools:
  - shell
  - write_file
source: user
forkContext: false

# NEW: Detailed model configuration (from Gemini)
modelConfig:
  model: inherit
  temperature: 0.1       # Low temperature for accuracy
  topP: 0.95
  thinkingBudget: -1     # Unlimited thinking

# NEW: Enhanced run config with grace period
runConfig:
  maxTimeSeconds: 180
  maxTurns: 20
  gracePeriodSeconds: 60  # NEW: Grace period for recovery

# NEW: Typed input parameters (from Gemini)
inputConfig:
  inputs:
    file_path:
      type: string
      required: true
      description: "Path to the file to review"
    review_focus:
      type: string
      required: false
      description: "Specific aspects to focus on"

# NEW: Structured output with schema (from Gemini)
outputConfig:
  outputName: "review_report"
  description: "The code review report"
  schema:
    type: object
    properties:
      summary:
        type: string
        description: "Summary of the review"
      issues:
        type: array
        items:
          type: object
          properties:
            severity: { type: string }
            description: { type: string }
            line: { type: integer }
      suggestions:
        type: array
        items: { type: string }
    required: [summary, issues]

# NEW: Separated prompt configuration (from Gemini)
promptConfig:
  systemPrompt: |
    You are a code review specialist.
    Current working directory: ${cwd}
  query: |
    Review the file: ${file_path}
    Focus: ${review_focus}

    Provide a thorough review and call complete_task with your report.
"""

SEED_MARKDOWN = """\
---
agentType: code-reviewer
displayName: "Code Reviewer"
whenToUse: "Use for reviewing code changes"
tools: ["read_file", "glob_files", "grep_files"]
modelConfig:
  model: inherit
  temperature: 0.1
runConfig:
  maxTimeSeconds: 180
  gracePeriodSeconds: 60
inputConfig:
  inputs:
    file_path: { type: string, required: true, description: "File to review" }
---

You are a code review specialist.

Current working directory: ${cwd}

Task: Review ${file_path}

Review the code thoroughly and call complete_task with your findings.
"""


def test_seed_yaml_example_loads_every_rich_field(write, tmp_path: Path) -> None:
    path = write(tmp_path / "my-agent.yaml", SEED_YAML)
    report = load_file(path)
    assert report.ok, [d.format() for d in report.errors]
    (d,) = report.definitions
    assert d.name == "code-reviewer"
    assert d.display_name == "Code Reviewer Agent"
    assert d.description == "Use for reviewing code changes and suggesting improvements"
    assert d.tools == ("read_file", "glob_files", "grep_files")
    assert d.disallowed_tools == ("shell", "write_file")
    assert d.fork_context is False
    assert d.model == "inherit"
    assert (d.model_settings.temperature, d.model_settings.top_p) == (0.1, 0.95)
    assert d.model_settings.thinking_budget == -1
    assert d.run_limits.max_time_seconds == 180.0
    assert d.run_limits.max_turns == 20
    assert d.run_limits.grace_period_seconds == 60.0
    assert d.inputs == (
        InputSpec("file_path", InputType.STRING, "Path to the file to review", True),
        InputSpec("review_focus", InputType.STRING, "Specific aspects to focus on", False),
    )
    assert d.input_schema()["required"] == ["file_path"]
    assert d.output is not None
    assert d.output.name == "review_report"
    assert d.output.as_json_schema()["required"] == ["summary", "issues"]
    assert d.system_prompt == "You are a code review specialist.\nCurrent working directory: ${cwd}"
    assert render_query(d, cwd="/w", prompt="", inputs={"file_path": "a.py"}).startswith(
        "Review the file: a.py\nFocus: \n"
    )
    # Tool names of another code base are reported, not dropped; 'source' is ignored.
    unknown = [x.field for x in report.warnings if x.code is DiagnosticCode.UNKNOWN_TOOL]
    assert unknown == ["tools.0", "tools.1", "tools.2", "disallowedTools.0", "disallowedTools.1"]
    (ignored,) = [x for x in report.warnings if x.code is DiagnosticCode.IGNORED]
    assert (ignored.field, ignored.line) == ("source", 11)


def test_seed_markdown_example_with_rich_frontmatter(write, tmp_path: Path) -> None:
    report = load_file(write(tmp_path / "my-agent.md", SEED_MARKDOWN))
    assert report.ok
    (d,) = report.definitions
    assert d.name == "code-reviewer"
    assert d.display_name == "Code Reviewer"
    assert d.inputs[0].required is True
    prompt = render_template(d.system_prompt, {"cwd": "/repo", "file_path": "x.py"})
    assert "Current working directory: /repo" in prompt
    assert "Task: Review x.py" in prompt


def test_json_agent_file_has_line_numbers(write, tmp_path: Path) -> None:
    path = write(
        tmp_path / "tester.json",
        """
        {
          "agentType": "tester",
          "whenToUse": "Runs the tests",
          "runConfig": {
            "maxTurns": 0
          },
          "approvalMode": "auto_approve_in_sandbox"
        }
        """,
    )
    report = load_file(path)
    (error,) = report.errors
    assert (error.field, error.line) == ("runConfig.maxTurns", 5)
    fixed = path.read_text().replace('"maxTurns": 0', '"maxTurns": 3')
    path.write_text(fixed)
    report = load_file(path)
    (d,) = report.definitions
    # No OS sandbox here: nothing is approved unasked on that ground, and it says so.
    assert d.approval_mode is ApprovalMode.ROUTE_TO_PARENT
    (warning,) = [w for w in report.warnings if w.field == "approvalMode"]
    assert warning.line == 7
    assert "no OS sandbox" in warning.message
    assert d.run_limits.max_turns == 3


def test_invalid_json_is_an_error_with_its_line(write, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '{\n  "agentType": "x",\n  "whenToUse": \n}\n')
    (error,) = load_file(path).errors
    assert error.code is DiagnosticCode.SYNTAX
    assert error.line == 4


def test_yaml_file_without_agent_fields_is_not_an_agent(write, tmp_path: Path) -> None:
    report = load_file(write(tmp_path / "ci.yml", "jobs:\n  build: {}\n"))
    assert report.kind is FileKind.NOT_AN_AGENT
    assert report.ok
    report = load_file(write(tmp_path / "list.yaml", "- a\n- b\n"))
    assert report.kind is FileKind.NOT_AN_AGENT


def test_config_json_agents_map_isolates_bad_entries(write, tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.json",
        json.dumps(
            {
                "agents": {
                    "reviewer": {
                        "description": "Code reviewer",
                        "prompt": "You review code.",
                        "tools": ["Read", "Grep", "Glob"],
                        "model": "haiku",
                    },
                    "broken": {"description": "x", "tools": 5},
                    "not-a-map": "oops",
                },
                "defaultModel": "sonnet",
                "modelAliases": {"fast": "claude-haiku-4-5-20251001"},
            },
            indent=2,
        ),
    )
    report = load_file(path, config=True, source=AgentSource.PROJECT)
    assert report.kind is FileKind.CONFIG
    (d,) = report.definitions
    assert (d.name, d.system_prompt, d.model) == ("reviewer", "You review code.", "haiku")
    assert d.tools == ("Read", "Grep", "Glob")
    assert d.source is AgentSource.PROJECT
    errors = sorted((e.field, e.line) for e in report.errors)
    assert errors == [("agents.broken.tools", 15), ("agents.not-a-map", 17)]
    notes = [x for x in report.diagnostics if x.code is DiagnosticCode.SKIPPED]
    assert "defaultModel" in notes[0].message
    assert any(x.field == "modelAliases.fast" for x in report.diagnostics)


def test_agents_json_string_from_the_command_line() -> None:
    report = parse_agents_json(
        '{"reviewer": {"description": "Reviews", "prompt": "You review.", "model": "sonnet"},'
        ' "bad": {"prompt": "no description"}}'
    )
    assert report.path is None
    assert report.source is AgentSource.CLI
    (d,) = report.definitions
    assert d.name == "reviewer"
    assert d.source is AgentSource.CLI
    assert d.path is None
    (error,) = report.errors
    assert error.field == "bad.description"
    assert error.line == 1
    assert error.format().startswith("<--agents>:1: error: [bad.description]")


def test_agents_json_string_that_is_not_json() -> None:
    report = parse_agents_json("{reviewer: 1}")
    (error,) = report.errors
    assert error.code is DiagnosticCode.SYNTAX


def test_output_schema_must_be_valid_json_schema() -> None:
    report = parse_document(
        "agentType: a\nwhenToUse: b\noutputConfig:\n  outputName: r\n  schema:\n    type: 12\n",
        path=Path("x.yaml"),
        json_format=False,
    )
    (error,) = report.errors
    assert error.field == "outputConfig.schema"
    assert error.line == 5


def test_inputs_must_have_identifier_names_and_matching_defaults() -> None:
    text = (
        "agentType: a\nwhenToUse: b\ninputConfig:\n  inputs:\n"
        "    prompt: {type: string}\n"
        "    depth: {type: integer, default: deep}\n"
        "    level: {type: string, enum: [low, high], default: low}\n"
    )
    report = parse_document(text, path=Path("x.yaml"), json_format=False)
    assert sorted((e.field, e.line) for e in report.errors) == [
        ("inputConfig.inputs.depth.default", 6),
        ("inputConfig.inputs.prompt", 5),
    ]


def test_model_config_and_top_level_model_must_agree() -> None:
    report = parse_document(
        "agentType: a\nwhenToUse: b\nmodel: haiku\nmodelConfig: {model: opus}\n",
        path=Path("x.yaml"),
        json_format=False,
    )
    (error,) = report.errors
    assert error.code is DiagnosticCode.CONFLICT
    assert error.field == "modelConfig.model"


def test_out_of_range_settings_are_errors() -> None:
    report = parse_document(
        "agentType: a\nwhenToUse: b\nmodelConfig: {temperature: 3.5, topP: .nan}\n"
        "runConfig: {gracePeriodSeconds: -1, colour: x}\n",
        path=Path("x.yaml"),
        json_format=False,
    )
    fields = sorted(e.field for e in report.errors if e.field)
    assert fields == [
        "modelConfig.temperature",
        "modelConfig.topP",
        "runConfig.gracePeriodSeconds",
    ]
    assert [w.field for w in report.diagnostics if w.severity is Severity.WARNING] == [
        "runConfig.colour"
    ]
