"""The supervisor's settings, with their defaults in one place.

Every value is checked when the configuration is built, so a bad limit fails
where it was written, not at the first spawn.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

import attrs

from ._exceptions import InvalidConfiguration
from ._nicknames import DEFAULT_NICKNAMES

__all__ = ["SupervisorConfig", "check_count", "check_seconds", "is_count", "is_seconds"]


def is_count(value: object, minimum: int) -> bool:
    """Whether ``value`` is a whole number (never a bool) of at least ``minimum``.

    The one rule for every count setting, in every layer: the runtime's settings
    and run limits ask it too, and raise their own error naming where it was set.
    """
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def check_count(name: str, value: object, minimum: int, meaning: str) -> None:
    """Raise :class:`InvalidConfiguration` unless ``value`` is an int >= ``minimum``."""
    if not is_count(value, minimum):
        raise InvalidConfiguration(
            f"{name} must be a whole number of at least {minimum} (got {value!r}): it is {meaning}."
        )


#: The largest number of seconds a deadline can hold.
_LARGEST: Final = sys.float_info.max


def is_seconds(value: object) -> bool:
    """Whether ``value`` is a finite number of seconds, 0 or more (never a bool).

    The one rule for every duration setting, in every layer (see :func:`is_count`).
    ``<= _LARGEST`` refuses inf, NaN and integers too large for a float deadline.
    """
    if type(value) is float or type(value) is int:  # the common case, checked cheaply
        return 0 <= value <= _LARGEST
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= _LARGEST


def check_seconds(name: str, value: object, meaning: str) -> None:
    """Raise :class:`InvalidConfiguration` unless ``value`` is finite seconds >= 0."""
    if is_seconds(value):
        return
    raise InvalidConfiguration(
        f"{name} must be a finite number of seconds, 0 or more (got {value!r}): it is {meaning}."
    )


def _whole(minimum: int, meaning: str) -> Callable[[Any, attrs.Attribute[int], int], None]:
    def check(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
        check_count(attribute.name, value, minimum, meaning)

    return check


def _seconds(meaning: str) -> Callable[[Any, attrs.Attribute[float], float], None]:
    def check(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
        check_seconds(attribute.name, value, meaning)

    return check


def _as_tuple(value: Any) -> Any:
    """Lists and tuples become tuples; anything else is left for the validator to reject."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _check_nicknames(_: Any, attribute: attrs.Attribute[tuple[str, ...]], value: Any) -> None:
    if (
        not isinstance(value, tuple)
        or not value
        or not all(isinstance(name, str) and name.strip() for name in value)
        or len(set(value)) != len(value)
    ):
        raise InvalidConfiguration(
            f"nicknames must be a non-empty list of distinct, non-blank names (got {value!r})."
        )


@attrs.frozen(kw_only=True)
class SupervisorConfig:
    """Limits and defaults of one supervisor.

    ``max_threads`` counts every live agent (PendingInit or Running), top-level
    ones included. An agent spawned by the embedding program has depth 0; a
    child of an agent of depth ``d`` has depth ``d + 1`` and may exist only if
    ``d + 1 <= max_depth``.
    """

    max_threads: int = attrs.field(
        default=8, validator=_whole(1, "how many agents may run at once")
    )
    max_depth: int = attrs.field(
        default=1, validator=_whole(0, "how deep below the lead agents may spawn")
    )
    mailbox_size: int = attrs.field(
        default=64, validator=_whole(1, "how many unread messages an agent may hold")
    )
    close_grace_period: float = attrs.field(
        default=2.0, validator=_seconds("how long a closed agent may take to stop by itself")
    )
    cancel_timeout: float = attrs.field(
        default=5.0, validator=_seconds("how long a cancelled agent may take to unwind")
    )
    nicknames: tuple[str, ...] = attrs.field(
        default=DEFAULT_NICKNAMES, converter=_as_tuple, validator=_check_nicknames
    )
    retain_closed: int = attrs.field(
        default=10_000,
        validator=_whole(0, "how many closed agents' final statuses are remembered"),
    )
    bus_capacity: int = attrs.field(
        default=1024, validator=_whole(1, "the default buffer size of a bus subscription")
    )
    bus_max_block: float = attrs.field(
        default=1.0,
        validator=_seconds("how long a lossless subscriber may hold a publisher"),
    )
