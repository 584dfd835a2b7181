"""The ``Grep`` tool: regular-expression search over workspace files, like ``grep -r``."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Annotated, Literal, final

import attrs
import msgspec

from subagents.tools._builtin.globbing import compile_glob
from subagents.tools._builtin.regex import SYNTAX_NOTE, LinearRegex, compile_linear
from subagents.tools._builtin.text import clip_line, is_binary, read_at_most
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._config import (
    GREP_DEFAULT_HEAD_LIMIT,
    GREP_MAX_FILE_BYTES,
    READ_MAX_LINE_CHARS,
    VCS_DIRECTORIES,
)
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace, WorkspacePath, require_regular

__all__ = ["GrepArgs", "GrepTool"]

_ContextLines = Annotated[int, msgspec.Meta(ge=0, le=100)]


class GrepArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Grep tool."""

    pattern: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=10_000,
            description=f"Regular expression to search for, in {SYNTAX_NOTE}",
        ),
    ]
    path: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=4096,
                description="File or directory to search (default: the workspace root).",
            ),
        ]
        | None
    ) = None
    glob: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=4096,
                description=(
                    "Only search files matching this glob, e.g. '*.py' (matched against the "
                    "file name) or 'src/**/*.ts' (matched against the path below `path`)."
                ),
            ),
        ]
        | None
    ) = None
    output_mode: Annotated[
        Literal["files_with_matches", "content", "count"],
        msgspec.Meta(
            description=(
                "'files_with_matches' lists matching files (default), 'content' shows "
                "matching lines, 'count' shows the number of matching lines per file."
            )
        ),
    ] = "files_with_matches"
    case_insensitive: Annotated[bool, msgspec.Meta(description="Ignore case.")] = msgspec.field(
        default=False, name="-i"
    )
    line_numbers: Annotated[
        bool, msgspec.Meta(description="Show line numbers in content mode.")
    ] = msgspec.field(default=True, name="-n")
    after: (
        Annotated[_ContextLines, msgspec.Meta(description="Lines of context after each match.")]
        | None
    ) = msgspec.field(default=None, name="-A")
    before: (
        Annotated[_ContextLines, msgspec.Meta(description="Lines of context before each match.")]
        | None
    ) = msgspec.field(default=None, name="-B")
    context: (
        Annotated[_ContextLines, msgspec.Meta(description="Lines of context around each match.")]
        | None
    ) = msgspec.field(default=None, name="-C")
    head_limit: (
        Annotated[
            int, msgspec.Meta(ge=1, description="Show at most this many output lines or files.")
        ]
        | None
    ) = None
    multiline: Annotated[
        bool,
        msgspec.Meta(description="Let the pattern span lines ('.' matches newlines)."),
    ] = False


@attrs.frozen
class _FileMatches:
    shown: str
    lines: list[str]
    matched: list[int]


@attrs.frozen
class _Skipped:
    """A file (or some of its lines) left unsearched, and why."""

    reason: Literal["binary", "large", "costly", "long_lines"]
    count: int = 1


@final
@attrs.frozen
class GrepTool:
    """Searches file contents; reports files, matching lines, or counts."""

    default_head_limit: int = GREP_DEFAULT_HEAD_LIMIT
    max_file_bytes: int = GREP_MAX_FILE_BYTES
    max_line_chars: int = READ_MAX_LINE_CHARS

    name = "Grep"
    description = (
        "Search file contents with a regular expression, recursively like `grep -r`. "
        "output_mode 'files_with_matches' (default) lists files, 'content' shows "
        "matching lines as path:line:text (with -A/-B/-C context), 'count' gives matches per "
        "file. Filter files with `glob`; limit output with head_limit. Binary files, "
        f"symlinks and .git/.hg/.svn directories are skipped. Patterns use {SYNTAX_NOTE}"
    )
    arguments_type = GrepArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: GrepArgs, ctx: ToolContext, /) -> ToolResult:
        """Search in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._grep(workspace, args, stop))

    def _grep(self, workspace: Workspace, args: GrepArgs, stop: StopFlag) -> ToolResult:
        regex = compile_linear(
            args.pattern,
            ignore_case=args.case_insensitive,
            lines=not args.multiline,
            dot_all=args.multiline,
        )
        base = workspace.resolve(args.path or ".")
        file_filter = _file_filter(args.glob)
        limit = args.head_limit or self.default_head_limit
        before = args.before if args.before is not None else (args.context or 0)
        after = args.after if args.after is not None else (args.context or 0)
        # As in grep, any context option (even 0) separates groups with "--".
        grouped = any(n is not None for n in (args.before, args.after, args.context))

        out: list[str] = []
        skipped = dict.fromkeys(("binary", "large", "costly", "long_lines"), 0)
        files = total = 0
        limited = False
        for scanned in self._scan(workspace, base, file_filter, regex, args.multiline, stop):
            if isinstance(scanned, _Skipped):
                skipped[scanned.reason] += scanned.count
                continue
            files += 1
            total += len(scanned.matched)
            if args.output_mode == "files_with_matches":
                entries = [scanned.shown]
            elif args.output_mode == "count":
                entries = [f"{scanned.shown}:{len(scanned.matched)}"]
            else:
                entries = _content_lines(
                    scanned, before, after, grouped, args.line_numbers, self.max_line_chars
                )
                if out and grouped:
                    entries.insert(0, "--")
            room = limit - len(out)
            out.extend(entries[:room])
            if len(entries) > room:
                limited = True
                break
        notes = []
        if limited:
            notes.append(
                f"[output limited to {limit} lines; raise head_limit or narrow the search]"
            )
        if skipped["binary"]:
            notes.append(f"[{skipped['binary']} binary files skipped]")
        if skipped["large"]:
            notes.append(
                f"[{skipped['large']} files larger than {self.max_file_bytes} bytes skipped]"
            )
        if skipped["long_lines"]:
            notes.append(
                f"[{skipped['long_lines']} lines longer than {regex.window_bytes()} bytes not "
                "searched: too long for a pattern this complex; simplify the pattern]"
            )
        if skipped["costly"]:
            notes.append(
                f"[{skipped['costly']} files larger than {regex.window_bytes()} bytes not "
                "searched in multiline mode with a pattern this complex; simplify the pattern "
                "or search without multiline]"
            )
        if not out:
            return ToolResult.ok("\n".join(["No matches found.", *notes]), files=0, matches=0)
        return ToolResult.ok("\n".join([*out, *notes]), files=files, matches=total, limited=limited)

    def _scan(
        self,
        workspace: Workspace,
        base: WorkspacePath,
        file_filter: _FileFilter | None,
        regex: LinearRegex,
        multiline: bool,
        stop: StopFlag,
    ) -> Iterator[_FileMatches | _Skipped]:
        """Matches per file in walk order, and what was skipped."""
        st = workspace.lstat(base)
        if st is None:
            raise ToolError(f"'{base.display}' does not exist.")
        if not stat.S_ISDIR(st.st_mode):
            require_regular(st, base.display)
            parent = workspace.open_directory(_parent(base))
            try:
                yield from self._scan_file(
                    workspace, parent, base.parts[-1], base.display, regex, multiline, stop
                )
            finally:
                os.close(parent)
            return
        prefix = len(base.parts)
        for listing in workspace.walk(base, skip_dirs=VCS_DIRECTORIES):
            if stop.is_set():
                return
            relative_dir = "/".join(listing.parts[prefix:])
            for entry in listing.entries:
                if stop.is_set():
                    return
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                relative = f"{relative_dir}/{entry.name}" if relative_dir else entry.name
                if file_filter is not None and not file_filter.matches(relative, entry.name):
                    continue
                shown = f"{listing.display}/{entry.name}" if listing.parts else entry.name
                yield from self._scan_file(
                    workspace, listing.fd, entry.name, shown, regex, multiline, stop
                )

    def _scan_file(
        self,
        workspace: Workspace,
        dir_fd: int,
        name: str,
        shown: str,
        regex: LinearRegex,
        multiline: bool,
        stop: StopFlag,
    ) -> Iterator[_FileMatches | _Skipped]:
        try:
            fd, st = workspace.open_file_at(dir_fd, name, shown)
        except ToolError:
            return
        try:
            if st.st_size > self.max_file_bytes:
                yield _Skipped("large")
                return
            data = read_at_most(fd, self.max_file_bytes)
        finally:
            os.close(fd)
        if is_binary(data):
            yield _Skipped("binary")
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # RE2 searches UTF-8; searching the repaired text keeps positions and lines aligned.
            text = data.decode("utf-8", errors="replace")
            data = text.encode("utf-8")
        if multiline:
            if len(data) > regex.window_bytes():
                yield _Skipped("costly")
                return
            matched = _multiline_matches(regex, data, stop)
        else:
            matched, too_long = _line_matches(regex, data, stop)
            if too_long:
                yield _Skipped("long_lines", too_long)
        if matched:
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            yield _FileMatches(shown=shown, lines=lines, matched=matched)


def _parent(target: WorkspacePath) -> WorkspacePath:
    return attrs.evolve(target, parts=target.parts[:-1])


@attrs.frozen
class _FileFilter:
    """A glob with a '/' is matched against the path below the search root, else the name."""

    regex: LinearRegex
    by_path: bool

    def matches(self, relative: str, name: str) -> bool:
        return self.regex.fullmatch(relative if self.by_path else name)


def _file_filter(glob: str | None) -> _FileFilter | None:
    if not glob:
        return None
    return _FileFilter(regex=compile_glob(glob), by_path="/" in glob.removeprefix("./"))


def _line_count(data: bytes) -> int:
    """Lines in ``data`` as Grep counts them: none when empty, none after a final newline."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _line_matches(regex: LinearRegex, data: bytes, stop: StopFlag) -> tuple[list[int], int]:
    """Indices of the lines ``regex`` matches, and how many lines were too long to search.

    Whole lines are searched in windows of at most ``regex.window_bytes()`` (the
    pattern cannot match a newline, so a window searches like its lines one by
    one), and ``stop`` is checked between calls; a line longer than a window is
    counted and left out rather than searched in one unbounded call.
    """
    window = regex.window_bytes()
    # Where the last line ends: its newline, or the end of the data.
    last_end = len(data) - 1 if data.endswith(b"\n") else len(data)
    matched: list[int] = []
    too_long = 0
    pos = line = 0  # ``pos`` is always the start of line ``line``
    while pos < len(data) and not stop.is_set():
        if last_end - pos <= window:
            end = last_end
        else:
            end = data.rfind(b"\n", pos, pos + window + 1)
            if end == -1:
                too_long += 1
                newline = data.find(b"\n", pos)
                pos = len(data) if newline == -1 else newline + 1
                line += 1
                continue
        # Search lines pos..end (``end`` is the last line's newline or the data's end).
        cursor, cursor_line = pos, line
        while True:
            span = regex.search(data, cursor, end)
            if span is None:
                break
            cursor_line += data.count(b"\n", cursor, span[0])
            matched.append(cursor_line)
            newline = data.find(b"\n", span[0], end)
            if newline == -1:
                break
            cursor, cursor_line = newline + 1, cursor_line + 1
        line += data.count(b"\n", pos, end) + 1
        pos = end + 1
    return matched, too_long


def _multiline_matches(regex: LinearRegex, data: bytes, stop: StopFlag) -> list[int]:
    """Indices of the lines touched by any match of ``regex`` in the whole of ``data``."""
    touched: set[int] = set()
    # Line numbers are counted forward from the last position seen (matches only move on).
    seen, seen_line = 0, 0

    def line_at(offset: int) -> int:
        nonlocal seen, seen_line
        seen_line += data.count(b"\n", seen, offset)
        seen = offset
        return seen_line

    pos, size = 0, len(data)
    while pos <= size and not stop.is_set():
        span = regex.search(data, pos, size)
        if span is None:
            break
        start, end = span
        first = line_at(start)
        last = line_at(max(end - 1, start))
        touched.update(range(first, last + 1))
        if end > start:
            pos = end
        else:
            # Step over one whole UTF-8 character after an empty match.
            pos = end + 1
            while pos < size and data[pos] & 0xC0 == 0x80:
                pos += 1
    count = _line_count(data)
    return sorted(i for i in touched if i < count)


def _content_lines(
    found: _FileMatches, before: int, after: int, grouped: bool, numbers: bool, max_chars: int
) -> list[str]:
    """``path:line:text`` for matches and ``path-line-text`` for context, ``--`` between groups."""
    matched = set(found.matched)
    shown_lines: list[int] = []
    for index in found.matched:
        start = max(0, index - before)
        stop = min(len(found.lines) - 1, index + after)
        for i in range(start, stop + 1):
            if not shown_lines or i > shown_lines[-1]:
                shown_lines.append(i)
    out: list[str] = []
    previous = None
    for i in shown_lines:
        if grouped and previous is not None and i != previous + 1:
            out.append("--")
        sep = ":" if i in matched else "-"
        text = clip_line(found.lines[i], max_chars)
        out.append(
            f"{found.shown}{sep}{i + 1}{sep}{text}" if numbers else f"{found.shown}{sep}{text}"
        )
        previous = i
    return out
