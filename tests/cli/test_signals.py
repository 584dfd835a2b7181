"""The signals that stop a run: which cancel it, which exit at once, and outputs that lead nowhere.

The signals are raised in this process, with the handlers of
:func:`cancel_on_signals` installed; ``os._exit`` is replaced so "exit at once"
is recorded instead of ending the test run. The whole command line under
signals is in ``tests/reliability/test_signals.py``.
"""

from __future__ import annotations

import os
import pty
import signal

import pytest
import trio
import trio.testing

from subagents.cli._signals import SHUTDOWN_SIGNALS, cancel_on_signals, silence_lost_outputs


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The codes ``os._exit`` was called with (it returns instead of exiting)."""
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    return codes


async def _deliver(number: int) -> None:
    """Raise ``number`` in this process and let the watcher handle it."""
    signal.raise_signal(number)
    await trio.testing.wait_all_tasks_blocked()


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
async def test_a_second_interrupt_or_term_exits_at_once(
    number: int, code: int, exits: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    with trio.fail_after(5):
        async with cancel_on_signals("run") as interrupts:
            with interrupts.scope:
                await _deliver(signal.SIGTERM)
                await trio.sleep_forever()  # the run: cancelled by the signal
            assert interrupts.scope.cancelled_caught
            assert (interrupts.exit_code, exits) == (143, [])
            await _deliver(number)
            assert exits == [code]
    stderr = capsys.readouterr().err
    assert "SIGTERM: stopping" in stderr
    assert "interrupted twice; exiting now." in stderr


async def test_repeated_hangups_let_the_shutdown_finish(exits: list[int]) -> None:
    """A closing terminal sends SIGHUP twice (the shell's, the kernel's): one shutdown."""
    with trio.fail_after(5):
        async with cancel_on_signals("resume") as interrupts:
            with interrupts.scope:
                await _deliver(signal.SIGHUP)
                await trio.sleep_forever()
            await _deliver(signal.SIGHUP)
            await _deliver(signal.SIGHUP)
            assert (interrupts.received, interrupts.exit_code, exits) == ([signal.SIGHUP], 129, [])
            await _deliver(signal.SIGINT)  # a person insists: that one exits
            assert exits == [130]


async def test_the_handlers_are_in_place_before_the_body_and_gone_after() -> None:
    before = [signal.getsignal(number) for number in SHUTDOWN_SIGNALS]
    async with cancel_on_signals("run"):
        during = [signal.getsignal(number) for number in SHUTDOWN_SIGNALS]
        assert all(handler not in before for handler in during)
    assert [signal.getsignal(number) for number in SHUTDOWN_SIGNALS] == before


def test_an_output_that_leads_nowhere_is_pointed_at_dev_null() -> None:
    broken_read, broken = os.pipe()
    working_read, working = os.pipe()
    primary, terminal = pty.openpty()
    try:
        os.close(broken_read)  # a pipe whose reader left
        os.close(primary)  # a terminal that closed
        primary = -1
        assert silence_lost_outputs((broken, working, terminal)) == [broken, terminal]
        assert os.write(broken, b"summary") == 7  # no EPIPE
        assert os.write(terminal, b"summary") == 7  # no EIO
        os.write(working, b"kept")
        assert os.read(working_read, 4) == b"kept"  # a working output is left alone
    finally:
        for fd in (broken, working_read, working, terminal, primary):
            if fd >= 0:
                os.close(fd)
