"""The ``LS`` tool: list one directory of the workspace."""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator, Sequence
from typing import Annotated, Final, final

import attrs
import msgspec

from subagents._unicode import valid_text
from subagents.tools._builtin.globbing import compile_glob
from subagents.tools._builtin.regex import LinearRegex
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._config import LS_MAX_ENTRIES
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolArgumentsError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["LSArgs", "LSTool"]

#: Most ``ignore`` patterns one call may pass (as the schema says), and most characters in all
#: of them together: each call compiles its patterns afresh, so this bounds that work.
_MAX_IGNORE_PATTERNS: Final = 100
_MAX_IGNORE_CHARS: Final = 8192


class LSArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the LS tool."""

    path: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=4096, description="Directory to list (default: the workspace root)."
            ),
        ]
        | None
    ) = None
    ignore: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=1024)]],
        msgspec.Meta(
            max_length=_MAX_IGNORE_PATTERNS,
            description=(
                "Glob patterns of names to leave out (*, ?, [...]); at most "
                f"{_MAX_IGNORE_CHARS} characters in all."
            ),
        ),
    ] = msgspec.field(default_factory=list)


@final
@attrs.frozen
class LSTool:
    """Lists a directory: sub-directories end in '/', symlinks in '@'."""

    max_entries: int = LS_MAX_ENTRIES

    name = "LS"
    description = (
        "List the entries of a directory in the workspace (default: the root). Directories "
        "end with '/', symlinks with '@'. Use Glob to find files recursively."
    )
    arguments_type = LSArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: LSArgs, ctx: ToolContext, /) -> ToolResult:
        """List the directory in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._list(workspace, args, stop))

    def _list(self, workspace: Workspace, args: LSArgs, stop: StopFlag) -> ToolResult:
        ignored = _ignore_matchers(args.ignore)
        target = workspace.resolve(args.path or ".")
        fd = workspace.open_directory(target)
        counted = [0]

        def entries(it: Iterator[os.DirEntry[str]]) -> Iterator[str]:
            for entry in it:
                if stop.is_set():
                    return
                if ignored:
                    name = valid_text(entry.name)
                    if any(matcher.fullmatch(name) for matcher in ignored):
                        continue
                counted[0] += 1
                yield entry.name + _suffix(entry)

        try:
            with os.scandir(fd) as it:
                # nsmallest keeps a bounded heap: memory stays O(max_entries).
                names = heapq.nsmallest(self.max_entries, entries(it))
        finally:
            os.close(fd)
        total = counted[0]
        header = f"{target.display}/" if target.parts else "./"
        if not names:
            return ToolResult.ok(f"{header} is empty.", entries=0)
        lines = [header, *(f"  {name}" for name in names)]
        if total > len(names):
            lines.append(f"[{total - len(names)} more entries not shown]")
        return ToolResult.ok("\n".join(lines), entries=total)


def _suffix(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "@"
        if entry.is_dir(follow_symlinks=False):
            return "/"
    except OSError:
        return ""
    return ""


def _ignore_matchers(patterns: Sequence[str]) -> list[LinearRegex]:
    """The ``ignore`` patterns compiled for this call only (RE2; ``fnmatch`` would cache them).

    ``*``, ``?`` and ``[...]`` match as in ``fnmatch``; ``{`` and ``}`` are literal. A pattern
    that cannot match an entry's name (empty, or holding ``/`` or NUL, or ``..``) is dropped,
    as ``fnmatch`` would never match it either.
    """
    if len(patterns) > _MAX_IGNORE_PATTERNS:
        raise ToolArgumentsError(
            f"LS takes at most {_MAX_IGNORE_PATTERNS} ignore patterns, got {len(patterns)}; "
            "pass fewer, broader patterns (e.g. '*.log' rather than each name)."
        )
    size = sum(len(p) for p in patterns)
    if size > _MAX_IGNORE_CHARS:
        raise ToolArgumentsError(
            f"LS ignore patterns total {size} characters; at most {_MAX_IGNORE_CHARS} are "
            "allowed. Pass fewer or shorter patterns, or list without ignore and use Glob "
            "to select names."
        )
    return [
        compile_glob(valid_text(p), braces=False)
        for p in patterns
        if p and p != ".." and "/" not in p and "\x00" not in p
    ]
