"""The agent loop as a kernel actor: one run per activation, stopped promptly by ``close``.

:func:`agent_behavior` wraps :func:`run_agent` in an actor behavior. While a
run is under way, follow-up input (a ``str``, a :class:`Message`, a child's
:class:`ChildFinished` notice, or a :class:`Request` whose payload is text)
waits in the actor's bounded mailbox and joins the conversation at the next
turn boundary, and the kernel's stop request (``close``, seen through
:meth:`ActorContext.on_stop`) aborts the run at once, so a stalled model call
ends within the close ladder's first step instead of waiting for its cancel.
No task watches the mailbox: an agent costs one task.

The actor's status follows the run: ``goal`` completes it with the report (the
structured output as JSON, or the text); a provider failure errors it with the
provider's own typed error; any other ending errors it with
:class:`AgentRunFailed`, whose message says which limit stopped it; a closed
agent ends Shutdown (the kernel's rule). When the agent is sent input after a
run, the kernel revives it and the next run continues the same conversation.

:class:`AgentActor` is the same behavior with a handle on it:
:meth:`AgentActor.interrupt` aborts the run under way and goes on, in the same
activation, with the input queued for it (``send_input(interrupt=True)``), and
``drop_notice`` lets the owner drop the notices of children whose result it
already delivered another way (a foreground ``Task`` call).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeAlias, final

import trio

from subagents.actors import (
    ActorContext,
    AgentClosed,
    Behavior,
    ChildFinished,
    Request,
    Status,
    kind_of,
)
from subagents.runtime._config.defaults import INBOX_CAPACITY
from subagents.runtime._events import Publisher
from subagents.runtime._exceptions import AgentRunFailed, ProviderError
from subagents.runtime._loop import AgentSpec, RunControl, run_agent
from subagents.runtime._messages import Conversation, Message, Origin
from subagents.runtime._progress.facts import ProgressFeed
from subagents.runtime._result import AgentResult, TerminateReason
from subagents.tools import format_agent_result

__all__ = ["AgentActor", "NoticeFilter", "ResultCallback", "agent_behavior", "as_input"]

ResultCallback: TypeAlias = Callable[[AgentResult], Awaitable[None] | None]
"""Called with every run's result before the actor's status changes."""

NoticeFilter: TypeAlias = Callable[[ChildFinished], bool]
"""Says whether a child's :class:`ChildFinished` notice is dropped instead of read."""

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
            # The child's words are data for the parent's model, never instructions.
            text += "\n\n" + format_agent_result(message.agent_id, message.nickname, detail)
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
    return AgentActor(spec, conversation, on_result=on_result, inbox_capacity=inbox_capacity).behave


@final
class AgentActor:
    """The agent loop as a kernel actor, with a handle for its owner.

        Pass :attr:`behave` to ``spawn``. :meth:`interrupt` aborts the run under
        way; the activation then goes on with the input queued for it instead of
        ending. ``drop_notice`` (optional) drops child notices it returns true for,
    and :meth:`collected` the notice of an end a ``wait`` already returned.
        ``idle`` says the conversation's last run is already over (an agent
        restored idle): every activation, the first included, starts from the
        input that revived it. ``progress`` is told each run's turns directly
        (the runtime's tracker; see :func:`run_agent`).
    """

    __slots__ = (
        "_capacity",
        "_collected",
        "_control",
        "_ctx",
        "_drop_notice",
        "_interrupted",
        "_on_result",
        "_progress",
        "_requests",
        "_started",
        "conversation",
        "spec",
    )

    def __init__(
        self,
        spec: AgentSpec,
        conversation: Conversation,
        *,
        on_result: ResultCallback | None = None,
        inbox_capacity: int = INBOX_CAPACITY,
        drop_notice: NoticeFilter | None = None,
        idle: bool = False,
        progress: ProgressFeed | None = None,
    ) -> None:
        self.spec = spec
        self._progress = progress
        self.conversation = conversation
        self._on_result = on_result
        self._capacity = inbox_capacity
        self._drop_notice = drop_notice
        self._collected: dict[str, Status] = {}
        self._started = idle
        # Made at the first request to answer (most agents get none).
        self._requests: list[Request] | None = None
        self._control: RunControl | None = None
        self._ctx: ActorContext | None = None
        self._interrupted = False

    @property
    def running(self) -> bool:
        """Whether a run is under way now."""
        return self._control is not None

    def interrupt(self) -> bool:
        """Abort the run under way; the activation goes on with the queued input.

        Queue the input (send it to the actor) first: a run interrupted with
        nothing queued ends ``aborted`` as if it had been stopped. Returns
        whether a run was under way.
        """
        control = self._control
        if control is None:
            return False
        self._interrupted = True
        control.abort()
        return True

    def collected(self, agent_id: str, status: Status) -> None:
        """The agent's ``wait`` returned its child ``agent_id`` final with ``status``.

        The child's notice of that same end is then dropped instead of read: the
        model has the result already, as Codex suppresses the completion notice
        of an agent a ``wait`` collected (openai/codex
        ``codex-rs/core/src/agent/collab_wait_tracking.rs``). A later end of the
        child (after new input) is a new status, and its notice is read.
        """
        self._collected[agent_id] = status

    async def behave(self, ctx: ActorContext) -> str | None:
        """The actor's behavior: one activation, made of one or more runs."""
        if self._started:
            self._take_mailbox(ctx)
        self._started = True
        self._interrupted = False
        self._ctx = ctx
        publisher = Publisher.for_actor(ctx)
        while True:
            control = RunControl(inbox_capacity=self._capacity, pull=self._pull)
            self._control = control
            ctx.on_stop(control.abort)
            try:
                result = await run_agent(
                    self.spec,
                    self.conversation,
                    publisher=publisher,
                    control=control,
                    progress=self._progress,
                )
            except BaseException:  # report the recorded result, then re-raise: never swallowed
                ctx.on_stop(None)
                self._control = None
                if control.result is not None:
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(_CALLBACK_SECONDS_WHEN_CANCELLED):
                            await self._deliver(control.result)
                self._answer_requests(control.result)
                raise
            ctx.on_stop(None)
            if not control.aborted:
                self._pull(control)
            self._control = None
            await self._deliver(result)
            leftovers = control.take_inputs()
            if self._interrupted and control.aborted and not ctx.stopping:
                self._interrupted = False
                self.conversation.extend(leftovers)
                before = len(self.conversation)
                self._take_mailbox(ctx)
                if leftovers or len(self.conversation) > before:
                    continue
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

    def _pull(self, control: RunControl) -> None:
        """Move mailbox input into the run's inbox while it has room (the turn boundary).

        What does not fit stays in the bounded mailbox, so senders wait there.
        """
        if self._ctx is not None:
            self._read_mailbox(self._ctx, control.add_input, control)

    def _take_mailbox(self, ctx: ActorContext) -> None:
        """Move what revived the actor (and whatever queued behind it) into the conversation."""
        self._read_mailbox(ctx, self.conversation.append)

    def _read_mailbox(
        self, ctx: ActorContext, put: Callable[[Message], object], room: RunControl | None = None
    ) -> None:
        """``put`` each input waiting in the mailbox, while ``room``'s inbox has room."""
        while room is None or not room.inbox_full:
            try:
                message = ctx.receive_nowait()
            except (trio.WouldBlock, AgentClosed):
                return
            item = self._input(message)
            if item is not None:
                put(item)

    def _input(self, message: Any) -> Message | None:
        if isinstance(message, Request):
            if self._requests is None:
                self._requests = [message]
            else:
                self._requests.append(message)
            return as_input(message.payload)
        if isinstance(message, ChildFinished):
            if self._collected.get(message.agent_id) is message.status:
                del self._collected[message.agent_id]
                return None
            if self._drop_notice is not None and self._drop_notice(message):
                return None
        return as_input(message)

    async def _deliver(self, result: AgentResult) -> None:
        if self._on_result is None:
            return
        outcome = self._on_result(result)
        if inspect.isawaitable(outcome):
            await outcome

    def _answer_requests(self, result: AgentResult | None) -> None:
        requests, self._requests = self._requests or (), None
        for request in requests:
            request.reply(result)
