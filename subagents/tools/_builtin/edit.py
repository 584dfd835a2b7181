"""The ``Edit`` tool: replace an exact string in a file, refusing ambiguous edits."""

from __future__ import annotations

import os
from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.text import is_binary, read_at_most
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._builtin.write import encode_text
from subagents.tools._config import EDIT_MAX_FILE_BYTES
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["EditArgs", "EditTool"]


class EditArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Edit tool."""

    file_path: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=4096,
            description="Path of the file, relative to the workspace root or absolute inside it.",
        ),
    ]
    old_string: Annotated[
        str,
        msgspec.Meta(min_length=1, description="The exact text to replace, whitespace included."),
    ]
    new_string: Annotated[str, msgspec.Meta(description="The text to put in its place.")]
    replace_all: Annotated[
        bool, msgspec.Meta(description="Replace every occurrence instead of exactly one.")
    ] = False


@final
@attrs.frozen
class EditTool:
    """Exact string replacement; the old string must occur once unless ``replace_all``."""

    max_file_bytes: int = EDIT_MAX_FILE_BYTES

    name = "Edit"
    description = (
        "Replace an exact string in a text file of the workspace. old_string must match the "
        "file exactly (indentation included) and occur exactly once, unless replace_all is "
        "true. Read the file first to copy the text precisely."
    )
    arguments_type = EditArgs
    flags = ToolFlags(read_only=False, background_safe=True, needs_approval=True)

    async def call(self, args: EditArgs, ctx: ToolContext, /) -> ToolResult:
        """Edit the file in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._edit(workspace, args, stop))

    def _edit(self, workspace: Workspace, args: EditArgs, stop: StopFlag) -> ToolResult:
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are identical; there is nothing to change.")
        target = workspace.resolve(args.file_path)
        fd, st = workspace.open_file(target)
        try:
            if st.st_size > self.max_file_bytes:
                raise ToolError(
                    f"'{target.display}' is too large to edit ({st.st_size} bytes; "
                    f"the limit is {self.max_file_bytes}). Use Write or Bash instead."
                )
            data = read_at_most(fd, self.max_file_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > self.max_file_bytes:
            raise ToolError(f"'{target.display}' grew past the edit size limit while being read.")
        if is_binary(data):
            raise ToolError(f"'{target.display}' is a binary file; Edit only changes text files.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"'{target.display}' is not valid UTF-8 text; Edit only changes UTF-8 files."
            ) from None
        count = text.count(args.old_string)
        if count == 0:
            raise ToolError(
                f"old_string was not found in '{target.display}'. Read the file and copy the "
                "text exactly, including whitespace and indentation."
            )
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in '{target.display}'. Add surrounding "
                "context to make it unique, or set replace_all to true to change every one."
            )
        if stop.is_set():
            return ToolResult.error("The edit was cancelled before anything was written.")
        updated = text.replace(args.old_string, args.new_string)
        workspace.replace_file(target, encode_text(updated))
        replaced = count if args.replace_all else 1
        noun = "occurrence" if replaced == 1 else "occurrences"
        return ToolResult.ok(
            f"Replaced {replaced} {noun} in '{target.display}'.", replacements=replaced
        )
