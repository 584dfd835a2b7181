"""The agent runtime: the agent loop, model providers, results and loop events.

Each agent runs a loop: ask the model, run the tools it asks for, repeat,
until it is done or a limit stops it. :func:`run_agent` runs one run of an
agent on a :class:`Conversation`; :func:`agent_behavior` makes it a kernel
actor. Providers implement one small :class:`Provider` protocol:
:class:`AnthropicProvider` (the official SDK, streaming) and
:class:`ScriptedProvider` (deterministic and offline, the default without an
API key)::

    task = prepare_task(definition, "Find the entry point", cwd=root)
    async with default_provider() as provider:
        spec = AgentSpec(
            definition=definition,
            provider=provider,
            model=resolve_model(definition=definition).model,
            system_prompt=task.system_prompt,
            tools=registry.select(policy),
            limits=Limits.for_definition(definition),
        )
        result = await run_agent(spec, task.conversation)

Most programs use the runtime instead, which does all of this for every agent
of a session and adds what a session needs: :func:`open_runtime` gives a
:class:`Runtime` (spawn, send input, wait, close, resume, progress), with
configuration (:func:`load_config`, :class:`RuntimeConfig`), hooks
(:class:`HookRunner`), transcripts (:class:`TranscriptWriter`,
:func:`load_transcript`), logging (:func:`open_log`) and progress
(:class:`ProgressTracker`)::

    async with open_runtime(cwd=project) as rt:
        agent = await rt.spawn("Explore", "Where is the config parsed?")
        await rt.wait([agent.agent_id], timeout=300)
        print(rt.result(agent.agent_id))
"""

import importlib
import typing
import warnings

from subagents.runtime._agent_record import AgentHandle
from subagents.runtime._behavior import (
    AgentActor,
    NoticeFilter,
    ResultCallback,
    agent_behavior,
    as_input,
)
from subagents.runtime._collector import CollectorGuard
from subagents.runtime._complete_task import (
    COMPLETE_TASK,
    CompleteTask,
    Completion,
    complete_task_tool,
)
from subagents.runtime._config.defaults import (
    DEFAULT_CANCEL_TIMEOUT,
    DEFAULT_CLOSE_GRACE_PERIOD,
    DEFAULT_GRACE_PERIOD_SECONDS,
    DEFAULT_MAILBOX_SIZE,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_THREADS,
    DEFAULT_MAX_TIME_SECONDS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TURNS,
    DEFAULT_MODEL,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_STATE_DIR,
    DEFAULT_TRUSTED_SOURCES,
    DEFAULT_WAIT_MAX_SECONDS,
    DEFAULT_WAIT_MIN_SECONDS,
    DEFAULT_WAIT_SECONDS,
    DiskErrorPolicy,
    LogLevel,
    ProviderChoice,
    stderr_level_for,
)
from subagents.runtime._config.env import env_variable_names
from subagents.runtime._config.limits import Limits
from subagents.runtime._config.loader import find_project_config, load_config
from subagents.runtime._config.trust import (
    UNTRUSTED_PROJECT_KEYS,
    CatalogRestriction,
    ProjectTrust,
    restrict_catalog,
    trust_notice,
)
from subagents.runtime._config.trust_check import check_project_trust
from subagents.runtime._config.trusted_folders import (
    TrustedFolder,
    TrustStore,
    load_trust_store,
    project_folder,
)
from subagents.runtime._config.values import (
    CollectorConfig,
    LimitsConfig,
    LoggingConfig,
    RuntimeConfig,
    TranscriptsConfig,
    WebConfig,
)
from subagents.runtime._events import (
    ActivationStarted,
    ApprovalDecided,
    ApprovalRequested,
    GracePeriodEnded,
    GracePeriodStarted,
    Publisher,
    RunFinished,
    TextChunk,
    ThoughtChunk,
    ToolCallEnded,
    ToolCallStarted,
    TurnCompleted,
    TurnStarted,
    UsageReported,
)
from subagents.runtime._exceptions import (
    AgentBusy,
    AgentInUse,
    AgentNotLoaded,
    AgentRunFailed,
    AgentRuntimeError,
    AuthenticationFailed,
    BadRequest,
    ConfigError,
    HookConfigError,
    InvalidInputs,
    InvalidJobResult,
    InvalidLimits,
    InvalidOutputSchema,
    Overloaded,
    ProgressNotFound,
    ProviderConnectionError,
    ProviderError,
    ProviderNotOpen,
    ProviderTimeout,
    RateLimited,
    ResumeNotAllowed,
    RuntimeClosed,
    ScriptError,
    ServerError,
    SpawnNotAllowed,
    StreamError,
    TranscriptError,
    TranscriptNotFound,
    TranscriptWriteError,
    provider_error,
)
from subagents.runtime._fork import fork_context, fork_messages
from subagents.runtime._hooks.commands import (
    DEFAULT_HOOK_TIMEOUT,
    HookEvent,
    HookPayload,
)
from subagents.runtime._hooks.output import HookOutput, HookSpecificOutput
from subagents.runtime._hooks.run import (
    SubagentRunHooks,
    subagent_run_hooks,
)
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.tasks import IdentifyMember, task_hook_gate
from subagents.runtime._hooks.values import (
    Hook,
    HookFired,
    HookFunction,
    HookOutcome,
    HookReply,
    HookResult,
    HookRunnerStatistics,
    hooks_from_settings,
    hooks_from_specs,
)
from subagents.runtime._jobs.ray import RayBackend, RayOptions
from subagents.runtime._jobs.rows import ROW_OUTPUT_NAME, is_transient_error, run_row
from subagents.runtime._logging import (
    LogStatistics,
    RuntimeLog,
    is_secret_key,
    mask_text,
    open_log,
    redact,
)
from subagents.runtime._loop import AgentSpec, RunControl, grace_notice, run_agent
from subagents.runtime._mcp import definition_mcp_tools, runtime_mcp_servers
from subagents.runtime._messages import (
    Block,
    Conversation,
    Message,
    Origin,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebFetchToolResultBlock,
    WebSearchToolResultBlock,
)
from subagents.runtime._model import ModelChoice, ModelSource, resolve_model
from subagents.runtime._open import new_session_id, open_runtime
from subagents.runtime._progress.text import describe_tool_call
from subagents.runtime._progress.tracker import ProgressTracker, agents_to_keep, follow
from subagents.runtime._progress.values import (
    Activity,
    AgentProgress,
    ProgressStatistics,
    SubtreeTotals,
)
from subagents.runtime._providers.anthropic import (
    AnthropicProvider,
    encode_messages,
    request_params,
)
from subagents.runtime._providers.base import (
    ModelRequest,
    ModelResponse,
    Provider,
    StopReason,
    StreamEvent,
    StreamSink,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from subagents.runtime._providers.default import default_provider
from subagents.runtime._providers.reply import Reply, ReplyPolicy, ScriptedToolCall
from subagents.runtime._providers.script import Script, load_scripts
from subagents.runtime._providers.scripted import (
    ScriptedProvider,
    SharedTimer,
    default_policy,
    sample_for_schema,
)
from subagents.runtime._result import AgentResult, RunStatus, TerminateReason
from subagents.runtime._runtime import Runtime, RuntimeStatistics, Teammate
from subagents.runtime._task import PreparedTask, check_inputs, prepare_task
from subagents.runtime._transcripts.file import TranscriptFile, open_append
from subagents.runtime._transcripts.load import (
    Transcript,
    TranscriptInfo,
    TranscriptProblem,
    find_transcript,
    list_transcripts,
    load_transcript,
    parse_transcript,
)
from subagents.runtime._transcripts.records import (
    ClosedRecord,
    FinalStatus,
    MessageRecord,
    MetaRecord,
    ResultRecord,
    TranscriptRecord,
    transcript_path,
)
from subagents.runtime._transcripts.retention import (
    PrunedSession,
    clean_old_transcripts,
    is_session_id,
)
from subagents.runtime._transcripts.writer import (
    TranscriptWriter,
    TranscriptWriterStatistics,
)

__all__ = [
    # the runtime
    "open_runtime",
    "Runtime",
    "RuntimeStatistics",
    "Teammate",
    "AgentHandle",
    # agent jobs
    "run_row",
    "is_transient_error",
    "ROW_OUTPUT_NAME",
    "new_session_id",
    "definition_mcp_tools",
    "runtime_mcp_servers",
    # configuration
    "RuntimeConfig",
    "LimitsConfig",
    "LoggingConfig",
    "TranscriptsConfig",
    "WebConfig",
    "CollectorConfig",
    "CollectorGuard",
    "ProviderChoice",
    "LogLevel",
    "load_config",
    "find_project_config",
    # workspace trust
    "CatalogRestriction",
    "ProjectTrust",
    "TrustStore",
    "TrustedFolder",
    "UNTRUSTED_PROJECT_KEYS",
    "check_project_trust",
    "load_trust_store",
    "project_folder",
    "restrict_catalog",
    "trust_notice",
    "env_variable_names",
    "stderr_level_for",
    "DEFAULT_CANCEL_TIMEOUT",
    "DEFAULT_CLOSE_GRACE_PERIOD",
    "DEFAULT_MAILBOX_SIZE",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_THREADS",
    "DEFAULT_RETENTION_DAYS",
    "DEFAULT_STATE_DIR",
    "DEFAULT_TRUSTED_SOURCES",
    "DEFAULT_WAIT_MAX_SECONDS",
    "DEFAULT_WAIT_MIN_SECONDS",
    "DEFAULT_WAIT_SECONDS",
    # hooks
    "Hook",
    "HookEvent",
    "HookFired",
    "HookFunction",
    "HookOutcome",
    "HookOutput",
    "HookPayload",
    "HookReply",
    "HookResult",
    "HookRunner",
    "HookRunnerStatistics",
    "HookSpecificOutput",
    "SubagentRunHooks",
    "hooks_from_settings",
    "hooks_from_specs",
    "subagent_run_hooks",
    "task_hook_gate",
    "IdentifyMember",
    "DEFAULT_HOOK_TIMEOUT",
    # transcripts
    "TranscriptWriter",
    "TranscriptWriterStatistics",
    "TranscriptFile",
    "TranscriptRecord",
    "MetaRecord",
    "MessageRecord",
    "ResultRecord",
    "ClosedRecord",
    "FinalStatus",
    "DiskErrorPolicy",
    "Transcript",
    "TranscriptInfo",
    "TranscriptProblem",
    "transcript_path",
    "open_append",
    "load_transcript",
    "parse_transcript",
    "find_transcript",
    "list_transcripts",
    "PrunedSession",
    "clean_old_transcripts",
    "is_session_id",
    # logging
    "RuntimeLog",
    "LogStatistics",
    "open_log",
    "redact",
    "mask_text",
    "is_secret_key",
    # progress
    "ProgressTracker",
    "ProgressStatistics",
    "AgentProgress",
    "Activity",
    "SubtreeTotals",
    "describe_tool_call",
    "follow",
    "agents_to_keep",
    # the loop
    "AgentSpec",
    "Limits",
    "RunControl",
    "run_agent",
    "grace_notice",
    "agent_behavior",
    "as_input",
    "AgentActor",
    "NoticeFilter",
    "ResultCallback",
    # starting an agent
    "PreparedTask",
    "prepare_task",
    "check_inputs",
    "ModelChoice",
    "ModelSource",
    "resolve_model",
    "fork_context",
    "fork_messages",
    # results
    "AgentResult",
    "RunStatus",
    "TerminateReason",
    # completion
    "COMPLETE_TASK",
    "CompleteTask",
    "Completion",
    "complete_task_tool",
    # conversations
    "Block",
    "Conversation",
    "Message",
    "Origin",
    "RedactedThinkingBlock",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "WebFetchToolResultBlock",
    "WebSearchToolResultBlock",
    # providers
    "Provider",
    "ModelRequest",
    "ModelResponse",
    "StopReason",
    "StreamEvent",
    "StreamSink",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "Usage",
    "AnthropicProvider",
    "encode_messages",
    "request_params",
    "ScriptedProvider",
    "ReplyPolicy",
    "Reply",
    "Script",
    "ScriptedToolCall",
    "SharedTimer",
    "default_policy",
    "load_scripts",
    "sample_for_schema",
    "default_provider",
    # events
    "Publisher",
    "ActivationStarted",
    "TurnStarted",
    "TurnCompleted",
    "ToolCallStarted",
    "ToolCallEnded",
    "ApprovalRequested",
    "ApprovalDecided",
    "TextChunk",
    "ThoughtChunk",
    "UsageReported",
    "GracePeriodStarted",
    "GracePeriodEnded",
    "RunFinished",
    # defaults
    "DEFAULT_GRACE_PERIOD_SECONDS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TIME_SECONDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODEL",
    "DEFAULT_REQUEST_TIMEOUT",
    # errors
    "AgentRuntimeError",
    "ProviderError",
    "RateLimited",
    "Overloaded",
    "ServerError",
    "BadRequest",
    "AuthenticationFailed",
    "ProviderTimeout",
    "ProviderConnectionError",
    "StreamError",
    "ScriptError",
    "ProviderNotOpen",
    "InvalidInputs",
    "InvalidJobResult",
    "InvalidOutputSchema",
    "InvalidLimits",
    "AgentInUse",
    "AgentRunFailed",
    "SpawnNotAllowed",
    "AgentBusy",
    "AgentNotLoaded",
    "ResumeNotAllowed",
    "RuntimeClosed",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptWriteError",
    "ProgressNotFound",
    "ConfigError",
    "HookConfigError",
    "provider_error",
    # the Ray backend of agent jobs
    "RayBackend",
    "RayOptions",
]


#: Names that moved to :mod:`subagents.demo`; still importable from here, with a warning.
_MOVED_TO_DEMO = frozenset({"DEFAULT_SURVEY_LATENCY", "survey_policies"})

#: The scripted provider's reply callable was ``Policy`` (the bus's overflow
#: policy is :class:`subagents.actors.OverflowPolicy`): old name -> new name.
_RENAMED: typing.Final = {"Policy": "ReplyPolicy"}

#: Names whose one public home is :mod:`subagents.tools`.
_MOVED_TO_TOOLS = frozenset({"REDACTED", "SECRET_ENV_VARS"})

#: Constants no user sets or needs (file and variable names, format versions,
#: internal bounds, marker strings), once exported from here: name -> private module.
_INTERNAL: typing.Final = {
    "ACTIVITY_LIMIT": "subagents.runtime._progress.values",
    "API_KEY_ENV": "subagents.runtime._config.defaults",
    "BASE_URL_ENV": "subagents.runtime._config.defaults",
    "DEFAULT_HOOK_OUTPUT_CAP": "subagents.runtime._hooks.commands",
    "DEFAULT_MAX_AGENTS": "subagents.runtime._progress.tracker",
    "DEFAULT_MAX_BUFFERED_LINES": "subagents.runtime._transcripts.writer",
    "DEFAULT_STOP_HOOKS_GRACE": "subagents.runtime._hooks.run",
    "ENV_PREFIX": "subagents.runtime._config.defaults",
    "FORK_BOUNDARY": "subagents.runtime._fork",
    "FORMAT_VERSION": "subagents.runtime._transcripts.records",
    "INBOX_CAPACITY": "subagents.runtime._config.defaults",
    "LOG_FILE_SUFFIX": "subagents.runtime._logging",
    "LOG_LEVELS": "subagents.runtime._config.defaults",
    "MAX_ERROR_CHARS": "subagents.runtime._config.defaults",
    "MAX_STOP_BLOCKS": "subagents.runtime._hooks.run",
    "MODEL_ENV": "subagents.runtime._config.defaults",
    "PROJECT_CONFIG_NAME": "subagents.runtime._config.defaults",
    "TRUST_STORE_PATH": "subagents.runtime._config.defaults",
    "USER_CONFIG_PATH": "subagents.runtime._config.defaults",
}


def __getattr__(name: str) -> typing.Any:
    # Old names, still served with a DeprecationWarning that says where they went.
    if name in _MOVED_TO_DEMO:
        # The offline survey policies are the demo's now (subagents.demo), a layer above
        # the runtime: imported on first use only, so the runtime never loads the demo.
        warnings.warn(
            f"subagents.runtime.{name} moved to subagents.demo.{name}; "
            "import it from subagents.demo",
            DeprecationWarning,
            stacklevel=2,
        )
        import subagents.demo

        return getattr(subagents.demo, name)
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"subagents.runtime.{name} is deprecated: it is subagents.runtime.{new} now",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    if name in _MOVED_TO_TOOLS:
        warnings.warn(
            f"subagents.runtime.{name} is deprecated: import subagents.tools.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        import subagents.tools

        return getattr(subagents.tools, name)
    if name in _INTERNAL:
        warnings.warn(
            f"subagents.runtime.{name} is deprecated: it is internal to the runtime "
            "and will be removed",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_INTERNAL[name]), name)
    raise AttributeError(f"module 'subagents.runtime' has no attribute {name!r}")
