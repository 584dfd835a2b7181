"""The task board's state machine, run at 200 examples (issue 18's board invariants).

No task has two owners (claim races among four members have at most one
winner), no blocked task is claimed, and a board reopened after a crash (with
or without a torn last journal line) equals the board before it, checked after
every step against a plain model of the board.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from subagents.testing import BoardMachine

TestBoardMachine = BoardMachine.TestCase
TestBoardMachine.settings = settings(
    max_examples=200,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
