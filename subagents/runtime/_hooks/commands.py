"""Command hooks: their wire format, their settings shape, and how one runs.

The base layer of :mod:`subagents.runtime._hooks`; :mod:`subagents.runtime`
re-exports what is public here. It holds what does not depend on a :class:`~subagents.runtime.Hook`
object: the :class:`HookPayload` written as JSON to a command's stdin, the
matcher syntax, the Claude Code ``settings.json`` ``hooks`` shape (parsed into
:class:`~subagents.agents.HookSpec` values, like frontmatter hooks), and the
process runner.

The command runs as ``/bin/sh -c COMMAND`` in a new session, so it leads its
own process group and everything it starts can be killed together. The payload
is written to its stdin (then closed); stdout and stderr are read concurrently
into buffers that keep the first ``output_cap`` bytes and count, then discard,
the rest, so a chatty hook never blocks on a full pipe and never grows memory.
When the shell exits, the process group is killed (``SIGKILL``) to remove
background children it left behind; at the deadline, or when the caller is
cancelled, the whole group is killed and reaped before anything else happens.
Processes that left the group (``setsid ... &``, a daemon) are found by the
marker in their environment and killed too, as ``Bash``'s are
(:class:`~subagents.tools.ProcessSweep`): no hook process outlives its run.
A caller's cancellation then propagates; a deadline is reported as
:attr:`CommandRun.timed_out`.

The command's environment is the runtime's without its secret variables
(:func:`~subagents.tools.child_environment`), except those ``env_passthrough``
names.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import math
import os
import re
import subprocess
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs
import msgspec
import trio

from subagents.agents import HookSpec
from subagents.runtime._exceptions import HookConfigError
from subagents.tools import ProcessSweep, child_environment, kill_group

__all__ = [
    "DEFAULT_HOOK_OUTPUT_CAP",
    "DEFAULT_HOOK_TIMEOUT",
    "CommandRun",
    "HookEvent",
    "HookPayload",
    "compile_matcher",
    "encode_payload",
    "kill_group",
    "parse_hook_settings",
    "run_hook_command",
]

#: Seconds a hook may run when its configuration gives no ``timeout``.
DEFAULT_HOOK_TIMEOUT = 60.0
#: Bytes of stdout (and, separately, of stderr) kept from one hook.
DEFAULT_HOOK_OUTPUT_CAP = 64 * 1024


class HookEvent(enum.Enum):
    """The points where hooks fire, spelled as Claude Code spells them.

    ``Stop`` is Claude Code's main-agent stop: it fires when a top-level agent
    (one without a parent) stops, after its ``SubagentStop`` (which fires for
    every agent), and blocks the same way. As in Claude Code, a ``Stop``
    hook's matcher is ignored, and a ``Stop`` hook in an agent's frontmatter
    is that agent's ``SubagentStop`` (:mod:`subagents.agents`).

    ``TeammateIdle`` fires when a teammate of a team is about to go idle, after
    its ``SubagentStop``; exit 2 (or JSON ``decision: "block"``) sends the
    reason back as feedback and keeps it working, as in Claude Code
    (https://code.claude.com/docs/en/hooks#teammateidle). Like ``Stop``, it has
    no matcher.
    """

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    STOP = "Stop"
    TEAMMATE_IDLE = "TeammateIdle"
    TASK_CREATED = "TaskCreated"
    TASK_COMPLETED = "TaskCompleted"

    @property
    def is_tool_event(self) -> bool:
        """Whether matchers apply to the tool name (else to the agent type)."""
        return self in (HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE)

    @property
    def ignores_matcher(self) -> bool:
        """Whether every hook of the event fires whatever its matcher says.

        As in Claude Code (https://code.claude.com/docs/en/hooks): ``Stop``,
        ``TaskCreated``, ``TaskCompleted`` and ``TeammateIdle`` have nothing to
        match, and fire on every occurrence.
        """
        return self in (
            HookEvent.STOP,
            HookEvent.TASK_CREATED,
            HookEvent.TASK_COMPLETED,
            HookEvent.TEAMMATE_IDLE,
        )

    @property
    def is_task_event(self) -> bool:
        """Whether the event is a task board checkpoint (``TaskCreated``, ``TaskCompleted``)."""
        return self in (HookEvent.TASK_CREATED, HookEvent.TASK_COMPLETED)


class HookPayload(msgspec.Struct, frozen=True, kw_only=True):
    """What a hook is told, written as JSON to a command hook's stdin.

    Field names are Claude Code's where it has one. Every payload carries every
    key (``null`` where it does not apply), so ``jq -r .tool_name`` never fails.
    As in Claude Code's hooks reference (https://code.claude.com/docs/en/hooks,
    ``SubagentStop`` input; Codex does the same, openai/codex pull request
    #22873), ``agent_transcript_path`` is this agent's own transcript and
    ``transcript_path`` the transcript of the agent that spawned it. A
    top-level agent has no parent: both name its own transcript, as Claude
    Code's ``transcript_path`` names the main conversation's for the main
    agent, so a script reading either always gets the conversation at the top
    of this tree (``null`` only when transcripts are off). ``tool_use_id``,
    ``tool_name`` and ``tool_input`` are set for tool events, ``tool_response``
    for ``PostToolUse``, ``prompt`` (the task) for ``SubagentStart`` and
    ``last_assistant_message`` (the agent's final text) for ``SubagentStop``,
    whose ``stop_hook_active`` says the agent is going on because a stop hook
    blocked its stop already (a hook that always blocks can let it stop then).
    ``TaskCreated`` and ``TaskCompleted`` carry Claude Code's ``task_id``,
    ``task_subject``, ``task_description``, ``teammate_name`` (the member making
    the change) and ``team_name``.
    ``TeammateIdle`` carries ``teammate_name`` and ``team_name`` too.
    """

    hook_event_name: str
    agent_id: str
    agent_type: str
    parent_id: str | None = None
    depth: int = 0
    session_id: str | None = None
    cwd: str | None = None
    transcript_path: str | None = None
    agent_transcript_path: str | None = None
    prompt: str | None = None
    tool_use_id: str | None = None
    tool_name: str | None = None
    tool_input: Mapping[str, Any] | None = None
    tool_response: Any = None
    last_assistant_message: str | None = None
    stop_hook_active: bool = False
    task_id: str | None = None
    task_subject: str | None = None
    task_description: str | None = None
    teammate_name: str | None = None
    team_name: str | None = None


def _json_default(value: object) -> object:
    # Tool inputs and responses often arrive frozen (read-only mappings, tuples
    # are native); give JSON what it can hold, and refuse anything else.
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = msgspec.json.Encoder(enc_hook=_json_default)


def encode_payload(payload: HookPayload) -> bytes:
    """``payload`` as the JSON a command reads on stdin (read-only mappings welcome).

    Raises :class:`TypeError` or :class:`msgspec.EncodeError` for a value JSON cannot hold.
    """
    return _ENCODER.encode(payload)


_EXACT_NAMES = re.compile(r"[A-Za-z0-9_|]+")


@functools.lru_cache(maxsize=512)
def compile_matcher(pattern: str) -> Callable[[str], bool]:
    """A predicate for Claude Code's matcher syntax (cached; bounded).

    Letters, digits, ``_`` and ``|`` only: exact names separated by ``|``.
    Anything else: a regular expression *searched* in the name, as Claude Code
    does (anchor it with ``^...$``). An invalid one raises :class:`HookConfigError`.
    """
    if _EXACT_NAMES.fullmatch(pattern):
        return frozenset(pattern.split("|")).__contains__
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise HookConfigError(
            f"matcher {pattern!r} is not a valid regular expression ({exc}); expected a tool "
            "name, names separated by '|', a regular expression such as 'mcp__.*', or '*'"
        ) from None
    return lambda name: compiled.search(name) is not None


#: Claude Code events a settings file may configure that subagents never fires;
#: :func:`parse_hook_settings` skips them instead of rejecting the file.
_FOREIGN_EVENTS = frozenset(
    (
        *("PostToolUseFailure", "PermissionRequest", "UserPromptSubmit", "Notification"),
        *("PreCompact", "PostCompact", "SessionStart", "SessionEnd", "Setup"),
        *("ConfigChange", "CwdChanged"),
        *("FileChanged", "WorktreeCreate", "WorktreeRemove", "Elicitation"),
        *("ElicitationResult", "InstructionsLoaded"),
    )
)
_EVENT_NAMES = frozenset(e.value for e in HookEvent)


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    name = type(value).__name__
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def parse_hook_settings(settings: Mapping[str, Any]) -> tuple[HookSpec, ...]:
    """The command hooks of a settings mapping in Claude Code's shape.

    ``settings`` is the whole settings object; its ``hooks`` key (absent: no
    hooks) maps event names to lists of ``{"matcher": ..., "hooks": [{"type":
    "command", "command": ..., "timeout": seconds}]}`` groups. Claude Code
    events subagents never fires (``SessionStart``, ``Notification``...) are skipped;
    anything else of the wrong shape raises :class:`HookConfigError` naming the
    key and what was expected.
    """
    if not isinstance(settings, Mapping):
        raise HookConfigError(f"settings must be a mapping, not {_describe(settings)}")
    events = settings.get("hooks")
    if events is None:
        return ()
    if not isinstance(events, Mapping):
        raise HookConfigError(
            "hooks must be a mapping of event name to a list of {matcher, hooks} groups, "
            f"not {_describe(events)}"
        )
    specs: list[HookSpec] = []
    for name, groups in events.items():
        key = f"hooks.{name}"
        if name in _FOREIGN_EVENTS:
            continue
        if name not in _EVENT_NAMES:
            raise HookConfigError(
                f"{key} is not a hook event; expected one of {', '.join(sorted(_EVENT_NAMES))} "
                "(Claude Code's other events are accepted and never fired)"
            )
        if not isinstance(groups, list | tuple):
            raise HookConfigError(
                f"{key} must be a list of {{matcher, hooks}} groups, not {_describe(groups)}"
            )
        for index, group in enumerate(groups):
            specs.extend(_settings_group(name, f"{key}[{index}]", group))
    return tuple(specs)


def _settings_group(event: str, key: str, group: object) -> list[HookSpec]:
    if not isinstance(group, Mapping):
        raise HookConfigError(
            f"{key} must be a mapping with 'matcher' and 'hooks', not {_describe(group)}"
        )
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        raise HookConfigError(f"{key}.matcher must be text, not {_describe(matcher)}")
    if matcher in ("", "*"):
        matcher = None
    if matcher is not None:
        try:
            compile_matcher(matcher)
        except HookConfigError as exc:
            raise HookConfigError(f"{key}.matcher: {exc}") from None
    entries = group.get("hooks")
    if not isinstance(entries, list | tuple):
        raise HookConfigError(
            f"{key}.hooks must be a list of {{type: command, command: ...}} entries, "
            f"not {_describe(entries)}"
        )
    specs: list[HookSpec] = []
    for index, entry in enumerate(entries):
        e_key = f"{key}.hooks[{index}]"
        if not isinstance(entry, Mapping):
            raise HookConfigError(f"{e_key} must be a mapping, not {_describe(entry)}")
        kind = entry.get("type", "command")
        if kind != "command":
            raise HookConfigError(
                f"{e_key}.type must be 'command', not {kind!r} (a Python hook is a "
                "Hook(event, function=...) given to the runtime)"
            )
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise HookConfigError(
                f"{e_key}.command must be a non-empty shell command, not {_describe(command)}"
            )
        timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise HookConfigError(
                f"{e_key}.timeout must be a number of seconds, not {_describe(timeout)}"
            )
        if not 0 < timeout < math.inf:
            raise HookConfigError(f"{e_key}.timeout must be positive and finite, not {timeout}")
        specs.append(HookSpec(event, command, matcher, float(timeout)))
    return specs


_READ_SIZE = 64 * 1024
#: Bound on reaping the shell after ``SIGKILL`` (microseconds in practice).
_REAP_TIMEOUT = 5.0
#: How long the pipes may stay open once the group is dead (a grandchild that
#: moved to a session of its own can still hold them).
_DRAIN_GRACE = 1.0
_SHELL = "/bin/sh"


@attrs.frozen
class CommandRun:
    """How a hook command ended: its capped output and why it stopped.

    ``exit_code`` is ``None`` when the command timed out (it was killed);
    a negative value is the signal that ended it otherwise.
    """

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_total: int
    stderr_total: int
    timed_out: bool


class _CappedBuffer:
    """Keeps the first ``cap`` bytes of a stream and counts all of them."""

    __slots__ = ("_cap", "data", "total")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self.data = bytearray()
        self.total = 0

    def feed(self, chunk: bytes | bytearray) -> None:
        self.total += len(chunk)
        room = self._cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]


async def _pump(stream: trio.abc.ReceiveStream, buffer: _CappedBuffer, done: trio.Event) -> None:
    try:
        while chunk := await stream.receive_some(_READ_SIZE):
            buffer.feed(chunk)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass
    finally:
        done.set()


async def _feed(stream: trio.abc.SendStream, data: bytes, scope: trio.CancelScope) -> None:
    # A hook that never reads its stdin, or exits early, is not an error; once
    # the shell has exited, ``scope`` is cancelled so a full pipe cannot hold us.
    with scope, contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
        await stream.send_all(data)
        await stream.aclose()


async def run_hook_command(
    command: str,
    stdin_data: bytes,
    *,
    deadline: float,
    output_cap: int,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    env_passthrough: Collection[str] = (),
) -> CommandRun:
    """Run ``command`` with ``stdin_data`` on its stdin until it exits or ``deadline`` passes.

    ``deadline`` is on the Trio clock (``math.inf`` for none). ``env`` is added
    to the runtime's own environment; secret variables are then removed, except
    those in ``env_passthrough``. Raises :class:`OSError` when the shell
    cannot be started (a missing ``cwd``, for one); never leaves a process the
    hook started running.
    """
    sweep = ProcessSweep()
    environment = sweep.environment(
        child_environment({**os.environ, **(env or {})}, env_passthrough)
    )
    proc = await trio.lowlevel.open_process(
        [_SHELL, "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=None if cwd is None else os.fspath(cwd),
        env=environment,
        start_new_session=True,
    )
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    assert stdin is not None
    assert stdout is not None
    assert stderr is not None
    out, err = _CappedBuffer(output_cap), _CappedBuffer(output_cap)
    out_done, err_done = trio.Event(), trio.Event()
    timed_out = False
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_pump, stdout, out, out_done)
            nursery.start_soon(_pump, stderr, err, err_done)
            feeding = trio.CancelScope()
            nursery.start_soon(_feed, stdin, stdin_data, feeding)
            with trio.CancelScope(deadline=deadline) as waiting:
                await proc.wait()
            timed_out = waiting.cancelled_caught
            # Background children left behind (or, on timeout, everything) go now.
            await sweep.kill(proc.pid)
            feeding.cancel()
            with trio.move_on_after(_REAP_TIMEOUT):
                await proc.wait()
            with trio.move_on_after(_DRAIN_GRACE):
                await out_done.wait()
                await err_done.wait()
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                kill_group(proc.pid)
                with trio.move_on_after(_REAP_TIMEOUT):
                    await proc.wait()
            await sweep.kill()
            for stream in (stdin, stdout, stderr):
                await stream.aclose()
    return CommandRun(
        exit_code=None if timed_out else proc.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_total=out.total,
        stderr_total=err.total,
        timed_out=timed_out,
    )
