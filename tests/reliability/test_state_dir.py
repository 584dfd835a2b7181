"""A state directory that is not only ours: retention, links, resumed and live sessions.

Retention used to remove every folder under ``<state_dir>/sessions/`` older
than ``retention_days``: a user's folder under ``--state-dir .``, the session
of the agent being resumed, and, through a link, whatever it pointed at. Two
resumes of one agent, in two processes, both appended to its transcript. Here
each of those is tried, with real second processes holding the lock (a crash
of the holder included).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    AgentInUse,
    MetaRecord,
    ModelRequest,
    Reply,
    ScriptedProvider,
    TranscriptWriter,
    clean_old_transcripts,
    find_transcript,
    load_transcript,
    new_session_id,
    transcript_path,
)
from tests.runtime.world import World

DAY = 86_400.0
COMMAND = [sys.executable, "-m", "subagents.cli"]
TIMEOUT = 120

#: A second process that resumes the agent's transcript (as a runtime's writer does) and waits.
HOLD_WRITER = """
import sys
from subagents.runtime import TranscriptWriter, load_transcript
writer = TranscriptWriter.resume(load_transcript(sys.argv[1]))
print("holding", flush=True)
sys.stdin.read()
"""
#: A second process that only holds the transcript's lock (a live agent, idle for long).
HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("holding", flush=True)
sys.stdin.read()
"""


def _age(folder: Path, when: float) -> None:
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            os.utime(os.path.join(root, name), (when, when), follow_symlinks=False)
    os.utime(folder, (when, when))


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}


@contextmanager
def holding(script: str, path: Path) -> Iterator[subprocess.Popen[str]]:
    """A second process holding ``path``'s lock until the block ends (then killed, a crash)."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_environment(),
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "holding"
        yield process
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=TIMEOUT)


def _our_session(state: Path, session_id: str, agent_id: str = "a1") -> Path:
    """A session as a runtime writes it: one transcript with its meta record."""
    path = transcript_path(state, session_id, agent_id)
    meta = MetaRecord(
        agent_id=agent_id, agent_type="Explore", nickname="Ada", session_id=session_id
    )
    with TranscriptWriter(path, meta):
        pass
    return path.parents[1]


def _places(world: World) -> list[str]:
    return ["--cwd", str(world.project), "--state-dir", str(world.state)]


def _second_answer(request: ModelRequest) -> Reply:
    return testing.say("second answer")


async def _finished_agent(world: World) -> str:
    async with world.open(ScriptedProvider([testing.say("first answer")])) as rt:
        agent = (await rt.spawn("general-purpose", "First")).agent_id
        assert isinstance((await rt.wait([agent], timeout=10)).statuses[agent], Completed)
    return agent


# -- retention touches only what it wrote --------------------------------------------------


async def test_retention_leaves_every_folder_it_did_not_write(tmp_path: Path) -> None:
    world = World(tmp_path)
    sessions = world.state / "sessions"
    conference = sessions / "conference-2023"  # a user's folder under --state-dir .
    (conference / "subagents").mkdir(parents=True)
    (conference / "talk.pdf").write_bytes(b"%PDF")
    (conference / "subagents" / "agent-x.jsonl").write_text("{}\n")
    lookalike = sessions / "20240101-000000-abcdef"  # named like a session, not ours inside
    (lookalike / "subagents").mkdir(parents=True)
    (lookalike / "subagents" / "agent-a1.jsonl").write_text('{"record":"meta"}\n')
    moved = _our_session(world.state, "20240101-000000-0000ff")  # a meta of another session
    os.rename(moved, sessions / "20240102-000000-0000ff")
    mixed = _our_session(world.state, "20240103-000000-0000ee")
    (mixed / "notes.txt").write_text("mine")
    ours = _our_session(world.state, "20240104-000000-0000dd")
    for folder in sessions.iterdir():
        _age(folder, 0.0)

    async with world.open(ScriptedProvider([testing.say("done")])) as rt:
        await rt.spawn("general-purpose", "Hello")

    assert not ours.exists()
    assert (conference / "talk.pdf").read_bytes() == b"%PDF"
    assert (conference / "subagents" / "agent-x.jsonl").exists()
    assert (lookalike / "subagents" / "agent-a1.jsonl").exists()
    assert (sessions / "20240102-000000-0000ff" / "subagents" / "agent-a1.jsonl").exists()
    assert (mixed / "notes.txt").read_text() == "mine"
    assert not (mixed / "subagents").exists()  # our transcript went, the user's file stayed
    assert (sessions / rt.session_id / "subagents").is_dir()


def test_retention_never_follows_a_link_out_of_the_state_dir(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    elsewhere = _our_session(outside, "20240101-000000-000001")
    _age(elsewhere, 0.0)
    state = tmp_path / "state"
    state.mkdir()
    (state / "sessions").symlink_to(outside / "sessions")  # the whole sessions folder
    assert clean_old_transcripts(state, 1) == []
    (state / "sessions").unlink()
    inner = state / "sessions" / "20240101-000000-000002"
    inner.mkdir(parents=True)
    (inner / "subagents").symlink_to(elsewhere / "subagents")  # a session's own folder
    bare = state / "sessions" / "20240101-000000-000003" / "subagents"
    bare.mkdir(parents=True)
    (bare / "agent-a1.jsonl").symlink_to(elsewhere / "subagents" / "agent-a1.jsonl")
    _age(state / "sessions", 0.0)

    assert clean_old_transcripts(state, 1) == []
    assert load_transcript(elsewhere / "subagents" / "agent-a1.jsonl").problems == ()
    assert (inner / "subagents").is_symlink()
    assert (bare / "agent-a1.jsonl").is_symlink()
    # The configured state directory itself may be a link: what is under it is ours.
    (tmp_path / "state-link").symlink_to(outside)
    [pruned] = clean_old_transcripts(tmp_path / "state-link", 1)
    assert pruned.folder_removed
    assert not elsewhere.exists()


def test_a_session_locked_by_a_live_process_is_kept_until_it_ends(tmp_path: Path) -> None:
    session = _our_session(tmp_path, new_session_id())
    transcript = session / "subagents" / "agent-a1.jsonl"
    _age(session, 0.0)

    with holding(HOLD_LOCK, transcript):
        [kept] = clean_old_transcripts(tmp_path, 1)
        assert kept.skipped is not None
        assert "live" in kept.skipped
        assert kept.transcripts == ()
        assert transcript.exists()
    [removed] = clean_old_transcripts(tmp_path, 1)  # the holder crashed: its lock went with it
    assert removed.skipped is None
    assert removed.folder_removed
    assert not session.exists()


def test_prune_dry_run_lists_what_would_go_and_removes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    old = _our_session(state, "20240101-000000-0000aa")
    (old / "keep\x1b]52;c;bad\x07.txt").write_text("a user's file")
    fresh = _our_session(state, new_session_id())
    (state / "sessions" / "conference-2023").mkdir()
    _age(old, 0.0)
    _age(state / "sessions" / "conference-2023", 0.0)

    def prune(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND, "transcripts", "prune", "--state-dir", str(state), *options],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=_environment(),
            check=False,
        )

    dry = prune("--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Would remove 1 transcript in 1 session" in dry.stdout
    assert "20240101-000000-0000aa" in dry.stdout
    assert "\x1b" not in dry.stdout  # a name shown, not obeyed
    assert "\u241b]52" in dry.stdout  # shown as the sign for ESC, like every terminal output
    assert "conference-2023" not in dry.stdout
    assert (old / "subagents" / "agent-a1.jsonl").exists()
    listed = json.loads(prune("--dry-run", "--json").stdout)
    assert [s["session_id"] for s in listed["sessions"]] == ["20240101-000000-0000aa"]

    done = prune("--older-than", "7")
    assert done.returncode == 0, done.stderr
    assert "Removed 1 transcript in 1 session" in done.stdout
    assert not (old / "subagents").exists()
    assert (old / "keep\x1b]52;c;bad\x07.txt").exists()
    assert fresh.exists()
    assert (state / "sessions" / "conference-2023").is_dir()


# -- resuming: the session survives, and only one runtime at a time ---------------------------


def test_resuming_a_40_day_old_agent_keeps_its_session(tmp_path: Path) -> None:
    world = World(tmp_path)
    agent = trio.run(_finished_agent, world)
    session = find_transcript(world.state, agent).parents[1]
    _age(session, os.stat(session).st_mtime - 40 * DAY)

    done = subprocess.run(
        [*COMMAND, "resume", agent, "Once more", *_places(world), "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=_environment(),
        check=False,
    )

    assert done.returncode == 0, done.stderr
    transcript = load_transcript(find_transcript(world.state, agent))
    assert len(transcript.metas) == 2
    assert transcript.runs == 2
    assert transcript.problems == ()


def test_a_second_resume_in_another_process_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    agent = trio.run(_finished_agent, world)
    path = find_transcript(world.state, agent)
    nickname = load_transcript(path).meta.nickname

    async def resume(prompt: str) -> None:
        async with world.open(ScriptedProvider(_second_answer)) as rt:
            await rt.resume(agent, prompt)
            await rt.wait([agent], timeout=10)

    with holding(HOLD_WRITER, path) as holder:
        with pytest.raises(AgentInUse) as refused:
            trio.run(resume, "Again")
        message = str(refused.value)
        assert f"agent {nickname} ({agent}) is running in process {holder.pid}" in message
        assert "wait for it or close it" in message
        assert refused.value.pid == holder.pid
        cli = subprocess.run(
            [*COMMAND, "resume", agent, "Again", *_places(world)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=_environment(),
            check=False,
        )
        assert cli.returncode == 1
        assert f"is running in process {holder.pid}" in cli.stderr
        assert "Traceback" not in cli.stderr
        assert len(cli.stderr.strip().splitlines()) == 1, cli.stderr
    # The holder was killed (a crash): the lock went with it, and one resume runs.
    trio.run(resume, "Now")
    transcript = load_transcript(path)
    assert transcript.problems == ()
    assert [m.message.text for m in transcript.messages][-2:] == ["Now", "second answer"]
