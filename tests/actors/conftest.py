"""Fixtures for the kernel tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from subagents.actors import Supervisor, SupervisorConfig, open_supervisor


@pytest.fixture
async def sup() -> AsyncIterator[Supervisor]:
    async with open_supervisor(SupervisorConfig(max_threads=4, max_depth=2)) as supervisor:
        yield supervisor
