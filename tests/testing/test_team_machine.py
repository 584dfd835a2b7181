"""The team's state machine, run at 200 examples (issue 18's team invariants).

Every peer message is delivered once or reported undeliverable (and one
sender's messages arrive in order), idle teammates use no slot, and closing
the lead leaves no teammate or board writer running, and a team resumed after
a crash (its lead dropped at once, then resumed from disk) has the board, name
and teammates it had, checked after every step of random messages, bursts from
several senders, tasks on the team's board, idles, closes and crashes, beside
the board's own rules (claims, races, blockers, crashes).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from subagents.testing import TeamMachine

TestTeamMachine = TeamMachine.TestCase
TestTeamMachine.settings = settings(
    max_examples=200,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
