"""A scripted backend for the engine's tests: each attempt's outcome chosen by a function."""

from __future__ import annotations

import select
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import msgspec
import trio

from subagents.actors import Event
from subagents.jobs import RowOutcome, RowRequest
from subagents.jobs._state import JobDatabase

#: What an attempt ends with: ("completed", result_json) or ("failed", error, transient).
Answer = tuple[str, str] | tuple[str, str, bool]


def ok(request: RowRequest) -> Answer:
    return ("completed", f'"{request.prompt}"')


@attrs.define
class ScriptedBackend:
    """Answers each request with ``answer(request)``; ``hold`` blocks the items it names."""

    answer: Callable[[RowRequest], Answer] = ok
    name: str = "scripted"
    seen: list[RowRequest] = attrs.field(factory=list)
    hold: frozenset[str] = frozenset()
    delay: float = 0.0
    events: list[Event] = attrs.field(factory=list)
    #: Rows run at once (a request is read only once one of them is free).
    limit: int = 1_000_000

    async def run(
        self,
        requests: trio.MemoryReceiveChannel[RowRequest],
        outcomes: trio.MemorySendChannel[RowOutcome],
        publish: Callable[[Event], None],
    ) -> None:
        slots = trio.Semaphore(self.limit)
        async with trio.open_nursery() as nursery:
            while True:
                await slots.acquire()
                try:
                    request = await requests.receive()
                except trio.EndOfChannel:
                    break
                nursery.start_soon(self._one, request, outcomes, slots)

    async def _one(
        self,
        request: RowRequest,
        outcomes: trio.MemorySendChannel[RowOutcome],
        slots: trio.Semaphore,
    ) -> None:
        try:
            await self._answer(request, outcomes)
        finally:
            slots.release()

    async def _answer(
        self, request: RowRequest, outcomes: trio.MemorySendChannel[RowOutcome]
    ) -> None:
        self.seen.append(request)
        if request.item_id in self.hold:
            await trio.sleep_forever()
        await trio.sleep(self.delay)
        answer = self.answer(request)
        started = time.time()
        if answer[0] == "completed":
            outcome = RowOutcome(
                job_id=request.job_id,
                item_id=request.item_id,
                attempt=request.attempt,
                status="completed",
                result_json=answer[1],
                started_at=started,
                completed_at=started,
            )
        else:
            outcome = RowOutcome(
                job_id=request.job_id,
                item_id=request.item_id,
                attempt=request.attempt,
                status="failed",
                error=answer[1],
                transient=bool(answer[2]) if len(answer) > 2 else False,  # type: ignore[misc]
                started_at=started,
                completed_at=started,
            )
        await outcomes.send(outcome)


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def read_event(process: subprocess.Popen[bytes], deadline: float) -> dict[str, object]:
    """The next JSON line a job's process writes, by ``deadline`` (``time.monotonic``)."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], max(deadline - time.monotonic(), 0))
    if not ready:
        raise AssertionError("the job did not report in time")
    line = process.stdout.readline()
    if not line:
        raise AssertionError(f"the job ended early (exit {process.wait()})")
    event: dict[str, object] = msgspec.json.decode(line)
    return event


def completed_items(database: Path) -> set[str]:
    """The item ids a job's database holds as completed."""
    db = JobDatabase(database, readonly=True)
    try:
        return {item.item_id for item in db.items("completed")}
    finally:
        db.close()
