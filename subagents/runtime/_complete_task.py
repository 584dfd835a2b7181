"""The ``complete_task`` tool: how an agent finishes with a (structured) result.

Its parameters are generated from the definition's output spec: one required
property, named after the output, whose schema is the output schema. Without
an output spec it takes one required ``result`` string (the agent's report).
Arguments are validated with ``jsonschema``; a failure goes back to the model
as a tool error that lists every problem and where it is, so the model can fix
its call on the next turn. One :class:`CompleteTask` is built per output spec
and cached: nothing is regenerated per turn.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final, final

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.validators

from subagents.agents import OutputSpec
from subagents.runtime._exceptions import InvalidOutputSchema

__all__ = ["COMPLETE_TASK", "CompleteTask", "Completion", "complete_task_tool"]

#: The tool a model calls to finish with a (structured) result.
COMPLETE_TASK: Final = "complete_task"

_RESULT: Final = "result"
_MAX_PROBLEMS: Final = 8
_DEFS_KEYS: Final = ("$defs", "definitions")


@attrs.frozen
class Completion:
    """A valid ``complete_task`` call: the structured output, or the result text."""

    output: Any
    text: str | None


@final
class CompleteTask:
    """The ``complete_task`` tool for one output spec (or none): its spec and its validator."""

    __slots__ = ("_validator", "output", "schema", "spec")

    def __init__(self, output: OutputSpec | None) -> None:
        self.output = output
        self.schema = _parameters(output)
        validator_class = jsonschema.validators.validator_for(self.schema)
        try:
            validator_class.check_schema(self.schema)
        except jsonschema.exceptions.SchemaError as exc:
            name = output.name if output is not None else _RESULT
            raise InvalidOutputSchema(
                f"The output schema of {name!r} is not a valid JSON Schema: {exc.message} "
                f"(at {_where(exc.absolute_path)}). Fix the definition's outputConfig.schema."
            ) from None
        self._validator = validator_class(self.schema)
        self.spec: dict[str, Any] = {
            "name": COMPLETE_TASK,
            "description": _description(output),
            "input_schema": self.schema,
        }

    def check(self, arguments: Mapping[str, Any]) -> Completion | str:
        """The completion the call makes, or the tool error text that tells the model why not."""
        if self.output is None and len(arguments) == 1 and type(arguments.get(_RESULT)) is str:
            # The one shape the schema without an output spec accepts (a single ``result``
            # string), known without the validator: every agent ends with this call.
            return Completion(output=None, text=arguments[_RESULT])
        problems = sorted(
            self._validator.iter_errors(dict(arguments)),
            key=lambda e: (list(map(str, e.absolute_path)), e.message),
        )
        if problems:
            lines = [f"- at {_where(e.absolute_path)}: {e.message}" for e in problems]
            if len(lines) > _MAX_PROBLEMS:
                lines = [*lines[:_MAX_PROBLEMS], f"- ... and {len(lines) - _MAX_PROBLEMS} more"]
            return (
                f"{COMPLETE_TASK} was not accepted: its arguments do not match the required "
                "schema.\n" + "\n".join(lines) + f"\nFix these problems and call {COMPLETE_TASK} "
                "again with the complete output."
            )
        if self.output is None:
            return Completion(output=None, text=str(arguments[_RESULT]))
        return Completion(output=arguments[self.output.name], text=None)


def _parameters(output: OutputSpec | None) -> dict[str, Any]:
    if output is None:
        return {
            "type": "object",
            "properties": {
                _RESULT: {
                    "type": "string",
                    "description": "Your final report: everything the caller needs, "
                    "since it sees nothing else of your work.",
                }
            },
            "required": [_RESULT],
            "additionalProperties": False,
        }
    schema = output.as_json_schema()
    hoisted: dict[str, Any] = {key: schema.pop(key) for key in _DEFS_KEYS if key in schema}
    if output.description and "description" not in schema:
        schema["description"] = output.description
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {output.name: schema},
        "required": [output.name],
        "additionalProperties": False,
    }
    if "$schema" in schema:
        parameters["$schema"] = schema.pop("$schema")
    parameters.update(hoisted)
    return parameters


def _description(output: OutputSpec | None) -> str:
    if output is None:
        return (
            "Call this tool to finish: submit your final report as `result`. "
            "Call it once, when the task is done; nothing you write after it is read."
        )
    described = f" ({output.description})" if output.description else ""
    return (
        f"Call this tool to finish: submit your final answer as `{output.name}`{described}. "
        "It must match the schema exactly; if it does not, you get the problems back "
        "and must call this tool again."
    )


def _where(path: Any) -> str:
    parts = ["$"]
    for item in path:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "".join(parts)


@functools.lru_cache(maxsize=256)
def complete_task_tool(output: OutputSpec | None) -> CompleteTask:
    """The (cached) ``complete_task`` tool for ``output``."""
    return CompleteTask(output)
