"""The peer workload on the OpenAI Agents SDK (``openai-agents``).

The model is the SDK's extension point for other providers, a custom
``agents.Model`` subclass: ``get_response`` sleeps ``latency`` seconds
(``asyncio.sleep``), counts the ``function_call_output`` items of the input it
is given and answers a ``ResponseFunctionToolCall`` of ``add`` while there are
fewer than ``TURNS``, then a ``ResponseOutputMessage`` with the final text.
``add`` is a ``@function_tool``. Each agent is one ``Runner.run`` (the
``Agent`` is shared, as the SDK allows), all of them in one ``asyncio.gather``;
tracing is off globally (``set_tracing_disabled``) and per run
(``RunConfig(tracing_disabled=True)``), so no span is built or exported.

    python bench/peers/peer_openai_agents.py --agents 100 --latency 0.1
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import FINAL, TURNS, check, main

CALLS = 0


@function_tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    global CALLS
    CALLS += 1
    return a + b


class FakeModel(Model):
    """Calls ``add`` until the input holds ``TURNS`` results, then answers ``FINAL``."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.ids = 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        await asyncio.sleep(self.latency)
        done = sum(1 for item in input if item.get("type") == "function_call_output")
        self.ids += 1
        if done < TURNS:
            item: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{self.ids}",
                name="add",
                arguments='{"a": 1, "b": 2}',
            )
        else:
            item = ResponseOutputMessage(
                id=f"msg_{self.ids}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=FINAL, annotations=[])],
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the bench does not stream")


async def run_agents(agents: int, latency: float) -> int:
    """``agents`` concurrent ``Runner.run`` calls; the number of ``add`` calls made."""
    global CALLS
    CALLS = 0
    set_tracing_disabled(True)
    agent = Agent(
        name="adder", instructions="You add numbers.", tools=[add], model=FakeModel(latency)
    )
    config = RunConfig(tracing_disabled=True)
    results = await asyncio.gather(
        *(
            Runner.run(agent, "Add 1 and 2.", max_turns=TURNS + 2, run_config=config)
            for _ in range(agents)
        )
    )
    return check([str(r.final_output) for r in results], CALLS, agents)


def run(agents: int, latency: float) -> int:
    return asyncio.run(run_agents(agents, latency))


if __name__ == "__main__":
    sys.exit(main(run))
