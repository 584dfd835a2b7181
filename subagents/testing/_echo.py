"""The benchmarks' workload: ``EchoTool``, and the agent type that calls it.

``EchoTool`` is a read-only tool that answers at once: it gives a scripted agent a
real tool call to make (argument decoding, filtering, dispatch, the result in the
transcript) whose own cost is nil, so what is measured is the loop's cost, not the
tool's. :data:`ECHO_WORKER` calls it nine times, then ``complete_task``: the
project that defines it and the provider that plays it are made here once, for
every benchmark script. Public, so a Ray worker can unpickle them by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, final

import msgspec

from subagents.runtime import COMPLETE_TASK, ScriptedProvider
from subagents.testing._policies import tool_loop
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


#: The benchmarks' agent type: nine ``Echo`` calls, then ``complete_task`` (10 turns).
ECHO_WORKER: Final = "echo-worker"
#: Its turns: what a benchmark's ideal time is counted in.
ECHO_WORKER_TURNS: Final = 10


def echo_worker_provider(
    *, latency: float = 0.0, turns: int = ECHO_WORKER_TURNS
) -> ScriptedProvider:
    """A provider that plays :data:`ECHO_WORKER`'s run, each model call ``latency`` seconds.

    ``turns`` (at least 1) shortens or lengthens the run: ``turns - 1`` ``Echo`` calls,
    then ``complete_task``, so a benchmark can tell what an agent costs once from
    what each turn costs.
    """
    if turns < 1:
        raise ValueError(f"an echo worker's run has at least 1 turn (got {turns})")
    policy = tool_loop("Echo", {"text": "ping"}, turns=turns - 1, final="done", complete=True)
    return ScriptedProvider(policy, latency=latency)


def echo_worker_project(root: Path) -> tuple[Path, Path, Path]:
    """``root/project`` with :data:`ECHO_WORKER` in its ``.claude/agents``, and an empty
    ``root/home`` and ``root/state``: (project, home, state)."""
    project, home, state = root / "project", root / "home", root / "state"
    agents_dir = project / ".claude" / "agents"
    agents_dir.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    (project / ".git").mkdir(exist_ok=True)
    (agents_dir / f"{ECHO_WORKER}.md").write_text(
        f"---\nname: {ECHO_WORKER}\ndescription: Calls Echo nine times, then complete_task.\n"
        f"tools: Echo, {COMPLETE_TASK}\n---\n\nYou are a benchmark agent.\n"
    )
    return project, home, state
