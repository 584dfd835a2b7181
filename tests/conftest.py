"""Fixtures shared across test folders.

``ray_cluster``: one real local Ray cluster for every Ray test (the Ray job
backend's, ``subagents bench``'s jobs scenarios): 2 CPUs, no dashboard, stopped
after the last test. Ray starts in a few seconds and the tests share it
(session scope). Without Ray installed, the tests that need it are skipped
with that reason; the test extra installs it.

The Python processes the tests start (the CLI, MCP servers, hook scripts, bench
children) keep their compiled modules in one folder of the run
(``PYTHONPYCACHEPREFIX``), also where ``PYTHONDONTWRITEBYTECODE`` is set, as in
this project's CI: otherwise each one compiles every module it imports again,
0.7 s of a 1.9 s start of the CLI. The folder is outside the clone and removed
at the end.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.runtime.jobs.ray import rows

RAY_MISSING = "Ray is not installed: pip install 'subagents[ray]' (the test extra has it)"

#: The bytecode folder this process made for the processes its tests start.
_PYCACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Child Python processes share compiled modules (see the module docstring)."""
    folder = tempfile.mkdtemp(prefix="subagents-tests-pycache-")
    _PYCACHE.append(folder)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _PYCACHE:
        shutil.rmtree(_PYCACHE.pop(), ignore_errors=True)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[ModuleType]:
    """A local Ray cluster of 2 CPUs, joined by this process, shut down after the last test."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip(RAY_MISSING)
    import ray
    import ray.cloudpickle

    # the injected row functions travel by value: the workers need no `tests` package
    ray.cloudpickle.register_pickle_by_value(sys.modules[rows.__name__])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of the Ray cluster runs in one test worker (``--dist loadgroup``), so a
    parallel run starts one cluster, not one per worker."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(name="ray"))
