"""A runtime's session lineage: which earlier agents its models may resume.

Every writer of a transcript, the first and each resume, puts a meta record in
it naming its session, so a transcript records every session its agent lived
in. A runtime's lineage is its own session plus the sessions of the agents the
user resumed into it (``Runtime.resume``, ``subagents resume``). A model's
``resume_agent`` may bring back an agent only when its transcript records a
session of that lineage: a lead resumed after its process ended can bring back
its own children, but no model can pull another run's agent, and its
conversation, into the current one. The user and the embedding program may
resume any agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final, final

import attrs
import msgspec

from subagents.runtime._transcripts.records import MetaRecord

__all__ = ["SessionLineage", "TranscriptSessions", "read_sessions"]

#: Every meta line starts so (``msgspec`` writes the tag first).
_META_PREFIX: Final = b'{"record":"meta"'
_meta_decoder: Final = msgspec.json.Decoder(MetaRecord)


@attrs.frozen
class TranscriptSessions:
    """Who a transcript says its agent is: its newest nickname and every session it lived in."""

    nickname: str | None
    sessions: tuple[str, ...]


def read_sessions(path: Path, agent_id: str) -> TranscriptSessions:
    """The sessions ``path``'s meta records name, oldest first (unreadable lines skipped).

    Only meta lines are decoded; lines of another agent are ignored, as the
    loader ignores them. Raises ``OSError`` when the file cannot be read.
    """
    nickname: str | None = None
    sessions: dict[str, None] = {}
    with path.open("rb") as file:
        for line in file:
            if not line.startswith(_META_PREFIX):
                continue
            try:
                meta = _meta_decoder.decode(line)
            except (msgspec.MsgspecError, RecursionError):
                continue
            if meta.agent_id != agent_id:
                continue
            nickname = meta.nickname
            if meta.session_id:
                sessions[meta.session_id] = None
    return TranscriptSessions(nickname, tuple(sessions))


@final
class SessionLineage:
    """The sessions whose agents a runtime's models may resume (see the module docstring)."""

    __slots__ = ("_sessions",)

    def __init__(self, session_id: str) -> None:
        self._sessions: dict[str, None] = {session_id: None}

    def __repr__(self) -> str:
        return f"<SessionLineage {list(self._sessions)}>"

    @property
    def sessions(self) -> frozenset[str]:
        """Every session of the lineage."""
        return frozenset(self._sessions)

    def add(self, sessions: Iterable[str]) -> None:
        """Widen the lineage with the sessions of an agent the user resumed."""
        for session in sessions:
            if session:
                self._sessions[session] = None

    def admits(self, sessions: Iterable[str]) -> bool:
        """Whether an agent that lived in ``sessions`` belongs to the lineage."""
        return any(session in self._sessions for session in sessions)
