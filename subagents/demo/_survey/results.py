"""Reading the tool results a surveying agent gets back: LS, Glob, Grep and Read text.

The survey policies work from the text of tool results alone; these parsers
turn that text into values (with what a cap or a cut left out), so the lead
and the Explore agent read it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from subagents.demo._survey.common import Exchange

__all__ = [
    "Counts",
    "Listing",
    "parse_counts",
    "parse_glob",
    "parse_ls",
    "read_lines",
    "result_lines",
]

_TRUNCATED = re.compile(r"\n\[result truncated: \d+ more characters\]\Z")
_LS_MORE = re.compile(r"\[\d+ more entries not shown\]")
_GLOB_MORE = re.compile(r"\[(\d+) more files not shown; .*\]")
_GREP_BINARY = re.compile(r"\[(\d+) binary files skipped\]")
_GREP_LARGE = re.compile(r"\[(\d+) files larger than \d+ bytes skipped\]")
_READ_LINE = re.compile(r" *(\d+)\t(.*)")


def result_lines(content: str) -> tuple[list[str], bool]:
    """A tool result's lines, and whether the registry cut it (its note and cut line dropped)."""
    cut = _TRUNCATED.search(content)
    if cut is None:
        return content.split("\n"), False
    return content[: cut.start()].split("\n")[:-1], True


def parse_ls(content: str) -> tuple[list[str], list[str], bool]:
    """An ``LS`` result as (folders, files, complete); symlinks (``@``) are left out.

    LS writes a header line, then ``  name`` per entry (``name/`` for a
    directory, ``name@`` for a symlink) and a note when it stopped early.
    """
    lines, cut = result_lines(content)
    if not lines or lines[0].endswith(" is empty."):
        return [], [], not cut
    complete = not cut
    folders: list[str] = []
    files: list[str] = []
    for line in lines[1:]:
        if _LS_MORE.fullmatch(line):
            complete = False
        elif line.startswith("  "):
            name = line[2:]
            if name.endswith("/"):
                folders.append(name[:-1])
            elif not name.endswith("@"):
                files.append(name)
    return folders, files, complete


@attrs.frozen
class Listing:
    """A Glob result: the paths shown, the total it reported (None if unknown)."""

    files: tuple[str, ...]
    total: int | None
    error: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every file was named."""
        return self.total == len(self.files)

    @property
    def count(self) -> int:
        """The number of files: the total Glob reported, else the paths it showed."""
        return self.total if self.total is not None else len(self.files)


def parse_glob(exchange: Exchange) -> Listing:
    """A Glob result as a :class:`Listing` (an error result: its error, no files)."""
    content = exchange.content or ""
    if exchange.is_error:
        return Listing((), 0, error=content)
    if content == "No files found.":
        return Listing((), 0)
    lines, cut = result_lines(content)
    more = _GLOB_MORE.fullmatch(lines[-1]) if lines and not cut else None
    if more is not None:
        lines.pop()
    files = tuple(line for line in lines if line)
    if cut:
        return Listing(files, None)
    return Listing(files, len(files) + (int(more.group(1)) if more else 0))


@attrs.frozen
class Counts:
    """A Grep count result: matching lines per file, and the files it skipped."""

    per_file: Mapping[str, int]
    binary: int = 0
    large: int = 0
    complete: bool = True


def parse_counts(exchange: Exchange) -> Counts:
    """A count-mode Grep result as :class:`Counts` (cut or limited output: not complete)."""
    if exchange.is_error:
        return Counts({}, complete=False)
    lines, cut = result_lines(exchange.content or "")
    per_file: dict[str, int] = {}
    binary = large = 0
    complete = not cut
    for line in lines:
        if line.endswith("]") and line.startswith("["):
            if found := _GREP_BINARY.fullmatch(line):
                binary = int(found.group(1))
            elif found := _GREP_LARGE.fullmatch(line):
                large = int(found.group(1))
            else:
                complete = False  # "[output limited ...]"
            continue
        path, sep, count = line.rpartition(":")
        if sep and count.isdigit():
            per_file[path] = int(count)
    return Counts(per_file, binary, large, complete)


def read_lines(exchange: Exchange) -> list[str]:
    """The text of a Read result's numbered lines (none for an error)."""
    if exchange.is_error:
        return []
    out = []
    for line in (exchange.content or "").split("\n"):
        found = _READ_LINE.fullmatch(line)
        if found is not None:
            out.append(found.group(2))
    return out
