"""Fork context: a child that starts from its parent's conversation.

The child gets the parent's messages with every tool use that has no result
removed (the parent is usually in the middle of the very call that spawns the
child), the text of those messages kept, then a boundary message saying where
the parent's context ends, then its own task. Thinking blocks are left out:
they are the parent's private reasoning, and their signatures belong to the
parent's context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from subagents.runtime._messages import (
    Block,
    Message,
    Origin,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = ["FORK_BOUNDARY", "fork_context", "fork_messages"]

#: The boundary message between the parent's context and the child's task.
FORK_BOUNDARY: Final = """\
### FORKING CONVERSATION CONTEXT ###
### ENTERING SUB-AGENT ROUTINE ###
Entered sub-agent context

PLEASE NOTE:
- The messages above this point are from the main thread prior to sub-agent execution.
- Context messages may include tool_use blocks for tools not available in sub-agent context.
- Only complete the specific sub-agent task you have been assigned below."""


def fork_messages(messages: Sequence[Message]) -> list[Message]:
    """The parent's ``messages`` without unresolved tool uses and thinking.

    A ``tool_use`` block is kept only if a ``tool_result`` with its id follows
    somewhere; a message left with no blocks is dropped. Tool results whose
    call is not in the messages are dropped too, so the child never sees half
    of a call.
    """
    used: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        for block in message.content:
            if type(block) is ToolUseBlock:
                used.add(block.id)
            elif type(block) is ToolResultBlock:
                answered.add(block.tool_use_id)
    resolved = used & answered
    forked: list[Message] = []
    for message in messages:
        kept = tuple(_keep(message.content, resolved))
        if not kept:
            continue
        if len(kept) == len(message.content):
            forked.append(message)
        else:
            forked.append(Message(message.role, kept, message.origin))
    return forked


def _keep(blocks: Iterable[Block], resolved: set[str]) -> Iterable[Block]:
    for block in blocks:
        if isinstance(block, ToolUseBlock):
            if block.id in resolved:
                yield block
        elif isinstance(block, ToolResultBlock):
            if block.tool_use_id in resolved:
                yield block
        elif not isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            yield block


def fork_context(messages: Sequence[Message]) -> list[Message]:
    """:func:`fork_messages` followed by the :data:`FORK_BOUNDARY` message."""
    forked = fork_messages(messages)
    forked.append(Message.user(FORK_BOUNDARY, origin=Origin.FORK_BOUNDARY))
    return forked
