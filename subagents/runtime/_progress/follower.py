"""The runtime's own bus consumer: the progress tracker and the status log.

A :class:`ProgressFollower` listens to the kernel's spawns and status changes on
the bus (:meth:`~subagents.actors.Bus.listen`, ``types``) from before the first
agent, folds them into a :class:`~subagents.runtime.ProgressTracker` as they are
published, and logs status changes with the agent's id, nickname and depth: an
agent's end at ``info``, its live statuses (``pending_init``, ``running``) at
``debug``, and so is an end its own "run finished" line already gave
(``told``). The agent loop's facts (turns, usage, tool calls) do not come
through the bus: each agent's loop tells the same tracker directly, through a
:class:`~.facts.ProgressFeed` the runtime makes for it.
So a turn nobody subscribes to builds no event, the follower does not count as
a subscriber (``Bus.has_subscribers``), and the tracker is current the moment
a fact happens or an event is published: ``rt.progress(id)`` right after
``rt.spawn`` sees the spawn, and a subscriber reading an event finds the
tracker already past it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import final

from subagents.actors import (
    AgentSpawned,
    Bus,
    Event,
    Listener,
    StatusChanged,
    is_final,
    kind_of,
)
from subagents.runtime._logging import RuntimeLog
from subagents.runtime._progress.tracker import ProgressTracker

__all__ = ["ProgressFollower"]


@final
class ProgressFollower:
    """Feeds ``tracker`` (and the status log) from the bus it is attached to."""

    __slots__ = ("_debug", "_listener", "_log", "_status_log", "_told", "tracker")

    def __init__(
        self,
        log: RuntimeLog,
        tracker: ProgressTracker | None = None,
        *,
        told: Callable[[str, str], bool] | None = None,
    ) -> None:
        """``told(agent_id, status)``: whether the agent's own line already said that its
        activation ended with ``status`` (the runtime's "run finished"), asked once per end."""
        self._log = log
        self._told = told
        # One logger for every status line, told the agent per line: the same line as a
        # logger bound to the agent writes (RuntimeLog.for_agent), without making one per event.
        self._status_log = log.logger()
        self._debug = log.enabled("debug")
        self.tracker = ProgressTracker() if tracker is None else tracker
        self._listener: Listener | None = None

    def _observe(self, event: Event) -> None:
        self.tracker.handle(event)
        if type(event) is StatusChanged:
            status = event.status
            # One line per lifecycle step at info. An agent's start is its "agent spawned"
            # line and each activation's end its "run finished" line, which gives the
            # status: a status line saying it again is at debug, as the live statuses
            # (pending_init, running) are; an end no line gave (a failed start, an actor
            # that is not an agent) is at info. Below the log's levels a line costs
            # this check, not a call with its keywords.
            if is_final(status) and (
                self._told is None or not self._told(event.agent_id, kind_of(status))
            ):
                write = self._status_log.info
            elif self._debug:
                write = self._status_log.debug
            else:
                return
            write(
                "status changed",
                agent_id=event.agent_id,
                nickname=event.nickname,
                depth=event.depth,
                status=kind_of(status),
                message=getattr(status, "message", None),
            )

    def attach(self, bus: Bus) -> Listener:
        """Follow the spawns and status changes ``bus`` publishes from now on (before the
        first agent); the loop's facts come through each agent's feed."""
        self._listener = bus.listen(self._observe, types=(AgentSpawned, StatusChanged))
        return self._listener

    def detach(self) -> None:
        """Stop following; the tracker keeps what it has.

        Had handling an event failed (a bug: the listener is detached then, so that
        the publisher carries on), the failure is logged here.
        """
        listener, self._listener = self._listener, None
        if listener is None:
            return
        listener.close()
        if listener.error is not None:
            self._log.logger().error("progress tracking stopped", error=repr(listener.error))
