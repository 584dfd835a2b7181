"""The runtime's own bus subscriber: the progress tracker and the status log.

A :class:`ProgressFollower` reads a lossless subscription opened before the
first agent, folds every event into a
:class:`~subagents.runtime.ProgressTracker` and logs each status change with
the agent's id, nickname and depth. Its task runs in the runtime's nursery and
ends once the subscription is closed and drained. :meth:`ProgressFollower.pump`
handles the events already published without waiting, so a read right after a
call (``rt.progress(id)`` after ``rt.spawn``) sees them.
"""

from __future__ import annotations

from typing import final

import trio

from subagents.actors import Bus, Event, Lagged, StatusChanged, Subscription, kind_of
from subagents.runtime._logging import RuntimeLog
from subagents.runtime._progress.tracker import ProgressTracker

__all__ = ["ProgressFollower"]


@final
class ProgressFollower:
    """Feeds ``tracker`` (and the status log) from one subscription."""

    __slots__ = ("_log", "_status_log", "_subscription", "tracker")

    def __init__(self, log: RuntimeLog, tracker: ProgressTracker | None = None) -> None:
        self._log = log
        # One logger for every status line, told the agent per line: the same line as a
        # logger bound to the agent writes (RuntimeLog.for_agent), without making one per event.
        self._status_log = log.logger()
        self.tracker = ProgressTracker() if tracker is None else tracker
        self._subscription: Subscription | None = None

    def _observe(self, event: Event | Lagged) -> None:
        self.tracker.handle(event)
        if type(event) is StatusChanged:
            detail = getattr(event.status, "message", None)
            self._status_log.info(
                "status changed",
                agent_id=event.agent_id,
                nickname=event.nickname,
                depth=event.depth,
                status=kind_of(event.status),
                message=detail,
            )

    def subscribe(self, bus: Bus, *, capacity: int) -> Subscription:
        """Open the lossless subscription to follow (before the first agent is spawned)."""
        self._subscription = bus.subscribe(policy="block", capacity=capacity)
        return self._subscription

    async def follow(self) -> None:
        """Handle every event until the subscription is closed and drained."""
        subscription = self._subscription
        assert subscription is not None, "subscribe() before follow()"
        async for event in subscription:
            self._observe(event)
        self._subscription = None

    def pump(self) -> None:
        """Handle the events already buffered, without waiting."""
        subscription = self._subscription
        if subscription is None:
            return
        while True:
            try:
                event = subscription.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return
            self._observe(event)
