"""Reading a small settings file that a stranger may have replaced with anything.

A repository's ``subagents.toml`` may be a directory, a FIFO (``open`` would
wait for a writer forever) or a link to ``/dev/zero`` (``read`` would never
end). :func:`read_small_file` reads only a regular file, never blocks on
opening, and reads at most a bound; anything else raises :class:`FileRefused`
with a reason short enough for one line.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["FileRefused", "read_small_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(Exception):
    """A file that is not read: ``reason`` says why (``is a FIFO (named pipe)``)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} {reason}")


def _kind(mode: int) -> str | None:
    """What a non-regular file is, or ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _check(path: Path, st: os.stat_result, limit: int) -> None:
    kind = _kind(st.st_mode)
    if kind is not None:
        raise FileRefused(path, f"is {kind}, not a regular file")
    if st.st_size > limit:
        raise FileRefused(path, f"is {st.st_size} bytes, more than the {limit} read")


def read_small_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`FileRefused` for anything that is not a regular file (checked
    before opening and again on the open file, so a swap in between is caught)
    or that holds more than ``limit`` bytes, and ``OSError`` when it cannot be
    read (missing, no permission).
    """
    _check(path, os.stat(path), limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        _check(path, os.fstat(fd), limit)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:  # it grew after the check
        raise FileRefused(path, f"holds more than the {limit} bytes read")
    return b"".join(chunks)
