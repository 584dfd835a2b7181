"""A helper process that makes the flusher's ``fsync`` calls, off the Trio thread and its GIL.

A result must be on disk (``fsync``) before its completion is published. Made in
the Trio thread, an ``fsync`` stalls every agent for a disk's commit (0.2 to 6 ms
here). Made in a worker thread, it stalls nobody but costs more CPU than the
turn it protects: the worker needs the GIL back when the call returns, and while
it waits for it every system call of the Trio thread hands the GIL over and back
(22,000 context switches and about 40 us of CPU per turn for 1,000 agents of 10
turns, against none when the same calls are made in the Trio thread).

:class:`SyncHelper` is a small Python process (``python -I -S``: the standard
library only, nothing from the current folder or the environment) started by
the flusher at its first ``fsync``. The flusher hands it the files of a pass over
a Unix ``SOCK_SEQPACKET`` socket (``SCM_RIGHTS``: the helper gets its own copy
of each descriptor, so it syncs exactly our file), up to
:data:`MAX_FDS_PER_MESSAGE` per message; the helper syncs them (in a few threads
of its own, so the file system commits them together), closes its copies and
answers with each call's ``errno``. The Trio task waits for the answer on the
socket, without a thread.

It carries no authority: it only ever receives descriptors from us and answers
with numbers. It ignores ``SIGINT`` (Ctrl-C is the runtime's to handle) and ends
when its socket closes: when the flusher stops, or when this process dies,
however (``kill -9`` included), so it is never left behind.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence
from typing import Final, final

import trio

__all__ = ["MAX_FDS_PER_MESSAGE", "SYNC_SECONDS", "SyncHelper", "helper_available"]

#: Descriptors per message: the kernel passes at most 253 (``SCM_MAX_FD``).
MAX_FDS_PER_MESSAGE: Final = 250
#: Seconds a batch of ``fsync`` calls may take before each of its files fails with
#: ``ETIMEDOUT`` and the helper is given up (a disk that cannot commit in this long
#: is failing, and the writers' disk-error policy takes over).
SYNC_SECONDS: Final = 120.0
#: Seconds the helper has to end once its socket is closed, before it is killed.
STOP_SECONDS: Final = 5.0

_ANSWER: Final = struct.Struct("=I")
_CODE: Final = struct.Struct("=i")

# The helper's whole program. Kept to the standard library and to what ``-I -S``
# allows: it must start in milliseconds and import nothing from the user's folder.
_HELPER_SOURCE: Final = r"""
import os, signal, socket, struct, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
channel = socket.socket(fileno=int(sys.argv[1]))
limit = int(sys.argv[2])
pool = None

def sync(fd):
    try:
        os.fsync(fd)
        return 0
    except OSError as exc:
        return exc.errno or 5
    finally:
        os.close(fd)

while True:
    try:
        data, ancillary, _, _ = channel.recvmsg(16, socket.CMSG_SPACE(limit * 4))
    except OSError:
        break
    fds = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            whole = len(payload) - len(payload) % 4
            fds.extend(struct.unpack("=%di" % (whole // 4), payload[:whole]))
    if not data:
        for fd in fds:
            os.close(fd)
        break
    if len(fds) > 1:
        if pool is None:
            from concurrent.futures import ThreadPoolExecutor
            pool = ThreadPoolExecutor(8)
        codes = list(pool.map(sync, fds))
    else:
        codes = [sync(fd) for fd in fds]
    channel.sendall(struct.pack("=I%di" % len(codes), len(codes), *codes))
"""


def helper_available() -> bool:
    """Whether this interpreter can start the helper: a Python executable to run, and Unix
    sockets that pass descriptors in messages (Linux; elsewhere the flusher uses threads)."""
    return (
        bool(sys.executable)
        and not getattr(sys, "frozen", False)
        and hasattr(socket, "SOCK_SEQPACKET")
        and hasattr(socket, "SCM_RIGHTS")
        and hasattr(socket.socket, "sendmsg")
    )


@final
class SyncHelper:
    """The running helper: :meth:`fsync_all` hands it files, :meth:`aclose` ends it.

    One caller at a time (the flusher's task): each batch is one request and one answer.
    """

    __slots__ = ("_channel", "_process", "synced")

    def __init__(self, process: trio.Process, channel: trio.socket.SocketType) -> None:
        self._process = process
        self._channel = channel
        #: How many files the helper synced (failed calls included).
        self.synced = 0

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    async def start(cls) -> SyncHelper:
        """Start the helper; raises ``OSError`` when it cannot be started."""
        if not helper_available():
            raise OSError(errno.ENOTSUP, "no helper process on this platform")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            ours.setblocking(False)
            process = await trio.lowlevel.open_process(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _HELPER_SOURCE,
                    str(theirs.fileno()),
                    str(MAX_FDS_PER_MESSAGE),
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return cls(process, trio.socket.from_stdlib_socket(ours))

    async def fsync_all(self, fds: Sequence[int]) -> list[int]:
        """``fsync`` every file of ``fds``; the ``errno`` of each call (0: done).

        Raises ``OSError`` when the helper cannot answer (it ended, or the batch took
        longer than :data:`SYNC_SECONDS`): the helper is then of no more use, and
        which of the batch's files it synced is unknown.
        """
        codes: list[int] = []
        with trio.move_on_after(SYNC_SECONDS) as deadline:
            for start in range(0, len(fds), MAX_FDS_PER_MESSAGE):
                chunk = fds[start : start + MAX_FDS_PER_MESSAGE]
                codes.extend(await self._one_message(chunk))
        if deadline.cancelled_caught:
            raise OSError(errno.ETIMEDOUT, f"fsync took longer than {SYNC_SECONDS:g} s")
        self.synced += len(codes)
        return codes

    async def _one_message(self, fds: Sequence[int]) -> list[int]:
        rights = struct.pack(f"={len(fds)}i", *fds)
        await self._channel.sendmsg([b"s"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
        answer = await self._channel.recv(_ANSWER.size + _CODE.size * MAX_FDS_PER_MESSAGE)
        if len(answer) < _ANSWER.size:
            raise OSError(errno.EPIPE, "the fsync helper ended")
        (count,) = _ANSWER.unpack_from(answer)
        if count != len(fds) or len(answer) != _ANSWER.size + _CODE.size * count:
            raise OSError(errno.EPROTO, "the fsync helper answered for other files")
        return list(struct.unpack_from(f"={count}i", answer, _ANSWER.size))

    async def aclose(self) -> None:
        """End the helper (its socket closes; killed if it has not ended within
        :data:`STOP_SECONDS`) and reap it. Shielded: it is never left running."""
        with trio.CancelScope(shield=True):
            self._channel.close()
            with trio.move_on_after(STOP_SECONDS):
                await self._process.wait()
            if self._process.returncode is None:
                with contextlib.suppress(OSError):
                    self._process.kill()
                # A process stuck in the kernel (an fsync on a dead network disk) cannot
                # die until the call returns: it is not waited for past this.
                with trio.move_on_after(STOP_SECONDS):
                    await self._process.wait()
