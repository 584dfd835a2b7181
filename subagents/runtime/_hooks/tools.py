"""PreToolUse and PostToolUse hooks around an agent's tools.

Each tool of an agent that has tool hooks (global or its own) is wrapped in a
:class:`HookedTool`, a proxy with the same name, description, arguments and
filter flags. A call through it fires, in Claude Code's order:

1. ``PreToolUse`` with the validated arguments; an exit code 2 (or
   :meth:`~subagents.runtime.HookReply.block`) blocks the call: the model gets
   a tool error carrying the hook's stderr, and the tool never runs;
2. the tool itself, through the usual dispatch, so a tool that needs approval
   asks for it only once no hook has blocked it;
3. ``PostToolUse`` with the tool's response; exit-2 feedback is appended to
   the result the model reads.

Hook failures (timeouts, crashes, other exit codes) never reach the model;
they go to :attr:`HookSite.report`, which logs them. Hooks are bounded by their
own timeouts and by the calling agent's deadline. An agent without tool hooks
gets its tools unwrapped: nothing is paid per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, final

import attrs
import msgspec

from subagents.runtime._hooks.commands import HookEvent, HookPayload
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import Hook, HookOutcome
from subagents.tools import Tool, ToolContext, ToolFlags, ToolResult, dispatch

__all__ = ["HookSite", "HookedTool", "hook_tools"]

_FEEDBACK_HEADER: Final = "[PostToolUse hook feedback]"


@attrs.frozen
class HookSite:
    """The agent hooks fire for: its hooks, and the facts every payload carries.

    ``transcript_path`` is the parent's transcript (the agent's own for a
    top-level agent), ``agent_transcript_path`` the agent's own: see
    :class:`~subagents.runtime.HookPayload`. ``report`` receives every outcome
    (the runtime logs its ``user_messages``). ``ready``, when given, is awaited
    before any hook fires: the agent's transcript written so far, so a hook that
    reads the file finds every line.
    """

    runner: HookRunner
    agent_hooks: tuple[Hook, ...]
    agent_id: str
    agent_type: str
    parent_id: str | None
    depth: int
    nickname: str
    session_id: str
    cwd: str
    transcript_path: str | None
    agent_transcript_path: str | None
    report: Callable[[HookOutcome], object] = attrs.field(eq=False, repr=False)
    ready: Callable[[], Awaitable[None]] | None = attrs.field(default=None, eq=False, repr=False)

    def wants(self, event: HookEvent) -> bool:
        """Whether any hook (global or the agent's) is registered for ``event``."""
        return self.runner.has_hooks(event, self.agent_hooks)

    def payload(self, event: HookEvent, **fields: Any) -> HookPayload:
        """The payload of ``event`` for this agent, with ``fields`` (tool name, prompt...) set."""
        return HookPayload(
            hook_event_name=event.value,
            agent_id=self.agent_id,
            agent_type=self.agent_type,
            parent_id=self.parent_id,
            depth=self.depth,
            session_id=self.session_id,
            cwd=self.cwd,
            transcript_path=self.transcript_path,
            agent_transcript_path=self.agent_transcript_path,
            **fields,
        )

    async def fire(self, event: HookEvent, payload: HookPayload, deadline: float) -> HookOutcome:
        """Fire ``event`` (once the agent's transcript is ready) and report its outcome."""
        if self.ready is not None:
            await self.ready()
        outcome = await self.runner.fire(
            event, payload, agent_hooks=self.agent_hooks, deadline=deadline, nickname=self.nickname
        )
        if outcome.results:
            self.report(outcome)
        return outcome


@final
class HookedTool:
    """A tool with the agent's ``PreToolUse`` and ``PostToolUse`` hooks around its calls.

    Its flags are the inner tool's, except that approval is asked by the inner
    dispatch (after ``PreToolUse``), not before the proxy is called.
    """

    __slots__ = ("_post", "_pre", "flags", "inner", "site")

    def __init__(self, inner: Tool, site: HookSite) -> None:
        self.inner = inner
        self.site = site
        self.flags: ToolFlags = attrs.evolve(inner.flags, needs_approval=False)
        self._pre = site.wants(HookEvent.PRE_TOOL_USE)
        self._post = site.wants(HookEvent.POST_TOOL_USE)

    def __repr__(self) -> str:
        return f"<HookedTool {self.inner.name}>"

    @property
    def name(self) -> str:
        """The inner tool's name."""
        return self.inner.name

    @property
    def description(self) -> str:
        """The inner tool's description."""
        return self.inner.description

    @property
    def arguments_type(self) -> type[msgspec.Struct]:
        """The inner tool's arguments."""
        return self.inner.arguments_type

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        """``PreToolUse``, the inner call (with its approval), then ``PostToolUse``."""
        site = self.site
        tool_input = msgspec.to_builtins(args)
        if self._pre:
            outcome = await site.fire(
                HookEvent.PRE_TOOL_USE,
                site.payload(
                    HookEvent.PRE_TOOL_USE,
                    tool_use_id=ctx.tool_use_id,
                    tool_name=self.name,
                    tool_input=tool_input,
                ),
                ctx.deadline,
            )
            if outcome.blocked:
                return ToolResult.error(
                    outcome.reason or f"The call was blocked by a PreToolUse hook ({self.name}).",
                    blocked_by_hook=True,
                )
        result = await dispatch(self.inner, tool_input, ctx)
        if not self._post:
            return result
        outcome = await site.fire(
            HookEvent.POST_TOOL_USE,
            site.payload(
                HookEvent.POST_TOOL_USE,
                tool_use_id=ctx.tool_use_id,
                tool_name=self.name,
                tool_input=tool_input,
                tool_response={"content": result.content, "is_error": result.is_error},
            ),
            ctx.deadline,
        )
        feedback = outcome.feedback_text
        if feedback is None:
            return result
        return ToolResult(
            content=f"{result.content}\n\n{_FEEDBACK_HEADER}\n{feedback}",
            is_error=result.is_error,
            details={**result.details, "hook_feedback": True},
        )


def hook_tools(tools: Sequence[Tool], site: HookSite) -> tuple[Tool, ...]:
    """``tools``, each wrapped in a :class:`HookedTool` if the agent has any tool hook."""
    if not (site.wants(HookEvent.PRE_TOOL_USE) or site.wants(HookEvent.POST_TOOL_USE)):
        return tuple(tools)
    return tuple(HookedTool(tool, site) for tool in tools)
