"""The ``LS`` tool: list one directory of the workspace."""

from __future__ import annotations

import fnmatch
import heapq
import os
from collections.abc import Iterator
from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._config import LS_MAX_ENTRIES
from subagents.tools._context import ToolContext
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["LSArgs", "LSTool"]


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
        msgspec.Meta(max_length=100, description="Glob patterns of names to leave out."),
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
        target = workspace.resolve(args.path or ".")
        fd = workspace.open_directory(target)
        counted = [0]

        def entries(it: Iterator[os.DirEntry[str]]) -> Iterator[str]:
            for entry in it:
                if stop.is_set():
                    return
                if any(fnmatch.fnmatchcase(entry.name, p) for p in args.ignore):
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
