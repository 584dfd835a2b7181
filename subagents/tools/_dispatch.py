"""Running one tool call: validate, ask for approval, call, and contain failures.

The result's text is masked (:attr:`ToolContext.redactor`: the values of the
runtime's secret environment variables) before it is capped and returned, so
no caller (a hook, the transcript, the model) sees a secret a tool printed.
Whatever goes wrong on the way (bad arguments, a denied or timed-out approval, a
:class:`ToolError` or even a bug inside the tool) comes back as an error
:class:`ToolResult` so the agent keeps running. ``trio.Cancelled`` and
``KeyboardInterrupt`` are never caught: they are not ``Exception``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import trio

from subagents.tools._approval import ApprovalDecision, ApprovalRequest
from subagents.tools._config import MAX_RESULT_CHARS
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolArgumentsError, ToolError
from subagents.tools._protocol import Tool, ToolResult
from subagents.tools._validation import decode_arguments

__all__ = ["ToolArguments", "dispatch", "not_available", "summarize_arguments"]

#: What a model's tool call carries: a JSON text or an already-parsed object.
ToolArguments = str | bytes | Mapping[str, Any] | None

_SUMMARY_CHARS = 2000


def not_available(name: str, why: str = "") -> ToolResult:
    """The error a model gets for naming a tool it was not given."""
    suffix = f" {why}" if why else ""
    return ToolResult.error(f"Tool '{name}' is not available to this agent.{suffix}")


async def dispatch(
    tool: Tool,
    arguments: ToolArguments,
    ctx: ToolContext,
    *,
    max_result_chars: int = MAX_RESULT_CHARS,
) -> ToolResult:
    """Validate ``arguments``, obtain approval if the tool needs it, and run the tool."""
    try:
        args = decode_arguments(tool.name, tool.arguments_type, arguments)
    except ToolArgumentsError as exc:
        return ToolResult.error(str(exc))
    if tool.flags.needs_approval:
        decision = await _ask_approval(tool, args, ctx)
        if not decision.approved:
            return _denied(tool.name, decision)
    try:
        result: object = await tool.call(args, ctx)
    except ToolError as exc:
        return _masked(ToolResult.error(str(exc)), ctx)
    except Exception as exc:
        return _masked(
            ToolResult.error(
                f"Tool '{tool.name}' failed unexpectedly ({type(exc).__name__}: {exc}). "
                "This is a bug in the tool, not in your arguments; try another approach.",
                exception=type(exc).__name__,
            ),
            ctx,
        )
    if not isinstance(result, ToolResult):
        return ToolResult.error(f"Tool '{tool.name}' returned no result.")
    return _cap(_masked(result, ctx), max_result_chars)


def summarize_arguments(args: msgspec.Struct) -> str:
    """A short JSON rendering of validated arguments, for approval prompts."""
    text = msgspec.json.encode(args).decode("utf-8", errors="replace")
    if len(text) > _SUMMARY_CHARS:
        text = text[:_SUMMARY_CHARS] + f"... ({len(text) - _SUMMARY_CHARS} more characters)"
    return text


async def _ask_approval(tool: Tool, args: msgspec.Struct, ctx: ToolContext) -> ApprovalDecision:
    if ctx.approver is None:
        return ApprovalDecision.deny("no approval channel is configured for this agent")
    request = ApprovalRequest(
        agent_id=ctx.agent_id,
        tool_name=tool.name,
        summary=summarize_arguments(args),
        deadline=ctx.deadline,
        arguments=msgspec.to_builtins(args),
        tool_use_id=ctx.tool_use_id,
    )
    with trio.move_on_at(request.deadline):
        try:
            return await ctx.approver.request(request)
        except Exception as exc:
            return ApprovalDecision.deny(f"the approver failed ({type(exc).__name__}: {exc})")
    return ApprovalDecision.timeout("the agent's deadline passed while the approval was pending")


def _denied(name: str, decision: ApprovalDecision) -> ToolResult:
    if decision.timed_out:
        text = (
            f"The approval request for '{name}' timed out ({decision.reason}); "
            "the call was not run."
        )
    else:
        reason = decision.reason or "the user declined"
        text = f"Permission to use '{name}' was denied ({reason}); the call was not run."
    return ToolResult.error(text, approval_denied=True, approval_timed_out=decision.timed_out)


def _masked(result: ToolResult, ctx: ToolContext) -> ToolResult:
    """``result`` with the runtime's secret values masked in its text (before any cap cuts one)."""
    content = ctx.redactor.redact(result.content)
    if content == result.content:
        return result
    return ToolResult(
        content=content, is_error=result.is_error, details={**result.details, "redacted": True}
    )


def _cap(result: ToolResult, limit: int) -> ToolResult:
    if len(result.content) <= limit:
        return result
    omitted = len(result.content) - limit
    return ToolResult(
        content=result.content[:limit] + f"\n[result truncated: {omitted} more characters]",
        is_error=result.is_error,
        details={**result.details, "result_truncated": True},
    )
