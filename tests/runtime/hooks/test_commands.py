"""Command hooks with real shell processes: exit codes, stdin payload, timeouts, output caps.

Timeouts here are real and small (at most 1 s); each test finishes in well
under a second unless it exercises a timeout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio

from subagents.runtime._hooks.commands import (
    DEFAULT_HOOK_OUTPUT_CAP,
    HookEvent,
    HookPayload,
    run_hook_command,
)
from subagents.runtime._hooks.run import subagent_run_hooks
from subagents.runtime._hooks.runner import HookRunner
from subagents.runtime._hooks.values import Hook, hooks_from_settings
from subagents.tools import SecretRedactor

PRE = HookEvent.PRE_TOOL_USE
POST = HookEvent.POST_TOOL_USE
START = HookEvent.SUBAGENT_START
STOP = HookEvent.SUBAGENT_STOP


def payload(event: HookEvent = PRE, **fields: Any) -> HookPayload:
    base: dict[str, Any] = {
        "agent_id": "agent-7",
        "agent_type": "Explore",
        "parent_id": "lead",
        "depth": 1,
        "transcript_path": "/tmp/state/agent-agent-7.jsonl",
    }
    if event.is_tool_event:
        base |= {
            "tool_use_id": "toolu_42",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /"},
        }
    return HookPayload(hook_event_name=event.value, **(base | fields))


def fire(event: HookEvent, command: str, timeout: float = 1.0, **runner: Any) -> Any:  # a coroutine
    hook = Hook(event, command=command, timeout_seconds=timeout)
    return HookRunner([hook], **runner).fire(event, payload(event))


async def dead(pid: int) -> bool:
    """Whether ``pid`` is gone (or a zombie nobody reaped yet), waiting at most 2 s."""
    with trio.move_on_after(2):
        while True:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                return True
            if state in ("Z", "X"):
                return True
            await trio.sleep(0.02)
    return False


async def test_exit_0_stdout_becomes_start_context() -> None:
    outcome = await fire(START, "echo 'Follow the style guide.'; echo ignored >&2")
    assert outcome.feedback == ("Follow the style guide.",)
    (result,) = outcome.results
    assert result.exit_code == 0
    assert result.stderr == "ignored\n"
    assert outcome.user_messages == ()


async def test_exit_0_stdout_of_tool_hooks_is_not_for_the_model() -> None:
    outcome = await fire(PRE, "echo looks fine")
    assert not outcome.blocked
    assert outcome.feedback == ()
    assert outcome.results[0].stdout == "looks fine\n"


async def test_exit_2_blocks_a_tool_call_with_stderr_for_the_model() -> None:
    outcome = await fire(PRE, "echo ignored; echo 'Destructive command refused.' >&2; exit 2")
    assert outcome.blocked
    assert outcome.reason == "Destructive command refused."
    assert outcome.user_messages == ()


async def test_exit_2_after_a_tool_call_is_feedback() -> None:
    outcome = await fire(POST, "echo 'ruff: 3 errors' >&2; exit 2")
    assert not outcome.blocked
    assert outcome.feedback == ("ruff: 3 errors",)


async def test_other_exit_codes_reach_the_user_only() -> None:
    outcome = await fire(PRE, "echo 'jq: not found' >&2; exit 1")
    assert not outcome.blocked
    assert outcome.feedback == ()
    (message,) = outcome.user_messages
    assert "exited 1: jq: not found" in message
    assert outcome.results[0].exit_code == 1


async def test_a_hook_killed_by_a_signal_is_reported() -> None:
    outcome = await fire(PRE, "kill -TERM $$")
    assert outcome.results[0].exit_code == -15
    assert "killed by signal 15" in outcome.user_messages[0]


async def test_the_payload_arrives_as_json_on_stdin() -> None:
    outcome = await fire(PRE, "cat")
    sent = json.loads(outcome.results[0].stdout)
    assert sent["hook_event_name"] == "PreToolUse"
    assert sent["agent_id"] == "agent-7"
    assert sent["agent_type"] == "Explore"
    assert sent["parent_id"] == "lead"
    assert sent["depth"] == 1
    assert sent["tool_use_id"] == "toolu_42"
    assert sent["tool_name"] == "Bash"
    assert sent["tool_input"] == {"command": "rm -rf /"}
    assert sent["transcript_path"] == "/tmp/state/agent-agent-7.jsonl"
    assert sent["last_assistant_message"] is None


async def test_a_hook_can_block_on_a_payload_field() -> None:
    script = (
        'input=$(cat); case "$input" in *\'"rm -rf /"\'*) '
        'echo "refusing rm -rf on $(echo "$input" | sed -n '
        '\'s/.*"tool_use_id":"\\([^"]*\\)".*/\\1/p\')" >&2; exit 2;; esac'
    )
    outcome = await fire(PRE, script)
    assert outcome.blocked
    assert outcome.reason == "refusing rm -rf on toolu_42"


async def test_a_hook_that_ignores_a_huge_payload_does_not_hang() -> None:
    hook = Hook(POST, command="exit 0", timeout_seconds=1)
    big = payload(POST, tool_response="x" * 2_000_000)
    outcome = await HookRunner([hook]).fire(POST, big)
    assert outcome.results[0].exit_code == 0
    assert not outcome.results[0].timed_out


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 30 & echo $! > {pids}; echo $$ >> {pids}; sleep 30"
    start = trio.current_time()
    outcome = await fire(PRE, command, timeout=0.3)
    assert trio.current_time() - start < 2
    (result,) = outcome.results
    assert result.timed_out
    assert result.exit_code is None
    assert "timed out" in outcome.user_messages[0]
    assert not outcome.blocked
    child, shell = (int(line) for line in pids.read_text().split())
    assert await dead(child)
    assert await dead(shell)


async def test_background_children_do_not_outlive_the_hook(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    start = trio.current_time()
    outcome = await fire(PRE, f"sleep 30 & echo $! > {pid_file}; echo started", timeout=1)
    assert trio.current_time() - start < 0.9
    assert outcome.results[0].exit_code == 0
    assert await dead(int(pid_file.read_text()))


async def test_cancelling_a_firing_kills_the_hook(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    hook = Hook(PRE, command=f"echo $$ > {pid_file}; sleep 30", timeout_seconds=60)
    with trio.move_on_after(0.3) as scope:
        await HookRunner([hook]).fire(PRE, payload())
    assert scope.cancelled_caught
    assert await dead(int(pid_file.read_text()))


async def test_huge_output_is_capped_and_drained() -> None:
    start = trio.current_time()
    outcome = await fire(PRE, "yes | head -c 50000000; yes | head -c 3000000 >&2", timeout=10)
    assert trio.current_time() - start < 8
    (result,) = outcome.results
    assert result.exit_code == 0
    assert result.truncated
    kept = DEFAULT_HOOK_OUTPUT_CAP
    assert result.stdout.startswith("y\n" * (kept // 2))
    assert result.stdout.endswith(
        f"[output truncated: 50000000 bytes in all, the first {kept} kept]"
    )
    assert "3000000 bytes in all" in result.stderr
    assert len(result.stdout) < kept + 200


async def test_run_hook_command_counts_what_it_drops() -> None:
    run = await run_hook_command(
        "printf 0123456789; printf abc >&2",
        b"",
        deadline=trio.current_time() + 1,
        output_cap=4,
    )
    assert (run.stdout, run.stdout_total, run.stderr, run.stderr_total) == (
        b"0123",
        10,
        b"abc",
        3,
    )


async def test_a_hook_exiting_2_every_time_blocks_every_call() -> None:
    runner = HookRunner([Hook(PRE, command="echo nope >&2; exit 2", timeout_seconds=1)])
    outcomes = [await runner.fire(PRE, payload()) for _ in range(10)]
    assert all(o.blocked and o.reason == "nope" for o in outcomes)
    assert runner.statistics().blocked == 10


async def test_matchers_select_command_hooks(tmp_path: Path) -> None:
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo bash"}]},
                {"matcher": "Read|Grep", "hooks": [{"type": "command", "command": "echo read"}]},
            ]
        }
    }
    runner = HookRunner(hooks_from_settings(settings))
    bash = await runner.fire(PRE, payload(tool_name="Bash"))
    grep = await runner.fire(PRE, payload(tool_name="Grep"))
    write = await runner.fire(PRE, payload(tool_name="Write"))
    assert [r.stdout for r in bash.results] == ["bash\n"]
    assert [r.stdout for r in grep.results] == ["read\n"]
    assert write.results == ()


async def test_global_then_agent_hooks_in_definition_order() -> None:
    runner = HookRunner(
        [Hook(START, command="sleep 0.2; echo global-1"), Hook(START, command="echo global-2")]
    )
    agent = [Hook(START, command="echo agent-1", scope="agent")]
    outcome = await runner.fire(START, payload(START), agent_hooks=agent)
    assert outcome.feedback == ("global-1", "global-2", "agent-1")


async def test_commands_run_in_the_payload_cwd_with_extra_env(tmp_path: Path) -> None:
    hook = Hook(PRE, command='echo "$PWD $HOOK_FLAG"')
    runner = HookRunner([hook], env={"HOOK_FLAG": "on"})
    outcome = await runner.fire(PRE, payload(cwd=os.fspath(tmp_path)))
    assert outcome.results[0].stdout == f"{tmp_path} on\n"


async def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    outcome = await HookRunner([Hook(PRE, command="true")]).fire(
        PRE, payload(cwd=os.fspath(tmp_path / "missing"))
    )
    assert not outcome.blocked
    assert "could not be started" in outcome.user_messages[0]


async def test_a_payload_json_cannot_hold_is_reported() -> None:
    outcome = await HookRunner([Hook(POST, command="cat")]).fire(
        POST, payload(POST, tool_response=object())
    )
    assert "could not be encoded as JSON" in outcome.user_messages[0]


async def test_stop_command_runs_when_the_run_is_cancelled(tmp_path: Path) -> None:
    seen = tmp_path / "stop.json"
    runner = HookRunner(
        [
            Hook(START, command="echo started"),
            Hook(STOP, command=f"cat > {seen}", timeout_seconds=1),
        ]
    )

    def factory(event: HookEvent) -> HookPayload:
        return payload(event, last_assistant_message="partial answer")

    with trio.move_on_after(0.2) as scope:
        async with subagent_run_hooks(runner, factory) as run:
            assert run.context == "started"
            await trio.sleep_forever()
    assert scope.cancelled_caught
    stop = json.loads(seen.read_text())
    assert stop["hook_event_name"] == "SubagentStop"
    assert stop["last_assistant_message"] == "partial answer"
    assert stop["tool_use_id"] is None
    assert run.stop is not None
    assert run.stop.results[0].exit_code == 0


@pytest.mark.parametrize("event", [PRE, STOP])
async def test_a_hook_reading_nothing_and_sleeping_is_bounded(event: HookEvent) -> None:
    start = trio.current_time()
    outcome = await fire(event, "exec sleep 30", timeout=0.3)
    assert trio.current_time() - start < 2
    assert outcome.results[0].timed_out


# -- processes that leave the group, secrets in the environment ----------------------------

#: Starts a ``setsid``'d daemon (a session of its own, out of the hook's group), waits until
#: it has written its pid, then runs ``{rest}``.
DAEMON = (
    "mkfifo {fifo} && exec 3<>{fifo}; "
    "setsid sh -c 'echo $$ > {pid}; echo >&3; exec sleep 30' & "
    "read -r _ <&3; {rest}"
)


@pytest.mark.parametrize(("rest", "timeout"), [("echo started", 5.0), ("sleep 30", 0.3)])
async def test_a_daemonized_hook_process_does_not_outlive_the_hook(
    tmp_path: Path, rest: str, timeout: float
) -> None:
    pid_file = tmp_path / "daemon.pid"
    command = DAEMON.format(fifo=tmp_path / "fifo", pid=pid_file, rest=rest)
    outcome = await fire(PRE, command, timeout=timeout)
    assert outcome.results[0].timed_out is (rest == "sleep 30")
    assert await dead(int(pid_file.read_text()))


async def test_hooks_start_without_secret_variables_but_those_passed_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_hooktest_0123456789")
    monkeypatch.setenv("DEPLOY_PASSWORD", "hook-password-123")
    command = 'echo "gh=${GITHUB_TOKEN-unset} pw=${DEPLOY_PASSWORD-unset} home=${HOME:+set}"'
    outcome = await fire(START, command)
    assert outcome.feedback == ("gh=unset pw=unset home=set",)
    passed = await fire(START, command, env_passthrough=["DEPLOY_PASSWORD"])
    assert passed.feedback == ("gh=unset pw=[REDACTED] home=set",)  # there, and masked


async def test_a_secret_in_hook_output_is_masked_even_where_the_cap_cuts_it() -> None:
    secret = "s3cr3t-value-0123456789"
    redactor = SecretRedactor((secret,))
    whole = await fire(PRE, f"echo {secret} >&2; exit 2", redactor=redactor)
    assert whole.reason == "[REDACTED]"
    # The cap keeps the first 20 bytes: the secret's first 10 characters, masked too.
    cut = await fire(PRE, f"printf 0123456789{secret}", redactor=redactor, output_cap=20)
    assert cut.results[0].stdout.startswith("0123456789[REDACTED]\n[output truncated")
