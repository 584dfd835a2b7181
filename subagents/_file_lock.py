"""An exclusive, non-blocking OS file lock (``flock``), shared by every layer that locks a file.

A transcript's writer locks its file while a runtime runs the agent, and a
job's runner locks the job's lock file while a process runs the job. The lock
goes with the open file: closing it releases the lock, and so does a crash
(``kill -9`` included), since the operating system closes the file.
"""

from __future__ import annotations

import errno
import fcntl
from typing import Final

__all__ = ["try_lock"]

#: What ``flock`` says on a file system without locks: the file is used unlocked.
_NO_LOCKS: Final = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL})


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of the open file ``fd`` without waiting; whether it was free.

    On a file system that has no locks the answer is ``True``: the file is used
    as before, without the protection of the lock.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in _NO_LOCKS:
            return True
        raise
    return True
