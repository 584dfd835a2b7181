"""The built-in tools: ``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``Glob``, ``Grep``, ``LS``,
``Bash``, ``WebFetch``, ``WebSearch`` (a tool error unless the provider runs it) and
``TodoWrite``.

One module per tool, plus what only they use: glob patterns (:mod:`.globbing`),
the linear-time regex engine (:mod:`.regex`), text helpers (:mod:`.text`) and
the worker threads that stop when the caller is cancelled (:mod:`.threads`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from subagents.tools._builtin.bash import BashArgs, BashTool, CommandOutcome, run_command
from subagents.tools._builtin.edit import EditArgs, EditTool
from subagents.tools._builtin.glob import GlobArgs, GlobTool
from subagents.tools._builtin.grep import GrepArgs, GrepTool
from subagents.tools._builtin.ls import LSArgs, LSTool
from subagents.tools._builtin.multiedit import MultiEditArgs, MultiEditTool
from subagents.tools._builtin.read import ReadArgs, ReadTool
from subagents.tools._builtin.todowrite import TodoItem, TodoWriteArgs, TodoWriteTool
from subagents.tools._builtin.webfetch import (
    WEB_DATA_NOTE,
    WebFetchArgs,
    WebFetchTool,
    format_web_content,
)
from subagents.tools._builtin.websearch import NO_SEARCH_PROVIDER, WebSearchArgs, WebSearchTool
from subagents.tools._builtin.write import WriteArgs, WriteTool
from subagents.tools._protocol import Tool
from subagents.tools._registry import ToolRegistry

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "NO_SEARCH_PROVIDER",
    "WEB_DATA_NOTE",
    "BashArgs",
    "BashTool",
    "CommandOutcome",
    "EditArgs",
    "EditTool",
    "GlobArgs",
    "GlobTool",
    "GrepArgs",
    "GrepTool",
    "LSArgs",
    "LSTool",
    "MultiEditArgs",
    "MultiEditTool",
    "ReadArgs",
    "ReadTool",
    "TodoItem",
    "TodoWriteArgs",
    "TodoWriteTool",
    "WebFetchArgs",
    "WebFetchTool",
    "WebSearchArgs",
    "WebSearchTool",
    "WriteArgs",
    "WriteTool",
    "builtin_registry",
    "builtin_tools",
    "format_web_content",
    "run_command",
]

BUILTIN_TOOL_NAMES: Final = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "Bash",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
)


def builtin_tools(
    *, env_passthrough: Collection[str] = (), allow_private_addresses: bool = False
) -> tuple[Tool, ...]:
    """A fresh instance of every built-in tool, with default limits.

    ``env_passthrough`` names the secret environment variables ``Bash`` still passes on;
    ``allow_private_addresses`` lets ``WebFetch`` reach non-global addresses.
    """
    bash = BashTool(env_passthrough=env_passthrough)
    web = WebFetchTool(allow_private_addresses=allow_private_addresses)
    files = (ReadTool(), WriteTool(), EditTool(), MultiEditTool(), GlobTool(), GrepTool(), LSTool())
    return (*files, bash, web, WebSearchTool(), TodoWriteTool())


def builtin_registry() -> ToolRegistry:
    """A registry holding the built-in tools."""
    return ToolRegistry(builtin_tools())
