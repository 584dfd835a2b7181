"""Hypothesis: damaged transcripts load with problems, never crash, never lose an intact line.

A valid transcript (two writers: the agent's first run and a resume) is cut,
duplicated, reordered, sprinkled with other agents' lines and garbage bytes.
Loading it must give a :class:`Transcript` (or :class:`TranscriptError` when no
meta line of the agent survived) in which every message line still intact in
the file is present, in seq order. A writer whose disk fails at a random line
must leave the lines written before it untouched.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents.runtime import (
    AgentResult,
    Message,
    Origin,
    TerminateReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from subagents.runtime._exceptions import TranscriptError, TranscriptWriteError
from subagents.runtime._transcripts.file import TranscriptFile, open_append
from subagents.runtime._transcripts.load import Transcript, load_transcript, parse_transcript
from subagents.runtime._transcripts.records import (
    MessageRecord,
    MetaRecord,
    ResultRecord,
    TranscriptRecord,
    transcript_path,
)
from subagents.runtime._transcripts.writer import TranscriptWriter

PATH = Path("/state/sessions/s1/subagents/agent-a1.jsonl")


def _line(record: TranscriptRecord) -> bytes:
    return msgspec.json.encode(record)


def _message(n: int) -> Message:
    if n % 3 == 1:
        return Message(
            "assistant",
            (TextBlock(f"step {n}"), ToolUseBlock(f"t{n}", "Read", {"n": n})),
            Origin.MODEL,
        )
    if n % 3 == 2:
        return Message("user", (ToolResultBlock(f"t{n - 1}", f"out {n}"),), Origin.TOOL_RESULTS)
    return Message.user(f"prompt {n}", origin=Origin.TASK if n == 0 else Origin.INPUT)


def _records(agent_id: str, nickname: str) -> list[TranscriptRecord]:
    meta = MetaRecord(agent_id=agent_id, agent_type="Explore", nickname=nickname, time=1.0)
    done = AgentResult(terminate_reason=TerminateReason.GOAL, text="ok", turns=2)
    first: list[TranscriptRecord] = [meta]
    first += [
        MessageRecord(agent_id=agent_id, seq=n, message=_message(n), time=2.0 + n) for n in range(6)
    ]
    first.append(ResultRecord.from_result(done, agent_id=agent_id, run=1))
    second: list[TranscriptRecord] = [msgspec.structs.replace(meta, time=20.0)]
    second += [
        MessageRecord(agent_id=agent_id, seq=n, message=_message(n), time=20.0 + n)
        for n in range(6, 9)
    ]
    second.append(ResultRecord.from_result(done, agent_id=agent_id, run=2))
    return first + second


ORIGINAL = [_line(r) for r in _records("a1", "Ada")]
FOREIGN = [_line(r) for r in _records("b7", "Bo")]
MESSAGES = {
    record.seq: (line, record.message)
    for line, record in zip(ORIGINAL, _records("a1", "Ada"), strict=True)
    if isinstance(record, MessageRecord)
}
META_LINES = {line for line in ORIGINAL if line.startswith(b'{"record":"meta"')}


def _parse(data: bytes) -> Transcript | TranscriptError:
    """The transcript, or the (only allowed) error; anything else propagates and fails."""
    try:
        return parse_transcript(data, path=PATH)
    except TranscriptError as exc:
        return exc


index = st.integers(min_value=0, max_value=10_000)
mutation = st.one_of(
    st.tuples(st.just("duplicate"), index, index, st.just(b"")),
    st.tuples(st.just("move"), index, index, st.just(b"")),
    st.tuples(st.just("foreign"), index, index, st.just(b"")),
    st.tuples(st.just("garbage"), index, index, st.binary(max_size=60)),
    st.tuples(st.just("overwrite"), index, index, st.binary(min_size=1, max_size=60)),
    st.tuples(st.just("cut"), index, index, st.just(b"")),
)


def _mutate(lines: list[bytes], how: tuple[str, int, int, bytes]) -> None:
    kind, i, j, garbage = how
    if kind == "foreign":
        lines.insert(j % (len(lines) + 1), FOREIGN[i % len(FOREIGN)])
    elif kind == "garbage":
        lines.insert(j % (len(lines) + 1), garbage)
    elif not lines:
        return
    elif kind == "duplicate":
        lines.insert(j % (len(lines) + 1), lines[i % len(lines)])
    elif kind == "move":
        line = lines.pop(i % len(lines))
        lines.insert(j % (len(lines) + 1), line)
    elif kind == "overwrite":
        lines[i % len(lines)] = garbage
    elif kind == "cut":
        line = lines[i % len(lines)]
        lines[i % len(lines)] = line[: j % max(len(line), 1)]


@settings(max_examples=300, deadline=None)
@given(
    mutations=st.lists(mutation, max_size=8),
    truncate=st.none() | index,
    final_newline=st.booleans(),
)
def test_damaged_transcripts_load_with_problems_and_keep_every_intact_message(
    mutations: list[tuple[str, int, int, bytes]], truncate: int | None, final_newline: bool
) -> None:
    lines = list(ORIGINAL)
    for how in mutations:
        _mutate(lines, how)
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    if truncate is not None:
        data = data[: truncate % (len(data) + 1)]
    present = data.split(b"\n")

    transcript = _parse(data)
    if isinstance(transcript, TranscriptError):
        assert "Not a transcript" in str(transcript)
        assert not META_LINES.intersection(present)
        return

    assert isinstance(transcript, Transcript)
    assert transcript.agent_id == "a1"
    kept = {record.seq: record.message for record in transcript.messages}
    for seq, (line, message) in MESSAGES.items():
        if line in present:
            assert kept.get(seq) == message, f"intact message seq {seq} was lost"
    seqs = [record.seq for record in transcript.messages]
    assert seqs == sorted(set(seqs))
    runs = [record.run for record in transcript.results]
    assert runs == sorted(set(runs))
    for problem in (*transcript.problems, *transcript.notes):
        assert 1 <= problem.line <= len(present)
        assert problem.message
    assert len(transcript.notes) <= 1
    assert list(transcript.conversation()) == [record.message for record in transcript.messages]
    if lines == ORIGINAL and truncate is None:
        assert transcript.problems == ()


class _Breaking:
    """A real file whose writes fail with ``code`` after ``budget`` of them."""

    def __init__(self, path: Path, budget: int, code: int) -> None:
        self._file = open_append(path)
        self._budget = budget
        self._code = code

    def write(self, data: bytes, /) -> int | None:
        if self._budget <= 0:
            raise OSError(self._code, os.strerror(self._code))
        self._budget -= 1
        return self._file.write(data)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.sampled_from(["message", "result"]), min_size=1, max_size=12),
    budget=st.integers(min_value=0, max_value=14),
    code=st.sampled_from([errno.ENOSPC, errno.EACCES, errno.ENOENT, errno.EIO]),
    policy=st.sampled_from(["memory", "stop"]),
)
def test_a_disk_failing_at_any_line_never_touches_what_was_written(
    steps: list[str], budget: int, code: int, policy: str
) -> None:
    with tempfile.TemporaryDirectory() as state:
        path = transcript_path(state, "s1", "a1")
        meta = MetaRecord(agent_id="a1", agent_type="Explore", nickname="Ada")

        def opener(target: Path) -> TranscriptFile:
            return _Breaking(target, budget, code)

        snapshots: list[bytes] = []
        errors: list[TranscriptWriteError] = []
        try:
            writer = TranscriptWriter(path, meta, on_disk_error=policy, opener=opener)  # type: ignore[arg-type]
        except TranscriptWriteError as exc:
            errors.append(exc)
        if errors:
            assert policy == "stop"
            assert errors[0].errno == code
            return
        written = 0
        for n, step in enumerate(steps):
            snapshots.append(path.read_bytes())
            try:
                if step == "message":
                    writer.append_message(_message(n))
                    written += 1
                else:
                    writer.append_result(AgentResult(terminate_reason=TerminateReason.GOAL))
            except TranscriptWriteError as exc:
                errors.append(exc)
                break
        assert policy == "stop" or not errors
        assert all(error.errno == code for error in errors)
        final = path.read_bytes()
        writer.close()  # may move held lines to disk (the retry at close): appended only
        assert path.read_bytes().startswith(final)
        for snapshot in snapshots:
            assert final.startswith(snapshot)
        stats = writer.statistics()
        if policy == "memory":
            assert stats.lines_written + stats.lines_buffered == 1 + len(steps)
        if budget == 0:
            assert final == b""
            return
        transcript = parse_transcript(final, path=path)
        assert transcript.problems == ()
        assert load_transcript(path).problems == ()
        on_disk = min(budget, 1 + len(steps)) - 1
        expected = [_message(n) for n, step in enumerate(steps[:on_disk]) if step == "message"]
        assert list(transcript.conversation()) == expected
        assert written >= len(expected)
