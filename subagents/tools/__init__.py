"""Tools for agents: the protocol, the registry, layered filtering, built-ins and approval.

Every agent is given exactly the tools its definition and its position allow
(:func:`filter_tools`, :meth:`ToolRegistry.select`), and the resulting
:class:`ToolSelection` checks that decision again on every call. Calls are
validated against the tool's ``msgspec.Struct`` and never raise for a model's
mistake: they return an error :class:`ToolResult`. The built-in file tools are
confined to the workspace root, ``Bash`` is bounded in time and output, and
tools that need approval ask up the agent tree through an :class:`Approver`.
The lifecycle tools (:func:`lifecycle_tools`: ``spawn_agent``, ``send_input``,
``wait``, ``close_agent``, ``resume_agent``, ``Task``/``Agent``, ``TaskOutput``,
``SendMessage``)
drive other agents through an :class:`AgentHost`, which the runtime implements.
"""

from subagents.agents import ApprovalMode
from subagents.tools._approval import (
    ApprovalCallback,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalRouter,
    Approver,
    CallbackApprover,
)
from subagents.tools._builtin import (
    BUILTIN_TOOL_NAMES,
    BashArgs,
    BashTool,
    CommandOutcome,
    EditArgs,
    EditTool,
    GlobArgs,
    GlobTool,
    GrepArgs,
    GrepTool,
    LSArgs,
    LSTool,
    ReadArgs,
    ReadTool,
    WebFetchArgs,
    WebFetchTool,
    WebSearchArgs,
    WebSearchTool,
    WriteArgs,
    WriteTool,
    builtin_registry,
    builtin_tools,
    run_command,
)
from subagents.tools._context import ToolContext
from subagents.tools._dispatch import ToolArguments, dispatch
from subagents.tools._exceptions import (
    ToolArgumentsError,
    ToolError,
    ToolRegistrationError,
    UnsupportedFileError,
    WorkspaceError,
    WorkspaceEscapeError,
)
from subagents.tools._filter import (
    AGENT_SOURCES,
    ALWAYS_EXCLUDED_TOOL_NAMES,
    SPAWN_TOOL_NAMES,
    FilterLayer,
    ToolDecision,
    ToolPolicy,
    ToolSelection,
    TrustPolicy,
    decide,
    filter_tools,
    pattern_matches,
    tool_policy,
)
from subagents.tools._lifecycle import (
    CALLER_RESERVE_SECONDS,
    DEFAULT_AGENT_TYPE,
    FORK_NOTE,
    SEND_INPUT_WAIT_SECONDS,
    AgentHost,
    AgentReport,
    CloseAgentArgs,
    CloseAgentTool,
    ResumeAgentArgs,
    ResumeAgentTool,
    SendInputArgs,
    SendInputTool,
    SendMessageArgs,
    SendMessageTool,
    SpawnAgentArgs,
    SpawnAgentTool,
    SpawnedAgent,
    TaskArgs,
    TaskOutputArgs,
    TaskOutputTool,
    TaskTool,
    WaitArgs,
    WaitBounds,
    WaitTool,
    format_agent_result,
    lifecycle_tools,
)
from subagents.tools._processes import RUN_MARKER_ENV, ProcessSweep, kill_group
from subagents.tools._protocol import NO_CAPACITY, Tool, ToolFlags, ToolResult
from subagents.tools._registry import ToolRegistry, validate_tool_name
from subagents.tools._schema import input_schema, tool_spec
from subagents.tools._secrets import (
    MIN_SECRET_CHARS,
    REDACTED,
    SECRET_ENV_VARS,
    SecretRedactor,
    child_environment,
    is_secret_key,
    is_secret_variable,
    mask_text,
    secret_values,
)
from subagents.tools._turns import CallTurn, call_turns
from subagents.tools._validation import decode_arguments
from subagents.tools._workspace import Workspace, WorkspacePath

__all__ = [
    "DEFAULT_AGENT_TYPE",
    "tool_policy",
    # protocol and values
    "NO_CAPACITY",
    "CallTurn",
    "call_turns",
    "Tool",
    "ToolArguments",
    "ToolContext",
    "ToolFlags",
    "ToolResult",
    # registry, schemas, validation, dispatch
    "ToolRegistry",
    "decode_arguments",
    "dispatch",
    "input_schema",
    "tool_spec",
    "validate_tool_name",
    # filtering
    "AGENT_SOURCES",
    "ALWAYS_EXCLUDED_TOOL_NAMES",
    "SPAWN_TOOL_NAMES",
    "FilterLayer",
    "ToolDecision",
    "ToolPolicy",
    "ToolSelection",
    "TrustPolicy",
    "decide",
    "filter_tools",
    "pattern_matches",
    # approval
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalRouter",
    "Approver",
    "CallbackApprover",
    # workspace confinement
    "Workspace",
    "WorkspacePath",
    # secrets and the processes of a command
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_ENV_VARS",
    "SecretRedactor",
    "child_environment",
    "is_secret_key",
    "is_secret_variable",
    "mask_text",
    "secret_values",
    "RUN_MARKER_ENV",
    "ProcessSweep",
    "kill_group",
    # built-in tools
    "BUILTIN_TOOL_NAMES",
    "BashArgs",
    "BashTool",
    "CommandOutcome",
    "EditArgs",
    "EditTool",
    "GlobArgs",
    "GlobTool",
    "GrepArgs",
    "GrepTool",
    "LSArgs",
    "LSTool",
    "ReadArgs",
    "ReadTool",
    "WriteArgs",
    "WebFetchArgs",
    "WebFetchTool",
    "WebSearchArgs",
    "WebSearchTool",
    "WriteTool",
    "builtin_registry",
    "builtin_tools",
    "run_command",
    # lifecycle tools and the runtime they talk to
    "CALLER_RESERVE_SECONDS",
    "FORK_NOTE",
    "SEND_INPUT_WAIT_SECONDS",
    "AgentHost",
    "AgentReport",
    "SpawnedAgent",
    "WaitBounds",
    "format_agent_result",
    "lifecycle_tools",
    "CloseAgentArgs",
    "CloseAgentTool",
    "ResumeAgentArgs",
    "ResumeAgentTool",
    "SendInputArgs",
    "SendInputTool",
    "SendMessageArgs",
    "SendMessageTool",
    "SpawnAgentArgs",
    "SpawnAgentTool",
    "TaskArgs",
    "TaskOutputArgs",
    "TaskOutputTool",
    "TaskTool",
    "WaitArgs",
    "WaitTool",
    # exceptions
    "ToolArgumentsError",
    "ToolError",
    "ToolRegistrationError",
    "UnsupportedFileError",
    "WorkspaceError",
    "WorkspaceEscapeError",
]
