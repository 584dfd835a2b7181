"""A helper process that makes the flusher's ``fsync`` calls and new files, off the Trio
thread and its GIL.

A result must be on disk (``fsync``) before its completion is published. Made in
the Trio thread, an ``fsync`` stalls every agent for a disk's commit (0.2 to 6 ms
here). Made in a worker thread, it stalls nobody but costs more CPU than the
turn it protects: the worker needs the GIL back when the call returns, and while
it waits for it every system call of the Trio thread hands the GIL over and back
(22,000 context switches and about 40 us of CPU per turn for 1,000 agents of 10
turns, against none when the same calls are made in the Trio thread). Making a
new transcript file is the same story: 50 us to over a millisecond of the file
system's time each on this machine's disk, serialized in the folder, which a
worker thread turned into a GIL convoy (1,000 files took a second).

:class:`SyncHelper` is a small Python process (``python -I -S``: the standard
library only, nothing from the current folder or the environment) started by
the flusher at its first ``fsync`` or new file. It has two Unix
``SOCK_SEQPACKET`` sockets, one thread of its own on each, so that neither kind
of request waits for the other's batch:

- ``fsync``: the flusher hands it the files of a pass (``SCM_RIGHTS``: the helper
  gets its own copy of each descriptor, so it syncs exactly our file), up to
  :data:`MAX_FDS_PER_MESSAGE` per message; the helper syncs them (in a few
  threads, so the file system commits them together), closes its copies and
  answers with each call's ``errno``;
- new files: the flusher sends the paths of a pass; the helper opens each as
  :func:`~subagents.runtime._transcripts.file.open_append` would (append,
  created ``0o600``) and checks that it is empty, hands the descriptors back
  and closes its copies; the writer then locks its file in the Trio thread, as
  ever (a lock taken here would be held by the descriptor in flight, against a
  writer that makes its own file meanwhile: ``TranscriptFlusher.claim_open``).
  A file that is not empty comes back as ``EEXIST``, and its writer makes it the
  usual way (ending a torn line).

The Trio task waits for each answer on its socket, without a thread.

It carries no authority: it only ever receives descriptors and paths from us and
answers with numbers and descriptors. It ignores ``SIGINT`` (Ctrl-C is the
runtime's to handle) and ends when its sockets close: when the flusher stops, or
when this process dies, however (``kill -9`` included), so it is never left
behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Final, TypeVar, final

import trio

__all__ = [
    "MAX_FDS_PER_MESSAGE",
    "MAX_PATH_BYTES",
    "SYNC_SECONDS",
    "SyncHelper",
    "helper_available",
    "helper_can_make",
]

#: Descriptors per message: the kernel passes at most 253 (``SCM_MAX_FD``).
MAX_FDS_PER_MESSAGE: Final = 250
#: Bytes of paths per message asking for new files (``PATH_MAX`` is 4,096).
MAX_PATH_BYTES: Final = 65_536
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
import errno, os, signal, socket, struct, sys, threading
signal.signal(signal.SIGINT, signal.SIG_IGN)
limit = int(sys.argv[3])
size = int(sys.argv[4])
pool = None

def sync(fd):
    try:
        os.fsync(fd)
        return 0
    except OSError as exc:
        return exc.errno or 5
    finally:
        os.close(fd)

def make(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        return -1, exc.errno or 5
    try:
        if not os.fstat(fd).st_size:
            return fd, 0
        code = errno.EEXIST
    except OSError as exc:
        code = exc.errno or 5
    os.close(fd)
    return -1, code

def serve(channel):
    global pool
    while True:
        try:
            data, ancillary, _, _ = channel.recvmsg(size, socket.CMSG_SPACE(limit * 4))
        except OSError:
            return
        fds = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                whole = len(payload) - len(payload) % 4
                fds.extend(struct.unpack("=%di" % (whole // 4), payload[:whole]))
        kind = data[:1]
        if kind != b"s":  # descriptors come only with fsync requests
            for fd in fds:
                os.close(fd)
        if kind == b"o":
            made = [make(path) for path in data[1:].split(b"\0")]
            fds = [fd for fd, _ in made if fd >= 0]
            answer = struct.pack("=I%di" % len(made), len(made), *(code for _, code in made))
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("=%di" % len(fds), *fds))]
            try:
                channel.sendmsg([answer], rights if fds else [])
            finally:
                for fd in fds:
                    os.close(fd)
            continue
        if kind != b"s":  # the socket closed (no data), or a request it does not know
            return
        if len(fds) > 1:
            if pool is None:
                from concurrent.futures import ThreadPoolExecutor
                pool = ThreadPoolExecutor(8)
            codes = list(pool.map(sync, fds))
        else:
            codes = [sync(fd) for fd in fds]
        channel.sendall(struct.pack("=I%di" % len(codes), len(codes), *codes))

# Two channels, one thread each: new files never wait for a batch of fsync calls.
files = threading.Thread(target=serve, args=(socket.socket(fileno=int(sys.argv[2])),), daemon=True)
files.start()
serve(socket.socket(fileno=int(sys.argv[1])))
"""


def _answer_problem(answer: bytes, flags: int, files: int, fds: int) -> OSError | None:
    """What is wrong with the helper's answer to a request for ``files`` new files that
    came with ``fds`` descriptors, or ``None``."""
    if len(answer) < _ANSWER.size:
        return OSError(errno.EPIPE, "the file helper ended")
    (count,) = _ANSWER.unpack_from(answer)
    if count != files or len(answer) != _ANSWER.size + _CODE.size * count:
        return OSError(errno.EPROTO, "the file helper answered for other files")
    codes = struct.unpack_from(f"={count}i", answer, _ANSWER.size)
    if flags & socket.MSG_CTRUNC or fds != sum(1 for code in codes if code == 0):
        return OSError(errno.EPROTO, "the file helper's descriptors did not all arrive")
    return None


def _close_made(made: Sequence[int]) -> None:
    """Close the descriptors of an :meth:`SyncHelper.open_all` that will not be returned."""
    for fd in made:
        if fd >= 0:
            os.close(fd)


def _stopped() -> OSError:
    """What a request gets when the helper is stopped (:meth:`SyncHelper.aclose`) while
    it waits: the helper cannot answer, as when it ends, and the caller falls back."""
    return OSError(errno.EPIPE, "the file helper was stopped")


def helper_can_make(path: bytes) -> bool:
    """Whether :meth:`SyncHelper.open_all` takes ``path`` (no NUL byte, not over-long);
    any other is made the usual way, which reports what is wrong with it."""
    return b"\0" not in path and len(path) <= MAX_PATH_BYTES // 2


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


_Answer = TypeVar("_Answer")


async def _ask(
    lock: trio.Lock,
    sock: socket.socket,
    send: Callable[[], object],
    receive: Callable[[], _Answer],
) -> _Answer:
    """One request to the helper on ``sock`` and its answer, one at a time (``lock``).

    The request (one message, on a socket no other task writes to) goes out at once,
    and the caller sleeps once, until the answer is readable: a round trip is one
    scheduler pass, not the three that a lock's, a send's and a receive's
    checkpoints made. A closed socket (the helper stopped) is ``OSError(EPIPE)``.
    """
    if lock.locked():
        await lock.acquire()
        waited = True
    else:
        lock.acquire_nowait()
        waited = False
    try:
        if sock.fileno() == -1:
            raise _stopped()
        while True:
            try:
                send()
                break
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)
                waited = True
        while True:
            try:
                answer = receive()
                break
            except BlockingIOError:
                await trio.lowlevel.wait_readable(sock)
                waited = True
    except trio.ClosedResourceError:
        raise _stopped() from None
    finally:
        lock.release()
    if not waited:  # answered at once: still a checkpoint, as every Trio call is one
        await trio.lowlevel.cancel_shielded_checkpoint()
    return answer


@final
class SyncHelper:
    """The running helper: :meth:`fsync_all` hands it files to sync, :meth:`open_all` has it
    make files, :meth:`aclose` ends it.

    Each kind of request has its own socket, served by a thread of the helper's own, and
    one request with its answer at a time on each (a lock each: the flusher's fsync task
    and its file task call them side by side).
    """

    __slots__ = ("_channel", "_files", "_files_lock", "_lock", "_process", "made", "synced")

    def __init__(
        self,
        process: trio.Process,
        channel: socket.socket,
        files: socket.socket,
    ) -> None:
        self._process = process
        # fsync calls on one channel, new files on the other (served by a thread of
        # the helper's each), so that neither waits for the other's batch. Plain
        # non-blocking sockets: a request goes out without a yield, and its caller
        # sleeps once, until the answer is readable (see _ask).
        self._channel = channel
        self._files = files
        self._lock = trio.Lock()
        self._files_lock = trio.Lock()
        #: How many files the helper synced (failed calls included).
        self.synced = 0
        #: How many files the helper made and handed over.
        self.made = 0

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
            our_files, their_files = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except BaseException:
            ours.close()
            theirs.close()
            raise
        try:
            ours.setblocking(False)
            our_files.setblocking(False)
            process = await trio.lowlevel.open_process(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _HELPER_SOURCE,
                    str(theirs.fileno()),
                    str(their_files.fileno()),
                    str(MAX_FDS_PER_MESSAGE),
                    str(MAX_PATH_BYTES + 1),
                ],
                pass_fds=(theirs.fileno(), their_files.fileno()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            our_files.close()
            raise
        finally:
            theirs.close()
            their_files.close()
        return cls(process, ours, our_files)

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

    async def open_all(self, paths: Sequence[bytes]) -> list[int]:
        """Make each file of ``paths`` for appending, private to its owner (``0o600``),
        in the helper; for each, its descriptor, now this process's to close, or an
        ``errno``, negated: the failed ``open``'s, or ``EEXIST`` for a file that is not
        empty (left as it was).

        The helper makes each file with the calls :func:`~.file.open_append` makes,
        so the file system's cost of a new file (tens of microseconds of CPU, up to
        milliseconds while other files' ``fsync`` calls hold its journal) is paid
        by neither the Trio thread nor the GIL. Raises ``OSError`` when the helper
        cannot answer (it is then of no more use; no descriptor is left open here).
        """
        if not all(map(helper_can_make, paths)):
            raise OSError(errno.EINVAL, "not a path the helper can make")
        results: list[int] = []
        try:
            with trio.move_on_after(SYNC_SECONDS) as deadline:
                chunk: list[bytes] = []
                size = 0
                for path in paths:
                    full = len(chunk) == MAX_FDS_PER_MESSAGE or size + len(path) >= MAX_PATH_BYTES
                    if chunk and full:
                        results.extend(await self._make(chunk))
                        chunk, size = [], 0
                    chunk.append(path)
                    size += len(path) + 1
                if chunk:
                    results.extend(await self._make(chunk))
        except BaseException:  # re-raised: the descriptors of the messages answered are closed
            _close_made(results)
            raise
        if deadline.cancelled_caught:
            _close_made(results)
            raise OSError(errno.ETIMEDOUT, f"making files took longer than {SYNC_SECONDS:g} s")
        return results

    async def _make(self, paths: list[bytes]) -> list[int]:
        request = b"o" + b"\0".join(paths)
        files = self._files
        answer, ancillary, flags, _ = await _ask(
            self._files_lock,
            files,
            lambda: files.sendmsg([request]),
            lambda: files.recvmsg(
                _ANSWER.size + _CODE.size * MAX_FDS_PER_MESSAGE,
                socket.CMSG_SPACE(MAX_FDS_PER_MESSAGE * 4),
            ),
        )
        fds: list[int] = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                whole = len(payload) - len(payload) % 4
                fds.extend(struct.unpack(f"={whole // 4}i", payload[:whole]))
        problem = _answer_problem(answer, flags, len(paths), len(fds))
        if problem is not None:
            for fd in fds:
                os.close(fd)
            raise problem
        codes = struct.unpack_from(f"={len(paths)}i", answer, _ANSWER.size)
        handed = iter(fds)
        self.made += len(fds)
        return [next(handed) if code == 0 else -code for code in codes]

    async def _one_message(self, fds: Sequence[int]) -> list[int]:
        rights = struct.pack(f"={len(fds)}i", *fds)
        channel = self._channel
        answer = await _ask(
            self._lock,
            channel,
            lambda: channel.sendmsg([b"s"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)]),
            lambda: channel.recv(_ANSWER.size + _CODE.size * MAX_FDS_PER_MESSAGE),
        )
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
            for sock in (self._channel, self._files):
                if sock.fileno() != -1:
                    trio.lowlevel.notify_closing(sock)  # a request waiting: ClosedResourceError
                sock.close()
            with trio.move_on_after(STOP_SECONDS):
                await self._process.wait()
            if self._process.returncode is None:
                with contextlib.suppress(OSError):
                    self._process.kill()
                # A process stuck in the kernel (an fsync on a dead network disk) cannot
                # die until the call returns: it is not waited for past this.
                with trio.move_on_after(STOP_SECONDS):
                    await self._process.wait()
