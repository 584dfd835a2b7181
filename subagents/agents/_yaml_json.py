"""YAML and JSON agent definitions: one agent per file, or an ``agents`` map.

A YAML/JSON file holds either one agent (the richer camelCase fields,
``agentType``, ``modelConfig``...; Claude Code's names work too) or, like a
``config.json``, an ``agents`` map from agent name to fields. The ``--agents``
command-line string is such a map without the ``agents`` key, as in Claude
Code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from subagents.agents._definition import AgentDefinition, AgentSource
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._fields import KNOWN_FIELDS, interpret
from subagents.agents._lines import KeyPath, LineIndex
from subagents.agents._models import ModelAliases
from subagents.agents._parse import (
    Parsed,
    duplicate_diagnostics,
    parse_json,
    parse_yaml,
    problem_diagnostic,
)

__all__ = ["model_aliases_in", "parse_agents_json", "parse_document"]

_DEFAULT_ALIASES = ModelAliases()
#: Keys of a config file that this package reads.
_CONFIG_KEYS = ("agents", "modelAliases")


def _diag(
    severity: Severity,
    code: DiagnosticCode,
    message: str,
    path: Path | None,
    index: LineIndex,
    keys: KeyPath,
) -> Diagnostic:
    field = ".".join(str(k) for k in keys) or None
    return Diagnostic(severity, code, message, path, index.line(keys), field)


def model_aliases_in(
    data: Any, *, path: Path | None, index: LineIndex
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Read a config's ``modelAliases`` map (alias -> full model id)."""
    raw = data.get("modelAliases") if isinstance(data, Mapping) else None
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [
            _diag(
                Severity.ERROR,
                DiagnosticCode.INVALID_VALUE,
                "modelAliases must map alias names to full model ids",
                path,
                index,
                ("modelAliases",),
            )
        ]
    aliases: dict[str, str] = {}
    diagnostics: list[Diagnostic] = []
    for alias, model in raw.items():
        keys: KeyPath = ("modelAliases", str(alias))
        if not isinstance(alias, str) or not isinstance(model, str) or not model.strip():
            diagnostics.append(
                _diag(
                    Severity.ERROR,
                    DiagnosticCode.INVALID_VALUE,
                    f"modelAliases.{alias} must be a model id (text), not {model!r}",
                    path,
                    index,
                    keys,
                )
            )
            continue
        aliases[alias] = model.strip()
        diagnostics.append(
            _diag(
                Severity.NOTE,
                DiagnosticCode.APPLIED,
                f"applied: model alias {alias!r} -> {model.strip()}",
                path,
                index,
                keys,
            )
        )
    return aliases, diagnostics


def _agents_map(
    entries: Any,
    *,
    path: Path | None,
    index: LineIndex,
    prefix: KeyPath,
    source: AgentSource,
    aliases: ModelAliases,
    plugin: str | None,
    diagnostics: list[Diagnostic],
) -> list[AgentDefinition]:
    if not isinstance(entries, Mapping):
        diagnostics.append(
            _diag(
                Severity.ERROR,
                DiagnosticCode.INVALID_VALUE,
                "the agents map must map agent names to their fields",
                path,
                index,
                prefix,
            )
        )
        return []
    definitions: list[AgentDefinition] = []
    for name, fields in entries.items():
        keys: KeyPath = (*prefix, str(name))
        if not isinstance(fields, Mapping):
            diagnostics.append(
                _diag(
                    Severity.ERROR,
                    DiagnosticCode.INVALID_VALUE,
                    f"agent {name!r} must be a mapping of fields (description, prompt, "
                    f"tools, model...), not {type(fields).__name__}",
                    path,
                    index,
                    keys,
                )
            )
            continue
        definition = interpret(
            fields,
            path=path,
            index=index,
            source=source,
            aliases=aliases,
            diagnostics=diagnostics,
            prefix=keys,
            default_name=(str(name), f"the key {name!r} is the agent type"),
            plugin=plugin,
        )
        if definition is None:
            continue
        if definition.name != str(name):
            diagnostics.append(
                _diag(
                    Severity.WARNING,
                    DiagnosticCode.CONFLICT,
                    f"the name field {definition.name!r} differs from the key {name!r}; "
                    "the name field is used",
                    path,
                    index,
                    (*keys, "name"),
                )
            )
        definitions.append(definition)
    return definitions


def parse_document(
    text: str,
    *,
    path: Path | None,
    json_format: bool,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugin: str | None = None,
    config: bool = False,
) -> FileReport:
    """Read a YAML (or JSON) agent file, or a config file with an ``agents`` map.

    ``config`` marks a scope's ``config.json``: only ``agents`` and
    ``modelAliases`` are read from it, and its other keys are listed as not read.
    """
    parsed = parse_json(text) if json_format else parse_yaml(text)
    kind = FileKind.CONFIG if config else FileKind.DEFINITION
    if not isinstance(parsed, Parsed):
        return FileReport(path, kind, source, (), (problem_diagnostic(parsed, path),))
    data, index = parsed.data, parsed.index
    diagnostics = duplicate_diagnostics(index, path)

    def not_agent(reason: str) -> FileReport:
        diagnostics.append(
            Diagnostic(
                Severity.NOTE, DiagnosticCode.NOT_AN_AGENT, f"not an agent: {reason}", path, 1
            )
        )
        return FileReport(path, FileKind.NOT_AN_AGENT, source, (), tuple(diagnostics))

    if not isinstance(data, Mapping):
        if config and data is None:
            return FileReport(path, kind, source, (), tuple(diagnostics))
        return not_agent(f"the top level is {type(data).__name__}, not a mapping of fields")
    names_agent = "name" in data or "agentType" in data
    if config or ("agents" in data and not names_agent):
        return _config_like(data, index, path, source, aliases, plugin, diagnostics, kind)
    if not any(key in KNOWN_FIELDS for key in data):
        return not_agent("none of its keys is an agent field (name, agentType, description...)")
    stem = path.stem if path is not None else ""
    definition = interpret(
        data,
        path=path,
        index=index,
        source=source,
        aliases=aliases,
        diagnostics=diagnostics,
        default_name=(stem, f"the file name {stem!r} is the agent type") if stem else None,
        plugin=plugin,
    )
    definitions = (definition,) if definition is not None else ()
    return FileReport(path, FileKind.DEFINITION, source, definitions, tuple(diagnostics))


def _config_like(
    data: Mapping[Any, Any],
    index: LineIndex,
    path: Path | None,
    source: AgentSource,
    aliases: ModelAliases,
    plugin: str | None,
    diagnostics: list[Diagnostic],
    kind: FileKind,
) -> FileReport:
    _, alias_diagnostics = model_aliases_in(data, path=path, index=index)
    diagnostics.extend(alias_diagnostics)
    definitions: list[AgentDefinition] = []
    if "agents" in data:
        definitions = _agents_map(
            data["agents"],
            path=path,
            index=index,
            prefix=("agents",),
            source=source,
            aliases=aliases,
            plugin=plugin,
            diagnostics=diagnostics,
        )
    others = [str(key) for key in data if key not in _CONFIG_KEYS]
    if others:
        diagnostics.append(
            Diagnostic(
                Severity.NOTE,
                DiagnosticCode.SKIPPED,
                f"not read here (not about agents): {', '.join(others)}",
                path,
                index.line((others[0],)),
            )
        )
    return FileReport(path, kind, source, tuple(definitions), tuple(diagnostics))


def parse_agents_json(text: str, *, aliases: ModelAliases = _DEFAULT_ALIASES) -> FileReport:
    """Read the ``--agents`` JSON string: ``{"name": {"description": ..., "prompt": ...}}``."""
    parsed = parse_json(text)
    if not isinstance(parsed, Parsed):
        return FileReport(
            None, FileKind.DEFINITION, AgentSource.CLI, (), (problem_diagnostic(parsed, None),)
        )
    diagnostics = duplicate_diagnostics(parsed.index, None)
    definitions = _agents_map(
        parsed.data,
        path=None,
        index=parsed.index,
        prefix=(),
        source=AgentSource.CLI,
        aliases=aliases,
        plugin=None,
        diagnostics=diagnostics,
    )
    return FileReport(
        None, FileKind.DEFINITION, AgentSource.CLI, tuple(definitions), tuple(diagnostics)
    )
