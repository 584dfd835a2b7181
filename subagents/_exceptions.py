"""The root of every error this package raises.

Each subpackage keeps its own exception types in one module of its own
(``subagents/actors/_exceptions.py``, ...) and derives them from
:class:`SubagentsError`, so an embedder can catch everything the runtime raises
with one ``except`` clause while tests and callers match the precise type::

    SubagentsError
    ├── actors:  ActorError, AgentNotFound, AgentClosed, MailboxFull, ...
    ├── agents:  DefinitionError, ...
    ├── tools:   ToolError, ...
    └── runtime: ProviderError, ...
"""

from __future__ import annotations

__all__ = ["SubagentsError"]


class SubagentsError(Exception):
    """Base class of every error raised by ``subagents``.

    Messages are written for the person who must act on them: they say what
    went wrong and what to do about it.
    """
