"""The ``Read`` tool: a window of a text file, with line numbers, never the whole file at once."""

from __future__ import annotations

import os
from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.text import clip_line, is_binary
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._config import (
    BINARY_SNIFF_BYTES,
    READ_DEFAULT_LINE_LIMIT,
    READ_MAX_LINE_CHARS,
    READ_MAX_OUTPUT_CHARS,
)
from subagents.tools._context import ToolContext
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["ReadArgs", "ReadTool"]


class ReadArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Read tool."""

    file_path: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=4096,
            description="Path of the file, relative to the workspace root or absolute inside it.",
        ),
    ]
    offset: (
        Annotated[int, msgspec.Meta(ge=0, description="Line number to start reading at (1-based).")]
        | None
    ) = None
    limit: (
        Annotated[int, msgspec.Meta(ge=1, description="How many lines to read at most.")] | None
    ) = None


@final
@attrs.frozen
class ReadTool:
    """Reads a text file as numbered lines, in windows of ``limit`` lines."""

    default_limit: int = READ_DEFAULT_LINE_LIMIT
    max_line_chars: int = READ_MAX_LINE_CHARS
    max_output_chars: int = READ_MAX_OUTPUT_CHARS

    name = "Read"
    description = (
        "Read a text file from the workspace. Returns lines numbered like `cat -n` "
        f"(at most {READ_DEFAULT_LINE_LIMIT} lines by default; use offset and limit to page "
        f"through long files). Lines longer than {READ_MAX_LINE_CHARS} characters are cut. "
        "Binary files are reported, not shown."
    )
    arguments_type = ReadArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: ReadArgs, ctx: ToolContext, /) -> ToolResult:
        """Read the requested window in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._read(workspace, args, stop))

    def _read(self, workspace: Workspace, args: ReadArgs, stop: StopFlag) -> ToolResult:
        target = workspace.resolve(args.file_path)
        fd, st = workspace.open_file(target)
        with os.fdopen(fd, "rb", buffering=64 * 1024) as f:
            head = f.read(BINARY_SNIFF_BYTES)
            if is_binary(head):
                return ToolResult.ok(
                    f"'{target.display}' is a binary file ({st.st_size} bytes); "
                    "it cannot be shown as text.",
                    binary=True,
                )
            if not head:
                return ToolResult.ok(f"'{target.display}' is empty.", lines=0)
            f.seek(0)
            start = max(args.offset or 1, 1)
            limit = args.limit or self.default_limit
            # A line is read in pieces of at most this many bytes, so memory stays bounded.
            piece = self.max_line_chars * 4 + 4
            out: list[str] = []
            used = 0
            lineno = 0
            more = False
            while not stop.is_set():
                raw = f.readline(piece)
                if not raw:
                    break
                cut = len(raw) == piece and not raw.endswith(b"\n")
                while cut and not stop.is_set():
                    rest = f.readline(piece)
                    if not rest or rest.endswith(b"\n"):
                        break
                lineno += 1
                if lineno < start:
                    continue
                if lineno >= start + limit:
                    more = True
                    break
                text = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
                if cut:
                    text = text[: self.max_line_chars] + " ... [line cut]"
                else:
                    text = clip_line(text, self.max_line_chars)
                entry = f"{lineno:>6}\t{text}"
                if used + len(entry) + 1 > self.max_output_chars and out:
                    more = True
                    break
                out.append(entry)
                used += len(entry) + 1
        if not out:
            return ToolResult.error(
                f"'{target.display}' has {lineno} lines; offset {start} is past the end."
            )
        first, last = start, start + len(out) - 1
        if more:
            out.append(
                f"[showing lines {first}-{last}; the file continues: "
                f"pass offset={last + 1} to read more]"
            )
        return ToolResult.ok("\n".join(out), first_line=first, last_line=last, more=more)
