"""The peer workload on AutoGen AgentChat (``autogen-agentchat`` over ``autogen-core``).

The model is AutoGen's extension point for providers, a custom
``ChatCompletionClient``: ``create`` sleeps ``latency`` seconds
(``asyncio.sleep``), counts the ``FunctionExecutionResult`` of the messages it
is given and answers a ``CreateResult`` with one ``FunctionCall`` of ``add``
while there are fewer than ``TURNS``, then the final text. ``add`` is a plain
async function (AgentChat wraps it in a ``FunctionTool``). Each agent is its
own ``AssistantAgent`` (it keeps its conversation in its model context) with
``max_tool_iterations=TURNS + 1``, so one ``agent.run(task=...)`` makes every
turn; all of them in one ``asyncio.gather``, the client shared. No
OpenTelemetry SDK is configured, so AutoGen's spans are the API's no-ops.

    python bench/peers/peer_autogen.py --agents 100 --latency 0.1
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelCapabilities,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import FINAL, TURNS, check, main

CALLS = 0
USAGE = RequestUsage(prompt_tokens=0, completion_tokens=0)


async def add(a: int, b: int) -> int:
    """Add two integers."""
    global CALLS
    CALLS += 1
    return a + b


class FakeClient(ChatCompletionClient):
    """Calls ``add`` until the messages hold ``TURNS`` tool results, then answers."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.ids = 0

    async def create(self, messages: Sequence[LLMMessage], **kwargs: Any) -> CreateResult:
        await asyncio.sleep(self.latency)
        done = sum(
            len(m.content) for m in messages if isinstance(m, FunctionExecutionResultMessage)
        )
        if done < TURNS:
            self.ids += 1
            call = FunctionCall(id=f"call_{self.ids}", arguments='{"a": 1, "b": 2}', name="add")
            return CreateResult(
                finish_reason="function_calls", content=[call], usage=USAGE, cached=False
            )
        return CreateResult(finish_reason="stop", content=FINAL, usage=USAGE, cached=False)

    def create_stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("the bench does not stream")

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return USAGE

    def total_usage(self) -> RequestUsage:
        return USAGE

    def count_tokens(self, messages: Sequence[LLMMessage], **kwargs: Any) -> int:
        return 0

    def remaining_tokens(self, messages: Sequence[LLMMessage], **kwargs: Any) -> int:
        return 1_000_000

    @property
    def capabilities(self) -> ModelCapabilities:  # type: ignore[override]
        return {"vision": False, "function_calling": True, "json_output": False}  # type: ignore[typeddict-item]

    @property
    def model_info(self) -> ModelInfo:
        return {
            "vision": False,
            "function_calling": True,
            "json_output": False,
            "family": ModelFamily.UNKNOWN,
            "structured_output": False,
        }


async def run_agents(agents: int, latency: float) -> int:
    """``agents`` concurrent ``AssistantAgent.run`` calls; the number of ``add`` calls made."""
    global CALLS
    CALLS = 0
    client = FakeClient(latency)
    team = [
        AssistantAgent(
            f"adder_{i}",
            model_client=client,
            tools=[add],
            system_message="You add numbers.",
            max_tool_iterations=TURNS + 1,
        )
        for i in range(agents)
    ]
    results = await asyncio.gather(*(agent.run(task="Add 1 and 2.") for agent in team))
    finals = [getattr(r.messages[-1], "content", None) for r in results]
    return check([str(f) for f in finals], CALLS, agents)


def run(agents: int, latency: float) -> int:
    return asyncio.run(run_agents(agents, latency))


if __name__ == "__main__":
    sys.exit(main(run))
