"""``RayOptions``: a job's backend options for Ray (``address``, ``workers``...), checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from subagents.jobs import JobSpec
from subagents.runtime import (
    ConfigError,
    RayBackend,
    RayOptions,
    RuntimeConfig,
    agents_to_keep,
    open_runtime,
)


def test_a_job_spec_s_backend_options_become_ray_options_sharing_its_concurrency() -> None:
    spec = JobSpec(
        "rows.csv",
        "classifier",
        "Classify {text}",
        max_concurrency=100,
        backend="ray",
        backend_options={"address": "10.0.0.5:6379", "workers": 3},
    )
    options = RayOptions.from_backend_options(
        spec.backend_options, max_concurrency=spec.max_concurrency
    )
    assert options.address == "10.0.0.5:6379"
    assert options.workers == 3
    assert options.concurrency == 34  # 100 rows at once over 3 workers, rounded up


def test_an_explicit_concurrency_is_per_worker() -> None:
    options = RayOptions.from_backend_options({"concurrency": 8}, max_concurrency=100)
    assert options.concurrency == 8
    assert options.workers == 2


def test_an_unknown_option_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"no option 'adress' \(it knows address, batch_size"):
        RayOptions.from_backend_options({"adress": "x:1"})


@pytest.mark.parametrize(
    ("key", "value"),
    [("workers", 0), ("workers", True), ("concurrency", 1.5), ("call_timeout", 0)],
)
def test_a_bad_value_is_a_config_error_naming_its_key(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=f"ray.{key}"):
        RayOptions.from_backend_options({key: value})


async def test_a_job_naming_the_ray_backend_gets_one_with_its_options(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with open_runtime(
        RuntimeConfig(state_dir=state), cwd=tmp_path, home=tmp_path, env={}, trust_project=True
    ) as rt:
        assert rt.job_backends is not None
        spec = JobSpec(
            "rows.csv",
            "classifier",
            "Classify {text}",
            backend="ray",
            backend_options={"workers": 3, "address": "10.0.0.5:6379"},
        )
        backend = rt.job_backends(rt, spec)
    assert isinstance(backend, RayBackend)
    assert backend.name == "ray"
    assert backend.options.workers == 3
    assert backend.options.address == "10.0.0.5:6379"
    assert backend.options.concurrency == 6  # the job's 16 rows at once over 3 workers


async def test_the_ray_backend_sizes_the_drivers_tracker_for_the_rows_at_once(
    tmp_path: Path,
) -> None:
    """The workers' spawns and statuses reach the driver's bus: its tracker keeps every row
    the workers run at once, so no running row's entry is dropped and made again."""
    async with open_runtime(
        RuntimeConfig(state_dir=tmp_path / "state"),
        cwd=tmp_path,
        home=tmp_path,
        env={},
        trust_project=True,
    ) as rt:
        assert rt.job_backends is not None
        before = rt.tracker.max_agents
        few = JobSpec("rows.csv", "classifier", "Classify {text}", backend="ray")
        rt.job_backends(rt, few)
        assert rt.tracker.max_agents == before  # 16 rows at once: the default keeps them
        many = JobSpec(
            "rows.csv",
            "classifier",
            "Classify {text}",
            backend="ray",
            max_concurrency=20_000,
            backend_options={"workers": 2},
        )
        rt.job_backends(rt, many)
        depth = rt.config.limits.max_depth
        assert rt.tracker.max_agents == agents_to_keep(20_000, depth) > before
        rt.job_backends(rt, few)  # a later, smaller job does not shrink it
        assert rt.tracker.max_agents == agents_to_keep(20_000, depth)
