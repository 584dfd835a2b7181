"""``EchoTool``: a read-only tool that answers at once, for tests and benchmarks.

It gives a scripted agent a real tool call to make (argument decoding, filtering,
dispatch, the result in the transcript) whose own cost is nil, so what is measured
is the loop's cost, not the tool's. Public, so a Ray worker can unpickle it by name.
"""

from __future__ import annotations

from typing import final

import msgspec

from subagents.tools import ToolContext, ToolFlags, ToolResult


class EchoArgs(msgspec.Struct, forbid_unknown_fields=True):
    """``EchoTool``'s arguments: the text to say back."""

    text: str = ""


@final
class EchoTool:
    """A read-only tool named ``Echo`` that returns its ``text``."""

    name = "Echo"
    description = "Echo the text back."
    arguments_type = EchoArgs
    flags = ToolFlags(read_only=True, background_safe=True)

    async def call(self, args: EchoArgs, ctx: ToolContext, /) -> ToolResult:
        return ToolResult(args.text)
