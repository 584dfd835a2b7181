"""The task board's bounds, each written once, checked when the configuration is built."""

from __future__ import annotations

from typing import Any

import attrs

from subagents.actors import is_count, is_seconds
from subagents.teams._exceptions import InvalidBoardConfig

__all__ = ["BoardConfig"]


def _count(minimum: int, meaning: str) -> Any:
    def check(_: Any, attribute: attrs.Attribute[int], value: object) -> None:
        if not is_count(value, minimum):
            raise InvalidBoardConfig(
                f"{attribute.name} must be a whole number of at least {minimum} (got "
                f"{value!r}): it is {meaning}."
            )

    return check


def _seconds(meaning: str) -> Any:
    def check(_: Any, attribute: attrs.Attribute[float], value: object) -> None:
        if not is_seconds(value) or value == 0:
            raise InvalidBoardConfig(
                f"{attribute.name} must be a finite number of seconds above 0 (got {value!r}): "
                f"it is {meaning}."
            )

    return check


@attrs.frozen(kw_only=True)
class BoardConfig:
    """Limits of one task board.

    The caps keep a board (and its journal) bounded whatever a model writes;
    ``request_timeout`` is the deadline of a request that gives none (it covers
    the hooks a create or a completion waits for); ``mailbox_size`` bounds the
    requests waiting for the board, and ``max_checks`` the hook checks running
    at once.
    """

    max_tasks: int = attrs.field(
        default=10_000, validator=_count(1, "how many tasks a board holds")
    )
    max_subject_chars: int = attrs.field(
        default=500, validator=_count(1, "the longest subject of a task")
    )
    max_description_chars: int = attrs.field(
        default=20_000, validator=_count(1, "the longest description of a task")
    )
    max_owner_chars: int = attrs.field(
        default=128, validator=_count(1, "the longest name of a task's owner")
    )
    max_blockers: int = attrs.field(
        default=100, validator=_count(1, "how many tasks may block one task")
    )
    max_metadata_bytes: int = attrs.field(
        default=16_384, validator=_count(2, "the largest metadata of a task, as JSON bytes")
    )
    mailbox_size: int = attrs.field(
        default=256, validator=_count(1, "how many requests may wait for the board")
    )
    max_checks: int = attrs.field(
        default=64, validator=_count(1, "how many hook checks may run at once")
    )
    request_timeout: float = attrs.field(
        default=120.0, validator=_seconds("how long a request may wait for its answer")
    )
    write_grace: float = attrs.field(
        default=10.0,
        validator=_seconds("how long past its deadline a request the board took may wait"),
    )
