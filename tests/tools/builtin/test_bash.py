"""The Bash tool: output, exit codes, timeouts that kill the process group, caps and cancellation.

These tests run real processes, so their timeouts are real and kept near one second.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from subagents.tools import BashTool, ToolContext, ToolRegistry, ToolResult, run_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses pidfd_open")


@pytest.fixture
def ctx(make_ctx: Any) -> ToolContext:
    return make_ctx()


async def bash(
    ctx: ToolContext, command: str, tool: BashTool | None = None, **args: Any
) -> ToolResult:
    registry = ToolRegistry([tool or BashTool()])
    return await registry.call("Bash", {"command": command, **args}, ctx)


async def assert_exited(pid: int) -> None:
    """Wait (bounded) until ``pid`` has exited; a pid that is already gone passes at once."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with trio.fail_after(2):
            await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


async def test_output_and_exit_code(ctx: ToolContext, tmp_path: Path) -> None:
    ok = await bash(ctx, "echo out; echo err >&2; pwd")
    assert ok == ToolResult.ok(f"out\nerr\n{os.path.realpath(tmp_path)}")
    assert ok.details == {
        "exit_code": 0,
        "timed_out": False,
        "truncated": False,
        "total_bytes": len(ok.content) + 1,
    }
    failed = await bash(ctx, "echo nope; exit 3")
    assert failed.is_error
    assert failed.content == "nope\n[exit code 3]"
    assert failed.details["exit_code"] == 3
    quiet = await bash(ctx, "true")
    assert quiet.content == "(no output)"
    killed = await bash(ctx, "kill -9 $$")
    assert killed.content == "[killed by signal 9]"


async def test_stdin_is_empty(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; echo done")
    assert result.content == "done"


async def test_timeout_kills_the_command_and_its_children(ctx: ToolContext, tmp_path: Path) -> None:
    start = trio.current_time()
    result = await bash(
        ctx,
        "sleep 60 & echo $! > child.pid; (sleep 60; echo grandchild) & echo started; wait",
        timeout=1000,
    )
    elapsed = trio.current_time() - start
    assert elapsed < 3
    assert result.is_error
    assert result.details["timed_out"] is True
    assert result.content == (
        "started\n[timed out after 1 s; the command and its child processes were killed]"
    )
    await assert_exited(int((tmp_path / "child.pid").read_text()))


async def test_background_children_do_not_outlive_the_command(
    ctx: ToolContext, tmp_path: Path
) -> None:
    start = trio.current_time()
    result = await bash(ctx, "sleep 60 & echo $! > child.pid; echo bye")
    assert trio.current_time() - start < 2
    assert result.content == "bye"
    await assert_exited(int((tmp_path / "child.pid").read_text()))


async def test_a_hundred_megabytes_of_output_is_capped(ctx: ToolContext) -> None:
    tool = BashTool(output_cap_bytes=10_000)
    with trio.fail_after(20):
        result = await bash(ctx, "head -c 100000000 /dev/zero | tr '\\0' a; echo; echo END", tool)
    assert result.details["total_bytes"] == 100_000_000 + 5
    assert result.details["truncated"] is True
    assert result.details["exit_code"] == 0
    assert len(result.content) < 10_200
    assert result.content.startswith("a" * 5000)
    assert "bytes of output omitted" in result.content
    assert result.content.endswith("a\nEND\n[output truncated: 100000005 bytes in all]")


async def test_cancellation_kills_the_process_group_and_propagates(
    ctx: ToolContext, tmp_path: Path
) -> None:
    results: list[ToolResult] = []
    with trio.move_on_after(1) as scope:
        results.append(await bash(ctx, "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; wait"))
    assert scope.cancelled_caught
    assert results == []
    await assert_exited(int((tmp_path / "shell.pid").read_text()))
    await assert_exited(int((tmp_path / "child.pid").read_text()))


async def test_timeout_argument_is_in_milliseconds_and_bounded(ctx: ToolContext) -> None:
    tool = BashTool(max_timeout_ms=500)
    result = await bash(ctx, "sleep 5", tool, timeout=600_000)
    assert result.details["timed_out"] is True
    assert "timed out after 0.5 s" in result.content
    too_long = await bash(ctx, "true", timeout=600_001)
    assert too_long.is_error
    assert "$.timeout" in too_long.content


async def test_run_command_reports_its_outcome(tmp_path: Path) -> None:
    outcome = await run_command(
        ["/bin/sh", "-c", "printf abcdefghij; exit 4"], cwd=tmp_path, timeout=5, output_cap=4
    )
    assert outcome.output == b"ab\n... [6 bytes of output omitted] ...\nij"
    assert (outcome.exit_code, outcome.timed_out, outcome.truncated) == (4, False, True)
    assert outcome.total_bytes == 10


async def test_a_missing_shell_is_a_tool_error(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo hi", BashTool(shell="/nonexistent/shell"))
    assert result.is_error
    assert result.content.startswith("The command could not be started")


async def test_environment_can_be_set(ctx: ToolContext) -> None:
    tool = BashTool(env={"PATH": os.environ["PATH"], "GREETING": "hello"})
    assert (await bash(ctx, "echo $GREETING", tool)).content == "hello"
