"""Errors raised by teams and their shared task board.

Every message says what happened and what to do next: a model reads them as
tool errors (``SendMessage``, ``TeamCreate``, the task tools), a person as
exceptions::

    SubagentsError
    └── BoardError
        ├── InvalidBoardConfig    (also a ValueError)
        ├── TaskNotFound          (also a LookupError)
        ├── TaskAlreadyClaimed    (says who owns it)
        ├── TaskBlocked           (says which unfinished tasks block it)
        ├── TaskCompleted         (completed is final)
        ├── TaskBusy              (a hook is checking the task's completion)
        ├── DependencyCycle
        ├── BoardFull             (the cap on tasks, or on hook checks under way)
        ├── FieldTooLong
        ├── InvalidOwner          (also a ValueError)
        ├── CheckpointBlocked     (a TaskCreated/TaskCompleted hook said no; carries its feedback)
        ├── BoardTimeout          (also a TimeoutError)
        ├── BoardClosed
        ├── BoardInUse            (another process holds the board's journal)
        └── BoardWriteError       (the journal could not be written or read)
    SubagentsError
    └── TeamError
        ├── InvalidTeamName       (also a ValueError; not a name a file can safely carry)
        ├── TeamExists            (a team of that name is open, or the lead leads one)
        ├── NotInTeam             (the caller leads no team and belongs to none)
        ├── UnknownTeammate       (also a LookupError; no member has that name)
        ├── TeammateNameTaken     (also a ValueError; taken, reserved or malformed)
        └── TeamClosed            (the team has ended)
"""

from __future__ import annotations

from collections.abc import Sequence

from subagents._exceptions import SubagentsError

__all__ = [
    "InvalidTeamName",
    "NotInTeam",
    "TeamClosed",
    "TeamError",
    "TeamExists",
    "TeammateNameTaken",
    "UnknownTeammate",
    "BoardClosed",
    "BoardError",
    "BoardFull",
    "BoardInUse",
    "BoardTimeout",
    "BoardWriteError",
    "CheckpointBlocked",
    "DependencyCycle",
    "FieldTooLong",
    "InvalidBoardConfig",
    "InvalidOwner",
    "TaskAlreadyClaimed",
    "TaskBlocked",
    "TaskBusy",
    "TaskCompleted",
    "TaskNotFound",
]


class BoardError(SubagentsError):
    """Base class of the errors raised by :mod:`subagents.teams`' task board."""


class InvalidBoardConfig(BoardError, ValueError):
    """A board setting is out of range; raised when the configuration is built."""


class TaskNotFound(BoardError, LookupError):
    """No task with this id is on the board."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(
            f"No task with id {task_id!r} on the board. Call TaskList to see the tasks and "
            "their ids."
        )


class TaskAlreadyClaimed(BoardError):
    """Another member owns the task: two members never own one task."""

    def __init__(self, task_id: str, owner: str) -> None:
        self.task_id = task_id
        self.owner = owner
        super().__init__(
            f"Task {task_id} is already claimed by {owner}. Pick another task from TaskList, "
            f"or message {owner} about it."
        )


class TaskBlocked(BoardError):
    """The task waits on unfinished tasks, so it cannot be claimed (or completed) yet."""

    def __init__(self, task_id: str, blockers: Sequence[str], action: str = "claimed") -> None:
        self.task_id = task_id
        self.blockers = tuple(blockers)
        ids = ", ".join(self.blockers)
        super().__init__(
            f"Task {task_id} cannot be {action}: it waits on unfinished task(s) {ids}. "
            "Work on one of those first, or pick an unblocked task from TaskList."
        )


class TaskCompleted(BoardError):
    """The task is completed, and a completed task stays completed."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(
            f"Task {task_id} is already completed and cannot change. Create a new task for "
            "further work."
        )


class TaskBusy(BoardError):
    """A hook is checking the task's completion; the task cannot change meanwhile."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(
            f"Task {task_id} is being completed (its TaskCompleted hooks are running). "
            "Check it again with TaskGet in a moment."
        )


class DependencyCycle(BoardError):
    """Adding these blockers would make tasks wait on each other forever."""

    def __init__(self, task_id: str, cycle: Sequence[str]) -> None:
        self.task_id = task_id
        self.cycle = tuple(cycle)
        path = " -> ".join(self.cycle)
        super().__init__(
            f"Task {task_id} cannot be blocked by that: it would close the dependency cycle "
            f"{path}. Remove the dependency that makes the loop."
        )


class BoardFull(BoardError):
    """The board holds as many tasks (or running hook checks) as it may."""

    def __init__(self, what: str, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"The task board is full: {what} (limit {limit}). Complete or reuse existing "
            "tasks, or raise the limit in BoardConfig."
        )


class FieldTooLong(BoardError, ValueError):
    """A task field (subject, description, owner, blockers) is larger than the board allows."""

    def __init__(self, field: str, size: int, limit: int) -> None:
        self.field = field
        self.size = size
        self.limit = limit
        super().__init__(
            f"The task's {field} is too large ({size}, at most {limit}). Shorten it: put long "
            "detail in a file and name the file in the description."
        )


class CheckpointBlocked(BoardError):
    """A checkpoint (``TaskCreated`` or ``TaskCompleted`` hooks) refused the change.

    The task stays uncreated, or open; :attr:`feedback` is what the hooks said.
    """

    def __init__(self, event: str, task_id: str, feedback: str) -> None:
        self.event = event
        self.task_id = task_id
        self.feedback = feedback
        what = "was not created" if event == "task_created" else "stays open"
        super().__init__(
            f"Task {task_id} {what}: a hook blocked it. Address this feedback, then try "
            f"again:\n{feedback}"
        )


class BoardTimeout(BoardError, TimeoutError):
    """A request did not get its answer before its deadline.

    ``applied`` is ``False`` when the board never started on it (nothing
    changed), ``None`` when it may have been applied (check with ``get``).
    """

    def __init__(self, timeout: float, applied: bool | None) -> None:
        self.timeout = timeout
        self.applied = applied
        what = (
            "it was not applied"
            if applied is False
            else "it may have been applied: check the task with TaskGet before retrying"
        )
        super().__init__(
            f"The task board did not answer within {timeout:g} s ({what}). It may be busy "
            "with hooks; try again."
        )


class BoardClosed(BoardError):
    """The board is closed (its team ended) and takes no more requests."""

    def __init__(self) -> None:
        super().__init__(
            "The task board is closed: its team has ended. Open the board again (it is "
            "kept on disk) to go on."
        )


class BoardWriteError(BoardError):
    """The board's journal could not be written; the change was not made."""

    def __init__(self, path: str, cause: BaseException) -> None:
        self.path = path
        super().__init__(
            f"The task board could not write its journal {path} ({cause}). The change was "
            "not made and the board takes no more changes: fix the disk problem and open the "
            "board again (what was saved before is kept)."
        )


class BoardInUse(BoardError):
    """Another board (in this process or another) has the journal open."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"The task board journal {path} is open in another board (a team of another "
            "process, or one still open here). Close that one first, or use another state dir."
        )


class InvalidOwner(BoardError, ValueError):
    """A claim named no one: an owner is a member's non-blank name."""

    def __init__(self, owner: object) -> None:
        self.owner = owner
        super().__init__(
            f"A task's owner must be a member's name, not {owner!r}. Claim it under your own "
            'name; to release a task, update it with owner "".'
        )


class InvalidTaskMetadata(BoardError, ValueError):
    """A task's metadata is not a JSON object of string keys."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"A task's metadata must be a JSON object with string keys ({reason}). Give it "
            'plain values: text, numbers, true/false, lists and objects, e.g. {"area": "api"}.'
        )


class TeamError(SubagentsError):
    """Base class of the errors raised by :mod:`subagents.teams`."""


class InvalidTeamName(TeamError, ValueError):
    """A team name that is not 1-64 letters, digits, '_', '.' or '-' (it names a file)."""

    def __init__(self, name: object) -> None:
        self.name = name
        super().__init__(
            f"{name!r} is not a team name: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit."
        )


class TeamExists(TeamError):
    """A team of this name is open already, or the agent leads a team already."""

    def __init__(self, team_name: str, *, lead: bool = False) -> None:
        self.team_name = team_name
        if lead:
            message = (
                f"You lead team {team_name!r} already. Use it, or end it with TeamDelete "
                "before creating another."
            )
        else:
            message = f"A team named {team_name!r} is open already. Choose another name."
        super().__init__(message)


class NotInTeam(TeamError):
    """The agent leads no team and belongs to none."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"Agent {agent_id!r} is in no team. Create one with TeamCreate first (a lead), "
            "or send to an agent_id instead."
        )


class UnknownTeammate(TeamError, LookupError):
    """No member of the team has this name."""

    def __init__(self, name: str, team_name: str, names: Sequence[str]) -> None:
        self.name = name
        self.team_name = team_name
        self.names = tuple(names)
        listed = ", ".join(repr(n) for n in names) or "none yet"
        super().__init__(
            f"Team {team_name!r} has no member named {name!r}. Its names: {listed} "
            "(and 'lead', or '*' for everyone)."
        )


class TeammateNameTaken(TeamError, ValueError):
    """The name is taken by a member already, reserved, or not a valid name."""

    def __init__(self, name: str, team_name: str, why: str) -> None:
        self.name = name
        self.team_name = team_name
        super().__init__(f"Cannot add {name!r} to team {team_name!r}: {why}")


class TeamClosed(TeamError):
    """The team has ended: nothing more joins it."""

    def __init__(self, team_name: str) -> None:
        self.team_name = team_name
        super().__init__(
            f"Team {team_name!r} has ended. Create a new team with TeamCreate to go on."
        )
