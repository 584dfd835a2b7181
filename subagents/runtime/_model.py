"""Which model an agent runs on.

Highest first: the ``SUBAGENTS_MODEL`` environment variable, the spawn call's
``model``, the definition's ``model``, the parent's model (``inherit``), and
last the runtime default. ``inherit`` or an empty value at any level passes
the choice down. Aliases (``haiku``, ``sonnet``...) become full ids through the
alias table; a name the table does not know is used as written, and the
choice carries a diagnostic saying so. ``opusplan`` is Claude Code's: opus for an
agent in plan mode (``permissionMode: plan``), sonnet otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import attrs

from subagents.agents import AgentDefinition, ModelAliases, PermissionMode
from subagents.runtime._config.defaults import DEFAULT_MODEL, MODEL_ENV

__all__ = ["ModelChoice", "ModelSource", "resolve_model"]

ModelSource = Literal["env", "spawn", "definition", "parent", "default"]


@attrs.frozen
class ModelChoice:
    """The resolved model id, where the choice came from, and what was written there."""

    model: str
    source: ModelSource
    requested: str
    #: Set when ``requested`` is neither an alias nor a recognised model id.
    diagnostic: str | None = None


def resolve_model(
    *,
    spawn: str | None = None,
    definition: AgentDefinition | str | None = None,
    parent: str | None = None,
    env: Mapping[str, str] | None = None,
    aliases: ModelAliases | None = None,
    default: str = DEFAULT_MODEL,
    plan_mode: bool | None = None,
) -> ModelChoice:
    """Resolve an agent's model along the chain env > spawn > definition > parent > default.

    ``definition`` is the definition (its ``model`` is read) or the model it
    names. ``env`` defaults to ``os.environ``. ``plan_mode`` (by default: whether
    the definition's ``permissionMode`` is ``plan``) picks ``opusplan``'s plan model.
    """
    if plan_mode is None:
        plan_mode = (
            isinstance(definition, AgentDefinition)
            and definition.permission_mode is PermissionMode.PLAN
        )
    env = os.environ if env is None else env
    table = ModelAliases() if aliases is None else aliases
    wanted = definition.model if isinstance(definition, AgentDefinition) else definition
    chain: tuple[tuple[ModelSource, str | None], ...] = (
        ("env", env.get(MODEL_ENV)),
        ("spawn", spawn),
        ("definition", wanted),
        ("parent", parent),
        ("default", default),
    )
    for source, value in chain:
        if value is None:
            continue
        name = value.strip()
        if not name:
            continue
        check = table.check(name)
        if check.kind == "inherit":
            continue
        model = (check.plan_model_id if plan_mode else None) or check.model_id or name
        diagnostic = None
        if check.kind == "unknown":
            where = f"${MODEL_ENV}" if source == "env" else f"the {source} model"
            diagnostic = (
                f"{where} {name!r} is neither a known alias ({', '.join(sorted(table.table))}) "
                "nor a full model id; it is passed to the provider as written."
            )
        return ModelChoice(model=model, source=source, requested=name, diagnostic=diagnostic)
    # Only reachable when ``default`` itself is blank or ``inherit``.
    return ModelChoice(model=default, source="default", requested=default)
