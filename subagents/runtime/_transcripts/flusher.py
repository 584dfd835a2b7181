"""The runtime's transcript flusher: lines held back and results to ``fsync``, once per pass.

A :class:`~subagents.runtime._transcripts.writer.TranscriptWriter` given a
flusher holds back the line that opens a turn (an assistant message with tool
calls) to write it with the turn's tool results, in one ``write``. Should the
tools take longer than this scheduler pass, the line must not wait for them:
the writer asks :meth:`TranscriptFlusher.want`, whose task, woken for the next
pass (never per line: the first line of a pass wakes it, the others join),
writes every line held back. Outside its task (before it starts, after it
stops) the flusher declines, and the writer writes at once, as without one.

**Results.** A result must be on disk (``fsync``) before its completion is
announced. One ``fsync`` costs milliseconds on a busy disk, and made in the
Trio thread it stalls every agent: 1,000 agents ending together waited for
1,000 ``fsync`` calls in a row (8.5x the ideal time in runtime_efficiency_1000).
:meth:`TranscriptFlusher.sync` waits for its file's ``fsync``, which the
flusher's task makes with those of every result of the same pass, at once, in
worker threads (the file system commits them together: about 0.2 ms each
instead of 3 ms on this machine's disk). The wait cannot be cancelled (a park whose
abort is refused, as a shield would), so the result is on disk before the caller
goes on, however it is cancelled. The calls are made by
a helper process (:mod:`~subagents.runtime._transcripts.syncer`), started at the
first ``fsync``: made in worker threads of this process they cost more CPU than
the turn, in hand-overs of the GIL. Until the helper is up, where it cannot run,
or once it has failed, they are made in worker threads. Under a virtual clock
(``trio.testing.MockClock``), where waiting for a process or a thread would let
the clock jump, and when the task is not running, the ``fsync`` is made at once,
in the caller's thread.

**New files.** Creating a file costs more than writing a line (50 us to over a
millisecond of the file system's time here, serialized in the folder, longer
while other agents' ``fsync`` calls hold its journal), and 1,000 agents spawned
in a row made 1,000 of them in the Trio thread, one after the other. A new
writer asks :meth:`TranscriptFlusher.want_open` instead and keeps its first
lines in memory; a task of the flusher's own has the files of every writer that
asked in a pass (and in the next ones while they bring more, up to
:data:`GATHER_PASSES` or :data:`GATHER_SECONDS`: a loop of spawns; fewer,
:data:`GATHER_PASSES_WAITED`, when a writer waits for its file) made together:
by the helper process once it is up (which hands back the descriptors: no GIL,
no Trio thread), else in one worker thread (so no line held back waits for
them), and each writer then writes its lines with one ``write``
(:meth:`Openable.adopt`). A turn completed before its file is made waits for it
in its agent's loop, not in the thread.
A writer that needs its file at once (a result to ``fsync`` in its own thread, its close) calls
:meth:`TranscriptFlusher.claim_open`: a file not yet under way, or under way in the
helper, is made in the caller's thread (the helper's descriptor is closed when it
comes); one a worker thread is making is waited for (a few milliseconds; at most
``OPEN_WAIT_SECONDS``). :meth:`TranscriptFlusher.opened` waits for it without
blocking the thread: the agent loop waits so for a turn completed before its
file is made (``TranscriptWriter.settling``), and a result before its ``fsync``.

**Deleted files.** A line written to a deleted file is lost, and a writer on its
own looks (``fstat``) after each line. While the flusher runs, a writer whose
file it watches (:meth:`TranscriptFlusher.watch`, a
:class:`~subagents.runtime._transcripts.deletions.DeletionWatch` on its folder,
taken only while the file's path still names it) hands it each line instead
(:meth:`TranscriptFlusher.keep`); the task looks once a pass, after the lines
held back, and keeps each line for two looks (an unlink queues its event a
moment after the file loses its name). A writer whose file an event names looks
at it then, with the lines the flusher still keeps (``Watched.recheck``): gone,
they go back to memory, and the file stays open until the writer closes (an
``fsync`` may be waiting for it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import weakref
from collections.abc import Awaitable
from typing import Final, Protocol, final

import trio

from subagents.runtime._exceptions import TranscriptError
from subagents.runtime._transcripts.deletions import DeletionWatch, open_watch
from subagents.runtime._transcripts.file import forget_folder
from subagents.runtime._transcripts.syncer import (
    MAX_FDS_PER_MESSAGE,
    SyncHelper,
    helper_available,
    helper_can_make,
)

__all__ = [
    "OPEN_WAIT_SECONDS",
    "Flushable",
    "Flusher",
    "Openable",
    "TranscriptFlusher",
    "Watched",
]

#: Seconds a writer that needs its file at once waits for the worker thread making it.
OPEN_WAIT_SECONDS: Final = 30.0
#: Seconds the first new files wait for the helper process to start before a worker
#: thread makes them.
HELPER_START_WAIT_SECONDS: Final = 2.0
#: Scheduler passes a batch of new files waits for more while each pass brings some (a
#: loop of spawns brings one a pass, and each batch is a round trip to the helper, which
#: costs this process tens of microseconds of CPU however few files it carries).
GATHER_PASSES: Final = 64
#: The same once a writer waits for its file (a turn completed before it): fewer, so the
#: agent goes on soon, but a few, so that agents at zero latency still share round trips.
GATHER_PASSES_WAITED: Final = 8
#: Seconds a batch of new files waits for more, at most (passes are long in a busy run).
GATHER_SECONDS: Final = 0.05


class Flushable(Protocol):
    """What a flusher flushes: a writer with a line held back."""

    def flush(self) -> None: ...


class Openable(Protocol):
    """A writer whose file the flusher makes.

    ``helper_path`` is where the helper process may make the file (``None``: not
    there), and ``from_descriptor`` takes the descriptor it made, in the Trio
    thread (``None``: make it as usual). ``open_file`` runs in a worker thread and
    touches none of the writer's state (it returns the file or raises
    ``OSError``); ``adopt`` takes the file, or the error, back in the Trio thread,
    once.
    """

    def helper_path(self) -> bytes | None: ...
    def from_descriptor(self, fd: int, /) -> object | None: ...
    def open_file(self) -> object: ...
    def adopt(self, opened: object, /) -> None: ...


class Watched(Protocol):
    """A writer whose file the flusher watches for deletion.

    ``recheck`` is told that its file may have lost its name, with the lines it
    wrote since the flusher last looked (kind and line, in turn; ``None``: none):
    it looks at the file itself, and no longer hands the flusher its lines.
    ``unwatched`` is told that the flusher stops: its lines so far are safe, and
    it looks itself after the next ones.
    """

    def recheck(self, kept: list[object] | None, /) -> None: ...
    def unwatched(self) -> None: ...


class Flusher(Protocol):
    """What a writer asks to flush it, or make its file, at the end of the scheduler pass."""

    def want(self, writer: Flushable, /) -> bool: ...
    def want_open(self, writer: Openable, /) -> bool: ...
    def claim_open(self, writer: Openable, /) -> None: ...
    def opened(self, writer: Openable, /) -> Awaitable[None]: ...
    def watch(self, writer: Watched, name: str, fd: int, /) -> bool: ...
    def keep(self, writer: Watched, kind: int, line: bytes, /) -> bool: ...
    def take(self, writer: Watched, name: str, /) -> list[object] | None: ...


@final
class TranscriptFlusher:
    """Flushes, once per scheduler pass, the writers that held a line back in it, and makes
    the files that new writers asked for."""

    __slots__ = (
        "_batch",
        "_claimed",
        "_helper",
        "_helper_ready",
        "_helper_state",
        "_in_helper",
        "_kept",
        "_lot",
        "_older",
        "_open_lot",
        "_opens",
        "_pending",
        "_running",
        "_syncing",
        "_syncs",
        "_use_helper",
        "_virtual",
        "_wait_lot",
        "_waiting",
        "_watch",
        "_watched",
        "opened_files",
        "passes",
        "synced",
    )

    def __init__(self, *, helper: bool = True) -> None:
        self._lot = trio.lowlevel.ParkingLot()
        # The fsync helper process: "unused" until the first fsync asks for it, then
        # "starting", "up" or "failed" (for good: the worker threads do the rest).
        self._use_helper = helper and helper_available()
        self._helper: SyncHelper | None = None
        self._helper_state = "unused" if self._use_helper else "failed"
        self._helper_ready = trio.Event()
        # New files are made by a task of their own, so that no line held back waits
        # for a worker thread that makes files.
        self._open_lot = trio.lowlevel.ParkingLot()
        self._pending: dict[Flushable, None] = {}
        self._syncs: dict[int, _Sync] = {}
        self._opens: dict[Openable, None] = {}
        # The files being made in a worker thread now, and the tasks waiting for one: each
        # writer's parked tasks and when they give up (see opened), oldest first.
        self._batch: _OpenBatch | None = None
        self._waiting: dict[Openable, tuple[_Sync, float]] = {}
        self._wait_lot = trio.lowlevel.ParkingLot()
        # The files the helper process is making now, and those of them whose writer
        # made its file itself meanwhile (claim_open) or gave up waiting (opened).
        self._in_helper: dict[Openable, None] = {}
        self._claimed: set[Openable] = set()
        # Deleted files (see the module's "Deleted files"): the watch while the task runs,
        # the writers it watches by (folder, name) (weakly: a writer dropped unclosed
        # still closes its file), and the lines each wrote since the last look and
        # before it (kind and chunk, in turn; not bounded by a count: they are the
        # lines of two passes, or of two fsync round trips, and already in memory).
        self._watch: DeletionWatch | None = None
        self._watched: dict[tuple[str, str], weakref.ref[Watched]] = {}
        self._kept: dict[Watched, list[object]] = {}
        self._older: dict[Watched, list[object]] = {}
        self._running = False
        # Whether the task waits for fsync calls now (a flush asked for waits with them).
        self._syncing = False
        # Whether the run's clock is virtual (read once, in run(): a run keeps its clock).
        self._virtual = False
        #: How many results' ``fsync`` calls the task made in worker threads.
        self.synced = 0
        #: How many passes had lines to write (each wrote every line held back in it).
        self.passes = 0
        #: How many files the task made in worker threads.
        self.opened_files = 0

    def _idle(self) -> bool:
        return not self._pending and not self._syncs and not self._kept

    def want(self, writer: Flushable, /) -> bool:
        """Flush ``writer`` at the end of this pass; ``False`` when the flusher is not running."""
        if not self._running:
            return False
        if not self._pending and not self._syncs and not self._kept:  # _idle(), inline
            self._lot.unpark()
        self._pending[writer] = None
        return True

    def want_soon(self, writer: Flushable, /) -> bool:
        """:meth:`want`, but ``False`` while the task waits for ``fsync`` calls too: a flush
        asked for then would wait for them (the session log's lines, which must not wait
        for a slow disk's transcripts)."""
        return not self._syncing and self.want(writer)

    def watch(self, writer: Watched, name: str, fd: int, /) -> bool:
        """Watch ``writer``'s file ``name`` (open as ``fd``) for deletion; ``False``: the
        writer looks itself after each line (no watch, the flusher not running, or the
        path no longer names the file ``fd`` is)."""
        watch = self._watch
        if watch is None or not self._running:
            return False
        key = os.path.split(name)
        if key in self._watched or not watch.watch(key[0]):
            return False
        # The file may have lost its name before the watch could tell: made before its
        # folder was watched, or deleted or moved on its way from the helper, its event
        # read before it was registered. From here on every event about it is its own.
        try:
            here, there = os.fstat(fd), os.stat(name)
        except OSError:
            return False
        if (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
            return False
        self._watched[key] = weakref.ref(writer)
        return True

    def keep(self, writer: Watched, kind: int, line: bytes, /) -> bool:
        """Keep ``line`` (of ``kind``), just written by ``writer``, until two looks for
        deleted files have gone by; ``False``: look yourself now (the flusher is not
        running)."""
        if not self._running:
            return False
        kept = self._kept.get(writer)
        if kept is None:
            if not self._kept and not self._pending and not self._syncs:  # _idle(), inline
                self._lot.unpark()
            self._kept[writer] = [kind, line]
        else:
            kept += (kind, line)
        return True

    def take(self, writer: Watched, name: str, /) -> list[object] | None:
        """The lines ``writer`` (of the file ``name``) wrote that the flusher still keeps,
        oldest first, which it keeps no more; its file is watched no more (the writer
        closes it, or lost it)."""
        key = os.path.split(name)
        ref = self._watched.get(key)
        if ref is not None and ref() is writer:
            del self._watched[key]
        return _joined(self._older.pop(writer, None), self._kept.pop(writer, None))

    def look(self) -> None:
        """Read what happened to the watched folders since the last look: each writer whose
        file an event names rechecks it, with the lines it wrote since the look before
        last. The others' lines older than the last look are safe: the file had its
        name when they were written (an unlink queues its event a moment after the file
        loses its name, so a line is kept for two looks, not one)."""
        older, kept = self._older, self._kept
        self._older, self._kept = kept, {}
        watch = self._watch
        if watch is None:
            return
        named = watch.changed()
        if named is not None and not named:
            return
        if named is None:  # an overflow: the watch is over, every writer looks itself
            self._watch = None
            keys = list(self._watched)
        else:
            gone = {folder for folder, name in named if not name}
            keys = [key for key in self._watched if key in named or key[0] in gone]
        failed: Exception | None = None
        for key in keys:
            writer = self._watched.pop(key)()
            if writer is None:
                continue
            lines = _joined(older.pop(writer, None), kept.pop(writer, None))
            try:  # one writer's callback does not cost the others their look
                writer.recheck(lines)
            except Exception as exc:
                failed = failed or exc
        if failed is not None:
            raise failed

    def want_open(self, writer: Openable, /) -> bool:
        """Make ``writer``'s file at the end of this pass; ``False``: make it yourself, now.

        Declined when the task is not running, and under a virtual clock (tests with
        ``MockClock``), where waiting for a worker thread would let the clock jump.
        """
        if not self._running or self._virtual:
            return False
        if not self._opens:
            self._open_lot.unpark()
        self._opens[writer] = None
        return True

    def claim_open(self, writer: Openable, /) -> None:
        """``writer`` needs its file now: made here if not yet under way, else waited for.

        Either way the writer has adopted its file (or the error) when this returns.
        A batch whose worker thread has not reached the writer yet (or has not
        started: it waits for a thread slot in the Trio thread) leaves it to the caller.
        """
        if writer in self._in_helper:  # the helper's descriptor is closed when it comes
            self._claimed.add(writer)
            self._adopt(writer, _open(writer))
            return
        batch = self._batch
        if (
            writer not in self._opens
            and batch is not None
            and writer in batch.results
            and not batch.claim(writer)
        ):  # the worker is making it: a few milliseconds
            if batch.done.wait(OPEN_WAIT_SECONDS):
                batch.adopted.add(writer)
                self._adopt(writer, batch.results[writer])
            else:
                batch.gave_up.add(writer)
                self._adopt(writer, TimeoutError("making the transcript file took too long"))
            return
        self._opens.pop(writer, None)
        self._adopt(writer, _open(writer))

    async def opened(self, writer: Openable, /) -> None:
        """Wait, shielded, until ``writer`` has its file, if the flusher is making it.

        A file not made within ``OPEN_WAIT_SECONDS`` is given up: the writer takes a
        ``TimeoutError`` (its disk-error policy), as in :meth:`claim_open`. The wait is
        one park and one wake-up, as a result's ``fsync`` is (:class:`_Sync`): no cancel
        scope and no event of its own; the flusher's :meth:`_expire_waits` keeps the
        deadline of every writer waiting.
        """
        batch = self._batch
        if (
            writer not in self._opens
            and writer not in self._in_helper
            and (batch is None or writer not in batch.results)
        ):
            return
        entry = self._waiting.get(writer)
        if entry is None:
            if not self._waiting:
                self._wait_lot.unpark()
            entry = self._waiting[writer] = (
                _Sync(),
                trio.current_time() + OPEN_WAIT_SECONDS,
            )
        await entry[0].wait()

    def _give_up_open(self, writer: Openable) -> None:
        """``writer`` waited ``OPEN_WAIT_SECONDS`` for its file: it takes a ``TimeoutError``,
        and the file, should it come, is closed (or never made)."""
        if writer in self._opens:  # not handed to a worker thread yet: never made now
            del self._opens[writer]
        elif writer in self._in_helper:
            self._claimed.add(writer)  # closed when the helper's descriptor comes
        elif (batch := self._batch) is not None and writer in batch.results:
            batch.gave_up.add(writer)  # closed when the worker thread makes it
        self._adopt(writer, TimeoutError("making the transcript file took too long"))

    async def _expire_waits(self) -> None:
        """Give up on the files writers have waited for ``OPEN_WAIT_SECONDS``, in the order
        they began to wait (the oldest first: every wait is as long), until cancelled."""
        waiting = self._waiting
        while True:
            if not waiting:
                await self._wait_lot.park()
                continue
            await trio.sleep_until(next(iter(waiting.values()))[1])
            now = trio.current_time()
            while waiting:
                writer, (_, deadline) = next(iter(waiting.items()))
                if deadline > now:
                    break
                self._give_up_open(writer)

    def _adopt(self, writer: Openable, opened: object) -> None:
        try:
            writer.adopt(opened)
        finally:  # its tasks go on however the writer took it
            entry = self._waiting.pop(writer, None)
            if entry is not None:
                entry[0].set()

    async def _open_all(self, nursery: trio.Nursery) -> None:
        if not self._opens:
            return
        if self._helper_state == "unused":
            self._start_helper(nursery)
        if self._helper_state == "starting":
            # Tens of milliseconds: a worker thread meanwhile would contend for the GIL with
            # the Trio thread at every file (1,000 files took a second), so the first files
            # wait for the helper, unless it is slow to come. They stay wanted meanwhile,
            # so their writers can wait for them (opened) or make them (claim_open).
            with trio.move_on_after(HELPER_START_WAIT_SECONDS):
                await self._helper_ready.wait()
        # From here to the batch's making, each writer is always in one of the sets that
        # opened() and claim_open() look in: no await until it is.
        opens, self._opens = self._opens, {}
        if not opens:
            return
        if (helper := self._helper) is not None:
            opens = await self._open_in_helper(helper, opens, nursery)
            if not opens:
                return
        batch = self._batch = _OpenBatch(opens)
        try:
            with trio.CancelScope(shield=True):  # writers wait for these files
                await trio.to_thread.run_sync(batch.run)
        finally:
            self._batch = None
            for writer, opened in batch.results.items():
                if batch.taken.get(writer) != "worker":  # its writer made it (claim_open)
                    continue
                self.opened_files += 1
                if writer in batch.gave_up:  # made after its writer stopped waiting
                    if not isinstance(opened, OSError):
                        with contextlib.suppress(OSError):
                            opened.close()  # type: ignore[attr-defined]
                elif writer not in batch.adopted:
                    self._adopt(writer, opened)

    async def _open_in_helper(
        self, helper: SyncHelper, opens: dict[Openable, None], nursery: trio.Nursery
    ) -> dict[Openable, None]:
        """Have the helper process make the files it can; the writers left to the worker
        thread (a file the helper could not make, or that needs more than a look).

        A writer waiting for its file meanwhile (:meth:`opened`) waits for this; one
        that needs it at once (:meth:`claim_open`) makes it itself, and the helper's
        descriptor for it is closed when it comes.
        """
        paths: dict[Openable, bytes] = {}
        rest: dict[Openable, None] = {}
        for writer in opens:
            try:
                path = writer.helper_path()
            except Exception:  # its folder cannot be made: the worker thread reports it
                path = None
            if path is None or not helper_can_make(path):
                rest[writer] = None
            else:
                paths[writer] = path
        if not paths:
            return opens
        self._in_helper.update(dict.fromkeys(paths))
        try:
            with trio.CancelScope(shield=True):  # writers wait for these files
                made = await helper.open_all(list(paths.values()))
        except OSError:
            self._give_up_helper(nursery)
            made = [-errno.EIO] * len(paths)
        finally:
            for writer in paths:
                self._in_helper.pop(writer, None)
        for (writer, path), fd in zip(paths.items(), made, strict=True):
            if writer in self._claimed:  # its writer made it meanwhile, or gave up on it
                self._claimed.discard(writer)
                if fd >= 0:
                    os.close(fd)
                continue
            if fd < 0:
                if -fd == errno.ENOENT:  # its folder went away: the worker makes it again
                    forget_folder(os.path.dirname(os.fsdecode(path)))
                rest[writer] = None
                continue
            try:
                opened = writer.from_descriptor(fd)
            except OSError as exc:
                opened = exc
            except Exception as exc:  # a bug of the writer's: its disk-error path, not ours
                opened = OSError(errno.EIO, f"the transcript file could not be taken: {exc!r}")
            if opened is None:
                rest[writer] = None
            else:
                self.opened_files += 1
                self._adopt(writer, opened)
        return rest

    async def _make_files(self, nursery: trio.Nursery) -> None:
        while True:
            if not self._opens:
                await self._open_lot.park()
            # Gather while more come (see GATHER_PASSES), until two passes bring none (Trio
            # may run this task before the spawner in one pass and after it in the next),
            # a message's worth is wanted, or GATHER_PASSES_WAITED passes have gone by
            # and a writer waits for its file (opened()). No batch is under way
            # meanwhile, so every writer waiting is waiting for one of these.
            quiet = 0
            deadline = trio.current_time() + GATHER_SECONDS
            for passes in range(1, GATHER_PASSES + 1):
                wanted = len(self._opens)
                await trio.lowlevel.checkpoint()
                quiet = quiet + 1 if len(self._opens) == wanted else 0
                if (
                    quiet == 2
                    or (passes >= GATHER_PASSES_WAITED and self._waiting)
                    or len(self._opens) >= MAX_FDS_PER_MESSAGE
                    or trio.current_time() >= deadline
                ):
                    break
            await self._open_all(nursery)

    def _open_now(self) -> None:
        """The flusher stops: the files still wanted are made here, at once."""
        opens, self._opens = self._opens, {}
        for writer in opens:
            self._adopt(writer, _open(writer))

    async def sync(self, fd: int) -> None:
        """``fsync`` the file ``fd`` (a result was just written), with the results of this pass.

        Returns once it is done; raises its ``OSError``. A cancellation cannot cut it short
        (:class:`_Sync`): the result is on disk before the caller goes on.
        """
        if not self._running or self._virtual:
            os.fsync(fd)
            return
        waiting = self._syncs.get(fd)
        if waiting is None:
            if self._idle():
                self._lot.unpark()
            waiting = self._syncs[fd] = _Sync()
        await waiting.wait()
        if waiting.error is not None:
            raise waiting.error

    async def _sync_all(self, nursery: trio.Nursery) -> None:
        syncs, self._syncs = self._syncs, {}
        if not syncs:
            return
        try:
            await self._sync_batch(syncs, nursery)
        finally:
            # A batch cut short (a bug) leaves no caller parked: what it did not sync is
            # synced here, in this thread, as when the flusher stops.
            _sync_inline({fd: waiting for fd, waiting in syncs.items() if not waiting.done})

    async def _sync_batch(self, syncs: dict[int, _Sync], nursery: trio.Nursery) -> None:
        if self._helper_state == "unused":
            self._start_helper(nursery)
        helper = self._helper
        if helper is not None:
            with trio.CancelScope(shield=True):  # the callers wait, shielded, for every one
                try:
                    codes = await helper.fsync_all(list(syncs))
                except OSError as exc:
                    # A descriptor that is not open cannot be handed over (EBADF): that
                    # batch is the threads' (where its fsync fails as it would here).
                    if exc.errno != errno.EBADF:
                        self._give_up_helper(nursery)
                else:
                    for waiting, code in zip(syncs.values(), codes, strict=True):
                        if code:
                            waiting.error = OSError(code, os.strerror(code))
                        self.synced += 1
                        waiting.set()
                    return
        # No helper (yet): worker threads. After a helper failed mid-batch which of its
        # files it synced is unknown, so all of them are synced again here.
        await self._sync_in_threads(syncs)

    def _start_helper(self, nursery: trio.Nursery) -> None:
        self._helper_state = "starting"
        nursery.start_soon(self._run_helper, name="subagents file helper")

    async def _run_helper(self) -> None:
        """Start the fsync helper; the batches after it is up use it."""
        try:
            self._helper = await SyncHelper.start()
        except OSError:
            self._helper_state = "failed"
        else:
            self._helper_state = "up"
        finally:
            self._helper_ready.set()

    def _give_up_helper(self, nursery: trio.Nursery) -> None:
        helper, self._helper = self._helper, None
        self._helper_state = "failed"
        if helper is not None:
            nursery.start_soon(helper.aclose, name="subagents fsync helper, ending")

    async def helper_up(self) -> bool:
        """Wait until the fsync helper has started or failed to (tests); whether it is up.

        Returns at once when it was never asked for.
        """
        if self._helper_state in ("starting", "up"):
            with trio.fail_after(30):
                await self._helper_ready.wait()
        return self._helper is not None

    @property
    def helper_pid(self) -> int | None:
        """The fsync helper's process id while it runs."""
        return None if self._helper is None else self._helper.pid

    async def _sync_in_threads(self, syncs: dict[int, _Sync]) -> None:
        async def one(fd: int, waiting: _Sync) -> None:
            try:
                await trio.to_thread.run_sync(os.fsync, fd)
            except OSError as exc:
                waiting.error = exc
            finally:
                self.synced += 1
                waiting.set()

        with trio.CancelScope(shield=True):  # the callers wait, shielded, for every one
            async with trio.open_nursery() as nursery:
                for fd, waiting in syncs.items():
                    nursery.start_soon(one, fd, waiting)

    def flush(self) -> None:
        """Write every line held back now (a writer's error stays the writer's: its next line
        raises it, or its policy holds the line in memory)."""
        pending, self._pending = self._pending, {}
        if pending:
            self.passes += 1
        failed: Exception | None = None
        for writer in pending:
            # Not contextlib.suppress: it made an object per writer in every pass.
            try:
                writer.flush()
            except TranscriptError:
                pass
            except Exception as exc:  # a bug: the writers after it are flushed all the same
                failed = failed or exc
        if failed is not None:
            raise failed

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Each pass with work: write the lines held back, then ``fsync`` the results; and,
        in a task of its own, make the files asked for; until cancelled or :meth:`stop`.

        Started with ``nursery.start``, it is running (writers' requests are taken)
        when that returns: the first agent's file is made like any other.
        """
        self._virtual = _virtual_clock()
        self._watch = open_watch()  # closed in the finally, however the run ends
        self._running = True
        try:
            task_status.started()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._make_files, nursery, name="subagents transcript files")
                nursery.start_soon(self._expire_waits, name="subagents transcript file waits")
                while self._running:
                    # What came while the last fsync calls ran is handled without parking.
                    if self._idle():
                        await self._lot.park()
                    self.flush()
                    self.look()
                    self._syncing = True
                    try:
                        await self._sync_all(nursery)
                    finally:
                        self._syncing = False
                nursery.cancel_scope.cancel()
        finally:
            self._running = False
            try:
                self._wind_down()
            finally:
                await self._end_helper()

    def _wind_down(self) -> None:
        """What a stop does, in order, each step whatever the one before raised: the files
        still wanted, the lines held back, the last looks, the fsync calls still waiting."""
        with contextlib.ExitStack() as steps:  # its callbacks run last first, each whatever
            steps.callback(self._sync_now)
            steps.callback(self._end_watch)
            steps.callback(self.flush)
            steps.callback(self._release_waits)
            self._open_now()

    def _release_waits(self) -> None:
        """No writer is left waiting for a file once the flusher stops (the deadlines stop
        with it): a file not under way (a batch that failed left it unmade) is made here,
        as a claim makes it; one under way is adopted when it comes, as before the stop."""
        batch = self._batch
        for writer in list(self._waiting):
            if writer not in self._in_helper and (batch is None or writer not in batch.results):
                self.claim_open(writer)

    def _end_watch(self) -> None:
        """The last looks; from here on every writer looks itself after each line."""
        try:
            self.look()
            self.look()  # the lines of the last pass, kept for two looks
        finally:
            watch, self._watch = self._watch, None
            refs = list(self._watched.values())
            self._watched.clear()
            self._kept.clear()
            self._older.clear()
            for ref in refs:
                writer = ref()
                if writer is not None:
                    writer.unwatched()
            if watch is not None:
                watch.close()

    async def _end_helper(self) -> None:
        helper, self._helper = self._helper, None
        if self._helper_state in ("unused", "starting"):  # a start cut short: never again
            self._helper_state = "failed"
        self._helper_ready.set()
        if helper is not None:
            await helper.aclose()

    def _sync_now(self) -> None:
        """The flusher stops: the results still waiting are synced here, at once."""
        syncs, self._syncs = self._syncs, {}
        _sync_inline(syncs)

    def stop(self) -> None:
        """Write what is held back and end :meth:`run`; later writers write at once."""
        self._running = False
        self._lot.unpark_all()
        self._open_lot.unpark_all()
        self._wind_down()


def _joined(first: list[object] | None, second: list[object] | None) -> list[object] | None:
    """Two lists of kept lines as one, oldest first (``None``: neither has any)."""
    if first is None:
        return second
    if second is not None:
        first += second
    return first


def _virtual_clock() -> bool:
    """Whether this run's clock is ``trio.testing.MockClock``.

    Read from ``sys.modules``: a run can only have that clock if ``trio.testing`` is
    imported, and importing it here would cost every process pytest's import.
    """
    testing = sys.modules.get("trio.testing")
    return testing is not None and isinstance(trio.lowlevel.current_clock(), testing.MockClock)


def _open(writer: Openable) -> object:
    """``writer``'s file, or the ``OSError`` that making it raised.

    Any other exception (an opener's bug) becomes an ``OSError`` too, so that it
    takes the writer's disk error path instead of ending the flusher's task.
    """
    try:
        return writer.open_file()
    except OSError as exc:
        return exc
    except Exception as exc:
        return OSError(errno.EIO, f"the transcript file could not be made: {exc!r}")


@final
class _OpenBatch:
    """The files of one pass, made in a worker thread; ``done`` is set when all are.

    Each writer is taken once, under ``lock``: by the worker as it reaches it, or
    before that by a writer that needs its file at once (:meth:`claim`), which then
    makes it itself; the worker skips it.
    """

    __slots__ = ("adopted", "done", "gave_up", "lock", "results", "taken")

    def __init__(self, writers: dict[Openable, None]) -> None:
        # Every writer of the batch is a key from the start: a writer claiming its file
        # finds its batch here, and its result once ``done`` is set.
        self.results: dict[Openable, object] = dict.fromkeys(writers)
        self.taken: dict[Openable, str] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()
        #: Writers that waited for the worker's file and took it, or gave up waiting.
        self.adopted: set[Openable] = set()
        self.gave_up: set[Openable] = set()

    def claim(self, writer: Openable) -> bool:
        """Whether the caller makes ``writer``'s file itself (the worker has not taken it)."""
        with self.lock:
            if writer in self.taken:
                return False
            self.taken[writer] = "claimer"
            return True

    def run(self) -> None:
        try:
            for writer in self.results:
                with self.lock:
                    if writer in self.taken:
                        continue
                    self.taken[writer] = "worker"
                self.results[writer] = _open(writer)
        finally:
            self.done.set()


def _sync_inline(syncs: dict[int, _Sync]) -> None:
    """``fsync`` each file in this thread, and wake its callers (with its error, if any)."""
    for fd, waiting in syncs.items():
        try:
            os.fsync(fd)
        except OSError as exc:
            waiting.error = exc
        waiting.set()


def _refuse_abort(raise_cancel: object) -> trio.lowlevel.Abort:
    """A cancellation cannot end a wait for an ``fsync``: the task stays parked until
    :meth:`_Sync.set` reschedules it: what a shielded scope does, without the scope."""
    return trio.lowlevel.Abort.FAILED


@final
class _Sync:
    """One file waiting for its ``fsync`` (or to be made): the tasks parked for it, and its
    error if it failed.

    Its wait cannot be cancelled, as a shielded one could not: the result is on disk
    before its caller goes on, however the caller is cancelled. A wait with no
    cancel scope and no event keeps an agent's end at one park and one wake-up; the
    flusher sets every ``_Sync`` it takes: its batch, or ``_sync_inline`` for what a
    batch cut short left and on its way out, whatever ends it. A writer waiting for
    its file (:meth:`TranscriptFlusher.opened`) is woken by its adoption: the file,
    the deadline's ``TimeoutError``, or the flusher's stop.
    """

    __slots__ = ("done", "error", "tasks")

    def __init__(self) -> None:
        self.done = False
        self.error: OSError | None = None
        self.tasks: list[trio.lowlevel.Task] = []

    async def wait(self) -> None:
        """Until :meth:`set`; not a cancellation point."""
        if self.done:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        self.tasks.append(trio.lowlevel.current_task())
        await trio.lowlevel.wait_task_rescheduled(_refuse_abort)

    def set(self) -> None:
        """The ``fsync`` is done (``error`` says how): wake every task waiting for it."""
        if self.done:
            return
        self.done = True
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            trio.lowlevel.reschedule(task)
