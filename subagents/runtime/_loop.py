"""The agent loop: ask the model, run the tools it asks for, repeat, until done or stopped.

:func:`run_agent` runs ONE run of an agent on a conversation it is given and
appends to it, so a follow-up input can continue the same conversation later
and a resumed agent can rebuild it from its transcript first. A turn is one
model call plus the tool calls it asks for. A run ends:

- with ``goal`` when the model gives its final message (Claude Code style), or,
  when the agent must call ``complete_task`` (the definition has an output
  schema or lists ``complete_task`` in its tools), when it calls it with
  arguments that pass validation; a failed validation goes back to the model
  as a tool error it can fix;
- with ``no_complete_task_call`` when such an agent ends a turn without it;
- at ``max_turns`` or ``max_time_seconds`` (a cancel-scope deadline) with one
  last turn, within ``grace_period_seconds``, where only ``complete_task`` is
  offered: a valid call there gives ``goal`` (the result notes the grace),
  anything else ``max_turns`` or ``timeout``;
- with ``aborted`` when :meth:`RunControl.abort` is called (the actor adapter
  calls it when the agent is closed), and ``error`` when the provider fails.

Tool calls of one turn run in call order, except that consecutive calls of
tools that run concurrently (read-only tools, and the lifecycle tools that
start agents: ``Task``/``Agent``/``spawn_agent``) run together in a nursery; a
call of any other tool waits for every call written before it. Results always
come back in call order, and each call has its own error boundary. Per turn the
loop builds one request, one assistant message and one result message; events
are built only when the bus has a subscriber. The runtime's own progress
tracker hears a turn's facts from a :class:`~._progress.facts.ProgressFeed`
handed to the loop beside its publisher, called where each event is (or would
be) published and before it, without an event. Once a turn's last message is
in the conversation the loop awaits what :attr:`Conversation.on_settle` returns,
if anything (the transcript's file still being made), before it announces the
turn or goes on: a completed turn is on disk first, and no thread waits for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, final

import attrs
import trio

from subagents._paths import as_path
from subagents.actors import Event
from subagents.agents import AgentDefinition
from subagents.runtime._approvals import announced
from subagents.runtime._complete_task import (
    COMPLETE_TASK,
    CompleteTask,
    Completion,
    complete_task_tool,
)
from subagents.runtime._config.defaults import DEFAULT_MAX_TOKENS, INBOX_CAPACITY
from subagents.runtime._config.defaults import MAX_ERROR_CHARS as _MAX_ERROR
from subagents.runtime._config.limits import Limits
from subagents.runtime._events import (
    ApprovalDecided,
    ApprovalRequested,
    GracePeriodEnded,
    GracePeriodStarted,
    Publisher,
    RunFinished,
    TextChunk,
    ThoughtChunk,
    ToolCallEnded,
    ToolCallStarted,
    TurnCompleted,
    TurnStarted,
    UsageReported,
)
from subagents.runtime._messages import (
    Conversation,
    Message,
    Origin,
    ServerToolUseBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebFetchToolResultBlock,
    WebSearchToolResultBlock,
)
from subagents.runtime._progress.facts import ProgressFeed
from subagents.runtime._providers.base import (
    ModelRequest,
    ModelResponse,
    Provider,
    StreamEvent,
    StreamSink,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from subagents.runtime._result import AgentResult, TerminateReason
from subagents.tools import (
    NO_CAPACITY,
    Approver,
    CallTurn,
    SecretRedactor,
    ToolContext,
    ToolResult,
    ToolSelection,
    call_turns,
)

__all__ = ["AgentSpec", "RunControl", "grace_notice", "run_agent"]

#: The blocks of tools the provider ran itself (progress and events for them: _server_calls):
#: exact types, looked up by each turn's blocks' types (no generator a turn); a provider
#: builds these blocks itself, never a subclass.
_SERVER_BLOCKS: Final = frozenset(
    {ServerToolUseBlock, WebSearchToolResultBlock, WebFetchToolResultBlock}
)

_SILENT: Final = Publisher()
_Limit = Literal["timeout", "max_turns"]


def grace_notice(reason: _Limit) -> str:
    """The message that opens the grace turn."""
    warning = (
        "You have exceeded the time limit."
        if reason == "timeout"
        else "You have reached the maximum number of turns."
    )
    return (
        f"{warning} You have one final chance to complete the task.\n"
        f"You MUST call `{COMPLETE_TASK}` immediately with your best answer.\n"
        "Do not call any other tools."
    )


def _uses_complete_task(definition: AgentDefinition) -> bool:
    return definition.output is not None or COMPLETE_TASK in (definition.tools or ())


@attrs.frozen(kw_only=True)
class AgentSpec:
    """Everything a run needs besides the conversation: made once per agent.

    ``require_complete_task`` ``None`` means: when the definition has an output
    schema or lists ``complete_task`` in its tools. The tool specs and the
    ``complete_task`` tool are derived once here, never per turn.
    """

    definition: AgentDefinition
    provider: Provider
    model: str
    system_prompt: str
    tools: ToolSelection | None = None
    limits: Limits = attrs.field(factory=Limits)
    max_tokens: int = DEFAULT_MAX_TOKENS
    workspace_root: Path = attrs.field(factory=Path.cwd, converter=as_path)
    approver: Approver | None = None
    redactor: SecretRedactor = attrs.field(
        factory=SecretRedactor.from_environ, eq=False, repr=False
    )
    require_complete_task: bool | None = None
    complete_task: CompleteTask = attrs.field(init=False, eq=False, repr=False)
    tool_specs: tuple[Mapping[str, Any], ...] = attrs.field(init=False, eq=False, repr=False)
    concurrent: frozenset[str] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        complete = complete_task_tool(self.definition.output)
        last = complete.spec if self.uses_complete_task else None
        object.__setattr__(self, "complete_task", complete)
        if self.tools is None:
            object.__setattr__(self, "tool_specs", () if last is None else (last,))
            object.__setattr__(self, "concurrent", frozenset())
        else:
            # Shared by every agent given this selection (the runtime's agents of one type).
            specs = self.tools.agent_specs(leave_out=COMPLETE_TASK, last=last)
            object.__setattr__(self, "tool_specs", specs)
            object.__setattr__(
                self, "concurrent", self.tools.concurrent_names(leave_out=COMPLETE_TASK)
            )

    @property
    def uses_complete_task(self) -> bool:
        """Whether a run completes only through a valid ``complete_task`` call."""
        if self.require_complete_task is not None:
            return self.require_complete_task
        return _uses_complete_task(self.definition)


@final
class RunControl:
    """The outside's handle on a run: abort it, queue follow-up input, read its result.

    :meth:`abort` cancels the run at its next checkpoint and makes it end with
    ``aborted``. Inputs queued with :meth:`add_input` join the conversation at
    the next turn boundary (inputs still queued when the run ends are the
    caller's to start a new run with: :meth:`take_inputs`). ``pull``, when
    given, is called at every turn boundary before the inbox is read, so an
    owner can move input in from where it waits (an actor's mailbox) without a
    task of its own. :attr:`result` is set however the run ends, even when it
    is cancelled from outside, and :attr:`error` holds the provider's exception
    of an ``error`` run.
    """

    __slots__ = (
        "_aborted",
        "_capacity",
        "_inbox",
        "_pull",
        "_scope",
        "error",
        "result",
    )

    def __init__(
        self,
        *,
        inbox_capacity: int = INBOX_CAPACITY,
        pull: Callable[[RunControl], object] | None = None,
    ) -> None:
        self._scope: trio.CancelScope | None = None
        self._aborted = False
        # Made at the first input (a list is an object the collector walks; most runs get none).
        self._inbox: list[Message] | None = None
        self._capacity = inbox_capacity
        self._pull = pull
        self.result: AgentResult | None = None
        self.error: BaseException | None = None

    def __repr__(self) -> str:
        return f"<RunControl aborted={self._aborted} inbox={len(self._inbox or ())}>"

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called."""
        return self._aborted

    def abort(self) -> None:
        """Stop the run: it ends with ``aborted`` at its next checkpoint."""
        self._aborted = True
        if self._scope is not None:
            self._scope.cancel()

    @property
    def inbox_full(self) -> bool:
        """Whether the inbox holds ``inbox_capacity`` inputs."""
        return len(self._inbox or ()) >= self._capacity

    def add_input(self, message: Message) -> bool:
        """Queue ``message`` for the next turn boundary; ``False`` (not queued) when full."""
        if self.inbox_full:
            return False
        if self._inbox is None:
            self._inbox = [message]
        else:
            self._inbox.append(message)
        return True

    def take_inputs(self) -> list[Message]:
        """Every queued input, oldest first, emptying the inbox."""
        taken, self._inbox = self._inbox, None
        return [] if taken is None else taken


@attrs.frozen
class _Outcome:
    reason: TerminateReason
    text: str | None = None
    output: Any = None
    error: str | None = None


_MAX_TURNS: Final = _Outcome(TerminateReason.MAX_TURNS)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return _clip(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, trio.Cancelled | KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split((trio.Cancelled, KeyboardInterrupt))
        return rest is None
    return False


def _split(content: Sequence[object]) -> tuple[list[ToolUseBlock], str]:
    """A response's tool calls, and its text, in one pass."""
    calls: list[ToolUseBlock] = []
    texts: list[str] = []
    for block in content:
        kind = type(block)
        if kind is ToolUseBlock:
            calls.append(block)  # type: ignore[arg-type]
        elif kind is TextBlock:
            texts.append(block.text)  # type: ignore[attr-defined]
    if not texts:
        return calls, ""
    return calls, texts[0] if len(texts) == 1 else "".join(texts)


def run_agent(
    spec: AgentSpec,
    conversation: Conversation,
    *,
    publisher: Publisher | None = None,
    control: RunControl | None = None,
    progress: ProgressFeed | None = None,
) -> Coroutine[Any, Any, AgentResult]:
    """Run the agent once on ``conversation`` (which it appends to) and return the result.

    The conversation must end with the input to act on (the task, or a
    follow-up). ``publisher`` stamps the loop's events with the agent's
    identity (``Publisher.for_actor(ctx)`` inside an actor); ``control`` lets
    the caller abort the run and queue input; ``progress`` is told each turn's
    facts directly (the runtime's tracker), whether or not anyone subscribes.
    Cancellation from outside propagates (with :attr:`RunControl.result` set
    to an ``aborted`` result); every other way out returns a result.

    A plain function that returns the run's coroutine (await it as any): every task
    switch of a run goes through one frame fewer, and a waiting agent holds one
    coroutine fewer.
    """
    run = _Run(spec, conversation, _SILENT if publisher is None else publisher, control, progress)
    return run.execute()


#: The events of a turn: the loop asks whether anyone wants any of them, and only then
#: which (``Bus.wants_any``: with no subscriber of them, each place costs one call).
_TURN_EVENTS: Final[frozenset[type[Event]]] = frozenset(
    (
        TurnStarted,
        TextChunk,
        ThoughtChunk,
        UsageReported,
        ToolCallStarted,
        ToolCallEnded,
        ApprovalRequested,
        ApprovalDecided,
        TurnCompleted,
    )
)


@final
class _Run:
    """The state of one run; one instance per :func:`run_agent` call."""

    __slots__ = (
        "_deadline",
        "_last_text",
        "_pending",
        "complete",
        "control",
        "conversation",
        "feed",
        "grace",
        "publisher",
        "spec",
        "started",
        "tool_uses",
        "turns",
        "usage",
    )

    def __init__(
        self,
        spec: AgentSpec,
        conversation: Conversation,
        publisher: Publisher,
        control: RunControl | None,
        feed: ProgressFeed | None = None,
    ) -> None:
        self.spec = spec
        self.conversation = conversation
        self.publisher = publisher
        self.feed = feed
        self.control = RunControl() if control is None else control
        self.complete = spec.uses_complete_task
        self.turns = 0
        self.tool_uses = 0
        self.usage = Usage()
        self.grace: _Limit | None = None
        self.started = 0.0
        self._deadline: trio.CancelScope | None = None
        self._last_text: str | None = None
        # The tool calls of the turn under way and their results so far, so a
        # run interrupted mid-turn can still answer every call.
        self._pending: tuple[Sequence[ToolUseBlock], list[ToolResultBlock | None]] | None = None

    # -- the run ------------------------------------------------------------------

    async def execute(self) -> AgentResult:
        control = self.control
        control.result = None
        control.error = None
        self.started = trio.current_time()
        try:
            outcome = await self._phases()
        except BaseException as exc:  # recorded, then re-raised: never swallowed
            control._scope = None
            self._answer_pending("the run was stopped before this call finished")
            if _is_cancellation(exc):
                control.result = self._result(_Outcome(TerminateReason.ABORTED))
            else:
                control.error = exc
                control.result = self._result(_Outcome(TerminateReason.ERROR, error=_describe(exc)))
            raise
        control._scope = None
        result = self._result(outcome)
        control.result = result
        if self.feed is not None:
            self.feed.run_finished(result.terminate_reason.value, result.error)
        if self.publisher.wants(RunFinished):
            await self.publisher.publish(
                RunFinished,
                terminate_reason=result.terminate_reason.value,
                turns=result.turns,
                tool_uses=result.tool_uses,
                usage=result.usage,
                duration=result.duration,
                error=result.error,
            )
        return result

    def _aborted(self) -> _Outcome:
        self._answer_pending("the run was stopped before this call finished")
        return _Outcome(TerminateReason.ABORTED, text=self._last_text)

    def _result(self, outcome: _Outcome) -> AgentResult:
        return AgentResult(
            terminate_reason=outcome.reason,
            text=outcome.text,
            output=outcome.output,
            turns=self.turns,
            tool_uses=self.tool_uses,
            usage=self.usage,
            duration=trio.current_time() - self.started,
            model=self.spec.model,
            grace=self.grace,
            error=outcome.error,
        )

    async def _phases(self) -> _Outcome:
        # One cancel scope serves both the deadline and RunControl.abort(): the
        # control's flag tells them apart.
        control = self.control
        with trio.move_on_after(self.spec.limits.max_time_seconds) as scope:
            self._deadline = control._scope = scope
            if control._aborted:
                scope.cancel()
            outcome = await self._main()
        self._deadline = None
        if scope.cancelled_caught:
            if control._aborted:
                return self._aborted()
            self._answer_pending("the time limit was reached before this call finished")
            return await self._grace("timeout")
        if outcome is _MAX_TURNS:
            return await self._grace("max_turns")
        return outcome

    async def _main(self) -> _Outcome:
        spec = self.spec
        conversation = self.conversation
        control = self.control
        max_turns = spec.limits.max_turns
        while True:
            if self.turns >= max_turns:
                return _MAX_TURNS
            if control._pull is not None:
                control._pull(control)
            if control._inbox:
                conversation.extend(control.take_inputs())
            response = await self._call_model(spec.tool_specs, grace=False)
            if type(response) is _Outcome:
                return response
            assert type(response) is ModelResponse
            calls, text = _split(response.content)
            if text:
                self._last_text = text
            if (
                self.feed is not None
                or self.publisher.wants(ToolCallStarted)
                or self.publisher.wants(ToolCallEnded)
            ) and not _SERVER_BLOCKS.isdisjoint(map(type, response.content)):
                await self._server_calls(response.content)
            if not calls:
                if (settling := self._settling()) is not None:
                    await settling
                if (announce := self._turn_completed(response, 0)) is not None:
                    await announce
                if response.stop_reason == "pause_turn":
                    # A long server-side tool turn paused: sent back as is, it continues
                    # (https://docs.claude.com/en/docs/build-with-claude/handling-stop-reasons).
                    continue
                if self.complete:
                    return _Outcome(TerminateReason.NO_COMPLETE_TASK_CALL, text=self._last_text)
                return _Outcome(TerminateReason.GOAL, text=text or self._last_text or "")
            completion = await self._answer(calls, response, grace=False)
            if (settling := self._settling()) is not None:
                await settling
            if (announce := self._turn_completed(response, len(calls))) is not None:
                await announce
            if completion is not None:
                return _Outcome(
                    TerminateReason.GOAL,
                    text=completion.text if completion.text is not None else self._last_text,
                    output=completion.output,
                )

    async def _grace(self, reason: _Limit) -> _Outcome:
        spec = self.spec
        seconds = spec.limits.grace_period_seconds
        self.grace = reason
        limit = _Outcome(
            TerminateReason.TIMEOUT if reason == "timeout" else TerminateReason.MAX_TURNS,
            text=self._last_text,
        )
        if self.feed is not None:
            self.feed.grace_started(reason)
        await self.publisher.publish(GracePeriodStarted, reason=reason, grace_seconds=seconds)
        self.conversation.append(Message.user(grace_notice(reason), origin=Origin.GRACE))
        label: Literal["completed", "no_call", "invalid", "timed_out", "error", "aborted"] = (
            "timed_out"
        )
        outcome = limit
        control = self.control
        with trio.move_on_after(seconds) as scope:
            self._deadline = control._scope = scope
            if control._aborted:
                scope.cancel()
            response = await self._call_model((spec.complete_task.spec,), grace=True)
            if type(response) is _Outcome:
                label = "error"
                outcome = attrs.evolve(limit, error=response.error)
            else:
                assert type(response) is ModelResponse
                calls, text = _split(response.content)
                if text:
                    self._last_text = text
                completion = await self._answer(calls, response, grace=True) if calls else None
                if (settling := self._settling()) is not None:
                    await settling
                if (announce := self._turn_completed(response, len(calls))) is not None:
                    await announce
                if completion is not None:
                    label = "completed"
                    outcome = _Outcome(
                        TerminateReason.GOAL,
                        text=completion.text if completion.text is not None else self._last_text,
                        output=completion.output,
                    )
                elif any(c.name == COMPLETE_TASK for c in calls):
                    label = "invalid"
                    outcome = attrs.evolve(limit, text=self._last_text)
                else:
                    label = "no_call"
                    outcome = attrs.evolve(limit, text=self._last_text)
        self._deadline = None
        if scope.cancelled_caught:
            if control._aborted:
                label = "aborted"
                outcome = self._aborted()
            else:
                self._answer_pending("the grace period ended before this call finished")
        if self.feed is not None:
            self.feed.grace_ended(label)
        await self.publisher.publish(GracePeriodEnded, reason=reason, outcome=label)
        return outcome

    # -- one model call -----------------------------------------------------------

    async def _call_model(
        self, tools: Sequence[Mapping[str, Any]], *, grace: bool
    ) -> ModelResponse | _Outcome:
        spec = self.spec
        publisher = self.publisher
        self.turns += 1
        turn = self.turns
        feed = self.feed
        if feed is not None:
            feed.turn_started(turn, grace=grace)
        bus = publisher.bus
        loud = bus is not None and bus.wants_any(_TURN_EVENTS)
        if loud and publisher.wants(TurnStarted):
            await publisher.publish(TurnStarted, turn=turn, model=spec.model, grace=grace)
        request = ModelRequest(
            model=spec.model,
            system=spec.system_prompt,
            messages=self.conversation.messages,
            tools=tools,
            settings=spec.definition.model_settings,
            max_tokens=spec.max_tokens,
            agent_type=spec.definition.name,
            agent_id=publisher.agent_id,
            turn=self.conversation.turns,
            grace=grace,
        )
        sink: StreamSink | None = (
            self._sink
            if feed is not None
            or (loud and (publisher.wants(TextChunk) or publisher.wants(ThoughtChunk)))
            else None
        )
        try:
            response = await spec.provider.stream(request, sink)
        except Exception as exc:
            self.control.error = exc
            return _Outcome(TerminateReason.ERROR, text=self._last_text, error=_describe(exc))
        usage = response.usage
        self.usage = self.usage + usage
        if feed is not None:
            feed.usage(usage)
        if loud and publisher.wants(UsageReported):
            await publisher.publish(UsageReported, turn=turn, usage=usage, total=self.usage)
        if response.content:
            self.conversation.append(Message("assistant", response.content, Origin.MODEL))
        return response

    def _sink(self, event: StreamEvent) -> None:
        kind = type(event)
        if kind is TextDelta:
            if self.feed is not None:
                self.feed.text()
            self.publisher.publish_nowait(TextChunk, text=event.text)  # type: ignore[union-attr]
        elif kind is ThinkingDelta:
            if self.feed is not None:
                self.feed.thought()
            self.publisher.publish_nowait(ThoughtChunk, text=event.thinking)  # type: ignore[union-attr]

    async def _server_calls(self, content: Sequence[object]) -> None:
        """Progress for the tools the provider ran in this response, like any tool's."""
        names: dict[str, str] = {}
        feed = self.feed
        for block in content:
            if type(block) is ServerToolUseBlock:
                names[block.id] = block.name
                if feed is not None:
                    feed.tool_started(block.id, block.name, block.input)
                await self.publisher.publish(
                    ToolCallStarted,
                    turn=self.turns,
                    tool_use_id=block.id,
                    tool_name=block.name,
                    input=block.input,
                )
            elif isinstance(block, WebSearchToolResultBlock | WebFetchToolResultBlock):
                content_ = block.content
                failed = isinstance(content_, dict) and str(content_.get("type", "")).endswith(
                    "_error"
                )
                name = names.get(block.tool_use_id, "server tool")
                if feed is not None:
                    feed.tool_ended(block.tool_use_id, name, is_error=failed)
                await self.publisher.publish(
                    ToolCallEnded,
                    turn=self.turns,
                    tool_use_id=block.tool_use_id,
                    tool_name=name,
                    is_error=failed,
                    duration=0.0,
                )

    def _settling(self) -> Awaitable[object] | None:
        """What to await before the turn just ended counts as done (``Conversation.on_settle``:
        the transcript's file being made, so the turn is on disk), or ``None``."""
        settle = self.conversation.on_settle
        return None if settle is None else settle()

    def _turn_completed(self, response: ModelResponse, calls: int) -> Awaitable[None] | None:
        """Tell progress the turn ended; the announcement to await, when someone listens
        (``None`` otherwise: a turn nobody subscribes to makes no coroutine)."""
        if self.feed is not None:
            self.feed.turn_completed()
        bus = self.publisher.bus
        if not (bus is not None and bus.wants_any(_TURN_EVENTS) and bus.wants(TurnCompleted)):
            return None
        return self.publisher.publish(
            TurnCompleted,
            turn=self.turns,
            stop_reason=response.stop_reason,
            tool_calls=calls,
            usage=response.usage,
        )

    # -- tool calls ---------------------------------------------------------------

    async def _answer(
        self, calls: Sequence[ToolUseBlock], response: ModelResponse, *, grace: bool
    ) -> Completion | None:
        """Run the turn's tool calls, append their results; the completion, if one was valid."""
        results: list[ToolResultBlock | None] = [None] * len(calls)
        self._pending = (calls, results)
        invalid = response.invalid_tool_inputs
        complete = self.complete or grace
        runnable: list[int] = []
        finishing: list[int] = []
        for index, call in enumerate(calls):
            problem = invalid.get(call.id) if invalid else None
            if problem is not None:
                results[index] = ToolResultBlock(
                    call.id,
                    f"The arguments of this {call.name} call were not a valid JSON object "
                    f"({problem}); the call was not run. Send it again with valid JSON.",
                    True,
                )
            elif complete and call.name == COMPLETE_TASK:
                finishing.append(index)
            elif grace:
                results[index] = ToolResultBlock(
                    call.id,
                    f"Only {COMPLETE_TASK} is available in this last turn; "
                    f"the {call.name} call was not run.",
                    True,
                )
            else:
                runnable.append(index)
        if runnable:
            self.tool_uses += len(runnable)
            concurrent = self.spec.concurrent
            batch: list[int] = []
            for index in runnable:
                if calls[index].name in concurrent:
                    batch.append(index)
                    continue
                await self._call_batch(calls, batch, results)
                batch = []
                await self._call_tool(calls[index], index, results)
            await self._call_batch(calls, batch, results)
        completion: Completion | None = None
        for index in finishing:
            call = calls[index]
            if completion is not None:
                results[index] = ToolResultBlock(
                    call.id, "Ignored: an earlier complete_task call already completed the task."
                )
                continue
            checked = self.spec.complete_task.check(call.input)
            if isinstance(checked, str):
                results[index] = ToolResultBlock(call.id, checked, True)
            else:
                completion = checked
                results[index] = ToolResultBlock(call.id, "Task completed.")
        self._pending = None
        blocks = tuple(r for r in results if r is not None)
        self.conversation.append(Message("user", blocks, Origin.TOOL_RESULTS))
        return completion

    async def _call_batch(
        self,
        calls: Sequence[ToolUseBlock],
        batch: Sequence[int],
        results: list[ToolResultBlock | None],
    ) -> None:
        """Run the calls at ``batch`` (indexes into ``calls``) together; each fills its slot.

        A call refused only for want of capacity (:data:`NO_CAPACITY`: all
        ``max_threads`` slots taken, several of them by its own siblings) is made
        once more after the batch, in call order: a message that starts more
        foreground agents than there are free slots runs the excess as the first
        ones finish instead of failing them.
        """
        if len(batch) == 1:
            await self._call_tool(calls[batch[0]], batch[0], results)
            return
        if not batch:
            return
        refused: list[int] = []
        turns = call_turns(len(batch))
        async with trio.open_nursery() as nursery:
            for index, turn in zip(batch, turns, strict=True):
                nursery.start_soon(self._call_tool, calls[index], index, results, refused, turn)
        for index in sorted(refused):
            await self._call_tool(calls[index], index, results, again=True)

    async def _call_tool(
        self,
        call: ToolUseBlock,
        index: int,
        results: list[ToolResultBlock | None],
        refused: list[int] | None = None,
        turn: CallTurn | None = None,
        *,
        again: bool = False,
    ) -> None:
        """Make one call and put its result at ``index``.

        With ``refused``, a call refused for want of capacity adds its index there
        (to be made again) instead of publishing its end; ``again`` marks that
        second attempt, whose start was already published. ``turn`` is the call's
        place in its concurrent batch, freed for the next call however this one ends.
        """
        try:
            await self._make_call(call, index, results, refused, turn, again=again)
        finally:
            if turn is not None:
                turn.release()

    async def _make_call(
        self,
        call: ToolUseBlock,
        index: int,
        results: list[ToolResultBlock | None],
        refused: list[int] | None,
        turn: CallTurn | None,
        *,
        again: bool,
    ) -> None:
        spec = self.spec
        publisher = self.publisher
        feed = self.feed
        started = 0.0
        # whether the end is announced is decided here, so an announced end has its start
        bus = publisher.bus
        loud = bus is not None and bus.wants_any(_TURN_EVENTS)
        announce_end = loud and publisher.wants(ToolCallEnded)
        if announce_end:
            started = trio.current_time()
        if feed is not None and not again:
            feed.tool_started(call.id, call.name, call.input)
        if not again and loud and publisher.wants(ToolCallStarted):
            await publisher.publish(
                ToolCallStarted,
                turn=self.turns,
                tool_use_id=call.id,
                tool_name=call.name,
                input=call.input,
            )
        tools = spec.tools
        try:
            if tools is None:
                result = ToolResult.error(f"Tool '{call.name}' is not available to this agent.")
            else:
                ctx = ToolContext(
                    publisher.agent_id,
                    publisher.depth,
                    spec.workspace_root,
                    self._deadline,
                    announced(spec.approver, publisher, self.turns) if loud else spec.approver,
                    call.id,
                    spec.redactor,
                    turn,
                )
                result = await tools.call(call.name, call.input, ctx)
        except Exception as exc:  # the call's own error boundary
            result = ToolResult.error(
                f"Tool '{call.name}' failed ({_describe(exc)}); the agent keeps running. "
                "Try another approach."
            )
        content = spec.redactor.redact(result.content) or "(no output)"
        results[index] = ToolResultBlock(call.id, content, result.is_error)
        if refused is not None and result.is_error and result.details.get(NO_CAPACITY):
            refused.append(index)
            return
        if feed is not None:
            feed.tool_ended(call.id, call.name, is_error=result.is_error)
        if announce_end:
            await publisher.publish(
                ToolCallEnded,
                turn=self.turns,
                tool_use_id=call.id,
                tool_name=call.name,
                is_error=result.is_error,
                duration=trio.current_time() - started,
            )

    def _answer_pending(self, why: str) -> None:
        """Answer every tool call of an interrupted turn, so the conversation stays valid."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        calls, results = pending
        blocks = tuple(
            ToolResultBlock(call.id, f"Not completed: {why}.", True) if done is None else done
            for call, done in zip(calls, results, strict=True)
        )
        self.conversation.append(Message("user", blocks, Origin.TOOL_RESULTS))
