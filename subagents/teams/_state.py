"""The board's state and its rules, as plain synchronous code the board actor owns.

Nothing here waits or does I/O: :class:`BoardState` checks a request against
the rules and says what the task becomes (``plan_*``), and the actor writes
that to the journal before it :meth:`~BoardState.put` s it. Keeping the rules
apart from the actor lets the journal's replay and the tests use the same
state, and keeps every rule in one place:

- ids are sequential numbers as strings, never reused (Claude Code's task ids);
- a task has at most one owner; claiming one owned by another member fails
  and names the owner;
- a task whose ``blocked_by`` holds unfinished tasks cannot be claimed, started
  or completed, and a claimed task cannot be given unfinished blockers;
- dependencies never form a cycle;
- ``completed`` is final;
- every field and the number of tasks are capped by :class:`BoardConfig`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, final

import msgspec

from subagents.teams._config import BoardConfig
from subagents.teams._exceptions import (
    BoardFull,
    DependencyCycle,
    FieldTooLong,
    InvalidOwner,
    InvalidTaskMetadata,
    TaskAlreadyClaimed,
    TaskBlocked,
    TaskBusy,
    TaskCompleted,
    TaskNotFound,
)
from subagents.teams._task import BoardEventKind, Task, TaskStatus

__all__ = ["BoardState", "Plan", "task_order"]

_METADATA: Final = msgspec.json.Encoder()

#: What a change makes: the task as it will be, and the event it is.
Plan = tuple[Task, BoardEventKind]


def task_order(task_id: str) -> tuple[int, str]:
    """Sort key: numeric ids in number order (``"2"`` before ``"10"``)."""
    return (int(task_id), "") if task_id.isdigit() else (0, task_id)


@final
class BoardState:
    """The tasks of one board, and the bookkeeping of changes waiting on hooks.

    ``reserved`` counts creations whose ``TaskCreated`` hooks are running (they
    hold a place under ``max_tasks`` and an id); ``busy`` holds the ids whose
    ``TaskCompleted`` hooks are running (nothing else may change them meanwhile).
    """

    __slots__ = ("busy", "config", "next_id", "reserved", "tasks")

    def __init__(self, config: BoardConfig) -> None:
        self.config = config
        self.tasks: dict[str, Task] = {}
        self.next_id = 1
        self.reserved = 0
        self.busy: set[str] = set()

    # -- reading ------------------------------------------------------------------

    def snapshot(self) -> tuple[Task, ...]:
        """Every task, in id order."""
        return tuple(self.tasks[key] for key in sorted(self.tasks, key=task_order))

    def get(self, task_id: str) -> Task:
        """The task with ``task_id``; :class:`TaskNotFound` if there is none."""
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise TaskNotFound(str(task_id))
        return task

    def blockers(self, task: Task) -> tuple[str, ...]:
        """The ids ``task`` still waits on: its ``blocked_by`` that are not completed."""
        tasks = self.tasks
        return tuple(
            b for b in task.blocked_by if (t := tasks.get(b)) is None or t.status != "completed"
        )

    def blocks(self, task_id: str) -> tuple[str, ...]:
        """The ids of the tasks that list ``task_id`` in their ``blocked_by``."""
        return tuple(t.id for t in self.snapshot() if task_id in t.blocked_by)

    # -- loading and applying -------------------------------------------------------

    def put(self, task: Task) -> None:
        """Make ``task`` the board's version of its id (after it is on disk)."""
        self.tasks[task.id] = task
        if task.id.isdigit():
            self.next_id = max(self.next_id, int(task.id) + 1)

    # -- planning changes -----------------------------------------------------------

    def _check_text(self, field: str, value: str | None, limit: int) -> None:
        if value is not None and len(value) > limit:
            raise FieldTooLong(field, len(value), limit)

    def _check_blockers(
        self, task_id: str, current: Sequence[str], new: Iterable[str]
    ) -> tuple[str, ...]:
        """``current`` plus the new ids, checked: known, not itself, within the cap, no cycle."""
        added: list[str] = []
        for blocker in new:
            if not isinstance(blocker, str) or blocker not in self.tasks:
                raise TaskNotFound(str(blocker))
            if blocker == task_id:
                raise DependencyCycle(task_id, (task_id, task_id))
            if blocker not in current and blocker not in added:
                added.append(blocker)
        total = (*current, *added)
        if len(total) > self.config.max_blockers:
            raise FieldTooLong("blocked_by list", len(total), self.config.max_blockers)
        if task_id in self.tasks:
            for blocker in added:
                path = self._path(blocker, task_id)
                if path is not None:
                    raise DependencyCycle(task_id, (task_id, *path))
        return total

    def _path(self, start: str, goal: str) -> tuple[str, ...] | None:
        """A chain of ``blocked_by`` links from ``start`` to ``goal``, or ``None``."""
        parents: dict[str, str | None] = {start: None}
        stack = [start]
        while stack:
            current = stack.pop()
            if current == goal:
                chain = [current]
                while (previous := parents[chain[-1]]) is not None:
                    chain.append(previous)
                return tuple(reversed(chain))
            task = self.tasks.get(current)
            for nxt in task.blocked_by if task is not None else ():
                if nxt not in parents:
                    parents[nxt] = current
                    stack.append(nxt)
        return None

    def plan_create(
        self,
        subject: str,
        description: str,
        blocked_by: Sequence[str] = (),
        active_form: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Task:
        """The task a create would make, with the next id (taken now, never reused)."""
        config = self.config
        if len(self.tasks) + self.reserved >= config.max_tasks:
            raise BoardFull("it holds as many tasks as it may", config.max_tasks)
        self._check_text("subject", subject, config.max_subject_chars)
        self._check_text("description", description, config.max_description_chars)
        self._check_text("activeForm", active_form, config.max_subject_chars)
        encoded = self._merge_metadata({}, metadata)
        task_id = str(self.next_id)
        blockers = self._check_blockers(task_id, (), blocked_by)
        self.next_id += 1
        return Task(
            id=task_id,
            subject=subject,
            description=description,
            blocked_by=blockers,
            active_form=active_form,
            metadata_json=encoded,
        )

    def _merge_metadata(self, current: Mapping[str, Any], changes: Mapping[str, Any] | None) -> str:
        """Claude Code's merge: each key of ``changes`` set, a key set to ``null`` removed;
        the result's JSON (``""`` when empty), refused past ``max_metadata_bytes``."""
        merged = dict(current)
        for key, value in (changes or {}).items():
            if not isinstance(key, str):
                raise InvalidTaskMetadata(f"the key {key!r} is not a string")
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        if not merged:
            return ""
        try:
            encoded = _METADATA.encode(merged)
        except (msgspec.EncodeError, TypeError, ValueError, OverflowError) as exc:
            raise InvalidTaskMetadata(str(exc)) from None
        if len(encoded) > self.config.max_metadata_bytes:
            raise FieldTooLong("metadata", len(encoded), self.config.max_metadata_bytes)
        return encoded.decode("utf-8")

    def plan_claim(self, task_id: str, owner: str) -> Plan | None:
        """What claiming ``task_id`` for ``owner`` makes: owned and in progress.

        ``None`` when ``owner`` holds it in progress already (a repeated claim).
        """
        if not isinstance(owner, str) or not owner.strip():
            raise InvalidOwner(owner)
        return self.plan_update(task_id, status="in_progress", owner=owner, by=owner)

    def plan_update(
        self,
        task_id: str,
        *,
        status: TaskStatus | None = None,
        owner: str | None = None,
        add_blocked_by: Sequence[str] = (),
        by: str | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Plan | None:
        """What an update makes, and its event; ``None`` when nothing would change.

        ``owner=""`` releases the task (back to pending if it was in progress).
        ``by`` is the member asking (``None``: the program, which may do anything
        the rules allow); only a task's owner may change its owner or status
        (hand it over, release it, complete it) once another member owns it.
        """
        task = self.get(task_id)
        if task_id in self.busy:
            raise TaskBusy(task_id)
        self._check_text("owner", owner, self.config.max_owner_chars)
        if owner is not None and owner != "" and not owner.strip():
            raise InvalidOwner(owner)
        if by is not None:
            self._check_text("owner", by, self.config.max_owner_chars)
        config = self.config
        self._check_text("subject", subject, config.max_subject_chars)
        self._check_text("description", description, config.max_description_chars)
        self._check_text("activeForm", active_form, config.max_subject_chars)
        changes: dict[str, object] = {
            name: value
            for name, value in (
                ("subject", subject),
                ("description", description),
                ("active_form", active_form),
            )
            if value is not None and value != getattr(task, name)
        }
        if metadata:
            encoded = self._merge_metadata(task.metadata, metadata)
            if encoded != task.metadata_json:
                changes["metadata_json"] = encoded
        if task.status == "completed":
            adding = [b for b in add_blocked_by if b not in task.blocked_by]
            unchanged = status in (None, "completed") and not adding and not changes
            if unchanged and owner in (None, task.owner):
                return None
            raise TaskCompleted(task_id)
        others = by is not None and task.owner is not None and by != task.owner
        moves = status is not None or (owner is not None and owner != task.owner)
        if others and (changes or moves):
            # Another member's task: even a status it has already is not theirs to set.
            assert task.owner is not None
            raise TaskAlreadyClaimed(task_id, task.owner)
        kind: BoardEventKind = "task_updated"
        new_owner = task.owner
        new_status: TaskStatus = task.status
        if owner is not None and owner != (task.owner or ""):
            new_owner = owner or None
            if new_owner is None and new_status == "in_progress":
                new_status = "pending"
        if status is not None and status != task.status:
            new_status = status
            if status == "in_progress" and new_owner is None:
                new_owner = by
        if add_blocked_by:
            blocked_by = self._check_blockers(task_id, task.blocked_by, add_blocked_by)
            if blocked_by != task.blocked_by:
                changes["blocked_by"] = blocked_by
        else:
            blocked_by = task.blocked_by
        if new_owner != task.owner:
            changes["owner"] = new_owner
        if new_status != task.status:
            changes["status"] = new_status
        if not changes:
            return None
        new = msgspec.structs.replace(task, **changes)
        waiting = self.blockers(new)
        if waiting:
            if new_status == "completed":
                raise TaskBlocked(task_id, waiting, "completed")
            taken = new_owner is not None or new_status == "in_progress"
            was = task.owner is not None or task.status == "in_progress"
            if taken and not was:
                raise TaskBlocked(task_id, waiting, "claimed")
            if taken and blocked_by != task.blocked_by:
                raise TaskBlocked(
                    task_id,
                    waiting,
                    "given unfinished blockers while it is claimed (release it first)",
                )
        if new_status == "completed":
            kind = "task_completed"
        elif new_owner is not None and new_owner != task.owner:
            kind = "task_claimed"
        return new, kind
