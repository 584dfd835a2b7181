"""Turn one parsed mapping into an :class:`AgentDefinition`, field by field.

The same interpreter reads Markdown frontmatter, YAML and JSON files, entries
of a ``config.json`` ``agents`` map and the ``--agents`` string: Claude Code's
field names (``name``, ``tools``, ``maxTurns``...) and the richer camelCase ones
(``agentType``, ``modelConfig``, ``runConfig``...) are both accepted, and two
fields that set the same thing must agree. Each field gets exactly one verdict
(applied, ignored or unknown) plus any warnings about its value; a value that
cannot be used is an error, and an entry with an error yields no definition
(a mistyped ``tools`` must never widen an agent to every tool).

:func:`interpret` and the table of fields are here; the state of one reading
and the simple fields are in :mod:`.interpreter`, the nested ``hooks`` and
``*Config`` fields in :mod:`.hooks` and :mod:`.config`, the value checks in
:mod:`.values`.
"""

from __future__ import annotations

import difflib
import functools
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from subagents.agents._definition import AgentDefinition, AgentSource, ModelSettings, RunLimits
from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, Severity
from subagents.agents._fields.config import (
    field_input_config,
    field_model_config,
    field_output_config,
    field_prompt_config,
    field_run_config,
)
from subagents.agents._fields.hooks import field_hooks
from subagents.agents._fields.interpreter import Interpreter
from subagents.agents._fields.mcp import field_mcp_servers
from subagents.agents._fields.values import INVALID, as_text
from subagents.agents._lines import KeyPath, LineIndex
from subagents.agents._models import ModelAliases

__all__ = ["APPLIED_FIELDS", "IGNORED_FIELDS", "KNOWN_FIELDS", "Dialect", "Handler", "interpret"]


def _freeze_handlers(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return types.MappingProxyType(dict(value))


def _freeze_reasons(value: Mapping[str, str]) -> Mapping[str, str]:
    return types.MappingProxyType(dict(value))


#: Fields known to Claude Code (or the seeds) that have no effect here, and why.
IGNORED_FIELDS: Mapping[str, str] = types.MappingProxyType(
    {
        "effort": "subagents has no effort setting; use modelConfig.thinkingBudget",
        "isolation": "subagents does not run agents in separate git worktrees; the agent "
        "works in the runtime's working directory",
        "source": "the scope comes from where the definition is found, not from the file",
        "executionMode": "subagents runs every agent the same way, as a supervised actor",
        "baseDir": "agents run in the runtime's working directory",
    }
)

_PROMPT_FIELDS = ("prompt", "systemPrompt")

#: Top-level fields that set something on the definition.
APPLIED_FIELDS: tuple[str, ...] = (
    "name",
    "agentType",
    "description",
    "whenToUse",
    "displayName",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "approvalMode",
    "maxTurns",
    "skills",
    "hooks",
    "memory",
    "background",
    "color",
    "initialPrompt",
    "modelConfig",
    "mcpServers",
    "runConfig",
    "inputConfig",
    "outputConfig",
    "promptConfig",
    "forkContext",
    "criticalReminder",
    "disabledFeatures",
    *_PROMPT_FIELDS,
)

KNOWN_FIELDS: tuple[str, ...] = (*APPLIED_FIELDS, *IGNORED_FIELDS)

Handler = Callable[[Interpreter, str, Any], None]


@attrs.frozen
class Dialect:
    """Another tool's field names, read by the same interpreter (Gemini CLI, Codex).

    ``handlers`` read the dialect's own fields (and win over a Claude Code field
    of the same name, as Gemini's ``tools`` does); ``ignored`` are its fields that
    have no effect here, with the reason. Every other field is read as Claude
    Code's, so a file that mixes the two is still understood.
    """

    #: The tool whose format this is, for messages ("Gemini CLI").
    name: str
    handlers: Mapping[str, Handler] = attrs.field(factory=dict, converter=_freeze_handlers)
    ignored: Mapping[str, str] = attrs.field(factory=dict, converter=_freeze_reasons)


#: How each applied field is read (the prompt fields are gathered in :func:`interpret`).
_HANDLERS: dict[str, Handler] = {
    "name": Interpreter.field_name,
    "agentType": Interpreter.field_name,
    "description": Interpreter.field_description,
    "whenToUse": Interpreter.field_description,
    "displayName": lambda i, k, v: i.field_text(k, v, "display_name", "display name"),
    "tools": Interpreter.field_tools,
    "disallowedTools": Interpreter.field_disallowed,
    "model": Interpreter.field_model,
    "permissionMode": Interpreter.field_permission_mode,
    "approvalMode": Interpreter.field_approval_mode,
    "maxTurns": Interpreter.field_max_turns,
    "skills": Interpreter.field_skills,
    "hooks": field_hooks,
    "mcpServers": field_mcp_servers,
    "memory": Interpreter.field_memory,
    "background": Interpreter.field_background,
    "color": Interpreter.field_color,
    "initialPrompt": lambda i, k, v: i.field_text(k, v, "initial_prompt", "initial prompt"),
    "modelConfig": field_model_config,
    "runConfig": field_run_config,
    "inputConfig": field_input_config,
    "outputConfig": field_output_config,
    "promptConfig": field_prompt_config,
    "forkContext": lambda i, k, v: i.field_bool(k, v, "fork_context", "fork the parent's context"),
    "criticalReminder": lambda i, k, v: i.field_text(
        k, v, "critical_reminder", "critical reminder"
    ),
    "disabledFeatures": Interpreter.field_disabled_features,
}


def interpret(
    data: Mapping[Any, Any],
    *,
    path: Path | None,
    index: LineIndex,
    source: AgentSource,
    aliases: ModelAliases,
    diagnostics: list[Diagnostic],
    prefix: KeyPath = (),
    body: tuple[str, int] | None = None,
    default_name: tuple[str, str] | None = None,
    plugin: str | None = None,
    dialect: Dialect | None = None,
) -> AgentDefinition | None:
    """Build a definition from ``data``, appending what was done to ``diagnostics``.

    ``body`` is the Markdown body and its first line (the system prompt);
    ``default_name`` is ``(name, why)`` used when the data names no agent (a
    file's stem, or the key of a ``config.json`` entry); ``dialect`` adds
    another tool's field names (Gemini CLI's, Codex's). Returns ``None`` when
    any field is an error.
    """
    it = Interpreter(path, index, prefix, aliases, diagnostics)
    extra: Mapping[str, Handler] = dialect.handlers if dialect is not None else {}
    extra_ignored: Mapping[str, str] = dialect.ignored if dialect is not None else {}
    for raw_key, value in data.items():
        if not isinstance(raw_key, str):
            it.error(
                DiagnosticCode.INVALID_VALUE,
                [str(raw_key)],
                f"field name {raw_key!r} must be text",
            )
            continue
        key = raw_key
        handler = extra.get(key) or _HANDLERS.get(key)
        if handler is not None:
            handler(it, key, value)
        elif key in _PROMPT_FIELDS:
            text = it.check([key], functools.partial(as_text, value))
            if text is not INVALID:
                it.values.setdefault("_prompts", []).append(([key], text))
        elif key in extra_ignored or key in IGNORED_FIELDS:
            reason = extra_ignored.get(key) or IGNORED_FIELDS[key]
            it.warn(DiagnosticCode.IGNORED, [key], f"ignored: {key} has no effect here: {reason}")
        else:
            known = (*KNOWN_FIELDS, *extra, *extra_ignored)
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            who = f"subagents, {dialect.name} nor" if dialect is not None else "subagents nor"
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [key],
                f"unknown field {key!r}{hint}: neither {who} Claude Code knows it; it is not used",
            )
    return _finish(it, body=body, default_name=default_name, source=source, plugin=plugin)


def _finish(
    it: Interpreter,
    *,
    body: tuple[str, int] | None,
    default_name: tuple[str, str] | None,
    source: AgentSource,
    plugin: str | None,
) -> AgentDefinition | None:
    values = it.values
    if "name" not in values and "name" not in it.tried:
        if default_name is not None and default_name[0].strip():
            values["name"] = default_name[0].strip()
            it.note(DiagnosticCode.DEFAULTED, [], f"no name field: {default_name[1]}")
        else:
            it.error(
                DiagnosticCode.MISSING_FIELD,
                ["name"],
                "no agent name: add a 'name' field (the agent type used to spawn it); "
                "Claude Code skips a definition without one, and so does subagents",
            )
    if "description" not in it.tried:
        it.error(
            DiagnosticCode.MISSING_FIELD,
            ["description"],
            "no description: add a 'description' field saying when to use this agent",
        )
    prompt = _system_prompt(it, body)
    if it.failed:
        return None
    limits = dict(values.pop("run_limits", {}))
    if "max_turns" in values:
        limits["max_turns"] = values.pop("max_turns")
    settings = values.pop("model_settings", ModelSettings())
    values.pop("_prompts", None)
    return AgentDefinition(
        system_prompt=prompt,
        run_limits=RunLimits(**limits),
        model_settings=settings,
        source=source,
        path=it.path,
        plugin=plugin,
        **values,
    )


def _system_prompt(it: Interpreter, body: tuple[str, int] | None) -> str:
    sources: list[tuple[str, str]] = []
    if body is not None and body[0].strip():
        sources.append(("the Markdown body", body[0]))
    for keys, text in it.values.get("_prompts", []):
        label = ".".join(str(k) for k in keys)
        if text.strip():
            sources.append((label, text))
            it.applied(keys, "system prompt")
        else:
            it.applied(keys, "system prompt (empty)")
    if body is not None and body[0].strip() and len(sources) == 1:
        lines = body[0].strip().count("\n") + 1
        it.diagnostics.append(
            Diagnostic(
                Severity.NOTE,
                DiagnosticCode.APPLIED,
                f"applied: the Markdown body is the system prompt ({lines} lines)",
                it.path,
                body[1],
                None,
            )
        )
    if len(sources) > 1:
        names = " and ".join(label for label, _ in sources)
        it.error(
            DiagnosticCode.CONFLICT,
            [],
            f"the system prompt is given twice ({names}); keep one of them",
        )
        return ""
    if not sources:
        if not it.failed:
            it.warn(
                DiagnosticCode.EMPTY,
                [],
                "the system prompt is empty: the agent has only its task prompt to go on",
            )
        return ""
    return sources[0][1].strip()
