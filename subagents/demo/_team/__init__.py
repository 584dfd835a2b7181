"""Scripted policies for the offline ``subagents team``: a team that surveys a folder for real.

:func:`team_policies` gives the lead and the teammates of ``subagents team``
without an API key. They do real, iterative work with the real tools, and a
later step depends on what a peer said:

1. the lead lists the working directory (``LS``) and puts one *survey* task per
   top-level folder on the board, then one *check* task per folder, blocked by
   its survey (``TaskCreate`` with ``blockedBy``);
2. idle teammates wake on the claimable tasks and claim them (``TaskUpdate``);
   a surveyor greps its folder for ``TODO`` markers and tells the team its
   figure (``SendMessage`` to ``"*"``), then completes the survey;
3. that completion unblocks the check: another teammate claims it, greps the
   folder again with a wider, case-insensitive pattern, and compares with the
   figure the surveyor sent; when they differ it messages the surveyor a
   correction, which the surveyor re-checks by grepping with the checker's
   pattern before it sends its revised figure; the checker then agrees (to
   the lead) and completes the check;
4. the lead waits until every folder is agreed, and writes the table.

Every decision is worked out from the conversation (tool calls, results,
messages), never from state of the policy's own. The folder is hostile input:
folder names and peer messages are data, parsed with fixed patterns.
"""

from subagents.demo._team.policies import (
    LEAD_TOOLS,
    MATE_TOOLS,
    TeamLeadPolicy,
    TeammatePolicy,
    team_policies,
)

__all__ = ["LEAD_TOOLS", "MATE_TOOLS", "TeamLeadPolicy", "TeammatePolicy", "team_policies"]
