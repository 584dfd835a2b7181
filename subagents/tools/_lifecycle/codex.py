"""Codex's lifecycle tools: ``spawn_agent`` and the four that drive what it started.

``send_input``, ``wait``, ``close_agent`` and ``resume_agent`` work on agents
by id. Each asks the :class:`AgentHost` and writes its answer as compact JSON; a
refusal by the host comes back as a tool error (see
:mod:`subagents.tools._lifecycle.shared`).
"""

from __future__ import annotations

from typing import Final, final

import attrs

from subagents._exceptions import SubagentsError
from subagents.actors import NotFound, kind_of
from subagents.tools._context import ToolContext
from subagents.tools._lifecycle.args import (
    CloseAgentArgs,
    ResumeAgentArgs,
    SendInputArgs,
    SpawnAgentArgs,
    WaitArgs,
)
from subagents.tools._lifecycle.host import (
    CALLER_RESERVE_SECONDS,
    DEFAULT_AGENT_TYPE,
    FORK_NOTE,
    SEND_INPUT_WAIT_SECONDS,
    AgentHost,
    encode_json,
    fit_to_caller,
)
from subagents.tools._lifecycle.shared import (
    DATA_NOTE,
    EMPTY_MESSAGE,
    FLAGS,
    STARTING_FLAGS,
    STARTING_NOTE,
    is_blank,
    refusal,
    type_listing,
)
from subagents.tools._protocol import ToolResult

__all__ = ["CloseAgentTool", "ResumeAgentTool", "SendInputTool", "SpawnAgentTool", "WaitTool"]

#: At most this many ``not_found`` ids of one ``wait`` get a hint: each one looks
#: for a transcript on disk, and a model may pass any number of ids.
_MAX_HINTS: Final = 4


def _ms(seconds: float) -> str:
    return f"{round(seconds * 1000)}"


def _spawn_description(tool: SpawnAgentTool) -> str:
    return (
        "Spawn an agent to work on a well-scoped task in parallel with you. Returns at once "
        'with {"agent_id", "nickname"}; the agent keeps working. Use wait to collect its '
        "result, send_input to give it more instructions, close_agent when you no longer need "
        "it, and resume_agent to bring back one that was closed. The agent starts with a fresh "
        "context: it sees only message, not your conversation, so make message "
        "self-contained. It starts with a copy of your conversation only when fork_context is "
        f'true, or when fork_context is omitted and its type below is marked "{FORK_NOTE}"; '
        "fork_context=false always gives a fresh context. message must not be empty. "
        f"{STARTING_NOTE}\n\n"
        f"Available agent types (agent_type, default {DEFAULT_AGENT_TYPE}):\n"
        f"{type_listing(tool.host)}"
    )


def _wait_description(tool: WaitTool) -> str:
    bounds = tool.host.wait_bounds
    return (
        "Wait for agents you spawned. Returns as soon as any agent in ids reaches a final "
        "status (completed, errored or shutdown), or when timeout_ms passes (default "
        f"{_ms(bounds.default_seconds)} ms; values are clamped to {_ms(bounds.min_seconds)}-"
        f"{_ms(bounds.max_seconds)} ms; timeout_ms <= 0 is refused). A wait never runs into "
        "the end of your own run: one that would is cut to end "
        f'{CALLER_RESERVE_SECONDS:g} s before it, and "note" in the result says so. Returns '
        '{"status": {id: status}, "timed_out": bool}, where a status is {"kind": ...}: '
        "pending_init, running, completed (with result), errored (with message), shutdown, or "
        "not_found for an unknown id. For a not_found agent whose transcript exists (it lived "
        'in a process that has ended), "hints" says whether resume_agent brings it back. '
        f"{DATA_NOTE}"
    )


@final
@attrs.frozen
class SpawnAgentTool:
    """``spawn_agent``: start a child agent and return its id and nickname at once."""

    host: AgentHost
    description: str = attrs.field(
        init=False, default=attrs.Factory(_spawn_description, takes_self=True)
    )

    name = "spawn_agent"
    arguments_type = SpawnAgentArgs
    flags = STARTING_FLAGS

    async def call(self, args: SpawnAgentArgs, ctx: ToolContext, /) -> ToolResult:
        """Spawn through the host; a blank message is refused first (Codex's check)."""
        if is_blank(args.message):
            return ToolResult.error(EMPTY_MESSAGE)
        try:
            async with ctx.in_call_order():
                spawned = await self.host.spawn(
                    ctx,
                    agent_type=args.agent_type,
                    prompt=args.message,
                    model=args.model,
                    fork_context=args.fork_context,
                )
        except SubagentsError as exc:
            return refusal(exc, self.host, "agent_type")
        return ToolResult.ok(
            encode_json({"agent_id": spawned.agent_id, "nickname": spawned.nickname}),
            agent_id=spawned.agent_id,
            nickname=spawned.nickname,
            agent_type=spawned.agent_type,
        )


@final
@attrs.frozen
class SendInputTool:
    """``send_input``: give an agent a follow-up message, optionally interrupting it."""

    host: AgentHost

    name = "send_input"
    description = (
        "Send a message (not empty) to an agent you spawned. A finished agent starts a new "
        "turn with its context kept; interrupt=true stops what it is doing first. A working "
        "agent reads messages only between its turns: when its mailbox is full, this waits at "
        "most "
        f"{SEND_INPUT_WAIT_SECONDS:g} s for room, then fails saying the agent is busy (wait "
        "for it, or send with interrupt=true). Returns "
        '{"status": {"kind": ...}}, the agent\'s status after the message was queued.'
    )
    arguments_type = SendInputArgs
    flags = FLAGS

    async def call(self, args: SendInputArgs, ctx: ToolContext, /) -> ToolResult:
        """Send through the host; a blank message is refused first (Codex's check)."""
        if is_blank(args.message):
            return ToolResult.error(EMPTY_MESSAGE)
        try:
            status = await self.host.send_input(
                ctx, args.id, args.message, interrupt=args.interrupt
            )
        except SubagentsError as exc:
            return refusal(exc, self.host)
        return ToolResult.ok(encode_json({"status": status}), status=kind_of(status))


@final
@attrs.frozen
class WaitTool:
    """``wait``: block until any of some agents is final, within clamped bounds."""

    host: AgentHost
    description: str = attrs.field(
        init=False, default=attrs.Factory(_wait_description, takes_self=True)
    )

    name = "wait"
    arguments_type = WaitArgs
    flags = FLAGS

    async def call(self, args: WaitArgs, ctx: ToolContext, /) -> ToolResult:
        """Wait through the host, the timeout clamped into the host's bounds, then to the
        caller's own remaining run; ``timeout_ms <= 0`` is refused, as Codex does."""
        ids = list(dict.fromkeys(args.ids))
        if not ids:
            return ToolResult.error("wait needs at least one agent id in ids.")
        if args.timeout_ms is not None and args.timeout_ms <= 0:
            return ToolResult.error("timeout_ms must be greater than zero")
        timeout, note = fit_to_caller(self.host.wait_bounds.clamp_ms(args.timeout_ms), ctx)
        try:
            result = await self.host.wait(ctx, ids, timeout=timeout)
        except SubagentsError as exc:
            return refusal(exc, self.host)
        answer: dict[str, object] = {"status": result.statuses, "timed_out": result.timed_out}
        unknown = [i for i, status in result.statuses.items() if isinstance(status, NotFound)]
        hints = {
            agent_id: hint
            for agent_id in unknown[:_MAX_HINTS]
            if (hint := self.host.explain_not_found(ctx, agent_id)) is not None
        }
        if hints:
            answer["hints"] = hints
        if note is not None:
            answer["note"] = note
        return ToolResult.ok(
            encode_json(answer),
            timed_out=result.timed_out,
            timeout_seconds=timeout,
        )


@final
@attrs.frozen
class CloseAgentTool:
    """``close_agent``: close an agent and its descendants; report the status it had."""

    host: AgentHost

    name = "close_agent"
    description = (
        "Close an agent you spawned (and any agents it spawned), freeing its slot. Each agent "
        "closed ends shutdown, a finished one too, and you get no 'finished' notice for it. "
        'Returns {"previous_status": {"kind": ...}}, the status it had before. Closing an '
        "agent that is already closed is harmless; resume_agent brings it back."
    )
    arguments_type = CloseAgentArgs
    flags = FLAGS

    async def call(self, args: CloseAgentArgs, ctx: ToolContext, /) -> ToolResult:
        """Close through the host."""
        try:
            previous = await self.host.close(ctx, args.id)
        except SubagentsError as exc:
            return refusal(exc, self.host)
        return ToolResult.ok(
            encode_json({"previous_status": previous}), previous_status=kind_of(previous)
        )


@final
@attrs.frozen
class ResumeAgentTool:
    """``resume_agent``: bring back a finished or closed agent, with an optional message."""

    host: AgentHost

    name = "resume_agent"
    description = (
        "Bring back an agent that finished or was closed, with its context, id and nickname, "
        "and the agents below it that were open when it stopped. "
        "You may resume only agents of your own session lineage: agents of this session, "
        "and agents of an earlier session that the user resumed into this one (such as your "
        "own children from before your process ended); an agent of an unrelated session is "
        "refused, and only the user can bring it back (subagents resume ID). With message, "
        "it starts working on it (an agent still open gets message as input, waiting at most "
        f"{SEND_INPUT_WAIT_SECONDS:g} s for room if it is busy). Returns "
        '{"status": {"kind": ...}}, its status once back.'
    )
    arguments_type = ResumeAgentArgs
    flags = FLAGS

    async def call(self, args: ResumeAgentArgs, ctx: ToolContext, /) -> ToolResult:
        """Resume through the host; a blank message is no message (the agent only comes back)."""
        message = None if args.message is None or is_blank(args.message) else args.message
        try:
            status = await self.host.resume(ctx, args.id, message)
        except SubagentsError as exc:
            return refusal(exc, self.host)
        return ToolResult.ok(encode_json({"status": status}), status=kind_of(status))
