"""Explicit defaults of the agent loop and the providers, in one place.

:class:`Limits` is the one value the loop reads its limits from: a definition's
:class:`~subagents.agents.RunLimits` leave fields unset (``None``) and
:meth:`Limits.for_definition` fills them from these defaults.
"""

from __future__ import annotations

import math
from typing import Any, Final

import attrs

from subagents.agents import AgentDefinition
from subagents.runtime._exceptions import InvalidLimits

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "COMPLETE_TASK",
    "DEFAULT_GRACE_PERIOD_SECONDS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TIME_SECONDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODEL",
    "DEFAULT_REQUEST_TIMEOUT",
    "INBOX_CAPACITY",
    "MAX_ERROR_CHARS",
    "MODEL_ENV",
    "Limits",
]

#: Turns a run may take before its grace turn (the seeds' default).
DEFAULT_MAX_TURNS: Final = 50
#: Wall-clock seconds a run may take before its grace turn (the seeds' default).
DEFAULT_MAX_TIME_SECONDS: Final = 300.0
#: Seconds of the one last turn after a timeout or the turn limit.
DEFAULT_GRACE_PERIOD_SECONDS: Final = 60.0
#: ``max_tokens`` of each model call.
DEFAULT_MAX_TOKENS: Final = 8192
#: The model used when nothing names one and there is no parent to inherit from.
DEFAULT_MODEL: Final = "sonnet"

#: Overrides every other model choice for every agent.
MODEL_ENV: Final = "SUBAGENTS_MODEL"
#: Selects :class:`AnthropicProvider` by default when set.
API_KEY_ENV: Final = "ANTHROPIC_API_KEY"
BASE_URL_ENV: Final = "ANTHROPIC_BASE_URL"

#: Retries the SDK makes for retryable failures (429, 5xx, 529, connection errors).
DEFAULT_MAX_RETRIES: Final = 2
#: Seconds a whole model request may take (the SDK's read timeout applies per read).
DEFAULT_REQUEST_TIMEOUT: Final = 600.0

#: The tool a model calls to finish with a (structured) result.
COMPLETE_TASK: Final = "complete_task"

#: Follow-up inputs an agent holds while a run is under way.
INBOX_CAPACITY: Final = 16

#: Longest error text kept in a result or a tool error.
MAX_ERROR_CHARS: Final = 4000


def _whole(_: Any, attribute: attrs.Attribute[int], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidLimits(
            f"{attribute.name} must be a whole number of at least 1 (got {value!r})."
        )


def _seconds(_: Any, attribute: attrs.Attribute[float], value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
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
    max_time_seconds: float = attrs.field(default=DEFAULT_MAX_TIME_SECONDS, validator=_seconds)
    grace_period_seconds: float = attrs.field(
        default=DEFAULT_GRACE_PERIOD_SECONDS, validator=_seconds
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
