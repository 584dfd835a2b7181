"""The benchmark scripts under ``bench/``, imported by the tests that check them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench_script(filename: str, name: str) -> ModuleType:
    """Import ``bench/<filename>`` as module ``name``, registered in ``sys.modules``
    (dataclasses look their module up while it loads)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / filename)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
