"""Helpers shared by the runtime tests: fake tools, tool selections, definitions and specs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec
import trio

from subagents.agents import AgentDefinition, OutputSpec, RunLimits
from subagents.runtime import (
    AgentSpec,
    Conversation,
    Limits,
    Message,
    Origin,
    Provider,
    Reply,
    ReplyPolicy,
    ScriptedProvider,
)
from subagents.tools import (
    ToolContext,
    ToolFlags,
    ToolPolicy,
    ToolResult,
    ToolSelection,
    filter_tools,
)


class NoteArgs(msgspec.Struct, forbid_unknown_fields=True):
    """Arguments of the fake tools: a text to echo and seconds to take."""

    text: str = ""
    seconds: float = 0.0


@attrs.define
class SlowTool:
    """A tool that takes ``seconds`` (on the Trio clock) and logs when it ran."""

    name: str
    read_only: bool = True
    concurrent: bool = False
    description: str = "A fake tool for runtime tests."
    arguments_type: type[msgspec.Struct] = NoteArgs
    log: list[tuple[str, str, float]] = attrs.field(factory=list)
    fail: bool = False

    @property
    def flags(self) -> ToolFlags:
        return ToolFlags(read_only=self.read_only, background_safe=True, concurrent=self.concurrent)

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        self.log.append(("start", self.name, trio.current_time()))
        await trio.sleep(args.seconds)
        self.log.append(("end", self.name, trio.current_time()))
        if self.fail:
            raise RuntimeError("the fake tool broke")
        return ToolResult.ok(f"{self.name}: {args.text}")


def selection(*tools: Any) -> ToolSelection:
    """The tools as a selection for a trusted, top-level-like agent."""
    return filter_tools(tools, ToolPolicy(source="project", depth=1, max_depth=1))


REPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "count": {"type": "integer", "minimum": 0},
    },
    "required": ["summary", "count"],
    "additionalProperties": False,
}


def definition(
    *,
    name: str = "worker",
    output: bool = False,
    max_turns: int | None = None,
    max_time: float | None = None,
    grace: float | None = None,
    **fields: Any,
) -> AgentDefinition:
    """A definition for tests; ``output`` gives it the report schema."""
    return AgentDefinition(
        name=name,
        description="A test agent.",
        system_prompt="You are a test agent in ${cwd}.",
        output=OutputSpec(name="report", description="The report", schema=REPORT_SCHEMA)
        if output
        else None,
        run_limits=RunLimits(
            max_turns=max_turns, max_time_seconds=max_time, grace_period_seconds=grace
        ),
        **fields,
    )


def spec(
    agent: AgentDefinition,
    policy: ReplyPolicy | Sequence[Reply] | Provider,
    *,
    tools: ToolSelection | None = None,
    latency: float = 0.0,
    workspace: Path | None = None,
    **options: Any,
) -> AgentSpec:
    """An agent spec running ``agent`` on a scripted provider (or the given provider)."""
    provider: Any = policy
    if not hasattr(policy, "stream"):
        provider = ScriptedProvider(policy, latency=latency)  # type: ignore[arg-type]
    return AgentSpec(
        definition=agent,
        provider=provider,
        model="claude-test",
        system_prompt="system",
        tools=tools,
        limits=Limits.for_definition(agent),
        workspace_root=workspace or Path.cwd(),
        **options,
    )


def task(text: str = "Do the task.") -> Conversation:
    """A conversation holding just a task."""
    return Conversation([Message.user(text, origin=Origin.TASK)])
