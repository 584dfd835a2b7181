"""The agent definition value: everything the runtime needs to run one agent type.

An :class:`AgentDefinition` is immutable and complete: loaders build it from
Markdown, YAML, JSON or code, and the runtime reads it without going back to the
file. Fields that a user did not set keep ``None`` (or an empty tuple) so the
runtime can apply its own defaults and tell "not set" from "set to the default".
"""

from __future__ import annotations

import enum
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

__all__ = [
    "McpServerRef",
    "AgentDefinition",
    "AgentSource",
    "ApprovalMode",
    "HookSpec",
    "InputSpec",
    "InputType",
    "MemoryScope",
    "ModelSettings",
    "OutputSpec",
    "PermissionMode",
    "RunLimits",
    "freeze_json",
    "thaw_json",
]

#: A value that fits in JSON, after :func:`freeze_json` (mappings are read-only
#: proxies, arrays are tuples).
JSONValue = Any


class AgentSource(enum.Enum):
    """Where a definition came from; a higher :attr:`priority` wins for one name."""

    BUILTIN = "builtin"
    PLUGIN = "plugin"
    USER = "user"
    PROJECT = "project"
    CLI = "cli"

    @property
    def priority(self) -> int:
        """0 for built-ins up to 4 for the command line (the issue's scope order)."""
        return _SOURCE_PRIORITY[self]


_SOURCE_PRIORITY = {
    AgentSource.BUILTIN: 0,
    AgentSource.PLUGIN: 1,
    AgentSource.USER: 2,
    AgentSource.PROJECT: 3,
    AgentSource.CLI: 4,
}


class PermissionMode(enum.Enum):
    """Claude Code's ``permissionMode`` values, spelled as Claude Code spells them."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    DONT_ASK = "dontAsk"
    BYPASS_PERMISSIONS = "bypassPermissions"
    PLAN = "plan"


class ApprovalMode(enum.Enum):
    """Where an agent's approval requests go (``approvalMode``).

    The definition names it and the agent's approval router
    (:class:`subagents.tools.ApprovalRouter`) answers by it: one enum, used by
    both layers.
    """

    #: Forward requests to the parent, up to the embedder or the CLI prompt.
    ROUTE_TO_PARENT = "route_to_parent"
    #: Never ask anyone: requests are denied (read-only agents).
    SUPPRESS = "suppress"
    #: Approve without asking (bypass-permissions agents). The seeds'
    #: ``auto_approve_in_sandbox`` is read as :attr:`ROUTE_TO_PARENT`, with a
    #: warning: subagents runs no OS sandbox to approve inside of.
    AUTO_APPROVE = "auto_approve"


class MemoryScope(enum.Enum):
    """Claude Code's ``memory`` field: which ``MEMORY.md`` the agent keeps."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"


class InputType(enum.Enum):
    """The type of one typed input (``inputConfig.inputs.<name>.type``)."""

    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    STRING_ARRAY = "string[]"
    NUMBER_ARRAY = "number[]"

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema fragment for a value of this type."""
        if self is InputType.STRING_ARRAY:
            return {"type": "array", "items": {"type": "string"}}
        if self is InputType.NUMBER_ARRAY:
            return {"type": "array", "items": {"type": "number"}}
        return {"type": self.value}


def freeze_json(value: Any) -> JSONValue:
    """Return a read-only deep copy of a JSON-like value (dicts become proxies, lists tuples)."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({str(k): freeze_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze_json(v) for v in value)
    return value


def thaw_json(value: JSONValue) -> Any:
    """Return a plain, mutable ``dict``/``list`` copy of a frozen JSON-like value."""
    if isinstance(value, Mapping):
        return {k: thaw_json(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw_json(v) for v in value]
    return value


def _tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


def _tuple_or_none(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    frozen: Mapping[str, Any] = freeze_json(value)
    return frozen


def _frozen_default(value: Any) -> Any:
    return freeze_json(value)


def _frozen_tuple(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(freeze_json(v) for v in values)


@attrs.frozen
class ModelSettings:
    """Sampling settings (``modelConfig``); ``None`` leaves the provider default."""

    temperature: float | None = None
    top_p: float | None = None
    #: Extended thinking budget in tokens: -1 unlimited, 0 disabled.
    thinking_budget: int | None = None


@attrs.frozen
class RunLimits:
    """Per-agent limits (``maxTurns``, ``runConfig``); ``None`` uses the runtime default."""

    max_turns: int | None = None
    max_time_seconds: float | None = None
    #: After a timeout or max turns, the one last turn's budget (only
    #: ``complete_task`` offered).
    grace_period_seconds: float | None = None


@attrs.frozen
class InputSpec:
    """One typed input of an agent; its name is usable as ``${name}`` in templates."""

    name: str
    type: InputType = InputType.STRING
    description: str = ""
    required: bool = False
    default: JSONValue = attrs.field(default=None, converter=_frozen_default)
    #: Allowed values (a JSON Schema ``enum``); empty means any value.
    choices: tuple[JSONValue, ...] = attrs.field(default=(), converter=_frozen_tuple)

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of this input, with its description, default and choices."""
        schema = self.type.json_schema()
        if self.description:
            schema["description"] = self.description
        if self.choices:
            schema["enum"] = thaw_json(self.choices)
        if self.default is not None:
            schema["default"] = thaw_json(self.default)
        return schema


@attrs.frozen
class OutputSpec:
    """Structured output (``outputConfig``): the ``complete_task`` argument and its schema."""

    name: str
    description: str = ""
    #: A read-only JSON Schema; use :meth:`as_json_schema` for a plain dict.
    schema: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)

    def as_json_schema(self) -> dict[str, Any]:
        """A fresh, plain-``dict`` copy of :attr:`schema` for validators."""
        thawed: dict[str, Any] = thaw_json(self.schema)
        return thawed


@attrs.frozen
class HookSpec:
    """One command hook scoped to an agent (frontmatter ``hooks``)."""

    #: ``PreToolUse``, ``PostToolUse``, ``SubagentStart`` or ``SubagentStop``
    #: (a frontmatter ``Stop`` hook becomes ``SubagentStop``).
    event: str
    command: str
    #: Tool-name pattern for tool events; ``None`` matches every tool.
    matcher: str | None = None
    timeout_seconds: float | None = None


def _frozen_config(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else types.MappingProxyType(dict(value))


@attrs.frozen
class McpServerRef:
    """One entry of a definition's ``mcpServers``: a configured server's name, or inline.

    ``config`` is the inline server table as written (``{command, args, env}``),
    checked when the agent starts; ``None`` names a server the runtime has
    configured (``.mcp.json``, ``[mcp_servers.NAME]``).
    """

    name: str
    config: Mapping[str, Any] | None = attrs.field(
        default=None, converter=_frozen_config, eq=False, hash=False
    )


@attrs.frozen
class AgentDefinition:
    """Everything the runtime needs to run one agent type.

    ``system_prompt`` may be a template: ``${cwd}``, ``${agent_type}``,
    ``${prompt}`` and the names of :attr:`inputs` are substituted when the agent
    starts (see :func:`subagents.agents.render_template`); any other ``${...}``
    is left as written. ``tools`` is the allow list: ``None`` inherits every
    tool, ``("*",)`` is every tool too, ``()`` is none, and entries may be
    patterns such as ``mcp__github__*``. ``model`` is an alias (``sonnet``), a
    full model id, or ``inherit``; :class:`~subagents.agents.ModelAliases`
    resolves it.
    """

    #: The agent type, used to spawn it (``Explore``, ``code-reviewer``).
    name: str
    #: When to use this agent; shown to the lead.
    description: str
    system_prompt: str = ""
    display_name: str | None = None
    #: Template of the first user message (``promptConfig.query``); ``None``
    #: sends the spawn prompt as it is.
    query: str | None = None
    tools: tuple[str, ...] | None = attrs.field(default=None, converter=_tuple_or_none)
    disallowed_tools: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    model: str = "inherit"
    model_settings: ModelSettings = ModelSettings()
    run_limits: RunLimits = RunLimits()
    inputs: tuple[InputSpec, ...] = attrs.field(default=(), converter=_tuple)
    output: OutputSpec | None = None
    #: Give the agent the parent's conversation before its task.
    fork_context: bool = False
    #: Reminder injected into the agent's context every turn.
    critical_reminder: str | None = None
    permission_mode: PermissionMode | None = None
    approval_mode: ApprovalMode | None = None
    #: Always run as a background task.
    background: bool = False
    color: str | None = None
    skills: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    memory: MemoryScope | None = None
    hooks: tuple[HookSpec, ...] = attrs.field(default=(), converter=_tuple)
    mcp_servers: tuple[McpServerRef, ...] | None = attrs.field(
        default=None, converter=_tuple_or_none
    )
    #: First user turn submitted automatically when the agent runs as the lead.
    initial_prompt: str | None = None
    disabled_features: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: Nicknames for agents of this type, tried in order before the runtime's
    #: own pool (Codex's ``nickname_candidates``); empty uses the pool.
    nickname_candidates: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: Definitions built in code default to the highest scope, like ``--agents``.
    source: AgentSource = AgentSource.CLI
    #: The file it was read from; ``None`` for built-ins and ``--agents``.
    path: Path | None = None
    #: The plugin that ships it, for :attr:`AgentSource.PLUGIN`.
    plugin: str | None = None

    @property
    def label(self) -> str:
        """The name to show a person: :attr:`display_name` or :attr:`name`."""
        return self.display_name or self.name

    @property
    def inherits_all_tools(self) -> bool:
        """True when the allow list does not restrict tools (absent or ``*``)."""
        return self.tools is None or "*" in self.tools

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of :attr:`inputs`, for a spawn tool's parameters."""
        return {
            "type": "object",
            "properties": {spec.name: spec.json_schema() for spec in self.inputs},
            "required": [spec.name for spec in self.inputs if spec.required],
        }
