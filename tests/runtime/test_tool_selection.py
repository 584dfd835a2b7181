"""The tool filter's selection, made once per agent type and position (issue 17).

Filtering is a pure function of the offered tools' names and flags, the
agent's :class:`ToolPolicy` and the :class:`TrustPolicy`
(``subagents/tools/_filter.py: decide``): a cached selection must be exactly
the one a fresh filter gives, and must not be reused for another policy, other
tools or other flags.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from subagents import testing
from subagents.agents import AgentDefinition, builtin_agents
from subagents.runtime import ScriptedProvider
from subagents.runtime._tool_selection import SelectionCache
from subagents.tools import ToolPolicy, TrustPolicy, filter_tools, tool_policy
from subagents.tools import _filter as filter_module
from tests.runtime.helpers import SlowTool
from tests.runtime.world import World

POLICY = ToolPolicy(allow=("Read*",), source="project", depth=1, max_depth=1)


def test_a_cached_selection_is_the_fresh_filters_selection() -> None:
    tools = (SlowTool("ReadA"), SlowTool("Write", read_only=False), SlowTool("ReadB"))
    cache = SelectionCache()
    first = cache.select(tools, POLICY, TrustPolicy())
    second = cache.select(tools, POLICY, TrustPolicy())
    fresh = filter_tools(tools, POLICY, TrustPolicy())
    assert second is first
    assert (cache.hits, cache.misses) == (1, 1)
    assert first.decisions == fresh.decisions
    assert first.names == fresh.names == ("ReadA", "ReadB")


def test_another_policy_or_other_tools_are_filtered_afresh() -> None:
    tools = (SlowTool("ReadA"), SlowTool("Write", read_only=False))
    cache = SelectionCache()
    cache.select(tools, POLICY, TrustPolicy())
    read_only = cache.select(tools, ToolPolicy(source="project"), TrustPolicy())
    assert read_only.names == ("ReadA", "Write")
    other = cache.select((SlowTool("ReadA"),), POLICY, TrustPolicy())
    assert other.names == ("ReadA",)
    assert cache.misses == 3


def test_the_kept_tools_are_wrapped_per_agent_with_the_same_decisions() -> None:
    tools = (SlowTool("ReadA"), SlowTool("Write", read_only=False))
    cache = SelectionCache()
    plain = cache.select(tools, POLICY, TrustPolicy())
    wrapped = cache.select(
        tools, POLICY, TrustPolicy(), wrap=lambda kept: tuple(SlowTool(t.name) for t in kept)
    )
    assert wrapped is not plain
    assert wrapped.decisions == plain.decisions
    assert wrapped.names == plain.names
    assert all(a is not b for a, b in zip(wrapped.tools, plain.tools, strict=True))


def test_a_tool_whose_flags_changed_is_filtered_afresh() -> None:
    """The cache finds a selection by the offered tools' ids and keeps their flags beside it:
    the same tools with other flags are filtered again, and replace the entry."""
    tool = SlowTool("ReadA")
    cache = SelectionCache()
    policy = ToolPolicy(source="project", read_only=True)
    assert cache.select((tool,), policy, TrustPolicy()).names == ("ReadA",)
    tool.read_only = False  # it writes now: a read-only agent may not have it
    assert cache.select((tool,), policy, TrustPolicy()).names == ()
    assert cache.select((tool,), policy, TrustPolicy()).names == ()
    assert (cache.hits, cache.misses, len(cache)) == (1, 2, 1)


def test_the_same_tuple_offered_again_is_still_checked_for_changed_flags() -> None:
    """The runtime offers one tuple to every agent: the cache keeps its ids, not its flags."""
    tool = SlowTool("ReadA")
    offered = (tool,)
    cache = SelectionCache()
    policy = ToolPolicy(source="project", read_only=True)
    assert cache.select(offered, policy, TrustPolicy()).names == ("ReadA",)
    assert cache.select(offered, policy, TrustPolicy()).names == ("ReadA",)
    tool.read_only = False
    assert cache.select(offered, policy, TrustPolicy()).names == ()
    assert (cache.hits, cache.misses) == (1, 2)


def test_agents_of_one_type_at_one_position_share_one_policy() -> None:
    explore = next(d for d in builtin_agents() if d.name == "Explore")
    cache = SelectionCache()

    def policy(definition: AgentDefinition, depth: int = 1, background: bool | None = None):
        return cache.policy(
            definition, depth=depth, max_depth=2, background=background, job_row=False
        )

    first = policy(explore)
    assert policy(explore) is first
    assert first == tool_policy(explore, depth=1, max_depth=2)
    deeper = policy(explore, depth=2)
    assert deeper is not first
    assert deeper.depth == 2
    assert policy(explore, background=True).background is True
    # Another definition object, even an equal one, has its own entry (its own id).
    twin = attrs.evolve(explore)
    assert policy(twin) is not first
    assert policy(twin) == first


def test_the_policies_kept_are_bounded() -> None:
    explore = next(d for d in builtin_agents() if d.name == "Explore")
    cache = SelectionCache(capacity=2)
    for depth in range(5):
        cache.policy(explore, depth=depth, max_depth=9, background=None, job_row=False)
        assert len(cache._policies) <= 2


def test_the_cache_is_bounded() -> None:
    cache = SelectionCache(capacity=2)
    for depth in range(5):
        cache.select((SlowTool("ReadA"),), ToolPolicy(depth=depth, max_depth=9), TrustPolicy())
        assert len(cache) <= 2


async def test_agents_of_one_type_share_one_filtering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    real = filter_module.decide

    def counting(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(filter_module, "decide", counting)
    world = World(tmp_path)
    provider = ScriptedProvider([testing.say("done")] * 3)
    async with world.open(provider) as rt:
        handles = [await rt.spawn("Explore", "Look", inputs={"thoroughness": "quick"})]
        offered = calls
        assert offered > 0
        handles += [await rt.spawn("Explore", "Look", inputs={"thoroughness": "quick"})]
        handles += [await rt.spawn("Explore", "Look", inputs={"thoroughness": "quick"})]
        assert calls == offered  # the second and third agent reused the first's selection
        await rt.wait([h.agent_id for h in handles], timeout=10)
        names = {rt.services.records[h.agent_id].tools.names for h in handles}  # type: ignore[union-attr]
        assert len(names) == 1


async def test_agents_of_one_type_share_what_the_model_is_offered(tmp_path: Path) -> None:
    """The tool specs, the concurrent tool names and the workspace path are one object for
    every agent of a type (each was a copy per agent, held while it lived)."""
    world = World(tmp_path)
    provider = ScriptedProvider([testing.say("done")] * 2)
    async with world.open(provider) as rt:
        handles = [await rt.spawn("Explore", "Look") for _ in range(2)]
        await rt.wait([h.agent_id for h in handles], timeout=10)
        first, second = (rt.services.records[h.agent_id].spec for h in handles)
        assert first is not None
        assert second is not None
        assert first.tool_specs
        assert first.tool_specs is second.tool_specs
        assert first.concurrent is second.concurrent
        assert first.workspace_root is second.workspace_root is rt.services.cwd
