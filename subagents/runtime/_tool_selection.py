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
is a saving for many agents of few types, never a store that grows.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Final, final

from subagents.tools import Tool, ToolFlags, ToolPolicy, ToolSelection, TrustPolicy, filter_tools

__all__ = ["DEFAULT_SELECTION_CACHE_SIZE", "SelectionCache"]

#: Selections a runtime keeps (agent types x positions x tool offers).
DEFAULT_SELECTION_CACHE_SIZE: Final = 256

#: (policy, trust, the offered tools' ids)
_Key = tuple[ToolPolicy, TrustPolicy, tuple[int, ...]]
_Entry = tuple[tuple[Tool, ...], tuple[ToolFlags, ...], ToolSelection]
_flags_of: Final = operator.attrgetter("flags")


@final
class SelectionCache:
    """Selections by (policy, trust, offered tools); bounded by ``capacity``."""

    __slots__ = ("_capacity", "_entries", "hits", "misses")

    def __init__(self, capacity: int = DEFAULT_SELECTION_CACHE_SIZE) -> None:
        self._capacity = capacity
        # The offered tools are kept with their selection, so the ids in a key stay theirs: a
        # key found is the same tools, found without a call per tool. Their flags are kept
        # too, and compared as a tuple (the same objects compare without a call).
        self._entries: dict[_Key, _Entry] = {}
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
        tools = tuple(offered)
        flags = tuple(map(_flags_of, tools))
        key: _Key = (policy, trust, tuple(map(id, tools)))
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
        if all(a is b for a, b in zip(kept, selection.tools, strict=True)):
            return selection
        return ToolSelection(
            tools=kept,
            decisions=selection.decisions,
            policy=selection.policy,
            trust=selection.trust,
            unmatched_patterns=selection.unmatched_patterns,
        )
