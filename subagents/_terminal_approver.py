"""How ``subagents run`` asks the person at the terminal to approve a tool call.

:class:`TerminalApprover` is the CLI's approval callback: it prints each
request labelled by agent, reads ``y``/``N`` from stdin within the request's
deadline, and pauses the live view (:mod:`subagents._live`) while a prompt is
on screen. Stdin is read in a worker thread, one read at a time
(:class:`_LineReader`), since a blocking read cannot be cancelled.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO, final

import outcome
import trio
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from subagents._live import LiveView
from subagents.runtime._progress import ProgressTracker
from subagents.runtime._progress_values import ProgressNotFound
from subagents.tools._approval import ApprovalDecision, ApprovalRequest

__all__ = ["TerminalApprover"]


@final
class _LineReader:
    """Reads lines from a blocking stream in a worker thread, at most one read at a time.

    A blocking ``readline`` cannot be cancelled, so a prompt that times out
    leaves its read running; the next prompt waits on that same read instead
    of starting a second one. A line that arrives while nobody is asking (the
    answer to a prompt that already timed out) is stale and dropped.
    """

    __slots__ = ("_reading", "_result", "_stream", "_waiter")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._reading = False
        self._waiter: trio.Event | None = None
        self._result: outcome.Outcome[str] | None = None

    async def readline(self) -> str:
        """The next line typed ('' at end of input); cancellable, the read itself is not."""
        if not self._reading:
            self._reading = True
            token = trio.lowlevel.current_trio_token()

            def deliver(result: outcome.Outcome[str]) -> None:
                # RunFinishedError: the program ended while the line was being typed.
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(self._deliver, result)

            trio.lowlevel.start_thread_soon(self._stream.readline, deliver)
        waiter = self._waiter = trio.Event()
        try:
            await waiter.wait()
        finally:
            if self._waiter is waiter:
                self._waiter = None
        result, self._result = self._result, None
        assert result is not None
        return result.unwrap()

    def _deliver(self, result: outcome.Outcome[str]) -> None:
        self._reading = False
        if self._waiter is not None:
            self._result = result
            self._waiter.set()


@final
class TerminalApprover:
    """The CLI's approval callback: asks at the terminal, labelled by agent; ``auto_yes`` approves.

    Use it as an :data:`~subagents.tools._approval.ApprovalCallback`. Each
    request is printed with the agent's nickname and type (from ``tracker``),
    the tool and what it would do, and answered ``y``/``yes`` to approve,
    anything else to deny. Prompts are asked one at a time; each, waiting in
    line included, is bounded by the request's deadline (then it is a denial
    that says it timed out). With ``live``, the live view is paused while a
    prompt is on screen. End of input denies every later request.
    """

    __slots__ = ("_eof", "_lock", "_reader", "auto_yes", "console", "live", "tracker")

    def __init__(
        self,
        console: Console,
        *,
        auto_yes: bool = False,
        tracker: ProgressTracker | None = None,
        live: LiveView | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        self.console = console
        self.auto_yes = auto_yes
        self.tracker = tracker
        self.live = live
        self._reader = _LineReader(sys.stdin if stdin is None else stdin)
        self._lock = trio.Lock()
        self._eof = False

    def label(self, agent_id: str) -> str:
        """How an agent is named in a prompt: ``Ada (Explore)``, or its id if unknown."""
        if self.tracker is not None:
            try:
                row = self.tracker.progress(agent_id)
            except ProgressNotFound:
                return agent_id
            name = row.nickname or agent_id
            return f"{name} ({row.label})" if row.label else name
        return agent_id

    def _describe(self, req: ApprovalRequest) -> Text:
        text = Text()
        text.append(self.label(req.agent_id), style="bold")
        text.append(" wants to run ")
        text.append(req.tool_name, style="bold cyan")
        if req.summary:
            text.append(f": {req.summary}")
        return text

    async def __call__(self, req: ApprovalRequest) -> ApprovalDecision:
        """Answer ``req``: at once with ``auto_yes``, else by asking, within its deadline."""
        if self.auto_yes:
            line = Text("approved (--yes): ", style="dim")
            line.append_text(self._describe(req))
            self.console.print(line)
            return ApprovalDecision.approve("approved by --yes")
        if self._eof:
            return ApprovalDecision.deny("nobody can answer: the terminal input is closed")
        with trio.move_on_at(req.deadline):
            async with self._lock:
                return await self._ask(req)
        self.console.print(
            Text(f"\n  no answer in time: denied {req.tool_name} for {self.label(req.agent_id)}")
        )
        return ApprovalDecision.timeout("nobody answered the approval prompt before the deadline")

    async def _ask(self, req: ApprovalRequest) -> ApprovalDecision:
        context = self.live.paused() if self.live is not None else _nothing()
        with context:
            prompt = Text("approval needed: ", style="bold yellow")
            prompt.append_text(self._describe(req))
            self.console.print(prompt)
            if math.isfinite(req.deadline):
                left = max(0.0, req.deadline - trio.current_time())
                self.console.print(f"allow? \\[y/N] (within {left:.0f}s) ", end="")
            else:
                self.console.print("allow? \\[y/N] ", end="")
            line = await self._reader.readline()
        if not line:
            self._eof = True
            self.console.print()
            return ApprovalDecision.deny("nobody can answer: the terminal input is closed")
        answer = line.strip().lower()
        who = escape(self.label(req.agent_id))
        if answer in ("y", "yes"):
            self.console.print(f"  [green]approved[/] {escape(req.tool_name)} for {who}")
            return ApprovalDecision.approve("approved at the terminal")
        self.console.print(f"  [red]denied[/] {escape(req.tool_name)} for {who}")
        return ApprovalDecision.deny("the user denied this tool call at the terminal")


@contextmanager
def _nothing() -> Iterator[None]:
    yield
