"""Reading transcripts back: load one, find one by agent id, list them.

:func:`load_transcript` is forgiving line by line and strict about identity.
A torn last line (a write cut short by a crash) is left out with a note; any
other line that is not a record of this agent (corrupt, of another agent,
a duplicate, out of order) becomes a :class:`TranscriptProblem` with its line
number while every good line is kept; only a file with no meta record for the
agent raises :class:`TranscriptError`. The agent is the one the file name
(``agent-<id>.jsonl``) names, or else the one of the first meta record.

Every function here does blocking file I/O; from Trio call it through
``trio.to_thread.run_sync``. Symbolic links inside the state directory are
never followed: a linked session or file is skipped. Retention (removing old
ones) is in :mod:`subagents.runtime._transcripts.retention`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Protocol, TypeVar

import attrs
import msgspec

from subagents.runtime._exceptions import TranscriptError, TranscriptNotFound
from subagents.runtime._messages import Conversation
from subagents.runtime._transcripts.records import (
    FORMAT_VERSION,
    ClosedRecord,
    MessageRecord,
    MetaRecord,
    ResultRecord,
    TranscriptRecord,
    check_name,
)

__all__ = [
    "Transcript",
    "TranscriptInfo",
    "TranscriptProblem",
    "find_transcript",
    "list_transcripts",
    "load_transcript",
    "parse_transcript",
]


class _Readable(Protocol):
    def seek(self, offset: int, /) -> int: ...
    def read(self, size: int, /) -> bytes: ...


_R = TypeVar("_R", MessageRecord, ResultRecord)

_NAME: Final = re.compile(r"agent-(.+)\.jsonl")
_decoder = msgspec.json.Decoder(TranscriptRecord)
_meta_decoder = msgspec.json.Decoder(MetaRecord)
_result_decoder = msgspec.json.Decoder(ResultRecord)
#: How much of a line a problem quotes.
_QUOTE: Final = 60
#: The longest first line :func:`list_transcripts` reads for the meta record.
_HEAD_LIMIT: Final = 1 << 20
#: The block size :func:`list_transcripts` reads backwards to find the last result.
_BLOCK: Final = 1 << 16
#: How a result line starts: the encoder writes the tag first, and inside a JSON
#: string a quote is always escaped, so this text only ever starts a result record.
_RESULT_TAG: Final = b'{"record":"result"'


@attrs.frozen
class TranscriptProblem:
    """Something wrong with one line of a transcript file (``line`` counts from 1)."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@attrs.frozen
class Transcript:
    """An agent's transcript as loaded: who it is, its messages in order, its run results.

    ``meta`` is the newest meta line (a resume writes one more); ``messages``
    are ordered by ``seq`` with each kept once; ``results`` ordered by run.
    ``problems`` lists the lines left out or repaired, ``notes`` the harmless
    ones (a torn last line). ``closed`` is the close written after the newest
    meta line: set when the agent was closed, ``None`` when it was open when
    its writer stopped.
    """

    path: Path
    meta: MetaRecord
    metas: tuple[MetaRecord, ...]
    messages: tuple[MessageRecord, ...]
    results: tuple[ResultRecord, ...]
    problems: tuple[TranscriptProblem, ...] = ()
    notes: tuple[TranscriptProblem, ...] = ()
    closed: ClosedRecord | None = None

    @property
    def agent_id(self) -> str:
        """The agent's id."""
        return self.meta.agent_id

    @property
    def next_seq(self) -> int:
        """The ``seq`` a resumed writer gives its first message."""
        return self.messages[-1].seq + 1 if self.messages else 0

    @property
    def runs(self) -> int:
        """The highest run number with a result (0 when none finished)."""
        return self.results[-1].run if self.results else 0

    @property
    def last_result(self) -> ResultRecord | None:
        """The result of the last run that finished, if any."""
        return self.results[-1] if self.results else None

    def conversation(self) -> Conversation:
        """Every message, user prompts included, as a conversation to resume from."""
        return Conversation(record.message for record in self.messages)


def load_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read the transcript at ``path`` (see the module docstring for what is forgiven).

    Raises :class:`TranscriptNotFound` when there is no file, and
    :class:`TranscriptError` when it cannot be read or is not a transcript.
    """
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise TranscriptNotFound(None, file) from None
    except OSError as exc:
        raise TranscriptError(
            f"Could not read the transcript {file}: {exc.strerror or exc}. "
            "Check that it is a readable file."
        ) from exc
    return parse_transcript(data, path=file)


def parse_transcript(
    data: bytes, *, path: str | os.PathLike[str] = "transcript.jsonl"
) -> Transcript:
    """Parse transcript lines; ``path`` names the file in problems (and, by its name, the agent)."""
    file = Path(path)
    lines = data.split(b"\n")
    torn_possible = not data.endswith(b"\n")
    if not torn_possible:
        lines.pop()
    problems: list[TranscriptProblem] = []
    notes: list[TranscriptProblem] = []
    decoded: list[tuple[int, TranscriptRecord]] = []
    seen: dict[bytes, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        first = seen.get(raw)
        if first is not None:
            problems.append(
                TranscriptProblem(file, number, f"duplicate of line {first}: kept once")
            )
            continue
        try:
            record = _decoder.decode(raw)
        except msgspec.ValidationError as exc:
            problems.append(
                TranscriptProblem(file, number, _bad(raw, "not a transcript record", exc))
            )
        except (msgspec.DecodeError, RecursionError) as exc:
            if torn_possible and number == len(lines):
                notes.append(
                    TranscriptProblem(
                        file, number, "torn last line (a write cut short by a crash): ignored"
                    )
                )
            else:
                problems.append(TranscriptProblem(file, number, _bad(raw, "not valid JSON", exc)))
        else:
            seen[raw] = number
            decoded.append((number, record))
    return _assemble(file, decoded, problems, notes)


def _bad(raw: bytes, what: str, exc: Exception) -> str:
    quote = raw[:_QUOTE].decode("utf-8", "replace")
    more = "..." if len(raw) > _QUOTE else ""
    return f"{what} ({exc}), left out: {quote!r}{more}"


def _agent_of(file: Path, decoded: list[tuple[int, TranscriptRecord]]) -> str:
    match = _NAME.fullmatch(file.name)
    if match is not None:
        return match.group(1)
    for _, record in decoded:
        if type(record) is MetaRecord:
            return record.agent_id
    raise TranscriptError(
        f"Not a transcript: {file} has no metadata record (the first line of a transcript "
        'is {"record":"meta",...}). Check the path.'
    )


def _assemble(
    file: Path,
    decoded: list[tuple[int, TranscriptRecord]],
    problems: list[TranscriptProblem],
    notes: list[TranscriptProblem],
) -> Transcript:
    agent_id = _agent_of(file, decoded)
    metas: list[MetaRecord] = []
    messages: dict[int, tuple[int, MessageRecord]] = {}
    results: dict[int, tuple[int, ResultRecord]] = {}
    top_seq = top_run = -1
    closed: ClosedRecord | None = None
    for number, record in decoded:
        if record.agent_id != agent_id:
            kind = type(record).__struct_config__.tag
            problems.append(
                TranscriptProblem(
                    file,
                    number,
                    f"foreign line: a {kind} record of agent {record.agent_id!r}, "
                    f"not {agent_id!r}: left out",
                )
            )
        elif type(record) is MetaRecord:
            metas.append(record)
            closed = None  # a writer went on after any earlier close
            if record.version > FORMAT_VERSION:
                problems.append(
                    TranscriptProblem(
                        file,
                        number,
                        f"written in format version {record.version}, newer than "
                        f"{FORMAT_VERSION}: fields this version does not know are ignored",
                    )
                )
        elif type(record) is MessageRecord:
            _place(file, number, record.seq, record, messages, top_seq, "message seq", problems)
            top_seq = max(top_seq, record.seq)
        elif type(record) is ResultRecord:
            _place(file, number, record.run, record, results, top_run, "result of run", problems)
            top_run = max(top_run, record.run)
        elif type(record) is ClosedRecord:
            closed = record
    if not metas:
        raise TranscriptError(
            f"Not a transcript: {file} has no metadata record for agent {agent_id!r} "
            "(its meta line is missing or corrupt), so the agent cannot be rebuilt from it."
        )
    ordered = [messages[seq] for seq in sorted(messages)]
    expected = 0
    for number, record in ordered:
        if record.seq > expected:
            missing = (
                f"{expected}" if record.seq == expected + 1 else f"{expected}..{record.seq - 1}"
            )
            problems.append(
                TranscriptProblem(file, number, f"messages seq {missing} missing before this one")
            )
        expected = record.seq + 1
    return Transcript(
        path=file,
        meta=metas[-1],
        metas=tuple(metas),
        messages=tuple(record for _, record in ordered),
        results=tuple(results[run][1] for run in sorted(results)),
        problems=tuple(sorted(problems, key=lambda p: p.line)),
        notes=tuple(notes),
        closed=closed,
    )


def _place(
    file: Path,
    number: int,
    key: int,
    record: _R,
    into: dict[int, tuple[int, _R]],
    top: int,
    what: str,
    problems: list[TranscriptProblem],
) -> None:
    """Keep ``record`` under ``key`` unless a record came first there; report what is odd."""
    earlier = into.get(key)
    if earlier is not None:
        line, kept = earlier
        same = _same(kept, record)
        text = "duplicate" if same else "a different record"
        problems.append(
            TranscriptProblem(
                file, number, f"{text} for {what} {key} (line {line}): kept line {line}"
            )
        )
        return
    if key < top:
        problems.append(
            TranscriptProblem(
                file, number, f"out of order: {what} {key} after {top}: put back in order"
            )
        )
    into[key] = (number, record)


def _same(a: MessageRecord | ResultRecord, b: MessageRecord | ResultRecord) -> bool:
    return msgspec.structs.replace(a, time=0.0) == msgspec.structs.replace(b, time=0.0)


# -- finding and listing ---------------------------------------------------------------


@attrs.frozen
class TranscriptInfo:
    """One transcript file as :func:`list_transcripts` sees it, without loading it whole.

    ``agent_type`` and ``nickname`` come from the first line (``None`` when it
    is not this agent's meta record, which ``problem`` then says);
    ``last_result`` is the last result line; ``modified`` is a wall time.
    """

    path: Path
    session_id: str
    agent_id: str
    agent_type: str | None
    nickname: str | None
    size: int
    modified: float
    last_result: ResultRecord | None
    problem: str | None = None


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _sessions(state_dir: Path) -> Iterator[tuple[str, Path]]:
    """The real session folders under ``<state_dir>/sessions`` (linked ones skipped)."""
    root = state_dir / "sessions"
    if not _is_dir(root):
        return
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield entry.name, Path(entry.path)


def find_transcript(state_dir: str | os.PathLike[str], agent_id: str) -> Path:
    """The transcript of ``agent_id`` in any session of ``state_dir`` (the newest if several).

    Raises :class:`TranscriptNotFound` naming the id and the state directory.
    """
    name = f"agent-{check_name('Agent id', agent_id)}.jsonl"
    root = Path(state_dir)
    found: list[tuple[float, Path]] = []
    for _, session in _sessions(root):
        path = session / "subagents" / name
        if not _is_dir(path.parent):
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime, path))
    if not found:
        raise TranscriptNotFound(agent_id, root)
    return max(found, key=lambda item: item[0])[1]


def list_transcripts(state_dir: str | os.PathLike[str]) -> list[TranscriptInfo]:
    """Every transcript under ``state_dir``, the most recently modified first."""
    infos: list[TranscriptInfo] = []
    for session_id, session in _sessions(Path(state_dir)):
        folder = session / "subagents"
        if not _is_dir(folder):
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            match = _NAME.fullmatch(entry.name)
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            infos.append(_summarize(Path(entry.path), session_id, match.group(1), info))
    infos.sort(key=lambda item: item.modified, reverse=True)
    return infos


def _summarize(path: Path, session_id: str, agent_id: str, info: os.stat_result) -> TranscriptInfo:
    meta: MetaRecord | None = None
    result: ResultRecord | None = None
    problem: str | None = None
    try:
        with path.open("rb") as file:
            try:
                meta = _meta_decoder.decode(file.readline(_HEAD_LIMIT))
            except (msgspec.MsgspecError, RecursionError):
                meta = None
            result = _last_result(file, info.st_size, agent_id)
    except OSError as exc:
        problem = f"could not be read: {exc.strerror or exc}"
    if meta is not None and meta.agent_id != agent_id:
        meta = None
    if meta is None and problem is None:
        problem = "its first line is not this agent's metadata record"
    return TranscriptInfo(
        path=path,
        session_id=session_id,
        agent_id=agent_id,
        agent_type=None if meta is None else meta.agent_type,
        nickname=None if meta is None else meta.nickname,
        size=info.st_size,
        modified=info.st_mtime,
        last_result=result,
        problem=problem,
    )


def _last_result(file: _Readable, size: int, agent_id: str) -> ResultRecord | None:
    """The last result line of ``agent_id``, found by reading backwards block by block.

    Each byte is read once while looking for line ends, and only a line that
    starts as a result record is read whole (once more) to be decoded, so a
    huge last line costs one pass and one block of memory, not a copy per block.
    """
    line_end = size
    pos = size
    while pos > 0:
        start = max(0, pos - _BLOCK)
        file.seek(start)
        block = file.read(pos - start)
        cut = len(block)
        while (newline := block.rfind(b"\n", 0, cut)) >= 0:
            record = _result_line(file, block, start, start + newline + 1, line_end, agent_id)
            if record is not None:
                return record
            line_end = start + newline
            cut = newline
        pos = start
    if line_end == 0:
        return None
    file.seek(0)
    return _result_line(file, file.read(min(line_end, _BLOCK)), 0, 0, line_end, agent_id)


def _result_line(
    file: _Readable, block: bytes, block_start: int, start: int, end: int, agent_id: str
) -> ResultRecord | None:
    """The result record of ``agent_id`` at bytes ``start..end``, if that line is one.

    ``block`` holds the file's bytes from ``block_start``, ``start`` among them;
    the rest of a longer line is read from ``file`` only when it is a result.
    """
    offset = start - block_start
    head = block[offset : offset + len(_RESULT_TAG)]
    if len(head) < len(_RESULT_TAG) and end - start > len(head):  # the head crosses the block
        file.seek(start)
        head = file.read(min(len(_RESULT_TAG), end - start))
    if head != _RESULT_TAG:
        return None
    if end - block_start <= len(block):
        raw = block[offset : end - block_start]
    else:
        file.seek(start)
        raw = file.read(end - start)
    try:
        record = _result_decoder.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None
    return record if record.agent_id == agent_id else None
