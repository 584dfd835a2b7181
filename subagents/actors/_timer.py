"""Deadlines of ``ask`` requests, kept in one heap per supervisor.

A cancel scope with a deadline costs more than a whole request/reply round trip,
so ``ask`` pushes its deadline here instead, and one timer task fails the
requests whose deadline passes. Answered requests are dropped lazily; the heap
is compacted whenever it doubles, so it stays within twice the number of
requests outstanding (and at least ``_MIN_LIMIT`` entries).
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Final, final

import trio

from ._exceptions import ReplyTimeout
from ._messages import Request

__all__ = ["RequestTimer"]

_MIN_LIMIT: Final = 1024


@final
class RequestTimer:
    """Fails each registered request with :class:`ReplyTimeout` at its deadline."""

    __slots__ = ("_counter", "_heap", "_limit", "_scope", "_wake_at")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Request, str, float]] = []
        self._counter = itertools.count()
        self._limit = _MIN_LIMIT
        self._scope: trio.CancelScope | None = None
        self._wake_at = math.inf  # the timer's current deadline, cached off the scope

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, deadline: float, request: Request, agent_id: str, timeout: float) -> None:
        """Fail ``request`` at ``deadline`` (Trio clock) unless it is answered first."""
        heap = self._heap
        heapq.heappush(heap, (deadline, next(self._counter), request, agent_id, timeout))
        if len(heap) > self._limit:
            self._heap = heap = [entry for entry in heap if not entry[2].answered]
            heapq.heapify(heap)
            self._limit = max(_MIN_LIMIT, 2 * len(heap))
        if deadline < self._wake_at and self._scope is not None:
            self._scope.deadline = self._wake_at = deadline

    async def run(self) -> None:
        """Expire requests until cancelled; runs in the supervisor's root nursery."""
        while True:
            with trio.CancelScope() as scope:
                self._scope = scope
                self._wake_at = scope.deadline = self._heap[0][0] if self._heap else math.inf
                await trio.sleep_forever()
            self._scope = None
            self._wake_at = math.inf
            now = trio.current_time()
            heap = self._heap
            while heap and heap[0][0] <= now:
                _, _, request, agent_id, timeout = heapq.heappop(heap)
                if not request.answered:
                    request.fail(ReplyTimeout(agent_id, timeout))
