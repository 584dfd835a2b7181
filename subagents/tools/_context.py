"""The context a tool call runs in: who calls, where, until when, and who approves."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

from subagents.tools._approval import Approver
from subagents.tools._secrets import SecretRedactor
from subagents.tools._turns import CallTurn
from subagents.tools._workspace import Workspace

__all__ = ["ToolContext"]


@attrs.frozen
class ToolContext:
    """Everything a tool may know about the call it is serving.

    ``cancel_scope`` is the calling agent's scope (its deadline bounds pending
    approvals); ``approver`` is the agent's link in the approval chain, and
    ``None`` means calls that need approval are denied. ``redactor`` masks the
    runtime's secret values in the call's result before anyone reads it (by
    default, those of ``os.environ`` when the context is made). ``turn`` is the
    call's place among the concurrent calls of its message (``None`` outside
    one): see :meth:`in_call_order`.
    """

    agent_id: str
    depth: int
    workspace_root: Path
    cancel_scope: trio.CancelScope | None = None
    approver: Approver | None = None
    tool_use_id: str | None = None
    redactor: SecretRedactor = attrs.field(factory=SecretRedactor.from_environ, repr=False)
    turn: CallTurn | None = attrs.field(default=None, repr=False)

    @asynccontextmanager
    async def in_call_order(self) -> AsyncIterator[None]:
        """Run the block in call order among the concurrent calls of the message.

        The tools that start agents take their slot, id and nickname inside it,
        so the first calls of a message are the first to start. A no-op for a
        call that runs alone.
        """
        if self.turn is None:
            yield
            return
        async with self.turn.ordered():
            yield

    @property
    def deadline(self) -> float:
        """The agent's deadline on the Trio clock, ``math.inf`` when it has none."""
        if self.cancel_scope is None:
            return math.inf
        return self.cancel_scope.deadline

    @property
    def workspace(self) -> Workspace:
        """The confinement every file and shell tool works through."""
        return Workspace(self.workspace_root)
