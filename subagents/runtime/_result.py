"""What a run of an agent ends with: its terminate reason, its output and its counters."""

from __future__ import annotations

import enum
import json
from typing import Any, Literal

import msgspec

from subagents.runtime._providers.base import Usage

__all__ = ["AgentResult", "RunStatus", "TerminateReason"]


class TerminateReason(enum.Enum):
    """Why a run ended."""

    #: The task was completed: a final message, or a valid ``complete_task``.
    GOAL = "goal"
    #: ``max_time_seconds`` passed (and the grace turn did not complete the task).
    TIMEOUT = "timeout"
    #: ``max_turns`` were used (and the grace turn did not complete the task).
    MAX_TURNS = "max_turns"
    #: The run was stopped from outside (close, cancel).
    ABORTED = "aborted"
    #: The provider or the runtime failed.
    ERROR = "error"
    #: The agent had to call ``complete_task`` and ended its turn without it.
    NO_COMPLETE_TASK_CALL = "no_complete_task_call"


RunStatus = Literal["success", "failure", "aborted"]
"""``success`` only for :attr:`TerminateReason.GOAL`; ``aborted`` when stopped from outside."""

_STATUS: dict[TerminateReason, RunStatus] = {
    TerminateReason.GOAL: "success",
    TerminateReason.ABORTED: "aborted",
}

_DESCRIBE: dict[TerminateReason, str] = {
    TerminateReason.GOAL: "completed its task",
    TerminateReason.TIMEOUT: "ran out of time before completing its task",
    TerminateReason.MAX_TURNS: "used all its turns before completing its task",
    TerminateReason.ABORTED: "was stopped before completing its task",
    TerminateReason.ERROR: "failed",
    TerminateReason.NO_COMPLETE_TASK_CALL: "ended its turn without calling complete_task",
}


class AgentResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """The outcome of one run, as it is reported and written to the transcript.

    ``text`` is the final message (or the ``complete_task`` result text);
    ``output`` the structured output validated against the definition's output
    schema (``None`` without one). ``grace`` is the limit (``timeout`` or
    ``max_turns``) that started a grace turn, if one was played: a run that
    completed in its grace turn ends with ``goal`` and says so here. A run
    stopped by a limit is never a success. ``turns`` counts the model calls
    made (the grace turn and an interrupted one included), ``tool_uses`` the
    tool calls run (``complete_task`` is the completion signal, not a use),
    ``duration`` is in seconds on the Trio clock.
    """

    terminate_reason: TerminateReason
    text: str | None = None
    output: Any = None
    turns: int = 0
    tool_uses: int = 0
    usage: Usage = Usage()
    duration: float = 0.0
    model: str = ""
    grace: Literal["timeout", "max_turns"] | None = None
    error: str | None = None

    @property
    def status(self) -> RunStatus:
        """``success``, ``failure`` or ``aborted``."""
        return _STATUS.get(self.terminate_reason, "failure")

    @property
    def succeeded(self) -> bool:
        """Whether the run reached its goal."""
        return self.terminate_reason is TerminateReason.GOAL

    def report(self) -> str | None:
        """What the agent hands back: its structured output as JSON, else its text."""
        if self.output is not None:
            return json.dumps(self.output, ensure_ascii=False, sort_keys=True)
        return self.text

    def describe(self) -> str:
        """One sentence for logs and error statuses."""
        what = f"{self.terminate_reason.value}: the agent {_DESCRIBE[self.terminate_reason]}"
        counters = f"after {self.turns} turns and {self.tool_uses} tool uses"
        if self.grace is not None and self.succeeded:
            counters += f", in its grace turn after a {self.grace.replace('_', ' ')} limit"
        text = f"{what} {counters}"
        if self.error:
            text += f" ({self.error})"
        return text
