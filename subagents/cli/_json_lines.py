"""The end of a run, for programs: ``subagents run --json``, every event as one JSON line.

:class:`JsonLinesWriter` writes every bus event as one JSON line, losslessly,
then one last ``run_finished`` line with the summary::

    async with open_json_lines(bus, sys.stdout) as writer:
        ...  # run the lead and its team
    writer.write_summary(session_id=sid, lead_id=lead, transcripts_dir=path)

Every line carries ``type``, ``seq``, ``time``, ``agent_id``, ``parent_id``,
``depth`` and ``nickname``; a ``status_changed`` line has a ``status`` object
whose ``kind`` is ``pending_init``, ``running``, ``completed`` (with
``result``), ``errored`` (with ``message``) or ``shutdown``. Characters a
terminal could obey (C1 controls, bidi overrides...) are written as ``\\u``
escapes (:func:`~subagents._visible.json_safe`), which decode to the same text.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TextIO, final

import msgspec
import trio

from subagents._visible import json_safe
from subagents.actors import NOT_FOUND, Bus, Event, Lagged, Status, Subscription
from subagents.cli._line_sink import LineSink
from subagents.cli._report import RunSummary, summarize
from subagents.runtime import AgentResult, ProgressTracker, RunFinished

__all__ = [
    "DEFAULT_JSON_CAPACITY",
    "DEFAULT_JSON_MAX_BLOCK",
    "JsonLinesWriter",
    "open_json_lines",
]

#: Events a JSON-lines writer may buffer before publishers wait for it.
DEFAULT_JSON_CAPACITY: Final = 1024
#: How long a stalled JSON reader may hold each publish before the bus drops instead.
DEFAULT_JSON_MAX_BLOCK: Final = 1.0
#: Lines written to the stream in one go (one thread hop).
_BATCH: Final = 256


def _fallback(value: object) -> object:
    """How a value msgspec cannot encode is written: its ``str``."""
    return str(value)


_ENVELOPE: Final = ("seq", "time", "agent_id", "parent_id", "depth", "nickname")


@final
class JsonLinesWriter:
    """Writes every bus event as one JSON line to ``out``, then a ``run_finished`` summary.

    Feed it a ``block`` subscription (:func:`open_json_lines` makes one) so
    nothing is lost unless the reader of ``out`` stalls past the bus's
    ``max_block``; a gap is then written as a ``lagged`` line (with ``dropped``,
    and ``null`` agent fields). It keeps its own lossless :attr:`tracker` and the
    last :class:`RunFinished` of each agent, from which the summary line is built.
    With ``threaded`` (the default) each batch is written from a worker thread,
    so a slow pipe holds back the writer, never the Trio loop.
    """

    __slots__ = (
        "_encoder",
        "_finished",
        "_sink",
        "_slow_types",
        "lagged",
        "last_seq",
        "tracker",
        "written",
    )

    def __init__(
        self, out: TextIO, *, threaded: bool = True, max_agents: int | None = None
    ) -> None:
        self._sink = LineSink(out, threaded=threaded)
        self.tracker = (
            ProgressTracker() if max_agents is None else ProgressTracker(max_agents=max_agents)
        )
        self._finished: dict[str, RunFinished] = {}
        self._encoder = msgspec.json.Encoder(enc_hook=_fallback)
        self._slow_types: dict[type, bool] = {}
        #: Event lines written (lag markers and the summary not counted).
        self.written = 0
        #: Events the subscription reported lost.
        self.lagged = 0
        #: The ``seq`` of the last event written.
        self.last_seq = 0

    def __repr__(self) -> str:
        return f"<JsonLinesWriter written={self.written} lagged={self.lagged}>"

    def line(self, event: Event | Lagged) -> str:
        """The JSON line (newline included) for ``event``, recording what it says."""
        if isinstance(event, Lagged):
            self.lagged += event.dropped
            self.tracker.handle(event)
            marker = {"type": "lagged", "dropped": event.dropped, "seq": self.last_seq}
            marker |= {"time": time.time(), "agent_id": None, "parent_id": None}
            marker |= {"depth": None, "nickname": None}
            return json_safe(self._encoder.encode(marker).decode()) + "\n"
        self.tracker.handle(event)
        if isinstance(event, RunFinished):
            finished = self._finished
            finished.pop(event.agent_id, None)
            finished[event.agent_id] = event
            if len(finished) > self.tracker.max_agents:
                del finished[next(iter(finished))]
        self.written += 1
        self.last_seq = event.seq
        return json_safe(self._encode(event)) + "\n"

    def _encode(self, event: Event) -> str:
        kind = type(event)
        slow = self._slow_types.get(kind)
        if slow is None:
            slow = self._slow_types[kind] = bool(kind.__struct_config__.omit_defaults)
        if not slow:
            return self._encoder.encode(event).decode()
        # A kind that omits defaults would drop a null parent_id: rebuild the envelope.
        data = msgspec.to_builtins(event, enc_hook=_fallback)
        for name in _ENVELOPE:
            data.setdefault(name, getattr(event, name))
        return self._encoder.encode(data).decode()

    async def run(self, subscription: Subscription) -> None:
        """Write the subscription's events, in batches, until it is closed and drained."""
        while True:
            try:
                first = await subscription.receive()
            except trio.EndOfChannel:
                return
            lines = [self.line(first)]
            while len(lines) < _BATCH:
                try:
                    lines.append(self.line(subscription.receive_nowait()))
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await self._sink.write("".join(lines))

    async def write_lines(self, lines: Sequence[str]) -> None:
        """Write lines :meth:`line` made, in one batch (from a worker thread when threaded)."""
        await self._sink.write("".join(lines))

    def write_now(self, text: str) -> None:
        """Write ``text`` (lines :meth:`line` made) synchronously, after any pending batch."""
        self._sink.flush_pending()
        self._sink.write_now(text)

    def write_object(self, value: Mapping[str, Any]) -> None:
        """Write ``value`` as one closing JSON line (``subagents jobs``' ``job_summary``)."""
        line = self._encoder.encode(value).decode()
        self.write_now(json_safe(line) + "\n")

    def drain(self, subscription: Subscription) -> int:
        """Write, synchronously, what the subscription still holds; how many lines."""
        self._sink.flush_pending()
        lines: list[str] = []
        while True:
            try:
                lines.append(self.line(subscription.receive_nowait()))
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        if lines:
            self._sink.write_now("".join(lines))
        return len(lines)

    def summary(
        self,
        *,
        session_id: str,
        lead_id: str | None = None,
        results: Mapping[str, AgentResult | RunFinished] | None = None,
        statuses: Mapping[str, Status] | None = None,
        transcripts_dir: str | os.PathLike[str] | None = None,
    ) -> RunSummary:
        """The run's summary from every event written (``results`` and ``statuses`` win over
        the events; see :func:`~subagents.cli._report.summarize`)."""
        outcomes: dict[str, AgentResult | RunFinished] = dict(self._finished)
        outcomes.update(results or {})
        return summarize(
            self.tracker,
            session_id=session_id,
            lead_id=lead_id,
            results=outcomes,
            statuses=statuses,
            transcripts_dir=transcripts_dir,
            events=self.written,
            dropped=self.lagged,
        )

    def summary_line(self, summary: RunSummary) -> dict[str, Any]:
        """The last line's object: ``type`` ``run_finished``, ``summary`` true, the lead's
        envelope, status and result, every agent, the transcripts dir and the counts."""
        lead = summary.lead
        line: dict[str, Any] = {
            "type": "run_finished",
            "seq": self.last_seq + 1,
            "time": time.time(),
            "agent_id": summary.lead_id,
            "parent_id": None if lead is None else lead.parent_id,
            "depth": 0 if lead is None else lead.depth,
            "nickname": None if lead is None else lead.nickname,
            "summary": True,
            "session_id": summary.session_id,
            "status": msgspec.to_builtins(NOT_FOUND if lead is None else lead.status),
            "terminate_reason": None if lead is None else lead.terminate_reason,
            "result": None if lead is None else lead.result,
            "error": None if lead is None else lead.error,
            "transcripts_dir": (
                None if summary.transcripts_dir is None else str(summary.transcripts_dir)
            ),
            "agents": [agent.to_dict() for agent in summary.agents],
            "totals": summary.totals(),
            "counts": summary.counts(),
        }
        return line

    def write_summary(
        self,
        *,
        session_id: str,
        lead_id: str | None = None,
        results: Mapping[str, AgentResult | RunFinished] | None = None,
        statuses: Mapping[str, Status] | None = None,
        transcripts_dir: str | os.PathLike[str] | None = None,
    ) -> RunSummary:
        """Write the final ``run_finished`` summary line (synchronously) and return the summary."""
        summary = self.summary(
            session_id=session_id,
            lead_id=lead_id,
            results=results,
            statuses=statuses,
            transcripts_dir=transcripts_dir,
        )
        self._sink.flush_pending()
        line = self._encoder.encode(self.summary_line(summary)).decode()
        self._sink.write_now(json_safe(line) + "\n")
        return summary


@asynccontextmanager
async def open_json_lines(
    bus: Bus,
    out: TextIO,
    *,
    capacity: int = DEFAULT_JSON_CAPACITY,
    max_block: float = DEFAULT_JSON_MAX_BLOCK,
    threaded: bool = True,
    max_agents: int | None = None,
) -> AsyncIterator[JsonLinesWriter]:
    """Subscribe to ``bus`` losslessly and write every event to ``out`` while the body runs.

    The subscription is a ``block`` one: publishers wait for the writer when its
    ``capacity`` is full, each publish at most ``max_block`` seconds (then the
    bus drops instead, and a ``lagged`` line says so). On exit the writer
    finishes its batch, writes what is still buffered, and leaves the bus; write
    the summary line with :meth:`JsonLinesWriter.write_summary` afterwards.
    ``max_agents`` sizes the writer's tracker (:class:`JsonLinesWriter`).
    """
    writer = JsonLinesWriter(out, threaded=threaded, max_agents=max_agents)
    body_error: BaseException | None = None
    with bus.subscribe(capacity=capacity, policy="block", max_block=max_block) as subscription:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer.run, subscription)
                try:
                    yield writer
                except BaseException as exc:  # raised again below, not in an ExceptionGroup
                    body_error = exc
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            writer.drain(subscription)
    if body_error is not None:
        raise body_error
