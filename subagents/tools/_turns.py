"""Call order among the concurrent calls of one model message.

The agent loop runs consecutive concurrent calls of a message together (see
:class:`~subagents.tools.ToolFlags`), but what such a call does first may still
have to happen in call order: the tools that start agents take their
``max_threads`` slot, their id and their nickname in the order the model wrote
the calls, so the first calls are the ones that start when slots run short and
logs read in call order. A tool does that part inside
``async with ctx.in_call_order():``, which waits until every earlier call of
the batch has done the same (or has finished) and then lets the next one go.
Outside a concurrent batch the context manager does nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import final

import trio

__all__ = ["CallTurn", "call_turns"]


@final
class CallTurn:
    """One call's place in its batch: it waits for the call before it, then frees the next.

    The wait is bounded by the earlier calls themselves, each of which frees its
    turn when it leaves its ordered part or ends (error and cancellation included):
    the loop calls :meth:`release` when the call is over.
    """

    __slots__ = ("_before", "_mine")

    def __init__(self, before: trio.Event | None, mine: trio.Event) -> None:
        self._before = before
        self._mine = mine

    def __repr__(self) -> str:
        return f"<CallTurn released={self._mine.is_set()}>"

    @asynccontextmanager
    async def ordered(self) -> AsyncIterator[None]:
        """Run the block after every earlier call's ordered part; then free the next call."""
        try:
            if self._before is not None:
                await self._before.wait()
            yield
        finally:
            self._mine.set()

    def release(self) -> None:
        """Free the next call (the call is over, whether or not it used its turn)."""
        self._mine.set()


def call_turns(count: int) -> list[CallTurn]:
    """The turns of ``count`` calls of one batch, in call order."""
    events = [trio.Event() for _ in range(count)]
    return [
        CallTurn(events[index - 1] if index else None, event) for index, event in enumerate(events)
    ]
