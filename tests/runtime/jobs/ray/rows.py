"""Row functions the Ray tests inject in place of ``run_row`` (same signature).

They run in the workers' processes: the tests register this module with
Ray's cloudpickle by value, so a worker needs no ``tests`` package on its path.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import trio

from subagents.jobs import RowOutcome, RowRequest
from subagents.runtime import ModelRequest, Reply, Runtime


def outcome(request: RowRequest, result: object, started: float) -> RowOutcome:
    return RowOutcome(
        job_id=request.job_id,
        item_id=request.item_id,
        attempt=request.attempt,
        status="completed",
        result_json=json.dumps(result),
        started_at=started,
        completed_at=time.time(),
    )


async def pid_row(rt: Runtime, request: RowRequest) -> RowOutcome:
    """Wait a little (so rows overlap), answer with this process's id."""
    started = time.time()
    await trio.sleep(0.05)
    return outcome(request, os.getpid(), started)


async def killing_row(marker: Path | None, rt: Runtime, request: RowRequest) -> RowOutcome:
    """Like :func:`pid_row`, longer; the row ``victim`` SIGKILLs its worker the first time.

    ``marker`` (a file in a folder both processes see) says the kill happened,
    so the victim's second run, on another worker, completes; without one the
    victim kills every worker it runs on.
    """
    started = time.time()
    if request.item_id == "victim":
        await trio.sleep(0.1)  # the rows handed out with it are mid-row now
        if marker is None or not marker.exists():
            if marker is not None:
                marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    await trio.sleep(0.3)
    return outcome(request, os.getpid(), started)


async def crashing_row(rt: Runtime, request: RowRequest) -> RowOutcome:
    """A row function with a bug: the worker records it as the row's failure."""
    raise ValueError(f"no row {request.item_id}")


def answer(request: ModelRequest) -> Reply:
    """A scripted model's policy: answer the row's prompt at once."""
    return Reply(text=f"again: {request.messages[0].text.splitlines()[0]}")
