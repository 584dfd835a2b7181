"""Model names: the one alias table, overridable by configuration.

Definitions say ``sonnet``, ``haiku``, ``opus``, ``inherit`` or a full model
id. :class:`ModelAliases` turns an alias into a full id; a name it does not know
is passed through unchanged (and the loader reports it), because a provider
may well accept ids this table has never heard of.

Two of Claude Code's spellings are resolved as Claude Code documents them
(https://docs.claude.com/en/docs/claude-code/model-config, "Model aliases" and
"Extended context with [1m]"):

- ``opusplan`` is ``opus`` in plan mode and ``sonnet`` otherwise: its
  :attr:`ModelCheck.model_id` is the ``sonnet`` entry of the table and its
  :attr:`ModelCheck.plan_model_id` the ``opus`` one (both follow overrides);
- a ``[1m]`` suffix (``sonnet[1m]``, ``claude-sonnet-4-5-20250929[1m]``) asks for
  the 1-million-token context window of the same model: the name before it is
  resolved as usual and :attr:`ModelCheck.context_1m` is set. The model id sent
  to a provider is the bare id, which every API accepts.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping

import attrs

__all__ = [
    "CONTEXT_1M_SUFFIX",
    "DEFAULT_MODEL_ALIASES",
    "INHERIT",
    "OPUSPLAN",
    "ModelAliases",
    "ModelCheck",
]

#: The model value that means "use the parent's model".
INHERIT = "inherit"
#: Claude Code's alias for opus in plan mode and sonnet otherwise.
OPUSPLAN = "opusplan"
#: The suffix asking for the 1-million-token context window of a model.
CONTEXT_1M_SUFFIX = "[1m]"

#: Alias -> full model id. Keys are lower case; lookups ignore case.
DEFAULT_MODEL_ALIASES: Mapping[str, str] = types.MappingProxyType(
    {
        # The floating aliases follow Claude Code's first-party ones: the newest
        # model of each family.
        "haiku": "claude-haiku-5-5",
        "sonnet": "claude-sonnet-5-5",
        "opus": "claude-opus-5-5",
        "haiku-5.5": "claude-haiku-5-5",
        "sonnet-5.5": "claude-sonnet-5-5",
        "opus-5.5": "claude-opus-5-5",
        "sonnet-5": "claude-sonnet-5",
        "opus-5": "claude-opus-5",
        "opus-4.8": "claude-opus-4-8",
        "opus-4.7": "claude-opus-4-7",
        "opus-4.6": "claude-opus-4-6",
        "sonnet-4.6": "claude-sonnet-4-6",
        "haiku-4.5": "claude-haiku-4-5-20251001",
        "sonnet-4.5": "claude-sonnet-4-5-20250929",
        "opus-4.5": "claude-opus-4-5-20251101",
        "opus-4.1": "claude-opus-4-1-20250805",
        "sonnet-4": "claude-sonnet-4-20250514",
        "opus-4": "claude-opus-4-20250514",
        "claude-haiku-4-5": "claude-haiku-4-5-20251001",
        "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
        "claude-opus-4-5": "claude-opus-4-5-20251101",
        "claude-opus-4-1": "claude-opus-4-1-20250805",
        "claude-sonnet-4-0": "claude-sonnet-4-20250514",
        "claude-opus-4-0": "claude-opus-4-20250514",
    }
)

# What a full Anthropic model id looks like (``claude-sonnet-4-5-20250929``,
# ``claude-3-5-haiku-latest``): passed through without a warning.
_FULL_ID = re.compile(r"^claude-[a-z0-9][a-z0-9.-]*$")


@attrs.frozen
class ModelCheck:
    """What a model name is: ``inherit``, ``alias``, ``model-id`` or ``unknown``."""

    kind: str
    #: The full id it resolves to; ``None`` for ``inherit``.
    model_id: str | None
    #: The name asked for the 1-million-token context window (``[1m]``).
    context_1m: bool = False
    #: For ``opusplan``: the id used in plan mode (``model_id`` is used otherwise).
    plan_model_id: str | None = None


def _lower_keys(table: Mapping[str, str]) -> Mapping[str, str]:
    return types.MappingProxyType({k.strip().lower(): v for k, v in table.items()})


@attrs.frozen
class ModelAliases:
    """The alias table; build a changed copy with :meth:`with_overrides`."""

    table: Mapping[str, str] = attrs.field(
        default=DEFAULT_MODEL_ALIASES, converter=_lower_keys, hash=False
    )

    def with_overrides(self, overrides: Mapping[str, str]) -> ModelAliases:
        """A copy where ``overrides`` (from configuration) replace or add aliases."""
        merged = dict(self.table)
        merged.update(_lower_keys(overrides))
        return ModelAliases(merged)

    def check(self, model: str) -> ModelCheck:
        """Say what ``model`` is and which full id it stands for."""
        name = model.strip()
        if name.lower().endswith(CONTEXT_1M_SUFFIX) and name.lower() not in self.table:
            base = self._check_plain(name[: -len(CONTEXT_1M_SUFFIX)].strip())
            if base.kind == "inherit" or not base.model_id:
                return ModelCheck("unknown", name)
            return attrs.evolve(base, context_1m=True)
        return self._check_plain(name)

    def _check_plain(self, name: str) -> ModelCheck:
        if name.lower() == OPUSPLAN and OPUSPLAN not in self.table:
            execution = self.table.get("sonnet")
            planning = self.table.get("opus")
            if execution is not None and planning is not None:
                return ModelCheck("alias", execution, plan_model_id=planning)
        if name.lower() == INHERIT:
            return ModelCheck("inherit", None)
        alias = self.table.get(name.lower())
        if alias is not None:
            return ModelCheck("alias", alias)
        if name in self.table.values() or _FULL_ID.match(name):
            return ModelCheck("model-id", name)
        return ModelCheck("unknown", name)

    def resolve(
        self, model: str | None, *, parent: str | None = None, plan_mode: bool = False
    ) -> str | None:
        """The full model id for ``model``; ``inherit`` (or ``None``) gives ``parent``.

        ``plan_mode`` picks ``opusplan``'s plan-mode model (opus).
        """
        if model is None:
            return parent
        check = self.check(model)
        if check.kind == "inherit":
            return parent
        if plan_mode and check.plan_model_id is not None:
            return check.plan_model_id
        return check.model_id
