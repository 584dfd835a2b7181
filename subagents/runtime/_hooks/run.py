"""``SubagentStart`` and ``SubagentStop`` around one agent run, each fired exactly once.

:func:`subagent_run_hooks` wraps a run in an ``async with`` block that fires
the start hooks on entry and the stop hooks on every way out, shielded from
an outer cancellation; :class:`SubagentRunHooks` is what it learned. A stop
hook that blocks (exit 2 with stderr, or ``{"decision": "block", "reason":
...}`` on stdout, as in Claude Code's hooks reference,
https://code.claude.com/docs/en/hooks#subagentstop) sends the agent on with
the reason as its next input (at most :data:`MAX_STOP_BLOCKS` times).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final, final

import msgspec
import trio

from subagents.runtime._hooks.commands import HookEvent, HookPayload
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import Hook, HookOutcome

__all__ = [
    "DEFAULT_STOP_HOOKS_GRACE",
    "MAX_STOP_BLOCKS",
    "SubagentRunHooks",
    "subagent_run_hooks",
]

#: Seconds ``SubagentStop`` hooks get when the run ends by cancellation or Ctrl-C.
DEFAULT_STOP_HOOKS_GRACE = 5.0

#: How many times ``SubagentStop`` hooks may block one activation's stop
#: before the agent stops anyway: a hook that always blocks cannot loop forever.
MAX_STOP_BLOCKS = 3

#: What a firing with no hook decides: one value each, shared by every agent (frozen).
_NOTHING_AT_START: Final = HookOutcome(HookEvent.SUBAGENT_START)
_NOTHING_AT_STOP: Final = HookOutcome(HookEvent.SUBAGENT_STOP)


@final
class SubagentRunHooks:
    """What :func:`subagent_run_hooks` learned: ``start`` at entry, ``stop`` after exit.

    :attr:`context` is the ``SubagentStart`` text to add to the agent's context.
    ``stop`` is ``None`` until the ``async with`` block has been left, or until
    :meth:`finish` fired the stop hooks for a run that ended normally.
    """

    __slots__ = ("_fire_stop", "blocked", "start", "stop")

    def __init__(self, fire_stop: Callable[[], Awaitable[HookOutcome]] | None = None) -> None:
        self.start = _NOTHING_AT_START
        self.stop: HookOutcome | None = None
        self.blocked = 0
        self._fire_stop = fire_stop

    # With no hook registered, subagent_run_hooks gives this object itself as the block's
    # context manager: no wrapper an agent keeps while it waits, and nothing fired.
    async def __aenter__(self) -> SubagentRunHooks:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.stop is None:
            self.stop = _NOTHING_AT_STOP

    async def finish(self) -> HookOutcome | None:
        """Fire ``SubagentStop`` now, for a run that ended normally.

        Returns the outcome when a hook blocked the stop (exit 2, or JSON
        ``decision: "block"``): the agent should go on with its ``reason``, and
        the stop hooks fire again
        when it next ends (with ``stop_hook_active`` set). After
        :data:`MAX_STOP_BLOCKS` blocks, or when nothing blocked, it returns
        ``None``: the agent stops, and leaving the ``async with`` block fires
        nothing more.
        """
        if self._fire_stop is None or self.stop is not None:
            return None
        self.stop = outcome = await self._fire_stop()
        if not outcome.blocked or outcome.reason is None or self.blocked >= MAX_STOP_BLOCKS:
            return None
        self.blocked += 1
        self.stop = None
        return outcome

    def __repr__(self) -> str:
        return f"<SubagentRunHooks start={len(self.start.results)} stop={self.stop is not None}>"

    @property
    def context(self) -> str | None:
        """``SubagentStart`` context for the agent (plain stdout or JSON ``additionalContext``)."""
        return self.start.feedback_text


def _together(stop: HookOutcome, main: HookOutcome) -> HookOutcome:
    """A top-level agent's ``SubagentStop`` and ``Stop`` outcomes as one: either may block."""
    reasons = [r for r in (stop.reason, main.reason) if r]
    return HookOutcome(
        stop.event,
        stop.results + main.results,
        blocked=stop.blocked or main.blocked,
        reason="\n\n".join(reasons) if reasons else None,
        feedback=stop.feedback + main.feedback,
        user_messages=stop.user_messages + main.user_messages,
    )


def subagent_run_hooks(
    runner: HookRunner,
    payload_factory: Callable[[HookEvent], HookPayload],
    *,
    agent_hooks: Sequence[Hook] = (),
    nickname: str = "",
    stop_grace: float = DEFAULT_STOP_HOOKS_GRACE,
    ready: Callable[[], Awaitable[None]] | None = None,
) -> contextlib.AbstractAsyncContextManager[SubagentRunHooks]:
    """Fire ``SubagentStart`` once on entry and ``SubagentStop`` once each time the agent stops.

    The agent stops once, unless a stop hook blocks it: :meth:`SubagentRunHooks.finish`
    fires the stop hooks early for a run that ended normally, and each block
    (at most :data:`MAX_STOP_BLOCKS`) lets the agent go on and stop again.

    ``payload_factory(event)`` builds each payload when it is needed (never
    when no hook is registered for the event: then hooks cost nothing), so the
    ``SubagentStop`` one can carry the agent's final text. For a top-level
    agent (its payload has no ``parent_id``) the ``Stop`` hooks fire after the
    ``SubagentStop`` ones, with the same payload, as Claude Code fires ``Stop``
    for its main agent; a block by either sends the agent on. ``SubagentStop``
    fires on every way out (normal, exception, cancellation, even a cancelled
    ``SubagentStart``) inside a shielded scope, so an outer cancellation cannot
    cut it short; when the run ends by cancellation or ``KeyboardInterrupt``
    its hooks get at most ``stop_grace`` seconds, otherwise their own timeouts.
    With none of those hooks registered (a runner's hooks are fixed when it is
    made) the block costs nothing: no scope, no closure, nothing fired.
    ``ready``, when given, is awaited before hooks fire (the agent's transcript
    written so far: :class:`~._hooks.tools.HookSite`); not before the stop
    hooks of a run ended by cancellation, which have ``stop_grace``.
    """
    for event in _RUN_EVENTS:
        if runner.has_hooks(event, agent_hooks):
            return _run_hooks(runner, payload_factory, agent_hooks, nickname, stop_grace, ready)
    return SubagentRunHooks()  # no hook: its own context manager, which fires nothing


#: The events :func:`subagent_run_hooks` fires.
_RUN_EVENTS: Final = (HookEvent.SUBAGENT_START, HookEvent.SUBAGENT_STOP, HookEvent.STOP)


@contextlib.asynccontextmanager
async def _run_hooks(
    runner: HookRunner,
    payload_factory: Callable[[HookEvent], HookPayload],
    agent_hooks: Sequence[Hook],
    nickname: str,
    stop_grace: float,
    ready: Callable[[], Awaitable[None]] | None,
) -> AsyncIterator[SubagentRunHooks]:
    async def fire_stop(urgent: bool = False) -> HookOutcome:
        if not (
            runner.has_hooks(HookEvent.SUBAGENT_STOP, agent_hooks)
            or runner.has_hooks(HookEvent.STOP, agent_hooks)
        ):
            return _NOTHING_AT_STOP  # no hook: no payload to build
        if ready is not None and not urgent:
            await ready()
        deadline = trio.current_time() + stop_grace if urgent else math.inf
        payload = payload_factory(HookEvent.SUBAGENT_STOP)
        if run.blocked:
            payload = msgspec.structs.replace(payload, stop_hook_active=True)
        outcome = await runner.fire(
            HookEvent.SUBAGENT_STOP,
            payload,
            agent_hooks=agent_hooks,
            deadline=deadline,
            nickname=nickname,
        )
        if payload.parent_id is not None or not runner.has_hooks(HookEvent.STOP, agent_hooks):
            return outcome
        main = await runner.fire(
            HookEvent.STOP,
            msgspec.structs.replace(payload, hook_event_name=HookEvent.STOP.value),
            agent_hooks=agent_hooks,
            deadline=deadline,
            nickname=nickname,
        )
        return _together(outcome, main)

    run = SubagentRunHooks(fire_stop)

    async def stop(urgent: bool) -> None:
        if run.stop is None:  # not fired already by finish()
            with trio.CancelScope(shield=True):
                run.stop = await fire_stop(urgent)

    try:
        if runner.has_hooks(HookEvent.SUBAGENT_START, agent_hooks):
            if ready is not None:
                await ready()
            run.start = await runner.fire(
                HookEvent.SUBAGENT_START,
                payload_factory(HookEvent.SUBAGENT_START),
                agent_hooks=agent_hooks,
                nickname=nickname,
            )
        else:
            run.start = _NOTHING_AT_START
        yield run
    except BaseException as exc:
        # Re-raised below: this only learns how the run ended.
        cancelled = trio.current_effective_deadline() == -math.inf
        await stop(cancelled or isinstance(exc, KeyboardInterrupt))
        raise
    else:
        await stop(False)
