"""A property of the engine: whatever the outcomes, retries and cancels, every row ends once.

Each row answers each attempt from a script (complete, a transient failure,
a final failure); the job may be cancelled after some rows and resumed. In
the end the output CSV holds every input row exactly once, in input order,
with the status and attempt count the script and ``max_attempts`` imply.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import attrs
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents.actors import Event
from subagents.jobs import JobSpec, RowFinished, RowRequest, run_job
from tests.jobs.helpers import Answer, ScriptedBackend

_STEP = st.sampled_from(["ok", "transient", "final"])


def _expected(script: list[str], max_attempts: int) -> tuple[str, int]:
    for attempt in range(1, max_attempts + 1):
        step = script[attempt - 1] if attempt <= len(script) else "ok"
        if step == "ok":
            return "completed", attempt
        if step == "final" or attempt == max_attempts:
            return "failed", attempt
    raise AssertionError("unreachable")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scripts=st.lists(st.lists(_STEP, max_size=4), min_size=1, max_size=8),
    max_attempts=st.integers(1, 4),
    concurrency=st.integers(1, 3),
    cancel_after=st.one_of(st.none(), st.integers(0, 8)),
)
def test_every_row_ends_exactly_once_with_the_attempts_its_script_implies(
    scripts: list[list[str]], max_attempts: int, concurrency: int, cancel_after: int | None
) -> None:
    def answer(request: RowRequest) -> Answer:
        script = scripts[request.index]
        step = script[request.attempt - 1] if request.attempt <= len(script) else "ok"
        if step == "ok":
            return ("completed", str(request.index))
        return ("failed", f"{step} {request.attempt}", step == "transient")

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "in.csv").write_text("n\n" + "".join(f"{i}\n" for i in range(len(scripts))))
        spec = JobSpec(
            input_path=root / "in.csv",
            agent="a",
            prompt="{n}",
            output_path=root / "out.csv",
            max_attempts=max_attempts,
            max_concurrency=concurrency,
            retry_delay=0.5,
        )

        async def main() -> None:
            cancel = trio.Event()

            def publish(event: Event) -> None:
                if isinstance(event, RowFinished) and event.completed + event.failed == (
                    cancel_after
                ):
                    cancel.set()

            first = await run_job(
                spec,
                ScriptedBackend(answer, delay=1.0),
                state_dir=root / "s",
                publish=publish,
                cancel=cancel if cancel_after is not None else None,
            )
            if first.status == "cancelled":
                second = await run_job(
                    JobSpec(**{**_fields(spec), "job_id": first.job_id}),
                    ScriptedBackend(answer),
                    state_dir=root / "s",
                )
                assert second.status == "completed"

        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        with (root / "out.csv").open(newline="") as file:
            rows = list(csv.DictReader(file))
    assert [r["n"] for r in rows] == [str(i) for i in range(len(scripts))]
    for row, script in zip(rows, scripts, strict=True):
        assert (row["status"], int(row["attempts"])) == _expected(script, max_attempts)


def _fields(spec: JobSpec) -> dict[str, object]:
    return attrs.asdict(spec, recurse=False)
