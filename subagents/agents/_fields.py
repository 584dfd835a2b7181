"""Turn one parsed mapping into an :class:`AgentDefinition`, field by field.

The same interpreter reads Markdown frontmatter, YAML and JSON files, entries
of a ``config.json`` ``agents`` map and the ``--agents`` string: Claude Code's
field names (``name``, ``tools``, ``maxTurns``...) and the richer camelCase ones
(``agentType``, ``modelConfig``, ``runConfig``...) are both accepted, and two
fields that set the same thing must agree. Each field gets exactly one verdict
(applied, ignored or unknown) plus any warnings about its value; a value that
cannot be used is an error, and an entry with an error yields no definition
(a mistyped ``tools`` must never widen an agent to every tool).
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from subagents.agents._definition import (
    AgentDefinition,
    AgentSource,
    ApprovalMode,
    HookSpec,
    InputSpec,
    InputType,
    MemoryScope,
    ModelSettings,
    OutputSpec,
    PermissionMode,
    RunLimits,
)
from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, Severity
from subagents.agents._exceptions import AgentsError
from subagents.agents._lines import KeyPath, LineIndex
from subagents.agents._models import ModelAliases
from subagents.agents._tools import classify_tool, split_tool_list

__all__ = ["APPLIED_FIELDS", "IGNORED_FIELDS", "KNOWN_FIELDS", "interpret"]

#: Fields known to Claude Code (or the seeds) that have no effect here, and why.
IGNORED_FIELDS: Mapping[str, str] = types.MappingProxyType(
    {
        "mcpServers": "subagents does not start MCP servers per agent; mcp__ tools work "
        "only when the embedding program registers them",
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

_HOOK_EVENTS = ("PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop")
_RESERVED_INPUTS = ("cwd", "agent_type", "prompt")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_APPROVAL_VALUES = {
    "route_to_parent": ApprovalMode.ROUTE_TO_PARENT,
    "suppress": ApprovalMode.SUPPRESS,
    "auto_approve": ApprovalMode.AUTO_APPROVE,
    "auto_approve_in_sandbox": ApprovalMode.AUTO_APPROVE,
}
MAX_TURNS_LIMIT = 1_000_000
MAX_SECONDS_LIMIT = 7 * 24 * 3600.0
MAX_TEXT_CHARS = 1_000_000

_E = TypeVar("_E")


class _Invalid(AgentsError):
    """Internal: a value cannot be used (caught in this module, becomes a diagnostic)."""

    def __init__(self, message: str, keys: KeyPath = ()) -> None:
        super().__init__(message)
        self.message = message
        self.keys = keys


def _describe(value: Any) -> str:
    kinds = {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "a mapping",
        type(None): "empty",
    }
    return kinds.get(type(value), type(value).__name__)


def _text(value: Any, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"must be text, not {_describe(value)}; put the value in quotes")
    if len(value) > MAX_TEXT_CHARS:
        raise _Invalid(f"is longer than {MAX_TEXT_CHARS} characters; shorten it")
    if not allow_empty and not value.strip():
        raise _Invalid("is empty; give it a value or remove the field")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, not {_describe(value)}")
    return value


def _integer(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(f"must be a whole number, not {_describe(value)}")
    if not low <= value <= high:
        raise _Invalid(f"must be between {low} and {high}, not {value}")
    return value


def _number(value: Any, low: float, high: float, *, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"must be a number, not {_describe(value)}")
    number = float(value)
    if not math.isfinite(number) or number < low or number > high or (low_open and number == low):
        bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
        raise _Invalid(f"must be {bound} and at most {high:g}, not {value}")
    return number


def _names(value: Any) -> tuple[str, ...]:
    """A list of names, or Claude Code's comma-separated string."""
    if isinstance(value, str):
        return split_tool_list(value)
    if isinstance(value, list):
        names: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise _Invalid(
                    f"item {index + 1} must be a non-empty name, not {_describe(item)}",
                    (index,),
                )
            names.append(item.strip())
        return tuple(names)
    raise _Invalid(f"must be a list of names or a comma-separated string, not {_describe(value)}")


def _mapping(value: Any) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise _Invalid(f"must be a mapping of fields, not {_describe(value)}")
    return value


def _enum_value(value: Any, choices: Mapping[str, _E]) -> _E:
    if isinstance(value, str) and value in choices:
        return choices[value]
    allowed = ", ".join(choices)
    raise _Invalid(f"must be one of {allowed}, not {value!r}")


def _json_type_ok(value: Any, kind: InputType) -> bool:
    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    checks: dict[InputType, Callable[[Any], bool]] = {
        InputType.STRING: lambda v: isinstance(v, str),
        InputType.NUMBER: number,
        InputType.INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
        InputType.BOOLEAN: lambda v: isinstance(v, bool),
        InputType.STRING_ARRAY: lambda v: (
            isinstance(v, list) and all(isinstance(x, str) for x in v)
        ),
        InputType.NUMBER_ARRAY: lambda v: isinstance(v, list) and all(number(x) for x in v),
    }
    return checks[kind](value)


@attrs.define
class _Interpreter:
    path: Path | None
    index: LineIndex
    prefix: KeyPath
    aliases: ModelAliases
    diagnostics: list[Diagnostic]
    values: dict[str, Any] = attrs.field(factory=dict)
    # which field set each value, for conflict messages
    setters: dict[str, str] = attrs.field(factory=dict)
    # definition values some field tried to set, even if its value was invalid
    tried: set[str] = attrs.field(factory=set)
    failed: bool = False

    # -- diagnostics ---------------------------------------------------------

    def _add(
        self, severity: Severity, code: DiagnosticCode, keys: Sequence[str | int], msg: str
    ) -> None:
        full = (*self.prefix, *keys)
        field = ".".join(str(k) for k in full) or None
        self.diagnostics.append(
            Diagnostic(severity, code, msg, self.path, self.index.line(full), field)
        )
        if severity is Severity.ERROR:
            self.failed = True

    def note(self, code: DiagnosticCode, keys: Sequence[str | int], msg: str) -> None:
        self._add(Severity.NOTE, code, keys, msg)

    def warn(self, code: DiagnosticCode, keys: Sequence[str | int], msg: str) -> None:
        self._add(Severity.WARNING, code, keys, msg)

    def error(self, code: DiagnosticCode, keys: Sequence[str | int], msg: str) -> None:
        self._add(Severity.ERROR, code, keys, msg)

    def applied(self, keys: Sequence[str | int], summary: str) -> None:
        self.note(DiagnosticCode.APPLIED, keys, f"applied: {summary}")

    def set(self, target: str, value: Any, keys: Sequence[str | int]) -> None:
        """Set one definition value; a second field setting it differently is an error."""
        field = ".".join(str(k) for k in keys)
        if target in self.values and self.values[target] != value:
            self.error(
                DiagnosticCode.CONFLICT,
                keys,
                f"{field} and {self.setters[target]} both set the {target.replace('_', ' ')} "
                "to different values; keep one of them",
            )
            return
        self.values[target] = value
        self.setters.setdefault(target, field)

    def check(self, keys: Sequence[str | int], parse: Callable[[], Any]) -> Any:
        """Run ``parse``; an :class:`_Invalid` becomes an error on ``keys``."""
        try:
            return parse()
        except _Invalid as invalid:
            full = (*keys, *invalid.keys)
            label = ".".join(str(k) for k in keys)
            self.error(DiagnosticCode.INVALID_VALUE, full, f"{label} {invalid.message}")
            return _INVALID

    # -- fields ---------------------------------------------------------------

    def field_name(self, key: str, value: Any) -> None:
        self.tried.add("name")
        name = self.check([key], lambda: _text(value, allow_empty=False).strip())
        if name is _INVALID:
            return
        if "\n" in name:
            self.error(DiagnosticCode.INVALID_VALUE, [key], f"{key} must be on one line")
            return
        if not _PLAIN_NAME.match(name):
            self.warn(
                DiagnosticCode.INVALID_VALUE,
                [key],
                f"{key} {name!r} has characters other than letters, digits and - _ . :; "
                "it may be hard to type when spawning the agent",
            )
        self.set("name", name, [key])
        self.applied([key], f"agent type {name!r}")

    def field_description(self, key: str, value: Any) -> None:
        self.tried.add("description")
        text = self.check([key], lambda: _text(value, allow_empty=False).strip())
        if text is not _INVALID:
            self.set("description", text, [key])
            self.applied([key], f"when to use ({len(text)} characters)")

    def field_text(self, key: str, value: Any, target: str, what: str) -> None:
        text = self.check([key], lambda: _text(value))
        if text is not _INVALID:
            self.set(target, text, [key])
            self.applied([key], what)

    def field_bool(self, key: str, value: Any, target: str, what: str) -> None:
        flag = self.check([key], lambda: _boolean(value))
        if flag is not _INVALID:
            self.set(target, flag, [key])
            self.applied([key], f"{what} = {str(flag).lower()}")

    def _tool_names(self, key: str, value: Any) -> tuple[str, ...] | None:
        names = self.check([key], lambda: _names(value))
        if names is _INVALID:
            return None
        result: tuple[str, ...] = names
        for position, name in enumerate(result):
            keys: list[str | int] = [key, position] if isinstance(value, list) else [key]
            kind = classify_tool(name)
            if kind.kind == "unknown":
                self.warn(
                    DiagnosticCode.UNKNOWN_TOOL,
                    keys,
                    f"unknown tool {name!r}: kept in {key}, but no built-in tool has this "
                    "name; check the spelling, or register a tool of that name",
                )
            elif kind.kind == "mcp":
                self.note(
                    DiagnosticCode.MCP_TOOL,
                    keys,
                    f"{name!r} is an MCP tool: available only when an MCP server "
                    f"{kind.server!r} provides it",
                )
        return result

    def field_tools(self, key: str, value: Any) -> None:
        if value is None:
            self.applied([key], "tools is empty (null): the agent inherits every tool")
            return
        names = self._tool_names(key, value)
        if names is None:
            return
        if not names:
            self.warn(
                DiagnosticCode.EMPTY,
                [key],
                "tools is empty: this agent gets no tools at all; remove the field to "
                "inherit every tool",
            )
        elif "*" in names and len(names) > 1:
            self.note(
                DiagnosticCode.APPLIED,
                [key],
                "'*' allows every tool; the other names in the list add nothing",
            )
        self.set("tools", names, [key])
        shown = ", ".join(names) if names else "none"
        self.applied([key], f"allowed tools: {shown}")

    def field_disallowed(self, key: str, value: Any) -> None:
        if value is None:
            self.applied([key], "no tools denied")
            return
        names = self._tool_names(key, value)
        if names is not None:
            self.set("disallowed_tools", names, [key])
            self.applied([key], f"denied tools: {', '.join(names) if names else 'none'}")

    def _model(self, keys: list[str | int], value: Any) -> None:
        model = self.check(keys, lambda: _text(value, allow_empty=False).strip())
        if model is _INVALID:
            return
        check = self.aliases.check(model)
        self.set("model", "inherit" if check.kind == "inherit" else model, keys)
        if check.kind == "inherit":
            self.applied(keys, "model inherit (the parent's model)")
        elif check.kind == "alias":
            self.applied(keys, f"model {model!r} (alias of {check.model_id})")
        elif check.kind == "model-id":
            self.applied(keys, f"model {model!r}")
        else:
            self.applied(keys, f"model {model!r}")
            known = ", ".join(sorted(self.aliases.table)[:6])
            self.warn(
                DiagnosticCode.UNKNOWN_MODEL,
                keys,
                f"unknown model {model!r}: not an alias ({known}, ...) nor a Claude model "
                "id; it is passed to the provider as written",
            )

    def field_model(self, key: str, value: Any) -> None:
        self._model([key], value)

    def field_permission_mode(self, key: str, value: Any) -> None:
        choices = {mode.value: mode for mode in PermissionMode}
        mode = self.check([key], lambda: _enum_value(value, choices))
        if mode is not _INVALID:
            self.set("permission_mode", mode, [key])
            self.applied([key], f"permission mode {mode.value}")

    def field_approval_mode(self, key: str, value: Any) -> None:
        mode = self.check([key], lambda: _enum_value(value, _APPROVAL_VALUES))
        if mode is not _INVALID:
            self.set("approval_mode", mode, [key])
            self.applied([key], f"approval mode {mode.value}")

    def _max_turns(self, keys: list[str | int], value: Any) -> None:
        turns = self.check(keys, lambda: _integer(value, 1, MAX_TURNS_LIMIT))
        if turns is not _INVALID:
            self.set("max_turns", turns, keys)
            self.applied(keys, f"at most {turns} turns")

    def field_max_turns(self, key: str, value: Any) -> None:
        self._max_turns([key], value)

    def field_skills(self, key: str, value: Any) -> None:
        names = self.check([key], lambda: _names(value) if value is not None else ())
        if names is not _INVALID:
            self.set("skills", names, [key])
            self.applied([key], f"skills: {', '.join(names) if names else 'none'}")

    def field_disabled_features(self, key: str, value: Any) -> None:
        names = self.check([key], lambda: _names(value) if value is not None else ())
        if names is not _INVALID:
            self.set("disabled_features", names, [key])
            self.applied([key], f"disabled features: {', '.join(names) if names else 'none'}")

    def field_memory(self, key: str, value: Any) -> None:
        choices = {scope.value: scope for scope in MemoryScope}
        scope = self.check([key], lambda: _enum_value(value, choices))
        if scope is not _INVALID:
            self.set("memory", scope, [key])
            self.applied([key], f"{scope.value} memory (first 200 lines of MEMORY.md)")

    def field_color(self, key: str, value: Any) -> None:
        color = self.check([key], lambda: _text(value, allow_empty=False).strip())
        if color is not _INVALID:
            self.set("color", color, [key])
            self.applied([key], f"color {color}")

    def field_hooks(self, key: str, value: Any) -> None:
        if value is None:
            self.applied([key], "no hooks")
            return
        events = self.check([key], lambda: _mapping(value))
        if events is _INVALID:
            return
        hooks: list[HookSpec] = []
        for event, groups in events.items():
            keys: list[str | int] = [key, str(event)]
            name = "SubagentStop" if event == "Stop" else event
            if event == "Stop":
                self.note(
                    DiagnosticCode.APPLIED,
                    keys,
                    "a Stop hook of a subagent runs when the subagent stops (SubagentStop)",
                )
            if name not in _HOOK_EVENTS:
                self.warn(
                    DiagnosticCode.IGNORED,
                    keys,
                    f"hook event {event!r} is not one subagents fires for an agent "
                    f"({', '.join((*_HOOK_EVENTS, 'Stop'))}); these hooks are not used",
                )
                continue
            if not isinstance(groups, list):
                self.error(
                    DiagnosticCode.INVALID_VALUE,
                    keys,
                    f"{key}.{event} must be a list of {{matcher, hooks}} entries, "
                    f"not {_describe(groups)}",
                )
                continue
            for g_index, group in enumerate(groups):
                hooks.extend(self._hook_group([*keys, g_index], str(name), group))
        self.set("hooks", tuple(hooks), [key])
        self.applied([key], f"{len(hooks)} command hook(s)")

    def _hook_group(self, keys: list[str | int], event: str, group: Any) -> list[HookSpec]:
        label = ".".join(str(k) for k in keys)
        if not isinstance(group, Mapping):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                keys,
                f"{label} must be a mapping with 'matcher' and 'hooks', not {_describe(group)}",
            )
            return []
        matcher = group.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            self.error(
                DiagnosticCode.INVALID_VALUE, [*keys, "matcher"], f"{label}.matcher must be text"
            )
            return []
        for extra in group:
            if extra not in ("matcher", "hooks"):
                self.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    [*keys, str(extra)],
                    f"{label}.{extra} is not a hook field (matcher, hooks); it is not used",
                )
        entries = group.get("hooks")
        if not isinstance(entries, list):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [*keys, "hooks"],
                f"{label}.hooks must be a list of {{type: command, command: ...}}, "
                f"not {_describe(entries)}",
            )
            return []
        specs: list[HookSpec] = []
        for h_index, entry in enumerate(entries):
            h_keys = [*keys, "hooks", h_index]
            h_label = ".".join(str(k) for k in h_keys)
            if not isinstance(entry, Mapping):
                self.error(DiagnosticCode.INVALID_VALUE, h_keys, f"{h_label} must be a mapping")
                continue
            kind = entry.get("type", "command")
            if kind != "command":
                self.warn(
                    DiagnosticCode.IGNORED,
                    [*h_keys, "type"],
                    f"{h_label}: hook type {kind!r} is not supported (only 'command'); "
                    "this hook is not used",
                )
                continue
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                self.error(
                    DiagnosticCode.INVALID_VALUE,
                    [*h_keys, "command"],
                    f"{h_label}.command must be a non-empty shell command",
                )
                continue
            timeout = entry.get("timeout")
            if timeout is not None:
                timeout = self.check(
                    [*h_keys, "timeout"],
                    functools.partial(_number, timeout, 0.0, 3600.0, low_open=True),
                )
                if timeout is _INVALID:
                    continue
            for extra in entry:
                if extra not in ("type", "command", "timeout"):
                    self.warn(
                        DiagnosticCode.UNKNOWN_FIELD,
                        [*h_keys, str(extra)],
                        f"{h_label}.{extra} is not a hook field (type, command, timeout)",
                    )
            specs.append(HookSpec(event, command, matcher or None, timeout))
        return specs

    def _sub_fields(
        self, key: str, value: Any, handlers: Mapping[str, Callable[[list[str | int], Any], None]]
    ) -> bool:
        config = self.check([key], lambda: _mapping(value))
        if config is _INVALID:
            return False
        for sub, sub_value in config.items():
            keys: list[str | int] = [key, str(sub)]
            handler = handlers.get(str(sub))
            if handler is None:
                self.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    keys,
                    f"{key}.{sub} is not a field of {key} ({', '.join(handlers)}); it is not used",
                )
                continue
            handler(keys, sub_value)
        return True

    def field_model_config(self, key: str, value: Any) -> None:
        settings: dict[str, Any] = {}

        def number(target: str, low: float, high: float) -> Callable[[list[str | int], Any], None]:
            def handle(keys: list[str | int], raw: Any) -> None:
                parsed = self.check(keys, lambda: _number(raw, low, high))
                if parsed is not _INVALID:
                    settings[target] = parsed
                    self.applied(keys, f"{keys[-1]} {parsed:g}")

            return handle

        def thinking(keys: list[str | int], raw: Any) -> None:
            parsed = self.check(keys, lambda: _integer(raw, -1, 10_000_000))
            if parsed is not _INVALID:
                settings["thinking_budget"] = parsed
                self.applied(keys, f"thinking budget {parsed}")

        handlers = {
            "model": self._model,
            "temperature": number("temperature", 0.0, 2.0),
            "topP": number("top_p", 0.0, 1.0),
            "thinkingBudget": thinking,
        }
        if self._sub_fields(key, value, handlers):
            self.values["model_settings"] = ModelSettings(**settings)

    def field_run_config(self, key: str, value: Any) -> None:
        limits: dict[str, Any] = {}

        def seconds(target: str, low_open: bool) -> Callable[[list[str | int], Any], None]:
            def handle(keys: list[str | int], raw: Any) -> None:
                parsed = self.check(
                    keys, lambda: _number(raw, 0.0, MAX_SECONDS_LIMIT, low_open=low_open)
                )
                if parsed is not _INVALID:
                    limits[target] = parsed
                    self.applied(keys, f"{keys[-1]} {parsed:g} s")

            return handle

        handlers = {
            "maxTurns": self._max_turns,
            "maxTimeSeconds": seconds("max_time_seconds", True),
            "gracePeriodSeconds": seconds("grace_period_seconds", False),
        }
        if self._sub_fields(key, value, handlers):
            self.values["run_limits"] = limits

    def field_prompt_config(self, key: str, value: Any) -> None:
        def system(keys: list[str | int], raw: Any) -> None:
            text = self.check(keys, lambda: _text(raw))
            if text is not _INVALID:
                self.values.setdefault("_prompts", []).append((keys, text))

        def query(keys: list[str | int], raw: Any) -> None:
            text = self.check(keys, lambda: _text(raw))
            if text is not _INVALID:
                self.set("query", text.strip(), keys)
                self.applied(keys, "first user message template")

        def initial_messages(keys: list[str | int], raw: Any) -> None:
            self.warn(
                DiagnosticCode.IGNORED,
                keys,
                "promptConfig.initialMessages (few-shot messages) is not supported; "
                "put examples in the system prompt",
            )

        self._sub_fields(
            key,
            value,
            {"systemPrompt": system, "query": query, "initialMessages": initial_messages},
        )

    def field_input_config(self, key: str, value: Any) -> None:
        config = self.check([key], lambda: _mapping(value))
        if config is _INVALID:
            return
        for extra in config:
            if extra != "inputs":
                self.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    [key, str(extra)],
                    f"{key}.{extra} is not a field of {key} (inputs); it is not used",
                )
        raw_inputs = config.get("inputs", {})
        inputs = self.check(
            [key, "inputs"], lambda: _mapping(raw_inputs if raw_inputs is not None else {})
        )
        if inputs is _INVALID:
            return
        specs: list[InputSpec] = []
        for name, spec in inputs.items():
            parsed = self._input([key, "inputs", str(name)], str(name), spec)
            if parsed is not None:
                specs.append(parsed)
        self.set("inputs", tuple(specs), [key])
        self.applied([key], f"inputs: {', '.join(s.name for s in specs) or 'none'}")

    def _input(self, keys: list[str | int], name: str, spec: Any) -> InputSpec | None:
        label = ".".join(str(k) for k in keys)
        if not _IDENTIFIER.match(name):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                keys,
                f"input name {name!r} must be an identifier (letters, digits, _) to be "
                "usable as ${name} in templates",
            )
            return None
        if name in _RESERVED_INPUTS:
            self.error(
                DiagnosticCode.INVALID_VALUE,
                keys,
                f"input name {name!r} is reserved for the template variable ${{{name}}}; rename it",
            )
            return None
        if not isinstance(spec, Mapping):
            self.error(DiagnosticCode.INVALID_VALUE, keys, f"{label} must be a mapping")
            return None
        known = ("type", "description", "required", "default", "enum")
        for extra in spec:
            if extra not in known:
                self.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    [*keys, str(extra)],
                    f"{label}.{extra} is not an input field ({', '.join(known)})",
                )
        choices_by_value = {t.value: t for t in InputType}
        kind = self.check(
            [*keys, "type"], lambda: _enum_value(spec.get("type", "string"), choices_by_value)
        )
        description = self.check([*keys, "description"], lambda: _text(spec.get("description", "")))
        required = self.check([*keys, "required"], lambda: _boolean(spec.get("required", False)))
        if _INVALID in (kind, description, required):
            return None
        default = spec.get("default")
        if default is not None and not _json_type_ok(default, kind):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [*keys, "default"],
                f"{label}.default {default!r} is not a {kind.value}",
            )
            return None
        choices = spec.get("enum", [])
        if not isinstance(choices, list) or not all(_json_type_ok(c, kind) for c in choices):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [*keys, "enum"],
                f"{label}.enum must be a list of {kind.value} values",
            )
            return None
        if default is not None and choices and default not in choices:
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [*keys, "default"],
                f"{label}.default {default!r} is not one of its enum values",
            )
            return None
        return InputSpec(name, kind, description.strip(), required, default, tuple(choices))

    def field_output_config(self, key: str, value: Any) -> None:
        config = self.check([key], lambda: _mapping(value))
        if config is _INVALID:
            return
        known = ("outputName", "description", "schema")
        for extra in config:
            if extra not in known:
                self.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    [key, str(extra)],
                    f"{key}.{extra} is not a field of {key} ({', '.join(known)})",
                )
        name = self.check(
            [key, "outputName"], lambda: _text(config.get("outputName"), allow_empty=False).strip()
        )
        description = self.check([key, "description"], lambda: _text(config.get("description", "")))
        schema = self.check([key, "schema"], lambda: _mapping(config.get("schema")))
        if _INVALID in (name, description, schema):
            return
        if not _IDENTIFIER.match(name):
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [key, "outputName"],
                f"{key}.outputName {name!r} must be an identifier (letters, digits, _)",
            )
            return
        problem = _schema_problem(schema)
        if problem is not None:
            self.error(
                DiagnosticCode.INVALID_VALUE,
                [key, "schema"],
                f"{key}.schema is not a valid JSON Schema: {problem}",
            )
            return
        self.set("output", OutputSpec(name, description.strip(), schema), [key])
        self.applied([key], f"structured output {name!r} validated by its JSON Schema")


def _schema_problem(schema: Mapping[Any, Any]) -> str | None:
    import jsonschema

    try:
        validator = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
        validator.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        return exc.message
    except (TypeError, ValueError, RecursionError) as exc:
        return str(exc)
    return None


_INVALID: Any = object()

_Handler = Callable[[_Interpreter, str, Any], None]

_HANDLERS: dict[str, _Handler] = {
    "name": _Interpreter.field_name,
    "agentType": _Interpreter.field_name,
    "description": _Interpreter.field_description,
    "whenToUse": _Interpreter.field_description,
    "displayName": lambda i, k, v: i.field_text(k, v, "display_name", "display name"),
    "tools": _Interpreter.field_tools,
    "disallowedTools": _Interpreter.field_disallowed,
    "model": _Interpreter.field_model,
    "permissionMode": _Interpreter.field_permission_mode,
    "approvalMode": _Interpreter.field_approval_mode,
    "maxTurns": _Interpreter.field_max_turns,
    "skills": _Interpreter.field_skills,
    "hooks": _Interpreter.field_hooks,
    "memory": _Interpreter.field_memory,
    "background": lambda i, k, v: i.field_bool(k, v, "background", "always in background"),
    "color": _Interpreter.field_color,
    "initialPrompt": lambda i, k, v: i.field_text(k, v, "initial_prompt", "initial prompt"),
    "modelConfig": _Interpreter.field_model_config,
    "runConfig": _Interpreter.field_run_config,
    "inputConfig": _Interpreter.field_input_config,
    "outputConfig": _Interpreter.field_output_config,
    "promptConfig": _Interpreter.field_prompt_config,
    "forkContext": lambda i, k, v: i.field_bool(k, v, "fork_context", "fork the parent's context"),
    "criticalReminder": lambda i, k, v: i.field_text(
        k, v, "critical_reminder", "critical reminder"
    ),
    "disabledFeatures": _Interpreter.field_disabled_features,
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
) -> AgentDefinition | None:
    """Build a definition from ``data``, appending what was done to ``diagnostics``.

    ``body`` is the Markdown body and its first line (the system prompt);
    ``default_name`` is ``(name, why)`` used when the data names no agent (a
    file's stem, or the key of a ``config.json`` entry). Returns ``None`` when
    any field is an error.
    """
    it = _Interpreter(path, index, prefix, aliases, diagnostics)
    for raw_key, value in data.items():
        if not isinstance(raw_key, str):
            it.error(
                DiagnosticCode.INVALID_VALUE,
                [str(raw_key)],
                f"field name {raw_key!r} must be text",
            )
            continue
        key = raw_key
        handler = _HANDLERS.get(key)
        if handler is not None:
            handler(it, key, value)
        elif key in _PROMPT_FIELDS:
            text = it.check([key], functools.partial(_text, value))
            if text is not _INVALID:
                it.values.setdefault("_prompts", []).append(([key], text))
        elif key in IGNORED_FIELDS:
            it.warn(
                DiagnosticCode.IGNORED,
                [key],
                f"ignored: {key} has no effect here: {IGNORED_FIELDS[key]}",
            )
        else:
            close = difflib.get_close_matches(key, KNOWN_FIELDS, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [key],
                f"unknown field {key!r}{hint}: neither subagents nor Claude Code knows it; "
                "it is not used",
            )
    return _finish(it, body=body, default_name=default_name, source=source, plugin=plugin)


def _finish(
    it: _Interpreter,
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
                "no agent name: add a 'name' field (the agent type used to spawn it)",
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


def _system_prompt(it: _Interpreter, body: tuple[str, int] | None) -> str:
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
