"""The prompt template: ``{column}`` placeholders filled with a row's values.

Codex's agent jobs (``render_instruction_template`` in
``codex-rs/core/src/tools/handlers/agent_jobs.rs``) fill ``{column}`` with the
row's value (a string as it is, any other JSON value as JSON) and read ``{{``
and ``}}`` as literal braces. Two differences, both deliberate: every
placeholder is checked against the columns before any row starts (Codex
leaves an unknown one as written), and the template is filled in one pass,
so a value that itself holds ``{other}`` is never filled again (Codex's
``replace`` per column would expand it: row content is hostile).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs
import msgspec

from subagents.jobs._exceptions import JobInputError

__all__ = ["PromptTemplate", "render_value"]

#: ``{{``, ``}}``, or one placeholder: braces around text without braces.
_TOKEN: Final = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def render_value(value: Any) -> str:
    """A row value as text: a string as it is, ``null`` as nothing, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return msgspec.json.encode(value).decode()


def _placeholders(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        name = match.group(1)
        if name is not None:
            found.setdefault(name, None)
    return tuple(found)


@attrs.frozen
class PromptTemplate:
    """A job's prompt template and the placeholders it names, in order of first use."""

    text: str
    placeholders: tuple[str, ...] = attrs.field(init=False)

    @placeholders.default
    def _found(self) -> tuple[str, ...]:
        return _placeholders(self.text)

    def check(self, columns: Iterable[str], *, path: str | None = None) -> None:
        """Raise :class:`JobInputError` naming the first placeholder no column has."""
        known = set(columns)
        for name in self.placeholders:
            if name not in known:
                listed = ", ".join(sorted(known)) or "none"
                raise JobInputError(
                    f"the prompt's placeholder {{{name}}} names no column of the input "
                    f"(columns: {listed}).",
                    path=path,
                    column=name,
                    fix="Use one of the columns, or write {{ and }} for literal braces.",
                )

    def render(self, values: Mapping[str, Any]) -> str:
        """The prompt for a row: each placeholder replaced by its value, in one pass."""

        def replace(match: re.Match[str]) -> str:
            token = match.group(0)
            if token == "{{":
                return "{"
            if token == "}}":
                return "}"
            name = match.group(1)
            return render_value(values[name]) if name in values else token

        return _TOKEN.sub(replace, self.text)
