"""JSON records for programs: what ``subagents agents validate --json`` prints.

These are ``msgspec.Struct`` values because they cross a process boundary as
JSON; build them with :func:`validation_record` and encode with
:func:`encode_record`.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from subagents.agents._definition import AgentDefinition
from subagents.agents._diagnostics import Diagnostic, FileKind, FileReport, Severity

__all__ = [
    "AgentRecord",
    "DiagnosticRecord",
    "ErrorRecord",
    "ValidationRecord",
    "agent_record",
    "diagnostics_for",
    "encode_record",
    "validation_record",
]


class DiagnosticRecord(msgspec.Struct, frozen=True):
    """One diagnostic of an agent's file."""

    severity: str
    code: str
    message: str
    line: int | None
    field: str | None


class AgentRecord(msgspec.Struct, frozen=True):
    """One loaded agent: where it came from, its model and tools, what was said about it."""

    name: str
    path: str | None
    source: str
    model: str
    #: ``None`` when the agent inherits every tool.
    tools: list[str] | None
    diagnostics: list[DiagnosticRecord]


class ErrorRecord(msgspec.Struct, frozen=True):
    """One error, with its file, line and field."""

    path: str | None
    line: int | None
    field: str | None
    message: str


class ValidationRecord(msgspec.Struct, frozen=True):
    """The whole ``--json`` answer.

    ``not_agents`` are candidate files that hold no agent (Markdown without
    frontmatter...); ``skipped`` are entries not read at all (other file types,
    hidden entries), listed so that nothing is left out silently.
    """

    agents: list[AgentRecord]
    not_agents: list[str]
    errors: list[ErrorRecord]
    skipped: list[str]


def diagnostics_for(report: FileReport, definition: AgentDefinition) -> tuple[Diagnostic, ...]:
    """The diagnostics of ``report`` that concern ``definition``.

    A file with one agent: all of them. A map of agents (``config.json``,
    ``--agents``): the ones under that agent's key, and the file-wide ones.
    """
    if len(report.definitions) <= 1 and report.kind is not FileKind.CONFIG:
        return report.diagnostics
    prefixes = (f"agents.{definition.name}", f"{definition.name}")
    wanted: list[Diagnostic] = []
    for diagnostic in report.diagnostics:
        field = diagnostic.field
        if field is None:
            wanted.append(diagnostic)
            continue
        if any(field == p or field.startswith(p + ".") for p in prefixes):
            wanted.append(diagnostic)
    return tuple(wanted)


def _diagnostic(d: Diagnostic) -> DiagnosticRecord:
    return DiagnosticRecord(d.severity.value, d.code.value, d.message, d.line, d.field)


def agent_record(report: FileReport, definition: AgentDefinition) -> AgentRecord:
    """The record of one agent loaded by ``report``."""
    return AgentRecord(
        name=definition.name,
        path=str(definition.path) if definition.path is not None else None,
        source=definition.source.value,
        model=definition.model,
        tools=list(definition.tools) if definition.tools is not None else None,
        diagnostics=[_diagnostic(d) for d in diagnostics_for(report, definition)],
    )


def validation_record(reports: Iterable[FileReport]) -> ValidationRecord:
    """Summarise reports into the ``--json`` shape."""
    agents: list[AgentRecord] = []
    not_agents: list[str] = []
    skipped: list[str] = []
    errors: list[ErrorRecord] = []
    for report in reports:
        agents.extend(agent_record(report, d) for d in report.definitions)
        if report.kind is FileKind.NOT_AN_AGENT:
            not_agents.append(report.label)
        elif report.kind is FileKind.SKIPPED:
            skipped.append(report.label)
        errors.extend(
            ErrorRecord(str(d.path) if d.path is not None else None, d.line, d.field, d.message)
            for d in report.diagnostics
            if d.severity is Severity.ERROR
        )
    return ValidationRecord(agents, not_agents, errors, skipped)


def encode_record(record: msgspec.Struct) -> bytes:
    """JSON bytes of a record."""
    return msgspec.json.encode(record)
