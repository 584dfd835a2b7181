"""Reliability, hostile agent folders: files that block, never end, grow, or widen tools.

A repository's ``.claude/agents`` is written by strangers. Git can commit a
symbolic link to ``/dev/zero``, and anyone with a shell can leave a FIFO named
``x.md``; ``open`` on a FIFO waits for a writer forever and ``read`` on
``/dev/zero`` never ends. Every definition is read by the bounded, non-blocking
reader ``subagents/_small_file.py``: only regular files, at most
``MAX_FILE_BYTES``, even when ``stat`` says 0 (``/proc`` files) or the file
grows while it is read (issue 15, item 10). A regression here is a hang, so
each check runs under a deadline: the command in a subprocess with a timeout,
the loader in a helper thread joined with a timeout (the pattern of
``tests/tools/builtin/test_threads.py``).

``tools:`` with no value is Claude Code's "no tools", not "every tool"
(issue 15, item 13): reading it the other way would hand a repository's agent
Write, Edit and Bash that its author took away.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.actors import Completed
from subagents.agents import FileReport, load_paths
from subagents.runtime import ModelRequest, Reply, ScriptedProvider
from tests.deadlines import HANG_SECONDS, within_deadline
from tests.runtime import world as runtime_world

GOOD = "---\nname: good\ndescription: A good agent.\n---\nYou are good.\n"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


def _hostile_folder(folder: Path) -> None:
    """``good.md``, a FIFO ``fifo.md`` and ``zero.md`` -> ``/dev/zero``, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.md").write_text(GOOD)
    os.mkfifo(folder / "fifo.md")
    (folder / "zero.md").symlink_to("/dev/zero")


def _subagents(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "subagents.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,  # a hang fails the test instead of stalling the suite
        check=False,
    )


@needs_fifo
@needs_dev_zero
@pytest.mark.parametrize("command", [("agents", "list"), ("agents", "validate")])
def test_a_fifo_and_a_link_to_dev_zero_in_the_project_agents_are_reported_not_read(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    _hostile_folder(project / ".claude" / "agents")
    done = _subagents(project, home, *command)
    assert "Traceback" not in done.stderr
    assert "good" in done.stdout
    if command[-1] == "validate":
        assert "fifo.md: error: cannot read the file: it is a FIFO (named pipe)" in done.stdout
        assert "zero.md: error: cannot read the file: it is a character device" in done.stdout


@needs_fifo
@needs_dev_zero
def test_a_fifo_or_device_named_on_the_command_line_is_said_to_be_one(tmp_path: Path) -> None:
    """Named explicitly, they were "no such file or directory": they exist, and the
    report says what they are."""
    folder = tmp_path / "agents"
    _hostile_folder(folder)
    done = _subagents(
        tmp_path, tmp_path, "agents", "validate", str(folder / "fifo.md"), str(folder / "zero.md")
    )
    assert done.returncode == 1
    assert f"{folder / 'fifo.md'}: error: cannot read the file: it is a FIFO" in done.stdout
    assert f"{folder / 'zero.md'}: error: cannot read the file: it is a character dev" in (
        done.stdout
    )
    assert "no such file" not in done.stdout


@needs_fifo
def test_a_plugin_manifest_listing_a_fifo_reports_it_without_blocking(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        '{"name": "p", "agents": ["./extra/pipe.md"]}'
    )
    (plugin / "extra").mkdir()
    os.mkfifo(plugin / "extra" / "pipe.md")
    reports: tuple[FileReport, ...] = within_deadline(lambda: load_paths([plugin]))
    (pipe,) = [r for r in reports if r.path is not None and r.path.name == "pipe.md"]
    assert [d.message for d in pipe.errors] == [
        "cannot read the file: it is a FIFO (named pipe), not a regular file"
    ]


@pytest.mark.parametrize("proc_file", ["/proc/self/maps", "/proc/self/status"])
def test_a_file_whose_size_is_zero_to_stat_is_still_read_up_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proc_file: str
) -> None:
    """``/proc`` files say 0 bytes to ``stat`` and hold more: the cap is counted on
    the bytes read, so a file that grows past it is refused, not read on."""
    if not Path(proc_file).exists():
        pytest.skip(f"no {proc_file}")
    monkeypatch.setattr("subagents.agents._scan.MAX_FILE_BYTES", 64)
    link = tmp_path / "agents" / "grows.md"
    link.parent.mkdir()
    link.symlink_to(proc_file)
    assert link.stat().st_size == 0
    reports: tuple[FileReport, ...] = within_deadline(lambda: load_paths([link]))
    (report,) = reports
    assert report.definitions == ()
    assert [d.message for d in report.errors] == [
        "cannot read the file: it holds more than the 64 bytes read"
    ]


def _records_tools(requests: list[ModelRequest]) -> Callable[[ModelRequest], Reply]:
    def answer(request: ModelRequest) -> Reply:
        requests.append(request)
        return testing.say("done")

    return answer


async def _run_agent_with_empty_tools(root: Path) -> list[ModelRequest]:
    world = runtime_world.World(root)
    world.agent("bare", tools="")  # writes the line "tools: " (a null value)
    requests: list[ModelRequest] = []
    async with world.open(ScriptedProvider(_records_tools(requests))) as rt:
        assert rt.catalog.get("bare").tools == ()
        agent = (await rt.spawn("bare", "Go.")).agent_id
        assert (await rt.wait([agent], timeout=60)).statuses[agent] == Completed("done")
    return [r for r in requests if r.agent_type == "bare"]


def test_tools_with_no_value_gives_the_agent_no_tools(tmp_path: Path) -> None:
    """Security: ``tools:`` with nothing after it offered the model every tool
    (Write, Edit, Bash...); Claude Code gives such an agent none."""
    requests = trio.run(
        _run_agent_with_empty_tools, tmp_path, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    assert requests
    assert all(r.tool_names == [] for r in requests)


def test_a_memory_file_that_is_a_fifo_or_endless_does_not_block_the_agents_start(
    tmp_path: Path,
) -> None:
    """``.claude/agent-memory/<agent>/MEMORY.md`` is repository content for a project agent."""
    from subagents.agents import AgentDefinition, MemoryScope, memory_file, read_memory
    from subagents.agents._prompts import MEMORY_BYTES

    definition = AgentDefinition("keeper", "keeps notes", "Notes.", memory=MemoryScope.PROJECT)
    path = memory_file(definition, home=tmp_path / "home", project_root=tmp_path)
    assert path is not None
    path.parent.mkdir(parents=True)
    results: list[str | None] = []

    def read() -> None:
        results.append(read_memory(definition, home=tmp_path / "home", project_root=tmp_path))

    os.mkfifo(path)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "reading a FIFO memory file blocked"
    assert results == [None]
    path.unlink()
    path.symlink_to("/dev/zero")
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "reading /dev/zero as memory did not end"
    assert results == [None, None]  # a character device is not a memory file
    path.unlink()
    path.write_text("x" * (5 * 1024 * 1024))  # one 5 MB line: a line count alone bounds nothing
    read()
    assert results[-1] is not None
    assert len(results[-1]) <= MEMORY_BYTES


@pytest.mark.parametrize("link", ["file", "folder", "memory-root"])
async def test_a_project_memory_that_links_out_of_the_repository_never_reaches_the_model(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, link: str
) -> None:
    """A repository's ``MEMORY.md`` (or a folder above it) linked to ``/proc/self/environ``
    or ``~/.ssh`` would put the runtime's secrets in the system prompt, folder untrusted.
    Below the project root no link is followed; the user's own memory may be one."""
    from subagents.runtime import open_runtime

    secret = tmp_path / "outside" / "agent-memory" / "keeper" / "MEMORY.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("SECRET-CANARY sk-ant-do-not-send\n")
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    for name, scope in (("keeper", "project"), ("mine", "user")):
        (agents / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: Keeps notes.\nmemory: {scope}\n---\nNotes.\n"
        )
    memory = repo / ".claude" / "agent-memory"
    if link == "file":
        (memory / "keeper").mkdir(parents=True)
        (memory / "keeper" / "MEMORY.md").symlink_to(secret)
    elif link == "folder":
        memory.mkdir()
        (memory / "keeper").symlink_to(secret.parent, target_is_directory=True)
    else:
        memory.symlink_to(secret.parents[1], target_is_directory=True)
    own = home / ".claude" / "agent-memory" / "mine"
    own.mkdir(parents=True)
    (own / "MEMORY.md").symlink_to(tmp_path / "notes.md")
    (tmp_path / "notes.md").write_text("the user's own notes\n")
    systems: list[str] = []

    def model(request: ModelRequest) -> Reply:
        systems.append(request.system)
        return testing.say("ok")

    provider = ScriptedProvider(policies={"*": model})
    async with open_runtime(cwd=repo, home=home, env={}, provider=provider) as rt:
        for name in ("keeper", "mine"):
            agent = await rt.spawn(name, "Go.")
            await rt.wait([agent.agent_id], timeout=10)
    prompts = "\n".join(systems)
    assert "SECRET-CANARY" not in prompts
    assert "the user's own notes" in prompts
    # The same memory as a regular file in the repository is read.
    if link == "file":
        (memory / "keeper" / "MEMORY.md").unlink()
        (memory / "keeper" / "MEMORY.md").write_text("the repository's notes\n")
        async with open_runtime(cwd=repo, home=home, env={}, provider=provider) as rt:
            agent = await rt.spawn("keeper", "Go.")
            await rt.wait([agent.agent_id], timeout=10)
        assert "the repository's notes" in systems[-1]
