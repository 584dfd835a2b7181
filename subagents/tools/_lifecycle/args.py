"""The arguments of the lifecycle tools: one ``msgspec.Struct`` per tool.

The registry validates a model's call against these before any tool runs, and
their field descriptions become the tools' input schemas, so what the model is
told and what is checked are the same text. ``Task`` and ``Agent`` share
:class:`TaskArgs`.
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from subagents.tools._lifecycle.host import DEFAULT_AGENT_TYPE

#: ``TaskOutput``'s ``timeout`` when the model gives none, and the largest it
#: accepts, in milliseconds: Claude Code's (its TaskOutput tool takes ``task_id``,
#: ``block``, default true, and ``timeout`` in ms, default 30000, at most 600000;
#: as recorded in github.com/weiesky/cc-viewer, concepts/en/Tool-TaskOutput.md).
TASK_OUTPUT_DEFAULT_MS: Final = 30_000
TASK_OUTPUT_MAX_MS: Final = 600_000

__all__ = [
    "TASK_OUTPUT_DEFAULT_MS",
    "TASK_OUTPUT_MAX_MS",
    "CloseAgentArgs",
    "ResumeAgentArgs",
    "SendInputArgs",
    "SpawnAgentArgs",
    "TaskArgs",
    "TaskOutputArgs",
    "WaitArgs",
]

_Id = Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="An agent id.")]
_TaskId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=256,
        description="The agent id a Task call returned (agent_id is an alias of task_id).",
    ),
]
_Model = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=256,
        description=(
            "Model for the agent: an alias (haiku, sonnet, opus), a full model id, or 'inherit'. "
            "Defaults to the agent type's model."
        ),
    ),
]


class SpawnAgentArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Arguments of ``spawn_agent``."""

    agent_type: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=256,
                description=f"The type of agent to spawn (default: {DEFAULT_AGENT_TYPE}).",
            ),
        ]
        | None
    ) = None
    message: Annotated[
        str, msgspec.Meta(min_length=1, description="The task for the agent, self-contained.")
    ]
    model: _Model | None = None
    fork_context: (
        Annotated[
            bool,
            msgspec.Meta(
                description=(
                    "true: the agent starts with a copy of your conversation so far. "
                    "false: it starts with a fresh context (only message). Omitted: a fresh "
                    "context, unless its agent type is listed as starting with a copy of "
                    "your conversation."
                )
            ),
        ]
        | None
    ) = None


class SendInputArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``send_input``."""

    id: _Id
    message: Annotated[str, msgspec.Meta(min_length=1, description="The message to send.")]
    interrupt: Annotated[
        bool,
        msgspec.Meta(description="Stop what the agent is doing first, then give it the message."),
    ] = False


class WaitArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``wait``."""

    ids: Annotated[
        list[_Id],
        msgspec.Meta(min_length=1, description="The agents to wait for (at least one)."),
    ]
    timeout_ms: (
        Annotated[
            int,
            msgspec.Meta(
                description=(
                    "How long to wait at most, in milliseconds; must be greater than zero."
                )
            ),
        ]
        | None
    ) = None


class CloseAgentArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``close_agent``."""

    id: _Id


class ResumeAgentArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``resume_agent``."""

    id: _Id
    message: (
        Annotated[str, msgspec.Meta(description="A message to give the agent once it is back.")]
        | None
    ) = None


class TaskArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``Task`` (and its alias ``Agent``)."""

    description: Annotated[
        str,
        msgspec.Meta(
            min_length=1, max_length=1000, description="A short (3-5 word) description of the task."
        ),
    ]
    prompt: Annotated[
        str, msgspec.Meta(min_length=1, description="The task for the agent to perform.")
    ]
    subagent_type: Annotated[
        str,
        msgspec.Meta(
            min_length=1, max_length=256, description="The type of agent to use for this task."
        ),
    ]
    model: _Model | None = None
    run_in_background: Annotated[
        bool,
        msgspec.Meta(description="Run the agent in the background and return at once."),
    ] = False
    resume: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=256,
                description=(
                    "An agent id from an earlier Task call: that agent continues with its "
                    "previous context, and prompt becomes its next input."
                ),
            ),
        ]
        | None
    ) = None
    name: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                max_length=64,
                pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                description=(
                    "Start the agent as a teammate of the team you lead, under this name: "
                    "teammates message each other by name with SendMessage and claim tasks "
                    "from the team's board (TeamCreate first)."
                ),
            ),
        ]
        | None
    ) = None
    team_name: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=64, description="The team the teammate joins (yours; may be left out)."
            ),
        ]
        | None
    ) = None


class TaskOutputArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Arguments of ``TaskOutput``, as Claude Code's: ``task_id``, ``block``, ``timeout`` in ms.

    ``agent_id`` is kept as an alias of ``task_id``; one of them is needed (the
    tool checks it, since either may be left out).
    """

    task_id: _TaskId | None = None
    agent_id: _TaskId | None = None
    block: Annotated[
        bool, msgspec.Meta(description="Wait for the agent to finish (default: true).")
    ] = True
    timeout: Annotated[
        float,
        msgspec.Meta(
            ge=0,
            le=TASK_OUTPUT_MAX_MS,
            description=(
                f"How long to wait at most, in milliseconds (default {TASK_OUTPUT_DEFAULT_MS}, "
                f"at most {TASK_OUTPUT_MAX_MS})."
            ),
        ),
    ] = TASK_OUTPUT_DEFAULT_MS
