"""A job on Ray driven from its own process, for the kill test (see test_job.py).

Run as ``ray_job_crash.py INPUT STATE CWD ADDRESS``.

The driver joins the test's Ray cluster at ADDRESS and runs the job on 2 Ray
workers, whose scripted provider answers each prompt after 50 ms; every job
event goes to stdout as a JSON line once it is published (a row's
``job_row_finished`` after its outcome is committed to the job's SQLite).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import msgspec
import trio

from subagents.actors import Bus, Event
from subagents.jobs import JobFinished, JobSpec, JobStarted, RowFinished
from subagents.runtime import (
    ModelRequest,
    RayBackend,
    RayOptions,
    Reply,
    RuntimeConfig,
    ScriptedProvider,
    open_runtime,
)

#: Seconds each row's one model call takes.
LATENCY = 0.05


def answer(request: ModelRequest) -> Reply:
    return Reply(text=f"done: {request.messages[0].text.splitlines()[0]}", latency=LATENCY)


def show(event: Event) -> None:
    if isinstance(event, JobStarted | RowFinished | JobFinished):
        sys.stdout.buffer.write(msgspec.json.encode(event) + b"\n")
        sys.stdout.buffer.flush()


async def main(input_path: Path, state: Path, cwd: Path, address: str) -> None:
    bus = Bus()
    bus.listen(show)
    async with open_runtime(
        RuntimeConfig(state_dir=state), cwd=cwd, home=cwd, env={}, bus=bus, trust_project=True
    ) as rt:
        backend = RayBackend(
            RayOptions(address=address, workers=2, concurrency=2),
            opener=open_runtime,
            cwd=cwd,
            home=cwd,
            state_dir=state,
            trust_project=True,
            provider_factory=functools.partial(ScriptedProvider, answer),
        )
        spec = JobSpec(
            input_path=input_path,
            agent="general-purpose",
            prompt="row {n}",
            id_column="n",
            max_concurrency=4,
            backend="ray",
        )
        await rt.run_job(spec, backend=backend)


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
