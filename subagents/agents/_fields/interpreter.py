"""The interpreter of one agent's fields: its diagnostics, its values, its simple fields.

An :class:`Interpreter` holds what reading one definition has found so far:
the values each field set (and which field set them, so that two fields
setting the same thing differently are a conflict), the diagnostics, and
whether any of them is an error. Its ``field_*`` methods read the top-level
fields that hold one value (a name, a text, a flag, a list of tools, a model, a
mode); the nested ``hooks`` and ``*Config`` fields have modules of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from subagents.agents._definition import ApprovalMode, MemoryScope, PermissionMode
from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, Severity
from subagents.agents._fields.values import (
    INVALID,
    MAX_TURNS_LIMIT,
    Invalid,
    as_boolean,
    as_choice,
    as_integer,
    as_names,
    as_text,
)
from subagents.agents._lines import KeyPath, LineIndex
from subagents.agents._models import ModelAliases
from subagents.agents._tools import NOT_IMPLEMENTED_REASONS, classify_tool

__all__ = ["Interpreter"]

# A turn count written as text ("7"): plain ASCII digits, short enough for int().
_DIGITS = re.compile(r"[0-9]{1,18}")
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_IN_SANDBOX = "auto_approve_in_sandbox"
_APPROVAL_VALUES = {
    "route_to_parent": ApprovalMode.ROUTE_TO_PARENT,
    "suppress": ApprovalMode.SUPPRESS,
    "auto_approve": ApprovalMode.AUTO_APPROVE,
    # The seeds' spelling: approve what runs inside an OS sandbox. subagents has none,
    # so nothing is approved unasked on that ground (see field_approval_mode).
    _IN_SANDBOX: ApprovalMode.ROUTE_TO_PARENT,
}


@attrs.define
class Interpreter:
    """What reading one definition has found: its values, who set them, its diagnostics."""

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
        """Run ``parse``; an :class:`Invalid` becomes an error on ``keys``."""
        try:
            return parse()
        except Invalid as invalid:
            full = (*keys, *invalid.keys)
            label = ".".join(str(k) for k in keys)
            self.error(DiagnosticCode.INVALID_VALUE, full, f"{label} {invalid.message}")
            return INVALID

    # -- fields ---------------------------------------------------------------

    def field_name(self, key: str, value: Any) -> None:
        self.tried.add("name")
        name = self.check([key], lambda: as_text(value, allow_empty=False).strip())
        if name is INVALID:
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
        text = self.check([key], lambda: as_text(value, allow_empty=False).strip())
        if text is not INVALID:
            self.set("description", text, [key])
            self.applied([key], f"when to use ({len(text)} characters)")

    def field_text(self, key: str, value: Any, target: str, what: str) -> None:
        text = self.check([key], lambda: as_text(value))
        if text is not INVALID:
            self.set(target, text, [key])
            self.applied([key], what)

    def ignore(self, key: str, value: Any, why: str) -> None:
        """Drop a field whose value Claude Code drops, keeping the agent (a warning)."""
        self.warn(
            DiagnosticCode.IGNORED,
            [key],
            f"ignored: {key} {why}, not {value!r}; Claude Code drops this value and still "
            "loads the agent, and so does subagents",
        )

    def coerced(self, key: str, value: Any, result: Any) -> None:
        """Say that a quoted value was read as the number or flag it spells."""
        self.warn(
            DiagnosticCode.INVALID_VALUE,
            [key],
            f"{key} is the text {value!r}; it is read as {result!r}, as Claude Code reads "
            "it. Remove the quotes",
        )

    def field_background(self, key: str, value: Any) -> None:
        """``background``: a flag; ``"true"``/``"false"`` as text are read as the flag."""
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            flag = value.strip().lower() == "true"
            self.coerced(key, value, flag)
        elif isinstance(value, bool):
            flag = value
        else:
            self.ignore(key, value, "must be true or false")
            return
        self.set("background", flag, [key])
        self.applied([key], f"always in background = {str(flag).lower()}")

    def field_bool(self, key: str, value: Any, target: str, what: str) -> None:
        flag = self.check([key], lambda: as_boolean(value))
        if flag is not INVALID:
            self.set(target, flag, [key])
            self.applied([key], f"{what} = {str(flag).lower()}")

    def _tool_names(self, key: str, value: Any) -> tuple[str, ...] | None:
        names = self.check([key], lambda: as_names(value))
        if names is INVALID:
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
            elif not kind.implemented:
                self.note(
                    DiagnosticCode.NOT_IMPLEMENTED_TOOL,
                    keys,
                    f"{name!r} is a Claude Code tool that subagents does not implement: kept "
                    f"in {key}, but no agent here has it"
                    + (f" ({why})" if (why := NOT_IMPLEMENTED_REASONS.get(name)) else ""),
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
            # ``tools:`` with nothing after it: Claude Code gives such an agent no
            # tools; reading it as "inherit everything" would widen its permissions.
            self.warn(
                DiagnosticCode.EMPTY,
                [key],
                f"{key} is given with no value: this agent gets no tools at all, as in "
                "Claude Code; remove the field to inherit every tool",
            )
            self.set("tools", (), [key])
            self.applied([key], "allowed tools: none")
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

    def set_model(self, keys: list[str | int], value: Any) -> None:
        """Read a model name at ``keys`` (``model``, or ``modelConfig.model``)."""
        model = self.check(keys, lambda: as_text(value, allow_empty=False).strip())
        if model is INVALID:
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
        self.set_model([key], value)

    def field_permission_mode(self, key: str, value: Any) -> None:
        choices = {mode.value: mode for mode in PermissionMode}
        if not (isinstance(value, str) and value in choices):
            self.ignore(key, value, f"must be one of {', '.join(choices)}")
            return
        mode = choices[value]
        self.set("permission_mode", mode, [key])
        self.applied([key], f"permission mode {mode.value}")

    def field_approval_mode(self, key: str, value: Any) -> None:
        mode = self.check([key], lambda: as_choice(value, _APPROVAL_VALUES))
        if mode is not INVALID:
            self.set("approval_mode", mode, [key])
            if value == _IN_SANDBOX:
                self.warn(
                    DiagnosticCode.IGNORED,
                    [key],
                    f"{_IN_SANDBOX}: subagents runs no OS sandbox, so calls that need "
                    "approval are asked for (route_to_parent); write auto_approve to "
                    "approve them without asking",
                )
            else:
                self.applied([key], f"approval mode {mode.value}")

    def set_max_turns(self, keys: list[str | int], value: Any) -> None:
        """Read a turn limit at ``keys`` (``maxTurns``, or ``runConfig.maxTurns``)."""
        turns = self.check(keys, lambda: as_integer(value, 1, MAX_TURNS_LIMIT))
        if turns is not INVALID:
            self.set("max_turns", turns, keys)
            self.applied(keys, f"at most {turns} turns")

    def field_max_turns(self, key: str, value: Any) -> None:
        """``maxTurns``: a whole number from 1; a number written as text is read as
        that number, and any other value is dropped (the agent has no turn limit)."""
        turns = value
        if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
            turns = int(value.strip())
            self.coerced(key, value, turns)
        if isinstance(turns, bool) or not isinstance(turns, int):
            self.ignore(key, value, "must be a whole number")
            return
        if not 1 <= turns <= MAX_TURNS_LIMIT:
            self.ignore(key, value, f"must be between 1 and {MAX_TURNS_LIMIT}")
            return
        self.set_max_turns([key], turns)

    def field_skills(self, key: str, value: Any) -> None:
        names = self.check([key], lambda: as_names(value) if value is not None else ())
        if names is not INVALID:
            self.set("skills", names, [key])
            self.applied([key], f"skills: {', '.join(names) if names else 'none'}")

    def field_disabled_features(self, key: str, value: Any) -> None:
        names = self.check([key], lambda: as_names(value) if value is not None else ())
        if names is not INVALID:
            self.set("disabled_features", names, [key])
            self.applied([key], f"disabled features: {', '.join(names) if names else 'none'}")

    def field_memory(self, key: str, value: Any) -> None:
        choices = {scope.value: scope for scope in MemoryScope}
        if not (isinstance(value, str) and value in choices):
            self.ignore(key, value, f"must be one of {', '.join(choices)}")
            return
        scope = choices[value]
        self.set("memory", scope, [key])
        self.applied([key], f"{scope.value} memory (first 200 lines of MEMORY.md)")

    def field_color(self, key: str, value: Any) -> None:
        color = self.check([key], lambda: as_text(value, allow_empty=False).strip())
        if color is not INVALID:
            self.set("color", color, [key])
            self.applied([key], f"color {color}")
