"""The ``Grep`` tool: regular-expression search over workspace files, like ``grep -r``."""

from __future__ import annotations

import codecs
import itertools
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


#: A run of matched lines: the first and last line's index, and where the first line starts.
_Span = tuple[int, int, int]


@attrs.frozen
class _FileMatches:
    """A file with at least one match; its matched lines are found as ``spans`` is consumed.

    ``spans`` scans the file lazily, in order, so a caller that needs only the
    first match (files_with_matches) or a screenful (content) leaves the rest of
    the file unscanned.
    """

    shown: str
    data: bytes
    spans: Iterator[_Span]


@attrs.frozen
class _Skipped:
    """A file left unsearched, and why."""

    reason: Literal["binary", "large", "costly"]


@attrs.define
class _Tally:
    """Lines too long to search with the pattern, counted as files are scanned."""

    long_lines: int = 0


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
        skipped = dict.fromkeys(("binary", "large", "costly"), 0)
        tally = _Tally()
        files = total = 0
        limited = False
        scan = self._scan(workspace, base, file_filter, regex, args.multiline, tally, stop)
        for scanned in scan:
            if isinstance(scanned, _Skipped):
                skipped[scanned.reason] += 1
                continue
            files += 1
            room = limit - len(out)
            if room <= 0:  # one more matching file than the output can show
                limited = True
                break
            if args.output_mode == "files_with_matches":
                # The file's first match is enough: the rest of it is never scanned.
                entries = [scanned.shown]
                total += 1
            elif args.output_mode == "count":
                found = _count_lines(scanned.spans)
                entries = [f"{scanned.shown}:{found}"]
                total += found
            else:
                separate = bool(out) and grouped
                # One line more than there is room for tells that the output is cut.
                entries, found = _content_lines(
                    scanned,
                    before,
                    after,
                    grouped,
                    args.line_numbers,
                    self.max_line_chars,
                    cap=room + 1 - separate,
                )
                total += found
                if separate:
                    entries.insert(0, "--")
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
        if tally.long_lines:
            notes.append(
                f"[{tally.long_lines} lines longer than {regex.window_bytes()} bytes not "
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
        tally: _Tally,
        stop: StopFlag,
    ) -> Iterator[_FileMatches | _Skipped]:
        """Files with matches in walk order, and what was skipped."""
        st = workspace.lstat(base)
        if st is None:
            raise ToolError(f"'{base.display}' does not exist.")
        if not stat.S_ISDIR(st.st_mode):
            require_regular(st, base.display)
            parent = workspace.open_directory(_parent(base))
            try:
                yield from self._scan_file(
                    workspace, parent, base.parts[-1], base.display, regex, multiline, tally, stop
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
                    workspace, listing.fd, entry.name, shown, regex, multiline, tally, stop
                )

    def _scan_file(
        self,
        workspace: Workspace,
        dir_fd: int,
        name: str,
        shown: str,
        regex: LinearRegex,
        multiline: bool,
        tally: _Tally,
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
        # RE2 searches UTF-8; searching the repaired bytes keeps positions and lines aligned.
        data = _repaired_utf8(data)
        if multiline:
            if len(data) > regex.window_bytes():
                yield _Skipped("costly")
                return
            spans = _multiline_spans(regex, data, stop)
        else:
            spans = _line_spans(regex, data, tally, stop)
        first = next(spans, None)
        if first is not None:
            yield _FileMatches(shown=shown, data=data, spans=itertools.chain([first], spans))


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


#: How much of a file is decoded at once when checking it is UTF-8.
_DECODE_PIECE = 1024 * 1024


def _repaired_utf8(data: bytes) -> bytes:
    """``data`` with each invalid UTF-8 sequence replaced by U+FFFD, checked in bounded pieces.

    The whole file is never decoded into one string at once: ASCII is checked in
    place, other text through an incremental decoder, ``_DECODE_PIECE`` bytes at a time.
    """
    if data.isascii():
        return data
    view = memoryview(data)
    pieces = range(0, len(data), _DECODE_PIECE)
    try:
        strict = codecs.getincrementaldecoder("utf-8")()
        for offset in pieces:
            strict.decode(view[offset : offset + _DECODE_PIECE])
        strict.decode(b"", final=True)
    except UnicodeDecodeError:
        lenient = codecs.getincrementaldecoder("utf-8")(errors="replace")
        parts = [lenient.decode(view[o : o + _DECODE_PIECE]).encode("utf-8") for o in pieces]
        parts.append(lenient.decode(b"", final=True).encode("utf-8"))
        return b"".join(parts)
    return data


def _line_spans(regex: LinearRegex, data: bytes, tally: _Tally, stop: StopFlag) -> Iterator[_Span]:
    """The lines ``regex`` matches, in order, found only as far as the caller reads.

    Whole lines are searched in windows of at most ``regex.window_bytes()`` (the
    pattern cannot match a newline, so a window searches like its lines one by
    one); every search, including each one after a match, stays inside its
    window, so within the work budget, and ``stop`` is checked before each. A
    line longer than a window is counted in ``tally`` and left out rather than
    searched in one unbounded call.
    """
    window = regex.window_bytes()
    # Where the last line ends: its newline, or the end of the data.
    last_end = len(data) - 1 if data.endswith(b"\n") else len(data)
    pos = line = 0  # ``pos`` is always the start of line ``line``
    while pos < len(data) and not stop.is_set():
        if last_end - pos <= window:
            end = last_end
        else:
            end = data.rfind(b"\n", pos, pos + window + 1)
            if end == -1:
                tally.long_lines += 1
                newline = data.find(b"\n", pos)
                pos = len(data) if newline == -1 else newline + 1
                line += 1
                continue
        # Search lines pos..end (``end`` is the last line's newline or the data's end).
        cursor, cursor_line = pos, line  # ``cursor`` is always the start of ``cursor_line``
        while not stop.is_set():
            span = regex.search(data, cursor, end)
            if span is None:
                break
            passed = data.count(b"\n", cursor, span[0])
            if passed:
                cursor_line += passed
                cursor = data.rfind(b"\n", cursor, span[0]) + 1
            yield cursor_line, cursor_line, cursor
            newline = data.find(b"\n", span[0], end)
            if newline == -1:
                break
            cursor, cursor_line = newline + 1, cursor_line + 1
        line += data.count(b"\n", pos, end) + 1
        pos = end + 1


def _multiline_spans(regex: LinearRegex, data: bytes, stop: StopFlag) -> Iterator[_Span]:
    """The lines each match of ``regex`` in the whole of ``data`` touches, in order.

    ``data`` fits one window (the caller checks), so each search is within the
    work budget; ``stop`` is checked before each.
    """
    count = _line_count(data)
    # Line numbers are counted forward from the last position seen (matches only move on).
    seen = seen_line = seen_line_start = 0

    def line_at(offset: int) -> tuple[int, int]:
        nonlocal seen, seen_line, seen_line_start
        passed = data.count(b"\n", seen, offset)
        if passed:
            seen_line += passed
            seen_line_start = data.rfind(b"\n", seen, offset) + 1
        seen = offset
        return seen_line, seen_line_start

    pos, size = 0, len(data)
    while pos <= size and not stop.is_set():
        span = regex.search(data, pos, size)
        if span is None:
            return
        start, end = span
        first, first_start = line_at(start)
        if first >= count:  # an empty match after the final newline touches no line
            return
        last, _ = line_at(max(end - 1, start))
        yield first, min(last, count - 1), first_start
        if end > start:
            pos = end
        else:
            # Step over one whole UTF-8 character after an empty match.
            pos = end + 1
            while pos < size and data[pos] & 0xC0 == 0x80:
                pos += 1


def _count_lines(spans: Iterator[_Span]) -> int:
    """How many distinct lines ``spans`` (in order, possibly overlapping) cover."""
    total, covered = 0, -1
    for first, last, _ in spans:
        lowest = max(first, covered + 1)
        if last >= lowest:
            total += last - lowest + 1
            covered = last
    return total


def _line_matches(regex: LinearRegex, data: bytes, stop: StopFlag) -> tuple[list[int], int]:
    """Indices of the lines ``regex`` matches, and how many lines were too long to search.

    Kept for ``bench/bench_grep.py``; Grep itself reads :func:`_line_spans` lazily.
    """
    tally = _Tally()
    matched = [first for first, _, _ in _line_spans(regex, data, tally, stop)]
    return matched, tally.long_lines


def _multiline_matches(regex: LinearRegex, data: bytes, stop: StopFlag) -> list[int]:
    """Indices of the lines touched by any match of ``regex`` in the whole of ``data``.

    Kept for ``bench/bench_grep.py``; Grep itself reads :func:`_multiline_spans` lazily.
    """
    touched: list[int] = []
    for first, last, _ in _multiline_spans(regex, data, stop):
        touched.extend(range(max(first, touched[-1] + 1 if touched else 0), last + 1))
    return touched


def _content_lines(
    found: _FileMatches,
    before: int,
    after: int,
    grouped: bool,
    numbers: bool,
    max_chars: int,
    *,
    cap: int,
) -> tuple[list[str], int]:
    """At most ``cap`` output lines for ``found``, and how many matched lines they show.

    Matches are ``path:line:text``, context ``path-line-text``, with ``--``
    between groups. Only the lines shown are decoded, and ``found.spans`` is read
    no further than the output needs, so a full output stops the file's scan.
    """
    data, size = found.data, len(found.data)
    out: list[str] = []
    matched = 0
    shown_upto = -1  # the last line shown
    next_start = 0  # where line ``shown_upto + 1`` starts
    owed = 0  # lines of context still to show after the last match

    def show(index: int, start: int, sep: str) -> int:
        """Add line ``index`` (starting at ``start``); where the next line starts."""
        newline = data.find(b"\n", start)
        end = size if newline == -1 else newline
        text = clip_line(data[start:end].decode("utf-8"), max_chars)
        out.append(
            f"{found.shown}{sep}{index + 1}{sep}{text}" if numbers else f"{found.shown}{sep}{text}"
        )
        return end + 1

    for first, last, start in found.spans:
        # Context after the previous match, up to this match.
        while owed and shown_upto + 1 < first:
            if len(out) >= cap:
                return out, matched
            next_start = show(shown_upto + 1, next_start, "-")
            shown_upto += 1
            owed -= 1
        # Context before this match, found by walking back from its first line.
        lowest = max(first - before, shown_upto + 1)
        if len(out) >= cap:
            return out, matched
        if grouped and shown_upto >= 0 and lowest > shown_upto + 1:
            out.append("--")
        starts: list[int] = []
        line_start = start
        for _ in range(lowest, first):
            line_start = data.rfind(b"\n", 0, line_start - 1) + 1
            starts.append(line_start)
        for index, line_start in zip(range(lowest, first), reversed(starts), strict=True):
            if len(out) >= cap:
                return out, matched
            show(index, line_start, "-")
        # The matched lines not already shown (multiline matches can share a line).
        index = max(first, shown_upto + 1)
        line_start = start if index == first else next_start
        while index <= last:
            if len(out) >= cap:
                return out, matched
            line_start = show(index, line_start, ":")
            matched += 1
            shown_upto, next_start = index, line_start
            index += 1
        owed = after
    while owed and next_start < size and len(out) < cap:
        next_start = show(shown_upto + 1, next_start, "-")
        shown_upto += 1
        owed -= 1
    return out, matched
