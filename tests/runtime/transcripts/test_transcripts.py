"""Transcripts: writing and loading back, damaged files, finding, listing and retention."""

from __future__ import annotations

import io
import os
import pickle
import tracemalloc
import unittest.mock
from pathlib import Path

import msgspec
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from subagents._exceptions import SubagentsError
from subagents.agents import AgentDefinition, AgentSource
from subagents.runtime import (
    AgentResult,
    AgentRuntimeError,
    Conversation,
    Message,
    Origin,
    RedactedThinkingBlock,
    TerminateReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from subagents.runtime._exceptions import TranscriptError, TranscriptNotFound, TranscriptWriteError
from subagents.runtime._transcripts.load import (
    Transcript,
    _last_result,
    find_transcript,
    list_transcripts,
    load_transcript,
    parse_transcript,
)
from subagents.runtime._transcripts.records import (
    FORMAT_VERSION,
    MessageRecord,
    MetaRecord,
    ResultRecord,
    transcript_file,
    transcript_path,
    transcripts_folder,
)
from subagents.runtime._transcripts.retention import clean_old_transcripts
from subagents.runtime._transcripts.writer import TranscriptWriter

DAY = 86_400.0

MESSAGES = [
    Message.user("Find the entry point.", origin=Origin.TASK),
    Message(
        "assistant",
        (
            ThinkingBlock("Look for main.", signature="sig-1"),
            RedactedThinkingBlock("opaque=="),
            TextBlock("Reading the files."),
            ToolUseBlock("tu-1", "Read", {"file_path": "main.py", "limit": 20}),
            ToolUseBlock("tu-2", "Grep", {"pattern": "def main", "nested": {"a": [1, 2.5, None]}}),
        ),
        Origin.MODEL,
    ),
    Message(
        "user",
        (
            ToolResultBlock("tu-1", "def main(): ..."),
            ToolResultBlock("tu-2", "no such file", is_error=True),
        ),
        Origin.TOOL_RESULTS,
    ),
    Message.user("Time is up: call complete_task now.", origin=Origin.GRACE),
    Message.assistant("main.py:1 is the entry point. ünïcødé ✓"),
    Message.user("Now the tests, please.", origin=Origin.INPUT),
    Message.user("Agent Bo (b2) finished: completed.", origin=Origin.NOTICE),
    Message.user("no origin"),
]

FIRST = AgentResult(
    terminate_reason=TerminateReason.GOAL,
    text="main.py",
    output={"entry": "main.py", "lines": [1, 2]},
    turns=3,
    tool_uses=2,
    usage=Usage(100, 20, 5, 7),
    duration=1.5,
    model="claude-sonnet-4-5",
    grace="timeout",
)
SECOND = AgentResult(terminate_reason=TerminateReason.MAX_TURNS, turns=50, error="ran out of turns")


def meta(agent_id: str = "a1", session_id: str = "s1", **changes: object) -> MetaRecord:
    fields: dict[str, object] = {
        "agent_id": agent_id,
        "agent_type": "Explore",
        "nickname": "Ada",
        "depth": 1,
        "parent_id": "lead",
        "model": "claude-sonnet-4-5",
        "definition_source": "builtin",
        "session_id": session_id,
    }
    fields.update(changes)
    return MetaRecord(**fields)  # type: ignore[arg-type]


def write_agent(
    state: Path,
    agent_id: str = "a1",
    session_id: str = "s1",
    messages: list[Message] = MESSAGES,
    results: tuple[AgentResult, ...] = (FIRST,),
) -> Path:
    path = transcript_path(state, session_id, agent_id)
    with TranscriptWriter(path, meta(agent_id, session_id)) as writer:
        for message in messages:
            writer.append_message(message)
        for result in results:
            writer.append_result(result)
    return path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# -- round trip ------------------------------------------------------------------------


def test_round_trip_keeps_every_block_origin_result_and_meta(tmp_path: Path) -> None:
    path = write_agent(tmp_path, results=(FIRST, SECOND))
    assert path == tmp_path / "sessions" / "s1" / "subagents" / "agent-a1.jsonl"

    transcript = load_transcript(path)

    assert transcript.problems == ()
    assert transcript.notes == ()
    assert list(transcript.conversation()) == MESSAGES
    assert [r.seq for r in transcript.messages] == list(range(len(MESSAGES)))
    assert transcript.next_seq == len(MESSAGES)
    assert [r.to_result() for r in transcript.results] == [FIRST, SECOND]
    assert [(r.run, r.status) for r in transcript.results] == [(1, "completed"), (2, "errored")]
    assert transcript.runs == 2
    assert transcript.last_result is not None
    assert transcript.last_result.error == "ran out of turns"
    got = transcript.meta
    assert (got.agent_id, got.agent_type, got.nickname, got.depth, got.parent_id) == (
        "a1",
        "Explore",
        "Ada",
        1,
        "lead",
    )
    assert (got.model, got.definition_source, got.session_id) == (
        "claude-sonnet-4-5",
        "builtin",
        "s1",
    )
    assert got.version == FORMAT_VERSION
    assert transcript.agent_id == "a1"


def test_every_line_is_a_tagged_record_carrying_the_agent_id(tmp_path: Path) -> None:
    path = write_agent(tmp_path)
    records = [msgspec.json.decode(line) for line in lines_of(path)]
    assert [r["record"] for r in records] == ["meta"] + ["message"] * len(MESSAGES) + ["result"]
    assert {r["agent_id"] for r in records} == {"a1"}
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines_of(path))
    assert records[1]["message"]["content"][0] == {"type": "text", "text": "Find the entry point."}


def test_a_line_with_a_lone_surrogate_is_written_with_u_fffd_in_its_place(
    tmp_path: Path,
) -> None:
    """A provider of one's own may hand on a lone surrogate (JSON's ``"\\ud800"``), which
    msgspec will not encode: the line is written cleaned, not lost with its agent."""
    lone = "x\ud800y"
    messages = [
        MESSAGES[0],
        Message("assistant", (TextBlock(lone), ToolUseBlock("tu-1", "Grep", {lone: [lone]}))),
    ]
    result = AgentResult(terminate_reason=TerminateReason.GOAL, text=lone, output={"k": lone})
    path = write_agent(tmp_path, messages=messages, results=(result,))
    transcript = load_transcript(path)
    written = transcript.messages[-1].message
    assert written.text == "x\ufffdy"
    assert written.tool_uses[0].input == {"x\ufffdy": ["x\ufffdy"]}
    assert (transcript.results[-1].text, transcript.results[-1].output) == (
        "x\ufffdy",
        {"k": "x\ufffdy"},
    )


def test_the_user_prompt_is_in_the_rebuilt_conversation(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:1])
    conversation = load_transcript(path).conversation()
    assert isinstance(conversation, Conversation)
    assert conversation[0].origin is Origin.TASK
    assert conversation[0].text == "Find the entry point."


def test_a_resumed_writer_appends_to_the_same_file_and_goes_on_numbering(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:3])
    before = path.read_bytes()
    transcript = load_transcript(path)

    resumed_meta = msgspec.structs.replace(transcript.meta, model="claude-opus-4")
    with TranscriptWriter.resume(transcript, meta=resumed_meta) as writer:
        assert writer.next_seq == 3
        writer.append_message(Message.user("Go on.", origin=Origin.INPUT))
        writer.append_result(SECOND)

    assert path.read_bytes().startswith(before)
    again = load_transcript(path)
    assert again.problems == ()
    assert [m.model for m in again.metas] == ["claude-sonnet-4-5", "claude-opus-4"]
    assert again.meta.model == "claude-opus-4"
    assert again.meta.created == transcript.meta.created
    assert [r.seq for r in again.messages] == [0, 1, 2, 3]
    assert again.conversation()[-1].text == "Go on."
    assert [r.run for r in again.results] == [1, 2]


def test_append_new_writes_each_conversation_message_once(tmp_path: Path) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    conversation = Conversation(MESSAGES[:2])
    with TranscriptWriter(path, meta()) as writer:
        assert writer.append_new(conversation) == 2
        assert writer.append_new(conversation) == 0
        conversation.append(MESSAGES[2])
        writer.append_message(MESSAGES[2])  # written directly: counted too
        assert writer.append_new(conversation) == 0
        conversation.append(MESSAGES[3])
        assert writer.append_new(conversation) == 1
    transcript = load_transcript(path)
    resumed = transcript.conversation()
    assert list(resumed) == MESSAGES[:4]

    with TranscriptWriter.resume(transcript) as writer:
        resumed.append(MESSAGES[4])
        assert writer.append_new(resumed) == 1
    assert load_transcript(path).conversation()[-1] == MESSAGES[4]


def test_result_records_default_to_the_kernel_status_and_take_explicit_runs(
    tmp_path: Path,
) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    aborted = AgentResult(terminate_reason=TerminateReason.ABORTED)
    with TranscriptWriter(path, meta(), runs=4) as writer:
        assert writer.append_result(aborted).run == 5
        assert writer.append_result(aborted).status == "shutdown"
        assert writer.append_result(FIRST, status="errored", run=9).status == "errored"
        assert writer.runs == 9
    assert [r.run for r in load_transcript(path).results] == [5, 6, 9]


def test_result_lines_are_fsynced_before_append_result_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    path = transcript_path(tmp_path, "s1", "a1")
    writer = TranscriptWriter(path, meta())
    writer.append_message(MESSAGES[0])
    assert synced == []
    writer.append_result(FIRST)
    assert len(synced) == 1
    assert load_transcript(path).last_result is not None  # on disk before close
    writer.close()
    unsynced = TranscriptWriter(path, meta(), fsync_results=False)
    unsynced.append_result(FIRST)
    unsynced.close()
    assert len(synced) == 1


async def test_the_result_is_written_while_the_agent_scope_is_being_cancelled(
    tmp_path: Path,
) -> None:
    path = transcript_path(tmp_path, "s1", "a1")
    writer = TranscriptWriter(path, meta())
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await trio.sleep_forever()
        finally:  # no await needed: the write cannot be cancelled half-way
            writer.append_result(AgentResult(terminate_reason=TerminateReason.ABORTED))
    assert scope.cancelled_caught
    writer.close()
    last = load_transcript(path).last_result
    assert last is not None
    assert last.status == "shutdown"


def test_meta_for_definition_records_where_the_definition_came_from() -> None:
    definition = AgentDefinition(
        name="reviewer",
        description="Reviews code.",
        source=AgentSource.PROJECT,
        path=Path("/repo/.claude/agents/reviewer.md"),
    )
    record = MetaRecord.for_definition(
        definition, agent_id="a9", nickname="Cy", depth=1, parent_id="lead", model="m"
    )
    assert record.agent_type == "reviewer"
    assert record.definition_source == "project"
    assert record.definition_path == "/repo/.claude/agents/reviewer.md"
    assert (
        MetaRecord.for_definition(
            AgentDefinition(name="x", description="y"), agent_id="a", nickname="n"
        ).definition_path
        is None
    )


def test_a_closed_writer_refuses_lines_and_close_is_idempotent(tmp_path: Path) -> None:
    writer = TranscriptWriter(transcript_path(tmp_path, "s1", "a1"), meta())
    writer.close()
    writer.close()
    assert writer.statistics().closed
    with pytest.raises(TranscriptError, match="closed; open a new one"):
        writer.append_message(MESSAGES[0])
    assert "closed" in repr(writer)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"on_disk_error": "ignore"}, "on_disk_error must be"),
        ({"max_buffered_lines": 1}, "max_buffered_lines must be at least 2"),
    ],
)
def test_writer_options_are_checked(tmp_path: Path, options: dict[str, object], match: str) -> None:
    with pytest.raises(TranscriptError, match=match):
        TranscriptWriter(tmp_path / "agent-a1.jsonl", meta(), **options)  # type: ignore[arg-type]


# -- damaged files -----------------------------------------------------------------------


def test_a_torn_last_line_is_ignored_with_a_note(tmp_path: Path) -> None:
    path = write_agent(tmp_path, results=())
    intact = path.read_bytes()
    torn = msgspec.json.encode(MessageRecord(agent_id="a1", seq=8, message=MESSAGES[0]))[:30]
    path.write_bytes(intact + torn)

    transcript = load_transcript(path)

    assert transcript.problems == ()
    assert [n.line for n in transcript.notes] == [len(MESSAGES) + 2]
    assert "torn last line" in str(transcript.notes[0])
    assert list(transcript.conversation()) == MESSAGES


def test_a_resumed_writer_never_glues_its_line_to_a_torn_one(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:2], results=())
    path.write_bytes(path.read_bytes() + b'{"record":"message","agent_id":"a1","se')
    transcript = load_transcript(path)
    with TranscriptWriter.resume(transcript) as writer:
        writer.append_message(MESSAGES[2])

    again = load_transcript(path)
    assert [p.line for p in again.problems] == [4]
    assert "not valid JSON" in again.problems[0].message
    assert list(again.conversation()) == MESSAGES[:3]


def test_a_corrupt_middle_line_is_reported_with_its_number_and_the_rest_kept(
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:4])
    lines = lines_of(path)
    lines[2] = b'{"record": "message", "agent_id": "a1", broken\n'
    lines.insert(4, b'{"json": "but not a record"}\n')
    path.write_bytes(b"".join(lines))

    transcript = load_transcript(path)

    problems = {p.line: p.message for p in transcript.problems}
    assert problems[3].startswith("not valid JSON")
    assert "broken" in problems[3]
    assert problems[5].startswith("not a transcript record")
    assert "seq 1 missing" in problems[4]
    assert [r.seq for r in transcript.messages] == [0, 2, 3]
    assert transcript.last_result is not None
    assert str(transcript.problems[0]).startswith(f"{path}:3: ")


def test_duplicated_lines_are_reported_and_kept_once(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:3])
    lines = lines_of(path)
    path.write_bytes(b"".join([*lines, lines[2], lines[-1], lines[0]]))

    transcript = load_transcript(path)

    assert [(p.line, p.message) for p in transcript.problems] == [
        (6, "duplicate of line 3: kept once"),
        (7, "duplicate of line 5: kept once"),
        (8, "duplicate of line 1: kept once"),
    ]
    assert list(transcript.conversation()) == MESSAGES[:3]
    assert len(transcript.results) == 1
    assert len(transcript.metas) == 1


def test_the_same_seq_twice_keeps_the_first_and_says_whether_they_differ() -> None:
    first = MessageRecord(agent_id="a1", seq=0, message=MESSAGES[0], time=1.0)
    same = msgspec.structs.replace(first, time=2.0)
    other = msgspec.structs.replace(first, message=MESSAGES[1])
    data = b"\n".join(msgspec.json.encode(r) for r in (meta(), first, same, other)) + b"\n"

    transcript = parse_transcript(data, path="agent-a1.jsonl")

    assert [p.message for p in transcript.problems] == [
        "duplicate for message seq 0 (line 2): kept line 2",
        "a different record for message seq 0 (line 2): kept line 2",
    ]
    assert list(transcript.conversation()) == [MESSAGES[0]]


def test_reordered_lines_are_reported_and_put_back_in_seq_order(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:4], results=(FIRST, SECOND))
    lines = lines_of(path)
    lines[1], lines[3] = lines[3], lines[1]
    lines[5], lines[6] = lines[6], lines[5]
    path.write_bytes(b"".join(lines))

    transcript = load_transcript(path)

    assert [p.message for p in transcript.problems] == [
        "out of order: message seq 1 after 2: put back in order",
        "out of order: message seq 0 after 2: put back in order",
        "out of order: result of run 1 after 2: put back in order",
    ]
    assert list(transcript.conversation()) == MESSAGES[:4]
    assert [r.run for r in transcript.results] == [1, 2]


def test_a_line_of_another_agent_is_a_foreign_line(tmp_path: Path) -> None:
    path = write_agent(tmp_path, messages=MESSAGES[:2])
    stranger = write_agent(tmp_path, agent_id="b2", messages=MESSAGES[2:3])
    lines = lines_of(path)
    lines[2:2] = lines_of(stranger)[:2]
    path.write_bytes(b"".join(lines))

    transcript = load_transcript(path)

    assert [(p.line, p.message) for p in transcript.problems] == [
        (3, "foreign line: a meta record of agent 'b2', not 'a1': left out"),
        (4, "foreign line: a message record of agent 'b2', not 'a1': left out"),
    ]
    assert list(transcript.conversation()) == MESSAGES[:2]
    assert transcript.meta.agent_id == "a1"


def test_without_an_agent_file_name_the_first_meta_names_the_agent() -> None:
    records = [meta("a1"), MessageRecord(agent_id="a1", seq=0, message=MESSAGES[0])]
    data = b"".join(msgspec.json.encode(r) + b"\n" for r in records)
    transcript = parse_transcript(data, path="/somewhere/copy.jsonl")
    assert transcript.agent_id == "a1"
    assert transcript.path == Path("/somewhere/copy.jsonl")


def test_blank_lines_and_crlf_endings_are_harmless() -> None:
    records = [meta("a1"), MessageRecord(agent_id="a1", seq=0, message=MESSAGES[0])]
    data = b"\r\n\n".join(msgspec.json.encode(r) for r in records) + b"\r\n"
    transcript = parse_transcript(data, path="agent-a1.jsonl")
    assert transcript.problems == ()
    assert list(transcript.conversation()) == MESSAGES[:1]


def test_a_newer_format_version_is_read_with_a_problem() -> None:
    fields = msgspec.to_builtins(meta(version=FORMAT_VERSION + 1))
    fields["field_of_the_future"] = {"x": 1}
    data = msgspec.json.encode(fields) + b"\n"
    transcript = parse_transcript(data, path="agent-a1.jsonl")
    assert [p.line for p in transcript.problems] == [1]
    assert "newer than" in transcript.problems[0].message
    assert transcript.meta.nickname == "Ada"


@pytest.mark.parametrize(
    ("name", "data", "match"),
    [
        ("agent-a1.jsonl", b"", "no metadata record for agent 'a1'"),
        ("agent-a1.jsonl", b"garbage\n\x00\xff\n", "no metadata record for agent 'a1'"),
        ("agent-a1.jsonl", msgspec.json.encode(meta("b2")) + b"\n", "for agent 'a1'"),
        ("notes.jsonl", b'{"some": "json"}\n', "has no metadata record"),
        ("notes.jsonl", b"", "has no metadata record"),
    ],
)
def test_a_file_without_a_meta_record_is_not_a_transcript(
    tmp_path: Path, name: str, data: bytes, match: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(TranscriptError, match="Not a transcript") as caught:
        load_transcript(path)
    assert match in str(caught.value)
    assert str(path) in str(caught.value)


def test_loading_a_missing_or_unreadable_path_raises_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(TranscriptNotFound, match="No transcript file at") as caught:
        load_transcript(tmp_path / "agent-zz.jsonl")
    assert caught.value.agent_id is None
    with pytest.raises(TranscriptError, match="Could not read the transcript"):
        load_transcript(tmp_path)


# -- paths, finding, listing -------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a\\b", "a\0b"])
def test_ids_that_are_not_one_path_component_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(TranscriptError, match="cannot name a transcript"):
        transcript_path(tmp_path, "s1", bad)
    with pytest.raises(TranscriptError, match="cannot name a transcript"):
        transcript_path(tmp_path, bad, "a1")
    with pytest.raises(TranscriptError, match="cannot name a transcript"):
        find_transcript(tmp_path, bad)
    with pytest.raises(TranscriptError, match="cannot name a transcript"):
        transcript_file(transcripts_folder(tmp_path, "s1"), bad)


def test_the_name_a_spawn_gives_its_file_is_the_public_path(tmp_path: Path) -> None:
    """A spawn names its writer's file by a string (no Path made per agent): the same file
    ``transcript_path`` and ``Runtime.transcript_path`` give."""
    folder = transcripts_folder(tmp_path / "state", "s1")
    name = transcript_file(folder, "a1")
    assert name == str(tmp_path / "state" / "sessions" / "s1" / "subagents" / "agent-a1.jsonl")
    assert Path(name) == transcript_path(tmp_path / "state", "s1", "a1")


def test_find_searches_every_session_and_prefers_the_newest(tmp_path: Path) -> None:
    old = write_agent(tmp_path, session_id="s-old")
    new = write_agent(tmp_path, session_id="s-new")
    write_agent(tmp_path, agent_id="b2", session_id="s-other")
    os.utime(old, (1_000.0, 1_000.0))
    os.utime(new, (2_000.0, 2_000.0))

    assert find_transcript(tmp_path, "a1") == new
    assert find_transcript(str(tmp_path), "b2").parent.parent.name == "s-other"
    os.utime(old, (3_000.0, 3_000.0))
    assert find_transcript(tmp_path, "a1") == old


def test_find_names_the_id_and_the_state_dir_when_there_is_none(tmp_path: Path) -> None:
    with pytest.raises(TranscriptNotFound) as caught:
        find_transcript(tmp_path / "nowhere", "a1")
    write_agent(tmp_path)
    with pytest.raises(TranscriptNotFound) as again:
        find_transcript(tmp_path, "zz")
    assert again.value.agent_id == "zz"
    assert "'zz'" in str(again.value)
    assert str(tmp_path) in str(again.value)
    assert "nowhere" in str(caught.value)


def test_find_and_list_skip_links_inside_the_state_dir(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_agent(outside, session_id="s-linked")
    state = tmp_path / "state"
    (state / "sessions").mkdir(parents=True)
    (state / "sessions" / "s-linked").symlink_to(outside / "sessions" / "s-linked")
    folder = state / "sessions" / "s2" / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-a1.jsonl").symlink_to(transcript_path(outside, "s-linked", "a1"))

    with pytest.raises(TranscriptNotFound):
        find_transcript(state, "a1")
    assert list_transcripts(state) == []


def test_list_reads_type_nickname_and_last_result_newest_first(tmp_path: Path) -> None:
    first = write_agent(tmp_path, results=(FIRST, SECOND))
    big = Message.user("x" * 200_000)  # a last line far larger than one read block
    second = write_agent(tmp_path, agent_id="b2", session_id="s2", messages=[MESSAGES[0]])
    with TranscriptWriter.resume(load_transcript(second)) as writer:
        writer.append_message(big)
    running = write_agent(tmp_path, agent_id="c3", session_id="s2", results=())
    bad = running.with_name("agent-d4.jsonl")
    bad.write_bytes(b"not json\n")
    (running.parent / "notes.txt").write_text("ignored")
    for age, path in enumerate([bad, running, second, first]):
        os.utime(path, (10_000.0 - age, 10_000.0 - age))

    infos = list_transcripts(tmp_path)

    assert [(i.session_id, i.agent_id) for i in infos] == [
        ("s2", "d4"),
        ("s2", "c3"),
        ("s2", "b2"),
        ("s1", "a1"),
    ]
    by_id = {i.agent_id: i for i in infos}
    assert by_id["a1"].agent_type == "Explore"
    assert by_id["a1"].nickname == "Ada"
    assert by_id["a1"].last_result is not None
    assert by_id["a1"].last_result.run == 2
    assert by_id["a1"].size == first.stat().st_size
    assert by_id["a1"].modified == 9_997.0
    assert by_id["b2"].last_result is not None
    assert by_id["b2"].last_result.to_result() == FIRST
    assert by_id["c3"].last_result is None
    assert by_id["c3"].problem is None
    assert by_id["d4"].agent_type is None
    assert by_id["d4"].problem == "its first line is not this agent's metadata record"


def test_list_of_an_empty_or_missing_state_dir_is_empty(tmp_path: Path) -> None:
    assert list_transcripts(tmp_path / "missing") == []
    (tmp_path / "sessions" / "s1").mkdir(parents=True)
    assert list_transcripts(tmp_path) == []


# -- the last result, read by seeking ------------------------------------------------------


class _CountingReader:
    """A file that counts the bytes read through it."""

    def __init__(self, data: bytes) -> None:
        self._file = io.BytesIO(data)
        self.bytes_read = 0
        self.reads = 0

    def seek(self, offset: int, /) -> int:
        return self._file.seek(offset)

    def read(self, size: int, /) -> bytes:
        data = self._file.read(size)
        self.reads += 1
        self.bytes_read += len(data)
        return data


def _lines(*records: MetaRecord | MessageRecord | ResultRecord) -> bytes:
    return b"".join(msgspec.json.encode(record) + b"\n" for record in records)


def test_the_last_result_behind_a_huge_last_line_is_found_in_one_pass_and_a_few_blocks() -> None:
    result = ResultRecord.from_result(FIRST, agent_id="a1", run=1)
    huge = MessageRecord(agent_id="a1", seq=0, message=Message.user("x" * 6_000_000))
    data = _lines(meta(), result, huge)[:-1]  # a last line still being written (no newline)
    reader = _CountingReader(data)

    tracemalloc.start()
    try:
        found = _last_result(reader, len(data), "a1")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert found == result
    # Each byte is read once; the long line is never held whole (nor copied block by block).
    assert reader.bytes_read <= len(data)
    assert peak < 1_000_000


def test_a_huge_last_result_line_is_read_whole_once() -> None:
    result = ResultRecord.from_result(
        msgspec.structs.replace(FIRST, text="y" * 3_000_000), agent_id="a1", run=4
    )
    data = _lines(meta(), result)
    reader = _CountingReader(data)

    tracemalloc.start()
    try:
        found = _last_result(reader, len(data), "a1")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert found == result
    assert reader.bytes_read <= 2 * len(data)
    # The line itself, and its decoded text: not a copy per block.
    assert peak < 4 * len(data)


@given(
    st.lists(
        st.sampled_from(["meta", "message", "result", "foreign", "junk", "blank"]), max_size=12
    ),
    st.sampled_from([1, 7, 64, 1 << 16]),
    st.booleans(),
)
def test_the_last_result_is_the_last_good_result_line_whatever_the_block_size(
    kinds: list[str], block: int, torn: bool
) -> None:
    records: list[bytes] = []
    expected: ResultRecord | None = None
    for number, kind in enumerate(kinds):
        if kind == "meta":
            records.append(msgspec.json.encode(meta()))
        elif kind == "message":
            records.append(
                msgspec.json.encode(
                    MessageRecord(agent_id="a1", seq=number, message=Message.user("m" * number))
                )
            )
        elif kind == "result":
            expected = ResultRecord.from_result(SECOND, agent_id="a1", run=number)
            records.append(msgspec.json.encode(expected))
        elif kind == "foreign":
            records.append(
                msgspec.json.encode(ResultRecord.from_result(SECOND, agent_id="zz", run=1))
            )
        elif kind == "junk":
            records.append(b'{"record":"result",' + b"z" * number)
        else:
            records.append(b"")
    data = b"\n".join(records) + (b"" if torn else b"\n")
    with unittest.mock.patch("subagents.runtime._transcripts.load._BLOCK", block):
        found = _last_result(io.BytesIO(data), len(data), "a1")
    assert found == expected


# -- retention ---------------------------------------------------------------------------


def _age(folder: Path, when: float) -> None:
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            os.utime(os.path.join(root, name), (when, when), follow_symlinks=False)
    os.utime(folder, (when, when))


OLD_S, MIXED_S, FRESH_S = (
    "20250101-000000-0000aa",
    "20250101-000000-0000bb",
    "20250101-000000-0000cc",
)


def test_retention_removes_sessions_whose_newest_file_is_too_old(tmp_path: Path) -> None:
    now = 100 * DAY
    old = write_agent(tmp_path, session_id=OLD_S).parents[1]
    mixed = write_agent(tmp_path, session_id=MIXED_S).parents[1]
    write_agent(tmp_path, agent_id="b2", session_id=MIXED_S)
    fresh = write_agent(tmp_path, session_id=FRESH_S).parents[1]
    _age(old, now - 31 * DAY)
    _age(mixed, now - 40 * DAY)
    os.utime(transcript_path(tmp_path, MIXED_S, "b2"), (now - DAY, now - DAY))
    _age(fresh, now - 29 * DAY)

    removed = clean_old_transcripts(tmp_path, 30, now=now)

    assert [(p.path, p.folder_removed, p.left, p.skipped) for p in removed] == [
        (old, True, (), None)
    ]
    assert removed[0].transcripts == (old / "subagents" / "agent-a1.jsonl",)
    assert removed[0].newest == now - 31 * DAY
    assert not old.exists()
    assert mixed.exists()
    assert fresh.exists()
    assert [p.path for p in clean_old_transcripts(tmp_path, 2, now=now)] == [fresh]
    assert [p.name for p in (tmp_path / "sessions").iterdir()] == [MIXED_S]


def test_retention_never_follows_links_out_of_the_state_dir(tmp_path: Path) -> None:
    now = 100 * DAY
    outside = tmp_path / "outside"
    precious = write_agent(outside, session_id=FRESH_S)
    _age(outside / "sessions" / FRESH_S, 0.0)
    state = tmp_path / "state"
    old = write_agent(state, session_id=OLD_S).parents[1]
    (old / "link-to-file").symlink_to(precious)
    (old / "subagents" / "agent-b2.jsonl").symlink_to(precious)
    (old / "link-to-dir").symlink_to(outside / "sessions" / FRESH_S)
    (state / "sessions" / MIXED_S).symlink_to(outside / "sessions" / FRESH_S)
    _age(old, 0.0)

    [pruned] = clean_old_transcripts(state, 1, now=now)

    assert pruned.path == old
    assert pruned.transcripts == (old / "subagents" / "agent-a1.jsonl",)
    assert not pruned.folder_removed
    assert precious.exists()
    assert load_transcript(precious).problems == ()
    assert (state / "sessions" / MIXED_S).is_symlink()
    assert sorted(p.name for p in old.iterdir()) == ["link-to-dir", "link-to-file", "subagents"]
    assert [p.name for p in (old / "subagents").iterdir()] == ["agent-b2.jsonl"]


def test_retention_uses_the_clock_by_default_and_checks_its_limit(tmp_path: Path) -> None:
    write_agent(tmp_path, session_id=OLD_S)
    assert clean_old_transcripts(tmp_path, 1) == []
    assert clean_old_transcripts(tmp_path / "missing", 1) == []
    for bad in (0, -1, float("nan"), float("inf"), True):
        with pytest.raises(TranscriptError, match="positive number of days"):
            clean_old_transcripts(tmp_path, bad)


# -- errors ------------------------------------------------------------------------------


def test_errors_derive_from_the_package_root_and_pickle(tmp_path: Path) -> None:
    errors = [
        TranscriptError("x"),
        TranscriptNotFound("a1", tmp_path),
        TranscriptNotFound(None, tmp_path / "agent-a1.jsonl"),
        TranscriptWriteError(tmp_path / "f", OSError(28, "No space left on device"), "memory"),
    ]
    for error in errors:
        assert isinstance(error, AgentRuntimeError)
        assert isinstance(error, SubagentsError)
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert str(copy) == str(error)


def test_transcript_values_are_frozen(tmp_path: Path) -> None:
    transcript = load_transcript(write_agent(tmp_path))
    assert isinstance(transcript, Transcript)
    with pytest.raises(AttributeError):
        transcript.meta = meta()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        transcript.results[0].run = 3  # type: ignore[misc]
    assert ResultRecord.from_result(FIRST, agent_id="a1", run=1).to_result() == FIRST
