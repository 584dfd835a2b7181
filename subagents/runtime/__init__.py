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
"""

from subagents.runtime._anthropic import AnthropicProvider, encode_messages, request_params
from subagents.runtime._behavior import ResultCallback, agent_behavior, as_input
from subagents.runtime._complete_task import CompleteTask, Completion, complete_task_tool
from subagents.runtime._config import (
    API_KEY_ENV,
    BASE_URL_ENV,
    COMPLETE_TASK,
    DEFAULT_GRACE_PERIOD_SECONDS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TIME_SECONDS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TURNS,
    DEFAULT_MODEL,
    DEFAULT_REQUEST_TIMEOUT,
    INBOX_CAPACITY,
    MAX_ERROR_CHARS,
    MODEL_ENV,
    Limits,
)
from subagents.runtime._default import default_provider
from subagents.runtime._events import (
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
    AgentRunFailed,
    AgentRuntimeError,
    AuthenticationFailed,
    BadRequest,
    InvalidInputs,
    InvalidLimits,
    InvalidOutputSchema,
    Overloaded,
    ProviderConnectionError,
    ProviderError,
    ProviderNotOpen,
    ProviderTimeout,
    RateLimited,
    ScriptError,
    ServerError,
    StreamError,
    provider_error,
)
from subagents.runtime._fork import FORK_BOUNDARY, fork_context, fork_messages
from subagents.runtime._loop import AgentSpec, RunControl, grace_notice, run_agent
from subagents.runtime._messages import (
    Block,
    Conversation,
    Message,
    Origin,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from subagents.runtime._model import ModelChoice, ModelSource, resolve_model
from subagents.runtime._provider import (
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
from subagents.runtime._result import AgentResult, RunStatus, TerminateReason
from subagents.runtime._scripted import (
    Policy,
    Reply,
    Script,
    ScriptedProvider,
    ScriptedToolCall,
    SharedTimer,
    default_policy,
    load_scripts,
    sample_for_schema,
)
from subagents.runtime._task import PreparedTask, check_inputs, prepare_task

__all__ = [
    # the loop
    "AgentSpec",
    "Limits",
    "RunControl",
    "run_agent",
    "grace_notice",
    "agent_behavior",
    "as_input",
    "ResultCallback",
    # starting an agent
    "PreparedTask",
    "prepare_task",
    "check_inputs",
    "ModelChoice",
    "ModelSource",
    "resolve_model",
    "FORK_BOUNDARY",
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
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
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
    "Policy",
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
    "TurnStarted",
    "TurnCompleted",
    "ToolCallStarted",
    "ToolCallEnded",
    "TextChunk",
    "ThoughtChunk",
    "UsageReported",
    "GracePeriodStarted",
    "GracePeriodEnded",
    "RunFinished",
    # defaults
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_GRACE_PERIOD_SECONDS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_TIME_SECONDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODEL",
    "DEFAULT_REQUEST_TIMEOUT",
    "INBOX_CAPACITY",
    "MAX_ERROR_CHARS",
    "MODEL_ENV",
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
    "InvalidOutputSchema",
    "InvalidLimits",
    "AgentRunFailed",
    "provider_error",
]
