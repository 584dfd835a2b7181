"""A task on the board, and what the board tells the world about its tasks.

The shape follows Claude Code's task tools (TaskCreate/TaskGet/TaskList/
TaskUpdate, https://code.claude.com/docs/en/tools-reference; the tools'
descriptions: "Status progresses: ``pending`` → ``in_progress`` →
``completed``", ids are sequential numbers as strings, ``owner`` is an agent
name, ``blockedBy`` lists the tasks that must complete first). A task is a
frozen value: every change makes a new one, which is what the journal stores.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeAlias

import msgspec

__all__ = [
    "BoardEvent",
    "BoardEventKind",
    "Checkpoint",
    "Gate",
    "Publish",
    "TASK_STATUSES",
    "Task",
    "TaskStatus",
]

TaskStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
"""Claude Code's three task statuses; ``completed`` is final here."""

#: The statuses in their order of progress.
TASK_STATUSES: Final[tuple[TaskStatus, ...]] = ("pending", "in_progress", "completed")


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """One task: its id, what to do, its status, who owns it and what it waits on.

    ``blocked_by`` holds the ids of the tasks that must complete before this
    one may be claimed; those of them still unfinished are its blockers.
    """

    id: str
    subject: str
    description: str
    status: TaskStatus = "pending"
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()
    active_form: str | None = None
    #: Claude Code's ``metadata``: a JSON object of the caller's own keys, kept as its
    #: encoding (``""``: none) so the task stays a frozen value; read it with :attr:`metadata`.
    metadata_json: str = ""

    @property
    def metadata(self) -> dict[str, Any]:
        """The task's metadata, a fresh copy (empty when it has none)."""
        if not self.metadata_json:
            return {}
        value: dict[str, Any] = msgspec.json.decode(self.metadata_json)
        return value


BoardEventKind: TypeAlias = Literal[
    "task_created", "task_claimed", "task_updated", "task_completed"
]


class BoardEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A change the board made, published once it is on disk, before the caller hears of it.

    ``by`` is the member whose request made the change (``None``: the program).
    """

    kind: BoardEventKind
    task: Task
    by: str | None = None


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """What a gate is asked about: a task about to be created, or about to be completed.

    ``kind`` is ``"task_created"`` (``task`` is the task as it would be made) or
    ``"task_completed"`` (``task`` as it would be once completed).
    """

    kind: Literal["task_created", "task_completed"]
    task: Task
    by: str | None = None


Gate: TypeAlias = Callable[[Checkpoint], Awaitable[str | None]]
"""A checkpoint: ``None`` lets the change through, text blocks it and is the feedback."""

Publish: TypeAlias = Callable[[BoardEvent], None]
"""Where the board's events go; called synchronously and must not block (``Bus.publish_nowait``)."""
