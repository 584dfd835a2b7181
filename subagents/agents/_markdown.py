"""Markdown agent files: YAML frontmatter between ``---`` lines, body = system prompt.

This is Claude Code's format. A Markdown file that does not open with a
frontmatter block is "not an agent" (a README); frontmatter that is not valid
YAML is read by the lenient ``key: value`` reader when it can be, and each line
read that way is reported.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from subagents.agents._definition import AgentSource
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._fields import Dialect, interpret
from subagents.agents._models import ModelAliases
from subagents.agents._parse import (
    Parsed,
    duplicate_diagnostics,
    parse_lenient,
    parse_quoted,
    parse_yaml,
    problem_diagnostic,
)

__all__ = ["Frontmatter", "parse_markdown", "split_frontmatter"]

_DEFAULT_ALIASES = ModelAliases()


@attrs.frozen
class Frontmatter:
    """The parts of a Markdown agent file, with their 1-based first lines."""

    yaml_text: str
    #: File line of the first frontmatter line (2 when the file opens with ``---``).
    yaml_line: int
    body: str
    body_line: int


def _is_fence(line: str) -> bool:
    return line.rstrip() == "---"


def _is_closing_fence(line: str) -> bool:
    """``---``, or a longer rule of dashes (``-----``), which Claude Code also
    takes as the end of the frontmatter (issue 15, item 12)."""
    stripped = line.rstrip()
    return len(stripped) >= 3 and stripped == "-" * len(stripped)


def split_frontmatter(text: str) -> Frontmatter | int | None:
    """Split ``text`` into frontmatter and body.

    Returns ``None`` when the text does not open with ``---`` (no frontmatter),
    and the opening line number (``1``) when the block is never closed.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or not _is_fence(lines[0]):
        return None
    for number in range(1, len(lines)):
        if _is_closing_fence(lines[number]) or lines[number].rstrip() == "...":
            return Frontmatter(
                yaml_text="\n".join(lines[1:number]),
                yaml_line=2,
                body="\n".join(lines[number + 1 :]),
                body_line=number + 2,
            )
    return 1


def parse_markdown(
    text: str,
    *,
    path: Path | None = None,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugin: str | None = None,
    dialect: Dialect | None = None,
) -> FileReport:
    """Read one Markdown agent file's text; never raises for its content.

    ``dialect`` adds another tool's field names (Gemini CLI's). A file with no
    ``name`` is an error, as in Claude Code and Gemini CLI, never named after the file.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    diagnostics: list[Diagnostic] = []
    parts = split_frontmatter(text)
    if parts is None:
        diagnostics.append(
            Diagnostic(
                Severity.NOTE,
                DiagnosticCode.NOT_AN_AGENT,
                "not an agent: no YAML frontmatter (a '---' line opening the file); skipped",
                path,
                1,
                None,
            )
        )
        return FileReport(path, FileKind.NOT_AN_AGENT, source, (), tuple(diagnostics))
    if isinstance(parts, int):
        diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                DiagnosticCode.SYNTAX,
                "the frontmatter opened on this line is never closed: add a '---' line "
                "after the last field",
                path,
                parts,
                None,
            )
        )
        return FileReport(path, FileKind.DEFINITION, source, (), tuple(diagnostics))

    parsed = _frontmatter(parts, path, diagnostics)
    if parsed is None:
        return FileReport(path, FileKind.DEFINITION, source, (), tuple(diagnostics))
    data = parsed.data if parsed.data is not None else {}
    if not isinstance(data, dict):
        diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                DiagnosticCode.INVALID_VALUE,
                f"the frontmatter must be a mapping of fields (name: ...), not "
                f"{type(data).__name__}",
                path,
                parts.yaml_line,
                None,
            )
        )
        return FileReport(path, FileKind.DEFINITION, source, (), tuple(diagnostics))
    diagnostics.extend(duplicate_diagnostics(parsed.index, path))
    # No ``default_name``: Claude Code skips a Markdown agent whose frontmatter
    # has no ``name`` instead of naming it after its file, and so do we.
    definition = interpret(
        data,
        path=path,
        index=attrs.evolve(parsed.index, default=1),
        source=source,
        aliases=aliases,
        diagnostics=diagnostics,
        body=(parts.body, parts.body_line),
        plugin=plugin,
        dialect=dialect,
    )
    definitions = (definition,) if definition is not None else ()
    return FileReport(path, FileKind.DEFINITION, source, definitions, tuple(diagnostics))


def _frontmatter(
    parts: Frontmatter, path: Path | None, diagnostics: list[Diagnostic]
) -> Parsed | None:
    parsed = parse_yaml(parts.yaml_text, first_line=parts.yaml_line)
    if isinstance(parsed, Parsed):
        return parsed
    if parsed.code == "syntax":
        quoted = parse_quoted(parts.yaml_text, first_line=parts.yaml_line)
        if quoted is not None:
            result, lines = quoted
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    DiagnosticCode.LENIENT_YAML,
                    f"the frontmatter is {parsed.message} (line {parsed.line}); the values "
                    "that are not YAML on their own were quoted and it was read again, as "
                    "Claude Code does",
                    path,
                    parsed.line,
                    None,
                )
            )
            for line in lines:
                diagnostics.append(
                    Diagnostic(
                        Severity.WARNING,
                        DiagnosticCode.LENIENT_YAML,
                        f"{line.key} is not valid YAML ({_reason(line.reason)}); it was read "
                        "as the quoted text after the colon, as Claude Code reads it. Quote "
                        "the value to make this line valid YAML",
                        path,
                        line.line,
                        line.key,
                    )
                )
            return result
        lenient = parse_lenient(parts.yaml_text, first_line=parts.yaml_line)
        if lenient is not None:
            result, plain = lenient
            diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    DiagnosticCode.LENIENT_YAML,
                    f"the frontmatter is {parsed.message} (line {parsed.line}); it was "
                    "read line by line as simple 'key: value' fields instead",
                    path,
                    parsed.line,
                    None,
                )
            )
            for line in plain:
                diagnostics.append(
                    Diagnostic(
                        Severity.WARNING,
                        DiagnosticCode.LENIENT_YAML,
                        f"{line.key} is not valid YAML on its own ({_reason(line.reason)}); its "
                        "value is the text after the colon, as written. Quote the value "
                        "to make this line valid YAML",
                        path,
                        line.line,
                        line.key,
                    )
                )
            return result
    diagnostics.append(problem_diagnostic(parsed, path))
    return None


def _reason(message: str) -> str:
    return message.removeprefix("not valid YAML: ")
