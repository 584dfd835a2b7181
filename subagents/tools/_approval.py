"""Approval routing: a tool call that needs approval asks up the agent tree.

Each agent gets an :class:`ApprovalRouter` holding its
:class:`~subagents.agents.ApprovalMode` (the one its definition names) and its
parent's approver. A request starts at the calling agent's router and climbs
until a router answers by its mode (auto-approve or suppress) or the chain ends
at the root approver, usually a :class:`CallbackApprover` around the embedder's
callback or the CLI prompt. Every pending request is bounded by the agent's
deadline and by the router's own timeout, and ends as a denial when either
passes, so an approval can never hang an agent.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import attrs
import trio

from subagents.agents import ApprovalMode
from subagents.tools._config import APPROVAL_TIMEOUT_SECONDS

__all__ = [
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalRouter",
    "Approver",
    "CallbackApprover",
]


@attrs.frozen
class ApprovalRequest:
    """One tool call waiting for permission.

    ``summary`` is a short rendering of the arguments, for logs, and may be
    cut; ``arguments`` are the whole validated arguments, which an approver
    must show in full before it approves (empty when the request was built
    from a summary alone). ``deadline`` is on the Trio clock (``math.inf`` for
    none); ``route`` lists the agents the request has passed through, the
    caller first; ``tool_use_id`` is the call's id in the conversation, when
    it has one.
    """

    agent_id: str
    tool_name: str
    summary: str
    deadline: float = math.inf
    route: tuple[str, ...] = ()
    arguments: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    tool_use_id: str | None = None


@attrs.frozen
class ApprovalDecision:
    """The answer to an :class:`ApprovalRequest`."""

    approved: bool
    reason: str = ""
    timed_out: bool = False

    @classmethod
    def approve(cls, reason: str = "") -> ApprovalDecision:
        """An approval, with an optional note of who gave it."""
        return cls(approved=True, reason=reason)

    @classmethod
    def deny(cls, reason: str) -> ApprovalDecision:
        """A denial; ``reason`` is shown to the model."""
        return cls(approved=False, reason=reason)

    @classmethod
    def timeout(cls, reason: str) -> ApprovalDecision:
        """A denial because nobody answered before the deadline."""
        return cls(approved=False, reason=reason, timed_out=True)


class Approver(Protocol):
    """Anything that can answer an approval request."""

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        """Decide on ``req``; may wait, but must honour ``req.deadline``."""
        ...


#: The embedder's (or the CLI's) approval callback.
ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@attrs.frozen
class CallbackApprover:
    """The root of an approval chain: asks the embedder's callback.

    A callback that raises is treated as a denial, so a broken prompt cannot
    crash the agent; cancellation still propagates.
    """

    callback: ApprovalCallback

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        """Ask the callback, bounded by ``req.deadline``."""
        with trio.move_on_at(req.deadline):
            try:
                decision: object = await self.callback(req)
            except Exception as exc:
                return ApprovalDecision.deny(
                    f"the approval prompt failed ({type(exc).__name__}: {exc})"
                )
            if not isinstance(decision, ApprovalDecision):
                return ApprovalDecision.deny("the approval prompt gave no decision")
            return decision
        return ApprovalDecision.timeout("nobody answered the approval request before the deadline")


@attrs.frozen
class ApprovalRouter:
    """One agent's link in the approval chain.

    A request that reaches this router is answered by ``mode``: auto-approved,
    denied (suppress), or forwarded to ``parent``. The forwarded request is
    bounded by the earlier of its own deadline and ``timeout`` seconds from now.
    """

    agent_id: str
    mode: ApprovalMode = ApprovalMode.ROUTE_TO_PARENT
    parent: Approver | None = None
    timeout: float = APPROVAL_TIMEOUT_SECONDS

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        """Answer by mode, or forward up the tree until the deadline."""
        if self.mode is ApprovalMode.AUTO_APPROVE:
            return ApprovalDecision.approve(f"auto-approved by the policy of agent {self.agent_id}")
        if self.mode is ApprovalMode.SUPPRESS:
            return ApprovalDecision.deny(
                f"approval prompts are suppressed for agent {self.agent_id}, "
                "so calls that need approval are not run"
            )
        if self.parent is None:
            return ApprovalDecision.deny("no approver is configured above this agent")
        deadline = min(req.deadline, trio.current_time() + self.timeout)
        forwarded = attrs.evolve(req, deadline=deadline, route=(*req.route, self.agent_id))
        with trio.move_on_at(deadline):
            try:
                return await self.parent.request(forwarded)
            except Exception as exc:
                return ApprovalDecision.deny(
                    f"the approver above agent {self.agent_id} failed ({type(exc).__name__}: {exc})"
                )
        return ApprovalDecision.timeout(
            f"the approval request from agent {req.agent_id} was not answered before the deadline"
        )
