"""Which MCP servers an agent is given: the runtime's, or only its definition's ``mcpServers``.

Without ``mcpServers`` an agent is offered the tools of every server the
runtime has (``.mcp.json``, ``[mcp_servers.NAME]``); with it, only the named
configured servers and its inline ones (Claude Code's subagent field). An
inline server is registered once per agent type and shared by the agents of
that type. A project agent's inline server is repository code: in an
untrusted workspace it is not started and is reported as ``not trusted``.
An agent with at least one server also gets ``ListMcpResourcesTool`` and
``ReadMcpResourceTool`` over those servers. The tools still go through the
agent's filter afterwards.
"""

from __future__ import annotations

from subagents.agents import AgentDefinition, AgentSource
from subagents.runtime._services import Services
from subagents.tools import McpServerStatus, Tool, mcp_resource_tools, mcp_server_config

__all__ = ["agent_mcp_tools"]


async def agent_mcp_tools(services: Services, definition: AgentDefinition) -> list[Tool]:
    """The MCP tools offered to an agent of ``definition``, starting its servers if needed.

    Its servers' tools, then the two resource tools when it has any server.
    """
    mcp = services.mcp
    refs = definition.mcp_servers
    if refs is None:
        shared = [server for key, server in mcp.servers.items() if key not in mcp.private]
        return [*await mcp.tools(), *mcp_resource_tools(shared)]
    project = services.config.project
    untrusted = (
        definition.source is AgentSource.PROJECT and project is not None and not project.trusted
    )
    keys: list[str] = []
    for ref in refs:
        if ref.config is None:
            if services.mcp.get(ref.name) is None:
                services.log.logger().warning(
                    "MCP server not configured", agent_type=definition.name, server=ref.name
                )
            keys.append(ref.name)
            continue
        if untrusted:
            services.mcp.report(
                McpServerStatus(
                    ref.name,
                    "stdio",
                    "not trusted",
                    f"agent {definition.name}'s inline server is repository code; "
                    "trust the workspace to start it",
                )
            )
            continue
        try:
            config = mcp_server_config(ref.name, ref.config)
        except (TypeError, ValueError) as exc:
            services.mcp.report(
                McpServerStatus(ref.name, "stdio", "failed", f"agent {definition.name}: {exc}")
            )
            continue
        key = f"{definition.name}:{ref.name}"
        services.mcp.add(key, config)
        keys.append(key)
    servers = [server for key in keys if (server := mcp.get(key)) is not None]
    return [*await mcp.tools(keys), *mcp_resource_tools(servers)]
