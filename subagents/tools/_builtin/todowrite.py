"""The ``TodoWrite`` tool: the agent's own todo list, replaced whole on each call.

Claude Code's shape (https://code.claude.com/docs/en/tools-reference,
``TodoWrite``: "Creates and manages structured task lists"; each todo has
``content``, ``status`` (``pending``, ``in_progress``, ``completed``) and
``activeForm``). Each call sends the whole list, so the tool keeps no state:
the list lives in the agent's own conversation (its transcript) and in the
call's progress event, and the result shows it back checked and numbered.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, final

import attrs
import msgspec

from subagents.tools._context import ToolContext
from subagents.tools._protocol import ToolFlags, ToolResult

__all__ = ["TodoItem", "TodoWriteArgs", "TodoWriteTool"]

_MARKS: Final = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoItem(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One entry of the todo list."""

    content: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    status: Literal["pending", "in_progress", "completed"]
    activeForm: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    id: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class TodoWriteArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the TodoWrite tool: the whole updated list."""

    todos: Annotated[
        list[TodoItem], msgspec.Meta(max_length=200, description="The updated todo list.")
    ]


@final
@attrs.frozen
class TodoWriteTool:
    """Keeps the agent's todo list: each call replaces it and gets it back."""

    name = "TodoWrite"
    description = (
        "Create and update your todo list for this task: send the whole list each time, each "
        "item with content, status (pending, in_progress or completed) and activeForm (the "
        "item as a present-continuous phrase). Keep one item in_progress while you work."
    )
    arguments_type = TodoWriteArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: TodoWriteArgs, ctx: ToolContext, /) -> ToolResult:
        """Show the list back, numbered, with its counts."""
        todos = args.todos
        if not todos:
            return ToolResult.ok("The todo list is now empty.", todos=0)
        lines = [
            f"{n}. {_MARKS[t.status]} {t.activeForm if t.status == 'in_progress' else t.content}"
            for n, t in enumerate(todos, 1)
        ]
        done = sum(t.status == "completed" for t in todos)
        head = f"Todo list updated ({done} of {len(todos)} completed):"
        return ToolResult.ok("\n".join([head, *lines]), todos=len(todos), completed=done)
