"""Every error ``subagents.runtime`` raises.

Provider errors are our own types, whichever provider raised them, so the agent
loop and the embedder never match on an SDK's classes. Each says whether
trying again later may help (:attr:`ProviderError.retryable`) and carries the
request id the provider gave, when there was one::

    SubagentsError
    └── AgentRuntimeError             the runtime could not do what was asked
        ├── ProviderError             a model call failed
        │   ├── RateLimited               429, ``rate_limit_error``
        │   ├── Overloaded                529, ``overloaded_error``
        │   ├── ServerError               other 5xx, ``api_error``
        │   ├── BadRequest                400, 404, 413, 422, ``invalid_request_error``...
        │   ├── AuthenticationFailed      401, 403, ``authentication_error``...
        │   ├── ProviderTimeout           the request, or a read mid-stream, timed out
        │   ├── ProviderConnectionError   could not connect, or the connection dropped
        │   ├── StreamError               the stream carried an error or broke its protocol
        │   └── ScriptError               a scripted provider's script is malformed or ran out
        ├── ProviderNotOpen           a provider was used outside its ``async with``
        ├── InvalidInputs             typed inputs do not match the definition's input schema
        ├── InvalidOutputSchema       a definition's output schema is not a valid JSON Schema
        ├── InvalidJobResult          a job row's reported result does not match the job's schema
        ├── InvalidLimits             a run limit is out of range
        ├── AgentRunFailed            a run ended without reaching its goal
        ├── SpawnNotAllowed           a spawn tool's scope (``Agent(a, b)``) excludes the type
        ├── AgentBusy                 a busy agent's mailbox had no room in time (a ``MailboxFull``)
        ├── AgentNotLoaded            an id this runtime does not hold, whose transcript exists
        │                             (an ``AgentNotFound``)
        ├── ResumeNotAllowed          a model's resume of an agent outside its session lineage
        ├── RuntimeClosed             the runtime is closed or closing
        ├── AgentInUse                the agent is live in another runtime (transcript locked)
        ├── TranscriptError           a transcript could not be read, found or written
        │   ├── TranscriptNotFound        no transcript for that agent id or path
        │   └── TranscriptWriteError      a line could not be written (disk full, removed...)
        └── ProgressNotFound          no progress is tracked for that agent id (a ``LookupError``)

Two configuration errors derive from :class:`SubagentsError` directly, since
they are raised before any runtime exists::

    SubagentsError
    ├── ConfigError                   a bad setting, naming its file or variable and key
    └── HookConfigError               a hook configuration has a bad shape

A :class:`TranscriptWriteError` names the operating system's error, advises
what to do about it, and says what the writer's ``DiskErrorPolicy`` did next.
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Final

from subagents._exceptions import SubagentsError
from subagents.actors import AgentNotFound, MailboxFull

if TYPE_CHECKING:
    from subagents.runtime._config.defaults import DiskErrorPolicy
    from subagents.runtime._result import AgentResult

#: This machine's name, as transcripts record who holds them.
HOST: Final = socket.gethostname()

__all__ = [
    "AgentInUse",
    "ConfigError",
    "HookConfigError",
    "ProgressNotFound",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptWriteError",
    "AgentBusy",
    "AgentNotLoaded",
    "AgentRunFailed",
    "AgentRuntimeError",
    "AuthenticationFailed",
    "BadRequest",
    "InvalidInputs",
    "InvalidLimits",
    "InvalidJobResult",
    "InvalidOutputSchema",
    "Overloaded",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderNotOpen",
    "ProviderTimeout",
    "RateLimited",
    "ScriptError",
    "ResumeNotAllowed",
    "RuntimeClosed",
    "ServerError",
    "SpawnNotAllowed",
    "StreamError",
    "provider_error",
]


class AgentRuntimeError(SubagentsError):
    """The agent runtime could not do what was asked."""


class ProviderError(AgentRuntimeError):
    """A model call failed.

    ``status_code`` is the HTTP status (``None`` when there was no response or
    the error arrived inside a stream), ``error_type`` the provider's own
    category (``overloaded_error``...), ``request_id`` the id to quote to the
    provider's support. ``retryable`` says whether the same request may succeed
    later; the SDK has already retried it when it is.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.request_id = request_id

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild,
            (type(self), self.message, self.status_code, self.error_type, self.request_id),
            self.__dict__,
        )


def _rebuild(
    cls: type[ProviderError],
    message: str,
    status_code: int | None,
    error_type: str | None,
    request_id: str | None,
) -> ProviderError:
    return cls(message, status_code=status_code, error_type=error_type, request_id=request_id)


class RateLimited(ProviderError):
    """The provider refused the request because of a rate limit (429)."""

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = 429,
        error_type: str | None = "rate_limit_error",
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, status_code=status_code, error_type=error_type, request_id=request_id
        )
        #: Seconds the provider asked us to wait, from ``retry-after``, if it said.
        self.retry_after = retry_after


class Overloaded(ProviderError):
    """The provider is overloaded (529, ``overloaded_error``); try again later."""

    retryable = True


class ServerError(ProviderError):
    """The provider failed internally (500-class, ``api_error``)."""

    retryable = True


class BadRequest(ProviderError):
    """The provider rejected the request itself (400, 404, 413, 422); resending it will not help."""


class AuthenticationFailed(ProviderError):
    """The provider did not accept the credentials (401) or the permissions (403)."""


class ProviderTimeout(ProviderError):
    """The request, or a read in the middle of its stream, timed out."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The provider could not be reached, or the connection dropped mid-response."""

    retryable = True


class StreamError(ProviderError):
    """The response stream carried an error of an unknown kind or broke its protocol."""


class ScriptError(ProviderError):
    """A scripted provider's script is malformed, or the agent ran past its end."""


class ProviderNotOpen(AgentRuntimeError):
    """A provider that holds a client was used outside its ``async with`` block."""


class InvalidInputs(AgentRuntimeError):
    """The typed inputs given at spawn do not match the definition's input schema."""


class InvalidOutputSchema(AgentRuntimeError):
    """A definition's output schema is not a valid JSON Schema, so no output could match it."""


class InvalidJobResult(AgentRuntimeError):
    """A job row's ``report_agent_job_result`` does not match the job's output schema.

    The message lists each problem and where it is, as ``complete_task``'s
    refusal does, so the row's agent can fix its call.
    """


class InvalidLimits(AgentRuntimeError):
    """A run limit (turns, seconds, tokens) is out of range."""


class AgentRunFailed(AgentRuntimeError):
    """A run ended without reaching its goal (a limit, an abort, a missing ``complete_task``).

    Raised by :func:`~subagents.runtime.agent_behavior` so the kernel marks the
    actor Errored; :attr:`result` is the full :class:`AgentResult`.
    """

    def __init__(self, result: AgentResult) -> None:
        super().__init__(result.describe())
        self.result = result

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.result,))


class SpawnNotAllowed(AgentRuntimeError):
    """The calling agent's spawn tools are scoped (``Agent(a, b)``) to other agent types."""

    def __init__(self, agent_type: str, allowed: tuple[str, ...]) -> None:
        self.agent_type = agent_type
        self.allowed = allowed
        names = ", ".join(allowed) or "none"
        super().__init__(
            f"This agent may not spawn agents of type {agent_type!r}: its tools allow only "
            f"these agent types: {names}. Use one of them, or do the task yourself."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.agent_type, self.allowed))


def _who(agent_id: str, nickname: str | None) -> str:
    return f"{nickname} ({agent_id})" if nickname else agent_id


class AgentBusy(AgentRuntimeError, MailboxFull):
    """Input for an agent found its mailbox full and no room came within ``waited`` seconds.

    The agent is busy (a long model call or tool) and has not read its
    mailbox; the message was not delivered. ``interrupted`` says its turn was
    stopped first (``interrupt=True``), which usually makes room at once.
    """

    def __init__(
        self,
        agent_id: str,
        capacity: int,
        waited: float,
        *,
        nickname: str | None = None,
        interrupted: bool = False,
    ) -> None:
        self.agent_id = agent_id
        self.capacity = capacity
        self.waited = waited
        self.nickname = nickname
        self.interrupted = interrupted
        stopped = " Its current turn was stopped, but" if interrupted else ""
        AgentRuntimeError.__init__(
            self,
            f"Agent {_who(agent_id, nickname)} is busy: {capacity} messages already wait in "
            f"its mailbox.{stopped} No room came within {waited:g} s, so this message was not "
            "delivered. Wait for the agent to finish its turn (wait), then send it again; or "
            "send it with interrupt=true to stop its current turn first.",
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_busy,
            (self.agent_id, self.capacity, self.waited, self.nickname, self.interrupted),
        )


def _rebuild_busy(
    agent_id: str, capacity: int, waited: float, nickname: str | None, interrupted: bool
) -> AgentBusy:
    return AgentBusy(agent_id, capacity, waited, nickname=nickname, interrupted=interrupted)


class AgentNotLoaded(AgentRuntimeError, AgentNotFound):
    """The runtime holds no agent with this id, but its transcript exists (an earlier process).

    ``resumable`` says whether the caller may resume it itself (it belongs to the
    session lineage, see :class:`ResumeNotAllowed`); else only the user can,
    with ``subagents resume ID``.
    """

    def __init__(self, agent_id: str, nickname: str | None, *, resumable: bool) -> None:
        self.agent_id = agent_id
        self.nickname = nickname
        self.resumable = resumable
        AgentRuntimeError.__init__(self, not_loaded_message(agent_id, nickname, resumable))

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_not_loaded, (self.agent_id, self.nickname, self.resumable))


def _rebuild_not_loaded(agent_id: str, nickname: str | None, resumable: bool) -> AgentNotLoaded:
    return AgentNotLoaded(agent_id, nickname, resumable=resumable)


def not_loaded_message(agent_id: str, nickname: str | None, resumable: bool) -> str:
    """What to do about an agent this runtime does not hold but whose transcript exists."""
    who = _who(agent_id, nickname)
    if resumable:
        return (
            f"Agent {who} is not running in this session: it lived in a process that has "
            f"ended, and its transcript exists. Call resume_agent with id {agent_id!r} to "
            "bring it back with its conversation, then use it again."
        )
    return (
        f"Agent {who} is not part of this session: its transcript exists, but it belongs to "
        "an unrelated earlier session, which you may not resume. The user can bring it back "
        f"with `subagents resume {agent_id}`."
    )


class ResumeNotAllowed(AgentRuntimeError):
    """A model asked to resume an agent outside its session lineage.

    By default a model's ``resume_agent`` (or ``Task`` with ``resume``) may bring
    back only agents whose transcript records a session of the runtime's
    lineage: its own session, and the sessions of agents the user resumed into
    it (``Runtime.resume``, ``subagents resume``). Those two may resume any agent.
    """

    def __init__(self, agent_id: str, sessions: tuple[str, ...]) -> None:
        self.agent_id = agent_id
        self.sessions = sessions
        recorded = ", ".join(sessions) or "none recorded"
        super().__init__(
            f"You may not resume agent {agent_id}: it belongs to an unrelated earlier session "
            f"({recorded}). A model may resume only agents of its own session lineage (this "
            "session, and sessions of agents the user resumed into it). The user can resume "
            f"it with `subagents resume {agent_id}`."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.agent_id, self.sessions))


class RuntimeClosed(AgentRuntimeError):
    """The runtime was used after (or while) its ``async with`` block ended."""

    def __init__(self) -> None:
        super().__init__(
            "The runtime is closed or closing: no agent can be spawned, resumed or sent "
            "input. Open a new one with open_runtime()."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), ())


class AgentInUse(AgentRuntimeError):
    """The agent is live in a runtime that holds its transcript's lock, so it cannot be resumed.

    ``pid`` and ``host`` name the process that holds it (from the newest meta
    record of the transcript; ``None`` when the holder did not write them).
    """

    def __init__(
        self,
        agent_id: str,
        *,
        nickname: str | None = None,
        pid: int | None = None,
        host: str | None = None,
        path: str | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.nickname = nickname
        self.pid = pid
        self.host = host
        self.path = path
        who = f"agent {nickname} ({agent_id})" if nickname else f"agent {agent_id}"
        if pid is None:
            where = "another process"
        elif pid == os.getpid() and host in (None, HOST):
            where = f"this process ({pid}), in another runtime"
        else:
            where = f"process {pid}"
        if host is not None and host != HOST:
            where += f" on host {host}"
        locked = f" (its transcript {path} is locked)" if path else ""
        super().__init__(
            f"{who} is running in {where}; wait for it or close it, then resume it{locked}."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_in_use,
            (self.agent_id, self.nickname, self.pid, self.host, self.path),
        )


def _rebuild_in_use(
    agent_id: str, nickname: str | None, pid: int | None, host: str | None, path: str | None
) -> AgentInUse:
    return AgentInUse(agent_id, nickname=nickname, pid=pid, host=host, path=path)


class TranscriptError(AgentRuntimeError):
    """A transcript could not be read, found or written (the message says which and why)."""


class TranscriptNotFound(TranscriptError):
    """No transcript exists for an agent id (under a state directory) or at a path."""

    def __init__(self, agent_id: str | None, where: str | os.PathLike[str]) -> None:
        self.agent_id = agent_id
        self.where = Path(where)
        if agent_id is None:
            text = (
                f"No transcript file at {self.where}. Check the path; transcripts are "
                "named agent-<id>.jsonl under <state_dir>/sessions/<session>/subagents/."
            )
        else:
            text = (
                f"No transcript for agent {agent_id!r} under {self.where}. Check the agent id "
                "(`subagents transcripts` lists the ones there) and that the state directory "
                "is the one the agent ran with; transcripts older than the retention limit "
                "are removed when a runtime closes."
            )
        super().__init__(text)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.agent_id, self.where))


_ADVICE: Final[dict[int, str]] = {
    errno.ENOSPC: "Free some disk space or point state_dir at another disk.",
    errno.EDQUOT: "Free some space within your disk quota or point state_dir elsewhere.",
    errno.EACCES: "Make the state directory writable or point state_dir elsewhere.",
    errno.EPERM: "Make the state directory writable or point state_dir elsewhere.",
    errno.EROFS: "The file system is read-only: point state_dir at a writable one.",
    errno.ENOENT: "The state directory was removed while the agent ran; do not delete it "
    "during a run.",
    errno.EAGAIN: "Another runtime holds this transcript's lock (the agent runs there); "
    "close it there first.",
    errno.EMFILE: "The process's open-file limit is reached: each open agent holds its "
    "transcript open. Close the agents you are done with, or raise the limit (ulimit -n; "
    "transcripts.raise_file_limit raises the soft limit to the hard one).",
    errno.ENFILE: "The system's open-file table is full: close agents you are done with, "
    "or other programs' files.",
}


class TranscriptWriteError(TranscriptError):
    """Writing a transcript line failed; ``os_error`` is the operating system's error."""

    def __init__(
        self, path: str | os.PathLike[str], os_error: OSError, policy: DiskErrorPolicy = "stop"
    ) -> None:
        self.path = Path(path)
        self.os_error = os_error
        self.errno = os_error.errno
        self.policy: DiskErrorPolicy = policy
        code = errno.errorcode.get(os_error.errno or 0, "")
        reason = os_error.strerror or str(os_error) or type(os_error).__name__
        advice = _ADVICE.get(os_error.errno or 0, "Check the state directory.")
        if policy == "memory":
            then = (
                "The run goes on with the transcript kept in memory, so this agent cannot "
                "be resumed from disk."
            )
        else:
            then = "The agent was stopped (on_disk_error='memory' keeps running in memory)."
        detail = f"{reason} ({code})" if code else reason
        super().__init__(f"Could not write the transcript {self.path}: {detail}. {advice} {then}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.os_error, self.policy))


class ProgressNotFound(AgentRuntimeError, LookupError):
    """The tracker has no progress for this agent id."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"No progress is tracked for agent {agent_id!r}: no event about it has been "
            "seen, or it was forgotten (forget(), or dropped past max_agents after it "
            "finished). Check the id against roots() or tree(), and start following the "
            "bus before spawning agents you want to watch."
        )


class ConfigError(SubagentsError):
    """A configuration value is wrong.

    ``origin`` is where it was written, as shown to the user: a file's path,
    ``environment variable SUBAGENTS_X`` or ``code``; ``path`` is the file
    (``None`` for the environment and code) and ``variable`` the environment
    variable, when there is one. ``key`` is the dotted key
    (``limits.max_threads``; empty for a file that is not valid TOML),
    ``expected`` says what a good value is, ``got`` shows what was found
    (``None`` when there is nothing to show), ``line`` is the file's line when
    known, and ``hint`` says what to do. ``reason``, when set, replaces the
    "expected ..., got ..." clause with a more precise sentence.
    """

    def __init__(
        self,
        origin: str,
        key: str,
        expected: str,
        got: str | None = None,
        *,
        path: Path | None = None,
        variable: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        reason: str | None = None,
        related: tuple[str, ...] = (),
    ) -> None:
        self.origin = origin
        self.key = key
        self.expected = expected
        self.got = got
        self.path = path
        self.variable = variable
        self.line = line
        self.hint = hint
        self.reason = reason
        #: Other keys whose values together made this one wrong (cross-field checks).
        self.related = related
        super().__init__(self._message())

    def _message(self) -> str:
        head = [self.origin]
        if self.key:
            head.append(self.key)
        elif self.line is not None:
            head.append(f"line {self.line}")
        if self.reason is not None:
            body = self.reason
        else:
            body = f"expected {self.expected}"
            if self.got is not None:
                body += f", got {self.got}"
        if self.key and self.line is not None:
            body += f" (line {self.line})"
        text = ": ".join(head) + ": " + body.rstrip(".") + "."
        return f"{text} {self.hint}" if self.hint else text


class HookConfigError(SubagentsError):
    """A hook configuration has a bad shape; the message names the key and what it expects."""


_BY_TYPE: dict[str, type[ProviderError]] = {
    "rate_limit_error": RateLimited,
    "overloaded_error": Overloaded,
    "api_error": ServerError,
    "invalid_request_error": BadRequest,
    "not_found_error": BadRequest,
    "request_too_large": BadRequest,
    "authentication_error": AuthenticationFailed,
    "permission_error": AuthenticationFailed,
    "billing_error": AuthenticationFailed,
    "timeout_error": ProviderTimeout,
}


def provider_error(
    message: str,
    *,
    error_type: str | None = None,
    status_code: int | None = None,
    request_id: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The :class:`ProviderError` subclass for a provider's error ``type`` (first) or HTTP status.

    An error that arrives inside a stream has no meaningful status (it is 200),
    so its ``type`` decides; an unknown type there is a :class:`StreamError`.
    """
    cls = _BY_TYPE.get(error_type or "")
    if cls is None:
        cls = _by_status(status_code)
    if cls is RateLimited:
        return RateLimited(
            message,
            status_code=status_code,
            error_type=error_type,
            request_id=request_id,
            retry_after=retry_after,
        )
    return cls(message, status_code=status_code, error_type=error_type, request_id=request_id)


def _by_status(status: int | None) -> type[ProviderError]:
    if status is None or status < 400:
        return StreamError
    if status == 429:
        return RateLimited
    if status == 529:
        return Overloaded
    if status in (401, 402, 403):
        return AuthenticationFailed
    if status in (408, 504):
        return ProviderTimeout
    if status < 500:
        return BadRequest
    return ServerError
