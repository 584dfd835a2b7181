"""The one error a wrong setting raises, and how a wrong value is shown in it.

:class:`ConfigError` names where the value was written (a file and its line, an
environment variable, or code), the key, what was expected and what was found,
and what to do; :func:`_show` renders the found value short, with secrets masked.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from subagents._exceptions import SubagentsError
from subagents.runtime._logging import mask_text

if TYPE_CHECKING:
    from subagents.runtime._settings_origins import _Origin

__all__ = ["ConfigError"]


class ConfigError(SubagentsError):
    """A configuration value is wrong.

    ``origin`` is where it was written, as shown to the user: a file's path,
    ``environment variable SUBAGENTS_X`` or ``code``; ``path`` is the file
    (``None`` for the environment and code) and ``variable`` the environment
    variable, when there is one. ``key`` is the dotted key
    (``limits.max_threads``; empty for a file that is not valid TOML),
    ``expected`` says what a good value is, ``got`` shows what was found
    (``None`` when there is nothing to show), ``line`` is the file's line when
    known, and ``hint`` says what to do. ``reason``, when set, replaces the
    "expected ..., got ..." clause with a more precise sentence.
    """

    def __init__(
        self,
        origin: str,
        key: str,
        expected: str,
        got: str | None = None,
        *,
        path: Path | None = None,
        variable: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        reason: str | None = None,
        related: tuple[str, ...] = (),
    ) -> None:
        self.origin = origin
        self.key = key
        self.expected = expected
        self.got = got
        self.path = path
        self.variable = variable
        self.line = line
        self.hint = hint
        self.reason = reason
        #: Other keys whose values together made this one wrong (cross-field checks).
        self.related = related
        super().__init__(self._message())

    def _message(self) -> str:
        head = [self.origin]
        if self.key:
            head.append(self.key)
        elif self.line is not None:
            head.append(f"line {self.line}")
        if self.reason is not None:
            body = self.reason
        else:
            body = f"expected {self.expected}"
            if self.got is not None:
                body += f", got {self.got}"
        if self.key and self.line is not None:
            body += f" (line {self.line})"
        text = ": ".join(head) + ": " + body.rstrip(".") + "."
        return f"{text} {self.hint}" if self.hint else text

    def _moved(self, origin: _Origin, *, key: str | None = None, line: int | None) -> ConfigError:
        """This error as seen from ``origin`` (the source that supplied the value)."""
        return ConfigError(
            origin.where,
            self.key if key is None else key,
            self.expected,
            self.got,
            path=origin.path,
            variable=origin.variable,
            line=line,
            hint=self.hint if origin.hint is None else origin.hint,
            reason=self.reason,
            related=self.related,
        )


def _show(value: object) -> str:
    """How a wrong value is shown in a message: TOML-like, short, with secrets masked."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, int | float):
        text = repr(value)
    elif value is None:
        text = "nothing (None)"
    elif isinstance(value, datetime.date | datetime.time):
        text = f"the date/time {value.isoformat()}"
    elif isinstance(value, Path):
        text = json.dumps(str(value), ensure_ascii=False)
    elif isinstance(value, Mapping | list | tuple | set | frozenset):
        try:
            text = json.dumps(_plain(value), ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    else:
        text = f"{type(value).__name__} {value!r}"
    text = mask_text(text)
    return text if len(text) <= 80 else text[:77] + "..."


def _plain(value: object) -> Any:
    """``value`` with frozen containers turned into plain JSON-like ones."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted((_plain(v) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
