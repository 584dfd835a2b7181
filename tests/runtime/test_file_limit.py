"""The open-file limit: every open agent holds its transcript open, so a runtime raises the
soft limit to the hard one while open (``transcripts.raise_file_limit``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from subagents import testing
from subagents.actors import Completed
from subagents.runtime import (
    ConfigError,
    ScriptedProvider,
    TranscriptError,
    TranscriptsConfig,
    load_config,
)
from subagents.runtime._file_limit import (
    _RESERVE_SLACK,
    MOST_OPEN_FILES,
    RESERVE_FROM,
    FileLimitGuard,
    grow_table,
    open_files_limit,
    reserve_descriptors,
)
from subagents.runtime._transcripts.load import load_transcript
from tests.runtime.world import World

resource = pytest.importorskip("resource", reason="no rlimits on this platform")
fcntl = pytest.importorskip("fcntl", reason="no descriptor table to grow on this platform")
NOFILE = resource.RLIMIT_NOFILE


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd" if sys.platform == "linux" else "/dev/fd"))


@pytest.fixture
def limits() -> Iterator[tuple[int, int]]:
    """The limits found, put back after the test (a test lowers the soft one)."""
    found = resource.getrlimit(NOFILE)
    yield found
    resource.setrlimit(NOFILE, found)


def lower_soft(soft: int) -> int:
    hard = resource.getrlimit(NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= soft:
        pytest.skip(f"the hard open-file limit ({hard}) leaves no room to raise to")
    resource.setrlimit(NOFILE, (soft, hard))
    return hard


def raised(hard: int) -> int:
    """The soft limit a runtime sets under ``hard``."""
    return MOST_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MOST_OPEN_FILES)


def test_the_guard_raises_the_soft_limit_to_the_hard_one_and_puts_it_back(
    limits: tuple[int, int],
) -> None:
    hard = lower_soft(200)
    with FileLimitGuard(True):
        assert open_files_limit() == (raised(hard), hard)
    assert open_files_limit() == (200, hard)


def test_a_guard_not_wanted_touches_nothing(limits: tuple[int, int]) -> None:
    hard = lower_soft(200)
    with FileLimitGuard(False):
        assert open_files_limit() == (200, hard)
    assert open_files_limit() == (200, hard)


def test_nested_guards_restore_what_the_first_found_when_the_last_closes(
    limits: tuple[int, int],
) -> None:
    hard = lower_soft(200)
    outer, inner = FileLimitGuard(True), FileLimitGuard(True)
    with outer:
        with inner:
            assert open_files_limit() == (raised(hard), hard)
        assert open_files_limit() == (raised(hard), hard)  # the outer runtime still needs it
    assert open_files_limit() == (200, hard)


def test_a_limit_the_application_set_meanwhile_stays(limits: tuple[int, int]) -> None:
    hard = lower_soft(200)
    with FileLimitGuard(True):
        resource.setrlimit(NOFILE, (300, hard))
    assert open_files_limit() == (300, hard)


def test_a_refused_raise_leaves_the_limit_and_raises_nothing(
    limits: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    hard = lower_soft(200)

    def refuse(which: int, values: tuple[int, int]) -> None:
        raise ValueError("not allowed to raise maximum limit")

    monkeypatch.setattr(resource, "setrlimit", refuse)
    with FileLimitGuard(True):
        assert open_files_limit() == (200, hard)
    assert open_files_limit() == (200, hard)


def test_a_hard_limit_in_the_millions_is_not_handed_to_the_agents_programs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = {"soft": 1_024}

    def getrlimit(which: int) -> tuple[int, int]:
        return state["soft"], 1_073_741_816  # what some container runtimes set

    def setrlimit(which: int, values: tuple[int, int]) -> None:
        state["soft"] = values[0]

    monkeypatch.setattr(resource, "getrlimit", getrlimit)
    monkeypatch.setattr(resource, "setrlimit", setrlimit)
    with FileLimitGuard(True):
        assert state["soft"] == MOST_OPEN_FILES
    assert state["soft"] == 1_024


def test_an_unlimited_hard_limit_falls_back_to_what_macos_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    infinity = resource.RLIM_INFINITY
    state = {"soft": 256}
    tried: list[int] = []

    def getrlimit(which: int) -> tuple[int, int]:
        return state["soft"], infinity

    def setrlimit(which: int, values: tuple[int, int]) -> None:
        tried.append(values[0])
        if values[0] > 10_240:  # what macOS says past kern.maxfilesperproc
            raise ValueError("current limit exceeds maximum limit")
        state["soft"] = values[0]

    monkeypatch.setattr(resource, "getrlimit", getrlimit)
    monkeypatch.setattr(resource, "setrlimit", setrlimit)
    with FileLimitGuard(True):
        assert state["soft"] == 10_240
    assert tried == [MOST_OPEN_FILES, 10_240, 256]
    assert state["soft"] == 256


def test_the_setting_is_a_flag(tmp_path: Path) -> None:
    assert TranscriptsConfig().raise_file_limit is True
    key = "SUBAGENTS_TRANSCRIPTS__RAISE_FILE_LIMIT"
    assert not load_config(
        cwd=tmp_path, home=tmp_path, env={key: "no"}
    ).transcripts.raise_file_limit
    with pytest.raises(ConfigError, match=r"transcripts\.raise_file_limit"):
        load_config(cwd=tmp_path, home=tmp_path, env={key: "sometimes"})


SPAWNED = 96


def complete(path: Path) -> bool:
    """Whether the transcript at ``path`` holds the agent's run to its end."""
    try:
        transcript = load_transcript(path)
    except TranscriptError:
        return False
    return [result.status for result in transcript.results] == ["completed"]


async def spawn_and_leave_open(
    world: World, *, at_limit: bool
) -> tuple[list[Path | None], int, int]:
    """Spawn SPAWNED agents and leave them open (idle, each holding its transcript) until
    the runtime closes; their transcripts' paths, how many of them were held in memory
    (not on disk) while open, and the files open with all of them (0 ``at_limit``,
    where listing them would need one more)."""
    world.limits["max_threads"] = SPAWNED
    provider = ScriptedProvider(lambda request: testing.say("done"))
    async with world.open(provider) as rt:
        ids = [(await rt.spawn("general-purpose", "Say done.")).agent_id for _ in range(SPAWNED)]
        await rt.wait(ids, timeout=30, mode="all")
        assert all(rt.status(agent_id) == Completed("done") for agent_id in ids)
        writers = [rt.services.records[agent_id].ledger.writer for agent_id in ids]
        in_memory = sum(writer is not None and writer.in_memory for writer in writers)
        open_now = 0 if at_limit else open_descriptors()
        return [rt.transcript_path(agent_id) for agent_id in ids], in_memory, open_now


async def test_more_open_agents_than_the_soft_limit_all_keep_their_transcripts(
    tmp_path: Path, limits: tuple[int, int]
) -> None:
    soft = open_descriptors() + SPAWNED // 2
    hard = lower_soft(soft)
    if hard != resource.RLIM_INFINITY and hard < soft + 2 * SPAWNED:
        pytest.skip(f"the hard open-file limit ({hard}) is too low for this test")
    paths, in_memory, most = await spawn_and_leave_open(World(tmp_path), at_limit=False)
    assert most > soft  # more files were open than the limit found allowed
    assert in_memory == 0
    assert all(path is not None and complete(path) for path in paths)
    assert open_files_limit() == (soft, hard)  # put back at the close


async def test_without_the_raise_the_agents_past_the_limit_say_what_to_do(
    tmp_path: Path, limits: tuple[int, int]
) -> None:
    soft = open_descriptors() + SPAWNED // 2
    lower_soft(soft)
    world = World(tmp_path)
    world.extra["transcripts"] = TranscriptsConfig(raise_file_limit=False)
    paths, in_memory, _ = await spawn_and_leave_open(world, at_limit=True)
    # Every agent ran to its end; the ones past the limit kept their transcripts in memory
    # (a crash then would have lost them), written out at the close once files were free.
    assert 0 < in_memory < SPAWNED
    assert all(path is not None and complete(path) for path in paths)
    lines = [
        json.loads(line)
        for log in (world.state / "logs").iterdir()
        for line in log.read_text().splitlines()
    ]
    problems = [line["error"] for line in lines if line["event"] == "transcript problem"]
    assert problems
    assert all("EMFILE" in problem and "ulimit -n" in problem for problem in problems)


# -- the descriptor table, grown at start --------------------------------------------

linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="the table's size is read from /proc/self/status"
)


def table_size() -> int:
    """The slots of this process's descriptor table (Linux's ``FDSize``)."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("FDSize:")))


def lowest_free() -> int:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    return fd


async def test_few_agents_reserve_nothing() -> None:
    assert await reserve_descriptors(RESERVE_FROM - 1) is None


def test_the_reserve_leaves_no_descriptor_open_and_replaces_none(
    tmp_path: Path, limits: tuple[int, int]
) -> None:
    count = RESERVE_FROM
    before = open_descriptors()
    with open(tmp_path / "kept", "wb") as kept:
        # A descriptor of another file already open at the number the reserve aims for
        # (its probe takes the lowest free one): F_DUPFD moves above it, where dup2 would
        # have put /dev/null in its place.
        aimed = lowest_free() + count + _RESERVE_SLACK
        held = fcntl.fcntl(kept.fileno(), fcntl.F_DUPFD_CLOEXEC, aimed)
        try:
            assert held == aimed
            identity = os.fstat(held)
            reached = grow_table(count)
            assert reached is not None
            assert reached > aimed
            after = os.fstat(held)
            assert (after.st_dev, after.st_ino) == (identity.st_dev, identity.st_ino)
        finally:
            os.close(held)
    assert open_descriptors() == before


def test_the_reserve_stays_under_the_soft_limit(limits: tuple[int, int]) -> None:
    soft = open_descriptors() + 20
    lower_soft(soft)
    reached = grow_table(10_000)
    assert reached is not None
    assert reached < soft


@linux_only
def test_the_table_is_grown_at_once_in_a_process_with_threads() -> None:
    # A fresh process: its table has its first size, and a thread shares it (the case
    # where each later growth would wait for an RCU grace period).
    script = """
import threading, sys
from subagents.runtime._file_limit import FileLimitGuard, grow_table
stop = threading.Event()
thread = threading.Thread(target=stop.wait, args=(30,))
thread.start()
def size():
    status = open("/proc/self/status").read().splitlines()
    return int(next(line.split()[1] for line in status if line.startswith("FDSize:")))
with FileLimitGuard(True):
    before = size()
    reached = grow_table(5_000)
    print(before, reached, size())
stop.set()
thread.join()
"""
    hard = resource.getrlimit(NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 6_000:
        pytest.skip(f"the hard open-file limit ({hard}) is too low for this test")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    before, reached, after = map(int, done.stdout.split())
    assert before < 5_000
    assert reached >= 5_000
    assert after > reached


@linux_only
async def test_a_runtime_for_many_agents_grows_the_table_when_it_opens(
    tmp_path: Path, limits: tuple[int, int]
) -> None:
    # Room for more agents than any other test opens: the table cannot have this size yet.
    hard = resource.getrlimit(NOFILE)[1]
    agents = min(20_000, raised(hard) - 4 * RESERVE_FROM)
    if agents < 4_096:
        pytest.skip(f"the hard open-file limit ({hard}) is too low for this test")
    assert table_size() < agents
    world = World(tmp_path)
    world.limits["max_threads"] = agents
    async with world.open(ScriptedProvider(lambda request: testing.say("done"))):
        assert table_size() > agents
