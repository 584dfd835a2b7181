"""Two files in one scanned folder that define the same agent name.

Only one definition of a name can be spawned; the one read later wins (files
are read in sorted order, and discovery keeps the last definition of a name
in a scope). A silent winner hides a typo or a stale copy, so each losing
file gets a warning naming both files and the winner, and the winning file a
note naming the files it hides. Plugin agents are grouped per plugin, since
their names are their plugin's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, FileReport, Severity

__all__ = ["flag_duplicate_names"]


def _where(path: Path | None) -> str:
    return str(path) if path is not None else "<--agents>"


def _name_line(report: FileReport, name: str) -> int:
    """The line where ``report`` set the agent type ``name`` (1 when unknown)."""
    for diagnostic in report.diagnostics:
        applied = diagnostic.code is DiagnosticCode.APPLIED
        if applied and diagnostic.message == f"applied: agent type {name!r}":
            return diagnostic.line or 1
    return 1


def flag_duplicate_names(reports: Sequence[FileReport]) -> tuple[FileReport, ...]:
    """``reports`` with a diagnostic on every file whose agent name another file reuses."""
    # (plugin, name) -> indexes of the reports defining it, in read order
    owners: dict[tuple[str | None, str], list[int]] = {}
    for position, report in enumerate(reports):
        for definition in report.definitions:
            found = owners.setdefault((definition.plugin, definition.name), [])
            if position not in found:
                found.append(position)
    added: dict[int, list[Diagnostic]] = {}
    for (_, name), positions in owners.items():
        if len(positions) < 2:
            continue
        winner = reports[positions[-1]].path
        losers = [reports[p].path for p in positions[:-1]]
        for position, loser in zip(positions[:-1], losers, strict=True):
            added.setdefault(position, []).append(
                Diagnostic(
                    Severity.WARNING,
                    DiagnosticCode.OVERRIDDEN,
                    f"agent {name!r} is also defined in {_where(winner)}, read later, which "
                    f"wins: the definition in {_where(loser)} is not used; rename one of them",
                    loser,
                    _name_line(reports[position], name),
                    "name",
                )
            )
        added.setdefault(positions[-1], []).append(
            Diagnostic(
                Severity.NOTE,
                DiagnosticCode.OVERRIDDEN,
                f"agent {name!r} is defined here and in "
                f"{', '.join(_where(p) for p in losers)}; this file, read last, wins",
                winner,
                _name_line(reports[positions[-1]], name),
                "name",
            )
        )
    return tuple(
        attrs.evolve(report, diagnostics=(*report.diagnostics, *added[position]))
        if position in added
        else report
        for position, report in enumerate(reports)
    )
