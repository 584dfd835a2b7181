"""The limits of one run: turns, wall-clock seconds and the grace turn.

:class:`Limits` is the one value the loop reads its limits from: a definition's
:class:`~subagents.agents.RunLimits` leave fields unset (``None``) and
:meth:`Limits.for_definition` fills them from the defaults of
:mod:`subagents.runtime._config.defaults`.
"""

from __future__ import annotations

from typing import Any

import attrs

from subagents.actors import is_count, is_seconds
from subagents.agents import AgentDefinition
from subagents.runtime._config.defaults import (
    DEFAULT_GRACE_PERIOD_SECONDS,
    DEFAULT_MAX_TIME_SECONDS,
    DEFAULT_MAX_TURNS,
)
from subagents.runtime._exceptions import InvalidLimits

__all__ = ["Limits"]


def _whole(_: Any, attribute: attrs.Attribute[int], value: object) -> None:
    if not is_count(value, 1):
        raise InvalidLimits(
            f"{attribute.name} must be a whole number of at least 1 (got {value!r})."
        )


def seconds_check(_: Any, attribute: attrs.Attribute[float], value: object) -> None:
    if not is_seconds(value):
        raise InvalidLimits(
            f"{attribute.name} must be a finite number of seconds, 0 or more (got {value!r}): "
            "every run has a deadline."
        )


@attrs.frozen
class Limits:
    """The limits of one run: turns, wall-clock seconds, and the grace turn's budget.

    A turn is one model call and the tool calls it asks for. When the run
    reaches ``max_turns`` or ``max_time_seconds`` without finishing, the model
    gets one last turn of at most ``grace_period_seconds`` in which only
    ``complete_task`` is offered.
    """

    max_turns: int = attrs.field(default=DEFAULT_MAX_TURNS, validator=_whole)
    max_time_seconds: float = attrs.field(default=DEFAULT_MAX_TIME_SECONDS, validator=seconds_check)
    grace_period_seconds: float = attrs.field(
        default=DEFAULT_GRACE_PERIOD_SECONDS, validator=seconds_check
    )

    @classmethod
    def for_definition(
        cls,
        definition: AgentDefinition,
        *,
        defaults: Limits | None = None,
        max_turns: int | None = None,
    ) -> Limits:
        """The definition's limits, unset ones from ``defaults``; ``max_turns`` overrides
        (a spawn call's ``max_turns`` parameter)."""
        base = cls() if defaults is None else defaults
        limits = definition.run_limits
        return cls(
            max_turns=max_turns or limits.max_turns or base.max_turns,
            max_time_seconds=(
                base.max_time_seconds
                if limits.max_time_seconds is None
                else limits.max_time_seconds
            ),
            grace_period_seconds=(
                base.grace_period_seconds
                if limits.grace_period_seconds is None
                else limits.grace_period_seconds
            ),
        )
