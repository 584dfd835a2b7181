"""The ``MultiEdit`` tool: several exact-string edits of one file, all or none.

Claude Code's shape and rule (https://code.claude.com/docs/en/tools-reference,
``MultiEdit``: "Performs multiple edits on a single file atomically"): the
edits apply in order, each to the result of the one before, with Edit's rules
(``old_string`` found, unique unless ``replace_all``); if any one fails,
nothing is written.
"""

from __future__ import annotations

from typing import Annotated, final

import attrs
import msgspec

from subagents.tools._builtin.edit import EditOperation, apply_edit, read_text_file
from subagents.tools._builtin.threads import StopFlag, run_in_thread
from subagents.tools._builtin.write import encode_text
from subagents.tools._config import EDIT_MAX_FILE_BYTES
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._workspace import Workspace

__all__ = ["MultiEditArgs", "MultiEditTool"]


class MultiEditArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the MultiEdit tool."""

    file_path: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=4096,
            description="Path of the file, relative to the workspace root or absolute inside it.",
        ),
    ]
    edits: Annotated[
        list[EditOperation],
        msgspec.Meta(min_length=1, max_length=100, description="The edits, applied in this order."),
    ]


@final
@attrs.frozen
class MultiEditTool:
    """Edit's replacements, several in one call, written only if every one applies."""

    max_file_bytes: int = EDIT_MAX_FILE_BYTES

    name = "MultiEdit"
    description = (
        "Make several exact-string replacements in one text file, in order, each on the "
        "result of the previous one. Each old_string must match exactly and occur once "
        "unless its replace_all is true. If any edit fails, the file is left unchanged."
    )
    arguments_type = MultiEditArgs
    flags = ToolFlags(read_only=False, background_safe=True, needs_approval=True)

    async def call(self, args: MultiEditArgs, ctx: ToolContext, /) -> ToolResult:
        """Edit the file in a worker thread."""
        workspace = ctx.workspace
        return await run_in_thread(lambda stop: self._edit(workspace, args, stop))

    def _edit(self, workspace: Workspace, args: MultiEditArgs, stop: StopFlag) -> ToolResult:
        target = workspace.resolve(args.file_path)
        text = read_text_file(workspace, target, self.max_file_bytes, "MultiEdit")
        total = 0
        for number, edit in enumerate(args.edits, 1):
            try:
                text, replaced = apply_edit(text, edit, target.display)
            except ToolError as exc:
                raise ToolError(
                    f"Edit {number} of {len(args.edits)}: {exc} Nothing was written."
                ) from None
            total += replaced
        if stop.is_set():
            return ToolResult.error("The edits were cancelled before anything was written.")
        workspace.replace_file(target, encode_text(text))
        return ToolResult.ok(
            f"Applied {len(args.edits)} edits ({total} replacements) to '{target.display}'.",
            replacements=total,
        )
