"""LS ``ignore`` patterns: matched as ``fnmatch`` would, compiled per call, bounded in size."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

import pytest

from subagents.tools import LSTool, ToolArgumentsError, ToolRegistry
from subagents.tools._builtin.ls import LSArgs

NAMES = ["a.py", "b.PY", "c.txt", ".hidden", "x1", "xy", "{a,b}", "a", "[x]", "ab]", "-", "d"]
PATTERNS = ["*.py", "?", "x?", "[abc].*", "[!a-c]*", "[]]*", "{a,b}", ".*", "*]", "[-]"]
#: Patterns no entry name can match (fnmatch never matches them; compile_glob would refuse some).
NEVER = ["", "/a", "./a", "../a", "..", "a/*"]


def _boom(*args: Any) -> bool:
    raise AssertionError("LS went through fnmatch")


async def test_ignore_matches_as_fnmatch_without_its_cache(
    tmp_path: Path, make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NAMES:
        (tmp_path / name).write_text("")
    os.close(os.open(os.fsencode(tmp_path) + b"/u\xffv", os.O_CREAT | os.O_WRONLY))
    names = sorted([*NAMES, os.fsdecode(b"u\xffv")])
    expected = {
        pattern: [n for n in names if not fnmatch.fnmatchcase(n, pattern)]
        for pattern in [*PATTERNS, *NEVER, "u?v"]
    }
    for name in ("fnmatch", "fnmatchcase", "filter"):
        monkeypatch.setattr(fnmatch, name, _boom)
    cached = fnmatch._compile_pattern.cache_info()  # type: ignore[attr-defined]
    registry = ToolRegistry([LSTool()])
    for pattern, kept in expected.items():
        result = await registry.call("LS", {"ignore": [pattern]}, make_ctx())
        assert not result.is_error, result.content
        assert [line[2:] for line in result.content.splitlines()[1:]] == kept, pattern
    assert fnmatch._compile_pattern.cache_info() == cached  # type: ignore[attr-defined]


async def test_too_much_ignore_text_is_a_tool_error(tmp_path: Path, make_ctx: Any) -> None:
    (tmp_path / "f").write_text("")
    ignore = [f"{i}-" + "*?[a-z]" * 140 for i in range(9)]  # 9 patterns of ~1 KB
    result = await ToolRegistry([LSTool()]).call("LS", {"ignore": ignore}, make_ctx())
    assert result.is_error
    assert "at most 8192" in result.content
    assert "fewer or shorter patterns" in result.content


async def test_too_many_ignore_patterns_is_a_tool_error(make_ctx: Any) -> None:
    """The schema caps the list too; the tool checks again for callers that skip it."""
    with pytest.raises(ToolArgumentsError, match="at most 100 ignore patterns"):
        await LSTool().call(LSArgs(ignore=["*.log"] * 101), make_ctx())
