"""Errors raised by the actor kernel.

Every message says what happened and what to do next, because these errors are
shown to people and, through the lifecycle tools, to models::

    SubagentsError
    └── ActorError
        ├── InvalidConfiguration  (also a ValueError)
        ├── AgentNotFound
        ├── AgentClosed
        ├── MailboxFull
        ├── AgentLimitReached
        ├── DepthLimitReached
        ├── AgentStartFailed
        ├── NoReply
        ├── ReplyTimeout          (also a TimeoutError)
        ├── SupervisorClosed
        └── IllegalTransition     (a bug in the caller or in the kernel)
"""

from __future__ import annotations

from subagents._exceptions import SubagentsError

__all__ = [
    "ActorError",
    "AgentClosed",
    "AgentLimitReached",
    "AgentNotFound",
    "AgentStartFailed",
    "DepthLimitReached",
    "IllegalTransition",
    "InvalidConfiguration",
    "MailboxFull",
    "NoReply",
    "ReplyTimeout",
    "SupervisorClosed",
]


class ActorError(SubagentsError):
    """Base class of the errors raised by :mod:`subagents.actors`."""


class InvalidConfiguration(ActorError, ValueError):
    """A supervisor or bus setting is out of range; raised when it is configured."""


class AgentNotFound(ActorError, LookupError):
    """No agent with this id was ever known to this supervisor."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"No agent with id {agent_id!r}. Use an id that spawning returned, or resume "
            "the agent if it belongs to an earlier session."
        )


class AgentClosed(ActorError):
    """The agent exists (or existed) but is closed and takes no more messages."""

    def __init__(self, agent_id: str, nickname: str | None = None) -> None:
        self.agent_id = agent_id
        who = f"{nickname} ({agent_id})" if nickname else agent_id
        super().__init__(
            f"Agent {who} is closed and takes no more input. Resume it to continue "
            "its work, or spawn a new agent."
        )


class MailboxFull(ActorError):
    """``send_nowait`` found the mailbox at capacity; ``send`` would have waited."""

    def __init__(self, agent_id: str, capacity: int) -> None:
        self.agent_id = agent_id
        self.capacity = capacity
        super().__init__(
            f"The mailbox of agent {agent_id} is full ({capacity} messages). Use send(), "
            "which waits for room, or retry once the agent has caught up."
        )


class AgentLimitReached(ActorError):
    """Starting (or restarting) an agent would exceed ``max_threads``."""

    def __init__(self, max_threads: int) -> None:
        self.max_threads = max_threads
        super().__init__(
            f"Agent limit reached (max_threads={max_threads}): that many agents are "
            "already running. Wait for one to finish or close one, then try again."
        )


class DepthLimitReached(ActorError):
    """A spawn would place the new agent deeper than ``max_depth``."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        super().__init__(
            f"Agent depth limit reached (max_depth={max_depth}). Solve the task yourself."
        )


class AgentStartFailed(ActorError):
    """The agent's start-up code raised before the agent began running."""

    def __init__(self, agent_id: str, nickname: str, cause: BaseException) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"Agent {nickname} ({agent_id}) failed to start: {cause!r}. Fix the cause "
            "and spawn it again."
        )


class NoReply(ActorError):
    """The agent asked with ``ask`` ended or was closed before it replied."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"Agent {agent_id} finished without replying to the request. Check its "
            "status; send the request again if it was revived."
        )


class ReplyTimeout(ActorError, TimeoutError):
    """``ask`` reached its deadline before the agent replied."""

    def __init__(self, agent_id: str, timeout: float) -> None:
        self.agent_id = agent_id
        self.timeout = timeout
        super().__init__(
            f"Agent {agent_id} did not reply within {timeout:g} s. It may be busy: "
            "check its status, or ask again with a longer timeout."
        )


class SupervisorClosed(ActorError):
    """The supervisor is shutting down (or was never opened) and takes no new work."""

    def __init__(self) -> None:
        super().__init__(
            "The supervisor is closed or shutting down: no agent can be spawned or revived. "
            "Open a new one with open_supervisor()."
        )


class IllegalTransition(ActorError):
    """A status change that the transition table forbids; always a bug."""

    def __init__(self, agent_id: str, old: str, new: str) -> None:
        self.agent_id = agent_id
        super().__init__(f"Agent {agent_id}: illegal status transition {old} -> {new}.")
