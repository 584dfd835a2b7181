"""Every test in this folder carries the ``reliability`` marker.

Run the suite alone with ``pytest tests/reliability`` or ``pytest -m reliability``;
the marker also lets a full run skip it with ``-m "not reliability"``. The
suite reuses the other folders' helpers and strategies (``tests.runtime.world``,
``tests.agents.strategies``...), imported as packages of ``tests``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the items collected from this folder (the hook sees the whole session)."""
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.reliability)
