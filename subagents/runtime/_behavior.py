"""The agent loop as a kernel actor: one run per activation, stopped promptly by ``close``.

:func:`agent_behavior` wraps :func:`run_agent` in an actor behavior. While a
run is under way, a watcher task reads the actor's mailbox: follow-up input
(a ``str``, a :class:`Message`, a child's :class:`ChildFinished` notice, or a
:class:`Request` whose payload is text) is queued for the next turn boundary,
and the kernel's stop request (``close``: the mailbox closes and ``receive``
raises :class:`AgentClosed`) aborts the run at once, so a stalled model call
ends within the close ladder's first step instead of waiting for its cancel.

The actor's status follows the run: ``goal`` completes it with the report (the
structured output as JSON, or the text); a provider failure errors it with the
provider's own typed error; any other ending errors it with
:class:`AgentRunFailed`, whose message says which limit stopped it; a closed
agent ends Shutdown (the kernel's rule). When the agent is sent input after a
run, the kernel revives it and the next run continues the same conversation.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias, final

import trio

from subagents._exceptions import SubagentsError
from subagents.actors import ActorContext, AgentClosed, Behavior, ChildFinished, Request, kind_of
from subagents.runtime._config import INBOX_CAPACITY
from subagents.runtime._events import Publisher
from subagents.runtime._exceptions import AgentRunFailed, ProviderError
from subagents.runtime._loop import AgentSpec, RunControl, run_agent
from subagents.runtime._messages import Conversation, Message, Origin
from subagents.runtime._result import AgentResult, TerminateReason

__all__ = ["ResultCallback", "agent_behavior", "as_input"]

ResultCallback: TypeAlias = Callable[[AgentResult], Awaitable[None] | None]
"""Called with every run's result before the actor's status changes."""

#: How long a result callback may take when the run was cancelled from outside.
_CALLBACK_SECONDS_WHEN_CANCELLED: Final = 1.0


def as_input(message: object) -> Message:
    """The conversation message for something put in an agent's mailbox."""
    if isinstance(message, Message):
        return message
    if isinstance(message, ChildFinished):
        status = kind_of(message.status)
        detail = getattr(message.status, "result", None) or getattr(message.status, "message", "")
        text = f"Agent {message.nickname} ({message.agent_id}) finished: {status}."
        if detail:
            text += f"\n\n{detail}"
        return Message.user(text, origin=Origin.NOTICE)
    return Message.user(str(message), origin=Origin.INPUT)


def agent_behavior(
    spec: AgentSpec,
    conversation: Conversation,
    *,
    on_result: ResultCallback | None = None,
    inbox_capacity: int = INBOX_CAPACITY,
) -> Behavior:
    """An actor behavior that runs the agent described by ``spec`` on ``conversation``.

    The conversation must hold the task already (see
    :func:`~subagents.runtime.prepare_task`); each later activation (follow-up
    input) appends the input and runs again. ``on_result`` sees every run's
    result, including that of a run aborted or cancelled by ``close``.
    """
    return _AgentActor(spec, conversation, on_result, inbox_capacity).behave


@final
class _AgentActor:
    __slots__ = ("_capacity", "_on_result", "_requests", "_started", "conversation", "spec")

    def __init__(
        self,
        spec: AgentSpec,
        conversation: Conversation,
        on_result: ResultCallback | None,
        capacity: int,
    ) -> None:
        self.spec = spec
        self.conversation = conversation
        self._on_result = on_result
        self._capacity = capacity
        self._started = False
        self._requests: list[Request] = []

    async def behave(self, ctx: ActorContext) -> str | None:
        if self._started:
            self._take_mailbox(ctx)
        self._started = True
        publisher = Publisher.for_actor(ctx)
        while True:
            control = RunControl(inbox_capacity=self._capacity)
            watcher = _Watcher(self, ctx, control)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(watcher.watch)
                    finished = False
                    try:
                        result = await run_agent(
                            self.spec, self.conversation, publisher=publisher, control=control
                        )
                        finished = True
                    finally:
                        watcher.dismiss(nursery, cancel=not finished)
            except BaseException:  # report the recorded result, then re-raise: never swallowed
                if control.result is not None:
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(_CALLBACK_SECONDS_WHEN_CANCELLED):
                            await self._deliver(control.result)
                self._answer_requests(control.result)
                raise
            await self._deliver(result)
            leftovers = control.take_inputs()
            if leftovers and not control.aborted:
                self.conversation.extend(leftovers)
                continue
            self._answer_requests(result)
            break
        if result.terminate_reason is TerminateReason.GOAL:
            return result.report()
        if result.terminate_reason is TerminateReason.ERROR and isinstance(
            control.error, ProviderError
        ):
            raise control.error
        raise AgentRunFailed(result)

    def _take_mailbox(self, ctx: ActorContext) -> None:
        """Move what revived the actor (and whatever queued behind it) into the conversation."""
        while True:
            try:
                message = ctx.receive_nowait()
            except (trio.WouldBlock, AgentClosed):
                return
            self.conversation.append(self._input(message))

    def _input(self, message: Any) -> Message:
        if isinstance(message, Request):
            self._requests.append(message)
            return as_input(message.payload)
        return as_input(message)

    async def _deliver(self, result: AgentResult) -> None:
        if self._on_result is None:
            return
        outcome = self._on_result(result)
        if inspect.isawaitable(outcome):
            await outcome

    def _answer_requests(self, result: AgentResult | None) -> None:
        requests, self._requests = self._requests, []
        for request in requests:
            request.reply(result)


_DISMISS: Final = object()


@final
class _Watcher:
    """Reads the mailbox during one run: input is queued, a stop request aborts the run.

    When the run ends the watcher is dismissed with a private sentinel sent to
    the actor's own mailbox (it is parked on an empty mailbox then, so there is
    room): it returns normally, which costs half of cancelling it (no
    ``Cancelled`` raised through its frames). Cancelling is the fallback.
    """

    __slots__ = ("_actor", "_control", "_ctx", "_dismissed", "_receiving")

    def __init__(self, actor: _AgentActor, ctx: ActorContext, control: RunControl) -> None:
        self._actor = actor
        self._ctx = ctx
        self._control = control
        self._receiving = False
        self._dismissed = False

    async def watch(self) -> None:
        ctx = self._ctx
        control = self._control
        while True:
            if control.inbox_full and not self._dismissed:
                await control.wait_for_room()
            self._receiving = True
            try:
                message = await ctx.receive()
            except AgentClosed:
                control.abort()
                return
            finally:
                self._receiving = False
            if message is _DISMISS:
                return
            # Once dismissed, what is read before the sentinel (at most a mailbox
            # full) is kept for the next run even past the inbox's capacity.
            control.add_input(self._actor._input(message), force=self._dismissed)

    def dismiss(self, nursery: trio.Nursery, *, cancel: bool) -> None:
        """End the watcher: with the sentinel when it is parked on the mailbox, else by cancel."""
        self._dismissed = True
        if not cancel and self._receiving and not self._ctx.stopping:
            try:
                self._ctx.send_nowait(self._ctx.id, _DISMISS)
            except SubagentsError:
                pass
            else:
                return
        nursery.cancel_scope.cancel()
