"""``TaskCreated`` and ``TaskCompleted``: the task board's checkpoints, run as hooks.

A team's board asks its gate before it creates a task and before it completes
one (:class:`~subagents.teams.Checkpoint`). :func:`task_hook_gate` makes that
gate out of the runtime's :class:`~subagents.runtime.HookRunner`: each
checkpoint fires the event's hooks exactly once, each hook within its own
timeout (and the board cancels the whole firing at the request's deadline),
and a block is the feedback the board gives the caller as a tool error, with
the task left uncreated or open. As in Claude Code's hooks reference
(https://code.claude.com/docs/en/hooks, ``TaskCreated`` and ``TaskCompleted``):
exit 2 blocks with stderr as the feedback, and so does ``{"decision": "block",
"reason": ...}`` on stdout; the hooks have no matcher; their input carries
``task_id``, ``task_subject``, ``task_description``, ``teammate_name`` and
``team_name``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from subagents.runtime._hooks.commands import HookEvent, HookPayload
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import Hook
from subagents.teams import Checkpoint, Gate

__all__ = ["IdentifyMember", "task_hook_gate"]

#: The agent behind a member name: ``(agent_id, agent_type)``, for the hook payload.
IdentifyMember = Callable[[str | None], tuple[str, str]]


def _by_name(member: str | None) -> tuple[str, str]:
    return (member or "", "teammate" if member else "")


def task_hook_gate(
    runner: HookRunner,
    *,
    session_id: str | None = None,
    cwd: str | None = None,
    team_name: str | None = None,
    identify: IdentifyMember = _by_name,
    agent_hooks: Sequence[Hook] = (),
) -> Gate:
    """The board gate that fires ``TaskCreated``/``TaskCompleted`` hooks on ``runner``.

    ``identify`` maps the member making the change (``None``: the program) to
    the agent id and type the payload names; by default the member's name.
    """

    async def gate(checkpoint: Checkpoint) -> str | None:
        event = (
            HookEvent.TASK_CREATED
            if checkpoint.kind == "task_created"
            else HookEvent.TASK_COMPLETED
        )
        if not runner.has_hooks(event, agent_hooks):
            return None
        task = checkpoint.task
        agent_id, agent_type = identify(checkpoint.by)
        payload = HookPayload(
            hook_event_name=event.value,
            agent_id=agent_id,
            agent_type=agent_type,
            session_id=session_id,
            cwd=cwd,
            task_id=task.id,
            task_subject=task.subject,
            task_description=task.description,
            teammate_name=checkpoint.by,
            team_name=team_name,
        )
        outcome = await runner.fire(
            event, payload, agent_hooks=agent_hooks, nickname=checkpoint.by or ""
        )
        if not outcome.blocked:
            return None
        return outcome.reason or f"a {event.value} hook blocked it"

    return gate
