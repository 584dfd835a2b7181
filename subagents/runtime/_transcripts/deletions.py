"""Deleted transcript files noticed once a pass, not by a system call after every line.

A ``write`` to a file that was deleted succeeds, and its line is lost. A writer on
its own notices that by an ``fstat`` after each line (the link count is 0). With
the runtime's flusher running, a :class:`DeletionWatch` (Linux ``inotify``, through
``inotify_simple``) watches the folders the transcripts are in instead: the flusher
keeps each line for two of its looks, and looks once a pass (one ``ioctl`` when
nothing happened). A file that an event names (deleted, renamed over, moved
away) is looked at by its writer: gone, its kept lines go back to memory, as after
an ``fstat`` that saw it gone; still linked, the writer goes back to an ``fstat``
a line. An event about the folder itself, a queue that overflowed, or a watch
that cannot be made sends every writer concerned back to ``fstat``.
"""

from __future__ import annotations

import contextlib
from typing import Final, final

__all__ = ["DeletionWatch", "open_watch"]

# inotify(7) event bits: those that can unlink a watched folder's file, or end the watch.
_IN_MOVED_FROM: Final = 0x00000040
_IN_MOVED_TO: Final = 0x00000080
_IN_DELETE: Final = 0x00000200
_IN_DELETE_SELF: Final = 0x00000400
_IN_MOVE_SELF: Final = 0x00000800
_IN_UNMOUNT: Final = 0x00002000
_IN_Q_OVERFLOW: Final = 0x00004000
_IN_IGNORED: Final = 0x00008000
_IN_ONLYDIR: Final = 0x01000000
_MASK: Final = (
    _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
)
#: Events that end what a watch can tell about its folder.
_FOLDER_GONE: Final = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_IGNORED

#: Watched folders at most (one a session folder in use): past it, writers ``fstat``.
MAX_FOLDERS: Final = 64


@final
class DeletionWatch:
    """Which watched transcript files may have lost their name since the last look.

    A file is named by its folder and its name (``os.path.split`` of the path its
    writer opened); a folder's watch is added at its first file. :meth:`changed`
    reads the events that came since it was last called (one ``ioctl`` when none
    did) and returns the files they name, or ``None`` (every file) after an
    overflow, when the watch is closed and watches nothing more.
    """

    __slots__ = ("_inotify", "_wds")

    def __init__(self, inotify: object) -> None:
        self._inotify = inotify
        self._wds: dict[int, str] = {}

    @property
    def closed(self) -> bool:
        """Whether the watch ended (closed, or given up after an overflow)."""
        return self._inotify is None

    def watch(self, folder: str) -> bool:
        """Watch the folder ``folder`` names now; ``False`` when it cannot be watched (the
        caller goes on with ``fstat``).

        The path is resolved at every call (``inotify_add_watch`` gives the watch of the
        folder it finds, an existing one for a folder watched before): a folder renamed
        with one of its parents, or a link pointed elsewhere, is not taken for the one
        watched under that name before. The same folder under a second name is not
        watched (an event names it under one).
        """
        inotify = self._inotify
        if inotify is None:
            return False
        try:
            wd: int = inotify.add_watch(folder or ".", _MASK)  # type: ignore[attr-defined]
        except (OSError, ValueError):
            return False
        known = self._wds.get(wd)
        if known is not None:
            return known == folder
        if len(self._wds) >= MAX_FOLDERS:
            with contextlib.suppress(OSError):
                inotify.rm_watch(wd)  # type: ignore[attr-defined]
            return False
        self._wds[wd] = folder
        return True

    def changed(self) -> frozenset[tuple[str, str]] | None:
        """The files events named since the last call, as ``(folder, name)``; a folder's
        own event (deleted, moved, unmounted) as ``(folder, "")``: all of its files.
        ``None`` after an overflow or a failed read: every file."""
        inotify = self._inotify
        if inotify is None:
            return frozenset()
        try:
            events = inotify.read(timeout=0)  # type: ignore[attr-defined]
        except OSError:
            self.close()
            return None
        if not events:
            return frozenset()
        named: set[tuple[str, str]] = set()
        for wd, mask, _cookie, name in events:
            if mask & _IN_Q_OVERFLOW:
                self.close()
                return None
            folder = self._wds.get(wd)
            if folder is None:  # IN_IGNORED after the folder's own event
                continue
            if mask & _FOLDER_GONE:
                named.add((folder, ""))
                del self._wds[wd]
            elif name:
                named.add((folder, name))
        return frozenset(named)

    def close(self) -> None:
        """Stop watching; idempotent."""
        inotify, self._inotify = self._inotify, None
        self._wds.clear()
        if inotify is not None:
            inotify.close()  # type: ignore[attr-defined]


def open_watch() -> DeletionWatch | None:
    """A watch, or ``None`` where ``inotify`` is not to be had (not Linux, or the user's
    limit of ``inotify`` instances reached): writers then ``fstat`` after each line."""
    try:
        from inotify_simple import INotify  # Linux only (a dependency on Linux only)
    except ImportError:
        return None
    try:
        return DeletionWatch(INotify(nonblocking=True))
    except (OSError, AttributeError):  # AttributeError: a C library without inotify
        return None
