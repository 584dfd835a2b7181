"""The ``subagents agents list|show|validate`` commands.

``list`` shows the agents a session would have (the winner of each name),
``show NAME`` one resolved definition and the scope that won, ``validate``
what the loaders say about each file, with a non-zero exit code on errors
and ``--json`` for programs. Definitions come from the repository, so what
they say is shown by :func:`~subagents._visible.visible`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from subagents._visible import json_safe, visible
from subagents.agents import (
    AgentCatalog,
    AgentDefinition,
    Diagnostic,
    ErrorRecord,
    FileKind,
    FileReport,
    Severity,
    UnknownAgentError,
    ValidationRecord,
    catalog_record,
    diagnostics_for,
    discover_agents,
    encode_record,
    load_paths,
    validation_record,
)
from subagents.cli._trust import trust_line
from subagents.runtime import ConfigError, load_config
from subagents.tools import builtin_tools, filter_tools, tool_policy

__all__ = ["add_agents_commands"]

_TOOLS_WIDTH = 48


def add_agents_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``agents`` (with ``list``, ``show`` and ``validate``) on ``subparsers``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--cwd",
        type=Path,
        default=None,
        metavar="DIR",
        help="project directory: .claude/agents and .subagents/agents are searched "
        "from here upward (default: the current directory)",
    )
    common.add_argument(
        "--agents",
        dest="agents_json",
        default=None,
        metavar="JSON",
        help="agents given on the command line, highest priority, as in Claude Code: "
        '\'{"reviewer": {"description": "...", "prompt": "...", "tools": ["Read"]}}\'',
    )
    common.add_argument(
        "--home",
        type=Path,
        default=None,
        metavar="DIR",
        help="home directory holding the user scope ~/.claude and ~/.subagents "
        "(default: your home directory)",
    )
    common.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a plugin folder (or a folder of plugins) to load; may be repeated",
    )

    raw = argparse.RawDescriptionHelpFormatter
    agents = subparsers.add_parser(
        "agents",
        help="list, show and validate agent definitions",
        description="Agent definitions from every scope: built-in < plugin < user < "
        "project < --agents.",
        epilog=(
            "examples:\n"
            "  subagents agents list\n"
            "  subagents agents show Explore\n"
            "  subagents agents validate .claude/agents"
        ),
        formatter_class=raw,
    )
    commands = agents.add_subparsers(dest="agents_command", metavar="COMMAND", required=True)

    listing = commands.add_parser(
        "list",
        parents=[common],
        help="the agents a session would have, one per name",
        description="The agents a session started here would have: the winner of each "
        "name, its scope, model and tools,\nand how many warnings and errors its file has.",
        epilog=(
            "examples:\n"
            "  subagents agents list\n"
            "  subagents agents list --all --cwd ~/code/app\n"
            '  subagents agents list --agents \'{"reviewer": {"description": "Reviews", '
            '"prompt": "Review the diff."}}\''
        ),
        formatter_class=raw,
    )
    listing.add_argument(
        "--all", action="store_true", help="also list definitions hidden by a higher scope"
    )
    listing.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object for programs (the shape of validate --json)",
    )
    listing.set_defaults(func=_cmd_list)

    show = commands.add_parser(
        "show",
        parents=[common],
        help="one resolved definition and the scope that won",
        description="One agent definition as resolved: every field, the scope that won "
        "over the others,\nthe tools it gets, the diagnostics of its file and its system "
        "prompt.",
        epilog=(
            "examples:\n"
            "  subagents agents show Explore\n"
            "  subagents agents show reviewer --cwd ~/code/app"
        ),
        formatter_class=raw,
    )
    show.add_argument("name", metavar="NAME", help="the agent type, e.g. Explore")
    show.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object for programs (the shape of validate --json)",
    )
    show.set_defaults(func=_cmd_show)

    validate = commands.add_parser(
        "validate",
        parents=[common],
        help="check agent files and print what was done with every field",
        description="Check agent files as Claude Code reads them and say what was done "
        "with every field;\nthe exit code is 1 when a file has an error.",
        epilog=(
            "examples:\n"
            "  subagents agents validate\n"
            "  subagents agents validate .claude/agents/reviewer.md -v\n"
            "  subagents agents validate ~/.claude/agents --json"
        ),
        formatter_class=raw,
    )
    validate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="files or folders to check (default: every scope that discovery reads)",
    )
    validate.add_argument("--json", action="store_true", help="print one JSON object for programs")
    validate.add_argument(
        "-v", "--verbose", action="store_true", help="also print the notes (fields applied)"
    )
    validate.set_defaults(func=_cmd_validate)


def _catalog(args: argparse.Namespace) -> AgentCatalog:
    return discover_agents(
        cwd=args.cwd,
        home=args.home,
        agents_json=args.agents_json,
        plugin_dirs=tuple(args.plugin_dirs),
    )


def _where(definition: AgentDefinition) -> str:
    if definition.path is not None:
        return str(definition.path)
    return "(--agents)" if definition.source.value == "cli" else "(built-in)"


def _tools(definition: AgentDefinition) -> str:
    if definition.tools is None:
        text = "(all)"
    else:
        text = ", ".join(definition.tools) if definition.tools else "(none)"
    if definition.disallowed_tools and definition.inherits_all_tools:
        text += f" except {len(definition.disallowed_tools)}"
    if len(text) > _TOOLS_WIDTH:
        text = text[: _TOOLS_WIDTH - 3] + "..."
    return text


def _issues(catalog: AgentCatalog, definition: AgentDefinition) -> int:
    report = catalog.report_for(definition)
    if report is None:
        return 0
    return sum(1 for d in diagnostics_for(report, definition) if d.severity is not Severity.NOTE)


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    rows = [[visible(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        print("  ".join([*cells, row[-1]]).rstrip(), file=out)


def _print_json(record: ValidationRecord, out: TextIO) -> None:
    out.write(json_safe(encode_record(record).decode("utf-8")))
    out.write("\n")


def _cmd_list(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    out = sys.stdout
    if args.json:
        _print_json(catalog_record(catalog, hidden=args.all), out)
        return 0
    rows: list[list[str]] = [["NAME", "SOURCE", "MODEL", "TOOLS", "DIAG", "PATH"]]
    for name, winner in catalog.definitions.items():
        shown = catalog.candidates[name] if args.all else (winner,)
        for definition in reversed(shown):
            label = name if definition is winner else f"  ({name}, hidden)"
            rows.append(
                [
                    label,
                    definition.source.value,
                    definition.model,
                    _tools(definition),
                    str(_issues(catalog, definition)),
                    _where(definition),
                ]
            )
    _table(rows, out)
    errors = len(catalog.errors)
    warnings = sum(len(r.warnings) for r in catalog.reports)
    print(
        f"\n{len(catalog)} agents ({len(catalog.overrides)} definitions hidden by a higher "
        f"scope or a later file); {len(catalog.reports)} files read, {errors} errors, "
        f"{warnings} warnings. DIAG counts warnings and errors; "
        "`subagents agents validate` prints them.",
        file=out,
    )
    print(trust_line(args.cwd, args.home), file=out)
    return 0


def _field_lines(definition: AgentDefinition, catalog: AgentCatalog) -> list[tuple[str, str]]:
    d = definition
    check = catalog.aliases.check(d.model)
    model = d.model if check.model_id in (None, d.model) else f"{d.model} -> {check.model_id}"
    lines: list[tuple[str, str]] = [
        ("description", d.description),
        ("source", d.source.value + (f" (plugin {d.plugin})" if d.plugin else "")),
        ("path", _where(d)),
        ("model", model),
        ("tools", "(all, inherited)" if d.tools is None else ", ".join(d.tools) or "(none)"),
    ]
    optional: list[tuple[str, object]] = [
        ("display name", d.display_name),
        ("disallowed tools", ", ".join(d.disallowed_tools) or None),
        ("temperature", d.model_settings.temperature),
        ("top p", d.model_settings.top_p),
        ("thinking budget", d.model_settings.thinking_budget),
        ("max turns", d.run_limits.max_turns),
        ("max time (s)", d.run_limits.max_time_seconds),
        ("grace period (s)", d.run_limits.grace_period_seconds),
        ("inputs", ", ".join(f"{i.name}: {i.type.value}" for i in d.inputs) or None),
        ("output", d.output.name if d.output is not None else None),
        ("fork context", "yes" if d.fork_context else None),
        ("critical reminder", d.critical_reminder),
        ("permission mode", d.permission_mode.value if d.permission_mode else None),
        ("approval mode", d.approval_mode.value if d.approval_mode else None),
        ("background", "yes" if d.background else None),
        ("color", d.color),
        ("skills", ", ".join(d.skills) or None),
        ("memory", d.memory.value if d.memory else None),
        ("hooks", ", ".join(f"{h.event}: {h.command}" for h in d.hooks) or None),
        ("initial prompt", d.initial_prompt),
        ("query template", d.query),
        ("disabled features", ", ".join(d.disabled_features) or None),
    ]
    lines.extend((label, str(value)) for label, value in optional if value is not None)
    return lines


def _cmd_show(args: argparse.Namespace) -> int:
    catalog = _catalog(args)
    out = sys.stdout
    try:
        definition = catalog.get(args.name)
    except UnknownAgentError as exc:
        if args.json:
            _print_json(
                ValidationRecord([], [], [ErrorRecord(None, None, None, str(exc))], []), out
            )
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(catalog_record(catalog, names=[definition.name]), out)
        return 0
    print(visible(definition.name), file=out)
    for label, value in _field_lines(definition, catalog):
        print(f"  {label + ':':<19} {visible(value)}", file=out)
    hidden = [o for o in catalog.overrides if o.name == definition.name]
    candidates = catalog.candidates[definition.name]
    print(f"\nScope: {definition.source.value} won", file=out)
    if len(candidates) > 1:
        for override in hidden:
            print(f"  {visible(override.reason)}", file=out)
    else:
        print("  no other definition has this name", file=out)
    try:
        # The trust of this folder and the user's settings decide layer 4, as in a run.
        trust = load_config(cwd=args.cwd or Path.cwd(), home=args.home).trust_policy()
    except ConfigError as exc:
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 1
    selection = filter_tools(builtin_tools(), tool_policy(definition), trust)
    print("\nTools (as a subagent of a lead that holds every built-in tool):", file=out)
    for line in selection.explain().split("\n"):
        print(f"  {visible(line)}", file=out)
    report = catalog.report_for(definition)
    if report is not None:
        print(f"\nDiagnostics ({visible(report.label)}):", file=out)
        for diagnostic in _sorted(diagnostics_for(report, definition)):
            print(f"  {visible(diagnostic.format())}", file=out)
    print("\nSystem prompt:", file=out)
    # Split at newlines only: a carriage return or another separator is shown, not obeyed.
    for line in (definition.system_prompt or "(empty)").split("\n"):
        print(f"  {visible(line, newlines=True)}".rstrip(" "), file=out)
    return 0


def _sorted(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: d.line or 0)


def _status(report: FileReport) -> str:
    if not report.ok:
        return "ERROR"
    if report.kind in (FileKind.NOT_AN_AGENT, FileKind.SKIPPED) and report.diagnostics:
        return report.diagnostics[0].message
    if report.definitions:
        return "ok: " + ", ".join(repr(d.name) for d in report.definitions)
    return "ok"


def _cmd_validate(args: argparse.Namespace) -> int:
    reports = load_paths(args.paths) if args.paths else _catalog(args).reports
    failed = any(not report.ok for report in reports)
    out = sys.stdout
    if args.json:
        _print_json(validation_record(reports), out)
        return 1 if failed else 0
    for report in reports:
        print(f"{visible(report.label)}: {visible(_status(report))}", file=out)
        if report.kind in (FileKind.NOT_AN_AGENT, FileKind.SKIPPED) and report.ok:
            continue
        for diagnostic in _sorted(report.diagnostics):
            if args.verbose or diagnostic.severity is not Severity.NOTE:
                print(f"  {visible(diagnostic.format())}", file=out)
    agents = sum(len(r.definitions) for r in reports)
    not_agents = sum(1 for r in reports if r.kind is FileKind.NOT_AN_AGENT)
    skipped = sum(1 for r in reports if r.kind is FileKind.SKIPPED)
    errors = sum(len(r.errors) for r in reports)
    warnings = sum(len(r.warnings) for r in reports)
    print(
        f"\n{agents} agents from {len(reports)} files; {not_agents} not agents, "
        f"{skipped} skipped; {errors} errors, {warnings} warnings",
        file=out,
    )
    return 1 if failed else 0
