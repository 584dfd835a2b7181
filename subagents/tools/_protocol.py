"""The tool protocol: what every tool, built-in or not, looks like to the runtime."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs
import msgspec

if TYPE_CHECKING:
    from subagents.tools._context import ToolContext

__all__ = ["NO_CAPACITY", "Tool", "ToolFlags", "ToolResult"]

#: A :attr:`ToolResult.details` key: when true, the call was refused only because
#: no capacity was free (an agent slot under ``max_threads``) and did nothing, so
#: it may be made again once capacity frees. The agent loop makes such a call of
#: a concurrent batch once more after the rest of its batch has finished.
NO_CAPACITY: Final = "no_capacity"


@attrs.frozen
class ToolFlags:
    """What the filter and the approval step need to know about a tool.

    ``read_only`` tools neither write nor execute anything, so they may be given
    to agents from untrusted sources and to read-only agents;
    ``background_safe`` tools need no user interaction, so background agents
    keep them; ``needs_approval`` tools ask before every call.

    ``concurrent`` tools may run at the same time as the other concurrent calls
    of the same model message (their results still come back in call order);
    read-only tools always may. A call of any other tool is a barrier: it starts
    once every call written before it has finished, and the calls after it wait
    for it. What a concurrent call must still do in call order (the starting
    tools take their agent slot so) it does inside ``ctx.in_call_order()``.
    """

    read_only: bool = False
    background_safe: bool = False
    needs_approval: bool = False
    concurrent: bool = False

    @property
    def runs_concurrently(self) -> bool:
        """Whether calls may run alongside the turn's other such calls (read-only or concurrent)."""
        return self.read_only or self.concurrent


#: The details of a result that has none, shared: most results carry none, and a copy
#: and a proxy for each of them cost every tool call two allocations.
_NO_DETAILS: Final[Mapping[str, object]] = MappingProxyType({})


def _freeze_details(details: Mapping[str, object]) -> Mapping[str, object]:
    """A read-only copy of ``details`` (the shared empty one for none)."""
    if not details:
        return _NO_DETAILS
    return MappingProxyType(dict(details))


@attrs.frozen
class ToolResult:
    """What a tool call gives back to the model.

    ``content`` is the text the model sees; ``is_error`` marks a failed call
    (bad arguments, refused path, denied approval, non-zero exit...). ``details``
    carries machine-readable facts (exit code, truncation) for hooks and tests.
    """

    content: str
    is_error: bool = False
    details: Mapping[str, object] = attrs.field(
        default=_NO_DETAILS, converter=_freeze_details, eq=False, hash=False
    )

    @classmethod
    def ok(cls, content: str, **details: object) -> ToolResult:
        """A successful result."""
        return cls(content=content, is_error=False, details=details)

    @classmethod
    def error(cls, message: str, **details: object) -> ToolResult:
        """A failed call; ``message`` tells the model what went wrong and what to do."""
        return cls(content=message, is_error=True, details=details)


class Tool(Protocol):
    """A tool a model can call.

    ``arguments_type`` is a ``msgspec.Struct`` (declared with
    ``forbid_unknown_fields=True``) from which the input JSON Schema is
    generated and into which the model's arguments are decoded before
    :meth:`call` sees them. ``call`` reports a model's mistake by returning
    :meth:`ToolResult.error` or raising :class:`ToolError`; any other exception
    is a bug, which the registry also turns into an error result.
    """

    @property
    def name(self) -> str:
        """The name the model calls the tool by (``mcp__server__tool`` is fine)."""
        ...

    @property
    def description(self) -> str:
        """What the tool does and when to use it, written for the model."""
        ...

    @property
    def arguments_type(self) -> type[msgspec.Struct]:
        """The ``msgspec.Struct`` describing the tool's arguments."""
        ...

    @property
    def flags(self) -> ToolFlags:
        """Read-only, background-safe and needs-approval flags."""
        ...

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        """Run the tool with validated ``args`` (an ``arguments_type`` instance)."""
        ...
