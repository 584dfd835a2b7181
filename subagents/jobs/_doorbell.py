"""A running job's doorbell: how ``cancel_job`` in another process reaches it at once.

The process running a job makes a FIFO in the job's folder and waits for it to
be readable (no polling); ``cancel_job`` records the cancel in the job's state,
then writes a byte to the FIFO. The byte carries no authority: the runner reads
the state again, and stops only if the state says ``cancelled``. Without a
doorbell (no FIFO support, a folder it cannot write, nobody running), the
cancel still lands: the runner reads the state at each committed row.

The runner opens its FIFO read-write, so the FIFO always has a writer and never
reads as hung up between rings. The ringer opens it write-only and
non-blocking: with nobody running there is no reader, the open fails with
``ENXIO``, and that is the answer. It never writes to anything but a FIFO, and
never through a symbolic link.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import trio

__all__ = ["DOORBELL_NAME", "open_doorbell", "ring_doorbell", "wait_rung"]

#: The doorbell's name in a job's folder.
DOORBELL_NAME: Final = "cancel.fifo"

#: Bytes read from the doorbell at once: rings are folded together.
_DRAIN_BYTES: Final = 512

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)


@contextlib.contextmanager
def open_doorbell(folder: Path) -> Iterator[int | None]:
    """Make the job's doorbell and yield its descriptor (``None``: no doorbell here);
    remove it on the way out. Only the job's lock holder calls this."""
    mkfifo = getattr(os, "mkfifo", None)
    if mkfifo is None:  # no FIFOs on this platform: cancels land at committed rows
        yield None
        return
    path = folder / DOORBELL_NAME
    try:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # one left by a runner that was killed
        mkfifo(path, 0o600)
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC)
    except OSError:
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()


async def wait_rung(fd: int) -> None:
    """Return once the doorbell ``fd`` has been rung, having read what was written."""
    while True:
        await trio.lowlevel.wait_readable(fd)
        try:
            if os.read(fd, _DRAIN_BYTES):
                with contextlib.suppress(BlockingIOError):
                    while os.read(fd, _DRAIN_BYTES):
                        pass
                return
        except BlockingIOError:  # woken with nothing to read: wait again
            continue


def ring_doorbell(folder: Path) -> bool:
    """Ring the doorbell of the job in ``folder``; whether a running process heard it.

    Does nothing to a path that is not a FIFO (a file or link put there is left
    alone), and never blocks.
    """
    path = folder / DOORBELL_NAME
    try:
        if not stat.S_ISFIFO(os.lstat(path).st_mode):
            return False
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC)
    except OSError:  # gone, or no reader (ENXIO): nobody is running the job
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):  # swapped between the two calls
            return False
        os.write(fd, b"c")
    except BlockingIOError:  # full: rung already, and not read yet
        pass
    except OSError:  # the reader went away meanwhile
        return False
    finally:
        os.close(fd)
    return True
