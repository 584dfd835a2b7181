"""The built-in tools, ready to register."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from subagents.tools._bash import BashTool
from subagents.tools._edit import EditTool
from subagents.tools._glob import GlobTool
from subagents.tools._grep import GrepTool
from subagents.tools._ls import LSTool
from subagents.tools._protocol import Tool
from subagents.tools._read import ReadTool
from subagents.tools._registry import ToolRegistry
from subagents.tools._write import WriteTool

__all__ = ["BUILTIN_TOOL_NAMES", "builtin_registry", "builtin_tools"]

BUILTIN_TOOL_NAMES: Final = ("Read", "Write", "Edit", "Glob", "Grep", "LS", "Bash")


def builtin_tools(*, env_passthrough: Collection[str] = ()) -> tuple[Tool, ...]:
    """A fresh instance of every built-in tool, with default limits.

    ``env_passthrough`` names the secret environment variables ``Bash`` still passes on.
    """
    bash = BashTool(env_passthrough=env_passthrough)
    return (ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool(), LSTool(), bash)


def builtin_registry() -> ToolRegistry:
    """A registry holding the built-in tools."""
    return ToolRegistry(builtin_tools())
