"""Healthy siblings for the fault tests: two agents that must finish untouched beside a faulty one.

Each sibling makes one ``Note`` call that takes ``seconds``, then answers with
its task; :func:`check_healthy` checks its status, result, conversation and
transcript, so a fault that leaks out of the faulty agent shows there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    ModelRequest,
    Origin,
    Reply,
    Runtime,
    ScriptedProvider,
    TerminateReason,
    load_transcript,
)
from tests.runtime.world import World, tool_results

HEALTHY_PROMPTS = ("Count the apples.", "Count the pears.")


def healthy_policy(seconds: float = 2.0) -> Callable[[ModelRequest], Reply]:
    """A sibling: one Note call that takes ``seconds``, then a final message naming its task."""

    def policy(request: ModelRequest) -> Reply:
        task = request.messages[0].text
        if request.turn == 0:
            return testing.call("Note", "Noting.", text=task, seconds=seconds)
        return testing.say(f"Done: {task}")

    return policy


def scripted(
    faulty: Callable[[ModelRequest], Reply] | Sequence[Reply], *, seconds: float = 2.0
) -> ScriptedProvider:
    """The provider: the siblings' policy, and ``faulty`` for the agent type ``faulty``."""
    return ScriptedProvider(policies={"healthy": healthy_policy(seconds), "faulty": faulty})


def make_world(root: Path, tools: str = "Note", **faulty_fields: Any) -> World:
    """A project with the ``healthy`` type and a ``faulty`` one with ``tools`` and fields."""
    world = World(root)
    world.agent("healthy", tools="Note")
    world.agent("faulty", tools=tools, **faulty_fields)
    return world


async def spawn_siblings(rt: Runtime) -> list[str]:
    return [(await rt.spawn("healthy", prompt)).agent_id for prompt in HEALTHY_PROMPTS]


def check_healthy(rt: Runtime, agents: Sequence[str]) -> None:
    """Each sibling completed its two turns, with its whole conversation on disk."""
    for agent, prompt in zip(agents, HEALTHY_PROMPTS, strict=True):
        assert rt.status(agent) == Completed(f"Done: {prompt}")
        result = rt.result(agent)
        assert result is not None
        assert (result.terminate_reason, result.turns, result.tool_uses, result.error) == (
            TerminateReason.GOAL,
            2,
            1,
            None,
        )
        messages = list(rt.conversation(agent))
        assert [m.origin for m in messages] == [
            Origin.TASK,
            Origin.MODEL,
            Origin.TOOL_RESULTS,
            Origin.MODEL,
        ]
        (noted,) = tool_results(messages)
        assert (noted.content, noted.is_error) == (f"Note: {prompt}", False)
        path = rt.transcript_path(agent)
        assert path is not None
        transcript = load_transcript(path)
        assert transcript.problems == ()
        assert list(transcript.conversation()) == messages
        assert [(r.status, r.terminate_reason) for r in transcript.results] == [
            ("completed", TerminateReason.GOAL)
        ]
