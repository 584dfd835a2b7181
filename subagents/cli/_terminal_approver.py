"""How ``subagents run`` asks the person at the terminal to approve a tool call.

:class:`TerminalApprover` is the CLI's approval callback: it prints each
request labelled by agent, reads ``y``/``N`` from stdin within the request's
deadline, and pauses the live view (:mod:`subagents.cli._live`) while a prompt is
on screen. Stdin is read in a worker thread, one read at a time
(:class:`_LineReader`), since a blocking read cannot be cancelled.

A prompt shows the call's whole arguments as they are, or refuses to ask: a
command padded with spaces, or holding a carriage return, must not show one
thing and run another. Each argument is shown by
:func:`~subagents._visible.visible_command` (controls as signs, runs of
spaces counted, every line of a script on its own line); when that takes more
than :data:`PROMPT_CHARS` characters or :data:`PROMPT_LINES` lines, the call
is denied with a reason the model reads, not shown in part.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO, final

import outcome
import trio
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from subagents._visible import visible, visible_command
from subagents.cli._formatting import plural
from subagents.cli._live import LiveView
from subagents.runtime import ProgressNotFound, ProgressTracker
from subagents.tools import ApprovalDecision, ApprovalRequest

__all__ = ["PROMPT_CHARS", "PROMPT_LINES", "TerminalApprover", "prompt_lines"]

#: The most characters of arguments a prompt shows; a longer call is refused, not cut.
PROMPT_CHARS: Final = 4000
#: The most lines of arguments a prompt shows; a longer call is refused, not cut.
PROMPT_LINES: Final = 100
#: What starts each line of a multi-line argument.
_GUTTER: Final = "  │ "


def _shown_value(value: object) -> str:
    if isinstance(value, str):
        return visible_command(value)
    return visible_command(json.dumps(value, ensure_ascii=True, default=repr))


def prompt_lines(req: ApprovalRequest) -> list[Text]:
    """The lines that show ``req``'s whole arguments, every character accounted for.

    One line per argument (``  command: ls``), or, for an argument of several
    lines, its name and then each line behind a gutter. A request without
    ``arguments`` shows its summary the same way.
    """
    fields = list(req.arguments.items()) if req.arguments else [("", req.summary)]
    lines: list[Text] = []
    for key, value in fields:
        shown = _shown_value(value).split("\n")
        name = f"  {visible(key)}:" if key else " "
        if len(shown) == 1 and key:
            line = Text(name + " ", style="dim")
            line.append(shown[0])
            lines.append(line)
            continue
        if key:
            lines.append(Text(name, style="dim"))
        for part in shown:
            line = Text(_GUTTER, style="dim")
            line.append(part)
            lines.append(line)
    return lines


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
    the tool and its whole arguments (:func:`prompt_lines`), and answered
    ``y``/``yes`` to approve, anything else to deny. Arguments longer than
    :data:`PROMPT_CHARS` characters or :data:`PROMPT_LINES` lines are denied
    without asking, since a prompt that shows part of a call cannot approve it.
    Prompts are asked one at a time; each, waiting in line included, is
    bounded by the request's deadline (then it is a denial that says it timed
    out). With ``live``, the live view is paused while a prompt is on screen.
    End of input denies every later request.
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
        """How an agent is named in a prompt: ``Ada (Explore)``, or its id if unknown.

        Controls in the name or type (a definition's, so untrusted) are shown as signs.
        """
        if self.tracker is not None:
            try:
                row = self.tracker.progress(agent_id)
            except ProgressNotFound:
                return visible(agent_id)
            name = row.nickname or agent_id
            return visible(f"{name} ({row.label})" if row.label else name)
        return visible(agent_id)

    def _describe(self, req: ApprovalRequest, *, summary: bool = True) -> Text:
        text = Text()
        text.append(self.label(req.agent_id), style="bold")
        text.append(" wants to run ")
        text.append(visible(req.tool_name), style="bold cyan")
        if summary and req.summary:
            text.append(f": {visible(req.summary)}")
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
            Text(
                f"\n  no answer in time: denied {visible(req.tool_name)} "
                f"for {self.label(req.agent_id)}"
            )
        )
        return ApprovalDecision.timeout("nobody answered the approval prompt before the deadline")

    async def _ask(self, req: ApprovalRequest) -> ApprovalDecision:
        lines = prompt_lines(req)
        chars = sum(len(line) for line in lines)
        too_long = chars > PROMPT_CHARS or len(lines) > PROMPT_LINES
        context = self.live.paused() if self.live is not None else _nothing()
        with context:
            prompt = Text("approval needed: ", style="bold yellow")
            prompt.append_text(self._describe(req, summary=False))
            if too_long:
                self.console.print(prompt, soft_wrap=True)
                return self._refuse(req, chars, len(lines))
            if not req.arguments and len(lines) == 1:
                # A summary of one line stays on the prompt's line, shown as strictly.
                prompt.append(": " + lines.pop().plain.removeprefix(_GUTTER))
            self.console.print(prompt, soft_wrap=True)
            for row in lines:
                self.console.print(row, soft_wrap=True)
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
        tool = escape(visible(req.tool_name))
        if answer in ("y", "yes"):
            self.console.print(f"  [green]approved[/] {tool} for {who}")
            return ApprovalDecision.approve("approved at the terminal")
        self.console.print(f"  [red]denied[/] {tool} for {who}")
        return ApprovalDecision.deny("the user denied this tool call at the terminal")

    def _refuse(self, req: ApprovalRequest, chars: int, lines: int) -> ApprovalDecision:
        """Deny a call too long to show whole, saying so on the terminal and to the model."""
        size = f"{chars:,} characters on {plural(lines, 'line')} as shown"
        limit = f"{PROMPT_CHARS:,} characters or {PROMPT_LINES:,} lines"
        self.console.print(
            Text(
                f"  refused without asking: its arguments take {size}, more than the "
                f"{limit} a prompt shows whole",
                style="red",
            ),
            soft_wrap=True,
        )
        return ApprovalDecision.deny(
            f"the call is too long to show for approval at the terminal ({size}; a prompt "
            f"shows at most {limit}); split it into smaller calls"
        )


@contextmanager
def _nothing() -> Iterator[None]:
    yield
