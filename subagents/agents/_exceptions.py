"""Errors raised by :mod:`subagents.agents`.

Loading never raises for the content of one file: problems become
:class:`~subagents.agents.Diagnostic` values in that file's report, so one bad
file never stops the others. The exceptions below are for callers who ask for
one definition and must get it or know precisely why not::

    SubagentsError
    └── AgentsError
        ├── DefinitionError      a definition cannot be used (path, line, field)
        └── UnknownAgentError    no definition has the requested name
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from subagents._exceptions import SubagentsError

__all__ = ["AgentsError", "DefinitionError", "UnknownAgentError"]


class AgentsError(SubagentsError):
    """Base class of the errors raised by :mod:`subagents.agents`."""


class DefinitionError(AgentsError):
    """An agent definition is invalid: where it is, which field, and what to do.

    ``path`` is ``None`` for definitions that did not come from a file (the
    ``--agents`` JSON string); ``line`` is 1-based; ``field`` is a dotted path
    such as ``runConfig.maxTurns`` or ``None`` when the whole file is at fault.
    """

    def __init__(
        self,
        path: Path | None,
        line: int | None,
        field: str | None,
        message: str,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = str(self.path) if self.path is not None else "<--agents>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        if self.field is not None:
            where = f"{where} [{self.field}]"
        return f"{where}: {self.message}"

    def __reduce__(self) -> tuple[type[DefinitionError], tuple[object, ...]]:
        return (type(self), (self.path, self.line, self.field, self.message))


class UnknownAgentError(AgentsError, LookupError):
    """No loaded definition has this agent type; lists the ones that exist."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        # A plugin's agents answer only to <plugin>:<agent>, as in Claude Code.
        plugin = [a for a in self.available if a.endswith(f":{name}")]
        close = plugin or difflib.get_close_matches(name, self.available, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        known = ", ".join(self.available) if self.available else "none"
        super().__init__(
            f"No agent named {name!r}.{hint} Known agents: {known}. "
            "Run `subagents agents list` to see where agents are loaded from."
        )

    def __reduce__(self) -> tuple[type[UnknownAgentError], tuple[object, ...]]:
        return (type(self), (self.name, self.available))
