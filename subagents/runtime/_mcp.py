"""Which MCP servers a runtime has, and which of them an agent is given.

:func:`runtime_mcp_servers`: the ``[mcp_servers.NAME]`` servers and the
project's ``.mcp.json`` ones; ``.mcp.json`` is repository code, so in an
untrusted workspace its servers are only reported as ``not trusted``.

:func:`definition_mcp_tools`: without ``mcpServers`` an agent is offered the
tools of every server the runtime has; with it, only the named configured
servers and its inline ones (Claude Code's subagent field). An inline server
is registered once per agent type and shared by the agents of that type. A
project agent's inline server is repository code: in an untrusted workspace
it is not started and is reported as ``not trusted``. An agent with at least
one server also gets ``ListMcpResourcesTool`` and ``ReadMcpResourceTool``
over those servers. The tools still go through the agent's filter afterwards.
``subagents tools list`` uses both, so it shows what a run would do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from subagents.agents import AgentDefinition, AgentSource
from subagents.runtime._config.values import RuntimeConfig
from subagents.runtime._services import Services
from subagents.tools import (
    MCP_JSON,
    McpProject,
    McpServerConfig,
    McpServers,
    McpServerStatus,
    Tool,
    mcp_resource_tools,
    mcp_server_config,
)

__all__ = ["agent_mcp_tools", "definition_mcp_tools", "offers_mcp_tools", "runtime_mcp_servers"]


def runtime_mcp_servers(
    config: RuntimeConfig, project: McpProject
) -> tuple[list[McpServerConfig], list[McpServerStatus]]:
    """The servers a runtime may start, and those it only reports (``not trusted``).

    The configured servers first; a trusted ``.mcp.json`` server of the same
    name is the project's (the project file's ``mcp_servers`` are already
    left out by the loader when the workspace is not trusted).
    """
    if config.project is not None and not config.project.trusted:
        untrusted = [
            McpServerStatus(
                server.name,
                server.transport,
                "not trusted",
                f"{MCP_JSON} is repository code; trust the workspace to start it",
            )
            for server in project.servers
        ]
        return list(config.mcp_server_configs()), untrusted
    servers = {server.name: server for server in config.mcp_server_configs()}
    servers.update({server.name: server for server in project.servers})
    return list(servers.values()), []


def offers_mcp_tools(mcp: McpServers, definition: AgentDefinition) -> bool:
    """Whether :func:`definition_mcp_tools` can give an agent of ``definition`` any tool: it
    names servers of its own, or the runtime has servers. Asked first, a spawn that can get
    none skips the chain of awaits that would find none."""
    return definition.mcp_servers is not None or bool(mcp.servers)


async def definition_mcp_tools(
    mcp: McpServers,
    definition: AgentDefinition | None,
    *,
    project_trusted: bool,
    not_configured: Callable[[str], None] | None = None,
) -> list[Tool]:
    """The MCP tools for an agent of ``definition`` (the lead's when ``None``), servers started.

    Its servers' tools, then the two resource tools when it has any server.
    ``not_configured`` is told each server name ``mcpServers`` refers to that
    no configuration defines.
    """
    refs = None if definition is None else definition.mcp_servers
    if definition is None or refs is None:
        shared = [server for key, server in mcp.servers.items() if key not in mcp.private]
        return [*await mcp.tools(), *mcp_resource_tools(shared)]
    untrusted = definition.source is AgentSource.PROJECT and not project_trusted
    keys: list[str] = []
    for ref in refs:
        if ref.config is None:
            if mcp.get(ref.name) is None and not_configured is not None:
                not_configured(ref.name)
            keys.append(ref.name)
            continue
        if untrusted:
            mcp.report(
                McpServerStatus(
                    ref.name,
                    _transport(ref.config),
                    "not trusted",
                    f"agent {definition.name}'s inline server is repository code; "
                    "trust the workspace to start it",
                )
            )
            continue
        try:
            config = mcp_server_config(ref.name, ref.config)
        except (TypeError, ValueError) as exc:
            mcp.report(
                McpServerStatus(
                    ref.name, _transport(ref.config), "failed", f"agent {definition.name}: {exc}"
                )
            )
            continue
        key = f"{definition.name}:{ref.name}"
        mcp.add(key, config)
        keys.append(key)
    servers = [server for key in keys if (server := mcp.get(key)) is not None]
    return [*await mcp.tools(keys), *mcp_resource_tools(servers)]


async def agent_mcp_tools(services: Services, definition: AgentDefinition) -> list[Tool]:
    """The MCP tools offered to an agent of ``definition`` in a run."""
    project = services.config.project

    def not_configured(name: str) -> None:
        services.log.logger().warning(
            "MCP server not configured", agent_type=definition.name, server=name
        )

    return await definition_mcp_tools(
        services.mcp,
        definition,
        project_trusted=project is None or project.trusted,
        not_configured=not_configured,
    )


def _transport(raw: object) -> str:
    """The transport an inline server entry asks for, to show it before it is checked."""
    if isinstance(raw, Mapping) and ("url" in raw or raw.get("type") in ("http", "sse")):
        return "http"
    return "stdio"
