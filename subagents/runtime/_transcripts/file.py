"""The file a transcript writer appends to: opened private, unbuffered, in append mode.

A writer hands each line to the OS by one ``write`` on a :class:`TranscriptFile`
(:func:`open_append` by default; tests inject failing files). The helpers here
see to the file itself: that a resumed file ending in a torn line gets a newline
first, whether a file is empty, and that a short write is finished or fails.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final, Protocol, TypeVar, final

__all__ = [
    "DescriptorFile",
    "TranscriptFile",
    "ensure_folder",
    "forget_folder",
    "in_folder",
    "open_append",
]

T = TypeVar("T")

#: Folders this process made (or found) for transcripts: a new file in one of them
#: needs no ``mkdir``, which costs a failed system call, an exception and a ``stat``
#: per agent when the folder is there. Bounded: cleared once it holds this many.
#: Kept as strings: a spawn names its file by a string and makes no ``Path`` (a
#: ``Path``'s parent and hash cost a dozen Python calls an agent).
_KNOWN_FOLDERS_MAX: Final = 1024
_known_folders: set[str] = set()


class TranscriptFile(Protocol):
    """What a writer writes to: an unbuffered binary file opened for appending."""

    def write(self, data: bytes, /) -> int | None: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...


@final
class DescriptorFile:
    """A transcript file the helper process made, opened for appending and locked: its
    descriptor, written with ``os.write``.

    ``open(fd, "ab", buffering=0)`` would cost two system calls a file (an ``fstat``,
    and an ``lseek`` that ``O_APPEND`` makes moot) and a ``FileIO`` with a dict of its
    own an agent. Closed when dropped unclosed, as a ``FileIO`` is.
    """

    __slots__ = ("_fd",)

    def __init__(self, fd: int, /) -> None:
        self._fd = fd

    def write(self, data: bytes, /) -> int:
        return os.write(self._fd, data)

    def fileno(self) -> int:
        """The descriptor (``-1`` once closed: a call with it fails with ``EBADF``)."""
        return self._fd

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


def open_append(path: str | os.PathLike[str]) -> TranscriptFile:
    """The default opener: ``path`` unbuffered, in append mode, created private to its owner."""
    return open(path, "ab", buffering=0, opener=_private)


def in_folder(path: str | os.PathLike[str], make: Callable[[], T]) -> T:
    """``make()``, once ``path``'s folder exists (made private to its owner if it is not).

    A folder made before is not asked about again; if it went away meanwhile (the file
    cannot be made: ``FileNotFoundError``), it is made again and ``make`` tried once more.
    """
    folder = os.path.dirname(os.fspath(path))
    if folder in _known_folders:
        try:
            return make()
        except FileNotFoundError:
            _known_folders.discard(folder)
    ensure_folder(folder)
    return make()


def ensure_folder(folder: str | os.PathLike[str]) -> None:
    """Make ``folder`` (private to its owner) unless this process made or found it before."""
    name = os.fspath(folder)
    if name in _known_folders:
        return
    Path(name or ".").mkdir(parents=True, exist_ok=True, mode=0o700)
    if len(_known_folders) >= _KNOWN_FOLDERS_MAX:
        _known_folders.clear()
    _known_folders.add(name)


def forget_folder(folder: str | os.PathLike[str]) -> None:
    """``folder`` went away: the next file in it makes it again."""
    _known_folders.discard(os.fspath(folder))


def needs_newline(path: Path) -> bool:
    """Whether ``path`` ends in a torn line that the next line must not be glued to."""
    try:
        with open(path, "rb") as file:
            if file.seek(0, os.SEEK_END) == 0:
                return False
            file.seek(-1, os.SEEK_END)
            return file.read(1) != b"\n"
    except FileNotFoundError:
        return False


def is_empty(path: Path) -> bool:
    try:
        return os.stat(path).st_size == 0
    except OSError:
        return True


def write_all(file: TranscriptFile, data: bytes) -> None:
    while data:
        written = file.write(data)
        if not written:
            raise OSError(errno.EIO, "the transcript file accepted no bytes")
        data = data[written:]
