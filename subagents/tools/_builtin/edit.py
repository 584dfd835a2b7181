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
from subagents.tools._workspace import Workspace, WorkspacePath

__all__ = ["EditArgs", "EditOperation", "EditTool", "apply_edit", "read_text_file"]


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


class EditOperation(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One replacement of a MultiEdit call (Edit's arguments without the path)."""

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
        target = workspace.resolve(args.file_path)
        text = read_text_file(workspace, target, self.max_file_bytes, "Edit")
        updated, replaced = apply_edit(text, args, target.display)
        if stop.is_set():
            return ToolResult.error("The edit was cancelled before anything was written.")
        workspace.replace_file(target, encode_text(updated))
        noun = "occurrence" if replaced == 1 else "occurrences"
        return ToolResult.ok(
            f"Replaced {replaced} {noun} in '{target.display}'.", replacements=replaced
        )


def read_text_file(workspace: Workspace, target: WorkspacePath, max_bytes: int, tool: str) -> str:
    """The UTF-8 text of ``target``, or a :class:`ToolError` saying why ``tool`` cannot edit it."""
    fd, st = workspace.open_file(target)
    try:
        if st.st_size > max_bytes:
            raise ToolError(
                f"'{target.display}' is too large to edit ({st.st_size} bytes; "
                f"the limit is {max_bytes}). Use Write or Bash instead."
            )
        data = read_at_most(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ToolError(f"'{target.display}' grew past the edit size limit while being read.")
    if is_binary(data):
        raise ToolError(f"'{target.display}' is a binary file; {tool} only changes text files.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"'{target.display}' is not valid UTF-8 text; {tool} only changes UTF-8 files."
        ) from None


def apply_edit(text: str, edit: EditArgs | EditOperation, display: str) -> tuple[str, int]:
    """``text`` with ``edit`` applied and how many occurrences it replaced, or a ToolError."""
    if edit.old_string == edit.new_string:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    count = text.count(edit.old_string)
    if count == 0:
        raise ToolError(
            f"old_string was not found in '{display}'. Read the file and copy the "
            "text exactly, including whitespace and indentation."
        )
    if count > 1 and not edit.replace_all:
        raise ToolError(
            f"old_string occurs {count} times in '{display}'. Add surrounding "
            "context to make it unique, or set replace_all to true to change every one."
        )
    return text.replace(edit.old_string, edit.new_string), count if edit.replace_all else 1
