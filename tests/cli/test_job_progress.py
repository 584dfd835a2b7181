"""The job outputs, in process: what the events say, plain lines, lossless JSON lines.

The subprocess tests (tests/cli/test_jobs.py) run the bar on a pseudo-terminal;
these feed a bus directly, under the mock clock.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import trio
import trio.testing
from rich.console import Console

from subagents.actors import Bus
from subagents.cli._job_progress import JobWatch, open_job_progress, plain_line
from subagents.jobs import JOB_NICKNAME, JobFinished, JobStarted, RowFinished, RowRetried

JOB = "20260101-000000-abcdef01"
ENVELOPE: dict[str, Any] = {
    "agent_id": JOB,
    "parent_id": None,
    "depth": 0,
    "nickname": JOB_NICKNAME,
}


def events(total: int = 3) -> list[Any]:
    found: list[Any] = [
        JobStarted(**ENVELOPE, job_id=JOB, backend="local", total=total, pending=total,
                   completed=0, failed=0),
        RowRetried(**ENVELOPE, job_id=JOB, item_id="row-2", attempt=1, error="Overloaded: x",
                   delay=1.0),
    ]  # fmt: skip
    for done in range(1, total + 1):
        failed = 1 if done == total else 0
        found.append(
            RowFinished(**ENVELOPE, job_id=JOB, item_id=f"row-{done}",
                        status="failed" if failed else "completed", attempts=1,
                        completed=done - failed, failed=failed, total=total,
                        error="boom\x1b[2J" if failed else None)
        )  # fmt: skip
    found.append(
        JobFinished(**ENVELOPE, job_id=JOB, status="completed", total=total,
                    completed=total - 1, failed=1, output_path="/w/out.csv")
    )  # fmt: skip
    return found


def test_the_watch_takes_its_counts_from_the_latest_event() -> None:
    watch = JobWatch()
    every = events()
    for event in every[:1] + every[-2:]:  # the first rows' events dropped: nothing is lost
        watch.handle(event)
    assert (watch.job_id, watch.total, watch.completed, watch.failed) == (JOB, 3, 2, 1)
    assert watch.finished
    assert watch.summary() == {
        "type": "job_summary",
        "job_id": JOB,
        "status": "completed",
        "total": 3,
        "completed": 2,
        "failed": 1,
        "retries": 0,
        "output_path": "/w/out.csv",
    }


def test_plain_lines_show_a_rows_control_characters_as_signs() -> None:
    watch = JobWatch()
    lines = []
    for event in events():
        watch.handle(event)
        lines.append(plain_line(event, watch))
    text = "\n".join(line for line in lines if line)
    assert "\x1b" not in text
    assert "row row-3 failed: boom" in text
    assert "row row-2 attempt 1 failed, retrying in 1 s: Overloaded: x" in text
    assert f"job {JOB} completed (3/3 done, 1 failed); output /w/out.csv" in text


async def test_json_lines_are_every_job_event_then_the_summary(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    out = io.StringIO()
    async with open_job_progress("json", bus, out, Console(file=io.StringIO()), threaded=False):
        for event in events(50):
            bus.publish_nowait(event)
            await trio.sleep(0.01)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in lines[:2]] == ["job_started", "job_row_retried"]
    assert sum(line["type"] == "job_row_finished" for line in lines) == 50
    assert lines[-2]["type"] == "job_finished"
    assert lines[-1] == {
        "type": "job_summary",
        "job_id": JOB,
        "status": "completed",
        "total": 50,
        "completed": 49,
        "failed": 1,
        "retries": 1,
        "output_path": "/w/out.csv",
    }
    assert [line["seq"] for line in lines[:-1]] == sorted(line["seq"] for line in lines[:-1])


async def test_events_published_just_before_the_end_are_still_shown(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    out = io.StringIO()
    async with open_job_progress("plain", bus, out, Console(file=io.StringIO()), threaded=False):
        for event in events(5):
            bus.publish_nowait(event)  # no checkpoint: the printer has not run yet
    text = out.getvalue()
    assert len(re.findall(r"row row-\d completed \(", text)) == 4
    assert "job 20260101-000000-abcdef01 completed" in text
