"""The ``hooks`` field: command hooks an agent's own definition adds, by event.

Claude Code's shape is read: a mapping from event to a list of ``{matcher,
hooks}`` groups, each hook a ``{type: command, command, timeout}``. A
subagent's ``Stop`` hook is its ``SubagentStop``; events subagents does not
fire for an agent, and hook types other than ``command``, are reported and not
used.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from subagents.agents._definition import HookSpec
from subagents.agents._diagnostics import DiagnosticCode
from subagents.agents._fields.interpreter import Interpreter
from subagents.agents._fields.values import INVALID, as_mapping, as_number, describe

__all__ = ["field_hooks"]

_HOOK_EVENTS = ("PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop")


def field_hooks(it: Interpreter, key: str, value: Any) -> None:
    if value is None:
        it.applied([key], "no hooks")
        return
    events = it.check([key], lambda: as_mapping(value))
    if events is INVALID:
        return
    hooks: list[HookSpec] = []
    for event, groups in events.items():
        keys: list[str | int] = [key, str(event)]
        name = "SubagentStop" if event == "Stop" else event
        if event == "Stop":
            it.note(
                DiagnosticCode.APPLIED,
                keys,
                "a Stop hook of a subagent runs when the subagent stops (SubagentStop)",
            )
        if name not in _HOOK_EVENTS:
            it.warn(
                DiagnosticCode.IGNORED,
                keys,
                f"hook event {event!r} is not one subagents fires for an agent "
                f"({', '.join((*_HOOK_EVENTS, 'Stop'))}); these hooks are not used",
            )
            continue
        if not isinstance(groups, list):
            it.error(
                DiagnosticCode.INVALID_VALUE,
                keys,
                f"{key}.{event} must be a list of {{matcher, hooks}} entries, "
                f"not {describe(groups)}",
            )
            continue
        for g_index, group in enumerate(groups):
            hooks.extend(_hook_group(it, [*keys, g_index], str(name), group))
    it.set("hooks", tuple(hooks), [key])
    it.applied([key], f"{len(hooks)} command hook(s)")


def _hook_group(it: Interpreter, keys: list[str | int], event: str, group: Any) -> list[HookSpec]:
    label = ".".join(str(k) for k in keys)
    if not isinstance(group, Mapping):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            keys,
            f"{label} must be a mapping with 'matcher' and 'hooks', not {describe(group)}",
        )
        return []
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        it.error(DiagnosticCode.INVALID_VALUE, [*keys, "matcher"], f"{label}.matcher must be text")
        return []
    for extra in group:
        if extra not in ("matcher", "hooks"):
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [*keys, str(extra)],
                f"{label}.{extra} is not a hook field (matcher, hooks); it is not used",
            )
    entries = group.get("hooks")
    if not isinstance(entries, list):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [*keys, "hooks"],
            f"{label}.hooks must be a list of {{type: command, command: ...}}, "
            f"not {describe(entries)}",
        )
        return []
    specs: list[HookSpec] = []
    for h_index, entry in enumerate(entries):
        h_keys = [*keys, "hooks", h_index]
        h_label = ".".join(str(k) for k in h_keys)
        if not isinstance(entry, Mapping):
            it.error(DiagnosticCode.INVALID_VALUE, h_keys, f"{h_label} must be a mapping")
            continue
        kind = entry.get("type", "command")
        if kind != "command":
            it.warn(
                DiagnosticCode.IGNORED,
                [*h_keys, "type"],
                f"{h_label}: hook type {kind!r} is not supported (only 'command'); "
                "this hook is not used",
            )
            continue
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            it.error(
                DiagnosticCode.INVALID_VALUE,
                [*h_keys, "command"],
                f"{h_label}.command must be a non-empty shell command",
            )
            continue
        timeout = entry.get("timeout")
        if timeout is not None:
            timeout = it.check(
                [*h_keys, "timeout"],
                functools.partial(as_number, timeout, 0.0, 3600.0, low_open=True),
            )
            if timeout is INVALID:
                continue
        for extra in entry:
            if extra not in ("type", "command", "timeout"):
                it.warn(
                    DiagnosticCode.UNKNOWN_FIELD,
                    [*h_keys, str(extra)],
                    f"{h_label}.{extra} is not a hook field (type, command, timeout)",
                )
        specs.append(HookSpec(event, command, matcher or None, timeout))
    return specs
