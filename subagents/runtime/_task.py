"""Starting an agent: typed inputs checked, prompts rendered, first messages built.

:func:`check_inputs` is called when an agent is spawned, so a wrong input
fails the spawn with a message that names every problem, before any model is
called. :func:`prepare_task` renders the system prompt and the task (the
definition's ``query`` template, or the prompt itself) with the inputs, and
builds the first messages: the parent's forked context when the definition
forks, then the task, preceded by the definition's critical reminder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import jsonschema
import jsonschema.validators

from subagents.agents import AgentDefinition, build_system_prompt, render_query
from subagents.runtime._exceptions import InvalidInputs
from subagents.runtime._fork import fork_context
from subagents.runtime._messages import Conversation, Message, Origin

__all__ = ["PreparedTask", "check_inputs", "prepare_task"]


#: Input validators kept, by definition; emptied when full.
_CACHE_SIZE: Final = 256
_validators: dict[int, tuple[AgentDefinition, Any]] = {}


def _validator(definition: AgentDefinition) -> Any:
    """The validator of ``definition``'s inputs, built once per definition (about 0.1 ms)."""
    known = _validators.get(id(definition))
    if known is not None and known[0] is definition:
        return known[1]
    schema = definition.input_schema()
    schema["additionalProperties"] = False
    validator = jsonschema.validators.validator_for(schema)(schema)
    if len(_validators) >= _CACHE_SIZE:
        _validators.clear()
    _validators[id(definition)] = (definition, validator)
    return validator


def check_inputs(definition: AgentDefinition, inputs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``inputs`` against the definition's input schema; return them with defaults.

    Unknown names, missing required inputs, wrong types and values outside
    ``choices`` all raise :class:`InvalidInputs`, listing every problem.
    """
    given = dict(inputs or {})
    if not given and not definition.inputs:
        # No inputConfig and nothing given: {} against {"properties": {}, "required": []}
        # always passes, and there are no defaults. Most spawns are this one.
        return {}
    validator = _validator(definition)
    problems = sorted(
        validator.iter_errors(given), key=lambda e: (list(map(str, e.path)), e.message)
    )
    if problems:
        known = ", ".join(spec.name for spec in definition.inputs) or "none"
        lines = "\n".join(
            f"- {'.'.join(map(str, e.path)) or 'inputs'}: {e.message}" for e in problems
        )
        raise InvalidInputs(
            f"Agent {definition.name!r} was given inputs that do not match its inputConfig:\n"
            f"{lines}\nIts inputs are: {known}."
        )
    values = {spec.name: spec.default for spec in definition.inputs if spec.default is not None}
    values.update(given)
    return values


@attrs.frozen
class PreparedTask:
    """What a new agent starts from: its system prompt, first messages and input values."""

    system_prompt: str
    conversation: Conversation = attrs.field(eq=False)
    inputs: Mapping[str, Any]


def prepare_task(
    definition: AgentDefinition,
    prompt: str,
    *,
    inputs: Mapping[str, Any] | None = None,
    cwd: Path | str = ".",
    parent_messages: Sequence[Message] | None = None,
    home: Path | None = None,
    project_root: Path | None = None,
) -> PreparedTask:
    """Check the inputs, render the prompts, and build the agent's first messages.

    ``parent_messages`` is the parent's conversation; it is used only when the
    definition forks (``fork_context``). Inputs that neither template
    mentions are listed after the task, so the model sees every value given.
    """
    values = check_inputs(definition, inputs)
    system_prompt = build_system_prompt(
        definition, cwd=cwd, prompt=prompt, inputs=values, home=home, project_root=project_root
    )
    task = render_query(definition, cwd=cwd, prompt=prompt, inputs=values)
    if not task.strip():
        raise InvalidInputs(
            f"Agent {definition.name!r} was given no task: pass a non-empty prompt."
        )
    templates = definition.system_prompt + (definition.query or "")
    unmentioned = {k: v for k, v in (inputs or {}).items() if f"${{{k}}}" not in templates}
    if unmentioned:
        listed = "\n".join(f"- {name}: {value}" for name, value in unmentioned.items())
        task = f"{task}\n\nInputs:\n{listed}"
    conversation = Conversation()
    if definition.fork_context and parent_messages is not None:
        conversation.extend(fork_context(parent_messages))
    reminder = definition.critical_reminder or ""
    conversation.append(Message.user(reminder, task, origin=Origin.TASK))
    return PreparedTask(system_prompt=system_prompt, conversation=conversation, inputs=values)
