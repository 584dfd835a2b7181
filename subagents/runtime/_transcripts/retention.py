"""Retention: old transcripts removed, and only what ``subagents`` recognisably wrote.

:func:`clean_old_transcripts` looks at ``<state_dir>/sessions/`` and touches
only folders named like a session id (``YYYYMMDD-HHMMSS-<6 hex>``, as
:func:`~subagents.runtime.new_session_id` makes them). In such a folder, the
files it removes are its own: regular files ``subagents/agent-<id>.jsonl``
whose first line is the meta record of agent ``<id>`` in that session. The
session is old when the newest of them was last written before the cutoff.
Anything else in the folder (a user's file, a link, another folder) is left,
and so is the folder then. A session one of whose transcripts is locked (its
agent is live in some runtime, see :mod:`subagents.runtime._transcripts.lock`)
is left whole, and each file is removed while its lock is held, so a resume
that comes at the same moment finds it gone rather than half-removed.

Every folder is opened relative to its parent's descriptor, never through a
link (``O_NOFOLLOW``), so a link swapped in anywhere under the state directory
leads nowhere (the state directory itself, as configured, may be a link).
This does blocking file I/O: from Trio, run it in a thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import attrs
import msgspec

from subagents.runtime._exceptions import TranscriptError
from subagents.runtime._transcripts.lock import is_locked, try_lock
from subagents.runtime._transcripts.records import MetaRecord

__all__ = ["PrunedSession", "clean_old_transcripts", "is_session_id"]

#: A session id as ``new_session_id`` makes it: ``YYYYMMDD-HHMMSS-<6 hex>``.
_SESSION_ID: Final = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
_NAME: Final = re.compile(r"agent-(.+)\.jsonl")
_FOLDER: Final = "subagents"
_DAY: Final = 86_400.0
#: The longest first line read for the meta record.
_HEAD_LIMIT: Final = 1 << 20
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_meta_decoder = msgspec.json.Decoder(MetaRecord)


def is_session_id(name: str) -> bool:
    """Whether ``name`` has the form of a session id this runtime makes."""
    return _SESSION_ID.fullmatch(name) is not None


@attrs.frozen
class PrunedSession:
    """An old session folder as retention found it: what went (or would), and what stayed.

    ``transcripts`` are the agents' transcripts removed (in a dry run, to be
    removed); ``left`` what is not ours, or could not be removed, and stays with
    the folder; ``skipped`` says why nothing was removed (an agent of the
    session is live), else ``None``. ``newest`` is the wall time its newest
    transcript was written.
    """

    path: Path
    session_id: str
    newest: float
    transcripts: tuple[Path, ...]
    left: tuple[Path, ...] = ()
    skipped: str | None = None
    folder_removed: bool = False


@attrs.frozen
class _Own:
    name: str
    ino: int
    mtime: float


def _open_dir(name: str, parent: int) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return None


@contextlib.contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def _check_days(days: float) -> None:
    if (
        isinstance(days, bool)
        or not isinstance(days, int | float)
        or not days > 0
        or days == float("inf")
    ):
        raise TranscriptError(
            f"The transcript retention must be a positive number of days (got "
            f"{days!r}); to keep transcripts forever, do not clean them."
        )


def clean_old_transcripts(
    state_dir: str | os.PathLike[str],
    older_than_days: float,
    now: float | None = None,
    *,
    dry_run: bool = False,
) -> list[PrunedSession]:
    """Remove the transcripts of sessions last written more than ``older_than_days`` ago.

    Only what this runtime wrote goes (see the module docstring); a session
    with a live agent stays whole. ``now`` is a wall time (default: the
    current one); ``dry_run`` removes nothing and says what would go. Returns
    every old session found, oldest first, with what was removed or kept.
    """
    _check_days(older_than_days)
    cutoff = (time.time() if now is None else now) - older_than_days * _DAY
    try:  # the configured state directory may itself be a link; nothing under it is followed
        state = os.open(state_dir, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError:
        return []
    with _closing(state):
        sessions = _open_dir("sessions", state)
    if sessions is None:
        return []
    root = Path(state_dir) / "sessions"
    found: list[PrunedSession] = []
    with _closing(sessions):
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(sessions)
                if is_session_id(entry.name) and entry.is_dir(follow_symlinks=False)
            )
        except OSError:
            return []
        for name in names:
            pruned = _session(sessions, root / name, name, cutoff, dry_run)
            if pruned is not None:
                found.append(pruned)
    found.sort(key=lambda item: item.newest)
    return found


def _session(
    sessions: int, path: Path, session_id: str, cutoff: float, dry_run: bool
) -> PrunedSession | None:
    folder = _open_dir(session_id, sessions)
    if folder is None:
        return None
    with _closing(folder):
        try:
            others = sorted(name for name in os.listdir(folder) if name != _FOLDER)
        except OSError:
            return None
        inner = _open_dir(_FOLDER, folder)
        if inner is None:
            return None
        with _closing(inner):
            if _fresh(inner, cutoff) is not False:
                return None
            own, foreign = _scan(inner, session_id)
            if not own:
                return None
            newest = max(item.mtime for item in own)
            if newest >= cutoff:
                return None
            files = tuple(path / _FOLDER / item.name for item in own)
            left = tuple(path / name for name in others) + tuple(
                path / _FOLDER / name for name in foreign
            )
            if any(_live(inner, item) for item in own):
                return PrunedSession(
                    path,
                    session_id,
                    newest,
                    (),
                    left + files,
                    skipped="an agent of this session is live (its transcript is locked)",
                )
            if dry_run:
                return PrunedSession(path, session_id, newest, files, left, folder_removed=not left)
            removed, kept = _remove(inner, own, cutoff)
            left += tuple(path / _FOLDER / name for name in kept)
            if kept or foreign:
                return PrunedSession(
                    path, session_id, newest, tuple(path / _FOLDER / n for n in removed), left
                )
        with contextlib.suppress(OSError):
            os.rmdir(_FOLDER, dir_fd=folder)
    gone = False
    if not others:
        with contextlib.suppress(OSError):
            os.rmdir(session_id, dir_fd=sessions)
            gone = True
    return PrunedSession(
        path,
        session_id,
        newest,
        tuple(path / _FOLDER / n for n in removed),
        left,
        folder_removed=gone,
    )


def _fresh(inner: int, cutoff: float) -> bool | None:
    """Whether a transcript-named file in ``inner`` was written since ``cutoff`` (by ``lstat``).

    A fresh session is left before any file is opened, so a runtime closing
    next to a thousand fresh transcripts reads none of them. ``None`` when the
    folder cannot be read.
    """
    try:
        with os.scandir(inner) as entries:
            for entry in entries:
                if _NAME.fullmatch(entry.name) and entry.stat(follow_symlinks=False).st_mtime >= (
                    cutoff
                ):
                    return True
    except OSError:
        return None
    return False


def _scan(inner: int, session_id: str) -> tuple[list[_Own], list[str]]:
    """The transcripts of ``session_id`` in the open folder ``inner``, and every other name."""
    own: list[_Own] = []
    foreign: list[str] = []
    try:
        names = sorted(os.listdir(inner))
    except OSError:
        return own, ["."]
    for name in names:
        item = _own(inner, name, session_id)
        if item is None:
            foreign.append(name)
        else:
            own.append(item)
    return own, foreign


def _own(inner: int, name: str, session_id: str) -> _Own | None:
    """``name`` as one of our transcripts, or ``None`` when it is not recognisably ours."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=inner)
    except OSError:
        return None
    with _closing(fd):
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            with open(fd, "rb", closefd=False) as file:
                meta = _meta_decoder.decode(file.readline(_HEAD_LIMIT))
        except (OSError, msgspec.MsgspecError, RecursionError):
            return None
    if meta.agent_id != match.group(1) or meta.session_id != session_id:
        return None
    return _Own(name, info.st_ino, info.st_mtime)


def _live(inner: int, item: _Own) -> bool:
    try:
        fd = os.open(item.name, _FILE_FLAGS, dir_fd=inner)
    except OSError:
        return False
    with _closing(fd):
        return is_locked(fd)


def _remove(inner: int, own: list[_Own], cutoff: float) -> tuple[list[str], list[str]]:
    """Unlink each transcript while holding its lock, if it is still the old file; (gone, kept)."""
    removed: list[str] = []
    kept: list[str] = []
    for item in own:
        try:
            fd = os.open(item.name, _FILE_FLAGS, dir_fd=inner)
        except OSError:
            kept.append(item.name)
            continue
        with _closing(fd):
            try:
                info = os.fstat(fd)
                same = (info.st_ino, info.st_mtime) == (item.ino, item.mtime)
                if same and info.st_mtime < cutoff and try_lock(fd):
                    os.unlink(item.name, dir_fd=inner)
                    removed.append(item.name)
                    continue
            except OSError:
                pass
        kept.append(item.name)
    return removed, kept
