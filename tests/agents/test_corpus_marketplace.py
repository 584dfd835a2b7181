"""A real Claude Code plugin marketplace, read as Claude Code reads it.

``tests/fixtures/corpus/wshobson`` is wshobson/agents (MIT) at a pinned commit:
202 agents in 91 plugins (see the corpus README). Each plugin's agents load under
``<plugin>:<agent>``, as Claude Code addresses them, and nothing of it fails.
"""

from __future__ import annotations

import json
from pathlib import Path

from subagents.agents import AgentSource, Severity, load_tree
from subagents.cli import main

MARKETPLACE = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "wshobson"


def _agent_files() -> list[Path]:
    return sorted(MARKETPLACE.glob("plugins/*/agents/*.md"))


def test_every_agent_of_the_marketplace_loads_under_its_plugins_name() -> None:
    reports = load_tree(MARKETPLACE)
    definitions = [d for report in reports for d in report.definitions]
    files = _agent_files()
    assert len(files) == 202
    assert len(definitions) == len(files)
    errors = [g for report in reports for g in report.diagnostics if g.severity is Severity.ERROR]
    assert errors == []
    for definition in definitions:
        plugin = definition.path.parent.parent.name if definition.path else None
        assert definition.source is AgentSource.PLUGIN
        assert definition.plugin == plugin
        assert definition.name.startswith(f"{plugin}:")
        assert definition.description
        assert definition.system_prompt.strip()


def test_models_and_tools_are_read_as_written() -> None:
    definitions = {d.path: d for report in load_tree(MARKETPLACE) for d in report.definitions}
    for file in _agent_files():
        text = file.read_text(encoding="utf-8")
        frontmatter = text.split("---", 2)[1]
        definition = definitions[file]
        for line in frontmatter.splitlines():
            if line.startswith("model:"):
                written = line.split(":", 1)[1].strip().strip("\"'")
                assert definition.model == written, file
            if line.startswith("tools:"):
                listed = line.split(":", 1)[1].strip()
                # `tools: []` (one agent writes it) gives none, as Claude Code does.
                assert bool(definition.tools) == (listed not in ("", "[]")), file


def test_validate_json_counts_the_marketplace(capsys: object) -> None:
    code = main(["agents", "validate", str(MARKETPLACE), "--json"])
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    record = json.loads(out)
    assert code == 0
    assert len(record["agents"]) == 202
    assert record["errors"] == []
