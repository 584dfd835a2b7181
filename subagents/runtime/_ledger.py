"""One agent's run results, and the transcript its messages and results are written to.

A :class:`RunLedger` opens the agent's transcript (a new file, or the file of a
resumed agent, which it goes on numbering), writes the conversation so far and
then follows it: every message appended to the conversation is written as it
happens, through the conversation's ``on_append`` observer.

Results come in two steps, because an activation (from Running to the next
final status) may hold several runs of the loop: :meth:`RunLedger.on_result`
takes each run's result as the loop reports it (an earlier run of the same
activation is written then, with the status its terminate reason implies),
and :meth:`RunLedger.end` writes the activation's last result with the status
the kernel is about to publish, after ``SubagentStop`` and just before the
behavior returns, so the result is on disk before the final status.
"""

from __future__ import annotations

import io
import os
from typing import final

import msgspec
from structlog.typing import FilteringBoundLogger

from subagents.runtime._config.defaults import DiskErrorPolicy
from subagents.runtime._exceptions import TranscriptError, TranscriptWriteError
from subagents.runtime._messages import Conversation
from subagents.runtime._result import AgentResult, TerminateReason
from subagents.runtime._transcripts.flusher import Flusher, TranscriptFlusher
from subagents.runtime._transcripts.load import Transcript
from subagents.runtime._transcripts.records import FinalStatus, MetaRecord
from subagents.runtime._transcripts.writer import TranscriptWriter

__all__ = ["RunLedger"]


@final
class RunLedger:
    """The results of one agent's runs and its transcript writer (``None`` when off)."""

    __slots__ = (
        "_conversation",
        "_pending",
        "_told",
        "last_result",
        "last_status",
        "logger",
        "writer",
    )

    def __init__(self, conversation: Conversation, logger: FilteringBoundLogger) -> None:
        self._conversation = conversation
        self.logger = logger
        self.writer: TranscriptWriter | None = None
        self.last_result: AgentResult | None = None
        self.last_status: FinalStatus | None = None
        self._pending: AgentResult | None = None
        # The status the last "run finished" line gave, until the kernel's status says it.
        self._told: FinalStatus | None = None

    @property
    def pending(self) -> AgentResult | None:
        """The latest run's result of the activation under way, not written yet."""
        return self._pending

    def open(
        self,
        path: str | os.PathLike[str],
        meta: MetaRecord,
        *,
        resumed: Transcript | None,
        policy: DiskErrorPolicy,
        claimed: io.FileIO | None = None,
        flusher: Flusher | None = None,
    ) -> None:
        """Open the transcript, write the conversation so far, then follow the conversation.

        ``claimed`` is the resumed transcript's lock, taken before it was read;
        the writer takes it over; ``flusher`` lets the writer write a turn's
        lines together (:mod:`subagents.runtime._transcripts.flusher`). Raises
        :class:`TranscriptWriteError` under the ``"stop"`` policy when the file
        cannot be written.
        """
        if resumed is None:
            writer = TranscriptWriter(
                path, meta, on_disk_error=policy, on_report=self._problem, flusher=flusher
            )
        else:
            writer = TranscriptWriter.resume(
                resumed,
                meta=msgspec.structs.replace(meta, created=resumed.meta.created),
                on_disk_error=policy,
                on_report=self._problem,
                lock=claimed,
                flusher=flusher,
            )
        try:
            writer.append_new(self._conversation)
        except BaseException:
            writer.close()
            raise
        self.writer = writer
        self._conversation.on_append = writer.append_message
        self._conversation.on_settle = writer.settling

    def begin(self) -> None:
        """An activation begins: no run result yet."""
        self._pending = None
        self._told = None

    def told(self, status: str) -> bool:
        """Whether the last "run finished" line already gave ``status`` (a kernel status
        kind), the activation's end; asked once, by the status log, which then need
        not say it again."""
        told, self._told = self._told, None
        return told is not None and told == status

    def on_result(self, result: AgentResult) -> None:
        """A run's result, as the loop reports it; an earlier run's result is written now."""
        if self._pending is not None:
            self._write(self._pending, None, quiet=True)
        self._pending = result
        self.last_result = result

    def restored(self, result: AgentResult) -> None:
        """The agent came back idle with ``result`` (already on disk): nothing is written."""
        self.last_result = result
        self.last_status = "completed" if result.succeeded else "errored"

    def end(
        self,
        status: FinalStatus,
        *,
        model: str,
        activation: int,
        quiet: bool = False,
        sync: bool = True,
    ) -> AgentResult:
        """Write the activation's last result with the kernel's ``status``; log it; return it.

        An activation stopped before the loop began gets an ``aborted`` result.
        Unless ``quiet``, a write error under the ``"stop"`` policy is raised.
        With ``sync=False`` the result's ``fsync`` is :meth:`sync`'s, which the
        caller awaits before the completion is announced.
        """
        result = self._pending
        if result is None:
            result = AgentResult(terminate_reason=TerminateReason.ABORTED, model=model)
        self._pending = None
        self.last_result = result
        self.last_status = self._told = status
        self.logger.info(
            "run finished",
            status=status,
            run=activation,
            terminate_reason=result.terminate_reason.value,
            turns=result.turns,
            tool_uses=result.tool_uses,
            total_tokens=result.usage.total_tokens,
            duration=round(result.duration, 3),
            error=result.error,
        )
        self._write(result, status, quiet=quiet, sync=sync)
        return result

    async def sync(self, flusher: TranscriptFlusher, *, quiet: bool = False) -> None:
        """``fsync`` the result :meth:`end` wrote with ``sync=False``, through ``flusher``.

        Shielded: once the result is written, its ``fsync`` is finished however
        the caller is cancelled, so the result is on disk before the final
        status. Under the ``"stop"`` policy a failed ``fsync`` raises
        :class:`TranscriptWriteError`, unless ``quiet`` (it is logged either way).
        """
        writer = self.writer
        if writer is not None and writer.opening:  # its file is being made: wait, not block
            await flusher.opened(writer)
        fd = None if writer is None else writer.unsynced()
        if writer is None or fd is None:
            return
        problem: TranscriptError | None = None
        try:
            await flusher.sync(fd)
        except OSError as exc:
            try:
                writer.sync_failed(exc)  # under "memory": reported through _problem
            except TranscriptError as stopped:
                problem = stopped
        if problem is not None:
            self.logger.error("transcript problem", error=str(problem))
            if not quiet:
                raise problem

    def _write(
        self, result: AgentResult, status: FinalStatus | None, *, quiet: bool, sync: bool = True
    ) -> None:
        writer = self.writer
        if writer is None:
            return
        problem: TranscriptError | None = None
        try:
            writer.append_new(self._conversation)
            writer.append_result(result, status=status, sync=sync)
        except TranscriptError as exc:
            problem = exc
        if problem is not None:
            self.logger.error("transcript problem", error=str(problem))
            if not quiet:
                raise problem

    def _problem(self, error: TranscriptWriteError) -> object:
        self.logger.error("transcript problem", error=str(error), path=str(error.path))
        return None

    def close(self) -> None:
        """Close the writer (the agent is closed) and stop following; idempotent."""
        writer, self.writer = self.writer, None
        if writer is None:
            return
        self._conversation.on_append = None
        self._conversation.on_settle = None
        writer.close()
        stats = writer.statistics()
        if stats.lines_dropped or stats.in_memory or stats.lines_buffered:
            self.logger.error(
                "transcript incomplete",
                lines_buffered=stats.lines_buffered,
                lines_dropped=stats.lines_dropped,
                path=str(writer.path),
            )
