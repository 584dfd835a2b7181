"""The ``Grep`` tool: regular-expression search over workspace files, like ``grep -r``."""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterator
from typing import Annotated, Literal, final

import attrs
import msgspec

from subagents.tools._config import (
    GREP_DEFAULT_HEAD_LIMIT,
    GREP_MAX_FILE_BYTES,
    READ_MAX_LINE_CHARS,
    VCS_DIRECTORIES,
)
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._globbing import compile_glob
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._text import clip_line, is_binary, read_at_most
from subagents.tools._threads import StopFlag, run_in_thread
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
            description="Regular expression (Python `re` syntax) to search for.",
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


@final
@attrs.frozen
class GrepTool:
    """Searches file contents; reports files, matching lines, or counts."""

    default_head_limit: int = GREP_DEFAULT_HEAD_LIMIT
    max_file_bytes: int = GREP_MAX_FILE_BYTES
    max_line_chars: int = READ_MAX_LINE_CHARS

    name = "Grep"
    description = (
        "Search file contents with a regular expression (Python syntax), recursively like "
        "`grep -r`. output_mode 'files_with_matches' (default) lists files, 'content' shows "
        "matching lines as path:line:text (with -A/-B/-C context), 'count' gives matches per "
        "file. Filter files with `glob`; limit output with head_limit. Binary files, "
        "symlinks and .git/.hg/.svn directories are skipped."
    )
    arguments_type = GrepArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: GrepArgs, ctx: ToolContext, /) -> ToolResult:
        """Search in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._grep(workspace, args, stop))

    def _grep(self, workspace: Workspace, args: GrepArgs, stop: StopFlag) -> ToolResult:
        flags = re.IGNORECASE if args.case_insensitive else 0
        if args.multiline:
            flags |= re.MULTILINE | re.DOTALL
        try:
            regex = re.compile(args.pattern, flags)
        except (re.error, OverflowError, RecursionError) as exc:
            raise ToolError(f"Invalid regular expression {args.pattern!r}: {exc}.") from None
        base = workspace.resolve(args.path or ".")
        file_filter = _file_filter(args.glob)
        limit = args.head_limit or self.default_head_limit
        before = args.before if args.before is not None else (args.context or 0)
        after = args.after if args.after is not None else (args.context or 0)
        # As in grep, any context option (even 0) separates groups with "--".
        grouped = any(n is not None for n in (args.before, args.after, args.context))

        out: list[str] = []
        skipped_binary = skipped_large = 0
        files = total = 0
        limited = False
        for scanned in self._scan(workspace, base, file_filter, regex, args.multiline, stop):
            if isinstance(scanned, str):
                if scanned == "binary":
                    skipped_binary += 1
                else:
                    skipped_large += 1
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
        if skipped_binary:
            notes.append(f"[{skipped_binary} binary files skipped]")
        if skipped_large:
            notes.append(f"[{skipped_large} files larger than {self.max_file_bytes} bytes skipped]")
        if not out:
            return ToolResult.ok("\n".join(["No matches found.", *notes]), files=0, matches=0)
        return ToolResult.ok("\n".join([*out, *notes]), files=files, matches=total, limited=limited)

    def _scan(
        self,
        workspace: Workspace,
        base: WorkspacePath,
        file_filter: _FileFilter | None,
        regex: re.Pattern[str],
        multiline: bool,
        stop: StopFlag,
    ) -> Iterator[_FileMatches | str]:
        """Matches per file in walk order; ``"binary"``/``"large"`` for skipped files."""
        st = workspace.lstat(base)
        if st is None:
            raise ToolError(f"'{base.display}' does not exist.")
        if not stat.S_ISDIR(st.st_mode):
            require_regular(st, base.display)
            parent = workspace.open_directory(_parent(base))
            try:
                yield from self._scan_file(
                    workspace, parent, base.parts[-1], base.display, regex, multiline
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
                    workspace, listing.fd, entry.name, shown, regex, multiline
                )

    def _scan_file(
        self,
        workspace: Workspace,
        dir_fd: int,
        name: str,
        shown: str,
        regex: re.Pattern[str],
        multiline: bool,
    ) -> Iterator[_FileMatches | str]:
        try:
            fd, st = workspace.open_file_at(dir_fd, name, shown)
        except ToolError:
            return
        try:
            if st.st_size > self.max_file_bytes:
                yield "large"
                return
            data = read_at_most(fd, self.max_file_bytes)
        finally:
            os.close(fd)
        if is_binary(data):
            yield "binary"
            return
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n") if text else []
        if text.endswith("\n"):
            lines.pop()
        if multiline:
            matched = _multiline_matches(regex, text)
        else:
            matched = [i for i, line in enumerate(lines) if regex.search(line) is not None]
        if matched:
            yield _FileMatches(shown=shown, lines=lines, matched=matched)


def _parent(target: WorkspacePath) -> WorkspacePath:
    return attrs.evolve(target, parts=target.parts[:-1])


@attrs.frozen
class _FileFilter:
    """A glob with a '/' is matched against the path below the search root, else the name."""

    regex: re.Pattern[str]
    by_path: bool

    def matches(self, relative: str, name: str) -> bool:
        return self.regex.fullmatch(relative if self.by_path else name) is not None


def _file_filter(glob: str | None) -> _FileFilter | None:
    if not glob:
        return None
    return _FileFilter(regex=compile_glob(glob), by_path="/" in glob.removeprefix("./"))


def _multiline_matches(regex: re.Pattern[str], text: str) -> list[int]:
    """Indices of the lines touched by any match of ``regex`` in the whole ``text``."""
    starts = [0]
    starts.extend(newline.end() for newline in re.finditer("\n", text))
    touched: set[int] = set()
    for match in regex.finditer(text):
        first = bisect.bisect_right(starts, match.start()) - 1
        end = max(match.end() - 1, match.start())
        last = bisect.bisect_right(starts, end) - 1
        touched.update(range(first, last + 1))
    line_count = len(starts) - (1 if text.endswith("\n") else 0)
    return sorted(i for i in touched if i < line_count)


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
