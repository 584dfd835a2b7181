"""Demos to run and to read: the actor kernel at work, and an offline survey of a directory.

:func:`run_demo` is ``subagents demo``: a lead actor fans out one worker per
top-level folder and gathers their counts, with every spawn and status change
printed live. :func:`team_policies` gives the offline ``subagents team``'s
lead and teammates (:mod:`subagents.demo._team`). :func:`survey_policies` gives
the scripted policies of the offline ``subagents run``: agents that really
survey a directory with the real tools, so a session without an API key is
worth watching::

    from subagents.demo import survey_policies
    from subagents.runtime import ScriptedProvider, open_runtime

    async with ScriptedProvider(policies=survey_policies(latency=0)) as provider:
        async with open_runtime(cwd=".", provider=provider) as rt:
            ...

Both use only the public names of :mod:`subagents.actors` and
:mod:`subagents.runtime`.
"""

from subagents.demo._kernel import run_demo
from subagents.demo._survey.common import DEFAULT_SURVEY_LATENCY, survey_policies
from subagents.demo._team import LEAD_TOOLS, MATE_TOOLS, team_policies

__all__ = [
    "DEFAULT_SURVEY_LATENCY",
    "LEAD_TOOLS",
    "MATE_TOOLS",
    "run_demo",
    "survey_policies",
    "team_policies",
]
