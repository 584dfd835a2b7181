"""The nested ``*Config`` fields of a definition: model, run, prompt, input and output.

``modelConfig``, ``runConfig``, ``promptConfig``, ``inputConfig`` and
``outputConfig`` are each a mapping of sub-fields read one by one, so that a
mistyped sub-field is reported on its own line; ``inputConfig`` declares the
typed inputs a task may give, and ``outputConfig`` the structured output with
its JSON Schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from subagents.agents._definition import InputSpec, InputType, ModelSettings, OutputSpec
from subagents.agents._diagnostics import DiagnosticCode
from subagents.agents._fields.interpreter import Interpreter
from subagents.agents._fields.values import (
    INVALID,
    MAX_SECONDS_LIMIT,
    as_boolean,
    as_choice,
    as_integer,
    as_mapping,
    as_number,
    as_text,
    json_type_ok,
    schema_problem,
)

__all__ = [
    "field_input_config",
    "field_model_config",
    "field_output_config",
    "field_prompt_config",
    "field_run_config",
]

_RESERVED_INPUTS = ("cwd", "agent_type", "prompt")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _sub_fields(
    it: Interpreter,
    key: str,
    value: Any,
    handlers: Mapping[str, Callable[[list[str | int], Any], None]],
) -> bool:
    """Read the mapping at ``key`` sub-field by sub-field; ``False`` if it is not a mapping."""
    config = it.check([key], lambda: as_mapping(value))
    if config is INVALID:
        return False
    for sub, sub_value in config.items():
        keys: list[str | int] = [key, str(sub)]
        handler = handlers.get(str(sub))
        if handler is None:
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                keys,
                f"{key}.{sub} is not a field of {key} ({', '.join(handlers)}); it is not used",
            )
            continue
        handler(keys, sub_value)
    return True


def field_model_config(it: Interpreter, key: str, value: Any) -> None:
    settings: dict[str, Any] = {}

    def number(target: str, low: float, high: float) -> Callable[[list[str | int], Any], None]:
        def handle(keys: list[str | int], raw: Any) -> None:
            parsed = it.check(keys, lambda: as_number(raw, low, high))
            if parsed is not INVALID:
                settings[target] = parsed
                it.applied(keys, f"{keys[-1]} {parsed:g}")

        return handle

    def thinking(keys: list[str | int], raw: Any) -> None:
        parsed = it.check(keys, lambda: as_integer(raw, -1, 10_000_000))
        if parsed is not INVALID:
            settings["thinking_budget"] = parsed
            it.applied(keys, f"thinking budget {parsed}")

    handlers = {
        "model": it.set_model,
        "temperature": number("temperature", 0.0, 2.0),
        "topP": number("top_p", 0.0, 1.0),
        "thinkingBudget": thinking,
    }
    if _sub_fields(it, key, value, handlers):
        it.values["model_settings"] = ModelSettings(**settings)


def field_run_config(it: Interpreter, key: str, value: Any) -> None:
    limits: dict[str, Any] = {}

    def seconds(target: str, low_open: bool) -> Callable[[list[str | int], Any], None]:
        def handle(keys: list[str | int], raw: Any) -> None:
            parsed = it.check(
                keys, lambda: as_number(raw, 0.0, MAX_SECONDS_LIMIT, low_open=low_open)
            )
            if parsed is not INVALID:
                limits[target] = parsed
                it.applied(keys, f"{keys[-1]} {parsed:g} s")

        return handle

    handlers = {
        "maxTurns": it.set_max_turns,
        "maxTimeSeconds": seconds("max_time_seconds", True),
        "gracePeriodSeconds": seconds("grace_period_seconds", False),
    }
    if _sub_fields(it, key, value, handlers):
        it.values["run_limits"] = limits


def field_prompt_config(it: Interpreter, key: str, value: Any) -> None:
    def system(keys: list[str | int], raw: Any) -> None:
        text = it.check(keys, lambda: as_text(raw))
        if text is not INVALID:
            it.values.setdefault("_prompts", []).append((keys, text))

    def query(keys: list[str | int], raw: Any) -> None:
        text = it.check(keys, lambda: as_text(raw))
        if text is not INVALID:
            it.set("query", text.strip(), keys)
            it.applied(keys, "first user message template")

    def initial_messages(keys: list[str | int], raw: Any) -> None:
        it.warn(
            DiagnosticCode.IGNORED,
            keys,
            "promptConfig.initialMessages (few-shot messages) is not supported; "
            "put examples in the system prompt",
        )

    _sub_fields(
        it,
        key,
        value,
        {"systemPrompt": system, "query": query, "initialMessages": initial_messages},
    )


def field_input_config(it: Interpreter, key: str, value: Any) -> None:
    config = it.check([key], lambda: as_mapping(value))
    if config is INVALID:
        return
    for extra in config:
        if extra != "inputs":
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [key, str(extra)],
                f"{key}.{extra} is not a field of {key} (inputs); it is not used",
            )
    raw_inputs = config.get("inputs", {})
    inputs = it.check(
        [key, "inputs"], lambda: as_mapping(raw_inputs if raw_inputs is not None else {})
    )
    if inputs is INVALID:
        return
    specs: list[InputSpec] = []
    for name, spec in inputs.items():
        parsed = _input(it, [key, "inputs", str(name)], str(name), spec)
        if parsed is not None:
            specs.append(parsed)
    it.set("inputs", tuple(specs), [key])
    it.applied([key], f"inputs: {', '.join(s.name for s in specs) or 'none'}")


def _input(it: Interpreter, keys: list[str | int], name: str, spec: Any) -> InputSpec | None:
    label = ".".join(str(k) for k in keys)
    if not _IDENTIFIER.match(name):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            keys,
            f"input name {name!r} must be an identifier (letters, digits, _) to be "
            "usable as ${name} in templates",
        )
        return None
    if name in _RESERVED_INPUTS:
        it.error(
            DiagnosticCode.INVALID_VALUE,
            keys,
            f"input name {name!r} is reserved for the template variable ${{{name}}}; rename it",
        )
        return None
    if not isinstance(spec, Mapping):
        it.error(DiagnosticCode.INVALID_VALUE, keys, f"{label} must be a mapping")
        return None
    known = ("type", "description", "required", "default", "enum")
    for extra in spec:
        if extra not in known:
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [*keys, str(extra)],
                f"{label}.{extra} is not an input field ({', '.join(known)})",
            )
    choices_by_value = {t.value: t for t in InputType}
    kind = it.check(
        [*keys, "type"], lambda: as_choice(spec.get("type", "string"), choices_by_value)
    )
    description = it.check([*keys, "description"], lambda: as_text(spec.get("description", "")))
    required = it.check([*keys, "required"], lambda: as_boolean(spec.get("required", False)))
    if INVALID in (kind, description, required):
        return None
    default = spec.get("default")
    if default is not None and not json_type_ok(default, kind):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [*keys, "default"],
            f"{label}.default {default!r} is not a {kind.value}",
        )
        return None
    choices = spec.get("enum", [])
    if not isinstance(choices, list) or not all(json_type_ok(c, kind) for c in choices):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [*keys, "enum"],
            f"{label}.enum must be a list of {kind.value} values",
        )
        return None
    if default is not None and choices and default not in choices:
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [*keys, "default"],
            f"{label}.default {default!r} is not one of its enum values",
        )
        return None
    return InputSpec(name, kind, description.strip(), required, default, tuple(choices))


def field_output_config(it: Interpreter, key: str, value: Any) -> None:
    config = it.check([key], lambda: as_mapping(value))
    if config is INVALID:
        return
    known = ("outputName", "description", "schema")
    for extra in config:
        if extra not in known:
            it.warn(
                DiagnosticCode.UNKNOWN_FIELD,
                [key, str(extra)],
                f"{key}.{extra} is not a field of {key} ({', '.join(known)})",
            )
    name = it.check(
        [key, "outputName"], lambda: as_text(config.get("outputName"), allow_empty=False).strip()
    )
    description = it.check([key, "description"], lambda: as_text(config.get("description", "")))
    schema = it.check([key, "schema"], lambda: as_mapping(config.get("schema")))
    if INVALID in (name, description, schema):
        return
    if not _IDENTIFIER.match(name):
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [key, "outputName"],
            f"{key}.outputName {name!r} must be an identifier (letters, digits, _)",
        )
        return
    problem = schema_problem(schema)
    if problem is not None:
        it.error(
            DiagnosticCode.INVALID_VALUE,
            [key, "schema"],
            f"{key}.schema is not a valid JSON Schema: {problem}",
        )
        return
    it.set("output", OutputSpec(name, description.strip(), schema), [key])
    it.applied([key], f"structured output {name!r} validated by its JSON Schema")
