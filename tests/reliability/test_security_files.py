"""Reliability, security of what an agent can touch: the workspace, its processes, its tools.

A scripted model inside a real runtime (``open_runtime`` over a temporary
project, see ``tests/runtime/world.py``) attacks through tool calls;
the outcome is checked on disk, in the tool results and in the process table.

- File tools stay inside the workspace: ``..``, absolute paths, symlinks out
  (there before the run, made by the agent during the run, swapped in
  between turns or between the check and the use), symlink loops, FIFOs and
  devices are refused, nothing hangs or streams forever, and generated escape
  paths (Hypothesis) never read, change or create anything outside; a canary
  file outside is never shown and never changed.
- ``Bash`` cannot outlive its agent: background, ``nohup``'d, double-forked
  and ``setsid``'d processes are gone when the run ends or the agent is closed.
- A tool the filter removed is neither offered nor run, even when the model
  names it (deny list, untrusted source, the grace turn, the depth limit).

The lower levels are proven in ``tests/tools`` (``test_workspace.py``,
``builtin/test_files.py``, ``builtin/test_bash.py``, ``test_filter.py``)
and ``tests/runtime/test_runtime_tools.py`` (a leaf cannot spawn).

File tools work in worker threads and Bash runs real processes, so the tests
using them run on the real clock (an autojump clock would jump over a thread's work to the
next deadline). Nothing in them sleeps: they wait on the runtime, on pidfds
and on FIFOs, each bounded by a generous ``fail_after``.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents import testing
from subagents.actors import Completed, Running, Shutdown
from subagents.runtime import ModelRequest, Reply, ScriptedProvider, ToolResultBlock
from subagents.tools import ApprovalDecision, ApprovalRequest, Workspace
from tests.runtime.world import LEAD_TOOLS, World, tool_results

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="uses /proc, pidfds and FIFOs"
)

CANARY = "CANARY-5e1f0c: the outside world, never to be read"
ALL_TOOLS = "Read, Write, Edit, Glob, Grep, LS, Bash"
#: A bound on waiting for anything here; a hang fails the test instead of the suite.
BOUND = 20.0

Call = tuple[str, dict[str, Any]]


async def approve_all(request: ApprovalRequest) -> ApprovalDecision:
    """Approve every Write, Edit and Bash call: confinement is what is tested, not approval."""
    return ApprovalDecision.approve("security tests")


class Site:
    """A project (the workspace) next to an ``outside`` folder holding a canary file.

    Inside the project: ``link`` (a symlink to ``outside``), ``canary-link`` (a
    symlink to the canary), ``loop`` (a symlink to itself), ``fifo`` (a FIFO),
    ``zero`` and ``random`` (symlinks to ``/dev/zero`` and ``/dev/urandom``),
    ``inside.txt`` and ``work/a.txt`` (regular files).
    """

    def __init__(self, root: Path) -> None:
        self.world = World(root)
        self.root = root
        self.outside = root / "outside"
        self.outside.mkdir()
        self.canary = self.outside / "canary.txt"
        self.canary.write_text(CANARY + "\n")
        (self.outside / "a.txt").write_text(CANARY + " (a)\n")
        project = self.world.project
        (project / "link").symlink_to(self.outside)
        (project / "canary-link").symlink_to(self.canary)
        (project / "loop").symlink_to(project / "loop")
        os.mkfifo(project / "fifo")
        (project / "zero").symlink_to("/dev/zero")
        (project / "random").symlink_to("/dev/urandom")
        (project / "inside.txt").write_text("CANARY-inside: a file the agent may read\n")
        (project / "work").mkdir()
        (project / "work" / "a.txt").write_text("work file\n")
        self.world.agent("attacker", tools=ALL_TOOLS, maxTurns=500)
        self.before = self.outer_files()

    def outer_files(self) -> dict[str, tuple[int, bytes | str]]:
        """Every entry outside the project and the state folder: its type and content."""
        found: dict[str, tuple[int, bytes | str]] = {}
        keep_out = {self.world.project, self.world.state}
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if Path(folder, d) not in keep_out]
            for name in [*dirs, *files]:
                path = Path(folder, name)
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    found[str(path)] = (mode, os.readlink(path))
                elif stat.S_ISREG(mode):
                    found[str(path)] = (mode, path.read_bytes())
                else:
                    found[str(path)] = (mode, b"")
        return found

    def assert_outside_untouched(self, results: Sequence[ToolResultBlock]) -> None:
        """Nothing outside was created, changed or removed, and the canary was never shown."""
        assert self.outer_files() == self.before
        for result in results:
            assert "CANARY-5e1f0c" not in result.content, result.content


def scripted(
    calls: Sequence[Call], before_turn: Callable[[int], None] | None = None
) -> Callable[[ModelRequest], Reply]:
    """A model that makes ``calls``, one a turn, then says ``done``."""

    def policy(request: ModelRequest) -> Reply:
        if request.turn < len(calls):
            if before_turn is not None:
                before_turn(request.turn)
            name, arguments = calls[request.turn]
            return testing.call(name, **arguments)
        return testing.say("done")

    return policy


async def attack(
    world: World,
    calls: Sequence[Call],
    *,
    agent: str = "attacker",
    before_turn: Callable[[int], None] | None = None,
) -> list[ToolResultBlock]:
    """Run an agent making ``calls`` to its end; its tool results, one per call."""
    provider = ScriptedProvider(policies={agent: scripted(calls, before_turn)})
    with trio.fail_after(BOUND):
        async with world.open(provider, approval_callback=approve_all) as rt:
            handle = await rt.spawn(agent, "Get out of the workspace.")
            waited = await rt.wait([handle.agent_id], timeout=BOUND)
            assert waited.statuses[handle.agent_id] == Completed("done")
            results = tool_results(rt.conversation(handle.agent_id).messages)
    assert len(results) == len(calls)
    return results


def refused(result: ToolResultBlock, *words: str) -> bool:
    return result.is_error and all(word in result.content for word in words)


# -- the workspace ------------------------------------------------------------------------


async def test_dotdot_absolute_and_symlinked_paths_are_refused_by_every_file_tool(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path)
    out = str(site.outside)
    escapes = ["../outside/canary.txt", f"{out}/canary.txt", "link/canary.txt", "canary-link"]
    escapes += ["work/../../outside/canary.txt", "./link/../link/a.txt", f"{tmp_path}/outside"]
    calls: list[Call] = []
    for path in escapes:
        calls += [
            ("Read", {"file_path": path}),
            ("Write", {"file_path": path, "content": "PWNED"}),
            ("Write", {"file_path": f"{path}/new.txt", "content": "PWNED"}),
            ("Edit", {"file_path": path, "old_string": "CANARY", "new_string": "PWNED"}),
            ("Glob", {"pattern": "*", "path": path}),
            ("Grep", {"pattern": "CANARY", "path": path}),
            ("LS", {"path": path}),
        ]
    patterns: list[Call] = [
        ("Glob", {"pattern": "../outside/*"}),
        ("Glob", {"pattern": "**/../../outside/*"}),
        ("Glob", {"pattern": f"{out}/*"}),
        ("Grep", {"pattern": "CANARY", "glob": "../outside/*"}),
    ]
    results = await attack(site.world, calls + patterns)
    for (name, arguments), result in zip(calls, results, strict=False):
        assert refused(result, "outside the workspace"), (name, arguments, result)
    for result in results[len(calls) :]:
        assert refused(result, "Glob patterns"), result
    site.assert_outside_untouched(results)


async def test_glob_grep_and_ls_of_the_workspace_do_not_follow_symlinks_out(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path)
    calls: list[Call] = [
        ("Glob", {"pattern": "**/*"}),
        ("Glob", {"pattern": "**/canary*"}),
        ("Grep", {"pattern": "CANARY", "output_mode": "content"}),
        ("Grep", {"pattern": "CANARY", "output_mode": "files_with_matches"}),
        ("Grep", {"pattern": "CANARY", "glob": "**/*.txt", "output_mode": "count"}),
        ("LS", {}),
    ]
    results = await attack(site.world, calls)
    assert not any(r.is_error for r in results), results
    everything, canaries, content, files, count, listing = (r.content for r in results)
    assert "inside.txt" in everything  # the tools do work inside
    assert "work/a.txt" in everything
    assert "canary" not in everything
    assert "a.txt" not in everything.replace("work/a.txt", "")
    assert "canary" not in canaries
    assert "CANARY-inside" in content
    assert "inside.txt" in files
    assert "canary" not in files
    assert "a.txt" not in files
    assert "inside.txt" in count
    assert "link" in listing  # the link itself is listed, not what it points at
    site.assert_outside_untouched(results)


async def test_a_directory_swapped_for_a_symlink_between_turns_is_not_used(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path)
    work = site.world.project / "work"

    def swap(turn: int) -> None:
        if turn == 2:  # after the model saw ``work`` was a fine place to write
            (work / "a.txt").unlink()
            (work / "b.txt").unlink()
            work.rmdir()
            work.symlink_to(site.outside)

    calls: list[Call] = [
        ("LS", {"path": "work"}),
        ("Write", {"file_path": "work/b.txt", "content": "fine"}),
        ("Write", {"file_path": "work/b.txt", "content": "PWNED"}),
        ("Write", {"file_path": "work/a.txt", "content": "PWNED"}),
        ("Edit", {"file_path": "work/a.txt", "old_string": "CANARY", "new_string": "PWNED"}),
        ("Read", {"file_path": "work/a.txt"}),
        ("LS", {"path": "work"}),
    ]
    results = await attack(site.world, calls, before_turn=swap)
    assert not results[0].is_error
    assert not results[1].is_error
    for result in results[2:]:
        assert refused(result, "outside the workspace"), result
    site.assert_outside_untouched(results)


async def test_a_symlink_swapped_in_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race lost on purpose: ``work`` becomes a symlink out right after each path check."""
    site = Site(tmp_path)
    work = site.world.project / "work"
    resolve = Workspace.resolve

    def resolve_then_swap(self: Workspace, path: str) -> Any:
        resolved = resolve(self, path)
        if path.startswith("work/") and not work.is_symlink():
            for child in work.iterdir():
                child.unlink()
            work.rmdir()
            work.symlink_to(site.outside)
        return resolved

    def restore(turn: int) -> None:  # ``work`` is a real folder again before each call
        if work.is_symlink():
            work.unlink()
            work.mkdir()
            (work / "a.txt").write_text("work file\n")

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    calls: list[Call] = [
        ("Read", {"file_path": "work/a.txt"}),
        ("Write", {"file_path": "work/a.txt", "content": "PWNED"}),
        ("Write", {"file_path": "work/new.txt", "content": "PWNED"}),
        ("Edit", {"file_path": "work/a.txt", "old_string": "CANARY", "new_string": "PWNED"}),
        ("Grep", {"pattern": "CANARY", "path": "work/a.txt"}),
    ]
    results = await attack(site.world, calls, before_turn=restore)
    for result in results:
        assert refused(result, "changed while it was being opened"), result
    site.assert_outside_untouched(results)


async def test_symlinks_the_agent_makes_with_bash_do_not_let_file_tools_out(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path)
    calls: list[Call] = [
        ("Bash", {"command": "ln -s ../outside escape && ln -s /dev/urandom noise && echo made"}),
        ("Read", {"file_path": "escape/canary.txt"}),
        ("Write", {"file_path": "escape/new.txt", "content": "PWNED"}),
        ("Edit", {"file_path": "escape/a.txt", "old_string": "CANARY", "new_string": "PWNED"}),
        ("Grep", {"pattern": "CANARY", "path": "escape"}),
        ("Glob", {"pattern": "escape/*"}),
        ("Read", {"file_path": "noise"}),
    ]
    results = await attack(site.world, calls)
    assert results[0].content == "made"
    for result in results[1:5]:
        assert refused(result, "outside the workspace"), result
    assert results[5].content == "No files found."  # the link is not walked into
    assert refused(results[6], "outside the workspace")
    site.assert_outside_untouched(results)


async def test_fifos_devices_and_symlink_loops_neither_hang_nor_stream_forever(
    tmp_path: Path,
) -> None:
    site = Site(tmp_path)
    calls: list[Call] = [
        ("Read", {"file_path": "fifo"}),
        ("Edit", {"file_path": "fifo", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": "fifo", "content": "x"}),
        ("Grep", {"pattern": "anything", "path": "fifo"}),
        ("Grep", {"pattern": "CANARY-inside"}),  # walks past the FIFO and the links
        ("Read", {"file_path": "zero"}),
        ("Read", {"file_path": "random"}),
        ("Read", {"file_path": "/dev/zero"}),
        ("Grep", {"pattern": "x", "path": "zero"}),
        ("Read", {"file_path": "loop"}),
        ("Write", {"file_path": "loop/x.txt", "content": "x"}),
        ("LS", {"path": "loop"}),
    ]
    start = trio.current_time()
    results = await attack(site.world, calls)
    assert trio.current_time() - start < BOUND
    for result in results[:4]:
        assert refused(result, "FIFO"), result
    assert not results[4].is_error
    assert "inside.txt" in results[4].content
    for result in results[5:9]:
        assert refused(result, "outside the workspace"), result
    for result in results[9:]:
        assert result.is_error, result
    assert stat.S_ISFIFO((site.world.project / "fifo").lstat().st_mode)
    assert (site.world.project / "loop").is_symlink()
    site.assert_outside_untouched(results)


# Path pieces an attacker would try; OUTSIDE, ROOT and HOME are replaced by real paths.
_PIECES = [
    "..",
    ".",
    "",
    "link",
    "canary-link",
    "loop",
    "fifo",
    "zero",
    "work",
    "outside",
    "canary.txt",
    "a.txt",
    "project",
    "...",
    ".. ",
    "..\\..",
    "%2e%2e",
    "..\u2215..",
    "\u202e..",
    "\uff0e\uff0e",
    "\uff4f\uff55\uff54\uff53\uff49\uff44\uff45",  # "outside" in fullwidth letters
    "caf\u00e9",
    "..\x00",
    "\x00",
    "~",
]
_PREFIXES = ["", "", "/", "OUTSIDE/", "ROOT/", "~/", "HOME/", "/proc/self/cwd/", "/dev/", "./"]
_TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "LS"]


def _arguments(tool: str, path: str) -> dict[str, Any]:
    if tool == "Read":
        return {"file_path": path}
    if tool == "Write":
        return {"file_path": path, "content": "PWNED"}
    if tool == "Edit":
        return {"file_path": path, "old_string": "CANARY", "new_string": "PWNED"}
    if tool == "Glob":
        return {"pattern": "**/*", "path": path}
    if tool == "Grep":
        return {"pattern": "CANARY", "path": path}
    return {"path": path}


escape_attempts = st.lists(
    st.tuples(
        st.sampled_from(_TOOLS),
        st.sampled_from(_PREFIXES),
        st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=6,
)


@contextmanager
def _home(home: Path) -> Iterator[None]:
    """``~`` means the world's home while a scenario runs (never the real one)."""
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = old


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(attempts=escape_attempts)
def test_generated_escape_paths_never_reach_outside(
    attempts: list[tuple[str, str, list[str]]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        site = Site(root)
        real = {
            "OUTSIDE/": f"{site.outside}/",
            "ROOT/": f"{root}/",
            "HOME/": f"{site.world.home}/",
        }
        calls = [
            (tool, _arguments(tool, real.get(prefix, prefix) + "/".join(pieces)))
            for tool, prefix, pieces in attempts
        ]
        before = _entries(site.world.project)
        with _home(site.world.home):
            results = trio.run(attack, site.world, calls)
        site.assert_outside_untouched(results)
        project = os.path.realpath(site.world.project)
        for path in _entries(site.world.project) - before:
            # Whatever was written landed inside, as a regular file or folder.
            assert not path.is_symlink()
            assert os.path.realpath(path).startswith(project + os.sep)


def _entries(folder: Path) -> set[Path]:
    """Every entry under ``folder``, symlinks not followed."""
    return {Path(d, name) for d, dirs, files in os.walk(folder) for name in [*dirs, *files]}


# -- Bash cannot outlive its agent -----------------------------------------------------------

#: Starts four processes that try to outlive the command, each writing its pid to a file
#: and then a line to file descriptor 3, so the command knows they have all started.
LAUNCH = (
    "mkfifo started && exec 3<>started; "
    "sh -c 'echo $$ > background.pid; echo >&3; exec sleep 1000' & "
    "nohup sh -c 'echo $$ > nohup.pid; echo >&3; exec sleep 1000' >/dev/null 2>&1 & "
    "( sh -c 'echo $$ > orphan.pid; echo >&3; exec sleep 1000' & ) ; "
    "setsid sh -c 'echo $$ > setsid.pid; echo >&3; exec sleep 1000' & "
    "for _ in 1 2 3 4; do read -r _ <&3; done; "
)
ESCAPEES = ("background", "nohup", "orphan", "setsid")


def _state(pid: int) -> str:
    """The one-letter state of ``pid`` from ``/proc``, or ``gone``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return "gone"
    return text.rsplit(")", 1)[1].split()[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return _state(pid) not in ("Z", "X", "gone")  # a zombie has ended; only its entry is left


async def assert_gone(pid: int, name: str) -> None:
    """Wait (bounded) for ``pid`` to end; fail if it is still running."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with trio.move_on_after(5):
            await trio.lowlevel.wait_readable(fd)  # readable once the process has exited
    finally:
        os.close(fd)
    assert not _alive(pid), f"the {name} process {pid} outlived its agent ({_state(pid)})"


def _kill_leftovers(project: Path) -> None:
    """Clean up after a failing run: no test leaves a ``sleep 1000`` behind."""
    for name in (*ESCAPEES, "shell"):
        path = project / f"{name}.pid"
        if path.exists() and _alive(int(path.read_text())):
            os.kill(int(path.read_text()), 9)


def _pids(project: Path, names: Sequence[str]) -> dict[str, int]:
    return {name: int((project / f"{name}.pid").read_text()) for name in names}


async def test_processes_started_by_bash_end_when_the_run_ends(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.agent("shell", tools="Bash")
    calls: list[Call] = [("Bash", {"command": LAUNCH + "echo launched"})]
    try:
        results = await attack(world, calls, agent="shell")
        assert results[0].content == "launched"
        for name, pid in _pids(world.project, ESCAPEES).items():
            await assert_gone(pid, name)
    finally:
        _kill_leftovers(world.project)


async def test_closing_an_agent_ends_the_processes_of_its_running_command(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    world.agent("shell", tools="Bash")
    ready = world.project / "ready"
    os.mkfifo(ready)
    # Opened read-write, the FIFO never reports end-of-file: a read waits for the line.
    ready_stream = trio.lowlevel.FdStream(os.open(ready, os.O_RDWR | os.O_NONBLOCK))
    command = LAUNCH + "echo $$ > shell.pid; echo go > ready; exec sleep 1000"
    provider = ScriptedProvider(policies={"shell": scripted([("Bash", {"command": command})])})
    try:
        with trio.fail_after(BOUND):
            async with ready_stream, world.open(provider, approval_callback=approve_all) as rt:
                handle = await rt.spawn("shell", "Start things and stay.")
                assert await ready_stream.receive_some() == b"go\n"
                assert await rt.close(handle.agent_id) == Running()
                assert rt.status(handle.agent_id) == Shutdown()
                for name, pid in _pids(world.project, (*ESCAPEES, "shell")).items():
                    await assert_gone(pid, name)
    finally:
        _kill_leftovers(world.project)


# -- tools the filter removed ------------------------------------------------------------------


def _offered(recording: testing.RecordingPolicy) -> set[str]:
    return {name for request, _ in recording.requests for name in request.tool_names}


async def test_a_denied_tool_is_not_offered_and_not_run_when_named(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.agent("careful", tools="Read, LS, Bash, Write", disallowedTools="Bash, Write")
    calls: list[Call] = [
        ("Bash", {"command": "touch bash-ran"}),
        ("Write", {"file_path": "write-ran", "content": "x"}),
        ("bash", {"command": "touch lower-ran"}),
        ("Bash ", {"command": "touch space-ran"}),
        ("Edit", {"file_path": "README.md", "old_string": "#", "new_string": "PWNED"}),
        ("LS", {}),
    ]
    recording = testing.RecordingPolicy(scripted(calls))
    provider = ScriptedProvider(policies={"careful": recording})
    with trio.fail_after(BOUND):
        async with world.open(provider, approval_callback=approve_all) as rt:
            handle = await rt.spawn("careful", "Try everything.")
            await rt.wait([handle.agent_id], timeout=BOUND)
            results = tool_results(rt.conversation(handle.agent_id).messages)
    assert _offered(recording) == {"Read", "LS"}
    for result in results[:5]:
        assert refused(result, "is not available to this agent"), result
    assert "removed" in results[0].content
    assert not results[5].is_error
    assert sorted(p.name for p in world.project.iterdir()) == [".claude", ".git", "README.md"]
    assert (world.project / "README.md").read_text() == "# A project\n"


async def test_an_untrusted_definition_never_gets_bash_even_by_naming_it(tmp_path: Path) -> None:
    world = World(tmp_path)
    # A repository's own definition, in a folder the user has not trusted.
    world.agent("stranger", tools="Bash, Write, LS")
    calls: list[Call] = [
        ("Bash", {"command": "touch bash-ran"}),
        ("Write", {"file_path": "write-ran", "content": "x"}),
    ]
    recording = testing.RecordingPolicy(scripted(calls))
    provider = ScriptedProvider(policies={"stranger": recording})
    with trio.fail_after(BOUND):
        async with world.open(provider, approval_callback=approve_all, trust_project=False) as rt:
            handle = await rt.spawn("stranger", "Run something.")
            await rt.wait([handle.agent_id], timeout=BOUND)
            results = tool_results(rt.conversation(handle.agent_id).messages)
    assert _offered(recording) == {"LS"}
    for result in results:
        assert refused(result, "is not available to this agent", "not trusted"), result
    assert not (world.project / "bash-ran").exists()
    assert not (world.project / "write-ran").exists()


async def test_the_grace_turn_runs_no_tool_but_complete_task(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.agent("busy", tools="Bash, LS", maxTurns=1)
    calls: list[Call] = [("LS", {}), ("Bash", {"command": "touch grace-ran"})]
    recording = testing.RecordingPolicy(scripted(calls))
    provider = ScriptedProvider(policies={"busy": recording})
    with trio.fail_after(BOUND):
        async with world.open(provider, approval_callback=approve_all) as rt:
            handle = await rt.spawn("busy", "Keep going.")
            await rt.wait([handle.agent_id], timeout=BOUND)
            results = tool_results(rt.conversation(handle.agent_id).messages)
    grace_request, _ = recording.requests[1]
    assert grace_request.grace
    assert grace_request.tool_names == ["complete_task"]
    assert refused(results[1], "Only complete_task is available", "was not run")
    assert not (world.project / "grace-ran").exists()


async def test_an_agent_at_the_depth_limit_cannot_spawn_by_any_name(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Extends tests/runtime (a leaf cannot spawn) to every spawn tool, side effects included."""
    world = World(tmp_path)
    world.agent("lead", tools=LEAD_TOOLS)
    world.agent("eager", tools="Task, Agent, spawn_agent, resume_agent, LS")
    calls: list[Call] = [
        ("Task", {"description": "d", "prompt": "p", "subagent_type": "Explore"}),
        ("Agent", {"description": "d", "prompt": "p", "subagent_type": "Explore"}),
        ("spawn_agent", {"agent_type": "Explore", "message": "Go."}),
    ]
    eager = testing.RecordingPolicy(scripted(calls))
    lead = scripted([("Task", {"description": "d", "prompt": "p", "subagent_type": "eager"})])
    provider = ScriptedProvider(policies={"lead": lead, "eager": eager})
    async with world.open(provider) as rt:
        handle = await rt.spawn("lead", "Delegate.")
        await rt.wait([handle.agent_id], timeout=100)
        rows = rt.list(include_closed=True)
        (child,) = [row for row in rows if row.parent_id == handle.agent_id]
        results = tool_results(rt.conversation(child.id).messages)
    assert len(rows) == 2  # the lead and its child: nobody else was started
    assert _offered(eager) == {"LS"}
    for result in results:
        assert refused(result, "Agent depth limit reached (max_depth=1)"), result
