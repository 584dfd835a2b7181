"""The board's journal: one JSON line per change, fsync'd before the change is answered.

Each line holds the whole task as the change left it, so replaying the file in
order (the last line of an id wins) gives back the board exactly; a line with
only ``next_id`` keeps ids a refused creation took from being handed out again. Appends go
through ``O_APPEND`` and are fsync'd in a worker thread; the board writes the
changes of one batch of requests together (group commit), so a crowd of
claims costs one fsync, not one each.

Opening replays the file. A line that cannot be read (torn by a crash in the
middle of a write, or edited by hand) is reported in :class:`JournalReplay`
and skipped; every other line still counts, so nothing before it is lost. A
torn last line (no newline at the end of the file) is cut off after it is
reported, so the next append starts on a line of its own. When the file holds
many more lines than tasks (on open, or after a write), it is compacted:
rewritten with one line per task in a temporary file, fsync'd, and renamed
over the old one, so a board that changes forever does not grow forever.

Only one board may hold a journal at a time: the file is locked with
``flock`` for as long as the board is open (:class:`BoardInUse` otherwise).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Final, final

import attrs
import msgspec

from subagents._file_lock import FORK_WINDOW_SECONDS, try_lock
from subagents.teams._exceptions import BoardInUse, BoardWriteError
from subagents.teams._task import Task

__all__ = ["Journal", "JournalReplay"]

#: Lines longer than this are not read (no task line comes near it).
_MAX_LINE: Final = 1 << 20
#: Compact when the file holds more lines than this many per task, plus the slack.
_COMPACT_RATIO: Final = 4
_COMPACT_SLACK: Final = 1_000


class _Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One journal line: the version of its format and the task as a change left it.

    A line with ``next_id`` instead records ids taken without a task (a creation
    a ``TaskCreated`` hook refused), so they are not handed out again.
    """

    v: int
    task: Task | None = None
    next_id: int | None = None


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_Record)


@attrs.frozen
class JournalReplay:
    """What opening a journal found: the tasks, and the lines it had to skip (and why)."""

    path: str | None
    tasks: tuple[Task, ...] = ()
    next_id: int = 1
    lines: int = 0
    skipped: tuple[str, ...] = ()
    compacted: bool = False


def _line(item: Task | int) -> bytes:
    record = _Record(1, next_id=item) if isinstance(item, int) else _Record(1, item)
    return _ENCODER.encode(record) + b"\n"


def _read(data: bytes, path: str) -> tuple[dict[str, Task], int, int, list[str], int]:
    """The tasks of ``data``, its next id, line count, skipped lines' reasons, good length."""
    tasks: dict[str, Task] = {}
    next_id = 1
    skipped: list[str] = []
    lines = 0
    good = len(data)
    start = 0
    number = 0
    while start < len(data):
        end = data.find(b"\n", start)
        number += 1
        if end == -1:
            skipped.append(
                f"{path}:{number}: the last line is incomplete (a write cut short by a crash); "
                "it was dropped"
            )
            good = start
            break
        raw = data[start:end]
        start = end + 1
        if not raw.strip():
            continue
        lines += 1
        if len(raw) > _MAX_LINE:
            skipped.append(f"{path}:{number}: the line is longer than {_MAX_LINE} bytes; skipped")
            continue
        try:
            record = _DECODER.decode(raw)
        except msgspec.DecodeError as exc:
            skipped.append(f"{path}:{number}: not a task record ({exc}); skipped")
            continue
        task = record.task
        if record.v == 1 and task is None and record.next_id is not None:
            next_id = max(next_id, record.next_id)
            continue
        if record.v != 1 or task is None or not task.id.isdigit() or task.id.startswith("0"):
            skipped.append(
                f"{path}:{number}: not a task record of version 1 with a numeric id; skipped"
            )
            continue
        tasks[task.id] = task
        next_id = max(next_id, int(task.id) + 1)
    return tasks, next_id, lines, skipped, good


def _lock(fd: int) -> bool:
    """Lock the journal ``fd`` for this board; whether it was free (closed on an error)."""
    try:
        return try_lock(fd, wait=FORK_WINDOW_SECONDS)
    except OSError:
        os.close(fd)
        raise


@final
class Journal:
    """An open, locked journal file. Its methods block: call them in a worker thread."""

    __slots__ = ("_fd", "lines", "path")

    def __init__(self, path: Path, fd: int, lines: int = 0) -> None:
        self.path = path
        self._fd = fd
        self.lines = lines

    @classmethod
    def open(cls, path: Path) -> tuple[Journal, JournalReplay]:
        """Lock and replay ``path`` (made, with its folder, when missing)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise BoardWriteError(str(path), exc) from exc
        if not _lock(fd):
            os.close(fd)
            raise BoardInUse(str(path))
        try:
            with open(fd, "rb", closefd=False) as reader:
                data = reader.read()
            tasks, next_id, lines, skipped, good = _read(data, str(path))
            if good < len(data):
                os.ftruncate(fd, good)
                os.fsync(fd)
            journal = cls(path, fd, lines)
            ordered = tuple(tasks[key] for key in sorted(tasks, key=int))
            compacted = False
            if journal.wants_compaction(len(ordered)) and not skipped:
                journal.compact(ordered, next_id)
                compacted = True
        except BaseException:
            os.close(fd)
            raise
        replay = JournalReplay(str(path), ordered, next_id, lines, tuple(skipped), compacted)
        return journal, replay

    def wants_compaction(self, tasks: int) -> bool:
        """Whether the file holds so many more lines than ``tasks`` that it should be rewritten."""
        return self.lines > _COMPACT_RATIO * tasks + _COMPACT_SLACK

    def compact(self, tasks: tuple[Task, ...], next_id: int) -> None:
        """Rewrite the file with one line per task, atomically, and go on appending to it.

        The new file is written and fsync'd beside the old one, then renamed over
        it: a crash at any point leaves one whole journal or the other.
        """
        path = self.path
        temporary = path.with_name(path.name + ".compact")
        items: list[Task | int] = list(tasks)
        if next_id > max((int(task.id) for task in tasks), default=0) + 1:
            items.append(next_id)  # ids refused creations took stay taken
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
            fd = os.open(temporary, flags, 0o600)
        except OSError as exc:
            raise BoardWriteError(str(path), exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _write_all(fd, b"".join(_line(item) for item in items))
            os.fsync(fd)
            os.replace(temporary, path)
        except BaseException as exc:
            os.close(fd)
            if isinstance(exc, OSError):
                raise BoardWriteError(str(path), exc) from exc
            raise
        # The new file is the journal now: appends go to it, whatever happens next.
        old, self._fd = self._fd, fd
        self.lines = len(items)
        os.close(old)
        try:
            _sync_folder(path.parent)
        except OSError as exc:
            raise BoardWriteError(str(path), exc) from exc

    def append(self, items: list[Task | int]) -> None:
        """Write one line per task (or next id) and fsync; :class:`BoardWriteError` on failure."""
        try:
            _write_all(self._fd, b"".join(_line(item) for item in items))
            os.fsync(self._fd)
        except OSError as exc:
            raise BoardWriteError(str(self.path), exc) from exc
        self.lines += len(items)

    def close(self) -> None:
        """Unlock and close the file (idempotent)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
