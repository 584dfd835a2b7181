"""Gemini CLI subagents: Markdown files in ``.gemini/agents/``, read as Gemini CLI reads them.

The format is Claude Code's (YAML frontmatter, the body is the system prompt)
with Gemini's own field names and tool names, documented in gemini-cli's
``docs/core/subagents.md`` (google-gemini/gemini-cli, commit 0c79889c5ce3):
``name`` (required), ``description`` (required), ``kind`` (``local``, the
default, or ``remote``), ``tools``, ``model`` (default ``inherit``),
``temperature`` (0-2), ``max_turns`` and ``timeout_mins``; the loader
(``packages/core/src/agents/agentLoader.ts``) also reads ``display_name``. The
tool names are those of ``packages/core/src/tools/tool-names.ts``
(commit 2073d0292357) plus ``grep_search``, the newer name of
``search_file_content`` used in the documentation's example.

Each field goes through the same interpreter as a Claude Code file (one
verdict per field, errors drop the agent); Gemini's tool names become ours,
with a note for each. A ``kind: remote`` agent is an A2A client of a remote
service, which subagents does not run: the file is skipped with a note.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from subagents.agents._definition import AgentSource, ModelSettings
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._fields import Dialect
from subagents.agents._fields.interpreter import Interpreter
from subagents.agents._fields.values import (
    INVALID,
    MAX_SECONDS_LIMIT,
    Invalid,
    as_names,
    as_number,
    as_text,
)
from subagents.agents._markdown import parse_markdown, split_frontmatter
from subagents.agents._models import ModelAliases
from subagents.agents._parse import Parsed, parse_yaml

__all__ = ["GEMINI_DIALECT", "GEMINI_TOOL_NAMES", "is_gemini_frontmatter", "parse_gemini"]

#: Gemini CLI tool name -> the subagents (Claude Code) tool that does the same.
GEMINI_TOOL_NAMES: Mapping[str, str] = types.MappingProxyType(
    {
        "read_file": "Read",
        "read_many_files": "Read",
        "write_file": "Write",
        "replace": "Edit",
        "run_shell_command": "Bash",
        "glob": "Glob",
        "search_file_content": "Grep",
        "grep_search": "Grep",
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "google_web_search": "WebSearch",
        "write_todos": "TodoWrite",
    }
)

# Fields only a Gemini CLI agent has: a file in another folder that uses one of
# them is read as Gemini's (``agents validate`` on a checkout of a Gemini corpus).
_GEMINI_ONLY_FIELDS = frozenset({"kind", "max_turns", "timeout_mins", "display_name"})
_DEFAULT_ALIASES = ModelAliases()


def _field_tools(it: Interpreter, key: str, value: Any) -> None:
    if value is None:
        it.field_tools(key, value)
        return
    names = it.check([key], lambda: as_names(value))
    if names is INVALID:
        return
    mapped: list[str] = []
    for position, name in enumerate(names):
        ours = GEMINI_TOOL_NAMES.get(name)
        keys: list[str | int] = [key, position] if isinstance(value, list) else [key]
        if ours is not None:
            it.note(DiagnosticCode.APPLIED, keys, f"Gemini CLI's {name} is {ours} here")
        if (ours or name) not in mapped:
            mapped.append(ours or name)
    it.field_tools(key, mapped)


def _field_temperature(it: Interpreter, key: str, value: Any) -> None:
    number = it.check([key], lambda: as_number(value, 0.0, 2.0))
    if number is INVALID:
        return
    settings = it.values.get("model_settings", ModelSettings())
    it.values["model_settings"] = ModelSettings(
        temperature=number, top_p=settings.top_p, thinking_budget=settings.thinking_budget
    )
    it.applied([key], f"temperature {number:g}")


def _field_timeout(it: Interpreter, key: str, value: Any) -> None:
    limit = MAX_SECONDS_LIMIT / 60
    minutes = it.check([key], lambda: as_number(value, 0.0, limit, low_open=True))
    if minutes is INVALID:
        return
    it.values["run_limits"] = {**it.values.get("run_limits", {}), "max_time_seconds": minutes * 60}
    it.applied([key], f"at most {minutes:g} minutes ({minutes * 60:g} s)")


def _field_kind(it: Interpreter, key: str, value: Any) -> None:
    kind = it.check([key], lambda: as_text(value, allow_empty=False).strip())
    if kind is INVALID:
        return
    if kind != "local":
        it.error(
            DiagnosticCode.INVALID_VALUE, [key], f"{key} must be local or remote, not {kind!r}"
        )
        return
    it.applied([key], "kind local: runs here, as a supervised agent")


#: Gemini CLI's field names, read by the shared interpreter.
GEMINI_DIALECT = Dialect(
    "Gemini CLI",
    handlers={
        "display_name": lambda i, k, v: i.field_text(k, v, "display_name", "display name"),
        "max_turns": Interpreter.field_max_turns,
        "timeout_mins": _field_timeout,
        "temperature": _field_temperature,
        "tools": _field_tools,
        "kind": _field_kind,
    },
)


def _frontmatter_data(text: str) -> dict[Any, Any] | None:
    parts = split_frontmatter(text.replace("\r\n", "\n").replace("\r", "\n"))
    if parts is None or isinstance(parts, int):
        return None
    parsed = parse_yaml(parts.yaml_text, first_line=parts.yaml_line)
    if isinstance(parsed, Parsed) and isinstance(parsed.data, dict):
        return parsed.data
    return None


def is_gemini_frontmatter(text: str) -> bool:
    """Whether a Markdown agent file found outside ``.gemini/agents`` is Gemini CLI's.

    It is when its frontmatter has a field only Gemini CLI uses (``kind``,
    ``max_turns``, ``timeout_mins``, ``display_name``), or lists only Gemini
    tool names.
    """
    data = _frontmatter_data(text)
    if data is None:
        return False
    if any(key in _GEMINI_ONLY_FIELDS for key in data):
        return True
    tools = data.get("tools")
    try:
        names = as_names(tools) if tools is not None else ()
    except Invalid:
        return False
    return bool(names) and all(name in GEMINI_TOOL_NAMES for name in names)


def parse_gemini(
    text: str,
    *,
    path: Path | None = None,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugin: str | None = None,
) -> FileReport:
    """Read one Gemini CLI agent file's text; never raises for its content."""
    data = _frontmatter_data(text)
    if data is not None and isinstance(data.get("kind"), str) and data["kind"].strip() == "remote":
        note = Diagnostic(
            Severity.NOTE,
            DiagnosticCode.SKIPPED,
            "kind: remote is a Gemini CLI remote agent (an Agent-to-Agent service); "
            "subagents runs local agents only, so it is skipped",
            path,
            1,
            "kind",
        )
        return FileReport(path, FileKind.SKIPPED, source, (), (note,))
    return parse_markdown(
        text,
        path=path,
        source=source,
        aliases=aliases,
        plugin=plugin,
        dialect=GEMINI_DIALECT,
    )
