"""Tool names as definitions write them, and what the loader says about each.

Tools are plain strings here (``subagents.agents`` does not import the tools
layer). A name nobody knows is kept and reported, never dropped: the user may
register a tool of that name later, and dropping it silently would change what
the agent is allowed to do.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from types import MappingProxyType

import attrs

__all__ = [
    "IMPLEMENTED_TOOLS",
    "KNOWN_TOOLS",
    "NOT_IMPLEMENTED_REASONS",
    "LIFECYCLE_TOOLS",
    "ToolNameKind",
    "classify_tool",
    "split_tool_list",
]

#: Claude Code's tool names, current and older, as its tools reference lists them
#: (https://code.claude.com/docs/en/tools-reference: "the exact strings you use
#: in permission rules, subagent tool lists, and hook matchers"), then the
#: lifecycle tools of subagents. A definition may list any of them without an
#: "unknown tool" warning; those subagents does not implement
#: (:data:`IMPLEMENTED_TOOLS`) get a note that names them instead.
KNOWN_TOOLS: tuple[str, ...] = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "LS",
    "Bash",
    "BashOutput",
    "KillShell",
    "PowerShell",
    "Monitor",
    "LSP",
    "WebFetch",
    "WebSearch",
    "NotebookEdit",
    "Task",
    "Agent",
    "TaskOutput",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskStop",
    "SendMessage",
    "TeamCreate",
    "TeamDelete",
    "TodoWrite",
    "TodoRead",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "EnterWorktree",
    "ExitWorktree",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "ToolSearch",
    "Skill",
    "SlashCommand",
    "spawn_agent",
    "send_input",
    "wait",
    "close_agent",
    "resume_agent",
    "spawn_agents_on_csv",
    "report_agent_job_result",
    "complete_task",
)

#: The names of :data:`KNOWN_TOOLS` that subagents ships a tool for (the tools
#: layer's built-ins, its lifecycle tools, the teams layer's task tools and
#: ``complete_task``; a test keeps this list and those layers in step).
IMPLEMENTED_TOOLS: tuple[str, ...] = (
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
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "Task",
    "Agent",
    "TaskOutput",
    "SendMessage",
    "TeamCreate",
    "TeamDelete",
    "TaskCreate",
    "TaskList",
    "TaskGet",
    "TaskUpdate",
    "spawn_agent",
    "send_input",
    "wait",
    "close_agent",
    "resume_agent",
    "spawn_agents_on_csv",
    "report_agent_job_result",
    "complete_task",
)

#: Tools that spawn or drive other agents (Claude Code's and ours).
LIFECYCLE_TOOLS: tuple[str, ...] = (
    "Task",
    "Agent",
    "TaskOutput",
    "SendMessage",
    "TeamCreate",
    "TeamDelete",
    "spawn_agent",
    "send_input",
    "wait",
    "close_agent",
    "resume_agent",
    "spawn_agents_on_csv",
)

_KNOWN = frozenset(KNOWN_TOOLS)
_IMPLEMENTED = frozenset(IMPLEMENTED_TOOLS)
# Claude Code lets ``tools`` restrict which agents may be spawned: ``Agent(a, b)``.
_SCOPED = re.compile(r"^(?P<tool>[A-Za-z_][\w-]*)\((?P<args>[^()]*)\)$")


@attrs.frozen
class ToolNameKind:
    """What a tool name is: ``known``, ``wildcard``, ``pattern``, ``mcp`` or ``unknown``.

    A ``known`` name is one of Claude Code's or ours; ``implemented`` is false
    for a Claude Code tool that subagents does not provide (``TaskStop``,
    ``WebFetch``...), which an agent listing it will not have.
    """

    kind: str
    #: For ``mcp`` names, the server that must provide the tool.
    server: str | None = None
    implemented: bool = True


def classify_tool(name: str) -> ToolNameKind:
    """Say what kind of tool name ``name`` is, without any registry."""
    if name == "*":
        return ToolNameKind("wildcard")
    if name in _KNOWN:
        return ToolNameKind("known", implemented=name in _IMPLEMENTED)
    if name.startswith("mcp__"):
        server = name[len("mcp__") :].split("__", 1)[0]
        if server:
            return ToolNameKind("mcp", server=server)
    scoped = _SCOPED.match(name)
    if scoped and scoped.group("tool") in _KNOWN:
        tool = scoped.group("tool")
        return ToolNameKind("known", implemented=tool in _IMPLEMENTED)
    if any(ch in name for ch in "*?["):
        if any(fnmatch.fnmatchcase(tool, name) for tool in KNOWN_TOOLS):
            return ToolNameKind("pattern")
        return ToolNameKind("unknown")
    return ToolNameKind("unknown")


def split_tool_list(text: str) -> tuple[str, ...]:
    """Split Claude Code's comma string (``"Read, Grep, Agent(a, b)"``) into names.

    Commas inside parentheses belong to the name (``Agent(a, b)`` is one tool).
    """
    names: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            names.append(text[start:index])
            start = index + 1
    names.append(text[start:])
    return tuple(stripped for stripped in (n.strip() for n in names) if stripped)


#: Why subagents leaves out a Claude Code tool an agent file may list, said in
#: its ``not-implemented-tool`` note. Counted in the real corpora
#: (tests/fixtures/corpus: voltagent, wshobson): WebFetch and WebSearch are
#: listed by 39 and 37 agents and are implemented; TaskCreate/TaskGet/TaskList/
#: TaskUpdate by 4 (one plugin, agent-teams; implemented over a team's task
#: board), NotebookEdit, MultiEdit and TodoWrite by none (MultiEdit and
#: TodoWrite are cheap, so they exist anyway).
NOT_IMPLEMENTED_REASONS: Mapping[str, str] = MappingProxyType(
    {
        "NotebookEdit": "Jupyter notebooks are JSON with outputs and cell ids; Edit or Write "
        "change the .ipynb file as text",
    }
)
