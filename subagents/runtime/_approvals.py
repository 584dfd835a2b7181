"""Approvals on the bus: an agent's approver that announces each request and its answer.

The approval chain itself lives in :mod:`subagents.tools._approval`; the loop
wraps the calling agent's link in an :class:`AnnouncedApprover` when someone
subscribes to :class:`~subagents.runtime.ApprovalRequested` or
:class:`~subagents.runtime.ApprovalDecided`, so a UI can show a call waiting
for a person, and a run nobody watches pays nothing.
"""

from __future__ import annotations

from typing import final

from subagents.runtime._events import ApprovalDecided, ApprovalRequested, Publisher
from subagents.tools import ApprovalDecision, ApprovalRequest, Approver

__all__ = ["AnnouncedApprover", "announced"]


@final
class AnnouncedApprover:
    """``inner``, with each request published before it is asked and its answer after."""

    __slots__ = ("inner", "publisher", "turn")

    def __init__(self, inner: Approver, publisher: Publisher, turn: int) -> None:
        self.inner = inner
        self.publisher = publisher
        self.turn = turn

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        """Publish the request, ask ``inner``, publish the decision, and return it."""
        publisher = self.publisher
        call = {"turn": self.turn, "tool_use_id": req.tool_use_id, "tool_name": req.tool_name}
        await publisher.publish(ApprovalRequested, summary=req.summary, **call)
        decision = await self.inner.request(req)
        await publisher.publish(
            ApprovalDecided,
            approved=decision.approved,
            timed_out=decision.timed_out,
            reason=decision.reason,
            **call,
        )
        return decision


def announced(approver: Approver | None, publisher: Publisher, turn: int) -> Approver | None:
    """``approver`` announced on ``publisher``'s bus when anyone wants approval events."""
    if approver is None or not (
        publisher.wants(ApprovalRequested) or publisher.wants(ApprovalDecided)
    ):
        return approver
    return AnnouncedApprover(approver, publisher, turn)
