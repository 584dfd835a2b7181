"""Which MCP servers an agent is given: the runtime's, or only its definition's ``mcpServers``.

Without ``mcpServers`` an agent is offered the tools of every server the
runtime has (``.mcp.json``, ``[mcp_servers.NAME]``); with it, only the named
configured servers and its inline ones (Claude Code's subagent field). An
inline server is registered once per agent type and shared by the agents of
that type. A project agent's inline server is repository code: in an
untrusted workspace it is not started and is reported as ``not trusted``.
The tools still go through the agent's filter afterwards.
"""

from __future__ import annotations

from subagents.agents import AgentDefinition, AgentSource
from subagents.runtime._services import Services
from subagents.tools import McpServerStatus, McpTool, mcp_server_config

__all__ = ["agent_mcp_tools"]


async def agent_mcp_tools(services: Services, definition: AgentDefinition) -> list[McpTool]:
    """The MCP tools offered to an agent of ``definition``, starting its servers if needed."""
    refs = definition.mcp_servers
    if refs is None:
        return await services.mcp.tools()
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
    return await services.mcp.tools(keys)
