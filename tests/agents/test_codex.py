"""Codex custom agents (``.codex/agents/*.toml``) load, with nicknames and read-only sandboxes.

Written from Codex's custom-agent documentation (https://developers.openai.com/codex/subagents:
one standalone TOML file per agent in ``.codex/agents/`` or ``~/.codex/agents/``; ``name``,
``description`` and ``developer_instructions`` required; ``nickname_candidates``, ``model``,
``model_reasoning_effort`` and ``sandbox_mode`` optional; ``name`` is the source of truth,
not the file name) and its configuration reference (``nickname_candidates``: an optional
pool of display nicknames for the agents spawned with that role).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from subagents.agents import (
    AgentSource,
    DiagnosticCode,
    FileKind,
    PermissionMode,
    discover_agents,
    load_file,
    load_paths,
    parse_codex,
)
from subagents.runtime import restrict_catalog
from subagents.tools import builtin_tools, filter_tools, tool_policy

REVIEWER = '''\
name = "reviewer"
description = "PR reviewer focused on correctness, security, and missing tests."
model = "gpt-5.3-codex"
model_reasoning_effort = "high"
sandbox_mode = "read-only"
nickname_candidates = ["Atlas", "Delta", "Echo"]
developer_instructions = """
Review code like an owner.
Prioritize correctness, security, behavior regressions, and missing test coverage.
"""
'''


def test_a_documented_custom_agent_loads(write, project: Path) -> None:
    path = write(project / ".codex/agents/pr-reviewer.toml", REVIEWER)
    report = load_file(path)
    assert report.ok, [d.format() for d in report.diagnostics]
    (d,) = report.definitions
    assert d.name == "reviewer"  # the name field, not the file name
    assert d.description.startswith("PR reviewer")
    assert d.system_prompt.startswith("Review code like an owner.")
    assert d.model == "gpt-5.3-codex"
    assert d.nickname_candidates == ("Atlas", "Delta", "Echo")
    assert d.permission_mode is PermissionMode.PLAN
    ignored = [x for x in report.diagnostics if x.code is DiagnosticCode.IGNORED]
    assert [x.field for x in ignored] == ["model_reasoning_effort"]
    assert ignored[0].line == 4


def test_read_only_sandbox_keeps_only_read_only_tools() -> None:
    (d,) = parse_codex(REVIEWER).definitions
    kept = {t.name for t in filter_tools(builtin_tools(), tool_policy(d)).tools}
    assert {"Read", "Grep", "Glob"} <= kept
    assert not kept & {"Write", "Edit", "Bash", "NotebookEdit"}
    writable = REVIEWER.replace('"read-only"', '"workspace-write"')
    (w,) = parse_codex(writable).definitions
    assert w.permission_mode is None
    assert {"Write", "Bash"} <= {
        t.name for t in filter_tools(builtin_tools(), tool_policy(w)).tools
    }


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (('"read-only"', '"readonly"'), "sandbox_mode"),
        (('["Atlas", "Delta", "Echo"]', '["Atlas", "Atlas"]'), "nickname_candidates.1"),
        (('["Atlas", "Delta", "Echo"]', '["Atlas", " "]'), "nickname_candidates.1"),
        (('["Atlas", "Delta", "Echo"]', '"Atlas"'), "nickname_candidates"),
        (('name = "reviewer"', "name = 3"), "name"),
    ],
)
def test_bad_values_are_errors_that_drop_the_agent(change: tuple[str, str], field: str) -> None:
    report = parse_codex(REVIEWER.replace(*change))
    assert report.definitions == ()
    assert [d.field for d in report.errors] == [field]


def test_missing_required_fields_and_broken_toml() -> None:
    report = parse_codex('name = "x"\ndescription = "d"\n')
    assert report.definitions == ()
    assert [d.field for d in report.errors] == ["developer_instructions"]
    broken = parse_codex('name = "x"\ndescription = \n')
    assert broken.definitions == ()
    assert broken.errors[0].code is DiagnosticCode.SYNTAX
    assert broken.errors[0].line == 2
    deep = parse_codex("a = " + "[" * 100_000 + "]" * 100_000)
    assert deep.definitions == ()
    assert not deep.ok


def test_a_huge_number_is_a_diagnostic_and_the_other_agents_still_load(
    write, home: Path, project: Path
) -> None:
    # tomllib raises a plain ValueError past Python's int digit limit (4300 digits).
    report = parse_codex('name = "x"\nx = ' + "1" * 5000 + "\n")
    assert report.definitions == ()
    (error,) = report.errors
    assert error.code is DiagnosticCode.TOO_LARGE
    assert "cannot be read" in error.message
    folder = project / ".codex/agents"
    write(folder / "huge.toml", 'name = "huge"\nx = ' + "1" * 5000 + "\n")
    write(folder / "reviewer.toml", REVIEWER)
    catalog = discover_agents(cwd=project, home=home)
    assert catalog.get("reviewer").name == "reviewer"
    (huge,) = [r for r in catalog.reports if r.path == folder / "huge.toml"]
    assert huge.definitions == ()
    assert huge.errors[0].code is DiagnosticCode.TOO_LARGE


def test_a_toml_file_that_is_not_an_agent_is_said_so(write, tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", 'model = "gpt-5"\n[agents]\nmax_threads = 4\n')
    assert load_file(path).kind is FileKind.NOT_AN_AGENT


def test_named_explicitly_it_loads(write, tmp_path: Path) -> None:
    # Today: "not read: only .md, .markdown, .yaml, .yml and .json files define agents".
    path = write(tmp_path / "reviewer.toml", REVIEWER)
    (report,) = load_paths([path])
    assert [d.name for d in report.definitions] == ["reviewer"]


def test_discovery_reads_codex_folders_at_user_and_project_scope(
    write, home: Path, project: Path
) -> None:
    write(project / ".codex/agents/reviewer.toml", REVIEWER)
    write(home / ".codex/agents/helper.toml", REVIEWER.replace('"reviewer"', '"helper"'))
    catalog = discover_agents(cwd=project, home=home)
    assert catalog.get("reviewer").source is AgentSource.PROJECT
    assert catalog.get("helper").source is AgentSource.USER
    assert (AgentSource.PROJECT, project / ".codex/agents") in {
        (p.source, p.path) for p in catalog.searched
    }


def test_a_fifo_named_toml_is_refused_not_waited_on(home: Path, project: Path) -> None:
    folder = project / ".codex/agents"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "jam.toml")
    catalog = discover_agents(cwd=project, home=home)
    (report,) = [r for r in catalog.reports if r.path == folder / "jam.toml"]
    assert report.errors[0].code is DiagnosticCode.UNREADABLE
    assert "FIFO" in report.errors[0].message


def test_project_codex_agents_get_the_workspace_trust_of_claude_agents(
    write, home: Path, project: Path
) -> None:
    auto = REVIEWER.replace('sandbox_mode = "read-only"', 'approvalMode = "auto_approve"')
    write(project / ".codex/agents/reviewer.toml", auto)
    catalog = discover_agents(cwd=project, home=home)
    restricted = restrict_catalog(catalog)
    assert restricted.catalog.get("reviewer").approval_mode is not None
    assert restricted.catalog.get("reviewer").approval_mode.value == "route_to_parent"
    assert "the auto-approval of agent reviewer" in restricted.ignored


def test_the_cli_lists_a_codex_agent_as_json(
    cli, write, home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / ".codex/agents/reviewer.toml", REVIEWER)
    assert cli("show", "reviewer", "--json", "--cwd", str(project), "--home", str(home)) == 0
    (agent,) = json.loads(capsys.readouterr().out)["agents"]
    assert (agent["nicknames"], agent["read_only"], agent["source"]) == (
        ["Atlas", "Delta", "Echo"],
        True,
        "project",
    )


def test_diagnostic_lines_skip_multiline_strings_and_tables() -> None:
    text = (
        'developer_instructions = """\n'
        "model_reasoning_effort = this line is prompt text\n"
        '"""\n'
        'name = "r"\n'
        'description = "d"\n'
        "[mcp_servers.docs]\n"
        'model_reasoning_effort = "not top-level"\n'
    )
    report = parse_codex(text.replace("[mcp", 'model_reasoning_effort = "low"\n[mcp'))
    (ignored,) = [d for d in report.diagnostics if d.field == "model_reasoning_effort"]
    assert ignored.line == 6
    (servers,) = [d for d in report.diagnostics if d.field == "mcp_servers"]
    assert servers.line == 7
    # applied since issue 16: the agent's own [mcp_servers.NAME] servers
    assert "applied" in servers.message


def test_an_agents_own_mcp_servers_tables_are_applied() -> None:
    """A Codex agent file is a config layer: its ``[mcp_servers.NAME]`` are that agent's own."""
    report = parse_codex(
        'name = "r"\ndescription = "d"\ndeveloper_instructions = "x"\n'
        '[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--stdio"]\n'
    )
    (definition,) = report.definitions
    assert definition.mcp_servers is not None
    (docs,) = definition.mcp_servers
    assert docs.name == "docs"
    assert dict(docs.config or {}) == {"command": "docs-mcp", "args": ["--stdio"]}
