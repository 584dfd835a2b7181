"""Path rules used by more than one layer: the converter for ``str | PathLike`` fields,
and which folder is the project of a working folder."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["as_path", "project_root_of"]


def as_path(value: str | os.PathLike[str]) -> Path:
    """``value`` as a :class:`~pathlib.Path`: a ``Path`` is kept as it is (paths are
    immutable, and an object per agent shared rather than copied keeps agents small)."""
    return value if isinstance(value, Path) else Path(value)


def project_root_of(start: Path) -> Path:
    """The project folder of the resolved folder ``start``: its git root, else ``start``.

    The folder whose trust decides for ``start`` (the trust store), and the highest
    one whose ``.claude`` folders discovery reads as the project's.
    """
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start
