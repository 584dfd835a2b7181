"""The 158 real agents of the VoltAgent corpus load intact; the READMEs are not agents.

Read file by file (``plugins=False``), every one of the 158 files parses intact.
Read as Claude Code reads the plugins they are (each category folder has a
``.claude-plugin/plugin.json`` listing its agents), 157 load, named
``<plugin>:<agent>``; the one no manifest lists and the READMEs are noted in one
line (https://code.claude.com/docs/en/plugins-reference).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from subagents.agents import (
    AgentSource,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
    load_plugin,
    load_tree,
)

LENIENT_FILES = {
    "04-quality-security/gdpr-ccpa-compliance.md",
    "07-specialized-domains/hipaa-compliance.md",
    "08-business-product/assumption-mapping.md",
    "08-business-product/backlog-grooming.md",
    "08-business-product/growth-loops.md",
    "10-research-analysis/ab-test-analysis.md",
    "10-research-analysis/cohort-analysis.md",
    "10-research-analysis/first-principles-thinking.md",
}

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "voltagent"
_FIELD = re.compile(r"^(name|description|tools|model): (.*)$")


def _independent_read(path: Path) -> tuple[dict[str, str], str]:
    """Frontmatter fields and body, read without the package (the corpus is simple)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "---"
    end = lines.index("---", 1)
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        match = _FIELD.match(line)
        assert match, f"{path}: unexpected frontmatter line {line!r}"
        value = match.group(2).strip()
        fields[match.group(1)] = json.loads(value) if value.startswith('"') else value
    return fields, "\n".join(lines[end + 1 :]).strip()


@pytest.fixture(scope="module")
def reports() -> tuple[FileReport, ...]:
    assert CORPUS.is_dir(), f"the vendored agent corpus is missing at {CORPUS}"
    return load_tree(CORPUS, source=AgentSource.PLUGIN, plugins=False)


def _rel(report: FileReport) -> str:
    assert report.path is not None
    return f"{report.path.parent.name}/{report.path.name}"


def test_every_agent_loads_without_error(reports: tuple[FileReport, ...]) -> None:
    definitions = [d for r in reports for d in r.definitions]
    assert len(definitions) == 158
    assert [d.format() for r in reports for d in r.errors] == []
    assert len({d.name for d in definitions}) == 158
    assert all(d.source is AgentSource.PLUGIN for d in definitions)


def test_the_ten_readmes_are_not_agents(reports: tuple[FileReport, ...]) -> None:
    not_agents = [r for r in reports if r.kind is FileKind.NOT_AN_AGENT]
    assert sorted(_rel(r) for r in not_agents) == sorted(
        f"{category}/README.md"
        for category in (
            "01-core-development",
            "02-language-specialists",
            "03-infrastructure",
            "04-quality-security",
            "05-data-ai",
            "06-developer-experience",
            "07-specialized-domains",
            "08-business-product",
            "09-meta-orchestration",
            "10-research-analysis",
        )
    )
    for report in not_agents:
        (note,) = report.diagnostics
        assert note.code is DiagnosticCode.NOT_AN_AGENT
        assert note.severity is Severity.NOTE
        assert "no YAML frontmatter" in note.message
    skipped = [r for r in reports if r.kind is FileKind.SKIPPED]
    names = [r.path.name for r in skipped if r.path]
    assert [n for n in names if n != ".claude-plugin"] == ["LICENSE"]


def test_as_plugins_the_corpus_loads_what_claude_code_loads() -> None:
    reports = load_tree(CORPUS)
    definitions = [d for r in reports for d in r.definitions]
    assert len(definitions) == 157  # docs-drift-editor.md is in no manifest
    assert all(":" in d.name and d.name.split(":")[0] == d.plugin for d in definitions)
    assert "voltagent-core-dev:api-designer" in {d.name for d in definitions}
    assert [d.format() for r in reports for d in r.errors] == []
    manifests = [r for r in reports if r.kind is FileKind.PLUGIN_MANIFEST]
    assert len(manifests) == 10
    assert all(r.ok for r in manifests)
    assert not [r for r in reports if r.kind is FileKind.NOT_AN_AGENT]  # READMEs not read
    (note,) = [d for r in reports for d in r.diagnostics if d.code is DiagnosticCode.PLUGIN]
    assert note.message.startswith("11 other file(s) in 10 plugin layout folder(s) not read")


def test_name_description_tools_model_and_prompt_are_intact(
    reports: tuple[FileReport, ...],
) -> None:
    checked = 0
    for report in reports:
        for definition in report.definitions:
            assert report.path is not None
            fields, body = _independent_read(report.path)
            assert definition.name == fields["name"]
            assert definition.description == fields["description"]
            assert definition.tools == tuple(t.strip() for t in fields["tools"].split(","))
            assert definition.model == fields.get("model", "inherit")
            assert definition.system_prompt == body
            assert definition.path == report.path
            checked += 1
    assert checked == 158


def test_a_known_agent_exactly(reports: tuple[FileReport, ...]) -> None:
    (report,) = [r for r in reports if r.path and r.path.name == "api-designer.md"]
    (definition,) = report.definitions
    assert definition.name == "api-designer"
    assert definition.tools == ("Read", "Write", "Edit", "Bash", "Glob", "Grep")
    assert definition.model == "sonnet"
    assert definition.description.startswith("Use this agent when designing new APIs")
    assert definition.system_prompt.startswith("You are a senior API designer")
    assert definition.disallowed_tools == ()
    assert [(d.field, d.line) for d in report.diagnostics if d.code is DiagnosticCode.APPLIED] == [
        ("name", 2),
        ("description", 3),
        ("tools", 4),
        ("model", 5),
        (None, 7),
    ]


def test_invalid_yaml_files_load_leniently_with_file_and_line(
    reports: tuple[FileReport, ...],
) -> None:
    lenient = {
        _rel(r): r
        for r in reports
        if any(d.code is DiagnosticCode.LENIENT_YAML for d in r.diagnostics)
    }
    assert set(lenient) == LENIENT_FILES
    for rel, report in lenient.items():
        assert report.ok, rel
        (definition,) = report.definitions
        flagged = [d for d in report.diagnostics if d.code is DiagnosticCode.LENIENT_YAML]
        assert all(d.path == report.path and d.line == 3 for d in flagged), rel
        assert {d.field for d in flagged} == {None, "description"}
        assert report.path is not None
        fields, body = _independent_read(report.path)
        assert definition.description == fields["description"]
        assert ": '" in definition.description
        assert definition.system_prompt == body


def test_backlog_grooming_keeps_the_whole_description(reports: tuple[FileReport, ...]) -> None:
    (report,) = [r for r in reports if r.path and r.path.name == "backlog-grooming.md"]
    (definition,) = report.definitions
    assert definition.description == (
        "Use when the user needs to groom, refine, or clean up a product backlog. "
        "Triggers on: 'groom backlog', 'backlog refinement', 'backlog grooming', "
        "'clean up backlog', 'refine stories', 'sprint refinement', 'backlog management'."
    )
    assert definition.tools == ("Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "WebSearch")
    assert definition.model == "inherit"


def test_unknown_and_mcp_tools_are_reported_not_dropped(
    reports: tuple[FileReport, ...],
) -> None:
    by_name = {d.name: (r, d) for r in reports for d in r.definitions}
    report, definition = by_name["ui-ux-tester"]
    assert "chrome-mcp" in (definition.tools or ())
    unknown = {
        d.message.split("'")[1] for d in report.warnings if d.code is DiagnosticCode.UNKNOWN_TOOL
    }
    assert unknown == {"chrome-mcp", "computer-use"}
    report, definition = by_name["scientific-literature-researcher"]
    assert definition.tools == ("Read", "WebFetch", "WebSearch", "mcp__bgpt__search_papers")
    (mcp,) = [d for d in report.diagnostics if d.code is DiagnosticCode.MCP_TOOL]
    assert "'bgpt'" in mcp.message
    assert mcp.line == 4
    report, _ = by_name["codebase-orchestrator"]
    unknown = {
        d.message.split("'")[1] for d in report.warnings if d.code is DiagnosticCode.UNKNOWN_TOOL
    }
    assert "subagent-catalog:search" in unknown


def test_an_agent_missing_from_its_plugin_manifest_parses_but_is_not_a_plugin_agent(
    reports: tuple[FileReport, ...], corpus: Path
) -> None:
    (report,) = [r for r in reports if r.path and r.path.name == "docs-drift-editor.md"]
    assert report.definitions[0].name == "docs-drift-editor"
    as_plugin = load_tree(corpus / "categories" / "06-developer-experience")
    assert not any(r.path == report.path for r in as_plugin)


def test_plugin_folder_loads_what_its_manifest_lists(corpus: Path) -> None:
    reports = load_plugin(corpus / "categories" / "06-developer-experience")
    names = {d.name for r in reports for d in r.definitions}
    assert len(names) == 15
    assert "voltagent-dev-exp:docs-drift-editor" not in names
    assert "voltagent-dev-exp:cli-developer" in names
    assert {d.plugin for r in reports for d in r.definitions} == {"voltagent-dev-exp"}
    assert reports[0].kind is FileKind.PLUGIN_MANIFEST
