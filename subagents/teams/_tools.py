"""Claude Code's task tools over the board: TaskCreate, TaskList, TaskGet, TaskUpdate.

The argument names are Claude Code's (its tools' input schemas:
``TaskCreate {subject, description, activeForm?}``, ``TaskGet {taskId}``,
``TaskList {}``, ``TaskUpdate {taskId, subject?, description?, activeForm?,
status?, owner?, addBlockedBy?}``; https://code.claude.com/docs/en/tools-reference
and the tools' descriptions). ``TaskCreate`` also takes ``blockedBy``, the
field's name in Claude Code's task records, so a task can wait on others from
the start. Left out: ``metadata``, ``addBlocks`` (use ``addBlockedBy`` on the
other task) and the ``deleted`` status (a board keeps its history); the
schema refuses them, so the model learns it at once.

Who calls is never taken from the arguments: :class:`BoardSeats` maps the
calling agent's id (from the tool context) to its board and its name there,
which is the ``by`` of every request, so a claim (``status: in_progress``
without ``owner``) makes the caller the owner, and only a task's owner may
change a task another member owns. An agent without a seat gets a tool error
that says so.

Results are data, not instructions: compact JSON inside a ``<task_board>``
block, with every ``<`` written as ``\\u003c`` so text a model put in a task
cannot close the block early.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, final

import attrs
import msgspec

from subagents.teams._board import TaskBoard
from subagents.teams._exceptions import BoardError
from subagents.teams._task import Task
from subagents.tools import Tool, ToolContext, ToolFlags, ToolResult

__all__ = [
    "BOARD_TOOL_NAMES",
    "BoardSeats",
    "Seat",
    "TaskCreateArgs",
    "TaskCreateTool",
    "TaskGetArgs",
    "TaskGetTool",
    "TaskListArgs",
    "TaskListTool",
    "TaskUpdateArgs",
    "TaskUpdateTool",
    "board_tools",
    "format_board_data",
]

#: The task tools' names, as Claude Code spells them.
BOARD_TOOL_NAMES: Final = ("TaskCreate", "TaskList", "TaskGet", "TaskUpdate")

_READ: Final = ToolFlags(read_only=True, background_safe=True)
_WRITE: Final = ToolFlags(background_safe=True)
_TAG: Final = "task_board"

_TaskId = Annotated[str, msgspec.Meta(min_length=1, max_length=20, pattern=r"^[0-9]+$")]


@attrs.frozen
class Seat:
    """An agent's place at a board: the board, and the agent's name on it (its ``owner``)."""

    board: TaskBoard
    member: str


@final
class BoardSeats:
    """Which board each agent works on, and under which name: the task tools' caller table.

    The team gives each member a seat when it starts (:meth:`seat`) and takes
    it back when the member ends (:meth:`unseat`); the tools look the caller up
    by the agent id of their context.
    """

    __slots__ = ("_seats",)

    def __init__(self) -> None:
        self._seats: dict[str, Seat] = {}

    def __repr__(self) -> str:
        return f"<BoardSeats {len(self._seats)} seat(s)>"

    def __len__(self) -> int:
        return len(self._seats)

    def seat(self, agent_id: str, board: TaskBoard, member: str) -> Seat:
        """Seat ``agent_id`` at ``board`` as ``member`` (replacing any seat it had)."""
        seat = Seat(board, member)
        self._seats[agent_id] = seat
        return seat

    def unseat(self, agent_id: str) -> None:
        """Take ``agent_id``'s seat away (nothing happens if it had none)."""
        self._seats.pop(agent_id, None)

    def unseat_board(self, board: TaskBoard) -> None:
        """Take away every seat at ``board`` (its team has ended)."""
        for agent_id in [a for a, s in self._seats.items() if s.board is board]:
            del self._seats[agent_id]

    def lookup(self, agent_id: str) -> Seat | None:
        """``agent_id``'s seat, or ``None``."""
        return self._seats.get(agent_id)


_ENCODER = msgspec.json.Encoder()


def format_board_data(value: object) -> str:
    """``value`` as JSON in a ``<task_board>`` block that text inside cannot close."""
    body = _ENCODER.encode(value).decode("utf-8").replace("<", "\\u003c")
    return f"<{_TAG}>\n{body}\n</{_TAG}>"


def _summary(board: TaskBoard, task: Task) -> dict[str, object]:
    """A TaskList row: what a member needs to pick a task (open blockers only)."""
    return {
        "id": task.id,
        "subject": task.subject,
        "status": task.status,
        "owner": task.owner,
        "blockedBy": list(board.blockers(task)),
    }


def _detail(board: TaskBoard, task: Task) -> dict[str, object]:
    """A TaskGet answer: the whole task, with Claude Code's ``blocks`` and ``blockedBy``."""
    return {
        "id": task.id,
        "subject": task.subject,
        "description": task.description,
        "activeForm": task.active_form,
        "status": task.status,
        "owner": task.owner,
        "blockedBy": list(task.blocked_by),
        "openBlockers": list(board.blockers(task)),
        "blocks": list(board.blocks(task.id)),
        "metadata": task.metadata,
    }


def _no_seat(name: str) -> ToolResult:
    return ToolResult.error(
        f"{name} works on a team's shared task board, and you are not a member of a team. "
        "Use TodoWrite for a list of your own."
    )


class TaskCreateArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``TaskCreate``."""

    subject: Annotated[
        str,
        msgspec.Meta(
            min_length=1, description='A brief title in the imperative, e.g. "Run the tests".'
        ),
    ]
    description: Annotated[
        str, msgspec.Meta(description="What needs to be done, with acceptance criteria.")
    ]
    activeForm: (
        Annotated[
            str,
            msgspec.Meta(
                description='Present continuous form shown while in progress, e.g. "Running '
                'the tests".'
            ),
        ]
        | None
    ) = None
    blockedBy: (
        Annotated[
            list[_TaskId],
            msgspec.Meta(
                max_length=100,
                description="Ids of tasks that must complete before this one can be claimed.",
            ),
        ]
        | None
    ) = None
    metadata: (
        Annotated[
            dict[str, Any], msgspec.Meta(description="Arbitrary metadata to attach to the task.")
        ]
        | None
    ) = None


class TaskListArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``TaskList`` takes no arguments."""


class TaskGetArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``TaskGet``."""

    taskId: Annotated[_TaskId, msgspec.Meta(description="The id of the task to read.")]


class TaskUpdateArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of ``TaskUpdate``."""

    taskId: Annotated[_TaskId, msgspec.Meta(description="The id of the task to update.")]
    status: (
        Annotated[
            Literal["pending", "in_progress", "completed"],
            msgspec.Meta(description="pending -> in_progress -> completed (final)."),
        ]
        | None
    ) = None
    owner: (
        Annotated[
            str,
            msgspec.Meta(
                max_length=128,
                description='The member to own the task ("" releases it); a task another '
                "member owns can be handed on only by its owner.",
            ),
        ]
        | None
    ) = None
    addBlockedBy: (
        Annotated[
            list[_TaskId],
            msgspec.Meta(
                max_length=100, description="Ids of tasks that must complete before this one."
            ),
        ]
        | None
    ) = None
    subject: Annotated[str, msgspec.Meta(min_length=1)] | None = None
    description: str | None = None
    activeForm: str | None = None
    metadata: (
        Annotated[
            dict[str, Any],
            msgspec.Meta(
                description="Metadata keys to merge into the task. Set a key to null to delete it."
            ),
        ]
        | None
    ) = None


@final
@attrs.frozen
class TaskCreateTool:
    """``TaskCreate``: add a pending task to the team's board."""

    seats: BoardSeats
    name = "TaskCreate"
    source = "builtin"
    description = (
        "Create a task on your team's shared task board. It starts pending and unowned; a "
        "teammate claims it with TaskUpdate (status: in_progress). blockedBy lists the ids of "
        "tasks that must complete before it can be claimed. Call TaskList first to avoid "
        'duplicates. Returns {"task": {"id", "subject"}}. A TaskCreated hook may refuse the '
        "task with feedback: address it and create it again."
    )
    arguments_type = TaskCreateArgs
    flags = _WRITE

    async def call(self, args: TaskCreateArgs, ctx: ToolContext, /) -> ToolResult:
        """Create the task as the calling member."""
        seat = self.seats.lookup(ctx.agent_id)
        if seat is None:
            return _no_seat(self.name)
        try:
            task = await seat.board.create(
                args.subject,
                args.description,
                tuple(args.blockedBy or ()),
                active_form=args.activeForm,
                metadata=args.metadata,
                by=seat.member,
            )
        except BoardError as exc:
            return ToolResult.error(str(exc))
        data = {"task": {"id": task.id, "subject": task.subject}}
        return ToolResult.ok(format_board_data(data), task_id=task.id)


@final
@attrs.frozen
class TaskListTool:
    """``TaskList``: every task of the board, in id order."""

    seats: BoardSeats
    name = "TaskList"
    source = "builtin"
    description = (
        "List the tasks of your team's shared task board, in id order: id, subject, status "
        "(pending, in_progress, completed), owner (null when unclaimed) and blockedBy (the "
        "unfinished tasks it waits on). Pick an unowned, unblocked pending task, lowest id "
        "first, and claim it with TaskUpdate."
    )
    arguments_type = TaskListArgs
    flags = _READ

    async def call(self, args: TaskListArgs, ctx: ToolContext, /) -> ToolResult:
        """The board's tasks, summarised."""
        seat = self.seats.lookup(ctx.agent_id)
        if seat is None:
            return _no_seat(self.name)
        try:
            tasks = await seat.board.list()
        except BoardError as exc:
            return ToolResult.error(str(exc))
        rows = [_summary(seat.board, task) for task in tasks]
        return ToolResult.ok(format_board_data({"tasks": rows}), tasks=len(rows))


@final
@attrs.frozen
class TaskGetTool:
    """``TaskGet``: one task in full."""

    seats: BoardSeats
    name = "TaskGet"
    source = "builtin"
    description = (
        "Read one task of your team's shared task board in full by its taskId: subject, "
        "description, status, owner, blockedBy, the blockers still open, blocks (the tasks "
        "waiting on it) and metadata. Read a task's latest state before you update it."
    )
    arguments_type = TaskGetArgs
    flags = _READ

    async def call(self, args: TaskGetArgs, ctx: ToolContext, /) -> ToolResult:
        """The task, or an error naming the unknown id."""
        seat = self.seats.lookup(ctx.agent_id)
        if seat is None:
            return _no_seat(self.name)
        try:
            task = await seat.board.get(args.taskId)
        except BoardError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.ok(format_board_data({"task": _detail(seat.board, task)}))


@final
@attrs.frozen
class TaskUpdateTool:
    """``TaskUpdate``: claim, progress, complete, hand over, block or edit a task."""

    seats: BoardSeats
    name = "TaskUpdate"
    source = "builtin"
    description = (
        "Update a task of your team's shared task board. To claim a task, set status "
        "in_progress (you become its owner); only one member owns a task, and a task blocked "
        "by unfinished tasks cannot be claimed. Mark it completed only when the work is fully "
        "done (completed is final; a TaskCompleted hook may keep it open with feedback). "
        'owner hands the task to another member, "" releases it; only its owner may change '
        "a task someone owns. addBlockedBy adds tasks it must wait for (no cycles). metadata "
        "keys are merged into the task's (a key set to null is removed). After completing a "
        "task, call TaskList to find your next one."
    )
    arguments_type = TaskUpdateArgs
    flags = _WRITE

    async def call(self, args: TaskUpdateArgs, ctx: ToolContext, /) -> ToolResult:
        """Apply the update as the calling member, all of it or none."""
        seat = self.seats.lookup(ctx.agent_id)
        if seat is None:
            return _no_seat(self.name)
        try:
            task = await seat.board.update(
                args.taskId,
                status=args.status,
                owner=args.owner,
                add_blocked_by=tuple(args.addBlockedBy or ()),
                subject=args.subject,
                description=args.description,
                active_form=args.activeForm,
                metadata=args.metadata,
                by=seat.member,
            )
        except BoardError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.ok(
            format_board_data({"task": _detail(seat.board, task)}), task_id=task.id
        )


def board_tools(seats: BoardSeats) -> tuple[Tool, ...]:
    """The four task tools, answering each caller from its seat in ``seats``."""
    return (TaskCreateTool(seats), TaskListTool(seats), TaskGetTool(seats), TaskUpdateTool(seats))
