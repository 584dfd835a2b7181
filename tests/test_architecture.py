"""ARCHITECTURE.md names only files and functions that exist.

The page walks a reader through the code by path (``runtime/_transcripts/writer.py``)
and by function (``runtime/_runtime.py: RuntimeHost.send_input``); a move that
forgets the page fails here instead of sending the next reader nowhere.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import subagents

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(subagents.__file__).resolve().parent
PAGE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")

#: `path.py` or `path.py: Name.attr` inside backticks, possibly wrapped over two lines.
CODE = re.compile(r"`([\w./]+\.py)(?::\s+([\w.]+))?`")


def _resolve(name: str) -> list[Path]:
    if name.startswith(("tests/", "bench/", "subagents/")):
        return [ROOT / name]
    if "/" in name:
        return [PACKAGE / name]
    return sorted(PACKAGE.rglob(name))


def test_every_file_named_exists() -> None:
    names = {match.group(1) for match in CODE.finditer(PAGE.replace("\n   ", " "))}
    assert len(names) > 40  # the check reads the page
    missing = [name for name in sorted(names) if not any(p.is_file() for p in _resolve(name))]
    assert missing == []


def test_every_function_named_exists() -> None:
    found = [m.groups() for m in CODE.finditer(PAGE.replace("\n   ", " ")) if m.group(2)]
    assert len(found) >= 6
    for path, dotted in found:
        (file,) = _resolve(path)
        module = ".".join(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        target: object = importlib.import_module(module)
        for part in dotted.split("."):
            assert hasattr(target, part), f"{path}: {dotted}"
            target = getattr(target, part)
