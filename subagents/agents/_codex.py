"""Codex custom agents: TOML files in ``.codex/agents/``, read as Codex reads them.

Codex documents a custom agent as one standalone TOML file, project-scoped in
``.codex/agents/<name>.toml`` or personal in ``~/.codex/agents/<name>.toml``
(https://developers.openai.com/codex/subagents). ``name`` (the spawn identifier
and source of truth, not the file name), ``description`` and
``developer_instructions`` are required; ``nickname_candidates``, ``model``,
``model_reasoning_effort`` and ``sandbox_mode`` are optional, and the rest of
the file is a layer of Codex's own configuration (``mcp_servers``,
``skills.config``, ...). The configuration reference describes
``nickname_candidates`` as an optional pool of display nicknames for the
agents spawned with that role.

What subagents does with each field:

- ``developer_instructions`` is the system prompt;
- ``nickname_candidates`` are the nicknames of agents of this type, tried in
  order before the runtime's pool (each must be non-blank, on one line and
  distinct);
- ``sandbox_mode = "read-only"`` makes the agent read-only: every tool that
  writes or executes is removed and its approval requests are denied, as for
  ``permissionMode: plan``; ``workspace-write`` and ``danger-full-access``
  leave its tools as they are (subagents has no OS sandbox);
- ``model_reasoning_effort`` and Codex's other configuration keys are reported
  as ignored.

The file is parsed with :mod:`tomllib`; everything else goes through the same
field interpreter as a Claude Code file.
"""

from __future__ import annotations

import functools
import re
import tomllib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from subagents.agents._definition import AgentSource, PermissionMode
from subagents.agents._diagnostics import (
    Diagnostic,
    DiagnosticCode,
    FileKind,
    FileReport,
    Severity,
)
from subagents.agents._fields import Dialect, interpret
from subagents.agents._fields.interpreter import Interpreter
from subagents.agents._fields.mcp import field_mcp_servers
from subagents.agents._fields.values import INVALID, Invalid, as_choice, as_text, describe
from subagents.agents._lines import KeyPath, LineIndex
from subagents.agents._models import ModelAliases

__all__ = ["CODEX_DIALECT", "CODEX_SANDBOX_MODES", "parse_codex"]

#: Codex's sandbox modes -> whether the agent is read-only here.
CODEX_SANDBOX_MODES: Mapping[str, bool] = types.MappingProxyType(
    {"read-only": True, "workspace-write": False, "danger-full-access": False}
)

_REQUIRED = ("name", "description", "developer_instructions")
_DEFAULT_ALIASES = ModelAliases()
_TOP_KEY = re.compile(r"""^\s*(?P<key>[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')\s*[=.]""")
_TABLE = re.compile(r"^\s*\[")
_ERROR_LINE = re.compile(r"\(at line (?P<line>\d+)")

_IGNORED = {
    "model_reasoning_effort": "subagents has no reasoning-effort setting; use "
    "modelConfig.thinkingBudget in a Claude Code or YAML definition",
    "model_reasoning_summary": "subagents shows no reasoning summaries",
    "model_verbosity": "subagents has no verbosity setting",
    "model_provider": "the runtime's provider runs every agent",
    "approval_policy": "approval requests go to the parent (approvalMode), not to a Codex policy",
    "web_search": "subagents gives web search through the WebSearch tool, not a setting",
    "skills": "Codex skill configuration does not apply to subagents",
    "service_tier": "the runtime's provider settings apply",
    "sandbox_workspace_write": "subagents has no OS sandbox; tools are filtered instead",
    "shell_environment_policy": "subagents has no per-agent shell environment policy",
    "features": "Codex feature flags do not apply to subagents",
    "tools": "Codex's tool switches do not apply; use a Claude Code or YAML definition "
    "to list tools",
}


def _field_instructions(it: Interpreter, key: str, value: Any) -> None:
    text = it.check([key], functools.partial(as_text, value))
    if text is not INVALID:
        it.values.setdefault("_prompts", []).append(([key], text))


def _nicknames(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise Invalid(f"must be a list of nicknames, not {describe(value)}")
    names: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise Invalid(
                f"item {index + 1} must be a non-blank name, not {describe(item)}", (index,)
            )
        name = item.strip()
        if "\n" in name or "\r" in name:
            raise Invalid(f"item {index + 1} must be on one line", (index,))
        if name in names:
            raise Invalid(
                f"item {index + 1} repeats {name!r}; nicknames must be distinct", (index,)
            )
        names.append(name)
    return tuple(names)


def _field_nicknames(it: Interpreter, key: str, value: Any) -> None:
    names = it.check([key], lambda: _nicknames(value))
    if names is INVALID:
        return
    it.set("nickname_candidates", names, [key])
    it.applied([key], f"nicknames: {', '.join(names) if names else 'the runtime pool'}")


def _field_sandbox(it: Interpreter, key: str, value: Any) -> None:
    read_only = it.check([key], lambda: as_choice(value, CODEX_SANDBOX_MODES))
    if read_only is INVALID:
        return
    if read_only:
        it.set("permission_mode", PermissionMode.PLAN, [key])
        it.applied(
            [key],
            "sandbox read-only: tools that write or execute are removed and approval "
            "requests are denied (as permissionMode: plan)",
        )
    else:
        it.applied([key], f"sandbox {value}: the agent keeps its tools (no OS sandbox here)")


#: Codex's field names, read by the shared interpreter.
CODEX_DIALECT = Dialect(
    "Codex",
    handlers={
        "developer_instructions": _field_instructions,
        "nickname_candidates": _field_nicknames,
        "sandbox_mode": _field_sandbox,
        # [mcp_servers.NAME] tables: this agent's own servers, as mcpServers inline
        "mcp_servers": field_mcp_servers,
    },
    ignored=_IGNORED,
)


def _line_index(text: str) -> LineIndex:
    """The line of each top-level key (TOML has no positions in :mod:`tomllib`).

    Top-level keys come before the first ``[table]``; the lines of a multi-line
    string (opened by three quotes) are text, never keys.
    """
    lines: dict[KeyPath, int] = {}
    open_string: str | None = None
    in_table = False
    for number, line in enumerate(text.split("\n"), start=1):
        if open_string is not None:
            if open_string in line:
                open_string = None
            continue
        if _TABLE.match(line):
            in_table = True
            name = line.strip().strip("[]").strip().split(".")[0].strip("\"' ")
            if name:
                lines.setdefault((name,), number)
            continue
        match = _TOP_KEY.match(line)
        if match is None:
            continue
        if not in_table:
            lines.setdefault((match.group("key").strip("\"'"),), number)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                open_string = quote
                break
    return LineIndex(lines, default=1)


def _error(
    path: Path | None, source: AgentSource, code: DiagnosticCode, msg: str, line: int
) -> FileReport:
    diagnostic = Diagnostic(Severity.ERROR, code, msg, path, line, None)
    return FileReport(path, FileKind.DEFINITION, source, (), (diagnostic,))


def parse_codex(
    text: str,
    *,
    path: Path | None = None,
    source: AgentSource = AgentSource.CLI,
    aliases: ModelAliases = _DEFAULT_ALIASES,
    plugin: str | None = None,
) -> FileReport:
    """Read one Codex custom-agent TOML file's text; never raises for its content.

    A TOML file with none of ``name``, ``description`` and
    ``developer_instructions`` (a ``config.toml``, a Gemini command) is "not an
    agent"; one with some but not all of them is an error naming the missing ones.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _ERROR_LINE.search(str(exc))
        line = int(found.group("line")) if found else 1
        return _error(path, source, DiagnosticCode.SYNTAX, f"not valid TOML: {exc}", line)
    except RecursionError:
        return _error(path, source, DiagnosticCode.TOO_LARGE, "the TOML nests too deeply", 1)
    except ValueError as exc:
        # int() of a number with thousands of digits, and the like.
        msg = f"a TOML value cannot be read ({exc}); shorten or remove it"
        return _error(path, source, DiagnosticCode.TOO_LARGE, msg, 1)
    if not any(key in data for key in _REQUIRED):
        note = Diagnostic(
            Severity.NOTE,
            DiagnosticCode.NOT_AN_AGENT,
            "not an agent: a Codex custom agent has name, description and "
            "developer_instructions; skipped",
            path,
            1,
            None,
        )
        return FileReport(path, FileKind.NOT_AN_AGENT, source, (), (note,))
    index = _line_index(text)
    diagnostics: list[Diagnostic] = []
    definition = interpret(
        data,
        path=path,
        index=index,
        source=source,
        aliases=aliases,
        diagnostics=diagnostics,
        plugin=plugin,
        dialect=CODEX_DIALECT,
    )
    if "developer_instructions" not in data:
        diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                DiagnosticCode.MISSING_FIELD,
                "no developer_instructions: Codex requires them (they are the agent's "
                'system prompt); add developer_instructions = """..."""',
                path,
                1,
                "developer_instructions",
            )
        )
        definition = None
    definitions = (definition,) if definition is not None else ()
    return FileReport(path, FileKind.DEFINITION, source, definitions, tuple(diagnostics))
