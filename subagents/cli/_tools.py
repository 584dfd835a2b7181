"""The ``subagents tools list`` command: every tool an agent would get, and why not the others.

The toolset is the one a run offers (the built-in tools, then the lifecycle
tools); with ``--agent NAME`` it goes through the same five filter layers as
that agent's, spawned by the lead, and each removed tool carries the filter's
reason. The runtime's configuration holds no MCP servers yet, so ``servers``
is empty. Names and reasons come from repository content, so they are shown
by :func:`~subagents._visible.visible`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import attrs
import msgspec

from subagents._visible import json_safe, visible
from subagents.actors import Status, WaitResult
from subagents.agents import AgentCatalog, UnknownAgentError, discover_agents
from subagents.runtime import ConfigError, RuntimeConfig, load_config
from subagents.teams import BoardSeats, board_tools
from subagents.tools import (
    AgentHost,
    AgentReport,
    SpawnedAgent,
    Tool,
    ToolContext,
    ToolPolicy,
    ToolRow,
    WaitBounds,
    builtin_tools,
    filter_tools,
    lifecycle_tools,
    tool_policy,
    tool_rows,
)

__all__ = ["ServerRow", "ToolsListing", "add_tools_command"]


class ServerRow(msgspec.Struct, frozen=True):
    """One configured MCP server: its transport and whether it started (``error`` says why not)."""

    name: str
    transport: str
    status: str
    error: str | None = None


class ToolsListing(msgspec.Struct, frozen=True):
    """What ``subagents tools list --json`` prints."""

    tools: list[ToolRow]
    servers: list[ServerRow]


_NO_AGENTS = "subagents tools list runs no agent; the listing reads tool names and flags only"


@attrs.frozen
class _ListingHost:
    """The :class:`AgentHost` of the listing: it knows the agent types, and runs nothing.

    The lifecycle tools list the agent types in their descriptions when made;
    the listing reads their names and flags and never calls them, so no
    runtime (with its log file and state folder) is opened for it.
    """

    catalog: AgentCatalog

    @property
    def wait_bounds(self) -> WaitBounds:
        return WaitBounds()

    def agent_types(self) -> Sequence[tuple[str, str]]:
        return [(d.name, d.description) for d in self.catalog]

    async def spawn(
        self,
        caller: ToolContext,
        *,
        agent_type: str | None,
        prompt: str,
        description: str | None = None,
        model: str | None = None,
        fork_context: bool | None = None,
        background: bool = False,
    ) -> SpawnedAgent:
        raise RuntimeError(_NO_AGENTS)

    async def run_to_completion(
        self, caller: ToolContext, agent_id: str, *, timeout: float
    ) -> AgentReport:
        raise RuntimeError(_NO_AGENTS)

    async def send_input(
        self, caller: ToolContext, agent_id: str, message: str, *, interrupt: bool = False
    ) -> Status:
        raise RuntimeError(_NO_AGENTS)

    async def wait(
        self, caller: ToolContext, agent_ids: Sequence[str], *, timeout: float
    ) -> WaitResult:
        raise RuntimeError(_NO_AGENTS)

    async def close(self, caller: ToolContext, agent_id: str) -> Status:
        raise RuntimeError(_NO_AGENTS)

    async def resume(
        self, caller: ToolContext, agent_id: str, message: str | None = None
    ) -> Status:
        raise RuntimeError(_NO_AGENTS)

    async def report(
        self, caller: ToolContext, agent_id: str, *, block: bool, timeout: float
    ) -> AgentReport:
        raise RuntimeError(_NO_AGENTS)

    def explain_not_found(self, caller: ToolContext, agent_id: str) -> str | None:
        return None


def add_tools_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``tools`` (with ``list``) on ``subparsers``."""
    raw = argparse.RawDescriptionHelpFormatter
    tools = subparsers.add_parser(
        "tools",
        help="list the tools an agent would get",
        description="The tools a run offers its agents, and what the filter does with them.",
        epilog="examples:\n  subagents tools list\n  subagents tools list --agent reviewer --json",
        formatter_class=raw,
    )
    commands = tools.add_subparsers(dest="tools_command", metavar="COMMAND", required=True)
    listing = commands.add_parser(
        "list",
        help="every tool, its source and flags, and why the filter removes any",
        description="Every tool a run offers, with its source (builtin, lifecycle, python, "
        "mcp:<server>, server),\nwhether it is read-only or needs approval; with --agent, "
        "the filter's reason for each tool\nthat agent (spawned by the lead) would not get.",
        epilog=(
            "examples:\n"
            "  subagents tools list\n"
            "  subagents tools list --agent Explore\n"
            "  subagents tools list --agent reviewer --json --cwd ~/code/app"
        ),
        formatter_class=raw,
    )
    listing.add_argument("--agent", metavar="NAME", help="filter for this agent type")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.add_argument(
        "--cwd", type=Path, default=None, metavar="DIR", help="project directory (default: .)"
    )
    listing.add_argument(
        "--home", type=Path, default=None, metavar="DIR", help="home directory (default: ~)"
    )
    listing.add_argument(
        "--agents",
        dest="agents_json",
        default=None,
        metavar="JSON",
        help="agents given on the command line, as for `subagents run --agents`",
    )
    listing.set_defaults(func=_cmd_list)


def offered_tools(config: RuntimeConfig, catalog: AgentCatalog) -> tuple[Tool, ...]:
    """The parent toolset of a run, in the order ``open_runtime`` builds it."""
    host: AgentHost = _ListingHost(catalog)
    return (
        *builtin_tools(env_passthrough=config.env_passthrough),
        *lifecycle_tools(host),
        *board_tools(BoardSeats()),
    )


def _listing(args: argparse.Namespace) -> ToolsListing:
    cwd = args.cwd or Path.cwd()
    config = load_config(cwd=cwd, home=args.home)
    catalog = discover_agents(cwd=cwd, home=args.home, agents_json=args.agents_json)
    tools = offered_tools(config, catalog)
    trust = config.trust_policy()
    if args.agent is None:
        # The lead's view: depth 0, every offered tool, no definition to narrow it.
        policy = ToolPolicy(depth=0, max_depth=config.limits.max_depth)
    else:
        definition = catalog.get(args.agent)
        policy = tool_policy(definition, depth=1, max_depth=config.limits.max_depth)
    selection = filter_tools(tools, policy, trust)
    return ToolsListing(tools=tool_rows(selection, tools), servers=[])


def _cmd_list(args: argparse.Namespace) -> int:
    try:
        listing = _listing(args)
    except (ConfigError, UnknownAgentError) as exc:
        print(f"subagents tools list: {visible(str(exc))}", file=sys.stderr)
        return 1
    out = sys.stdout
    if args.json:
        out.write(json_safe(msgspec.json.encode(listing).decode("utf-8")))
        out.write("\n")
        return 0
    _print_table(listing, out)
    return 0


def _yes(flag: bool) -> str:
    return "yes" if flag else "-"


def _print_table(listing: ToolsListing, out: TextIO) -> None:
    rows = [["NAME", "SOURCE", "READ-ONLY", "APPROVAL", "GIVEN"]]
    rows.extend(
        [
            tool.name,
            tool.source,
            _yes(tool.read_only),
            _yes(tool.needs_approval),
            "yes" if tool.reason is None else f"no: {tool.reason}",
        ]
        for tool in listing.tools
    )
    cells = [[visible(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    for cell_row in cells:
        head = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cell_row[:-1]))
        print(f"{head}  {cell_row[-1]}".rstrip(), file=out)
    given = sum(1 for tool in listing.tools if tool.reason is None)
    print(f"\n{given} of {len(listing.tools)} tools given.", file=out)
    if listing.servers:
        print("\nMCP servers:", file=out)
        for server in listing.servers:
            error = f" ({visible(server.error)})" if server.error else ""
            print(f"  {visible(server.name)}: {server.transport}, {server.status}{error}", file=out)
    else:
        print("No MCP servers are configured.", file=out)
