"""The tool filter's decisions, made once per agent type and position and reused at spawn.

Filtering the runtime's tools for an agent (:func:`~subagents.tools.filter_tools`)
runs the five layers for every offered tool, about 0.3 ms per agent: a
thousand agents of one type paid it a thousand times for the same answer. A
:class:`SelectionCache` keeps the selection made for one offer of tools (the
same tool objects, with equal flags), one :class:`ToolPolicy` and
one :class:`TrustPolicy`; the decision depends on nothing else (a tool's
name, its flags, the policy, the trust), so a hit gives exactly the selection
a fresh filter would. Each agent then wraps its kept tools in its own hooks.

The cache holds at most ``capacity`` selections and is emptied when full: it
is a saving for many agents of few types, never a store that grows. It also
keeps the :class:`ToolPolicy` of each agent type at each position
(:meth:`SelectionCache.policy`), so that agents of one type share one policy
object, whose hash is computed once and whose key compares by identity.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Final, final

from subagents.agents import AgentDefinition
from subagents.tools import (
    Tool,
    ToolFlags,
    ToolPolicy,
    ToolSelection,
    TrustPolicy,
    filter_tools,
    tool_policy,
)

__all__ = ["DEFAULT_SELECTION_CACHE_SIZE", "SelectionCache"]

#: Selections a runtime keeps (agent types x positions x tool offers).
DEFAULT_SELECTION_CACHE_SIZE: Final = 256

#: (policy, trust, the offered tools' ids)
_Key = tuple[ToolPolicy, TrustPolicy, tuple[int, ...]]
_Entry = tuple[tuple[Tool, ...], tuple[ToolFlags, ...], ToolSelection]
#: (the definition's id, depth, max_depth, background, job_row)
_PolicyKey = tuple[int, int, int, bool | None, bool]
_flags_of: Final = operator.attrgetter("flags")


@final
class SelectionCache:
    """Selections by (policy, trust, offered tools); bounded by ``capacity``."""

    __slots__ = ("_capacity", "_entries", "_offered", "_policies", "hits", "misses")

    def __init__(self, capacity: int = DEFAULT_SELECTION_CACHE_SIZE) -> None:
        self._capacity = capacity
        # The offered tools are kept with their selection, so the ids in a key stay theirs: a
        # key found is the same tools, found without a call per tool. Their flags are kept
        # too, and compared as a tuple (the same objects compare without a call).
        self._entries: dict[_Key, _Entry] = {}
        # The last tuple offered and its tools' ids: the runtime offers the same tuple to
        # every agent that has no tools of its own (MCP).
        self._offered: tuple[tuple[Tool, ...], tuple[int, ...]] = ((), ())
        # Each policy with its definition, so the id in its key stays the definition's.
        self._policies: dict[_PolicyKey, tuple[AgentDefinition, ToolPolicy]] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def select(
        self,
        offered: Sequence[Tool],
        policy: ToolPolicy,
        trust: TrustPolicy,
        *,
        wrap: Callable[[Sequence[Tool]], tuple[Tool, ...]] | None = None,
    ) -> ToolSelection:
        """The selection out of ``offered``; ``wrap`` (the agent's hooks) wraps the kept tools."""
        last, ids = self._offered
        if offered is last:
            tools = last
        else:
            tools = tuple(offered)
            ids = tuple(map(id, tools))
            self._offered = (tools, ids)
        flags = tuple(map(_flags_of, tools))
        key: _Key = (policy, trust, ids)
        entry = self._entries.get(key)
        if entry is None or entry[1] != flags:
            self.misses += 1
            if len(self._entries) >= self._capacity:
                self._entries.clear()
            entry = (tools, flags, filter_tools(tools, policy, trust))
            self._entries[key] = entry
        else:
            self.hits += 1
        selection = entry[2]
        if wrap is None:
            return selection
        kept = wrap(selection.tools)
        if kept is selection.tools or all(
            a is b for a, b in zip(kept, selection.tools, strict=True)
        ):
            return selection
        return ToolSelection(
            tools=kept,
            decisions=selection.decisions,
            policy=selection.policy,
            trust=selection.trust,
            unmatched_patterns=selection.unmatched_patterns,
        )

    def policy(
        self,
        definition: AgentDefinition,
        *,
        depth: int,
        max_depth: int,
        background: bool | None,
        job_row: bool,
    ) -> ToolPolicy:
        """:func:`~subagents.tools.tool_policy`, one object per definition and arguments."""
        key: _PolicyKey = (id(definition), depth, max_depth, background, job_row)
        known = self._policies.get(key)
        if known is not None:  # the entry holds the definition: its id is no other's
            return known[1]
        policy = tool_policy(
            definition,
            depth=depth,
            max_depth=max_depth,
            background=background,
            job_row=job_row,
        )
        if len(self._policies) >= self._capacity:
            self._policies.clear()
        self._policies[key] = (definition, policy)
        return policy
