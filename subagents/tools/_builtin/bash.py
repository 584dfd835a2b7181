"""The ``Bash`` tool: run a shell command in the workspace, bounded in time and output.

The command runs in its own session (so in its own process group) with the
workspace root as working directory, stdin from ``/dev/null`` and stderr merged
into stdout. Output beyond the cap is read and discarded, so the child never
blocks on a full pipe; the start and the end are kept. When the shell exits,
times out or the caller is cancelled, the whole process group is killed with
``SIGKILL`` and reaped, so no child outlives the call; cancellation then
propagates.

A process can leave the group (``setsid``, a daemon's double fork), so each
command also gets a marker in its environment, which its descendants inherit,
and every process carrying it is killed as well (:mod:`._processes`). A
process that starts over with a new environment (``env -i``) is not found
this way: this is cleanup, not a sandbox.

The command's environment is the runtime's without its secret variables
(provider keys, ``*_TOKEN``, ``*_PASSWORD``...; see :mod:`._secrets`) except
those ``env_passthrough`` names; whatever the command prints is masked by the
call's redactor before the model or the transcript sees it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, final

import attrs
import msgspec
import trio

from subagents.tools._config import (
    BASH_DEFAULT_TIMEOUT_MS,
    BASH_KILL_GRACE_SECONDS,
    BASH_MAX_TIMEOUT_MS,
    BASH_OUTPUT_CAP_BYTES,
)
from subagents.tools._context import ToolContext
from subagents.tools._exceptions import ToolError
from subagents.tools._processes import RUN_MARKER_ENV, ProcessSweep, kill_group
from subagents.tools._protocol import ToolFlags, ToolResult
from subagents.tools._secrets import SecretRedactor, child_environment

__all__ = ["RUN_MARKER_ENV", "BashArgs", "BashTool", "CommandOutcome", "run_command"]

_READ_SIZE = 64 * 1024
#: Bound on reaping a process group after SIGKILL (it takes microseconds in practice).
_REAP_TIMEOUT = 5.0


class BashArgs(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Arguments of the Bash tool."""

    command: Annotated[
        str, msgspec.Meta(min_length=1, max_length=100_000, description="The command to run.")
    ]
    timeout: (
        Annotated[
            int,
            msgspec.Meta(
                ge=1,
                le=BASH_MAX_TIMEOUT_MS,
                description=(
                    f"Timeout in milliseconds (default {BASH_DEFAULT_TIMEOUT_MS}, "
                    f"at most {BASH_MAX_TIMEOUT_MS})."
                ),
            ),
        ]
        | None
    ) = None
    description: (
        Annotated[
            str,
            msgspec.Meta(max_length=1000, description="What the command does, in a few words."),
        ]
        | None
    ) = None


@attrs.frozen
class CommandOutcome:
    """How a command ended: its (capped) output and why it stopped."""

    output: bytes
    total_bytes: int
    truncated: bool
    exit_code: int | None
    timed_out: bool


class _CappedBuffer:
    """Keeps the first and last bytes of a stream, counting what falls in between."""

    def __init__(self, cap: int) -> None:
        self._tail_cap = cap // 2
        self._head_cap = cap - self._tail_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > 2 * self._tail_cap:
                del self._tail[: len(self._tail) - self._tail_cap]

    def result(self, redactor: SecretRedactor | None = None) -> tuple[bytes, bool]:
        """The kept output and whether some was omitted.

        With ``redactor``, a secret the cut went through is masked on both sides
        of it (the whole output is masked later, by the tool's dispatch).
        """
        tail = self._tail[-self._tail_cap :] if self._tail_cap else bytearray()
        omitted = self.total - len(self._head) - len(tail)
        if omitted <= 0:
            return bytes(self._head + self._tail), False
        marker = f"\n... [{omitted} bytes of output omitted] ...\n".encode()
        head, rest = bytes(self._head), bytes(tail)
        if redactor:
            head = _edges(redactor, head, cut_after=True)
            rest = _edges(redactor, rest, cut_before=True)
        return head + marker + rest, True


def _edges(redactor: SecretRedactor, data: bytes, **cuts: bool) -> bytes:
    # surrogateescape: bytes that are not UTF-8 (or a character the cut split) come back as is.
    text = data.decode("utf-8", "surrogateescape")
    return redactor.redact(text, **cuts).encode("utf-8", "surrogateescape")


async def run_command(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    output_cap: int = BASH_OUTPUT_CAP_BYTES,
    kill_grace: float = BASH_KILL_GRACE_SECONDS,
    env: Mapping[str, str] | None = None,
    env_passthrough: Collection[str] = (),
    redactor: SecretRedactor | None = None,
) -> CommandOutcome:
    """Run ``argv`` in a new session; kill its process group at exit, timeout or cancellation.

    Processes that left the group but carry the command's environment marker
    are killed too (see the module docstring). The command gets ``env``
    (default ``os.environ``) without its secret variables, except those named
    in ``env_passthrough``. ``redactor`` masks a secret that the output's cut
    went through (see :meth:`SecretRedactor.redact`).
    """
    sweep = ProcessSweep()
    environment = sweep.environment(child_environment(env, env_passthrough))
    try:
        proc = await trio.lowlevel.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=os.fspath(cwd),
            env=environment,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"The command could not be started: {exc}.") from None
    stdout = proc.stdout
    assert stdout is not None
    buffer = _CappedBuffer(output_cap)
    drained = trio.Event()

    async def pump() -> None:
        try:
            while chunk := await stdout.receive_some(_READ_SIZE):
                buffer.feed(bytes(chunk))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            drained.set()

    timed_out = False
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pump)
            with trio.move_on_after(timeout) as deadline:
                await proc.wait()
            timed_out = deadline.cancelled_caught
            # Leftover background children (or, on timeout, everything) go now.
            await sweep.kill(proc.pid)
            with trio.move_on_after(_REAP_TIMEOUT):
                await proc.wait()
            with trio.move_on_after(kill_grace):
                await drained.wait()
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                kill_group(proc.pid)
                with trio.move_on_after(_REAP_TIMEOUT):
                    await proc.wait()
            await sweep.kill()
            await stdout.aclose()
    output, truncated = buffer.result(redactor)
    return CommandOutcome(
        output=output,
        total_bytes=buffer.total,
        truncated=truncated,
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
    )


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@final
@attrs.frozen
class BashTool:
    """Runs one shell command in the workspace root with a timeout and an output cap.

    ``env`` replaces the runtime's environment as the command's (``None``: the
    runtime's own); either way its secret variables are removed, except those
    named in ``env_passthrough`` (the ``env_passthrough`` setting).
    """

    default_timeout_ms: int = BASH_DEFAULT_TIMEOUT_MS
    max_timeout_ms: int = BASH_MAX_TIMEOUT_MS
    output_cap_bytes: int = BASH_OUTPUT_CAP_BYTES
    kill_grace_seconds: float = BASH_KILL_GRACE_SECONDS
    shell: str = attrs.field(factory=lambda: shutil.which("bash") or "/bin/sh")
    env: Mapping[str, str] | None = None
    env_passthrough: frozenset[str] = attrs.field(default=frozenset(), converter=_names)

    name = "Bash"
    description = (
        "Run a shell command in the workspace root and return its output (stdout and stderr "
        f"together) and exit code. Default timeout {BASH_DEFAULT_TIMEOUT_MS // 1000} s, at most "
        f"{BASH_MAX_TIMEOUT_MS // 1000} s (the `timeout` argument is in milliseconds); output "
        f"beyond {BASH_OUTPUT_CAP_BYTES} bytes is cut in the middle; stdin is empty. "
        "Guaranteed: the processes the command starts, background, nohup and setsid ones "
        "included, are killed when it ends, times out or the agent stops, so a server or "
        "watcher started here is gone before your next call. Not guaranteed: this is cleanup, "
        "not a sandbox. The command runs as the user in the workspace folder, with the "
        "user's access to every file and to the network, and a process that clears its "
        "environment (env -i) escapes the cleanup. Secret environment variables (API keys, "
        "tokens, passwords) are not set, and their values are masked in the output. Prefer "
        "Read, Grep and Glob for reading and searching."
    )
    arguments_type = BashArgs
    flags = ToolFlags(read_only=False, background_safe=True, needs_approval=True)

    async def call(self, args: BashArgs, ctx: ToolContext, /) -> ToolResult:
        """Run the command and describe how it ended."""
        root = await trio.to_thread.run_sync(ctx.workspace.real_root)
        timeout_ms = min(args.timeout or self.default_timeout_ms, self.max_timeout_ms)
        outcome = await run_command(
            [self.shell, "-c", args.command],
            cwd=root,
            timeout=timeout_ms / 1000,
            output_cap=self.output_cap_bytes,
            kill_grace=self.kill_grace_seconds,
            env=self.env,
            env_passthrough=self.env_passthrough,
            redactor=ctx.redactor,
        )
        return _describe(outcome, timeout_ms)


def _describe(outcome: CommandOutcome, timeout_ms: int) -> ToolResult:
    text = outcome.output.decode("utf-8", errors="replace").rstrip("\n")
    notes = []
    if outcome.truncated:
        notes.append(f"[output truncated: {outcome.total_bytes} bytes in all]")
    if outcome.timed_out:
        notes.append(
            f"[timed out after {timeout_ms / 1000:g} s; the command and its child processes "
            "were killed]"
        )
    elif outcome.exit_code is not None and outcome.exit_code < 0:
        notes.append(f"[killed by signal {-outcome.exit_code}]")
    elif outcome.exit_code:
        notes.append(f"[exit code {outcome.exit_code}]")
    content = "\n".join(part for part in [text, *notes] if part) or "(no output)"
    return ToolResult(
        content=content,
        is_error=outcome.timed_out or outcome.exit_code != 0,
        details={
            "exit_code": outcome.exit_code,
            "timed_out": outcome.timed_out,
            "truncated": outcome.truncated,
            "total_bytes": outcome.total_bytes,
        },
    )
