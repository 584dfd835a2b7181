"""The transcript writer: every message and result of one agent, appended to its file.

The file and its line records are described in
:mod:`subagents.runtime._transcripts.records`.

A :class:`TranscriptWriter` opens the file in append mode, writes the
:class:`MetaRecord` first, then one line per message and per run result, each
handed to the OS at once (unbuffered); a result line is also ``fsync``-ed, so
it is on disk before the caller publishes the completion. A resumed agent gets
a new writer on the same file, which appends a second meta line and goes on
with the message numbers (after ending a torn last line with a newline, so no
new line is glued to it). Nothing is ever truncated or rewritten.

**Batches.** A writer given a ``flusher`` (the runtime's
:class:`~subagents.runtime._transcripts.flusher.TranscriptFlusher`) holds back
the one line that opens a turn, an assistant message with tool calls, and
writes it with the next line (the turn's tool results: one ``write`` and one
``fstat`` for the turn), or at the end of the scheduler pass, when the flusher
runs: a turn's lines are in the file before the loop goes on to publish the
turn's completion, so a completed turn survives ``kill -9`` as before, and a
line held back waits at most one scheduler pass. Every other line is written
at once, with any line held back before it. A new writer's file is made by the
flusher too, with those of the other new writers of the pass (by its helper
process, else in one worker thread): its first lines (meta, prompt) wait for it
in memory. A turn completed
before then is on disk before the loop goes on all the same: the loop awaits
:meth:`TranscriptWriter.settling` (the file being made, without blocking the
Trio thread) before it publishes the turn's completion; a result to ``fsync``
waits for the file the same way, and a close makes it at once
(``TranscriptFlusher.claim_open``). With a model that takes any time to answer,
the file is there long before the first turn ends. Under the ``"stop"`` policy
the file is made at once, in the caller's thread: an agent whose transcript
cannot be written is refused at its spawn, before its model is asked anything,
as on a virtual clock (made at the end of the pass, the agent would have made
a model call before it stopped).

The writer is synchronous on purpose: a line is one small ``write`` (and one
``fstat`` that notices a deleted file, or, with the flusher running, a line kept
until its next look at the file's folder: its "Deleted files"), which costs
less than a trip to a worker thread, and a synchronous call can still write the
result while the agent's scope is being cancelled, where an ``await`` could not.

A disk error (``ENOSPC``, ``EACCES``, ``ENOENT`` after the state directory was
removed...) follows the writer's policy: ``"memory"`` keeps the following lines
in a bounded buffer, reports the error once and lets the run go on
(:meth:`TranscriptWriter.retry`, and ``close`` once, try to move them back to
the file); ``"stop"`` raises :class:`TranscriptWriteError`. Reading back is in
:mod:`subagents.runtime._transcripts.load`; the errors are in
:mod:`subagents.runtime._exceptions`, and opening and appending to the
file itself in :mod:`subagents.runtime._transcripts.file`.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import io
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, final

import attrs
import msgspec

from subagents._unicode import valid_json
from subagents.runtime._config.defaults import DiskErrorPolicy
from subagents.runtime._exceptions import TranscriptError, TranscriptWriteError
from subagents.runtime._messages import Conversation, Message, ToolResultBlock, ToolUseBlock
from subagents.runtime._result import AgentResult
from subagents.runtime._transcripts.file import (
    DescriptorFile,
    TranscriptFile,
    ensure_folder,
    in_folder,
    is_empty,
    needs_newline,
    open_append,
    write_all,
)
from subagents.runtime._transcripts.lock import lock_file, this_host, this_pid, try_lock
from subagents.runtime._transcripts.records import (
    ClosedRecord,
    FinalStatus,
    MessageRecord,
    MetaRecord,
    ResultRecord,
    TranscriptRecord,
)

if TYPE_CHECKING:
    from subagents.runtime._transcripts.flusher import Flusher
    from subagents.runtime._transcripts.load import Transcript

__all__ = [
    "DEFAULT_MAX_BUFFERED_LINES",
    "TranscriptWriter",
    "TranscriptWriterStatistics",
]

#: Lines a writer keeps in memory after a disk error (policy ``"memory"``).
DEFAULT_MAX_BUFFERED_LINES: Final = 10_000


_encoder = msgspec.json.Encoder()


def _line(record: TranscriptRecord) -> bytes:
    try:
        return _encoder.encode(record) + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate a model wrote (or code put in a message): the line is
        # kept, each one replaced (subagents._unicode), rather than lost with its agent.
        return _encoder.encode(valid_json(msgspec.to_builtins(record))) + b"\n"


def _created_empty(file: TranscriptFile) -> bool:
    """Whether the opened file is empty (new): no torn line to end, no second open to look."""
    try:
        return os.fstat(file.fileno()).st_size == 0
    except (OSError, ValueError, TypeError):
        return False


def _completes_turn(message: Message) -> bool:
    """Whether ``message`` ends a turn: the tool results, or an answer without tool calls."""
    if message.role == "assistant":
        return ToolUseBlock not in map(type, message.content)
    return ToolResultBlock in map(type, message.content)


#: How every meta line begins (msgspec writes a tagged struct's tag first).
_META_PREFIX: Final = b'{"record":"meta"'


def _lines_of(kept: list[object]) -> list[tuple[int, bytes]]:
    """Kept chunks (kind and chunk, in turn) as lines, each with its kind: a meta line
    is one wherever it was (a new file's first lines are written as one message
    chunk), and the other lines of a chunk of several (a turn's call with its
    results) are message lines. A full buffer drops message lines first."""
    lines: list[tuple[int, bytes]] = []
    for index in range(0, len(kept), 2):
        kind: int = kept[index]  # type: ignore[assignment]
        chunk: bytes = kept[index + 1]  # type: ignore[assignment]
        pieces = chunk.split(b"\n")[:-1]  # every line ends with one
        alone = kind if len(pieces) == 1 else _MESSAGE
        lines.extend(
            (_META if piece.startswith(_META_PREFIX) else alone, piece + b"\n") for piece in pieces
        )
    return lines


# -- the writer ----------------------------------------------------------------------


@attrs.frozen
class TranscriptWriterStatistics:
    """A writer's counters: lines on disk, lines held in memory, lines dropped, its error."""

    lines_written: int
    lines_buffered: int
    lines_dropped: int
    in_memory: bool
    closed: bool
    error: TranscriptWriteError | None


_META: Final = 0
_MESSAGE: Final = 1
_RESULT: Final = 2


@final
class TranscriptWriter:
    """Appends one agent's records to its transcript file, one flushed line each.

    ``next_seq`` and ``runs`` continue the numbering of a resumed agent and
    ``synced`` counts the conversation's messages already in the file (see
    :meth:`resume`). ``on_disk_error`` is the policy on a disk error (see the
    module docstring); under ``"memory"``, ``on_report`` is called once with the
    :class:`TranscriptWriteError` and up to ``max_buffered_lines`` lines are held
    (the oldest message lines are dropped first, the meta and result lines
    last). ``opener`` opens the file (tests inject failing files); ``lock``,
    when given, is the transcript opened read-only and locked by a resume's
    claim: the writer holds it until its own file holds the lock (or until it
    is closed, when the file never opened).

    The writer holds the file's lock (:mod:`subagents.runtime._transcripts.lock`)
    as long as the file is open: a second writer of the same transcript, in
    this process or another, cannot open it, and treats it as a file it cannot
    write. Its meta line records this process's pid and host, the holder's
    name in a refused resume.
    """

    __slots__ = (
        "__weakref__",  # the flusher watches writers weakly
        "_buffer",
        "_closed",
        "_dropped",
        "_early",
        "_error",
        "_failed",
        "_file",
        "_flusher",
        "_fsync",
        "_held",
        "_lost",
        "_max_buffered",
        "_meta",
        "_name",
        "_next_seq",
        "_on_report",
        "_opener",
        "_opening",
        "_path_value",
        "_pending",
        "_policy",
        "_runs",
        "_synced",
        "_unsettled",
        "_unsynced",
        "_watched",
        "_written",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        meta: MetaRecord,
        *,
        next_seq: int = 0,
        runs: int = 0,
        synced: int = 0,
        on_disk_error: DiskErrorPolicy = "memory",
        on_report: Callable[[TranscriptWriteError], object] | None = None,
        max_buffered_lines: int = DEFAULT_MAX_BUFFERED_LINES,
        fsync_results: bool = True,
        opener: Callable[[Path], TranscriptFile] = open_append,
        lock: io.FileIO | None = None,
        flusher: Flusher | None = None,
    ) -> None:
        if on_disk_error not in ("memory", "stop"):
            raise TranscriptError(
                f"on_disk_error must be 'memory' or 'stop' (got {on_disk_error!r})."
            )
        if max_buffered_lines < 2:
            raise TranscriptError(
                f"max_buffered_lines must be at least 2 (got {max_buffered_lines!r})."
            )
        # The path as a string: a spawn names its file by one, and the Path is made only
        # when asked for (``path``, an error), not per agent.
        self._name = os.fspath(path)
        self._path_value: Path | None = path if isinstance(path, Path) else None
        self._meta = msgspec.structs.replace(
            meta, time=time.time(), pid=this_pid(), host=this_host()
        )
        self._next_seq = next_seq
        self._runs = runs
        self._synced = synced
        self._policy: DiskErrorPolicy = on_disk_error
        self._on_report = on_report
        self._max_buffered = max_buffered_lines
        self._fsync = fsync_results
        self._opener = opener
        self._flusher = flusher
        # The assistant line held back to be written with its turn's tool results (Batches).
        self._pending: bytes | None = None
        self._unsettled = False
        self._unsynced = False
        # Whether the flusher watches the file for deletion (its lines then need no fstat),
        # and the file it found deleted, open until the close (an fsync may wait for it).
        self._watched = False
        self._lost: TranscriptFile | None = None
        self._file: TranscriptFile | None = None
        # Lines held in memory after a disk error; made at the first one (a deque is 760 bytes).
        self._buffer: collections.deque[tuple[int, bytes]] | None = None
        self._error: TranscriptWriteError | None = None
        self._failed: TranscriptWriteError | None = None
        self._closed = False
        self._written = 0
        self._dropped = 0
        line = _line(self._meta)
        self._held = lock
        # A new file is made by the flusher at the end of the pass (see its "New files"):
        # until then the lines wait in ``_early``, and a need for the file makes it at once.
        # Under "stop" it is made now: an agent whose file cannot be made is refused at its
        # spawn, before its model is asked anything, not stopped after a call.
        self._early: list[bytes] | None = None
        self._opening = False
        if (
            lock is None
            and flusher is not None
            and on_disk_error == "memory"
            and flusher.want_open(self)
        ):
            self._opening = True
            self._early = [line]
            return
        try:
            self._file = self._open() if lock is not None else in_folder(self._name, self._open)
        except OSError as exc:
            self._fault(exc, _META, line)
        else:
            self._watch(self._file)
            self._emit(_META, line)

    @classmethod
    def resume(
        cls,
        transcript: Transcript,
        *,
        meta: MetaRecord | None = None,
        on_disk_error: DiskErrorPolicy = "memory",
        on_report: Callable[[TranscriptWriteError], object] | None = None,
        max_buffered_lines: int = DEFAULT_MAX_BUFFERED_LINES,
        fsync_results: bool = True,
        opener: Callable[[Path], TranscriptFile] = open_append,
        lock: io.FileIO | None = None,
        flusher: Flusher | None = None,
    ) -> TranscriptWriter:
        """A writer that goes on with a loaded transcript, in the same file.

        It appends a new meta line (``meta``, by default the transcript's own:
        pass one with another ``model`` when the resumed agent runs on another
        model) and numbers messages and runs after the transcript's. ``lock``
        is the file :func:`~subagents.runtime._transcripts.lock.claim_transcript`
        opened and locked before the transcript was read (the writer owns it).
        """
        return cls(
            transcript.path,
            transcript.meta if meta is None else meta,
            next_seq=transcript.next_seq,
            runs=transcript.runs,
            synced=len(transcript.messages),
            on_disk_error=on_disk_error,
            on_report=on_report,
            max_buffered_lines=max_buffered_lines,
            fsync_results=fsync_results,
            opener=opener,
            lock=lock,
            flusher=flusher,
        )

    @property
    def path(self) -> Path:
        """The transcript file."""
        return self._path

    @property
    def meta(self) -> MetaRecord:
        """The meta record this writer wrote first."""
        return self._meta

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next message gets."""
        return self._next_seq

    @property
    def runs(self) -> int:
        """The highest run number written so far."""
        return self._runs

    @property
    def in_memory(self) -> bool:
        """Whether lines go to the in-memory buffer (after a disk error, policy ``"memory"``)."""
        return (
            self._file is None and self._failed is None and not self._closed and not self._opening
        )

    @property
    def opening(self) -> bool:
        """Whether the flusher is still to make the file (the first lines wait in memory)."""
        return self._opening

    def open_file(self) -> TranscriptFile:
        """Make the file and its folder (in the flusher's worker thread: no state is touched)."""
        # No state touched in the thread: the Path made here is not kept.
        path = self._path_value or Path(self._name)
        file = in_folder(self._name, lambda: self._opener(path))
        lock_file(file, path)
        try:
            if not _created_empty(file) and needs_newline(path):
                write_all(file, b"\n")
        except BaseException:
            file.close()
            raise
        return file

    def helper_path(self) -> bytes | None:
        """The path for the flusher's helper process to make this file at, once its folder
        is there (in the Trio thread: one ``mkdir`` per new folder); ``None`` when the
        writer must make it itself (an injected opener, a resume's claim)."""
        if self._opener is not open_append or self._held is not None:
            return None
        ensure_folder(os.path.dirname(self._name))
        return os.fsencode(self._name)

    def from_descriptor(self, fd: int, /) -> TranscriptFile | None:
        """The file the helper made at :meth:`helper_path`, as ``open_file`` would give it:
        locked (the helper found it empty). ``None`` (the descriptor closed) when its
        lock is held elsewhere: then the flusher has the writer make it as usual."""
        try:
            if try_lock(fd):
                return DescriptorFile(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return None

    def adopt(self, opened: object, /) -> None:
        """Take the file the flusher made (or the error making it raised), and write the lines
        that waited for it, in one ``write``. Under ``"stop"`` an error is raised by the next
        call that writes."""
        if not self._opening:
            return
        self._opening = False
        early, self._early = self._early or [], None
        if isinstance(opened, OSError):  # TimeoutError included
            self._fault_early(opened, early)
            return
        file: TranscriptFile = opened  # type: ignore[assignment]
        self._file = file
        self._watch(file)
        if not early:
            return
        try:
            self._put(file, _MESSAGE, b"".join(early))
        except OSError as exc:
            self._fault_early(exc, early)
            return
        self._written += len(early)

    def _fault_early(self, exc: OSError, early: list[bytes]) -> None:
        """The lines that waited for the file could not go to it: the policy decides."""
        self._drop_file()
        error = TranscriptWriteError(self._path, exc, self._policy)
        if self._policy == "stop":
            self._failed = error
            return
        self._error = error
        for index, line in enumerate(early):
            self._hold(_META if index == 0 else _MESSAGE, line)
        if self._on_report is not None:
            self._on_report(error)

    def settling(self) -> Awaitable[None] | None:
        """What to await before a completed turn counts as done: the file being made, with the
        turn's lines waiting for it (see "Batches"); ``None`` when they are in the file.

        The agent loop awaits it (``Conversation.on_settle``) before it goes on, so a
        completed turn survives ``kill -9`` without the Trio thread making the file.
        """
        if not self._unsettled:
            return None
        self._unsettled = False
        return self._being_made()

    def written(self) -> Awaitable[None] | None:
        """What to await before someone reads the file (a hook given its path): the line
        held back for its turn is written now, and the file, if still being made, is waited
        for (without blocking the thread); ``None`` when every line so far is in the file."""
        self.flush()
        return self._being_made()

    def _being_made(self) -> Awaitable[None] | None:
        """The wait for the file the flusher is making, or ``None`` when it is not."""
        if not self._opening or self._flusher is None:
            return None
        return self._flusher.opened(self)

    def _claim(self) -> None:
        """The file is needed now: have it made (or waited for) before going on."""
        if self._opening and self._flusher is not None:
            self._flusher.claim_open(self)

    @property
    def error(self) -> TranscriptWriteError | None:
        """The disk error that sent the writer to memory (``None`` while on disk)."""
        return self._error

    def buffered(self) -> tuple[bytes, ...]:
        """The lines held in memory, oldest first, each with its newline."""
        return tuple(line for _, line in self._buffer or ())

    def statistics(self) -> TranscriptWriterStatistics:
        """The writer's counters now."""
        return TranscriptWriterStatistics(
            lines_written=self._written,
            lines_buffered=len(self._buffer or ()),
            lines_dropped=self._dropped,
            in_memory=self.in_memory,
            closed=self._closed,
            error=self._error or self._failed,
        )

    def append_message(self, message: Message) -> int:
        """Write ``message`` as the next line; returns its ``seq``."""
        seq = self._next_seq
        record = MessageRecord(agent_id=self._meta.agent_id, seq=seq, message=message)
        try:  # _line, inline: once a message
            line = _encoder.encode(record) + b"\n"
        except UnicodeEncodeError:
            line = _line(record)
        if self._opening and _completes_turn(message):
            self._unsettled = True  # the loop awaits settling() before it goes on
        flusher = self._flusher
        if (
            self._pending is None
            and flusher is not None
            and self._file is not None
            and message.role == "assistant"
            and ToolUseBlock in map(type, message.content)
            and flusher.want(self)
        ):
            self._pending = line  # written with the turn's tool results
        else:
            self._emit(_MESSAGE, line)
        self._next_seq = seq + 1
        self._synced += 1
        return seq

    def append_new(self, conversation: Conversation) -> int:
        """Write the messages of ``conversation`` this writer has not written yet; returns how many.

        The writer counts the messages it wrote (and, when resumed, those of
        the transcript), so calling this after every change of the conversation
        writes each message once.
        """
        new = conversation[self._synced :]
        for message in new:
            self.append_message(message)
        return len(new)

    def append_result(
        self,
        result: AgentResult,
        *,
        status: FinalStatus | None = None,
        run: int | None = None,
        sync: bool = True,
    ) -> ResultRecord:
        """Write how a run ended, and ``fsync`` it, before the caller announces the completion.

        With ``sync=False`` the line is written and its ``fsync`` is the caller's,
        before it announces the completion: :meth:`unsynced` gives the file to
        ``fsync`` (the flusher's :meth:`~TranscriptFlusher.sync`), and
        :meth:`sync_failed` takes its error.

        ``run`` defaults to the run after the last one written; ``status`` to
        the kernel's (``completed`` for ``goal``, ``shutdown`` for ``aborted``,
        ``errored`` otherwise).
        """
        number = self._runs + 1 if run is None else run
        record = ResultRecord.from_result(
            result, agent_id=self._meta.agent_id, run=number, status=status
        )
        if sync:
            self._emit(_RESULT, _line(record))
        else:
            self._emit(_MESSAGE, _line(record))
            self._unsynced = self._fsync and (self._file is not None or self._opening)
        self._runs = max(self._runs, number)
        return record

    def append_closed(self, root: str, *, sync: bool = True) -> ClosedRecord:
        """Write that the agent was closed, by a close asked for ``root`` (itself or an
        ancestor), and ``fsync`` it: a later resume of an ancestor reads it.

        With ``sync=False`` the ``fsync`` is the caller's, as for a result
        (:meth:`unsynced`), before it says the close is done.
        """
        record = ClosedRecord(agent_id=self._meta.agent_id, root=root)
        if sync:
            self._emit(_RESULT, _line(record))
        else:
            self._emit(_MESSAGE, _line(record))
            self._unsynced = self._fsync and (self._file is not None or self._opening)
        return record

    def unsynced(self) -> int | None:
        """The descriptor to ``fsync`` for a result written with ``sync=False`` (once)."""
        if not self._unsynced:
            return None
        self._claim()
        self._unsynced = False
        file = self._file
        return None if file is None else file.fileno()

    def sync_failed(self, exc: OSError) -> None:
        """The ``fsync`` of :meth:`unsynced` failed: a disk error, under the writer's policy.

        Under ``"stop"`` raises :class:`TranscriptWriteError`; under ``"memory"`` the
        error is reported and the following lines are held in memory.
        """
        self._drop_file()
        error = TranscriptWriteError(self._path, exc, self._policy)
        if self._policy == "stop":
            self._failed = error
            raise error from exc
        self._error = error
        if self._on_report is not None:
            self._on_report(error)

    def flush(self) -> None:
        """Write the line held back for its turn (see Batches), if any; the flusher calls this."""
        if self._pending is not None and not self._closed and self._failed is None:
            self._emit(_MESSAGE, b"")

    def retry(self) -> bool:
        """Try once to move the lines held in memory to the file; returns whether it is on disk.

        The file is reopened only if its folder still exists: a state directory
        removed during the run is not recreated. A file that was removed alone
        is started again with a meta line, so it stays loadable.
        """
        self._claim()
        if self._file is not None or self._failed is not None or self._closed:
            return self._file is not None
        if not self._path.parent.is_dir():
            return False
        if not (self._buffer and self._buffer[0][0] == _META) and is_empty(self._path):
            self._meta = msgspec.structs.replace(self._meta, time=time.time())
            self._hold(_META, _line(self._meta))
            assert self._buffer is not None  # _hold made it
            self._buffer.rotate(1)
        try:
            file = self._open()
        except OSError:
            return False
        self._file = file
        self._watch(file)
        buffer = self._buffer
        while buffer:
            kind, line = buffer[0]
            try:
                self._put(file, kind, line)
            except OSError:
                self._drop_file()
                return False
            buffer.popleft()
            self._written += 1
        self._error = None
        return True

    def close(self) -> None:
        """Close the file, first trying once to write lines held in memory; idempotent."""
        if self._closed:
            return
        self._claim()
        if self._pending is not None:
            with contextlib.suppress(TranscriptError):
                self.flush()
        self._look_now()
        if self._buffer:
            self.retry()
        self._drop_file()
        lost, self._lost = self._lost, None
        if lost is not None:
            with contextlib.suppress(OSError):
                lost.close()
        held, self._held = self._held, None
        if held is not None:
            held.close()
        self._closed = True

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "in memory" if self.in_memory else "on disk"
        return f"<TranscriptWriter {self._path} {state}, {self._written} lines written>"

    # -- internals ------------------------------------------------------------------

    @property
    def _path(self) -> Path:
        """The file as a ``Path``, made at the first need (in the Trio thread)."""
        path = self._path_value
        if path is None:
            path = self._path_value = Path(self._name)
        return path

    def _open(self) -> TranscriptFile:
        """The file opened and locked, ended by a newline if torn.

        A lock held from a resume's claim is let go just before the new file
        takes it; should another runtime take it in between, this file is
        refused (``EAGAIN``) and the lines stay in memory: never two writers.
        """
        file = self._opener(self._path)
        held, self._held = self._held, None
        if held is not None:
            held.close()
        lock_file(file, self._path)
        try:
            if not _created_empty(file) and needs_newline(self._path):
                write_all(file, b"\n")
        except BaseException:
            file.close()
            raise
        return file

    def _put(self, file: TranscriptFile, kind: int, line: bytes) -> None:
        written = file.write(line)  # write_all's first round, inline: it almost always is all
        if written != len(line):
            write_all(file, line[written or 0 :])  # the rest, or an error if none goes
        # Watched: the flusher looks at the folder once a pass, and keeps the line until then.
        if not (
            self._watched and self._flusher.keep(self, kind, line)  # type: ignore[union-attr]
        ) and (os.fstat(file.fileno()).st_nlink == 0):
            raise FileNotFoundError(
                errno.ENOENT, "the transcript file was deleted", str(self._path)
            )
        if kind == _RESULT and self._fsync:
            os.fsync(file.fileno())

    def _watch(self, file: TranscriptFile) -> None:
        """Have the flusher watch ``file`` for deletion, if it can (see "Deleted files" in
        :mod:`~subagents.runtime._transcripts.flusher`): only a real file made by the
        default opener, under the ``"memory"`` policy (``"stop"`` raises at the line)."""
        flusher = self._flusher
        self._watched = (
            flusher is not None
            and self._policy == "memory"
            and self._opener is open_append
            and flusher.watch(self, self._name, file.fileno())
        )

    def _look_now(self, *, report: bool = True) -> None:
        """The file is about to close (or was lost): the lines the flusher still keeps,
        if any, are looked at now, and it watches the file no more."""
        if not self._watched:
            return
        kept = self._flusher.take(self, self._name)  # type: ignore[union-attr]
        self._watched = False
        if kept:
            self.recheck(kept, report=report)

    def unwatched(self) -> None:
        """The flusher stopped watching (it stops): look after each line from here on."""
        self._watched = False

    def recheck(self, kept: list[object] | None, /, *, report: bool = True) -> None:
        """The flusher no longer watches the file, which may have lost its name: look at it
        (``fstat``) now, and after every line from here on. ``kept`` are the lines it
        still kept (kind and chunk, in turn, oldest first; a chunk is the lines of one
        ``write``): if the file is gone they go back to memory, before any line held
        there, with the error reported (unless ``report`` is false: the caller reports
        its own), as if a look had followed each line.

        The file is kept open until the writer closes: an ``fsync`` of a result may be
        waiting for its descriptor in the flusher.
        """
        self._watched = False
        file = self._file
        if file is None:
            return
        try:
            gone = os.fstat(file.fileno()).st_nlink == 0
        except OSError:
            gone = True
        if not gone:
            return
        self._file = None
        if self._lost is None:
            self._lost = file
        else:  # a file made again and lost again: the first one's fsync is long done
            with contextlib.suppress(OSError):
                file.close()
        if kept:
            lines = _lines_of(kept)
            self._hold_first(lines)
            self._written -= len(lines)
        if not report:
            return
        error = TranscriptWriteError(
            self._path,
            FileNotFoundError(errno.ENOENT, "the transcript file was deleted", self._name),
            self._policy,
        )
        self._error = error
        if self._on_report is not None:
            self._on_report(error)

    def _hold_first(self, lines: list[tuple[int, bytes]]) -> None:
        """Hold ``lines`` in memory before those held there already (they are older)."""
        later = list(self._buffer or ())
        if self._buffer is not None:
            self._buffer.clear()
        for kind, line in (*lines, *later):
            self._hold(kind, line)

    def _emit(self, kind: int, line: bytes) -> None:
        """Write ``line`` (``b""``: none), after the line held back, if any."""
        if self._opening:
            if kind != _RESULT:  # waits with the others for the file
                if line:
                    assert self._early is not None  # made with _opening, dropped with it
                    self._early.append(line)
                return
            self._claim()  # a result to fsync now: the file first
        held = self._pending
        if held is not None:
            self._pending = None
            if self._file is not None and not self._closed and self._failed is None:
                try:
                    self._put(self._file, kind, held + line)
                except OSError as exc:
                    self._fault(exc, _MESSAGE, held)
                    if line:
                        self._emit(kind, line)
                    return
                self._written += 2 if line else 1
                return
            self._emit(_MESSAGE, held)
        if not line:
            return
        if self._closed:
            raise TranscriptError(
                f"The transcript writer of {self._path} is closed; open a new one "
                "(TranscriptWriter.resume) to go on writing."
            )
        if self._failed is not None:
            raise TranscriptWriteError(self._path, self._failed.os_error, "stop")
        if self._file is None:
            self._hold(kind, line)
            return
        try:
            self._put(self._file, kind, line)
        except OSError as exc:
            self._fault(exc, kind, line)
            return
        self._written += 1

    def _fault(self, exc: OSError, kind: int, line: bytes) -> None:
        self._drop_file()
        error = TranscriptWriteError(self._path, exc, self._policy)
        if self._policy == "stop":
            self._failed = error
            raise error from exc
        self._error = error
        self._hold(kind, line)
        if self._on_report is not None:
            self._on_report(error)

    def _hold(self, kind: int, line: bytes) -> None:
        buffer = self._buffer
        if buffer is None:
            buffer = self._buffer = collections.deque()
        if len(buffer) >= self._max_buffered:
            victim = next((i for i, (k, _) in enumerate(buffer) if k == _MESSAGE), None)
            if victim is None and kind == _MESSAGE:
                self._dropped += 1
                return
            if victim is None:
                victim = next(i for i, (k, _) in enumerate(buffer) if k == _RESULT)
            del buffer[victim]
            self._dropped += 1
        buffer.append((kind, line))

    def _drop_file(self) -> None:
        self._look_now(report=False)
        file, self._file = self._file, None
        if file is not None:
            # Every line went to the OS by its own write: nothing is pending at close.
            with contextlib.suppress(OSError):
                file.close()
