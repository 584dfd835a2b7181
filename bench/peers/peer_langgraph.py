"""The peer workload on LangGraph (``langgraph`` with ``langchain-core``).

The agent is LangGraph's prebuilt ReAct agent (``create_react_agent``: a model
node and a ``ToolNode`` in a compiled ``StateGraph``) over a fake chat model, a
``BaseChatModel`` subclass whose ``_agenerate`` sleeps ``latency`` seconds
(``asyncio.sleep``), counts the ``ToolMessage`` of the conversation and answers
an ``AIMessage`` with one ``add`` tool call while there are fewer than
``TURNS``, then the final text; ``bind_tools`` returns the model itself. ``add``
is a ``@tool`` function. One compiled graph serves every agent, each an
``ainvoke`` of its own input, all in one ``asyncio.gather``; no checkpointer
(nothing persisted between steps) and LangSmith tracing off (its environment
variables removed).

``create_react_agent`` is deprecated in favour of ``langchain.agents.create_agent``
(the ``langchain`` package, not ``langchain-core``); it is still LangGraph's
prebuilt agent, and its deprecation warning is silenced here.

    python bench/peers/peer_langgraph.py --agents 100 --latency 0.1
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

for _name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ.pop(_name, None)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import FINAL, TURNS, check, main  # noqa: E402

CALLS = 0


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    global CALLS
    CALLS += 1
    return a + b


class FakeChatModel(BaseChatModel):
    """Calls ``add`` until the conversation holds ``TURNS`` tool results, then answers."""

    latency: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "bench-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        raise NotImplementedError("the bench runs the graph asynchronously")

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        await asyncio.sleep(self.latency)
        done = sum(1 for m in messages if isinstance(m, ToolMessage))
        if done < TURNS:
            message = AIMessage(
                content="",
                tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": f"call_{done}"}],
            )
        else:
            message = AIMessage(content=FINAL)
        return ChatResult(generations=[ChatGeneration(message=message)])


async def run_agents(agents: int, latency: float) -> int:
    """``agents`` concurrent ``ainvoke`` calls of one prebuilt agent; ``add`` calls made."""
    global CALLS
    CALLS = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = create_react_agent(FakeChatModel(latency=latency), [add], prompt="You add numbers.")
    config = {"recursion_limit": 4 * TURNS}
    results = await asyncio.gather(
        *(
            graph.ainvoke({"messages": [("user", "Add 1 and 2.")]}, config=config)
            for _ in range(agents)
        )
    )
    return check([str(r["messages"][-1].content) for r in results], CALLS, agents)


def run(agents: int, latency: float) -> int:
    return asyncio.run(run_agents(agents, latency))


if __name__ == "__main__":
    sys.exit(main(run))
