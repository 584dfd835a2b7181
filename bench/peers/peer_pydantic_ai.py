"""The peer workload on pydantic-ai (``pydantic-ai-slim``: the core, no provider SDK).

The model is pydantic-ai's ``FunctionModel`` over an async function that
sleeps ``latency`` seconds (``asyncio.sleep``), counts the ``ToolReturnPart``
of the message history and answers a ``ToolCallPart`` of ``add`` while there
are fewer than ``TURNS``, then a ``TextPart`` with the final text. ``add`` is
a plain tool (``@agent.tool_plain``). One ``Agent`` serves every run, each an
``agent.run`` of its own prompt, all in one ``asyncio.gather``; instrumentation
(OpenTelemetry / Logfire) is off (``agent.instrument = False``, also the default).

    python bench/peers/peer_pydantic_ai.py --agents 100 --latency 0.1
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import FINAL, TURNS, check, main

CALLS = 0


def make_agent(latency: float) -> Agent[None, str]:
    """An agent with the ``add`` tool over the fake model."""

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(latency)
        done = sum(1 for m in messages for part in m.parts if isinstance(part, ToolReturnPart))
        if done < TURNS:
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])
        return ModelResponse(parts=[TextPart(FINAL)])

    agent: Agent[None, str] = Agent(FunctionModel(model), instructions="You add numbers.")
    agent.instrument = False

    @agent.tool_plain
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        global CALLS
        CALLS += 1
        return a + b

    return agent


async def run_agents(agents: int, latency: float) -> int:
    """``agents`` concurrent ``agent.run`` calls; the number of ``add`` calls made."""
    global CALLS
    CALLS = 0
    agent = make_agent(latency)
    results = await asyncio.gather(*(agent.run("Add 1 and 2.") for _ in range(agents)))
    return check([str(r.output) for r in results], CALLS, agents)


def run(agents: int, latency: float) -> int:
    return asyncio.run(run_agents(agents, latency))


if __name__ == "__main__":
    sys.exit(main(run))
