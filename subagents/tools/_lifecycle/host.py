"""The contract between the lifecycle tools and the runtime that runs the agents.

The lifecycle tools (``spawn_agent``, ``send_input``, ``wait``, ``close_agent``,
``resume_agent``, ``Task``/``Agent`` and ``TaskOutput``) live in ``tools``, which
must not import ``runtime``. They reach the agents through :class:`AgentHost`, a
``Protocol`` the runtime implements; every method takes the calling agent's
:class:`ToolContext` first, so the host knows the parent (``ctx.agent_id``) and
its depth. This module also holds the values that cross that boundary and the
text helpers that turn a child's report into something a parent model reads as
data, never as instructions.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from typing import Final, Protocol

import attrs
import msgspec
import trio

from subagents.actors import Status, WaitResult, is_seconds
from subagents.agents import UnknownAgentError
from subagents.tools._context import ToolContext

__all__ = [
    "CALLER_RESERVE_SECONDS",
    "DEFAULT_AGENT_TYPE",
    "FORK_NOTE",
    "SEND_INPUT_WAIT_SECONDS",
    "WAIT_DEFAULT_SECONDS",
    "WAIT_MAX_SECONDS",
    "WAIT_MIN_SECONDS",
    "AgentHost",
    "AgentReport",
    "SpawnedAgent",
    "WaitBounds",
    "encode_json",
    "fit_to_caller",
    "format_agent_result",
    "unknown_agent_type_message",
    "usage_line",
]

#: The agent type a spawn without ``agent_type`` gets.
DEFAULT_AGENT_TYPE: Final = "general-purpose"
#: What a host adds to the description of an agent type whose definition forks
#: the caller's conversation (``forkContext: true``), so the tools' listings say
#: which types see it. Every other type starts with a fresh context.
FORK_NOTE: Final = "(Starts with a copy of your conversation.)"

#: ``wait`` waits this long when the model gives no timeout. The three ``WAIT_``
#: numbers are Codex's (``DEFAULT_WAIT_TIMEOUT_MS``, ``MIN_WAIT_TIMEOUT_MS`` and
#: ``MAX_WAIT_TIMEOUT_MS`` of codex-rs ``core/src/tools/handlers/multi_agents.rs``),
#: and the runtime settings read them from :class:`WaitBounds`.
WAIT_DEFAULT_SECONDS: Final = 30.0
#: The shortest wait a model may ask for; shorter ones are raised to it, so a
#: model cannot turn ``wait`` into a busy polling loop.
WAIT_MIN_SECONDS: Final = 10.0
#: The longest wait a model may ask for; longer ones are cut to it.
WAIT_MAX_SECONDS: Final = 3600.0
#: How much of the caller's own remaining run time a blocking ``wait`` or
#: ``TaskOutput`` leaves it: a wait that would reach the caller's deadline is cut
#: this much short of it, so the caller still has a turn to act on what it got.
CALLER_RESERVE_SECONDS: Final = 10.0
#: How long input from a model (``send_input``, ``resume_agent`` or ``Task`` with
#: ``resume`` of an open agent) waits for room in a busy agent's full mailbox
#: before it fails with a tool error saying the agent is busy. Short: a busy
#: agent reads its mailbox only between turns, and the caller should not stall.
SEND_INPUT_WAIT_SECONDS: Final = 5.0

_RESULT_TAG: Final = "agent_result"
# Anything a parser (or a model) could take for the closing tag: ``</agent_result``,
# ``< / AGENT_RESULT``... Only the ``<`` is escaped, so the text stays readable.
_CLOSING_TAG = re.compile(r"<(?=\s*/\s*" + _RESULT_TAG + r")", re.IGNORECASE)
_SUMMARY_CHARS: Final = 100


def _check_bounds(instance: WaitBounds, attribute: attrs.Attribute[float], value: float) -> None:
    if not is_seconds(value):
        raise ValueError(f"WaitBounds.{attribute.name} must be a finite number >= 0, got {value!r}")


@attrs.frozen
class WaitBounds:
    """How long ``wait`` may block, in seconds (``TaskOutput`` has Claude Code's own bounds).

    A model's timeout is clamped into ``[min_seconds, max_seconds]`` rather than
    refused; no timeout means ``default_seconds``.
    """

    default_seconds: float = attrs.field(default=WAIT_DEFAULT_SECONDS, validator=_check_bounds)
    min_seconds: float = attrs.field(default=WAIT_MIN_SECONDS, validator=_check_bounds)
    max_seconds: float = attrs.field(default=WAIT_MAX_SECONDS, validator=_check_bounds)

    def __attrs_post_init__(self) -> None:
        if not self.min_seconds <= self.default_seconds <= self.max_seconds:
            raise ValueError(
                "WaitBounds needs min_seconds <= default_seconds <= max_seconds, got "
                f"{self.min_seconds!r} <= {self.default_seconds!r} <= {self.max_seconds!r}"
            )

    def clamp(self, seconds: float | None) -> float:
        """``seconds`` forced into the bounds; ``None`` or NaN gives the default.

        An integer of any size is compared exactly (``math.isnan`` would convert
        it to a float, which overflows past about 1e308).
        """
        if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
            return self.default_seconds
        return min(max(seconds, self.min_seconds), self.max_seconds)

    def clamp_ms(self, milliseconds: int | None) -> float:
        """A timeout in milliseconds (of any size) as clamped seconds.

        The comparison happens before the division, so an integer too large for
        a float is clamped instead of overflowing. ``wait`` refuses a timeout
        ``<= 0`` before it gets here, as Codex does.
        """
        if milliseconds is None:
            return self.default_seconds
        if milliseconds <= self.min_seconds * 1000:
            return self.min_seconds
        if milliseconds >= self.max_seconds * 1000:
            return self.max_seconds
        return milliseconds / 1000


def fit_to_caller(seconds: float, caller: ToolContext) -> tuple[float, str | None]:
    """``seconds`` cut so that a blocking call ends before the caller's own run does.

    A wait that reached the caller's deadline would be cancelled with the
    caller's run, which then loses the turn it needed to use the result. When
    ``seconds`` goes past the caller's deadline less
    :data:`CALLER_RESERVE_SECONDS`, it is cut to that (at least 0: a status
    check), and the second value says so for the result; else it is ``None``.
    """
    deadline = caller.deadline
    if math.isinf(deadline):
        return seconds, None
    left = max(0.0, deadline - trio.current_time())
    usable = max(0.0, left - CALLER_RESERVE_SECONDS)
    if seconds <= usable:
        return seconds, None
    note = (
        f"Waited at most {round(usable * 1000)} ms instead of {round(seconds * 1000)} ms: "
        f"your own run ends in {round(left * 1000)} ms, and the last "
        f"{CALLER_RESERVE_SECONDS:g} s of it are kept for you to act on this result."
    )
    return usable, note


@attrs.frozen
class SpawnedAgent:
    """A freshly started agent: its id, nickname, type, and output file if it runs in background."""

    agent_id: str
    nickname: str
    agent_type: str
    output_file: str | None = None


@attrs.frozen
class AgentReport:
    """Where an agent's current (or last) run stands, with its metrics.

    ``status`` is the kernel status at the time of the report; ``result`` is
    the run's final text, if any; ``terminate_reason`` is the agent loop's
    (``goal``, ``timeout``, ``max_turns``, ``aborted``, ``error``,
    ``no_complete_task_call``), ``None`` while the run is going on.
    """

    agent_id: str
    nickname: str
    agent_type: str
    status: Status
    result: str | None = None
    terminate_reason: str | None = None
    turns: int = 0
    tool_uses: int = 0
    total_tokens: int = 0
    duration_seconds: float = 0.0


class AgentHost(Protocol):
    """What the lifecycle tools need from the runtime; ``runtime`` implements it.

    Every method takes the calling agent's :class:`ToolContext` first. Methods
    report a refusal by raising the kernel's errors (``AgentLimitReached``,
    ``DepthLimitReached``, ``AgentNotFound``, ``AgentClosed``, ``MailboxFull``),
    an ``UnknownAgentError`` for an unknown type, or any other
    ``SubagentsError`` with a message for the model; the tools turn those into
    tool errors. Input to an agent whose mailbox is full waits at most
    :data:`SEND_INPUT_WAIT_SECONDS` for room, then raises ``MailboxFull``.
    """

    @property
    def wait_bounds(self) -> WaitBounds:
        """The bounds ``wait`` clamps a model's ``timeout_ms`` into."""
        ...

    async def spawn(
        self,
        caller: ToolContext,
        *,
        agent_type: str | None,
        prompt: str,
        description: str | None = None,
        model: str | None = None,
        fork_context: bool | None = None,
        background: bool = False,
    ) -> SpawnedAgent:
        """Start a child of ``caller`` on ``prompt`` and return once it is running.

        ``agent_type=None`` means :data:`DEFAULT_AGENT_TYPE`. ``fork_context=True``
        hands the child the caller's conversation, ``False`` gives it a fresh
        context, ``None`` leaves it to the type's definition (fresh unless it
        sets ``forkContext``). ``background`` makes it a background agent whose
        result also goes to ``output_file``.
        """
        ...

    async def run_to_completion(
        self, caller: ToolContext, agent_id: str, *, timeout: float
    ) -> AgentReport:
        """Wait (at most ``timeout`` seconds) for the agent's current run to end; report it."""
        ...

    async def send_input(
        self, caller: ToolContext, agent_id: str, message: str, *, interrupt: bool = False
    ) -> Status:
        """Queue ``message`` for the agent (a final agent starts a new turn); its status after.

        ``interrupt=True`` cancels the turn in progress first. A full mailbox is
        waited on at most :data:`SEND_INPUT_WAIT_SECONDS`, then ``MailboxFull``.
        """
        ...

    async def wait(
        self, caller: ToolContext, agent_ids: Sequence[str], *, timeout: float
    ) -> WaitResult:
        """Return once any of ``agent_ids`` is final, or at the deadline (unknown ids: NotFound)."""
        ...

    async def close(self, caller: ToolContext, agent_id: str) -> Status:
        """Close the agent and its open descendants; return the status it had before. Idempotent."""
        ...

    async def resume(
        self, caller: ToolContext, agent_id: str, message: str | None = None
    ) -> Status:
        """Bring the agent back (from its transcript if it is no longer in memory).

        ``message``, when given, becomes its next input. Returns its status after.
        A host may refuse agents the caller may not resume (another session's).
        """
        ...

    async def report(
        self, caller: ToolContext, agent_id: str, *, block: bool, timeout: float
    ) -> AgentReport:
        """The agent's report; with ``block``, first wait up to ``timeout`` s for its run to end."""
        ...

    def agent_types(self) -> Sequence[tuple[str, str]]:
        """Every agent type that can be spawned, as ``(name, description)``.

        The description of a type whose definition forks the caller's
        conversation ends with :data:`FORK_NOTE`.
        """
        ...

    def explain_not_found(self, caller: ToolContext, agent_id: str) -> str | None:
        """Why ``agent_id`` is unknown here and how to bring it back; ``None`` if nothing is known.

        ``wait`` adds it to a ``not_found`` status (an agent of a process that
        has ended: its transcript exists, and whether ``resume_agent`` brings it back).
        """
        ...


_encoder = msgspec.json.Encoder()


def encode_json(value: object) -> str:
    """Compact JSON in the key order given; statuses encode as ``{"kind": ...}`` structs."""
    return _encoder.encode(value).decode("utf-8")


def _attribute(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def format_agent_result(agent_id: str, nickname: str, text: str | None) -> str:
    """A child's text in a delimited ``<agent_result>`` block, for a parent model to read as data.

    Any closing tag inside ``text`` has its ``<`` escaped, so the text cannot
    end the block early and pass itself off as the runtime's words.
    """
    body = "(the agent returned no text)" if text is None else _CLOSING_TAG.sub("&lt;", text)
    return (
        f'<{_RESULT_TAG} agent_id="{_attribute(agent_id)}" nickname="{_attribute(nickname)}">\n'
        f"{body}\n"
        f"</{_RESULT_TAG}>"
    )


def usage_line(report: AgentReport) -> str:
    """The metrics line that follows a foreground result (Claude Code's ``<usage>`` block)."""
    return (
        f"<usage>agent_id: {report.agent_id}, turns: {report.turns}, "
        f"tool uses: {report.tool_uses}, tokens: {report.total_tokens}, "
        f"duration: {report.duration_seconds:.1f} s</usage>"
    )


def _summary(description: str) -> str:
    text = " ".join(description.split())
    end = text.find(". ")
    if end != -1:
        text = text[: end + 1]
    if len(text) > _SUMMARY_CHARS:
        text = text[: _SUMMARY_CHARS - 1].rstrip() + "…"
    return text.removesuffix(".")


def unknown_agent_type_message(
    exc: UnknownAgentError, agent_types: Sequence[tuple[str, str]], field: str | None = None
) -> str:
    """The tool error for an unknown agent type: close names first, then every type.

    ``agent_types`` (from the host) gives the names and descriptions; if it is
    empty the names carried by the exception are used. ``field`` names the
    argument the model should fix, when it has one to fix.
    """
    descriptions = dict(agent_types) if agent_types else dict.fromkeys(exc.available, "")
    names = list(descriptions)
    close = difflib.get_close_matches(exc.name, names, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(name) for name in close)}?" if close else ""
    listing = (
        ", ".join(
            f"{name} ({_summary(text)})" if text.strip() else name
            for name, text in descriptions.items()
        )
        if names
        else "none"
    )
    advice = f" Set {field} to one of these names." if field else ""
    return f"Unknown agent type {exc.name!r}.{hint} Available agent types: {listing}.{advice}"
