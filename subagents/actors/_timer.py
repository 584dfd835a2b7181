"""Deadlines of ``ask`` requests, kept in one heap per supervisor.

A cancel scope with a deadline costs more than a whole request/reply round trip,
so ``ask`` hands its deadline here instead, and one timer task fails the
requests whose deadline passes. Deadlines that arrive in order (the usual case:
one timeout for every request) go in a FIFO whose answered head is trimmed on
every add, so it holds about as many entries as there are requests outstanding;
the others go in a heap that is compacted whenever it doubles.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
from typing import Final, TypeAlias, final

import trio

from ._exceptions import ReplyTimeout
from ._messages import Request

__all__ = ["RequestTimer"]

_MIN_LIMIT: Final = 1024
_Entry: TypeAlias = tuple[float, int, Request, str, float]  # deadline, tiebreak, request, ...


@final
class RequestTimer:
    """Fails each registered request with :class:`ReplyTimeout` at its deadline."""

    __slots__ = ("_counter", "_fifo", "_heap", "_limit", "_scope", "_wake_at")

    def __init__(self) -> None:
        self._fifo: collections.deque[_Entry] = collections.deque()
        self._heap: list[_Entry] = []
        self._counter = itertools.count()
        self._limit = _MIN_LIMIT
        self._scope: trio.CancelScope | None = None
        self._wake_at = math.inf  # the timer's current deadline, cached off the scope

    def __len__(self) -> int:
        return len(self._fifo) + len(self._heap)

    def add(self, deadline: float, request: Request, agent_id: str, timeout: float) -> None:
        """Fail ``request`` at ``deadline`` (Trio clock) unless it is answered first."""
        fifo = self._fifo
        while fifo and fifo[0][2]._done:
            fifo.popleft()
        if not fifo or fifo[-1][0] <= deadline:
            fifo.append((deadline, 0, request, agent_id, timeout))
        else:
            heap = self._heap
            heapq.heappush(heap, (deadline, next(self._counter), request, agent_id, timeout))
            if len(heap) > self._limit:
                self._heap = heap = [entry for entry in heap if not entry[2]._done]
                heapq.heapify(heap)
                self._limit = max(_MIN_LIMIT, 2 * len(heap))
        if deadline < self._wake_at and self._scope is not None:
            self._scope.deadline = self._wake_at = deadline

    def _next_deadline(self) -> float:
        fifo, heap = self._fifo, self._heap
        return min(fifo[0][0] if fifo else math.inf, heap[0][0] if heap else math.inf)

    async def run(self) -> None:
        """Expire requests until cancelled; runs in the supervisor's root nursery."""
        while True:
            with trio.CancelScope() as scope:
                self._scope = scope
                self._wake_at = scope.deadline = self._next_deadline()
                await trio.sleep_forever()
            self._scope = None
            self._wake_at = math.inf
            now = trio.current_time()
            fifo, heap = self._fifo, self._heap
            while fifo and fifo[0][0] <= now:
                _expire(fifo.popleft())
            while heap and heap[0][0] <= now:
                _expire(heapq.heappop(heap))


def _expire(entry: _Entry) -> None:
    _, _, request, agent_id, timeout = entry
    if not request._done:
        request.fail(ReplyTimeout(agent_id, timeout))
