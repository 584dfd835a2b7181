"""One path converter for attrs fields and constructors that take ``str | PathLike``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["as_path"]


def as_path(value: str | os.PathLike[str]) -> Path:
    """``value`` as a :class:`~pathlib.Path`: a ``Path`` is kept as it is (paths are
    immutable, and an object per agent shared rather than copied keeps agents small)."""
    return value if isinstance(value, Path) else Path(value)
