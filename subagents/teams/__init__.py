"""Teams: a lead and named teammates that message each other, and the task board they share.

A :class:`Team` is a lead and named teammates, each a full agent in one
supervised subtree (every teammate is a child of the lead). Teammates message
each other by name (``SendMessage {to, message}``; ``"*"`` for everyone,
``"lead"`` for the lead), exactly once and in order per sender, as data in a
delimited block (:func:`format_peer_message`). A teammate whose work is done
is idle: it holds no ``max_threads`` slot, and a message or a new claimable
task wakes it; nothing polls. A :class:`TeamDirectory` holds a runtime's open
teams. The team reports on the bus with :class:`TeamCreated`,
:class:`TeammateIdle`, :class:`MessageSent` and :class:`TeamDeleted`. The
package sits between ``tools`` and ``runtime``: a team drives agents through
:class:`TeamRuntime`, which :class:`subagents.runtime.Runtime` satisfies, and
``Runtime.team`` opens a team from Python.

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

A team comes back when its lead is resumed, after a crash included: a small
:class:`TeamRecord` per lead (:func:`read_team_record`), written atomically as
the team is made and as teammates join, names its teammates and its board's
journal; ``Runtime.resume`` reopens the board from that journal and seats the
teammates again before they run. A team ended on purpose loses its record.
"""

from subagents.teams._board import BoardStatistics, TaskBoard, open_board
from subagents.teams._config import BoardConfig
from subagents.teams._directory import TeamDirectory, check_team_name
from subagents.teams._events import (
    BOARD_EVENT_TYPES,
    MessageSent,
    TaskClaimedEvent,
    TaskCompletedEvent,
    TaskCreatedEvent,
    TaskUpdatedEvent,
    TeamCreated,
    TeamDeleted,
    TeammateIdle,
)
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
    InvalidTaskMetadata,
    InvalidTeamName,
    NotInTeam,
    TaskAlreadyClaimed,
    TaskBlocked,
    TaskBusy,
    TaskCompleted,
    TaskNotFound,
    TeamClosed,
    TeamError,
    TeamExists,
    TeammateNameTaken,
    UnknownTeammate,
)
from subagents.teams._journal import JournalReplay
from subagents.teams._messages import PEER_MESSAGE_TAG, format_peer_message
from subagents.teams._record import (
    MAX_RECORD_BYTES,
    MAX_RECORDED_MEMBERS,
    TeamRecord,
    read_team_record,
)
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
from subagents.teams._team import (
    FORMING_WAIT_SECONDS,
    AgentIdentity,
    Team,
    TeamRuntime,
    TeamStatistics,
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
    "BOARD_EVENT_TYPES",
    "FORMING_WAIT_SECONDS",
    "TaskClaimedEvent",
    "TaskCompletedEvent",
    "TaskCreatedEvent",
    "TaskUpdatedEvent",
    "PEER_MESSAGE_TAG",
    "AgentIdentity",
    "MessageSent",
    "NotInTeam",
    "Team",
    "TeamClosed",
    "TeamCreated",
    "TeamDeleted",
    "TeamDirectory",
    "TeamError",
    "TeamExists",
    "TeamRuntime",
    "TeamStatistics",
    "TeammateIdle",
    "TeammateNameTaken",
    "UnknownTeammate",
    "format_peer_message",
    "check_team_name",
    "InvalidTeamName",
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
    "InvalidTaskMetadata",
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
    "MAX_RECORD_BYTES",
    "MAX_RECORDED_MEMBERS",
    "TeamRecord",
    "read_team_record",
]
