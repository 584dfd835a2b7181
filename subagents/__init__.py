"""subagents: LLM subagents as supervised Trio actors.

The packages, lowest layer first: :mod:`subagents.actors` (the actor kernel),
:mod:`subagents.agents` (agent definitions), :mod:`subagents.tools` (tools and
their filtering), :mod:`subagents.runtime` (the agent loop, providers and the
runtime that runs agents: :func:`open_runtime`); on top of them
:mod:`subagents.cli` (the ``subagents`` command), :mod:`subagents.testing`
(the public test kit) and :mod:`subagents.demo` (the kernel demo and the
offline survey policies).
Every error the package raises derives from :class:`SubagentsError`::

    async with subagents.open_runtime() as rt:
        agent = await rt.spawn("Explore", "Find the entry point")
        await rt.wait([agent.agent_id], timeout=300)
"""

from typing import TYPE_CHECKING, Any

from ._exceptions import SubagentsError

if TYPE_CHECKING:
    from .runtime import open_runtime
    from .tools import tool

__all__ = ["SubagentsError", "__version__", "open_runtime", "tool"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so ``import subagents.actors`` stays light (the
    # runtime brings the model SDK with it).
    if name == "open_runtime":
        from .runtime import open_runtime

        return open_runtime
    if name == "tool":
        from .tools import tool

        return tool
    raise AttributeError(f"module 'subagents' has no attribute {name!r}")


__version__ = "0.1.0"
