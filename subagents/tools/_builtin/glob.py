"""The ``Glob`` tool: find files by name pattern under a workspace directory."""

from __future__ import annotations

import heapq
import stat
from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.globbing import compile_glob
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._config import GLOB_MAX_RESULTS, VCS_DIRECTORIES
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import UnsupportedFileError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["GlobArgs", "GlobTool"]


class GlobArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Glob tool."""

    pattern: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=4096,
            description=(
                "Glob pattern relative to `path`, e.g. '**/*.py' or 'src/**/*.{ts,tsx}'. "
                "'*' stays within a directory, '**/' spans any number of directories."
            ),
        ),
    ]
    path: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=4096,
                description="Directory to search in (default: the workspace root).",
            ),
        ]
        | None
    ) = None


@final
@attrs.frozen
class GlobTool:
    """Lists regular files whose path matches a glob, newest first."""

    max_results: int = GLOB_MAX_RESULTS

    name = "Glob"
    description = (
        "Find files by glob pattern (e.g. '**/*.md', 'src/**/*.py'). Returns matching file "
        "paths relative to the workspace root, most recently modified first. Symlinks are not "
        "followed; .git, .hg and .svn directories are skipped."
    )
    arguments_type = GlobArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: GlobArgs, ctx: ToolContext, /) -> ToolResult:
        """Walk the directory in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._glob(workspace, args, stop))

    def _glob(self, workspace: Workspace, args: GlobArgs, stop: StopFlag) -> ToolResult:
        matcher = compile_glob(args.pattern)
        base = workspace.resolve(args.path or ".")
        st = workspace.lstat(base)
        if st is None or not _is_dir(st.st_mode):
            raise UnsupportedFileError(f"'{base.display}' is not a directory.")
        # The newest ``max_results`` matches, kept in a bounded heap whose smallest
        # item is the one to drop next: oldest, then last by path.
        newest: list[tuple[float, _Descending]] = []
        total = 0
        prefix = len(base.parts)
        for listing in workspace.walk(base, skip_dirs=VCS_DIRECTORIES):
            if stop.is_set():
                break
            relative_dir = "/".join(listing.parts[prefix:])
            for entry in listing.entries:
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    relative = f"{relative_dir}/{entry.name}" if relative_dir else entry.name
                    if not matcher.fullmatch(relative):
                        continue
                    mtime = entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue
                shown = f"{listing.display}/{entry.name}" if listing.parts else entry.name
                total += 1
                item = (mtime, _Descending(shown))
                if len(newest) < self.max_results:
                    heapq.heappush(newest, item)
                else:
                    heapq.heappushpop(newest, item)
        if total == 0:
            return ToolResult.ok("No files found.", count=0)
        lines = [item.value for _, item in sorted(newest, reverse=True)]
        if total > len(lines):
            lines.append(
                f"[{total - len(lines)} more files not shown; use a narrower pattern or path]"
            )
        return ToolResult.ok("\n".join(lines), count=total)


def _is_dir(mode: int) -> bool:
    return stat.S_ISDIR(mode)


@attrs.frozen(order=False)
class _Descending:
    """A path that sorts in reverse, so ties in mtime list paths in ascending order."""

    value: str

    def __lt__(self, other: _Descending) -> bool:
        return self.value > other.value
