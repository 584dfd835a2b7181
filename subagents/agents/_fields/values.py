"""Check one field value: text, a flag, a number, a list of names, a mapping, a choice.

The field handlers of an agent definition parse every value with these
checks. A value that cannot be used raises :class:`Invalid`, which the
interpreter turns into an error diagnostic on the field (and, for an item of
a list, on that item); it never leaves this package.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from subagents.agents._definition import InputType
from subagents.agents._exceptions import AgentsError
from subagents.agents._lines import KeyPath
from subagents.agents._tools import split_tool_list

__all__ = [
    "INVALID",
    "MAX_SECONDS_LIMIT",
    "MAX_TEXT_CHARS",
    "MAX_TURNS_LIMIT",
    "Invalid",
    "as_boolean",
    "as_choice",
    "as_integer",
    "as_mapping",
    "as_names",
    "as_number",
    "as_text",
    "describe",
    "json_type_ok",
    "schema_problem",
]

#: The highest ``maxTurns`` (and ``runConfig.maxTurns``) accepted.
MAX_TURNS_LIMIT = 1_000_000
#: The longest ``runConfig`` time limit or grace period accepted, in seconds.
MAX_SECONDS_LIMIT = 7 * 24 * 3600.0
#: The longest text value accepted, in characters.
MAX_TEXT_CHARS = 1_000_000

_E = TypeVar("_E")


class Invalid(AgentsError):
    """Internal: a value cannot be used (the interpreter catches it: it becomes a diagnostic)."""

    def __init__(self, message: str, keys: KeyPath = ()) -> None:
        super().__init__(message)
        self.message = message
        self.keys = keys


def describe(value: Any) -> str:
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


def as_text(value: Any, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise Invalid(f"must be text, not {describe(value)}; put the value in quotes")
    if len(value) > MAX_TEXT_CHARS:
        raise Invalid(f"is longer than {MAX_TEXT_CHARS} characters; shorten it")
    if not allow_empty and not value.strip():
        raise Invalid("is empty; give it a value or remove the field")
    return value


def as_boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"must be true or false, not {describe(value)}")
    return value


def as_integer(value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"must be a whole number, not {describe(value)}")
    if not low <= value <= high:
        raise Invalid(f"must be between {low} and {high}, not {value}")
    return value


def as_number(value: Any, low: float, high: float, *, low_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(f"must be a number, not {describe(value)}")
    number = float(value)
    if not math.isfinite(number) or number < low or number > high or (low_open and number == low):
        bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
        raise Invalid(f"must be {bound} and at most {high:g}, not {value}")
    return number


def as_names(value: Any) -> tuple[str, ...]:
    """A list of names, or Claude Code's comma-separated string."""
    if isinstance(value, str):
        return split_tool_list(value)
    if isinstance(value, list):
        names: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise Invalid(
                    f"item {index + 1} must be a non-empty name, not {describe(item)}",
                    (index,),
                )
            names.append(item.strip())
        return tuple(names)
    raise Invalid(f"must be a list of names or a comma-separated string, not {describe(value)}")


def as_mapping(value: Any) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise Invalid(f"must be a mapping of fields, not {describe(value)}")
    return value


def as_choice(value: Any, choices: Mapping[str, _E]) -> _E:
    if isinstance(value, str) and value in choices:
        return choices[value]
    allowed = ", ".join(choices)
    raise Invalid(f"must be one of {allowed}, not {value!r}")


def json_type_ok(value: Any, kind: InputType) -> bool:
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


def schema_problem(schema: Mapping[Any, Any]) -> str | None:
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


#: What :meth:`Interpreter.check` returns for a value that raised :class:`Invalid`.
INVALID: Any = object()
