"""subagents: LLM subagents as supervised Trio actors.

The packages, lowest layer first: :mod:`subagents.actors` (the actor kernel),
:mod:`subagents.agents` (agent definitions), :mod:`subagents.tools` (tools and
their filtering), :mod:`subagents.runtime` (the agent loop and providers).
Every error the package raises derives from :class:`SubagentsError`.
"""

from ._exceptions import SubagentsError

__all__ = ["SubagentsError", "__version__"]

__version__ = "0.1.0"
