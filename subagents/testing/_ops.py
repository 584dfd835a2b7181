"""Scripted agent behaviors, runtime operations, and Hypothesis strategies that draw them.

Re-exported by :mod:`subagents.testing`, whose docstring shows how they fit.

**Behaviors by directive.** :class:`DirectivePolicy` (and its default
instance :data:`directive_policy`) is a scripted-provider policy that does
what the newest directive in the conversation says
(:func:`directive` writes one into a prompt or a follow-up input): ``finish``
answers, ``fail`` raises a provider error, ``hang`` never answers, ``tool``
calls a tool (``LS`` by default) then answers, ``malformed`` makes a tool call whose arguments are
not JSON, then answers. Sending an agent a new directive changes what its next
run does, so one policy serves a whole property test.

**Operations.** :class:`Spawn`, :class:`SendInput`, :class:`Wait`,
:class:`Close`, :class:`Resume` and :class:`Cancel` are plain values;
:func:`apply_operation` performs one on a runtime, with targets given as
indexes into the agents spawned so far, and returns what happened (a value, or
the :class:`~subagents.SubagentsError` the runtime refused with). ``Cancel`` is
the caller's to perform: it cancels the scope that owns the runtime.

**Strategies** (Hypothesis is imported only when one is called, so this module
works without it): :func:`behaviors`, :func:`operations`, :func:`agent_scripts`
and :func:`faults`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import attrs

from subagents._exceptions import SubagentsError
from subagents.runtime import (
    COMPLETE_TASK,
    ModelRequest,
    Origin,
    Reply,
    Runtime,
    ScriptedToolCall,
    provider_error,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "ScriptedBehavior",
    "Cancel",
    "Close",
    "DirectivePolicy",
    "Operation",
    "Resume",
    "SendInput",
    "Spawn",
    "Wait",
    "agent_scripts",
    "apply_operation",
    "behaviors",
    "directive",
    "directive_policy",
    "faults",
    "operations",
]


class ScriptedBehavior(enum.Enum):
    """What a scripted agent does in a run (see :func:`directive_policy`)."""

    FINISH = "finish"
    FAIL = "fail"
    HANG = "hang"
    TOOL = "tool"
    MALFORMED = "malformed"


_DIRECTIVE: Final = re.compile(r"\[\[behave:(\w+)\]\]")
#: The tool a ``tool`` or ``malformed`` directive calls (read-only, offered to most agents).
DIRECTIVE_TOOL: Final = "LS"


def directive(behavior: ScriptedBehavior, note: str = "") -> str:
    """A prompt (or follow-up input) that makes :func:`directive_policy` do ``behavior``."""
    text = f"[[behave:{behavior.value}]]"
    return f"{text} {note}" if note else text


def _newest_directive(request: ModelRequest) -> tuple[ScriptedBehavior, int]:
    """The newest directive, and how many model turns were taken since it was given."""
    answered = 0
    for message in reversed(request.messages):
        if message.role == "assistant":
            answered += 1
            continue
        if message.origin is Origin.TOOL_RESULTS:
            continue
        found = _DIRECTIVE.findall(message.text)
        if found:
            try:
                return ScriptedBehavior(found[-1]), answered
            except ValueError:
                break
    return ScriptedBehavior.FINISH, answered


@attrs.frozen
class DirectivePolicy:
    """A policy that replies as the newest directive says; with none, it answers at once.

    ``tool`` (with ``arguments``) is what a ``tool`` directive calls and a
    ``malformed`` one calls with broken arguments. In a grace turn (only
    ``complete_task`` offered) a ``hang`` still hangs and everything else completes.
    """

    tool: str = DIRECTIVE_TOOL
    arguments: Mapping[str, Any] = attrs.field(factory=lambda: {"path": "."})

    def __call__(self, request: ModelRequest) -> Reply:
        behavior, answered = _newest_directive(request)
        if behavior is ScriptedBehavior.HANG:
            return Reply(hang=True)
        if request.grace:
            return Reply(tool_calls=(ScriptedToolCall(COMPLETE_TASK, {"result": "done (grace)"}),))
        if behavior is ScriptedBehavior.FAIL:
            return Reply(error=provider_error("scripted failure", error_type="overloaded_error"))
        if answered == 0 and behavior is ScriptedBehavior.TOOL:
            return Reply(tool_calls=(ScriptedToolCall(self.tool, dict(self.arguments)),))
        if answered == 0 and behavior is ScriptedBehavior.MALFORMED:
            return Reply(tool_calls=(ScriptedToolCall(self.tool, '{"path": '),))
        return Reply(text=f"done ({behavior.value})")


#: The :class:`DirectivePolicy` whose ``tool`` directive calls ``LS`` on ``.``.
directive_policy: Final = DirectivePolicy()


# -- operations ---------------------------------------------------------------------------


@attrs.frozen
class Spawn:
    """Spawn an agent doing ``behavior`` (under the agent at ``parent``, an index, if set)."""

    behavior: ScriptedBehavior
    background: bool = False
    parent: int | None = None


@attrs.frozen
class SendInput:
    """Send the agent at ``target`` a new directive, interrupting its run if asked."""

    target: int
    behavior: ScriptedBehavior
    interrupt: bool = False


@attrs.frozen
class Wait:
    """Wait for the agents at ``targets`` (any or all), at most ``timeout`` seconds."""

    targets: tuple[int, ...]
    timeout: float
    mode: Literal["any", "all"] = "any"


@attrs.frozen
class Close:
    """Close the agent at ``target`` (and its subtree)."""

    target: int


@attrs.frozen
class Resume:
    """Resume the agent at ``target``, with a new directive or (``None``) without a prompt."""

    target: int
    behavior: ScriptedBehavior | None = None


@attrs.frozen
class Cancel:
    """Cancel the scope that owns the runtime (performed by the caller)."""


Operation: TypeAlias = Spawn | SendInput | Wait | Close | Resume | Cancel
"""One step of a property test."""


def _pick(agents: Sequence[str], index: int) -> str | None:
    return agents[index % len(agents)] if agents else None


async def apply_operation(
    runtime: Runtime, operation: Operation, agents: list[str], *, agent_type: str
) -> Any:
    """Perform ``operation`` on ``runtime``; ``agents`` (ids, oldest first) grows on a spawn.

    Returns the call's value, the :class:`~subagents.SubagentsError` it was
    refused with, or ``None`` when there was no agent to target. ``Cancel``
    raises :class:`TypeError`: only the caller can cancel its own scope.
    """
    try:
        if isinstance(operation, Spawn):
            parent = None if operation.parent is None else _pick(agents, operation.parent)
            handle = await runtime.spawn(
                agent_type,
                directive(operation.behavior),
                background=operation.background,
                parent=parent,
            )
            agents.append(handle.agent_id)
            return handle
        if isinstance(operation, Cancel):
            raise TypeError("Cancel is performed by the caller: cancel the runtime's scope.")
        if isinstance(operation, Wait):
            ids = [agents[i % len(agents)] for i in operation.targets] if agents else []
            return await runtime.wait(ids, timeout=operation.timeout, mode=operation.mode)
        target = _pick(agents, operation.target)
        if target is None:
            return None
        if isinstance(operation, SendInput):
            return await runtime.send_input(
                target, directive(operation.behavior), interrupt=operation.interrupt
            )
        if isinstance(operation, Close):
            return await runtime.close(target)
        prompt = None if operation.behavior is None else directive(operation.behavior)
        return await runtime.resume(target, prompt)
    except SubagentsError as exc:
        return exc


# -- strategies ------------------------------------------------------------------------------


def behaviors() -> SearchStrategy[ScriptedBehavior]:
    """Any :class:`ScriptedBehavior`."""
    from hypothesis import strategies as st

    return st.sampled_from(ScriptedBehavior)


def operations(
    *, min_size: int = 1, max_size: int = 20, timeouts: Sequence[float] = (0.0, 1.0, 5.0)
) -> SearchStrategy[list[Operation]]:
    """Sequences of operations that start with a spawn; at most one ``Cancel``, always last.

    Targets are small indexes (taken modulo the agents spawned so far);
    ``timeouts`` are the wait timeouts drawn from.
    """
    from hypothesis import strategies as st

    index = st.integers(min_value=0, max_value=7)
    step = st.one_of(
        st.builds(Spawn, behaviors(), st.booleans(), st.none() | index),
        st.builds(SendInput, index, behaviors(), st.booleans()),
        st.builds(
            Wait,
            st.lists(index, min_size=1, max_size=3).map(tuple),
            st.sampled_from(tuple(timeouts)),
            st.sampled_from(("any", "all")),
        ),
        st.builds(Close, index),
        st.builds(Resume, index, st.none() | behaviors()),
        st.just(Cancel()),
    )
    first = st.builds(Spawn, behaviors(), st.booleans())

    def cut(steps: list[Operation]) -> list[Operation]:
        for position, op in enumerate(steps):
            if isinstance(op, Cancel):
                return steps[: position + 1]
        return steps

    rest = st.lists(step, min_size=max(min_size - 1, 0), max_size=max(max_size - 1, 0))
    return st.tuples(first, rest).map(lambda pair: cut([pair[0], *pair[1]]))


def faults(*, tool: str = DIRECTIVE_TOOL) -> SearchStrategy[Reply]:
    """Replies that go wrong: a provider error (of any kind), a hang, a malformed tool call."""
    from hypothesis import strategies as st

    kinds = (
        "overloaded_error",
        "rate_limit_error",
        "api_error",
        "invalid_request_error",
        "authentication_error",
        "timeout_error",
    )
    raised = st.builds(
        lambda kind, message: Reply(error=provider_error(message, error_type=kind)),
        st.sampled_from(kinds),
        st.text(min_size=1, max_size=40),
    )
    hung = st.builds(lambda text: Reply(text=text, hang=True), st.text(max_size=20))
    malformed = st.builds(
        lambda raw: Reply(tool_calls=(ScriptedToolCall(tool, raw),)),
        st.sampled_from(('{"path": ', "[1, 2]", "not json", '"text"')),
    )
    return st.one_of(raised, hung, malformed)


def agent_scripts(
    *, tool: str = DIRECTIVE_TOOL, max_tool_turns: int = 3, with_faults: bool = True
) -> SearchStrategy[list[Reply]]:
    """Scripts (a reply per turn, for :class:`~subagents.runtime.Script`): some tool
    calls, then an ending: a final message, a ``complete_task`` call or (``with_faults``) a
    fault from :func:`faults`."""
    from hypothesis import strategies as st

    calling = st.builds(
        lambda text: Reply(text=text, tool_calls=(ScriptedToolCall(tool, {"path": "."}),)),
        st.text(max_size=20),
    )
    endings = [
        st.builds(lambda text: Reply(text=text or "done"), st.text(max_size=40)),
        st.builds(
            lambda text: Reply(
                tool_calls=(ScriptedToolCall(COMPLETE_TASK, {"result": text or "done"}),)
            ),
            st.text(max_size=40),
        ),
    ]
    if with_faults:
        endings.append(faults(tool=tool))
    return st.tuples(st.lists(calling, max_size=max_tool_turns), st.one_of(endings)).map(
        lambda pair: [*pair[0], pair[1]]
    )
