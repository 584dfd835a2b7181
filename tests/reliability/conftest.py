"""Every test in this folder carries the ``reliability`` marker.

Run the suite alone with ``pytest tests/reliability`` or ``pytest -m reliability``;
the marker also lets a full run skip it with ``-m "not reliability"``. The
suite reuses the other folders' helpers and strategies (``runtime_world``,
``agents_strategies``...): there are no packages under ``tests/``, so their
folders go on ``sys.path`` here, before any test module is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent

for _folder in ("runtime", "tools", "agents"):
    _path = str(_HERE.parent / _folder)
    if _path not in sys.path:
        sys.path.append(_path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the items collected from this folder (the hook sees the whole session)."""
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.reliability)
