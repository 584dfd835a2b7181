"""The transcript format: the records of its lines and where its file lives.

Each agent has one file, ``<state_dir>/sessions/<session_id>/subagents/agent-<id>.jsonl``
(:func:`transcript_path`). Every line is one record, a ``msgspec`` struct tagged
by ``record`` that carries the agent's id (so a line of another agent is
recognised on load) and the wall time it was written::

    {"record":"meta","agent_id":"a1","time":1.7e9,"agent_type":"Explore","nickname":"Ada",...}
    {"record":"message","agent_id":"a1","time":1.7e9,"seq":0,"message":{"role":"user",...}}
    {"record":"result","agent_id":"a1","time":1.7e9,"run":1,"status":"completed",...}
    {"record":"closed","agent_id":"a1","time":1.7e9,"root":"a1","status":"shutdown"}

Writing is in :mod:`subagents.runtime._transcripts.writer`, reading back in
:mod:`subagents.runtime._transcripts.load`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeAlias

import msgspec

from subagents.runtime._exceptions import TranscriptError
from subagents.runtime._messages import Message
from subagents.runtime._providers.base import Usage
from subagents.runtime._result import AgentResult, TerminateReason

if TYPE_CHECKING:
    from subagents.agents import AgentDefinition

__all__ = [
    "FORMAT_VERSION",
    "ClosedRecord",
    "FinalStatus",
    "MessageRecord",
    "MetaRecord",
    "ResultRecord",
    "TranscriptRecord",
    "transcript_file",
    "transcript_path",
    "transcripts_folder",
]

#: The version of the line format, written in every meta record.
FORMAT_VERSION: Final = 1

FinalStatus: TypeAlias = Literal["completed", "errored", "shutdown"]
"""The kernel status a run ended with, as its ``kind`` tag."""


# -- line records ------------------------------------------------------------------


class _Record(msgspec.Struct, frozen=True, kw_only=True, tag_field="record", gc=False):
    agent_id: str
    #: Wall time (seconds since the epoch) the line was written.
    time: float = msgspec.field(default_factory=time.time)


class MetaRecord(_Record, frozen=True, kw_only=True, tag="meta", gc=False):
    """Who the agent is: written first, and again by every writer that resumes it.

    ``created`` is when the agent was first spawned (kept across resumes);
    ``pid`` and ``host`` name the process that wrote the line (while that
    process runs the agent it holds the transcript's lock);
    ``definition_source`` is the scope its definition came from (``builtin``,
    ``project``...) and ``definition_path`` the file, so a resume can find it.
    """

    agent_type: str
    nickname: str
    depth: int = 0
    parent_id: str | None = None
    model: str = ""
    definition_source: str | None = None
    definition_path: str | None = None
    session_id: str = ""
    created: float = msgspec.field(default_factory=time.time)
    version: int = FORMAT_VERSION
    #: The process (and host) whose writer wrote this line and holds the file's lock.
    pid: int | None = None
    host: str | None = None

    @classmethod
    def for_definition(
        cls,
        definition: AgentDefinition,
        *,
        agent_id: str,
        nickname: str,
        depth: int = 0,
        parent_id: str | None = None,
        model: str = "",
        session_id: str = "",
    ) -> MetaRecord:
        """The meta record of an agent spawned from ``definition``."""
        return cls(
            agent_id=agent_id,
            agent_type=definition.name,
            nickname=nickname,
            depth=depth,
            parent_id=parent_id,
            model=model,
            definition_source=definition.source.value,
            definition_path=None if definition.path is None else str(definition.path),
            session_id=session_id,
        )


class MessageRecord(_Record, frozen=True, kw_only=True, tag="message", gc=False):
    """One message of the conversation; ``seq`` numbers the agent's messages from 0."""

    seq: Annotated[int, msgspec.Meta(ge=0)]
    message: Message


class ResultRecord(_Record, frozen=True, kw_only=True, tag="result", gc=False):
    """How run number ``run`` (from 1) ended: its status, terminate reason, output and counters."""

    run: Annotated[int, msgspec.Meta(ge=0)]
    status: FinalStatus
    terminate_reason: TerminateReason
    text: str | None = None
    output: Any = None
    turns: int = 0
    tool_uses: int = 0
    usage: Usage = Usage()
    duration: float = 0.0
    model: str = ""
    grace: Literal["timeout", "max_turns"] | None = None
    error: str | None = None

    @classmethod
    def from_result(
        cls, result: AgentResult, *, agent_id: str, run: int, status: FinalStatus | None = None
    ) -> ResultRecord:
        """The record of ``result``; ``status`` defaults to the one the kernel gives it."""
        return cls(
            agent_id=agent_id,
            run=run,
            status=status or _status_of(result),
            terminate_reason=result.terminate_reason,
            text=result.text,
            output=result.output,
            turns=result.turns,
            tool_uses=result.tool_uses,
            usage=result.usage,
            duration=result.duration,
            model=result.model,
            grace=result.grace,
            error=result.error,
        )

    def to_result(self) -> AgentResult:
        """The :class:`AgentResult` this record was written from."""
        return AgentResult(
            terminate_reason=self.terminate_reason,
            text=self.text,
            output=self.output,
            turns=self.turns,
            tool_uses=self.tool_uses,
            usage=self.usage,
            duration=self.duration,
            model=self.model,
            grace=self.grace,
            error=self.error,
        )


class ClosedRecord(_Record, frozen=True, kw_only=True, tag="closed", gc=False):
    """The agent was closed (``close_agent``, ``Runtime.close``): it is Shutdown now.

    ``root`` is the agent the close was asked for: the agent itself, or the
    ancestor whose subtree it was closed with. Resuming an ancestor reopens a
    descendant unless its latest close was its own (``root`` is itself), as
    Codex's ``close_agent`` marks only the closed agent's spawn edge closed
    (openai/codex ``codex-rs/core/src/agent/control.rs``). An agent still open
    when its process ended has no such line after its latest meta record.
    """

    root: str
    status: FinalStatus = "shutdown"


TranscriptRecord: TypeAlias = MetaRecord | MessageRecord | ResultRecord | ClosedRecord
"""One line of a transcript."""


def _status_of(result: AgentResult) -> FinalStatus:
    if result.terminate_reason is TerminateReason.GOAL:
        return "completed"
    if result.terminate_reason is TerminateReason.ABORTED:
        return "shutdown"
    return "errored"


# -- paths ---------------------------------------------------------------------------


def check_name(kind: str, value: str) -> str:
    """``value`` if it is safe as one path component, else :class:`TranscriptError`."""
    if not value or value in (".", "..") or "/" in value or "\\" in value or "\0" in value:
        raise TranscriptError(
            f"{kind} {value!r} cannot name a transcript: use a non-empty name without "
            "'/', '\\' or NUL that is not '.' or '..'."
        )
    return value


def transcript_path(state_dir: str | os.PathLike[str], session_id: str, agent_id: str) -> Path:
    """``<state_dir>/sessions/<session_id>/subagents/agent-<agent_id>.jsonl``."""
    return Path(transcript_file(transcripts_folder(state_dir, session_id), agent_id))


def transcripts_folder(state_dir: str | os.PathLike[str], session_id: str) -> str:
    """The folder of a session's transcripts, as a string (a runtime makes it once)."""
    return os.path.join(
        os.fspath(state_dir), "sessions", check_name("Session id", session_id), "subagents"
    )


def transcript_file(folder: str, agent_id: str) -> str:
    """Agent ``agent_id``'s transcript in ``folder`` (:func:`transcripts_folder`), as a string:
    what a spawn names its writer's file by, with no ``Path`` made (a ``Path``'s parsing,
    parent, hash and string cost a spawn two dozen Python calls)."""
    return f"{folder}{os.sep}agent-{check_name('Agent id', agent_id)}.jsonl"
