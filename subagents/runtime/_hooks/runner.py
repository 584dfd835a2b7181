"""Hooks: user code run at seven points of an agent's life, never able to hang the runtime.

Events (Claude Code's names): ``SubagentStart`` and ``SubagentStop`` fire once
per agent run, and ``Stop`` too when a top-level agent stops (see
:func:`subagent_run_hooks`); ``PreToolUse`` and
``PostToolUse`` around each tool call; ``TaskCreated`` and ``TaskCompleted``
at a team's task board checkpoints (see :func:`task_hook_gate`). A :class:`Hook` is global (from the
``hooks`` key of a settings mapping, :func:`hooks_from_settings`) or scoped to
one agent (its definition's frontmatter ``hooks``, :func:`hooks_from_specs`),
and is either a shell command or a Python async callable.

A command gets the :class:`HookPayload` as JSON on stdin and answers with its
exit code, as in Claude Code (a Python hook answers with a :class:`HookReply`),
following Claude Code's hooks reference (https://code.claude.com/docs/en/hooks,
"Exit code output" and "JSON output"):

============  ===============================  ====================================
exit code     effect                           where the text goes
============  ===============================  ====================================
0             success; stdout may be JSON      ``SubagentStart``: plain stdout, or
              (see below)                      JSON ``additionalContext``, is added
                                               to the agent's context (``feedback``);
                                               other events: plain stdout is only
                                               kept in the :class:`HookResult`
2             block / feedback                 ``PreToolUse``: the call is blocked,
                                               stderr is the tool error the model
                                               sees (``reason``); ``PostToolUse``:
                                               stderr goes to the model
                                               (``feedback``); ``SubagentStop``
                                               (or ``Stop``): the stop is blocked and
                                               the agent goes on with stderr as its
                                               next input (``reason``; at most
                                               ``MAX_STOP_BLOCKS`` times a run, as
                                               Claude Code's ``stop_hook_active``);
                                               ``TaskCreated``/``TaskCompleted``: the
                                               task is not created / stays open, and
                                               stderr is the tool error (``reason``);
                                               ``TeammateIdle``: the teammate keeps
                                               working with stderr as its next
                                               input instead of going idle;
                                               ``SubagentStart`` cannot block: stderr
                                               goes to the user
other         non-blocking error               ``user_messages`` only
============  ===============================  ====================================

On exit 0, stdout that starts with ``{`` or ``[`` is Claude Code's JSON answer
(:mod:`~subagents.runtime._hooks.output`): ``SubagentStop``, ``TaskCreated``
and ``TaskCompleted`` block with ``{"decision": "block", "reason": ...}``
exactly as with exit 2 (for a stop, ``"continue": false`` lets it stop
instead); ``SubagentStart`` adds
``hookSpecificOutput.additionalContext``; ``PostToolUse`` sends a ``block``
``reason`` and ``additionalContext`` to the model; ``PreToolUse`` blocks on
``permissionDecision: "deny"`` or ``decision: "block"``; ``systemMessage``
goes to the user. JSON that is cut by the output cap, invalid, too deep, not
an object or of the wrong shape is ignored, and ``user_messages`` says why.

Timeouts, crashes, a command that cannot start and a Python hook that raises
are non-blocking errors too: they reach the user, never the model, and never
propagate (``trio.Cancelled`` and ``KeyboardInterrupt`` always do).

Matchers follow Claude Code: ``None``, ``""`` or ``"*"`` match everything; a
matcher made only of letters, digits, ``_`` and ``|`` is a list of exact names
(``"Bash|Write"``); anything else is a regular expression searched in the name
(``"mcp__.*"``; anchor it with ``^...$`` for a whole-name match). Tool events
match the tool name, ``SubagentStart``/``SubagentStop`` the agent type.

The hooks that match one firing run concurrently in a nursery, as Claude Code
runs them: the firing takes as long as the slowest hook rather than the sum of
all their timeouts, and one hanging hook cannot delay the others' verdicts.
Their results are still reported in a fixed order (global hooks, then the
agent's, each in definition order), so ``feedback`` reads the same every time;
a command (or callable) listed twice runs once.

This module holds the runner, :class:`HookRunner`, which fires hooks and
decides what their results mean together. The values it takes and hands out
are in :mod:`~subagents.runtime._hooks.values`, the wire format, matchers and
process runner in :mod:`~subagents.runtime._hooks.commands`, and the
``SubagentStart``/``SubagentStop`` wrapper of a run in
:mod:`~subagents.runtime._hooks.run`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import final

import attrs
import msgspec
import trio

from subagents.actors import Bus
from subagents.runtime._hooks.commands import (
    DEFAULT_HOOK_OUTPUT_CAP,
    HookEvent,
    HookPayload,
    encode_payload,
    run_hook_command,
)
from subagents.runtime._hooks.output import parse_hook_output
from subagents.runtime._hooks.values import (
    Hook,
    HookFired,
    HookOutcome,
    HookReply,
    HookResult,
    HookRunnerStatistics,
)
from subagents.tools import SecretRedactor

__all__ = ["HookRunner"]


def _cap_text(data: bytes, total: int, redactor: SecretRedactor) -> tuple[str, bool]:
    """The text of capped output, masked; a secret the cap cut through is masked too."""
    text = redactor.redact(data.decode("utf-8", errors="replace"), cut_after=total > len(data))
    if total <= len(data):
        return text, False
    return f"{text}\n[output truncated: {total} bytes in all, the first {len(data)} kept]", True


#: Events whose hooks may block the agent's stop (exit 2, or ``decision: "block"``).
_STOP_EVENTS = frozenset({HookEvent.SUBAGENT_STOP, HookEvent.STOP, HookEvent.TEAMMATE_IDLE})
#: Events whose exit 2 (with stderr) blocks: the stop, or the task board's change.
_BLOCKING_EVENTS = _STOP_EVENTS | {HookEvent.TASK_CREATED, HookEvent.TASK_COMPLETED}

#: (block reason, feedback, user messages) of one hook's result.
_Verdict = tuple[str | None, str | None, tuple[str, ...]]


def _verdict(event: HookEvent, result: HookResult) -> _Verdict:
    """What one result decides, per the exit-code table and the JSON answer of exit 0."""
    where = f"{event.value} hook {result.hook.label!r}"
    if result.error is not None:
        return None, None, (f"{where} failed: {result.error}",)
    if result.timed_out:
        return None, None, (f"{where} timed out after {result.duration:.3g} s and was stopped",)
    code, stderr = result.exit_code, result.stderr.strip()
    if code == 0:
        return _answer(event, result, where)
    if code == 2 and event is HookEvent.PRE_TOOL_USE:
        return stderr or _blocked_call(result), None, ()
    if code == 2 and event in _BLOCKING_EVENTS and stderr:
        return stderr, None, ()
    if code == 2 and event is not HookEvent.SUBAGENT_START and stderr:
        return None, stderr, ()
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited {code}"
    return None, None, (f"{where} {how}" + (f": {stderr}" if stderr else ""),)


def _blocked_call(result: HookResult) -> str:
    return f"The call was blocked by a PreToolUse hook ({result.hook.label})."


def _answer(event: HookEvent, result: HookResult, where: str) -> _Verdict:
    """Exit 0: plain stdout (``SubagentStart`` context), or Claude Code's JSON answer."""
    if result.output_error is not None:
        return None, None, (f"{where}: {result.output_error}",)
    output = result.output
    if output is None:
        stdout = result.stdout.strip()
        return None, (stdout if event is HookEvent.SUBAGENT_START and stdout else None), ()
    user: list[str] = []
    if output.system_message:
        user.append(f"{where}: {output.system_message}")
    reason: str | None = None
    texts: list[str] = []
    specific = output.hook_specific_output
    if specific is not None and specific.hook_event_name not in (None, event.value):
        user.append(
            f"{where}: hookSpecificOutput names {specific.hook_event_name!r}, not "
            f"{event.value!r}, and was ignored"
        )
        specific = None
    if specific is not None and specific.additional_context is not None:
        if event in (HookEvent.SUBAGENT_START, HookEvent.POST_TOOL_USE):
            texts.append(specific.additional_context.strip())
        else:
            user.append(f"{where}: additionalContext is not read for {event.value}; ignored")
    said = (output.reason or "").strip()
    if (
        event is HookEvent.PRE_TOOL_USE
        and specific is not None
        and specific.permission_decision == "deny"
    ):
        reason = (specific.permission_decision_reason or "").strip() or _blocked_call(result)
    if output.decision == "block":
        if event is HookEvent.PRE_TOOL_USE:
            reason = reason or said or _blocked_call(result)
        elif event is HookEvent.SUBAGENT_START:
            user.append(f'{where}: decision "block" is not read for {event.value}; ignored')
        elif not said:
            user.append(f'{where}: decision "block" without a reason was ignored')
        elif event is HookEvent.POST_TOOL_USE:
            texts.insert(0, said)
        elif not output.continue_:
            user.append(f"{where}: continue is false, so the agent stops instead of going on")
        else:
            reason = said
    if not output.continue_ and event not in _STOP_EVENTS:
        user.append(f"{where}: continue: false is only honoured by stop hooks; ignored")
    feedback = "\n\n".join(t for t in texts if t) or None
    return reason, feedback, tuple(user)


@final
class HookRunner:
    """Fires hooks: the global ones it holds, plus the agent-scoped ones each call passes.

    ``cwd`` is the directory commands run in when the payload names none;
    ``env`` is added to their environment, from which secret variables are
    removed but those ``env_passthrough`` names; ``redactor`` (default: the
    values of ``os.environ``'s secret variables) masks secrets in every hook's
    output and error before anyone reads them; ``bus`` (optional) receives a
    :class:`HookFired` event per hook run, built only when someone subscribes.
    """

    __slots__ = (
        "_bus",
        "_by_event",
        "_counts",
        "_cwd",
        "_env",
        "_output_cap",
        "_passthrough",
        "_redactor",
        "hooks",
    )

    def __init__(
        self,
        hooks: Iterable[Hook] = (),
        *,
        bus: Bus | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        env_passthrough: Collection[str] = (),
        redactor: SecretRedactor | None = None,
        output_cap: int = DEFAULT_HOOK_OUTPUT_CAP,
    ) -> None:
        self.hooks: tuple[Hook, ...] = tuple(hooks)
        self._by_event = {e: tuple(h for h in self.hooks if h.event is e) for e in HookEvent}
        self._bus = bus
        self._cwd = cwd
        self._env = dict(env) if env else None
        self._passthrough = frozenset(env_passthrough)
        self._redactor = SecretRedactor.from_environ() if redactor is None else redactor
        self._output_cap = output_cap
        self._counts = {"firings": 0, "hooks_run": 0, "blocked": 0, "timed_out": 0, "failed": 0}

    def __repr__(self) -> str:
        return f"<HookRunner {len(self.hooks)} global hook(s)>"

    def has_hooks(self, event: HookEvent, agent_hooks: Sequence[Hook] = ()) -> bool:
        """Whether any hook is registered for ``event``: skip building a payload if not.

        Asked several times by every agent: with no hooks it hashes no enum member (a
        call in Python) and makes no generator."""
        if self.hooks and self._by_event[event]:
            return True
        return bool(agent_hooks) and any(hook.event is event for hook in agent_hooks)

    def matching(
        self, event: HookEvent, subject: str | None, agent_hooks: Sequence[Hook] = ()
    ) -> tuple[Hook, ...]:
        """The hooks that fire for ``event`` on ``subject``, in order, each command once."""
        seen: set[object] = set()
        found: list[Hook] = []
        for hook in (*self._by_event[event], *agent_hooks):
            # Callables by identity: one need not be hashable to be a hook.
            key = hook.command if hook.command is not None else id(hook.function)
            # Claude Code ignores the matcher of Stop and the task events: nothing to match.
            matches = event.ignores_matcher or hook.matches(subject)
            if hook.event is event and key not in seen and matches:
                seen.add(key)
                found.append(hook)
        return tuple(found)

    def statistics(self) -> HookRunnerStatistics:
        """A snapshot of the counters."""
        return HookRunnerStatistics(**self._counts)

    async def fire(
        self,
        event: HookEvent,
        payload: HookPayload,
        *,
        agent_hooks: Sequence[Hook] = (),
        deadline: float = math.inf,
        nickname: str = "",
    ) -> HookOutcome:
        """Run the hooks matching ``event`` and ``payload``; decide what they mean together.

        Each hook stops at its own timeout or at ``deadline`` (Trio clock),
        whichever comes first. Never raises for a hook's failure; a caller's
        cancellation propagates after every hook process is killed and reaped.
        ``nickname`` completes the envelope of published :class:`HookFired` events.
        """
        subject = payload.tool_name if event.is_tool_event else payload.agent_type
        hooks = self.matching(event, subject, agent_hooks)
        if not hooks:
            return HookOutcome(event)
        if payload.hook_event_name != event.value:
            payload = msgspec.structs.replace(payload, hook_event_name=event.value)
        self._counts["firings"] += 1
        try:
            data: bytes | str = encode_payload(payload)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            data = f"the payload could not be encoded as JSON ({exc})"
        results: list[HookResult | None] = [None] * len(hooks)

        async def run(index: int) -> None:
            results[index] = await self._run_one(hooks[index], payload, data, deadline, nickname)

        if len(hooks) == 1:
            await run(0)
        else:
            async with trio.open_nursery() as nursery:
                for index in range(len(hooks)):
                    nursery.start_soon(run, index)
        return self._decide(event, tuple(r for r in results if r is not None))

    def _decide(self, event: HookEvent, results: tuple[HookResult, ...]) -> HookOutcome:
        reasons: list[str] = []
        feedback: list[str] = []
        user: list[str] = []
        for result in results:
            reason, text, messages = _verdict(event, result)
            for value, into in ((reason, reasons), (text, feedback)):
                if value is not None:
                    into.append(value)
            user.extend(messages)
        self._counts["blocked"] += bool(reasons)
        return HookOutcome(
            event,
            results,
            blocked=bool(reasons),
            reason="\n\n".join(reasons) if reasons else None,
            feedback=tuple(feedback),
            user_messages=tuple(user),
        )

    async def _run_one(
        self,
        hook: Hook,
        payload: HookPayload,
        data: bytes | str,
        deadline: float,
        nickname: str,
    ) -> HookResult:
        start = trio.current_time()
        hook_deadline = min(start + hook.timeout_seconds, deadline)
        try:
            if hook.command is not None:
                result = await self._run_command(hook, payload, data, hook_deadline)
            else:
                result = await self._run_function(hook, payload, hook_deadline)
        except Exception as exc:
            result = HookResult(hook, None, error=f"{type(exc).__name__}: {exc}")
        redact = self._redactor.redact
        result = attrs.evolve(
            result,
            stdout=redact(result.stdout),
            stderr=redact(result.stderr),
            error=None if result.error is None else redact(result.error),
            duration=trio.current_time() - start,
        )
        self._counts["hooks_run"] += 1
        self._counts["timed_out"] += result.timed_out
        self._counts["failed"] += result.error is not None
        bus = self._bus
        if bus is not None and bus.wants(HookFired):
            if bus.has_lossless_subscribers:
                await bus.make_room()
            bus.publish_nowait(
                HookFired(
                    agent_id=payload.agent_id,
                    parent_id=payload.parent_id,
                    depth=payload.depth,
                    nickname=nickname,
                    hook_event_name=payload.hook_event_name,
                    hook=hook.label,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    error=result.error,
                    duration=result.duration,
                    tool_use_id=payload.tool_use_id,
                )
            )
        return result

    async def _run_command(
        self, hook: Hook, payload: HookPayload, data: bytes | str, deadline: float
    ) -> HookResult:
        assert hook.command is not None
        if isinstance(data, str):
            return HookResult(hook, None, error=data)
        try:
            run = await run_hook_command(
                hook.command,
                data,
                deadline=deadline,
                output_cap=self._output_cap,
                cwd=payload.cwd or self._cwd,
                env=self._env,
                env_passthrough=self._passthrough,
            )
        except OSError as exc:
            return HookResult(hook, None, error=f"the command could not be started ({exc})")
        stdout, cut_out = _cap_text(run.stdout, run.stdout_total, self._redactor)
        stderr, cut_err = _cap_text(run.stderr, run.stderr_total, self._redactor)
        output, output_error = parse_hook_output(stdout, truncated=cut_out)
        return HookResult(
            hook,
            run.exit_code,
            stdout,
            stderr,
            timed_out=run.timed_out,
            truncated=cut_out or cut_err,
            output=output,
            output_error=output_error,
        )

    async def _run_function(self, hook: Hook, payload: HookPayload, deadline: float) -> HookResult:
        assert hook.function is not None
        # ``object``: a user's function may return anything, whatever it declares.
        reply: object = None
        with trio.CancelScope(deadline=deadline) as scope:
            reply = await hook.function(payload)
        if scope.cancelled_caught:
            return HookResult(hook, None, timed_out=True)
        if reply is None:
            reply = HookReply()
        if not isinstance(reply, HookReply):
            return HookResult(
                hook,
                None,
                error=f"it returned {type(reply).__name__}; expected a HookReply or None",
            )
        cap = self._output_cap
        out, err = reply.stdout.encode(), reply.stderr.encode()
        stdout, cut_out = _cap_text(out[:cap], len(out), self._redactor)
        stderr, cut_err = _cap_text(err[:cap], len(err), self._redactor)
        output, output_error = parse_hook_output(stdout, truncated=cut_out)
        return HookResult(
            hook,
            reply.exit_code,
            stdout,
            stderr,
            truncated=cut_out or cut_err,
            output=output,
            output_error=output_error,
        )
