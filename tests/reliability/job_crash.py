"""A job run in its own process, for the ``kill -9`` test: ``job_crash.py INPUT STATE CWD``.

Rows are agents of a runtime with a scripted provider that answers each
prompt after 50 ms; every job event goes to stdout as a JSON line, once it
is published (a row's ``job_row_finished`` after its outcome is committed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import trio

from subagents.actors import Bus, Event
from subagents.jobs import JobFinished, JobSpec, JobStarted, RowFinished
from subagents.runtime import ModelRequest, Reply, RuntimeConfig, ScriptedProvider, open_runtime

#: Seconds each row's one model call takes.
LATENCY = 0.05


def answer(request: ModelRequest) -> Reply:
    return Reply(text=f"done: {request.messages[0].text}", latency=LATENCY)


def show(event: Event) -> None:
    if isinstance(event, JobStarted | RowFinished | JobFinished):
        sys.stdout.buffer.write(msgspec.json.encode(event) + b"\n")
        sys.stdout.buffer.flush()


async def main(input_path: Path, state: Path, cwd: Path) -> None:
    bus = Bus()
    bus.listen(show)
    async with open_runtime(
        RuntimeConfig(state_dir=state),
        cwd=cwd,
        home=cwd,
        env={},
        provider=ScriptedProvider(answer),
        bus=bus,
        trust_project=True,
    ) as rt:
        await rt.run_job(
            JobSpec(
                input_path=input_path,
                agent="general-purpose",
                prompt="row {n}",
                id_column="n",
                max_concurrency=4,
            )
        )


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
