"""Scripted-policy helpers: short builders of scripted replies, and two policies.

:func:`say`, :func:`call`, :func:`finish`, :func:`fail`, :func:`hang` and
:func:`malformed` build :class:`~subagents.runtime.Reply` values for a
:class:`~subagents.runtime.ScriptedProvider`; :func:`tool_loop` is a policy
that calls one tool for a number of turns and then answers, and
:class:`RecordingPolicy` wraps a policy and keeps what each request showed the
model. Re-exported by :mod:`subagents.testing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from subagents.runtime import (
    COMPLETE_TASK as _COMPLETE_TASK,
)
from subagents.runtime import (
    Message,
    ModelRequest,
    Reply,
    ReplyPolicy,
    ScriptedToolCall,
    provider_error,
)

__all__ = [
    "RecordingPolicy",
    "call",
    "fail",
    "finish",
    "hang",
    "malformed",
    "say",
    "tool_loop",
]


def say(value: str) -> Reply:
    """A final message."""
    return Reply(text=value)


def call(name: str, text: str = "", /, **arguments: Any) -> Reply:
    """A reply that calls the tool ``name`` with ``arguments``."""
    return Reply.call(name, text, **arguments)


def finish(text: str = "", /, **arguments: Any) -> Reply:
    """A reply that calls ``complete_task`` with ``arguments``."""
    return Reply.complete(text, **arguments)


def fail(
    error_type: str = "overloaded_error",
    message: str = "scripted failure",
    *,
    status: int | None = None,
    text: str = "",
) -> Reply:
    """A reply that raises the provider error of ``error_type`` (after streaming ``text``)."""
    return Reply(
        text=text, error=provider_error(message, error_type=error_type, status_code=status)
    )


def hang(text: str = "") -> Reply:
    """A reply that never finishes (after streaming ``text``)."""
    return Reply(text=text, hang=True)


def malformed(name: str, raw: str = '{"unterminated": ', text: str = "") -> Reply:
    """A reply whose call to ``name`` carries arguments that are not a JSON object."""
    return Reply(text=text, tool_calls=(ScriptedToolCall(name, raw),))


def tool_loop(
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    turns: int,
    final: str = "done",
    complete: bool = False,
) -> ReplyPolicy:
    """A policy: call ``tool`` with ``arguments`` for ``turns`` turns, then finish.

    It finishes with the final message ``final``, or (``complete``) by calling
    ``complete_task`` with ``result=final``. The replies are built once, so the
    policy costs one list lookup per turn.
    """
    calling = Reply(tool_calls=(ScriptedToolCall(tool, dict(arguments or {})),))
    ending = (
        Reply(tool_calls=(ScriptedToolCall(_COMPLETE_TASK, {"result": final}),))
        if complete
        else Reply(text=final)
    )

    def policy(request: ModelRequest) -> Reply:
        return calling if request.turn < turns else ending

    return policy


@final
class RecordingPolicy:
    """Wraps a policy and keeps, for each request, a copy of what the model was shown.

    ``requests`` holds ``(request, messages)`` pairs: the request and a snapshot
    of its messages at call time (the request's own list keeps growing). At
    most ``limit`` are kept (the oldest are dropped).
    """

    __slots__ = ("_limit", "_policy", "requests")

    def __init__(self, policy: ReplyPolicy, *, limit: int = 1000) -> None:
        self._policy = policy
        self._limit = limit
        self.requests: list[tuple[ModelRequest, tuple[Message, ...]]] = []

    def __call__(self, request: ModelRequest) -> Any:
        self.requests.append((request, tuple(request.messages)))
        if len(self.requests) > self._limit:
            del self.requests[0]
        return self._policy(request)
