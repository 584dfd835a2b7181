"""How ``subagents run`` and ``resume`` stop on a signal: Ctrl-C, SIGTERM and SIGHUP alike.

``timeout``, ``docker stop`` and systemd send SIGTERM; a closed terminal sends
SIGHUP. The first of SIGINT, SIGTERM or SIGHUP cancels the run as Ctrl-C
does: every agent shuts down (its transcript ends ``shutdown``, the Bash tool
kills the processes its command started), the summary is printed, and the exit
code is 128 + the signal's number (130, 143, 129). A second SIGINT or SIGTERM
exits at once. A second SIGHUP does not: a closing terminal often sends two
(the shell's and the kernel's), and the shutdown the first one started must
finish.

A closed terminal also makes writes to it fail (``EIO``; ``EPIPE`` for a pipe
whose reader left). So on a signal, a standard output or error that leads
nowhere any more is pointed at ``/dev/null``: the shutdown and the summary
then write into the void instead of failing half-way.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import AsyncIterator
from typing import Final, final

import trio

__all__ = ["SHUTDOWN_SIGNALS", "Interrupts", "cancel_on_signals", "silence_lost_outputs"]

#: The signals that shut a run down cleanly, in the order their handlers are installed.
SHUTDOWN_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Signals that, received again during the shutdown, end the process at once.
_INSISTENT: Final = frozenset({signal.SIGINT, signal.SIGTERM})
#: ``poll`` flags of an output that leads nowhere: hung up, broken, or closed.
_LOST: Final = select.POLLHUP | select.POLLERR | select.POLLNVAL


@final
class Interrupts:
    """The shutdown signals a run received, in order, and the scope the first one cancels."""

    __slots__ = ("received", "scope")

    def __init__(self) -> None:
        self.received: list[int] = []
        self.scope = trio.CancelScope()
        """The run's scope: enter it around the work a signal stops (not the summary)."""

    def __repr__(self) -> str:
        return f"<Interrupts received={self.received}>"

    def __bool__(self) -> bool:
        return bool(self.received)

    @property
    def exit_code(self) -> int | None:
        """128 + the first signal's number (130, 143, 129), or ``None`` if none came."""
        return 128 + self.received[0] if self.received else None


def silence_lost_outputs(fds: tuple[int, ...] = (1, 2)) -> list[int]:
    """Point each of ``fds`` that leads nowhere (a hung-up terminal, a broken pipe) at /dev/null.

    Returns the descriptors that were redirected. Outputs that still work are
    left alone: a signal sent with ``kill`` to a run on a live terminal still
    shows its summary.
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLOUT)
    lost = [fd for fd, events in poller.poll(0) if events & _LOST]
    if lost:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for fd in lost:
                os.dup2(null, fd)
        finally:
            os.close(null)
    return lost


def _say(message: str) -> None:
    """Write ``message`` on stderr; an output that fails (a closed terminal) is not an error."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: stderr was closed
        print(message, file=sys.stderr, flush=True)


def _stopping_note(number: int) -> str:
    if number == signal.SIGINT:
        return "stopping (Ctrl-C again to exit now)…"
    name = signal.Signals(number).name
    return f"{name}: stopping (Ctrl-C or SIGTERM again to exit now)…"


async def _watch(command: str, signals: AsyncIterator[int], interrupts: Interrupts) -> None:
    async for number in signals:
        first = not interrupts
        if not first and number not in _INSISTENT:
            continue  # a repeated hangup: the shutdown goes on
        interrupts.received.append(number)
        silence_lost_outputs()
        if not first:
            _say(f"\nsubagents {command}: interrupted twice; exiting now.")
            os._exit(128 + number)
        _say(f"\nsubagents {command}: {_stopping_note(number)}")
        interrupts.scope.cancel()


@contextlib.asynccontextmanager
async def cancel_on_signals(command: str) -> AsyncIterator[Interrupts]:
    """While the body runs, the first shutdown signal cancels the yielded ``Interrupts.scope``.

    The handlers are installed before the body starts and stay until it ends,
    so a signal during the summary that follows the run is still handled (see
    the module docstring); a signal still pending when the body ends is
    delivered as usual then.
    """
    interrupts = Interrupts()
    with trio.open_signal_receiver(*SHUTDOWN_SIGNALS) as signals:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch, command, signals, interrupts)
            try:
                yield interrupts
            finally:
                nursery.cancel_scope.cancel()
