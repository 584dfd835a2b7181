"""An exclusive, non-blocking OS file lock (``flock``), shared by every layer that locks a file.

A transcript's writer locks its file while a runtime runs the agent, and a
job's runner locks the job's lock file while a process runs the job. The lock
goes with the open file: closing it releases the lock, and so does a crash
(``kill -9`` included), since the operating system closes the file.

The lock belongs to the open file, not to a descriptor: a process being started
(``fork``, then ``exec``) holds a copy of every descriptor of ours until its
``exec`` closes them, so a lock this process has just released can look held
for that moment, by a runtime's helper process or a tool's subprocess started
from another thread. Whoever takes a lock to keep it waits :data:`FORK_WINDOW_SECONDS`
for that before saying it is held; a probe (is it held?) does not wait.
"""

from __future__ import annotations

import errno
import fcntl
import time
from typing import Final

__all__ = ["FORK_WINDOW_SECONDS", "try_lock"]

#: How long taking a lock waits for a holder that is only a process being started.
FORK_WINDOW_SECONDS: Final = 0.25

#: What ``flock`` says on a file system without locks: the file is used unlocked.
_NO_LOCKS: Final = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL})


def try_lock(fd: int, *, wait: float = 0.0) -> bool:
    """Take the exclusive lock of the open file ``fd``; whether it was free.

    A lock held elsewhere is tried again for up to ``wait`` seconds (at growing
    intervals, from 1 ms), for a holder that is a process being started (see
    above); without ``wait`` the answer is at once. On a file system that has no
    locks the answer is ``True``: the file is used as before, without the
    protection of the lock.
    """
    deadline: float | None = None
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            now = time.monotonic()
            if deadline is None:
                deadline = now + wait
            if now >= deadline:
                return False
            time.sleep(min(pause, deadline - now))
            pause = min(pause * 2, 0.05)
            continue
        except OSError as exc:
            if exc.errno in _NO_LOCKS:
                return True
            raise
        return True
