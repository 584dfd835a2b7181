"""Hypothesis: definitions survive Markdown and YAML round trips; hostile input never crashes."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents.agents import (
    AgentDefinition,
    DefinitionError,
    FileKind,
    FileReport,
    load_file,
    parse_document,
    parse_markdown,
    to_markdown,
    to_yaml,
)
from tests.agents.strategies import definitions, frontmatter, prompt

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROUND_TRIP = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same(original: AgentDefinition, report: FileReport) -> None:
    assert report.ok, [d.format() for d in report.errors]
    (loaded,) = report.definitions
    assert loaded == attrs.evolve(original, source=loaded.source, path=loaded.path)
    hash(loaded)


@ROUND_TRIP
@given(definitions())
def test_markdown_round_trip(definition: AgentDefinition) -> None:
    _same(definition, parse_markdown(to_markdown(definition), path=Path("agent.md")))


@ROUND_TRIP
@given(definitions())
def test_yaml_round_trip(definition: AgentDefinition) -> None:
    text = to_yaml(definition)
    _same(definition, parse_document(text, path=Path("agent.yaml"), json_format=False))


def test_round_trip_through_files(tmp_path: Path) -> None:
    from subagents.agents import builtin_agents

    for definition in builtin_agents():
        md = tmp_path / f"{definition.name}.md"
        md.write_text(to_markdown(definition), encoding="utf-8")
        yml = tmp_path / f"{definition.name}.yaml"
        yml.write_text(to_yaml(definition), encoding="utf-8")
        for path in (md, yml):
            report = load_file(path)
            _same(definition, report)
            assert report.definitions[0].path == path


def _check_outcome(report: FileReport, path: Path | None) -> None:
    assert len(report.definitions) <= 1 or report.kind is not FileKind.DEFINITION
    if report.definitions:
        assert report.ok
        return
    if report.kind is FileKind.NOT_AN_AGENT:
        assert report.ok
        return
    assert report.errors, [d.format() for d in report.diagnostics]
    for error in report.errors:
        assert error.path == path
        assert isinstance(error.line, int)
        assert error.line >= 1
    with pytest.raises(DefinitionError) as caught:
        report.raise_for_errors()
    assert caught.value.line == report.errors[0].line


@FUZZ
@given(frontmatter, prompt)
def test_random_frontmatter_gives_a_definition_or_located_errors(fm: str, body: str) -> None:
    path = Path("fuzz.md")
    report = parse_markdown(f"---\n{fm}\n---\n{body}\n", path=path)
    assert report.kind is FileKind.DEFINITION
    _check_outcome(report, path)


@FUZZ
@given(frontmatter)
def test_random_yaml_documents_never_crash(text: str) -> None:
    path = Path("fuzz.yaml")
    _check_outcome(parse_document(text, path=path, json_format=False), path)


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["agentType", "whenToUse", "tools", "runConfig", "hooks", "x"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
            max_leaves=10,
        ),
    )
)
def test_random_json_documents_never_crash(data: dict[str, object]) -> None:
    path = Path("fuzz.json")
    text = json.dumps(data, indent=1)
    _check_outcome(parse_document(text, path=path, json_format=True), path)


def test_a_last_value_with_trailing_newlines_keeps_the_frontmatter_closed() -> None:
    """Found by Hypothesis: ``initialPrompt: "\\n"`` was dumped with YAML's ``...`` end marker.

    The Markdown reader takes ``...`` as the end of the frontmatter, so the
    closing ``---`` became the system prompt and the initial prompt was lost.
    """
    definition = AgentDefinition(name="0", description="0", system_prompt="", initial_prompt="\n")
    text = to_markdown(definition)
    assert "\n...\n" not in text
    _same(definition, parse_markdown(text, path=Path("agent.md")))
