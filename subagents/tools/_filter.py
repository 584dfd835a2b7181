"""Which of its parent's tools an agent gets, and why.

Five layers, applied in order; the first that removes a tool gives the reason:

1. always removed: tools that talk to the user or steer the session
   (``AskUserQuestion``, plan mode, the todo list) for every subagent, the
   spawn tools for an agent at ``max_depth``, and ``report_agent_job_result``
   for every agent that is not running a job's row (Codex offers it only to
   a job's workers);
2. the definition's deny list (``disallowedTools``);
3. the definition's allow list (``tools``), with ``*`` and ``prefix*``
   patterns (``mcp__server`` alone also names every tool of that server);
   Claude Code's argument-scoped entries (``Agent(a, b)``, ``Bash(git:*)``)
   grant only spawn tools, whose scope the spawn tool enforces, and in the
   deny list they remove the whole tool: the filter never grants more than
   an entry says;
4. source policy: tools that write or execute are withheld from definitions
   whose source the user has not trusted (``trusted_sources``, every source by
   default), from a repository's own definitions until the user trusts its
   folder (:attr:`TrustPolicy.withheld`), and from read-only agents;
5. background agents keep only background-safe tools.

The filter's view of an agent is a :class:`ToolPolicy`, which
:func:`tool_policy` reads off its definition. The resulting
:class:`ToolSelection` is what the agent is offered, and it checks the same
decision again when a call arrives.
"""

from __future__ import annotations

import enum
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any, Final, final

import attrs

from subagents.agents import LIFECYCLE_TOOLS, AgentDefinition, AgentSource, PermissionMode
from subagents.tools._context import ToolContext
from subagents.tools._dispatch import ToolArguments, dispatch, not_available
from subagents.tools._protocol import Tool, ToolFlags, ToolResult
from subagents.tools._schema import tool_spec

__all__ = [
    "AGENT_SOURCES",
    "ALWAYS_EXCLUDED_TOOL_NAMES",
    "FilterLayer",
    "JOB_ROW_TOOL_NAMES",
    "PEER_TOOL_NAMES",
    "SPAWN_TOOL_NAMES",
    "ToolDecision",
    "ToolPolicy",
    "ToolSelection",
    "TrustPolicy",
    "decide",
    "filter_tools",
    "pattern_matches",
    "tool_policy",
]

#: Removed from every subagent: only the top-level agent talks to the user.
ALWAYS_EXCLUDED_TOOL_NAMES: Final = frozenset(
    {"AskUserQuestion", "EnterPlanMode", "ExitPlanMode", "TodoWrite", "TodoRead"}
)

#: Tools that create or steer other agents; removed for an agent at ``max_depth``.
SPAWN_TOOL_NAMES: Final = frozenset(LIFECYCLE_TOOLS)
#: Of those, the ones an agent at ``max_depth`` keeps: a teammate (a child of
#: its lead, so often at the limit) still messages its peers by name. Its
#: other use, steering an agent by id, is refused at the limit by the host.
PEER_TOOL_NAMES: Final = frozenset({"SendMessage"})
_DEPTH_LIMITED: Final = SPAWN_TOOL_NAMES - PEER_TOOL_NAMES
#: Distinct ``complete_task`` specs a selection remembers its agents' specs for (one per
#: output schema its agents use; past this they are made per agent).
_MAX_AGENT_SPECS: Final = 64
#: Offered only to an agent that runs one row of a job (:attr:`ToolPolicy.job_row`):
#: the worker's way to report its row's result (Codex's worker-only tool). Like
#: ``complete_task``, a row keeps it whatever its definition's allow list says,
#: unless its deny list names it.
JOB_ROW_TOOL_NAMES: Final = frozenset({"report_agent_job_result"})

#: Where a definition can come from, lowest precedence first.
AGENT_SOURCES: Final = tuple(source.value for source in AgentSource)


class FilterLayer(enum.Enum):
    """The layer that removed a tool."""

    ALWAYS_REMOVED = "always removed"
    DENY_LIST = "deny list"
    ALLOW_LIST = "allow list"
    SOURCE_POLICY = "source policy"
    BACKGROUND = "background"

    @property
    def number(self) -> int:
        """The layer's position, 1 to 5."""
        return list(FilterLayer).index(self) + 1


def _source(value: str) -> str:
    if value not in AGENT_SOURCES:
        raise ValueError(f"unknown agent source {value!r}; expected one of {AGENT_SOURCES}")
    return value


def _patterns(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(cache_hash=True)
class ToolPolicy:
    """What the filter needs to know about one agent.

    ``allow`` is ``None`` when the definition lists no tools (it inherits
    every parent tool) and a tuple of names or patterns otherwise; an empty
    tuple gives the agent no tools. ``depth`` is 0 for a top-level agent.
    """

    allow: tuple[str, ...] | None = attrs.field(default=None, converter=_patterns)
    deny: tuple[str, ...] = attrs.field(default=(), converter=_names)
    source: str = attrs.field(default="builtin", converter=_source)
    background: bool = False
    depth: int = 1
    max_depth: int = 1
    read_only: bool = False
    job_row: bool = False


def tool_policy(
    definition: AgentDefinition,
    *,
    depth: int = 1,
    max_depth: int = 1,
    background: bool | None = None,
    job_row: bool = False,
) -> ToolPolicy:
    """The :class:`ToolPolicy` of an agent of type ``definition`` spawned at ``depth``.

    ``background`` overrides the definition's own flag (a ``Task`` call may run
    any agent in the background). ``permissionMode: plan`` makes the agent
    read-only, as in Claude Code. ``job_row`` marks an agent that runs a job's row.
    """
    return ToolPolicy(
        allow=definition.tools,
        deny=definition.disallowed_tools,
        source=definition.source.value,
        background=definition.background if background is None else background,
        depth=depth,
        max_depth=max_depth,
        read_only=definition.permission_mode is PermissionMode.PLAN,
        job_row=job_row,
    )


def _withheld(value: Mapping[str, str]) -> Mapping[str, str]:
    for source in value:
        _source(source)
    return types.MappingProxyType(dict(value))


@attrs.frozen(cache_hash=True)
class TrustPolicy:
    """Which definition sources may be given tools that write or execute.

    Trust follows who wrote the file: by default every source may (the
    built-ins, the user's own ``~/.claude/agents``, the plugins the user
    installed and enabled, ``--agents``, and the project's files), as in
    Claude Code, whose user and plugin agents keep the tools they list.
    ``trusted_sources`` narrows that (the ``trusted_sources`` setting);
    ``withheld`` maps a source to why it is not trusted in this session
    (the runtime withholds ``project`` while the repository's folder is not
    trusted: see ``subagents trust``).
    """

    trusted_sources: frozenset[str] = attrs.field(
        default=frozenset(AGENT_SOURCES), converter=frozenset
    )
    withheld: Mapping[str, str] = attrs.field(factory=dict, converter=_withheld, hash=False)

    def trusts(self, source: str) -> bool:
        """Whether definitions from ``source`` may write and execute."""
        return source in self.trusted_sources and source not in self.withheld

    def distrust_reason(self, source: str) -> str:
        """The rule that keeps ``source`` from writing and executing (for a decision's reason)."""
        why = self.withheld.get(source)
        if why is not None:
            return f"definitions from source '{source}' are not trusted: {why}"
        trusted = ", ".join(sorted(self.trusted_sources)) or "none"
        return (
            f"definitions from source '{source}' are not trusted to do that: the "
            f"trusted_sources setting lists {trusted}"
        )


@attrs.frozen
class ToolDecision:
    """Whether one parent tool was kept, and a sentence saying why."""

    name: str
    kept: bool
    layer: FilterLayer | None
    reason: str
    #: For a spawn tool granted by an entry like ``Agent(a, b)``: the agent types it may start.
    scope: tuple[str, ...] | None = None

    def __str__(self) -> str:
        if self.kept:
            return f"+ {self.name}: kept ({self.reason})"
        assert self.layer is not None
        layer = f"layer {self.layer.number}, {self.layer.value}"
        return f"- {self.name}: removed by {layer} ({self.reason})"


_SCOPED = re.compile(r"^\s*(?P<tool>[A-Za-z0-9_-]+)\s*\((?P<args>[^()]*)\)\s*$")


def _scoped(pattern: str) -> tuple[str, tuple[str, ...]] | None:
    """``("Agent", ("a", "b"))`` for ``"Agent(a, b)"``; ``None`` for a plain entry."""
    match = _SCOPED.match(pattern)
    if match is None:
        return None
    args = tuple(a.strip() for a in match["args"].split(",") if a.strip())
    return match["tool"], args


def pattern_matches(pattern: str, name: str) -> bool:
    """Whether an allow/deny entry names ``name``.

    Entries are exact names, ``*``, ``prefix*``, ``mcp__server`` (every tool of
    that server) or argument-scoped ``Tool(...)`` (the tool ``Tool``).
    """
    scoped = _scoped(pattern)
    if scoped is not None:
        return scoped[0] == name
    if pattern == "*":
        return True
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    if pattern == name:
        return True
    return _is_mcp_server(pattern) and name.startswith(pattern + "__")


def _is_mcp_server(pattern: str) -> bool:
    head, _, server = pattern.partition("__")
    return head == "mcp" and bool(server) and "__" not in server


def _first_match(patterns: Iterable[str], name: str) -> str | None:
    return next((p for p in patterns if pattern_matches(p, name)), None)


def _first_grant(patterns: Iterable[str], name: str) -> str | None:
    """The first allow entry that grants ``name``; scoped entries grant only spawn tools."""
    for pattern in patterns:
        if _scoped(pattern) is not None and name not in SPAWN_TOOL_NAMES:
            continue
        if pattern_matches(pattern, name):
            return pattern
    return None


def decide(tool: Tool, policy: ToolPolicy, trust: TrustPolicy) -> ToolDecision:
    """Run the five layers for one tool."""
    name = tool.name
    flags = tool.flags

    def removed(layer: FilterLayer, reason: str) -> ToolDecision:
        return ToolDecision(name=name, kept=False, layer=layer, reason=reason)

    if policy.depth >= 1 and name in ALWAYS_EXCLUDED_TOOL_NAMES:
        return removed(
            FilterLayer.ALWAYS_REMOVED,
            "it talks to the user or steers the session, which only the top-level agent may do",
        )
    if name in _DEPTH_LIMITED and policy.depth >= policy.max_depth:
        return removed(
            FilterLayer.ALWAYS_REMOVED,
            f"agent depth limit reached (depth {policy.depth}, max_depth={policy.max_depth}): "
            "this agent may not spawn or manage agents",
        )
    if name in JOB_ROW_TOOL_NAMES and not policy.job_row:
        return removed(
            FilterLayer.ALWAYS_REMOVED,
            "only an agent running a job's row reports a row's result",
        )
    denied_by = _first_match(policy.deny, name)
    if denied_by is not None:
        return removed(FilterLayer.DENY_LIST, f"matches '{denied_by}' in disallowedTools")
    reasons: list[str] = []
    scope: tuple[str, ...] | None = None
    if name in JOB_ROW_TOOL_NAMES:
        reasons.append("this agent runs a job's row, which it reports with this tool")
    elif policy.allow is None:
        reasons.append("the definition inherits every parent tool")
    else:
        allowed_by = _first_grant(policy.allow, name)
        if allowed_by is None:
            listed = f" ({', '.join(policy.allow)})" if policy.allow else " (the list is empty)"
            if any(_scoped(p) is not None and pattern_matches(p, name) for p in policy.allow):
                listed += "; argument-scoped entries grant only spawn tools"
            return removed(FilterLayer.ALLOW_LIST, "not in the definition's tools list" + listed)
        reasons.append(f"matches '{allowed_by}' in tools")
        scoped = _scoped(allowed_by)
        if scoped is not None:
            scope = scoped[1]
    if flags.read_only:
        reasons.append("read-only")
    else:
        if not trust.trusts(policy.source):
            return removed(
                FilterLayer.SOURCE_POLICY,
                f"it writes or executes, and {trust.distrust_reason(policy.source)}",
            )
        if policy.read_only:
            return removed(
                FilterLayer.SOURCE_POLICY, "it writes or executes, and this agent is read-only"
            )
        reasons.append(f"writes or executes; source '{policy.source}' is trusted")
    if policy.background:
        if not flags.background_safe:
            return removed(
                FilterLayer.BACKGROUND,
                "it may need user interaction, and background agents keep only "
                "background-safe tools",
            )
        reasons.append("background-safe")
    return ToolDecision(name=name, kept=True, layer=None, reason="; ".join(reasons), scope=scope)


def filter_tools(
    tools: Iterable[Tool], policy: ToolPolicy, trust: TrustPolicy | None = None
) -> ToolSelection:
    """The tools an agent with ``policy`` gets out of its parent's ``tools``."""
    trust = TrustPolicy() if trust is None else trust
    parent = tuple(tools)
    decisions = tuple(decide(tool, policy, trust) for tool in parent)
    kept = tuple(tool for tool, d in zip(parent, decisions, strict=True) if d.kept)
    names = [tool.name for tool in parent]
    unmatched = tuple(
        dict.fromkeys(
            [
                *(p for p in policy.allow or () if not any(_first_grant([p], n) for n in names)),
                *(p for p in policy.deny if not any(pattern_matches(p, n) for n in names)),
            ]
        )
    )
    return ToolSelection(
        tools=kept, decisions=decisions, policy=policy, trust=trust, unmatched_patterns=unmatched
    )


@final
@attrs.frozen
class ToolSelection:
    """The tools one agent was given, the decision for every parent tool, and call dispatch.

    ``unmatched_patterns`` are allow/deny entries that named no parent tool
    (usually a typo in the definition).
    """

    tools: tuple[Tool, ...]
    decisions: tuple[ToolDecision, ...]
    policy: ToolPolicy
    trust: TrustPolicy
    unmatched_patterns: tuple[str, ...] = ()
    _by_name: dict[str, Tool] = attrs.field(init=False, eq=False, repr=False)
    # Tool name -> the flags it was last kept with at call time (see call).
    _kept_with: dict[str, ToolFlags] = attrs.field(init=False, eq=False, repr=False)
    # shared_specs(), made at its first call.
    _shared_specs: tuple[Mapping[str, Any], ...] | None = attrs.field(
        init=False, eq=False, repr=False
    )
    # agent_specs(): (left out, id(last)) -> (last, the specs), made at the first call for each.
    _agent_specs: dict[
        tuple[str, int], tuple[Mapping[str, Any] | None, tuple[Mapping[str, Any], ...]]
    ] = attrs.field(init=False, eq=False, repr=False)
    # concurrent_names(): left out -> the names.
    _concurrent: dict[str, frozenset[str]] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {tool.name: tool for tool in self.tools})
        object.__setattr__(self, "_kept_with", {})
        object.__setattr__(self, "_shared_specs", None)
        object.__setattr__(self, "_agent_specs", {})
        object.__setattr__(self, "_concurrent", {})

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the kept tools, in parent order."""
        return tuple(tool.name for tool in self.tools)

    def is_available(self, name: str) -> bool:
        """Whether the agent was given the tool ``name``."""
        return name in self._by_name

    def get(self, name: str) -> Tool | None:
        """The kept tool called ``name``, or ``None``."""
        return self._by_name.get(name)

    def decision(self, name: str) -> ToolDecision | None:
        """The decision about the parent tool ``name``, or ``None`` if the parent has none."""
        return next((d for d in self.decisions if d.name == name), None)

    def explain(self) -> str:
        """One line per parent tool saying whether it was kept and why (for ``agents show``)."""
        lines = [str(d) for d in self.decisions]
        if self.unmatched_patterns:
            lines.append(
                "! tool patterns that match no available tool: "
                + ", ".join(self.unmatched_patterns)
            )
        return "\n".join(lines)

    def specs(self) -> list[dict[str, Any]]:
        """The kept tools in the Anthropic tools API format (fresh copies, the caller's)."""
        return [tool_spec(tool) for tool in self.tools]

    def shared_specs(self) -> tuple[Mapping[str, Any], ...]:
        """:meth:`specs`, made once per selection and shared by every agent given it (a
        runtime gives all agents of a type and position the same selection): read them,
        never change them."""
        shared = self._shared_specs
        if shared is None:
            shared = tuple(self.specs())
            object.__setattr__(self, "_shared_specs", shared)
        return shared

    def agent_specs(
        self, *, leave_out: str, last: Mapping[str, Any] | None
    ) -> tuple[Mapping[str, Any], ...]:
        """What a model is offered: :meth:`shared_specs` without the tool ``leave_out``,
        then ``last`` if given (an agent's own spec for that tool). Made once per pair and
        shared, so that the agents of one type hold one tuple between them."""
        key = (leave_out, id(last))
        known = self._agent_specs.get(key)
        if known is not None and known[0] is last:
            return known[1]
        specs = [s for s in self.shared_specs() if s["name"] != leave_out]
        if last is not None:
            specs.append(last)
        made = tuple(specs)
        if len(self._agent_specs) < _MAX_AGENT_SPECS:
            self._agent_specs[key] = (last, made)  # holds ``last``, so its id stays its own
        return made

    def concurrent_names(self, *, leave_out: str) -> frozenset[str]:
        """The kept tools but ``leave_out`` that may run side by side in one turn."""
        names = self._concurrent.get(leave_out)
        if names is None:
            names = self._concurrent[leave_out] = frozenset(
                tool.name
                for tool in self.tools
                if tool.name != leave_out and tool.flags.runs_concurrently
            )
        return names

    async def call(self, name: str, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        """Run a call the model made, enforcing the filter again at call time.

        The filter's decision depends only on the tool's name and flags, the
        policy and the trust, and the last two are frozen: a tool kept at its
        first call is decided again only when its flags are no longer the ones
        it was kept with, so an agent's later calls of it skip the five layers.
        """
        tool = self._by_name.get(name)
        if tool is None:
            return not_available(name, self._hint(self.decision(name)))
        flags = tool.flags
        if self._kept_with.get(name) is not flags:
            decision = decide(tool, self.policy, self.trust)
            if not decision.kept:
                self._kept_with.pop(name, None)
                return not_available(name, self._hint(decision))
            self._kept_with[name] = flags
        if name in _DEPTH_LIMITED and ctx.depth >= self.policy.max_depth:
            return not_available(
                name,
                f"Agent depth limit reached (max_depth={self.policy.max_depth}). "
                "Solve the task yourself.",
            )
        return await dispatch(tool, arguments, ctx)

    def _hint(self, decision: ToolDecision | None) -> str:
        if decision is None or decision.kept:
            return ""
        if decision.layer is FilterLayer.ALWAYS_REMOVED and decision.name in SPAWN_TOOL_NAMES:
            return (
                f"Agent depth limit reached (max_depth={self.policy.max_depth}). "
                "Solve the task yourself."
            )
        return f"It was removed: {decision.reason}."
