"""What crosses between the driver and a Ray worker, as msgspec values.

The driver sends a worker its :class:`WorkerSpec` once, then batches of
:class:`~subagents.jobs.RowRequest`; a worker answers each collect with a
:class:`WorkerReport`: the outcomes of the rows it finished and the status
events its runtime published meanwhile, each event encoded on its own
(``msgspec.Raw``) so the driver decodes it as the tagged union of every
:class:`~subagents.actors.Event` kind this package defines.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from subagents.actors import Event
from subagents.jobs import RowOutcome, RowRequest

__all__ = [
    "WorkerReport",
    "WorkerSpec",
    "decode_event",
    "decode_report",
    "decode_requests",
    "encode_event",
    "encode_report",
    "encode_requests",
]


class WorkerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """How a worker opens its runtime: what ``load_config`` and ``open_runtime`` are given.

    ``overrides`` is shaped like a settings file (``{"state_dir": ...}``): the
    driver's state dir always, so every worker writes transcripts where the
    driver's job state is. ``concurrency`` bounds the rows it runs at once,
    ``event_capacity`` the events it holds between collects.
    """

    cwd: str
    home: str | None = None
    overrides: dict[str, Any] = msgspec.field(default_factory=dict)
    trust_project: bool | None = None
    concurrency: int = 1
    event_capacity: int = 1024


class WorkerReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker finished since the last collect: outcomes, events, events dropped."""

    outcomes: list[RowOutcome] = msgspec.field(default_factory=list)
    events: list[msgspec.Raw] = msgspec.field(default_factory=list)
    dropped_events: int = 0


_requests_decoder = msgspec.msgpack.Decoder(list[RowRequest])
_report_decoder = msgspec.msgpack.Decoder(WorkerReport)
_encoder = msgspec.msgpack.Encoder()


def encode_requests(requests: list[RowRequest]) -> bytes:
    return _encoder.encode(requests)


def decode_requests(data: bytes) -> list[RowRequest]:
    return _requests_decoder.decode(data)


def encode_event(event: Event) -> msgspec.Raw:
    return msgspec.Raw(_encoder.encode(event))


def encode_report(report: WorkerReport) -> bytes:
    return _encoder.encode(report)


def decode_report(data: bytes) -> WorkerReport:
    return _report_decoder.decode(data)


def _kinds() -> list[type[Event]]:
    """Every concrete event kind defined so far (subclasses of subclasses included)."""
    found: list[type[Event]] = []
    stack = list(Event.__subclasses__())
    while stack:
        kind = stack.pop()
        found.append(kind)
        stack.extend(kind.__subclasses__())
    return found


class _EventDecoder:
    """Decodes the union of every event kind, rebuilt once when a kind is new to it.

    Building the union walks every subclass of :class:`Event`; it is done on the
    first event and again only when an event fails to decode (a kind imported
    since), so each event costs one decode.
    """

    def __init__(self) -> None:
        self._decoder: msgspec.msgpack.Decoder[Any] | None = None
        self._count = 0

    def _build(self) -> msgspec.msgpack.Decoder[Any]:
        kinds = _kinds()
        self._count = len(kinds)
        union: Any = functools.reduce(lambda a, b: a | b, kinds)  # type: ignore[arg-type,return-value]
        self._decoder = msgspec.msgpack.Decoder(union)
        return self._decoder

    def decode(self, raw: msgspec.Raw) -> Event:
        decoder = self._decoder or self._build()
        try:
            event: Event = decoder.decode(raw)
        except msgspec.DecodeError:
            if len(_kinds()) == self._count:
                raise
            event = self._build().decode(raw)
        return event


_event_decoder = _EventDecoder()


def decode_event(raw: msgspec.Raw) -> Event:
    """The event a worker encoded; ``msgspec.DecodeError`` for a kind unknown here."""
    return _event_decoder.decode(raw)
