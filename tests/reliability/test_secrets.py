"""Reliability, secrets in the environment: tools and hooks neither see nor show them.

A scripted model inside a real runtime (``open_runtime`` over a temporary
project, see ``tests/runtime/world.py``) tries to read the runtime's
secret environment variables through ``Bash`` (``env``, ``printenv``,
``echo $VAR``, and a program that prints them from where no environment
scrubbing reaches: here a file holding them, as the runtime's own
``/proc/<pid>/environ`` would); command hooks dump their environment too.

- ``Bash`` and command hooks start without the secret variables (provider
  keys, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, cloud credentials), unless
  the ``env_passthrough`` setting names them;
- the values of those variables never reach the transcript file, the model's
  next request or the events, even when a tool prints them (a passed-through
  variable's value is still masked);
- a command hook that daemonizes (``setsid ... &``) leaves no process behind,
  when it returns as when it times out.

The lower levels are proven in ``tests/tools/test_secrets.py`` (which
variables are secret, the child environment, masking) and
``tests/runtime/hooks/test_commands.py`` (the hook process sweep).
Bash and hooks run real processes, so these tests use the real clock; nothing
sleeps: they wait on the runtime, on pidfds and on FIFOs, each bounded.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from subagents import testing
from subagents.actors import Bus, Event
from subagents.runtime import ModelRequest, Reply, ScriptedProvider, ToolResultBlock
from subagents.tools import ApprovalDecision, ApprovalRequest
from tests.runtime.world import World, drain

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="uses /proc, pidfds and FIFOs"
)

BOUND = 20.0
#: Secret variables of the runtime's process, each with a value no output would hold by chance.
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-leak-canary-0a1b2c3d4e5f",
    "OPENAI_API_KEY": "sk-proj-leak-canary-9f8e7d6c5b4a",
    "GITHUB_TOKEN": "ghp_leakCanary1234567890abcdef",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/leak/canary/EXAMPLEKEY",
    "AWS_ACCESS_KEY_ID": "AKIALEAKCANARY7EXAMPLE",
    "DEPLOY_PASSWORD": "hunter2-leak-canary",
    "STRIPE_SECRET": "rk_live_leak_canary_51H",
}
#: The model tries every way to print them.
PROBES = (
    "env",
    "printenv ANTHROPIC_API_KEY; echo status=$?",
    "echo token=$GITHUB_TOKEN",
    # Values from where no scrubbing reaches (the runtime's /proc/<pid>/environ, a
    # program's config dump): masking must hide them.
    "cat dump.txt",
)


async def approve_all(request: ApprovalRequest) -> ApprovalDecision:
    """Approve every Bash call: what the command may see is what is tested."""
    return ApprovalDecision.approve("secrets tests")


def _policy(commands: Sequence[str]) -> Any:
    def policy(request: ModelRequest) -> Reply:
        if request.turn < len(commands):
            return testing.call("Bash", command=commands[request.turn])
        return testing.say("done")

    return policy


class Run:
    """What one run left behind: tool results, model requests, events and state files."""

    def __init__(self) -> None:
        self.results: list[ToolResultBlock] = []
        self.requests: list[str] = []
        self.events: list[Event] = []
        self.files: dict[str, str] = {}

    def everything(self) -> dict[str, str]:
        return {
            "tool results": "\n".join(r.content for r in self.results),
            "model requests": "\n".join(self.requests),
            "events": "\n".join(msgspec.json.encode(e).decode() for e in self.events),
            **self.files,
        }


async def run_probes(world: World, commands: Sequence[str]) -> Run:
    """Run an agent that calls Bash with each of ``commands``; collect everything it left."""
    recording = testing.RecordingPolicy(_policy(commands))
    provider = ScriptedProvider(policies={"shell": recording})
    run = Run()
    bus = Bus()
    with trio.fail_after(BOUND):
        with bus.subscribe(policy="block", capacity=10_000) as events:
            async with world.open(provider, bus=bus, approval_callback=approve_all) as rt:
                handle = await rt.spawn("shell", "Print the environment.")
                await rt.wait([handle.agent_id], timeout=BOUND)
                run.results = [
                    block
                    for message in rt.conversation(handle.agent_id)
                    for block in message.content
                    if isinstance(block, ToolResultBlock)
                ]
            run.events = drain(events)
    for request, messages in recording.requests:
        run.requests.append(msgspec.json.encode([request.system, messages]).decode())
    run.files = {
        str(path): path.read_text(errors="replace")
        for path in world.state.rglob("*")
        if path.is_file()
    }
    return run


def assert_no_secret(run: Run, secrets: Sequence[str] = tuple(SECRETS.values())) -> None:
    for where, text in run.everything().items():
        for value in secrets:
            assert value not in text, f"{value!r} leaked into {where}"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return SECRETS


def shell_world(root: Path, **extra: Any) -> World:
    """A project with a ``shell`` agent (Bash only) and ``dump.txt``, every secret in it."""
    world = World(root, extra=extra)
    world.agent("shell", tools="Bash", maxTurns=20)
    (world.project / "dump.txt").write_text(
        "".join(f"{name}={value}\n" for name, value in SECRETS.items())
    )
    return world


async def test_bash_neither_gets_nor_shows_the_secret_variables(
    tmp_path: Path, secret_env: dict[str, str]
) -> None:
    world = shell_world(tmp_path)
    run = await run_probes(world, PROBES)
    assert len(run.results) == len(PROBES)
    env, printenv, echo, parent = (r.content for r in run.results)
    # Scrubbed: the command's environment lacks them (names and all), keeps the rest.
    assert "PATH=" in env
    for name in SECRETS:
        assert f"{name}=" not in env
    assert "status=1" in printenv
    assert echo == "token="
    # Masked: values the command found elsewhere are not shown.
    assert "ANTHROPIC_API_KEY=[REDACTED]" in parent
    assert "DEPLOY_PASSWORD=[REDACTED]" in parent
    assert_no_secret(run)


async def test_a_passed_through_variable_reaches_bash_and_is_still_masked(
    tmp_path: Path, secret_env: dict[str, str]
) -> None:
    world = shell_world(tmp_path, env_passthrough=["GITHUB_TOKEN"])
    commands = (
        'printf %s "$GITHUB_TOKEN" | sha256sum',  # the value, without showing it
        "echo token=$GITHUB_TOKEN; echo key=$ANTHROPIC_API_KEY",
    )
    run = await run_probes(world, commands)
    digest, shown = (r.content for r in run.results)
    assert digest.split()[0] == hashlib.sha256(SECRETS["GITHUB_TOKEN"].encode()).hexdigest()
    assert shown == "token=[REDACTED]\nkey="
    assert_no_secret(run)


HOOK_DUMP = "env > {name}-hook.env"


def _hooked_world(root: Path, **extra: Any) -> World:
    world = shell_world(root, **extra)
    start = {"type": "command", "command": HOOK_DUMP.format(name="start")}
    pre = {"type": "command", "command": HOOK_DUMP.format(name="pre")}
    world.hooks = {
        "SubagentStart": [{"hooks": [start]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [pre]}],
    }
    return world


async def test_command_hooks_do_not_get_the_secret_variables(
    tmp_path: Path, secret_env: dict[str, str]
) -> None:
    world = _hooked_world(tmp_path, env_passthrough=["DEPLOY_PASSWORD"])
    run = await run_probes(world, ["echo hi"])
    assert [r.content for r in run.results] == ["hi"]
    for name in ("start", "pre"):
        dumped = (world.project / f"{name}-hook.env").read_text()
        assert "PATH=" in dumped
        assert f"DEPLOY_PASSWORD={SECRETS['DEPLOY_PASSWORD']}" in dumped  # passed through
        for variable, value in SECRETS.items():
            if variable != "DEPLOY_PASSWORD":
                assert value not in dumped
                assert f"{variable}=" not in dumped
    assert_no_secret(run)


async def test_hook_output_that_shows_a_secret_is_masked_before_the_model_reads_it(
    tmp_path: Path, secret_env: dict[str, str]
) -> None:
    world = shell_world(tmp_path)
    # A PostToolUse hook's exit-2 stderr goes to the model, SubagentStart's stdout too.
    leak = "grep GITHUB_TOKEN dump.txt >&2; exit 2"
    world.hooks = {
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": leak}]}],
        "SubagentStart": [{"hooks": [{"type": "command", "command": "cat dump.txt"}]}],
    }
    run = await run_probes(world, ["echo hi"])
    assert "GITHUB_TOKEN=[REDACTED]" in run.results[0].content
    assert "ANTHROPIC_API_KEY=[REDACTED]" in run.requests[0]  # SubagentStart's stdout
    assert_no_secret(run)


# -- hooks cannot outlive their firing ---------------------------------------------------------

#: A hook that starts a ``setsid``'d daemon, waits until it has written its pid, and returns.
DAEMONIZE = (
    "mkfifo {name}.fifo && exec 3<>{name}.fifo; "
    "setsid sh -c 'echo $$ > {name}.pid; echo >&3; exec sleep 1000' & "
    "read -r _ <&3; "
)


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return text.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def assert_gone(pid: int) -> None:
    """Wait (bounded) for ``pid`` to end; fail if it is still running."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with trio.move_on_after(5):
            await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)
    assert not _alive(pid), f"the hook's daemon {pid} outlived its hook"


async def test_a_hook_that_daemonizes_leaves_no_process(tmp_path: Path) -> None:
    world = shell_world(tmp_path)
    world.hooks = {
        "SubagentStart": [
            {"hooks": [{"type": "command", "command": DAEMONIZE.format(name="returns")}]}
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": DAEMONIZE.format(name="times-out") + "exec sleep 1000",
                        "timeout": 1,
                    }
                ],
            }
        ],
    }
    pids: list[int] = []
    try:
        run = await run_probes(world, ["echo hi"])
        assert [r.content for r in run.results] == ["hi"]
        for name in ("returns", "times-out"):
            pids.append(int((world.project / f"{name}.pid").read_text()))
        for pid in pids:
            await assert_gone(pid)
    finally:
        for name in ("returns", "times-out"):
            path = world.project / f"{name}.pid"
            if path.exists() and _alive(int(path.read_text())):
                os.kill(int(path.read_text()), 9)
