"""Teams: the shared task board members claim work from.

The board (:func:`open_board`, :class:`TaskBoard`) is an actor: one Trio task
owns the tasks, members send it requests over a bounded channel and each gets
its own reply before its deadline, so a claim is atomic without a lock and two
members never own one task. It is persisted as an append-only JSONL journal,
fsync'd before each answer, and replayed on open::

    async with open_board(state_dir / "board.jsonl", publish=bus_publish) as board:
        first = await board.create("Survey src/", "Count the modules")
        second = await board.create("Write the report", "From the survey", blocked_by=[first.id])
        await board.claim(first.id, "ada")            # ada owns it, in progress
        await board.update(first.id, status="completed", by="ada")
        await board.claim(second.id, "grace")          # unblocked now

The task tools (``TaskCreate``, ``TaskList``, ``TaskGet``, ``TaskUpdate``,
:func:`board_tools`) give a model the same board, knowing the caller from the
tool context through :class:`BoardSeats`.
"""

from subagents.teams._board import BoardStatistics, TaskBoard, open_board
from subagents.teams._config import BoardConfig
from subagents.teams._exceptions import (
    BoardClosed,
    BoardError,
    BoardFull,
    BoardInUse,
    BoardTimeout,
    BoardWriteError,
    CheckpointBlocked,
    DependencyCycle,
    FieldTooLong,
    InvalidBoardConfig,
    InvalidOwner,
    TaskAlreadyClaimed,
    TaskBlocked,
    TaskBusy,
    TaskCompleted,
    TaskNotFound,
)
from subagents.teams._journal import JournalReplay
from subagents.teams._task import (
    TASK_STATUSES,
    BoardEvent,
    BoardEventKind,
    Checkpoint,
    Gate,
    Publish,
    Task,
    TaskStatus,
)
from subagents.teams._tools import (
    BOARD_TOOL_NAMES,
    BoardSeats,
    Seat,
    TaskCreateArgs,
    TaskCreateTool,
    TaskGetArgs,
    TaskGetTool,
    TaskListArgs,
    TaskListTool,
    TaskUpdateArgs,
    TaskUpdateTool,
    board_tools,
    format_board_data,
)

__all__ = [
    "BOARD_TOOL_NAMES",
    "TASK_STATUSES",
    "BoardClosed",
    "BoardConfig",
    "BoardError",
    "BoardEvent",
    "BoardEventKind",
    "BoardFull",
    "BoardInUse",
    "BoardSeats",
    "BoardStatistics",
    "BoardTimeout",
    "BoardWriteError",
    "Checkpoint",
    "CheckpointBlocked",
    "DependencyCycle",
    "FieldTooLong",
    "Gate",
    "InvalidBoardConfig",
    "InvalidOwner",
    "JournalReplay",
    "Publish",
    "Seat",
    "Task",
    "TaskAlreadyClaimed",
    "TaskBlocked",
    "TaskBoard",
    "TaskBusy",
    "TaskCompleted",
    "TaskCreateArgs",
    "TaskCreateTool",
    "TaskGetArgs",
    "TaskGetTool",
    "TaskListArgs",
    "TaskListTool",
    "TaskNotFound",
    "TaskStatus",
    "TaskUpdateArgs",
    "TaskUpdateTool",
    "board_tools",
    "format_board_data",
    "open_board",
]
