"""Grep's work and memory stay bounded by what it outputs, and a stop flag ends a scan.

The search itself is counted (``LinearRegex.search`` wrapped), so these tests
check how much of a file was scanned, not how long it took.
"""

from __future__ import annotations

import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from subagents.tools import GrepTool, ToolRegistry
from subagents.tools._builtin import grep, threads
from subagents.tools._builtin.regex import LinearRegex, compile_linear

LINES = 10_000


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every ``LinearRegex.search`` call, as the position it started from."""
    calls: list[int] = []
    search = LinearRegex.search

    def counted(self: LinearRegex, data: bytes, pos: int, endpos: int) -> tuple[int, int] | None:
        calls.append(pos)
        return search(self, data, pos, endpos)

    monkeypatch.setattr(LinearRegex, "search", counted)
    return calls


@pytest.fixture
def every_line_matches(tmp_path: Path) -> Path:
    path = tmp_path / "big.txt"
    path.write_text("".join(f"hit {i}\n" for i in range(LINES)))
    return path


async def test_files_with_matches_stops_at_a_files_first_match(
    every_line_matches: Path, make_ctx: Any, searches: list[int]
) -> None:
    result = await ToolRegistry([GrepTool()]).call("Grep", {"pattern": "hit"}, make_ctx())
    assert result.content == "big.txt"
    assert len(searches) == 1  # not one per matching line


async def test_content_stops_scanning_once_the_output_is_full(
    every_line_matches: Path, make_ctx: Any, searches: list[int]
) -> None:
    args = {"pattern": "hit", "output_mode": "content", "head_limit": 3, "-C": 1}
    result = await ToolRegistry([GrepTool()]).call("Grep", args, make_ctx())
    assert result.content.splitlines() == [
        "big.txt:1:hit 0",
        "big.txt:2:hit 1",
        "big.txt:3:hit 2",
        "[output limited to 3 lines; raise head_limit or narrow the search]",
    ]
    assert result.details["limited"] is True
    assert len(searches) <= 5  # the lines shown and one more, not the whole file


async def test_a_set_stop_flag_ends_the_scan_between_matches(
    every_line_matches: Path,
    make_ctx: Any,
    searches: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As when the call is cancelled: the flag is set mid-file, the scan goes no further."""
    flags: list[threading.Event] = []

    def recorded() -> threading.Event:
        flags.append(threading.Event())
        return flags[-1]

    monkeypatch.setattr(threads, "StopFlag", recorded)
    search = LinearRegex.search

    def cancelled_at_the_fifth(
        self: LinearRegex, data: bytes, pos: int, endpos: int
    ) -> tuple[int, int] | None:
        if len(searches) == 5:
            flags[0].set()
        return search(self, data, pos, endpos)

    monkeypatch.setattr(LinearRegex, "search", cancelled_at_the_fifth)
    # count mode would otherwise search every one of the file's matching lines
    await ToolRegistry([GrepTool()]).call(
        "Grep", {"pattern": "hit", "output_mode": "count"}, make_ctx()
    )
    assert len(searches) <= 6


def test_line_scan_checks_the_stop_flag_after_every_match(searches: list[int]) -> None:
    data = b"hit\n" * LINES  # one window: the pattern is simple
    stop = threading.Event()
    regex = compile_linear("hit")
    search = LinearRegex.search

    def stop_after_three(
        self: LinearRegex, data: bytes, pos: int, endpos: int
    ) -> tuple[int, int] | None:
        if len(searches) >= 3:
            stop.set()
        return search(self, data, pos, endpos)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LinearRegex, "search", stop_after_three)
        matched, too_long = grep._line_matches(regex, data, stop)
    assert len(matched) < 5
    assert too_long == 0


async def test_count_keeps_no_line_of_the_file(tmp_path: Path, make_ctx: Any) -> None:
    (tmp_path / "many.txt").write_text("abc\n" * 50_000)  # 200 KB, 50,000 matching lines
    registry = ToolRegistry([GrepTool()])
    args = {"pattern": "b", "output_mode": "count"}
    await registry.call("Grep", args, make_ctx())  # imports and caches outside the measure
    tracemalloc.start()
    try:
        result = await registry.call("Grep", args, make_ctx())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.content == "many.txt:50000"
    # The 1 MB read buffer, the file's 200 KB and a little more; the file's lines as a list
    # of strings and their numbers as a list of ints would add about 4.5 MB.
    assert peak < 2_000_000


def test_invalid_utf8_is_repaired_alike_in_any_piece_size(monkeypatch: pytest.MonkeyPatch) -> None:
    data = "caf\u00e9 \u20ac\n".encode() * 3 + b"\xff\xe2\x82" + "\u00e9\n".encode()
    whole = data.decode("utf-8", errors="replace").encode()
    for piece in (1, 2, 3, 5, 1024):
        monkeypatch.setattr(grep, "_DECODE_PIECE", piece)
        assert grep._repaired_utf8(data) == whole
        assert grep._repaired_utf8(whole) is whole
