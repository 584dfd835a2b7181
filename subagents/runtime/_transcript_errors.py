"""Transcript errors: a transcript could not be found, read or written.

They live apart from the records and the writer so that every transcript module
(the writer, the loader, the ledger) can raise and catch them without importing
the others. A :class:`TranscriptWriteError` names the operating system's error
and advises what to do about it, and says what the writer's
:data:`DiskErrorPolicy` did next.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Final, Literal, TypeAlias

from subagents.runtime._exceptions import AgentRuntimeError

__all__ = [
    "DiskErrorPolicy",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptWriteError",
]

DiskErrorPolicy: TypeAlias = Literal["memory", "stop"]
"""What a writer does on a disk error: keep lines in memory and go on, or raise."""


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
