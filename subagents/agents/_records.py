"""JSON records for programs: what ``subagents agents validate|list|show --json`` print.

The three commands print one shape, :class:`ValidationRecord`: ``validate`` the
files it read, ``list`` the agents a session would have (the winner of each
name, and with ``--all`` the hidden ones too, marked ``hidden``), ``show`` the
one agent asked for. These are ``msgspec.Struct`` values because they cross a
process boundary as JSON; build them with :func:`validation_record` or
:func:`catalog_record` and encode with :func:`encode_record`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

from subagents.agents._definition import AgentDefinition, PermissionMode
from subagents.agents._diagnostics import Diagnostic, FileKind, FileReport, Severity
from subagents.agents._models import ModelAliases

if TYPE_CHECKING:
    from subagents.agents._discovery import AgentCatalog

__all__ = [
    "AgentRecord",
    "DiagnosticRecord",
    "ErrorRecord",
    "ValidationRecord",
    "agent_record",
    "catalog_record",
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
    #: As written (``sonnet``, ``opusplan``, ``inherit``, a full id).
    model: str
    #: ``None`` when the agent inherits every tool.
    tools: list[str] | None
    diagnostics: list[DiagnosticRecord]
    description: str = ""
    #: The full id ``model`` resolves to (``None`` for ``inherit``), as Claude
    #: Code resolves aliases: ``sonnet[1m]`` is the sonnet id (with
    #: ``context_1m``), ``opusplan`` the sonnet id (``plan_model_id`` is opus).
    model_id: str | None = None
    context_1m: bool = False
    plan_model_id: str | None = None
    disallowed_tools: list[str] = msgspec.field(default_factory=list)
    #: True when the agent cannot write or execute (``permissionMode: plan``,
    #: Codex's ``sandbox_mode = "read-only"``).
    read_only: bool = False
    nicknames: list[str] = msgspec.field(default_factory=list)
    plugin: str | None = None
    #: In ``agents list --all``: a definition hidden by another of the same name.
    hidden: bool = False


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


def agent_record(
    report: FileReport | None,
    definition: AgentDefinition,
    *,
    aliases: ModelAliases | None = None,
    hidden: bool = False,
) -> AgentRecord:
    """The record of one agent loaded by ``report`` (``None`` for a built-in)."""
    check = (aliases if aliases is not None else ModelAliases()).check(definition.model)
    diagnostics = diagnostics_for(report, definition) if report is not None else ()
    return AgentRecord(
        name=definition.name,
        path=str(definition.path) if definition.path is not None else None,
        source=definition.source.value,
        model=definition.model,
        tools=list(definition.tools) if definition.tools is not None else None,
        diagnostics=[_diagnostic(d) for d in diagnostics],
        description=definition.description,
        model_id=check.model_id,
        context_1m=check.context_1m,
        plan_model_id=check.plan_model_id,
        disallowed_tools=list(definition.disallowed_tools),
        read_only=definition.permission_mode is PermissionMode.PLAN,
        nicknames=list(definition.nickname_candidates),
        plugin=definition.plugin,
        hidden=hidden,
    )


def _errors(report: FileReport) -> list[ErrorRecord]:
    return [
        ErrorRecord(str(d.path) if d.path is not None else None, d.line, d.field, d.message)
        for d in report.diagnostics
        if d.severity is Severity.ERROR
    ]


def catalog_record(
    catalog: AgentCatalog, *, names: Sequence[str] | None = None, hidden: bool = False
) -> ValidationRecord:
    """What ``agents list --json`` (every name) and ``agents show NAME --json`` print.

    ``agents`` holds the winner of each of ``names`` (default: every name) and,
    with ``hidden``, the definitions it hides (``hidden: true``). With
    ``names``, ``errors`` are those of those agents' files; without, every
    file's, with ``not_agents`` and ``skipped`` as ``validate`` lists them.
    """
    wanted = list(catalog.definitions) if names is None else list(names)
    agents: list[AgentRecord] = []
    reports: list[FileReport] = []
    for name in wanted:
        winner = catalog.definitions[name]
        shown = catalog.candidates[name] if hidden else (winner,)
        for definition in reversed(shown):
            report = catalog.report_for(definition)
            if report is not None and report not in reports:
                reports.append(report)
            agents.append(
                agent_record(
                    report, definition, aliases=catalog.aliases, hidden=definition is not winner
                )
            )
    if names is not None:
        errors = [e for r in reports for e in _errors(r)]
        return ValidationRecord(agents, [], errors, [])
    summary = validation_record(catalog.reports)
    return ValidationRecord(agents, summary.not_agents, summary.errors, summary.skipped)


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
        errors.extend(_errors(report))
    return ValidationRecord(agents, not_agents, errors, skipped)


def encode_record(record: msgspec.Struct) -> bytes:
    """JSON bytes of a record."""
    return msgspec.json.encode(record)
