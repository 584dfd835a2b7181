"""Hook values: a hook, a Python hook's reply, what one hook and one firing came to.

:class:`Hook` is the frozen value a settings file or an agent definition turns
into (:func:`hooks_from_settings`, :func:`hooks_from_specs`); :class:`HookReply`
is how a Python hook answers; :class:`HookResult`, :class:`HookOutcome`,
:class:`HookFired` and :class:`HookRunnerStatistics` are what the
:class:`~subagents.runtime.HookRunner` hands out. Kept apart from the runner so
the runtime's modules can name these without its machinery.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

import attrs

from subagents.actors import Event
from subagents.agents import HookSpec
from subagents.runtime._exceptions import HookConfigError
from subagents.runtime._hooks.commands import (
    DEFAULT_HOOK_TIMEOUT,
    HookEvent,
    HookPayload,
    compile_matcher,
    parse_hook_settings,
)
from subagents.runtime._hooks.output import HookOutput

__all__ = [
    "Hook",
    "HookFired",
    "HookFunction",
    "HookOutcome",
    "HookReply",
    "HookResult",
    "HookRunnerStatistics",
    "hooks_from_settings",
    "hooks_from_specs",
]


@attrs.frozen
class HookReply:
    """A Python hook's answer, with a command's meaning: see the exit-code table in ``_hooks``.

    Returning ``None`` is the same as ``HookReply()`` (success, nothing to say).
    """

    exit_code: int = attrs.field(default=0, validator=attrs.validators.instance_of(int))
    stdout: str = attrs.field(default="", validator=attrs.validators.instance_of(str))
    stderr: str = attrs.field(default="", validator=attrs.validators.instance_of(str))

    @classmethod
    def block(cls, reason: str) -> HookReply:
        """Exit code 2 with ``reason``: blocks a ``PreToolUse`` call or a stop; feedback else."""
        return cls(exit_code=2, stderr=reason)

    @classmethod
    def context(cls, text: str) -> HookReply:
        """Exit code 0 with ``text``: added to the agent's context by ``SubagentStart``."""
        return cls(exit_code=0, stdout=text)


#: A Python hook: called with the payload, answers with a reply or ``None``.
HookFunction = Callable[[HookPayload], Awaitable[HookReply | None]]


def _event(value: HookEvent | str) -> HookEvent:
    try:
        return HookEvent(value)
    except ValueError:
        names = ", ".join(e.value for e in HookEvent)
        raise HookConfigError(f"unknown hook event {value!r}; expected one of {names}") from None


def _matcher_field(value: str | None) -> str | None:
    return None if value in (None, "", "*") else value


@attrs.frozen
class Hook:
    """One hook: an event, an optional matcher, and a shell ``command`` or a ``function``.

    Exactly one of ``command`` (run with ``/bin/sh -c``) and ``function`` is
    set. ``timeout_seconds`` bounds both kinds. ``scope`` says where it came
    from (settings or an agent definition), for messages and the UI. A bad
    event, matcher or timeout raises :class:`HookConfigError`.
    """

    event: HookEvent = attrs.field(converter=_event)
    command: str | None = None
    function: HookFunction | None = None
    matcher: str | None = attrs.field(default=None, converter=_matcher_field)
    timeout_seconds: float = DEFAULT_HOOK_TIMEOUT
    scope: Literal["global", "agent"] = "global"

    def __attrs_post_init__(self) -> None:
        if (self.command is None) == (self.function is None):
            raise HookConfigError("a hook needs exactly one of 'command' and 'function'")
        if self.command is not None and not self.command.strip():
            raise HookConfigError("a hook's command must be a non-empty shell command")
        timeout = self.timeout_seconds
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise HookConfigError(f"a hook's timeout must be a number, not {timeout!r}")
        if not 0 < timeout < math.inf:
            raise HookConfigError(f"a hook's timeout must be positive and finite, not {timeout}")
        if self.matcher is not None:
            compile_matcher(self.matcher)

    @classmethod
    def from_spec(cls, spec: HookSpec, *, scope: Literal["global", "agent"] = "agent") -> Hook:
        """The command hook a :class:`~subagents.agents.HookSpec` describes."""
        return cls(
            spec.event,
            command=spec.command,
            matcher=spec.matcher,
            timeout_seconds=spec.timeout_seconds or DEFAULT_HOOK_TIMEOUT,
            scope=scope,
        )

    @property
    def label(self) -> str:
        """A short, one-line name for messages: the command or the function's name."""
        if self.command is not None:
            text = " ".join(self.command.split())
            return text if len(text) <= 60 else text[:57] + "..."
        return str(getattr(self.function, "__qualname__", None) or repr(self.function))

    def matches(self, subject: str | None) -> bool:
        """Whether this hook applies to a tool name or agent type ``subject``."""
        if self.matcher is None:
            return True
        return subject is not None and compile_matcher(self.matcher)(subject)


def hooks_from_specs(specs: Iterable[HookSpec]) -> tuple[Hook, ...]:
    """An agent's scoped hooks, from its definition's ``hooks``.

    A matcher that is not a valid regular expression raises :class:`HookConfigError`.
    """
    return tuple(Hook.from_spec(spec) for spec in specs)


def hooks_from_settings(settings: Mapping[str, Any]) -> tuple[Hook, ...]:
    """Global hooks from a settings mapping in Claude Code's shape (``{"hooks": {...}}``).

    See :func:`~subagents.runtime._hooks.commands.parse_hook_settings` for the
    shape; a bad one raises :class:`HookConfigError` naming the key.
    """
    return tuple(Hook.from_spec(spec, scope="global") for spec in parse_hook_settings(settings))


@attrs.frozen
class HookResult:
    """How one hook ran.

    ``exit_code`` is ``None`` when the hook timed out or failed (``error`` says
    how: a Python hook raised, a command could not start). ``stdout`` and
    ``stderr`` are capped; ``truncated`` says a note about the cut was added.
    ``duration`` is in seconds on the Trio clock. ``output`` is the JSON
    object stdout held (see :mod:`~subagents.runtime._hooks.output`), and
    ``output_error`` says why JSON on stdout was ignored.
    """

    hook: Hook
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None
    duration: float = 0.0
    truncated: bool = False
    output: HookOutput | None = None
    output_error: str | None = None


@attrs.frozen
class HookOutcome:
    """What the hooks of one firing decided, for the runtime to act on.

    ``blocked``: a ``PreToolUse`` hook exited 2, and ``reason`` is the text the
    model gets instead of the tool's result; or a ``SubagentStop`` hook blocked
    the stop (exit 2, or ``{"decision": "block", "reason": ...}`` on stdout),
    and ``reason`` is what the agent is told to do next. ``feedback``: texts
    for the agent (``SubagentStart`` context, plain or as JSON
    ``hookSpecificOutput.additionalContext``; ``PostToolUse`` exit-2 stderr).
    ``user_messages``: errors and ``systemMessage`` warnings for the person
    running the agents only.
    """

    event: HookEvent
    results: tuple[HookResult, ...] = ()
    blocked: bool = False
    reason: str | None = None
    feedback: tuple[str, ...] = ()
    user_messages: tuple[str, ...] = ()

    @property
    def feedback_text(self) -> str | None:
        """:attr:`feedback` joined by blank lines, or ``None`` when there is none."""
        return "\n\n".join(self.feedback) if self.feedback else None


class HookFired(Event, frozen=True, kw_only=True, tag="hook_fired"):
    """One hook ran for the agent of the envelope; ``exit_code`` as in :class:`HookResult`."""

    hook_event_name: str
    hook: str
    exit_code: int | None
    timed_out: bool
    error: str | None
    duration: float
    tool_use_id: str | None = None


@attrs.frozen
class HookRunnerStatistics:
    """Counters of a :class:`HookRunner`."""

    firings: int
    hooks_run: int
    blocked: int
    timed_out: int
    failed: int
