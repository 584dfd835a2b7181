"""The ``Write`` tool: create or replace a file inside the workspace, atomically."""

from __future__ import annotations

from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["WriteArgs", "WriteTool", "encode_text"]


class WriteArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Write tool."""

    file_path: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=4096,
            description="Path of the file, relative to the workspace root or absolute inside it.",
        ),
    ]
    content: Annotated[str, msgspec.Meta(description="The complete new content of the file.")]


def encode_text(text: str) -> bytes:
    """``text`` as UTF-8; lone surrogates (possible from JSON escapes) are refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            "The text contains invalid characters (unpaired UTF-16 surrogates); "
            "it cannot be written as UTF-8."
        ) from None


@final
@attrs.frozen
class WriteTool:
    """Writes a whole file; parent directories are created as needed."""

    name = "Write"
    description = (
        "Write a file in the workspace, replacing it if it exists (parent directories are "
        "created). Prefer Edit for changing part of an existing file."
    )
    arguments_type = WriteArgs
    flags = ToolFlags(read_only=False, background_safe=True, needs_approval=True)

    async def call(self, args: WriteArgs, ctx: ToolContext, /) -> ToolResult:
        """Write the file in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._write(workspace, args, stop))

    @staticmethod
    def _write(workspace: Workspace, args: WriteArgs, stop: StopFlag) -> ToolResult:
        data = encode_text(args.content)
        target = workspace.resolve(args.file_path)
        created = workspace.replace_file(target, data)
        verb = "Created" if created else "Wrote"
        return ToolResult.ok(
            f"{verb} '{target.display}' ({len(data)} bytes).", created=created, bytes=len(data)
        )
