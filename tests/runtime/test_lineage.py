"""The session lineage: the sessions a transcript records, and whom a model may resume."""

from __future__ import annotations

from pathlib import Path

import msgspec
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from subagents import testing
from subagents.runtime import MetaRecord, ScriptedProvider
from subagents.runtime._lineage import SessionLineage, read_sessions
from tests.runtime.world import World

_encoder = msgspec.json.Encoder()


def _meta(agent_id: str, session: str, nickname: str = "Ada") -> bytes:
    record = MetaRecord(agent_id=agent_id, agent_type="Explore", nickname=nickname)
    return _encoder.encode(msgspec.structs.replace(record, session_id=session)) + b"\n"


def test_a_transcript_records_every_session_that_wrote_it(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_bytes(
        _meta("a1", "s1")
        + b'{"record":"message","agent_id":"a1","seq":0,"message":{"role":"user"}}\n'
        + _meta("a1", "s2")
        + _meta("a1", "s1", nickname="Ada the 2nd")
    )
    found = read_sessions(path, "a1")
    assert found.sessions == ("s1", "s2")
    assert found.nickname == "Ada the 2nd"


def test_forged_and_broken_meta_lines_name_no_session(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_bytes(
        _meta("someone-else", "current")  # another agent's line: ignored, as the loader does
        + b'{"record":"meta","agent_id":"a1","session_id":\n'  # torn
        + b'{"record":"meta","agent_id":"a1","agent_type":1}\n'  # wrong types
        + b'  {"record":"meta","agent_id":"a1","agent_type":"x","nickname":"y",'
        + b'"session_id":"indented"}\n'  # not a line the writer makes
        + b'{"record":"message","agent_id":"a1","text":"{\\"record\\":\\"meta\\"}"}\n'
        + b"\xff\xfe not utf-8\n"
    )
    found = read_sessions(path, "a1")
    assert found.sessions == ()
    assert found.nickname is None
    assert not SessionLineage("current").admits(found.sessions)


@given(
    st.lists(st.text(min_size=1, max_size=8), max_size=5),
    st.lists(st.text(max_size=8), max_size=5),
)
def test_a_lineage_admits_exactly_what_shares_a_session(
    added: list[str], sessions: list[str]
) -> None:
    lineage = SessionLineage("own")
    lineage.add([*added, ""])
    assert lineage.sessions == {"own", *added}
    assert lineage.admits(sessions) == any(s in {"own", *added} for s in sessions)


async def test_a_runtime_lineage_grows_with_the_agents_the_user_resumes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider(lambda _: testing.say("Done."))
    async with world.open(provider) as first:
        agent = (await first.spawn("general-purpose", "Work.")).agent_id
        await first.wait([agent], timeout=10)
        earlier = first.session_id
        assert first.lineage == {earlier}
    async with world.open(provider) as rt:
        assert rt.lineage == {rt.session_id}
        await rt.resume(agent, "More.")
        assert rt.lineage == {rt.session_id, earlier}
        await rt.wait([agent], timeout=10)
