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
from typing import Final, Literal, final

import attrs

from subagents.agents import AgentDefinition, ModelAliases, PermissionMode
from subagents.runtime._config.defaults import DEFAULT_MODEL, MODEL_ENV

__all__ = ["ModelChoice", "ModelChoices", "ModelSource", "resolve_model"]

#: Choices a :class:`ModelChoices` keeps (emptied when full).
_MAX_CHOICES: Final = 256

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


@final
class ModelChoices:
    """:func:`resolve_model`'s answers for one runtime, kept by everything they depend on.

    Every spawn asks, most with the same question (about 25 calls each time). The
    key holds ``$SUBAGENTS_MODEL`` as it is now, so setting it still changes the next
    spawn's model; a new alias table (the agents reloaded) empties the cache.
    """

    __slots__ = ("_aliases", "_choices", "_env")

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._aliases: ModelAliases | None = None
        self._choices: dict[tuple[str | None, ...], ModelChoice] = {}

    def choose(
        self,
        *,
        spawn: str | None,
        definition: str | None,
        parent: str | None,
        aliases: ModelAliases,
        default: str,
    ) -> ModelChoice:
        """What ``resolve_model`` answers for these (``definition``: the model it names)."""
        if aliases is not self._aliases:
            self._aliases = aliases
            self._choices.clear()
        key = (self._env.get(MODEL_ENV), spawn, definition, parent, default)
        choice = self._choices.get(key)
        if choice is None:
            choice = resolve_model(
                spawn=spawn,
                definition=definition,
                parent=parent,
                env=self._env,
                aliases=aliases,
                default=default,
            )
            if len(self._choices) >= _MAX_CHOICES:
                self._choices.clear()
            self._choices[key] = choice
        return choice
