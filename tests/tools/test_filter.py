"""The five filter layers, the access tables of the design documents, and call-time enforcement."""

from __future__ import annotations

from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from subagents.tools import (
    AGENT_SOURCES,
    ALWAYS_EXCLUDED_TOOL_NAMES,
    SPAWN_TOOL_NAMES,
    FilterLayer,
    ToolFlags,
    ToolPolicy,
    ToolRegistry,
    TrustPolicy,
    builtin_tools,
    filter_tools,
    pattern_matches,
)

READ_ONLY = ToolFlags(read_only=True, background_safe=True)
WRITES = ToolFlags(read_only=False, background_safe=True, needs_approval=True)
INTERACTIVE = ToolFlags(read_only=True, background_safe=False)


@pytest.fixture
def parent(fake_tool: Any) -> ToolRegistry:
    """A lead's toolset: the built-ins, session tools, spawn tools, web and MCP tools."""
    registry = ToolRegistry(builtin_tools())
    for name in ("AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TodoRead"):
        registry.register(fake_tool(name, flags=INTERACTIVE))
    for name in ("Task", "spawn_agent", "wait"):
        registry.register(fake_tool(name, flags=WRITES))
    registry.register(fake_tool("NotebookEdit", flags=WRITES))
    registry.register(fake_tool("LSP", flags=INTERACTIVE))
    registry.register(fake_tool("mcp__github__list_issues", flags=READ_ONLY))
    registry.register(fake_tool("mcp__github__create_issue", flags=WRITES))
    registry.register(fake_tool("mcp__slack__post", flags=WRITES))
    return registry


def kept(registry: ToolRegistry, policy: ToolPolicy, trust: TrustPolicy | None = None) -> set[str]:
    return set(registry.select(policy, trust).names)


# -- the tool access tables ---------------------------------------------------------

EXPLORE_DENY = (
    "Task",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
)
PLAN_DENY = (
    "Task",
    "ExitPlanMode",
    "EnterPlanMode",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
)


def test_explore_as_in_the_multi_agent_design(parent: ToolRegistry) -> None:
    """Seed 000: Explore has tools ['*'] minus its deny list (Bash stays for read-only commands)."""
    policy = ToolPolicy(allow=("*",), deny=EXPLORE_DENY, source="builtin")
    assert kept(parent, policy) == {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "Bash",
        "WebFetch",
        "WebSearch",
        "LSP",
        "mcp__github__list_issues",
        "mcp__github__create_issue",
        "mcp__slack__post",
    }


def test_explore_as_in_the_access_matrix(parent: ToolRegistry) -> None:
    """Seed 003's matrix: Explore | Builtin | List(read-only) -> read, glob, grep, list."""
    policy = ToolPolicy(allow=("Read", "Glob", "Grep", "LS"), source="builtin")
    assert kept(parent, policy) == {"Read", "Glob", "Grep", "LS"}


def test_plan_as_in_the_multi_agent_design(parent: ToolRegistry) -> None:
    policy = ToolPolicy(allow=("Glob", "Grep", "Read", "Bash"), deny=PLAN_DENY, source="builtin")
    assert kept(parent, policy) == {"Glob", "Grep", "Read", "Bash"}


def test_plan_as_in_the_access_matrix(parent: ToolRegistry) -> None:
    policy = ToolPolicy(allow=("Read", "Glob", "Grep"), source="builtin")
    assert kept(parent, policy) == {"Read", "Glob", "Grep"}


def test_user_agent_with_all_tools_but_bash(parent: ToolRegistry) -> None:
    """User | All | [Bash] -> everything except Bash: the user's own agent keeps the rest.

    Trust follows who wrote the file: Claude Code gives a ``~/.claude/agents``
    agent the tools it lists (https://code.claude.com/docs/en/sub-agents).
    """
    selection = parent.select(ToolPolicy(allow=None, deny=("Bash",), source="user"))
    assert "Bash" not in selection.names
    for name in ("Read", "Write", "Edit", "NotebookEdit", "mcp__slack__post"):
        assert name in selection.names, name
    bash = selection.decision("Bash")
    assert bash is not None
    assert bash.layer is FilterLayer.DENY_LIST


def test_user_and_plugin_agents_keep_write_and_bash_by_default(parent: ToolRegistry) -> None:
    for source in ("user", "plugin"):
        names = kept(parent, ToolPolicy(allow=("Read", "Write", "Edit", "Bash"), source=source))
        assert names == {"Read", "Write", "Edit", "Bash"}, source


def test_a_withheld_source_names_its_rule(parent: ToolRegistry) -> None:
    trust = TrustPolicy(withheld={"project": "the project folder /r is not trusted"})
    selection = parent.select(ToolPolicy(allow=("Read", "Bash"), source="project"), trust)
    assert selection.names == ("Read",)
    bash = selection.decision("Bash")
    assert bash is not None
    assert bash.layer is FilterLayer.SOURCE_POLICY
    assert "the project folder /r is not trusted" in bash.reason
    narrowed = parent.select(ToolPolicy(source="user"), TrustPolicy(trusted_sources={"builtin"}))
    write = narrowed.decision("Write")
    assert write is not None
    assert "trusted_sources setting lists builtin" in write.reason
    with pytest.raises(ValueError, match="unknown agent source"):
        TrustPolicy(withheld={"space": "why"})


def test_user_agent_with_a_two_tool_list(parent: ToolRegistry) -> None:
    """User | List([A, B]) -> A and B only, write tools included when listed."""
    assert kept(parent, ToolPolicy(allow=("Read", "Grep"), source="user")) == {"Read", "Grep"}
    assert kept(parent, ToolPolicy(allow=("Read", "Write"), source="user")) == {"Read", "Write"}
    assert kept(parent, ToolPolicy(allow=("Bash", "Edit"), source="user")) == {"Bash", "Edit"}


# -- layer by layer -----------------------------------------------------------------


def test_layer_1_removes_session_tools_from_every_subagent(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(depth=1, max_depth=3))
    for name in ALWAYS_EXCLUDED_TOOL_NAMES:
        decision = selection.decision(name)
        assert decision is not None
        assert not decision.kept
        assert decision.layer is FilterLayer.ALWAYS_REMOVED
    assert {"Task", "spawn_agent", "wait"} <= set(selection.names)


def test_layer_1_keeps_session_tools_for_the_top_level_agent(parent: ToolRegistry) -> None:
    names = kept(parent, ToolPolicy(depth=0, max_depth=1))
    assert names >= ALWAYS_EXCLUDED_TOOL_NAMES
    assert {"Task", "spawn_agent", "wait"} <= names


@pytest.mark.parametrize(("depth", "max_depth"), [(1, 1), (2, 2), (3, 2), (0, 0)])
def test_layer_1_removes_spawn_tools_at_max_depth(
    parent: ToolRegistry, depth: int, max_depth: int
) -> None:
    selection = parent.select(ToolPolicy(allow=("*",), depth=depth, max_depth=max_depth))
    for name in ("Task", "spawn_agent", "wait"):
        decision = selection.decision(name)
        assert decision is not None
        assert decision.layer is FilterLayer.ALWAYS_REMOVED
        assert f"max_depth={max_depth}" in decision.reason


def test_layer_1_wins_over_an_explicit_allow(parent: ToolRegistry) -> None:
    names = kept(parent, ToolPolicy(allow=("AskUserQuestion", "Task", "Read")))
    assert names == {"Read"}


def test_layer_2_deny_list_with_patterns(parent: ToolRegistry) -> None:
    names = kept(parent, ToolPolicy(deny=("mcp__github__*", "Bash")))
    assert "Bash" not in names
    assert not any(n.startswith("mcp__github__") for n in names)
    assert "mcp__slack__post" in names


def test_layer_2_deny_beats_allow(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(allow=("Read", "Grep"), deny=("Grep",)))
    assert selection.names == ("Read",)
    grep = selection.decision("Grep")
    assert grep is not None
    assert grep.layer is FilterLayer.DENY_LIST


def test_layer_3_allow_list_patterns(parent: ToolRegistry) -> None:
    assert kept(parent, ToolPolicy(allow=("mcp__github__*",))) == {
        "mcp__github__list_issues",
        "mcp__github__create_issue",
    }
    assert kept(parent, ToolPolicy(allow=("mcp__slack",))) == {"mcp__slack__post"}
    assert kept(parent, ToolPolicy(allow=("G*",))) == {"Glob", "Grep"}
    assert kept(parent, ToolPolicy(allow=())) == set()
    everything = kept(parent, ToolPolicy(allow=("*",)))
    assert everything == kept(parent, ToolPolicy(allow=None))


def test_layer_3_explains_a_missing_tool(parent: ToolRegistry) -> None:
    decision = parent.select(ToolPolicy(allow=("Read",))).decision("Bash")
    assert decision is not None
    assert decision.layer is FilterLayer.ALLOW_LIST
    assert "not in the definition's tools list (Read)" in decision.reason


def test_scoped_entries_grant_only_spawn_tools(parent: ToolRegistry, fake_tool: Any) -> None:
    parent.register(fake_tool("Agent", flags=WRITES))
    selection = parent.select(
        ToolPolicy(allow=("Agent(Explore, Plan)", "Bash(git:*)", "Read"), depth=0, max_depth=1)
    )
    assert set(selection.names) == {"Agent", "Read"}
    agent = selection.decision("Agent")
    assert agent is not None
    assert agent.scope == ("Explore", "Plan")
    bash = selection.decision("Bash")
    assert bash is not None
    assert bash.layer is FilterLayer.ALLOW_LIST
    assert "argument-scoped entries grant only spawn tools" in bash.reason
    assert selection.unmatched_patterns == ("Bash(git:*)",)


def test_scoped_deny_entries_remove_the_whole_tool(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(deny=("Bash(rm:*)",)))
    bash = selection.decision("Bash")
    assert bash is not None
    assert bash.layer is FilterLayer.DENY_LIST
    assert selection.unmatched_patterns == ()


@pytest.mark.parametrize("source", AGENT_SOURCES)
def test_layer_4_default_trust(parent: ToolRegistry, source: str) -> None:
    names = kept(parent, ToolPolicy(source=source))
    assert "Bash" in names  # every source is trusted by default: who wrote it decides
    assert "Write" in names
    assert "Read" in names


def test_layer_4_trust_is_configurable(parent: ToolRegistry) -> None:
    policy = ToolPolicy(source="user")
    assert "Write" in kept(parent, policy, TrustPolicy(trusted_sources={"user"}))
    assert "Write" not in kept(
        parent, ToolPolicy(source="builtin"), TrustPolicy(trusted_sources=())
    )


def test_layer_4_read_only_agents_lose_write_and_exec_tools(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(source="builtin", read_only=True))
    assert "Bash" not in selection.names
    assert "Read" in selection.names
    bash = selection.decision("Bash")
    assert bash is not None
    assert "read-only" in bash.reason


def test_layer_5_background_agents_keep_background_safe_tools(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(background=True))
    assert "LSP" not in selection.names
    lsp = selection.decision("LSP")
    assert lsp is not None
    assert lsp.layer is FilterLayer.BACKGROUND
    assert {"Read", "Write", "Edit", "Glob", "Grep", "LS", "Bash", "WebFetch"} <= set(
        selection.names
    )


def test_unknown_source_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown agent source"):
        ToolPolicy(source="internet")


def test_pattern_matching() -> None:
    assert pattern_matches("*", "anything")
    assert pattern_matches("mcp__github__*", "mcp__github__x")
    assert not pattern_matches("mcp__github__*", "mcp__gitlab__x")
    assert pattern_matches("mcp__github", "mcp__github__x")
    assert not pattern_matches("mcp__github", "mcp__githubber__x")
    assert pattern_matches("Read", "Read")
    assert not pattern_matches("Read", "ReadMe")
    assert not pattern_matches("read", "Read")
    assert pattern_matches("Agent(a, b)", "Agent")
    assert pattern_matches("Bash(git:*)", "Bash")
    assert not pattern_matches("Bash(git:*)", "BashOutput")


# -- explanations -----------------------------------------------------------------


def test_every_parent_tool_is_explained(parent: ToolRegistry) -> None:
    selection = parent.select(
        ToolPolicy(allow=("Read", "Bash", "Typo"), deny=("Bash",), source="user")
    )
    assert [d.name for d in selection.decisions] == list(parent.names)
    text = selection.explain()
    lines = text.splitlines()
    assert "+ Read: kept (matches 'Read' in tools; read-only)" in lines
    assert "- Bash: removed by layer 2, deny list (matches 'Bash' in disallowedTools)" in lines
    assert any(line.startswith("- AskUserQuestion: removed by layer 1") for line in lines)
    assert lines[-1] == "! tool patterns that match no available tool: Typo"
    assert selection.unmatched_patterns == ("Typo",)


def test_specs_cover_only_the_kept_tools(parent: ToolRegistry) -> None:
    selection = parent.select(ToolPolicy(allow=("Read", "Grep")))
    assert [spec["name"] for spec in selection.specs()] == ["Read", "Grep"]


def test_shared_specs_are_made_once_per_selection_and_specs_stay_fresh(
    parent: ToolRegistry,
) -> None:
    """Every agent given one selection reads the same specs (made once, not per spawn);
    :meth:`specs` still hands each caller copies of its own to change."""
    selection = parent.select(ToolPolicy(allow=("Read", "Grep")))
    shared = selection.shared_specs()
    assert shared is selection.shared_specs()
    assert list(shared) == selection.specs()
    mine = selection.specs()
    mine[0]["cache_control"] = {"type": "ephemeral"}
    assert "cache_control" not in selection.specs()[0]
    assert "cache_control" not in shared[0]


def test_agent_specs_leave_one_tool_out_add_the_agents_own_and_are_shared(
    fake_tool: Any,
) -> None:
    """What a model is offered is made once per (left out, last spec) and shared by every
    agent of that type; the left-out tool's spec is never offered twice."""
    registry = ToolRegistry(
        [
            fake_tool("Read", flags=READ_ONLY),
            fake_tool("complete_task", flags=READ_ONLY),
            fake_tool("Edit", flags=WRITES),
        ]
    )
    selection = registry.select(ToolPolicy(allow=("Read", "complete_task", "Edit")))
    own = {"name": "complete_task", "description": "mine", "input_schema": {"type": "object"}}
    with_own = selection.agent_specs(leave_out="complete_task", last=own)
    assert [spec["name"] for spec in with_own] == ["Read", "Edit", "complete_task"]
    assert with_own[-1] is own
    assert selection.agent_specs(leave_out="complete_task", last=own) is with_own
    without = selection.agent_specs(leave_out="complete_task", last=None)
    assert [spec["name"] for spec in without] == ["Read", "Edit"]
    assert selection.agent_specs(leave_out="complete_task", last=None) is without
    # An equal but distinct spec is its own entry, not another's tuple.
    other = dict(own)
    assert selection.agent_specs(leave_out="complete_task", last=other)[-1] is other
    concurrent = selection.concurrent_names(leave_out="complete_task")
    assert concurrent == frozenset({"Read"})
    assert selection.concurrent_names(leave_out="complete_task") is concurrent
    assert selection.concurrent_names(leave_out="Read") == frozenset({"complete_task"})


# -- call-time enforcement --------------------------------------------------------


async def test_a_removed_tool_is_refused_at_call_time(fake_tool: Any, make_ctx: Any) -> None:
    secret = fake_tool("NotebookEdit", flags=WRITES)
    echo = fake_tool("Echo")
    registry = ToolRegistry([secret, echo])
    selection = registry.select(ToolPolicy(allow=("Echo",)))
    result = await selection.call("NotebookEdit", {"text": "x"}, make_ctx())
    assert result.is_error
    assert result.content.startswith("Tool 'NotebookEdit' is not available to this agent.")
    assert secret.calls == []
    ok = await selection.call("Echo", {"text": "hi"}, make_ctx())
    assert ok.content == "Echo: hi"


async def test_an_unknown_tool_is_refused_at_call_time(make_ctx: Any) -> None:
    selection = ToolRegistry(builtin_tools()).select(ToolPolicy(allow=("Read",)))
    result = await selection.call("rm_rf", {}, make_ctx())
    assert result.content == "Tool 'rm_rf' is not available to this agent."


async def test_explore_cannot_write_even_if_the_model_asks(make_ctx: Any, tmp_path: Any) -> None:
    selection = ToolRegistry(builtin_tools()).select(
        ToolPolicy(allow=("*",), deny=EXPLORE_DENY, source="builtin")
    )
    result = await selection.call("Write", {"file_path": "x.txt", "content": "x"}, make_ctx())
    assert result.content.startswith("Tool 'Write' is not available to this agent.")
    assert not (tmp_path / "x.txt").exists()


async def test_spawn_at_max_depth_tells_the_model_to_do_it_itself(
    fake_tool: Any, make_ctx: Any
) -> None:
    spawn = fake_tool("spawn_agent", flags=WRITES)
    selection = ToolRegistry([spawn]).select(ToolPolicy(depth=1, max_depth=1))
    result = await selection.call("spawn_agent", {}, make_ctx(depth=1))
    assert result.content == (
        "Tool 'spawn_agent' is not available to this agent. "
        "Agent depth limit reached (max_depth=1). Solve the task yourself."
    )
    assert spawn.calls == []


async def test_call_time_depth_check_uses_the_calling_context(
    fake_tool: Any, make_ctx: Any
) -> None:
    spawn = fake_tool("spawn_agent", flags=WRITES)
    selection = ToolRegistry([spawn]).select(ToolPolicy(depth=0, max_depth=1))
    assert selection.names == ("spawn_agent",)
    refused = await selection.call("spawn_agent", {}, make_ctx(depth=1))
    assert "Agent depth limit reached (max_depth=1)" in refused.content
    allowed = await selection.call("spawn_agent", {}, make_ctx(depth=0))
    assert not allowed.is_error
    assert len(spawn.calls) == 1


async def test_a_kept_tool_is_decided_once_until_its_flags_change(
    fake_tool: Any, make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: the call-time check runs the five layers at a tool's first call and again
    only when the tool's flags are no longer those it was kept with; a read-only agent's tool
    that turns into one that writes is refused at its next call, and kept again when it turns
    back."""
    from subagents.tools import _filter

    decided: list[str] = []
    real = _filter.decide

    def counting(tool: Any, policy: ToolPolicy, trust: TrustPolicy) -> Any:
        decided.append(tool.name)
        return real(tool, policy, trust)

    echo = fake_tool("Echo")
    selection = ToolRegistry([echo, fake_tool("Grep")]).select(ToolPolicy(read_only=True))
    monkeypatch.setattr(_filter, "decide", counting)
    for n in range(5):
        assert (await selection.call("Echo", {"text": f"{n}"}, make_ctx())).content == f"Echo: {n}"
    await selection.call("Grep", {"text": "x"}, make_ctx())
    assert decided == ["Echo", "Grep"]
    echo.flags = WRITES
    refused = await selection.call("Echo", {"text": "rm"}, make_ctx())
    assert refused.content.startswith("Tool 'Echo' is not available to this agent.")
    assert "this agent is read-only" in refused.content
    again = await selection.call("Echo", {"text": "rm"}, make_ctx())
    assert again.is_error
    assert len(echo.calls) == 5
    echo.flags = ToolFlags(read_only=True, background_safe=True)
    assert not (await selection.call("Echo", {"text": "ok"}, make_ctx())).is_error
    await selection.call("Echo", {"text": "ok"}, make_ctx())
    assert decided == ["Echo", "Grep", "Echo", "Echo", "Echo"]


# -- properties ---------------------------------------------------------------------


class _NoArgs(msgspec.Struct, forbid_unknown_fields=True):
    """No arguments."""


@attrs.frozen
class _Named:
    """The least a tool needs to be filtered."""

    name: str
    flags: ToolFlags
    description: str = "test"
    arguments_type: type[msgspec.Struct] = _NoArgs

    async def call(self, args: Any, ctx: Any, /) -> Any:
        raise AssertionError("never called")


NAMES = [
    "Read",
    "Write",
    "Bash",
    "Grep",
    "Task",
    "AskUserQuestion",
    "TodoWrite",
    "spawn_agent",
    "mcp__a__x",
    "mcp__a__y",
    "mcp__b__z",
    "Web",
]
PATTERNS = st.sampled_from([*NAMES, "*", "mcp__a__*", "mcp__b", "W*", "Nope"])
FLAGS = st.builds(ToolFlags, st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=200, deadline=None)
@given(
    flags=st.lists(FLAGS, min_size=len(NAMES), max_size=len(NAMES)),
    allow=st.none() | st.lists(PATTERNS, max_size=4).map(tuple),
    deny=st.lists(PATTERNS, max_size=3).map(tuple),
    source=st.sampled_from(AGENT_SOURCES),
    background=st.booleans(),
    read_only=st.booleans(),
    depth=st.integers(0, 3),
    max_depth=st.integers(0, 3),
)
def test_filter_invariants(
    flags: list[ToolFlags],
    allow: tuple[str, ...] | None,
    deny: tuple[str, ...],
    source: str,
    background: bool,
    read_only: bool,
    depth: int,
    max_depth: int,
) -> None:
    parent = [_Named(name, f) for name, f in zip(NAMES, flags, strict=True)]
    policy = ToolPolicy(
        allow=allow,
        deny=deny,
        source=source,
        background=background,
        read_only=read_only,
        depth=depth,
        max_depth=max_depth,
    )
    selection = filter_tools(parent, policy)
    assert len(selection.decisions) == len(parent)
    kept_names = set(selection.names)
    for tool, decision in zip(parent, selection.decisions, strict=True):
        assert decision.kept is (tool.name in kept_names)
        assert (decision.layer is None) is decision.kept
        assert decision.reason
        if not decision.kept:
            continue
        assert not any(pattern_matches(p, tool.name) for p in deny)
        assert allow is None or any(pattern_matches(p, tool.name) for p in allow)
        if depth >= 1:
            assert tool.name not in ALWAYS_EXCLUDED_TOOL_NAMES
        if depth >= max_depth:
            assert tool.name not in SPAWN_TOOL_NAMES
        if read_only:  # every source is trusted by the default TrustPolicy
            assert tool.flags.read_only
        if background:
            assert tool.flags.background_safe
