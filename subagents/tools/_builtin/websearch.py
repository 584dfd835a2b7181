"""The ``WebSearch`` tool where no provider runs it: a clear tool error, not a missing tool.

Claude Code's ``WebSearch`` (https://code.claude.com/docs/en/tools-reference)
is a search the model provider runs. With the Anthropic provider the request
replaces this tool's spec with the API's server-side ``web_search`` tool, so
the API searches and this tool is never called; with any other provider there
is no search engine to ask, and the model is told so and what to do instead.
"""

from __future__ import annotations

from typing import Annotated, Final, final

import attrs
import msgspec

from subagents.tools._context import ToolContext
from subagents.tools._protocol import ToolFlags, ToolResult

__all__ = ["NO_SEARCH_PROVIDER", "WebSearchArgs", "WebSearchTool"]

#: The tool error a local WebSearch call gets.
NO_SEARCH_PROVIDER: Final = (
    "WebSearch is run by the model provider (the Anthropic API's server-side web search), "
    "and this agent's provider does not run it: nothing was searched. Use WebFetch on a "
    "URL you know instead, or run the agent on the Anthropic provider."
)


class WebSearchArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the WebSearch tool (Claude Code's shape)."""

    query: Annotated[
        str, msgspec.Meta(min_length=2, max_length=1000, description="The search query.")
    ]
    allowed_domains: list[Annotated[str, msgspec.Meta(max_length=253)]] | None = None
    blocked_domains: list[Annotated[str, msgspec.Meta(max_length=253)]] | None = None


@final
@attrs.frozen
class WebSearchTool:
    """Searches the web where the provider runs it; elsewhere a tool error that says so."""

    name = "WebSearch"
    description = (
        "Search the web and get results with their URLs. Runs only where the model provider "
        "searches (the Anthropic API); elsewhere it answers with an error."
    )
    arguments_type = WebSearchArgs
    flags = ToolFlags(read_only=True, background_safe=True, needs_approval=False)

    async def call(self, args: WebSearchArgs, ctx: ToolContext, /) -> ToolResult:
        """Refuse: no provider ran this search server-side."""
        return ToolResult.error(NO_SEARCH_PROVIDER)
