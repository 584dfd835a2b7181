"""``JobSpec``: checked when made (the project's count and seconds rules), stored as JSON."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from subagents.jobs import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RUNTIME,
    JobInputError,
    JobSpec,
)


def test_defaults_follow_codex_and_paths_are_paths() -> None:
    spec = JobSpec(input_path="rows.csv", agent="a", prompt="{x}")
    assert spec.input_path == Path("rows.csv")
    assert spec.max_concurrency == DEFAULT_MAX_CONCURRENCY == 16
    assert spec.max_runtime == DEFAULT_MAX_RUNTIME == 1800.0
    assert spec.max_attempts == DEFAULT_MAX_ATTEMPTS
    assert spec.backend == "local"
    assert spec.resolve(Path("x.csv")) == Path.cwd() / "x.csv"
    assert JobSpec(input_path="r", agent="a", prompt="p", cwd="/base").resolve(
        Path("x.csv")
    ) == Path("/base/x.csv")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_concurrency", 0),
        ("max_concurrency", True),
        ("max_concurrency", 2.5),
        ("max_attempts", 0),
        ("max_runtime", 0),
        ("max_runtime", -1.0),
        ("max_runtime", math.inf),
        ("max_runtime", math.nan),
        ("retry_delay", -1),
        ("max_row_bytes", 0),
        ("agent", " "),
        ("prompt", ""),
        ("backend", ""),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(field: str, value: object) -> None:
    fields: dict[str, object] = {"input_path": "r.csv", "agent": "a", "prompt": "p"}
    fields[field] = value
    with pytest.raises(JobInputError, match=field):
        JobSpec(**fields)  # type: ignore[arg-type]


def test_the_spec_round_trips_through_json() -> None:
    spec = JobSpec(
        input_path="/data/rows.csv",
        agent="a",
        prompt="{x}",
        output_schema={"type": "object"},
        backend_options={"address": "auto", "workers": 2},
        job_id="j1",
    )
    assert JobSpec.from_json(spec.to_json()) == spec
    assert JobSpec.from_json(spec.to_json()).output_schema == {"type": "object"}
