"""What the loaders say about each file: diagnostics and per-file reports.

Every field of every file gets a word: applied, ignored (Claude Code knows it,
subagents does nothing with it) or unknown. Problems that make a definition
unusable are diagnostics of severity ``error``; the file then yields no
definition, and the others load as usual.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs

from subagents.agents._definition import AgentDefinition, AgentSource
from subagents.agents._exceptions import DefinitionError

__all__ = ["Diagnostic", "DiagnosticCode", "FileKind", "FileReport", "Severity"]


class Severity(enum.Enum):
    """How much a diagnostic matters; only ``ERROR`` stops a definition loading."""

    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"


class DiagnosticCode(enum.Enum):
    """What a diagnostic is about, stable for programs that read ``--json``."""

    APPLIED = "applied"
    DEFAULTED = "defaulted"
    IGNORED = "ignored"
    UNKNOWN_FIELD = "unknown-field"
    UNKNOWN_TOOL = "unknown-tool"
    NOT_IMPLEMENTED_TOOL = "not-implemented-tool"
    MCP_TOOL = "mcp-tool"
    UNKNOWN_MODEL = "unknown-model"
    LENIENT_YAML = "lenient-yaml"
    DUPLICATE_KEY = "duplicate-key"
    EMPTY = "empty"
    NOT_AN_AGENT = "not-an-agent"
    SKIPPED = "skipped"
    PLUGIN = "plugin"
    OVERRIDDEN = "overridden"
    MISSING_FIELD = "missing-field"
    INVALID_VALUE = "invalid-value"
    CONFLICT = "conflict"
    SYNTAX = "syntax"
    UNSAFE_YAML = "unsafe-yaml"
    TOO_LARGE = "too-large"
    UNREADABLE = "unreadable"


@attrs.frozen
class Diagnostic:
    """One thing a loader noticed, with the place it noticed it."""

    severity: Severity
    code: DiagnosticCode
    message: str
    path: Path | None = None
    #: 1-based line in the file, when there is one.
    line: int | None = None
    #: Dotted field path (``modelConfig.temperature``), when there is one.
    field: str | None = None

    @property
    def is_error(self) -> bool:
        """True for diagnostics that stop a definition loading."""
        return self.severity is Severity.ERROR

    def format(self) -> str:
        """``path:line: severity: [field] message``, as compilers print it."""
        where = str(self.path) if self.path is not None else "<--agents>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        field = f"[{self.field}] " if self.field else ""
        return f"{where}: {self.severity.value}: {field}{self.message}"

    def to_error(self) -> DefinitionError:
        """This diagnostic as an exception to raise."""
        return DefinitionError(self.path, self.line, self.field, self.message)


class FileKind(enum.Enum):
    """What a loader found a file to be."""

    #: Markdown, YAML or JSON defining one agent (or a map of agents).
    DEFINITION = "definition"
    #: A ``config.json`` of a scope (its ``agents`` map, ``modelAliases``).
    CONFIG = "config"
    #: A plugin's ``.claude-plugin/plugin.json``.
    PLUGIN_MANIFEST = "plugin-manifest"
    #: A candidate file that holds no agent (a Markdown file without frontmatter).
    NOT_AN_AGENT = "not-an-agent"
    #: A file or directory the loader did not read, and says why.
    SKIPPED = "skipped"


@attrs.frozen
class FileReport:
    """The outcome of reading one file (or the ``--agents`` string)."""

    #: The file; ``None`` for the ``--agents`` JSON string.
    path: Path | None
    kind: FileKind
    source: AgentSource
    definitions: tuple[AgentDefinition, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def label(self) -> str:
        """The path as text, or ``<--agents>``."""
        return str(self.path) if self.path is not None else "<--agents>"

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The diagnostics of severity ``error``."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """The diagnostics of severity ``warning``."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def ok(self) -> bool:
        """True when nothing in this file is an error."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def raise_for_errors(self) -> None:
        """Raise the first error as a :class:`DefinitionError`, if there is one."""
        for diagnostic in self.diagnostics:
            if diagnostic.severity is Severity.ERROR:
                raise diagnostic.to_error()
